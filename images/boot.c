#include "images/boot.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fstree.h"

#define BZ_MAX (256u << 20)		/* a bzImage larger than this is not one */
#define VMLINUX_MAX (1024u << 20)	/* cap on the unpacked kernel */
#define INITRD_MAX (1024u << 20)
#define DEP_MAX (64u << 20)		/* modules.dep */
#define MODS_MAX 128			/* modules kept in a slim initrd */
#define DEP_DEPTH 32			/* modules.dep chains are short */
#define XEN_ELFNOTE_PHYS32_ENTRY 18	/* Xen's public elfnote.h: the 32-bit PVH entry */

/* ---- files ----------------------------------------------------------------- */

/* the whole of a regular file, NUL-terminated, at most max bytes */
static int read_all(const char *path, size_t max, unsigned char **buf,
		    size_t *len, struct err *e)
{
	unsigned char *b = NULL;
	struct stat st;
	size_t done = 0;
	int fd, ret = 0;

	*buf = NULL;
	*len = 0;
	fd = open_regular(path, "", "", &st, e);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > max) {
		ret = err_set(e, -EFBIG, "'%s' is larger than %zu MiB", path, max >> 20);
		goto cleanup;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		ret = err_set(e, -ENOMEM, "cannot read '%s': out of memory", path);
		goto cleanup;
	}
	while (done < (size_t)st.st_size) {
		ssize_t r = read(fd, b + done, (size_t)st.st_size - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ret = err_set(e, r < 0 ? -errno : -EIO, "cannot read '%s': %s", path,
				      r < 0 ? strerror(errno) : "file shrank while read");
			goto cleanup;
		}
		done += (size_t)r;
	}
	b[done] = '\0';
	*buf = b;
	*len = done;
	b = NULL;
cleanup:
	free(b);
	close(fd);
	return ret;
}

/* create out (0644) holding the n bytes at p; removed again on error */
static int write_all(const char *path, const void *p, size_t n, struct err *e)
{
	const unsigned char *c = p;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_set(e, -errno, "cannot create '%s': %s", path, strerror(errno));
	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = err_set(e, w < 0 ? -errno : -EIO, "cannot write '%s': %s", path,
				      w < 0 ? strerror(errno) : "short write");
			break;
		}
		c += w;
		n -= (size_t)w;
	}
	if (!ret && fchmod(fd, 0644))	/* whatever the umask: QEMU reads it as another user */
		ret = err_set(e, -errno, "cannot chmod '%s': %s", path, strerror(errno));
	if (close(fd) && !ret)
		ret = err_set(e, -errno, "cannot write '%s': %s", path, strerror(errno));
	if (ret)
		unlink(path);
	return ret;
}

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* ---- kernel ---------------------------------------------------------------- */

static const unsigned char xz_magic[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };

/*
 * Where the compressed vmlinux starts: the setup header says so from boot
 * protocol 2.08 on (payload_offset, counted from the protected-mode code after
 * the setup sectors); otherwise the first XZ stream header in the file.
 */
static int payload_find(const unsigned char *b, size_t n, size_t *off)
{
	size_t i;

	if (n >= 0x250 && !memcmp(b + 0x202, "HdrS", 4) && le16(b + 0x206) >= 0x0208) {
		size_t setup = (size_t)(b[0x1f1] ? b[0x1f1] : 4) + 1;
		size_t start = setup * 512 + le32(b + 0x248);

		if (le32(b + 0x24c) > 0 && start < n && n - start >= le32(b + 0x24c)) {
			*off = start;
			return 0;
		}
		return -EBADMSG;
	}
	for (i = 0; i + sizeof(xz_magic) <= n; i++) {
		if (!memcmp(b + i, xz_magic, sizeof(xz_magic))) {
			*off = i;
			return 0;
		}
	}
	return -EBADMSG;
}

static const char *payload_format(const unsigned char *p, size_t n)
{
	static const struct {
		const char *name;
		unsigned char magic[4];
		size_t len;
	} fmts[] = {
		{ "gzip", { 0x1f, 0x8b }, 2 },
		{ "bzip2", { 'B', 'Z', 'h' }, 3 },
		{ "LZO", { 0x89, 'L', 'Z', 'O' }, 4 },
		{ "LZ4", { 0x02, 0x21, 0x4c, 0x18 }, 4 },
		{ "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4 },
	};
	size_t i;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (n >= fmts[i].len && !memcmp(p, fmts[i].magic, fmts[i].len))
			return fmts[i].name;
	return "an unknown format";
}

/* decompress the single XZ stream (or LZMA "alone" file) at p, stopping at its end */
static int unpack(const unsigned char *p, size_t n, bool xz, unsigned char **out,
		  size_t *out_len, const char *path, struct err *e)
{
	lzma_stream s = LZMA_STREAM_INIT;
	unsigned char *b = NULL;
	size_t cap = n * 4 < (16u << 20) ? (16u << 20) : n * 4;
	lzma_ret r;
	int ret = 0;

	/* no LZMA_CONCATENATED: the decoder stops at the end of the first stream */
	r = xz ? lzma_stream_decoder(&s, UINT64_MAX, 0) :
		 lzma_alone_decoder(&s, UINT64_MAX);
	if (r != LZMA_OK)
		return err_set(e, r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL,
			       "cannot start the %s decoder (liblzma error %d)",
			       xz ? "XZ" : "LZMA", (int)r);
	b = malloc(cap);
	if (!b) {
		ret = err_set(e, -ENOMEM, "cannot unpack '%s': out of memory", path);
		goto cleanup;
	}
	s.next_in = p;
	s.avail_in = n;
	s.next_out = b;
	s.avail_out = cap;
	for (;;) {
		r = lzma_code(&s, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r == LZMA_OK && s.avail_out == 0) {
			size_t used = cap;
			unsigned char *nb;

			if (cap >= VMLINUX_MAX) {
				ret = err_set(e, -EFBIG, "the kernel in '%s' unpacks to over %u MiB",
					      path, VMLINUX_MAX >> 20);
				goto cleanup;
			}
			cap *= 2;
			nb = realloc(b, cap);
			if (!nb) {
				ret = err_set(e, -ENOMEM, "cannot unpack '%s': out of memory", path);
				goto cleanup;
			}
			b = nb;
			s.next_out = b + used;
			s.avail_out = cap - used;
			continue;
		}
		if (r == LZMA_OK)	/* input ran out before the end of the stream */
			r = LZMA_BUF_ERROR;
		ret = err_set(e, r == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG,
			      "the %s payload of '%s' is damaged (liblzma error %d)",
			      xz ? "XZ" : "LZMA", path, (int)r);
		goto cleanup;
	}
	*out = b;
	*out_len = cap - s.avail_out;
	b = NULL;
cleanup:
	free(b);
	lzma_end(&s);
	return ret;
}

/* an x86-64 ELF executable with XEN_ELFNOTE_PHYS32_ENTRY, QEMU's PVH entry */
static int elf_check_pvh(const unsigned char *b, size_t n, const char *path, struct err *e)
{
	Elf64_Ehdr eh;
	size_t i;

	if (n < sizeof(eh) || memcmp(b, ELFMAG, SELFMAG))
		return err_set(e, -EBADMSG, "the payload of '%s' is not an ELF file", path);
	memcpy(&eh, b, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return err_set(e, -ENOTSUP, "the payload of '%s' is not an x86-64 ELF kernel", path);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > n ||
	    (n - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum)
		return err_set(e, -EBADMSG, "the ELF kernel in '%s' has bad program headers", path);
	for (i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		size_t off, end;

		memcpy(&ph, b + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_NOTE || ph.p_offset > n || ph.p_filesz > n - ph.p_offset)
			continue;
		off = (size_t)ph.p_offset;
		end = off + (size_t)ph.p_filesz;
		while (end - off >= sizeof(Elf64_Nhdr)) {
			Elf64_Nhdr nh;
			size_t name, desc, next;

			memcpy(&nh, b + off, sizeof(nh));
			name = off + sizeof(nh);
			desc = name + ((nh.n_namesz + 3u) & ~3u);
			next = desc + ((nh.n_descsz + 3u) & ~3u);
			if (desc > end || next > end || next <= off)
				break;
			if (nh.n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh.n_namesz == 4 &&
			    !memcmp(b + name, "Xen", 4))
				return 0;
			off = next;
		}
	}
	return err_set(e, -ENOTSUP, "the kernel in '%s' has no PVH entry note (CONFIG_PVH): QEMU cannot boot it uncompressed",
		       path);
}

int boot_kernel_unpack(const char *bzimage, const char *out, struct err *e)
{
	unsigned char *bz = NULL, *elf = NULL;
	size_t n, elf_len = 0, off = 0;
	const unsigned char *p;
	bool xz;
	int ret;

	if (!bzimage || !out)
		return err_set(e, -EINVAL, "no kernel or output path given");
	ret = read_all(bzimage, BZ_MAX, &bz, &n, e);
	if (ret)
		return ret;
	if (payload_find(bz, n, &off)) {
		ret = err_set(e, -EBADMSG, "'%s' is not a bzImage with a compressed kernel inside",
			      bzimage);
		goto cleanup;
	}
	p = bz + off;
	xz = n - off >= sizeof(xz_magic) && !memcmp(p, xz_magic, sizeof(xz_magic));
	/* the legacy .lzma header: lc/lp/pb byte 0x5d, then the dictionary size */
	if (!xz && !(n - off >= 13 && p[0] == 0x5d && p[1] == 0x00)) {
		ret = err_set(e, -ENOTSUP, "the kernel in '%s' is compressed with %s: only XZ and LZMA are unpacked",
			      bzimage, payload_format(p, n - off));
		goto cleanup;
	}
	ret = unpack(p, n - off, xz, &elf, &elf_len, bzimage, e);
	if (!ret)
		ret = elf_check_pvh(elf, elf_len, bzimage, e);
	if (!ret)
		ret = write_all(out, elf, elf_len, e);
cleanup:
	free(elf);
	free(bz);
	return ret;
}

/* ---- modules.dep --------------------------------------------------------------- */

/*
 * A module's name from a path or file name: the base name up to ".ko",
 * '-' written as '_' (the kernel treats them alike). false if it is not a
 * module file name or does not fit.
 */
static bool mod_name(const char *path, size_t len, char *dst, size_t size)
{
	const char *base = path, *ko = NULL, *p;
	size_t i, n;

	for (p = path; p < path + len; p++)
		if (*p == '/')
			base = p + 1;
	for (p = base; p + 3 <= path + len; p++)
		if (!memcmp(p, ".ko", 3) && (p + 3 == path + len || p[3] == '.'))
			ko = p;
	if (!ko || ko == base)
		return false;
	n = (size_t)(ko - base);
	if (n >= size)
		return false;
	for (i = 0; i < n; i++)
		dst[i] = base[i] == '-' ? '_' : base[i];
	dst[n] = '\0';
	return true;
}

static void name_norm(const char *s, char *dst, size_t size)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < size; i++)
		dst[i] = s[i] == '-' ? '_' : s[i];
	dst[i] = '\0';
}

/* the modules.dep line of module name ("path: dep dep ..."), or NULL */
static const char *dep_line(const char *dep, const char *name)
{
	const char *line = dep;

	while (*line) {
		const char *nl = strchr(line, '\n');
		const char *colon = strchr(line, ':');
		char m[64];

		if (!nl)
			nl = line + strlen(line);
		if (colon && colon < nl && mod_name(line, (size_t)(colon - line), m, sizeof(m)) &&
		    !strcmp(m, name))
			return line;
		line = *nl ? nl + 1 : nl;
	}
	return NULL;
}

struct order {
	char names[MODS_MAX][64];
	size_t n;
};

static bool order_has(const struct order *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (!strcmp(o->names[i], name))
			return true;
	return false;
}

/* append name after everything it depends on (depth-first) */
static int order_add(struct order *o, const char *dep, const char *name, int depth,
		     struct err *e)
{
	const char *line, *p, *nl;

	if (order_has(o, name))
		return 0;
	if (depth > DEP_DEPTH)
		return err_set(e, -ELOOP, "modules.dep: dependencies of '%s' nest too deep (a cycle?)",
			       name);
	line = dep_line(dep, name);
	if (!line)
		return 0;	/* not a loadable module: built in (or absent, as for modprobe) */
	nl = strchr(line, '\n');
	if (!nl)
		nl = line + strlen(line);
	p = strchr(line, ':') + 1;
	while (p < nl) {
		const char *w;
		char m[64];
		int ret;

		while (p < nl && (*p == ' ' || *p == '\t'))
			p++;
		w = p;
		while (p < nl && *p != ' ' && *p != '\t')
			p++;
		if (p == w)
			break;
		if (!mod_name(w, (size_t)(p - w), m, sizeof(m)))
			return err_set(e, -EBADMSG, "modules.dep: bad dependency '%.*s' of '%s'",
				       (int)(p - w), w, name);
		ret = order_add(o, dep, m, depth + 1, e);
		if (ret)
			return ret;
	}
	if (order_has(o, name))
		return err_set(e, -ELOOP, "modules.dep: '%s' depends on itself", name);
	if (o->n >= MODS_MAX)
		return err_set(e, -E2BIG, "more than %d modules to load", MODS_MAX);
	snprintf(o->names[o->n++], sizeof(o->names[0]), "%s", name);
	return 0;
}

/* ---- newc cpio ----------------------------------------------------------------- */

#define CPIO_HDR 110
#define CPIO_TRAILER "TRAILER!!!"

enum { C_INO, C_MODE, C_UID, C_GID, C_NLINK, C_MTIME, C_FILESIZE, C_DEVMAJ, C_DEVMIN,
       C_RDEVMAJ, C_RDEVMIN, C_NAMESIZE, C_CHECK, C__COUNT };

struct cpio_entry {
	uint32_t f[C__COUNT];
	const char *name;	/* NUL-terminated, inside the archive */
	const unsigned char *data;
	char mod[64];		/* module name if this is a *.ko* file, else "" */
};

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static bool hex8(const unsigned char *p, uint32_t *v)
{
	uint32_t x = 0;
	int i;

	for (i = 0; i < 8; i++) {
		unsigned char c = p[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return false;
		x = x << 4 | d;
	}
	*v = x;
	return true;
}

/* every entry up to the trailer; *ents is malloc'ed */
static int cpio_parse(const unsigned char *b, size_t n, struct cpio_entry **ents,
		      size_t *count, const char *path, struct err *e)
{
	struct cpio_entry *v = NULL;
	size_t cap = 0, k = 0, off = 0;

	*ents = NULL;
	*count = 0;
	for (;;) {
		struct cpio_entry ce;
		size_t name_end, data_end;
		int i;

		memset(&ce, 0, sizeof(ce));
		if (n - off < CPIO_HDR || (memcmp(b + off, "070701", 6) && memcmp(b + off, "070702", 6)))
			goto bad;
		for (i = 0; i < C__COUNT; i++)
			if (!hex8(b + off + 6 + 8 * i, &ce.f[i]))
				goto bad;
		if (ce.f[C_NAMESIZE] < 2 || ce.f[C_NAMESIZE] > 4096 ||
		    n - off - CPIO_HDR < ce.f[C_NAMESIZE])
			goto bad;
		ce.name = (const char *)b + off + CPIO_HDR;
		if (ce.name[ce.f[C_NAMESIZE] - 1] != '\0' || strlen(ce.name) != ce.f[C_NAMESIZE] - 1)
			goto bad;
		name_end = pad4(off + CPIO_HDR + ce.f[C_NAMESIZE]);
		if (name_end > n || n - name_end < ce.f[C_FILESIZE])
			goto bad;
		ce.data = b + name_end;
		data_end = pad4(name_end + ce.f[C_FILESIZE]);
		if (!strcmp(ce.name, CPIO_TRAILER))
			break;
		if (S_ISREG(ce.f[C_MODE]) &&
		    !mod_name(ce.name, strlen(ce.name), ce.mod, sizeof(ce.mod)))
			ce.mod[0] = '\0';
		if (k == cap) {
			struct cpio_entry *nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return err_set(e, -ENOMEM, "cannot read '%s': out of memory", path);
			}
			v = nv;
		}
		v[k++] = ce;
		off = data_end > n ? n : data_end;
	}
	*ents = v;
	*count = k;
	return 0;
bad:
	free(v);
	return err_set(e, -ENOTSUP, "'%s' is not an uncompressed newc cpio archive (bad entry at byte %zu)",
		       path, off);
}

struct buf {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->oom)
		return;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *np;

		while (cap - b->len < n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void buf_pad4(struct buf *b)
{
	static const unsigned char zero[4];

	buf_add(b, zero, pad4(b->len) - b->len);
}

static void cpio_add(struct buf *b, const struct cpio_entry *ce, const char *name,
		     const void *data, uint32_t size)
{
	char hdr[CPIO_HDR + 1];
	uint32_t f[C__COUNT];
	int i, n;

	memcpy(f, ce->f, sizeof(f));
	f[C_FILESIZE] = size;
	f[C_NAMESIZE] = (uint32_t)strlen(name) + 1;
	f[C_CHECK] = 0;
	n = snprintf(hdr, sizeof(hdr), "070701");
	for (i = 0; i < C__COUNT; i++)
		n += snprintf(hdr + n, sizeof(hdr) - (size_t)n, "%08X", f[i]);
	buf_add(b, hdr, CPIO_HDR);
	buf_add(b, name, f[C_NAMESIZE]);
	buf_pad4(b);
	buf_add(b, data, size);
	buf_pad4(b);
}

int boot_initrd_slim(const char *in, const char *out, const char *modules_dep,
		     const char *const *want, size_t *kept, size_t *total,
		     struct err *e)
{
	unsigned char *cp = NULL, *dep = NULL;
	struct cpio_entry *ents = NULL, *list = NULL;
	struct order *ord = NULL;
	struct buf ob = { 0 }, mods = { 0 };
	size_t cp_len, dep_len, n = 0, nmods = 0, i, j;
	int ret;

	if (kept)
		*kept = 0;
	if (total)
		*total = 0;
	if (!in || !out || !modules_dep || !want)
		return err_set(e, -EINVAL, "no initrd, output, modules.dep or module list given");
	ret = read_all(modules_dep, DEP_MAX, &dep, &dep_len, e);
	if (ret)
		goto cleanup;
	ret = read_all(in, INITRD_MAX, &cp, &cp_len, e);
	if (ret)
		goto cleanup;
	ret = cpio_parse(cp, cp_len, &ents, &n, in, e);
	if (ret)
		goto cleanup;
	for (i = 0; i < n; i++) {
		if (!strcmp(ents[i].name, "modules"))
			list = &ents[i];
		nmods += ents[i].mod[0] != '\0';
	}
	for (i = 0; i < n && strcmp(ents[i].name, "init"); i++)
		;
	if (!list || i == n || !S_ISREG(list->f[C_MODE]) || !S_ISREG(ents[i].f[C_MODE])) {
		ret = err_set(e, -ENOTSUP, "'%s' is not a supermin ext2 initrd (no init or modules list)",
			      in);
		goto cleanup;
	}

	ord = calloc(1, sizeof(*ord));
	if (!ord) {
		ret = err_set(e, -ENOMEM, "cannot slim '%s': out of memory", in);
		goto cleanup;
	}
	for (i = 0; want[i]; i++) {
		char m[64];

		name_norm(want[i], m, sizeof(m));
		ret = order_add(ord, (const char *)dep, m, 0, e);
		if (ret)
			goto cleanup;
	}
	/* the new list, in dependency order, naming the files as they are in the archive */
	for (i = 0; i < ord->n; i++) {
		for (j = 0; j < n && strcmp(ents[j].mod, ord->names[i]); j++)
			;
		if (j == n) {
			ret = err_set(e, -ENOENT, "module '%s' is not in '%s'", ord->names[i], in);
			goto cleanup;
		}
		buf_add(&mods, ents[j].name, strlen(ents[j].name));
		buf_add(&mods, "\n", 1);
	}
	/* the archive as it was, less the modules not wanted, with the new list */
	for (i = 0; i < n; i++) {
		if (&ents[i] == list)
			cpio_add(&ob, &ents[i], ents[i].name, mods.p ? mods.p : (const void *)"",
				 (uint32_t)mods.len);
		else if (!ents[i].mod[0] || order_has(ord, ents[i].mod))
			cpio_add(&ob, &ents[i], ents[i].name, ents[i].data, ents[i].f[C_FILESIZE]);
	}
	{
		struct cpio_entry tr;

		memset(&tr, 0, sizeof(tr));
		tr.f[C_NLINK] = 1;
		cpio_add(&ob, &tr, CPIO_TRAILER, "", 0);
	}
	if (ob.oom || mods.oom) {
		ret = err_set(e, -ENOMEM, "cannot slim '%s': out of memory", in);
		goto cleanup;
	}
	ret = write_all(out, ob.p, ob.len, e);
	if (ret)
		goto cleanup;
	if (kept)
		*kept = ord->n;
	if (total)
		*total = nmods;
cleanup:
	free(ob.p);
	free(mods.p);
	free(ord);
	free(ents);
	free(cp);
	free(dep);
	return ret;
}
