/*
 * tests for images/boot.c: unpacking the vmlinux from a bzImage (made-up
 * bzImages around XZ/LZMA-packed ELF files, and the host's own kernel when
 * /boot has one) and cutting a supermin initrd down to the wanted modules
 * (made-up newc archives and modules.dep files).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/boot.h"

struct fixture {
	char dir[64];
	char in[PATH_MAX], out[PATH_MAX], dep[PATH_MAX];
};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/thpeval-test-boot-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->in, sizeof(fx->in), "%s/in", fx->dir);
	snprintf(fx->out, sizeof(fx->out), "%s/out", fx->dir);
	snprintf(fx->dep, sizeof(fx->dep), "%s/modules.dep", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static unsigned char *read_file(const char *path, size_t *n)
{
	unsigned char *b;
	struct stat st;
	FILE *f;

	assert_int_equal(stat(path, &st), 0);
	b = malloc((size_t)st.st_size + 1);
	assert_non_null(b);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(b, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	b[st.st_size] = '\0';
	*n = (size_t)st.st_size;
	return b;
}

/* ---- kernels ------------------------------------------------------------------ */

/* a minimal x86-64 ELF: header, one PT_NOTE, and a note (Xen PVH entry or another) */
static size_t make_elf(unsigned char *b, size_t size, bool pvh, uint16_t machine)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Nhdr nh;
	size_t off = sizeof(eh) + sizeof(ph), len;

	assert_true(size >= 4096);
	memset(b, 0, size);
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = machine;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memcpy(b, &eh, sizeof(eh));

	/* an unrelated note first, then the one that matters */
	nh.n_namesz = 4;
	nh.n_descsz = 8;
	nh.n_type = 1;
	memcpy(b + off, &nh, sizeof(nh));
	memcpy(b + off + sizeof(nh), "GNU", 4);
	len = sizeof(nh) + 4 + 8;
	nh.n_namesz = 4;
	nh.n_descsz = 4;
	nh.n_type = pvh ? 18 : 17;	/* XEN_ELFNOTE_PHYS32_ENTRY, or not */
	memcpy(b + off + len, &nh, sizeof(nh));
	memcpy(b + off + len + sizeof(nh), "Xen", 4);
	len += sizeof(nh) + 4 + 4;

	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_NOTE;
	ph.p_offset = off;
	ph.p_filesz = len;
	memcpy(b + sizeof(eh), &ph, sizeof(ph));
	/* some text that compresses, like a kernel */
	for (size_t i = off + len; i < size; i++)
		b[i] = (unsigned char)("kernel text "[i % 12]);
	return size;
}

static size_t pack(const unsigned char *in, size_t n, bool xz, unsigned char *out, size_t size)
{
	size_t pos = 0;

	if (xz) {
		assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, NULL, in, n, out,
							 &pos, size), LZMA_OK);
	} else {
		lzma_options_lzma opt;
		lzma_stream s = LZMA_STREAM_INIT;

		assert_false(lzma_lzma_preset(&opt, 6));
		assert_int_equal(lzma_alone_encoder(&s, &opt), LZMA_OK);
		s.next_in = in;
		s.avail_in = n;
		s.next_out = out;
		s.avail_out = size;
		assert_int_equal(lzma_code(&s, LZMA_FINISH), LZMA_STREAM_END);
		pos = size - s.avail_out;
		lzma_end(&s);
	}
	return pos;
}

/*
 * A bzImage as far as the unpacker cares: setup sectors with the "HdrS"
 * header (protocol 2.15, payload_offset/length), then the payload and the
 * 4-byte size the kernel build appends. header = false: no setup header, the
 * payload somewhere inside.
 */
static size_t make_bzimage(unsigned char *b, size_t size, const unsigned char *payload,
			   size_t n, bool header)
{
	size_t setup = 4, start = (setup + 1) * 512, poff = 0x1234;

	assert_true(size >= start + poff + n + 4);
	memset(b, 0, size);
	if (header) {
		b[0x1f1] = (unsigned char)setup;
		memcpy(b + 0x202, "HdrS", 4);
		b[0x206] = 0x0f;
		b[0x207] = 0x02;
		for (int i = 0; i < 4; i++) {
			b[0x248 + i] = (unsigned char)(poff >> (8 * i));
			b[0x24c + i] = (unsigned char)((n + 4) >> (8 * i));
		}
	}
	memcpy(b + start + poff, payload, n);
	memset(b + start + poff + n, 0xab, 4);
	return start + poff + n + 4;
}

static void test_kernel_unpack_cases(void **state)
{
	struct fixture *fx = *state;
	static unsigned char elf[1 << 16], packed[1 << 17], bz[1 << 18];
	static const unsigned char gzip[] = { 0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 3 };
	static const unsigned char zstd[] = { 0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0 };
	const struct {
		const char *name;
		bool pvh, xz, header, truncate;
		uint16_t machine;
		const unsigned char *raw;	/* instead of the ELF: this */
		size_t raw_len;
		bool raw_packed;		/* packed like the ELF would be, or as is */
		int code;
		const char *want;		/* substring of the message */
	} cases[] = {
		{ "xz with header", true, true, true, false, EM_X86_64, NULL, 0, false, 0, "" },
		{ "lzma with header", true, false, true, false, EM_X86_64, NULL, 0, false, 0, "" },
		{ "xz found without header", true, true, false, false, EM_X86_64, NULL, 0, false, 0, "" },
		{ "no pvh note", false, true, true, false, EM_X86_64, NULL, 0, false, -ENOTSUP,
		  "CONFIG_PVH" },
		{ "not x86-64", true, true, true, false, EM_AARCH64, NULL, 0, false, -ENOTSUP, "x86-64" },
		{ "damaged xz", true, true, true, true, EM_X86_64, NULL, 0, false, -EBADMSG, "damaged" },
		{ "gzip payload", true, true, true, false, EM_X86_64, gzip, sizeof(gzip), false, -ENOTSUP,
		  "gzip" },
		{ "zstd payload", true, true, true, false, EM_X86_64, zstd, sizeof(zstd), false, -ENOTSUP,
		  "zstd" },
		{ "xz of something else", true, true, true, false, EM_X86_64,
		  (const unsigned char *)"plain text, no ELF", 18, true, -EBADMSG, "not an ELF" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = ERR_INIT;
		size_t elf_len, n, bz_len, got_len;
		unsigned char *got;
		int rc;

		elf_len = make_elf(elf, sizeof(elf), cases[i].pvh, cases[i].machine);
		if (cases[i].raw && !cases[i].raw_packed) {
			memcpy(packed, cases[i].raw, cases[i].raw_len);
			n = cases[i].raw_len;
		} else if (cases[i].raw) {
			n = pack(cases[i].raw, cases[i].raw_len, cases[i].xz, packed, sizeof(packed));
		} else {
			n = pack(elf, elf_len, cases[i].xz, packed, sizeof(packed));
		}
		if (cases[i].truncate)
			n /= 2;
		bz_len = make_bzimage(bz, sizeof(bz), packed, n, cases[i].header);
		write_file(fx->in, bz, bz_len);
		unlink(fx->out);

		rc = boot_kernel_unpack(fx->in, fx->out, &e);
		if (rc != cases[i].code || e.code != rc || !strstr(e.msg, cases[i].want))
			fail_msg("%s: rc %d (want %d), message '%s' (want '%s')", cases[i].name, rc,
				 cases[i].code, e.msg, cases[i].want);
		if (rc) {
			if (access(fx->out, F_OK) == 0)
				fail_msg("%s: failed but left '%s'", cases[i].name, fx->out);
			continue;
		}
		got = read_file(fx->out, &got_len);
		if (got_len != elf_len || memcmp(got, elf, elf_len))
			fail_msg("%s: unpacked %zu bytes, not the %zu-byte ELF", cases[i].name, got_len,
				 elf_len);
		free(got);
		{
			struct stat st;

			assert_int_equal(stat(fx->out, &st), 0);
			assert_int_equal(st.st_mode & 0777, 0644);
		}
	}
}

static void test_kernel_unpack_bad_files(void **state)
{
	struct fixture *fx = *state;
	struct err e = ERR_INIT;

	write_file(fx->in, "not a kernel at all\n", 20);
	assert_int_equal(boot_kernel_unpack(fx->in, fx->out, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "not a bzImage"));
	assert_int_not_equal(access(fx->out, F_OK), 0);
	err_clear(&e);

	/* a header whose payload runs past the end of the file */
	{
		unsigned char b[4096] = { 0 };

		b[0x1f1] = 4;
		memcpy(b + 0x202, "HdrS", 4);
		b[0x206] = 0x0f;
		b[0x207] = 0x02;
		b[0x24d] = 0x10;	/* payload_length 4096 */
		write_file(fx->in, b, sizeof(b));
		assert_int_equal(boot_kernel_unpack(fx->in, fx->out, &e), -EBADMSG);
		err_clear(&e);
	}
	assert_true(boot_kernel_unpack("/nonexistent/vmlinuz", fx->out, &e) == -ENOENT);
	err_clear(&e);
	assert_int_equal(boot_kernel_unpack(fx->dir, fx->out, &e), -EINVAL);
	err_clear(&e);
	assert_int_equal(boot_kernel_unpack(NULL, fx->out, &e), -EINVAL);
}

/* the host's own kernel, when /boot has a Debian (XZ) one: a bootable ELF */
static void test_kernel_unpack_host(void **state)
{
	struct fixture *fx = *state;
	char best[256] = "", path[300];
	struct err e = ERR_INIT;
	unsigned char magic[4];
	struct dirent *d;
	FILE *f;
	DIR *dir = opendir("/boot");
	int rc;

	while (dir && (d = readdir(dir)))
		if (!strncmp(d->d_name, "vmlinuz-", 8) &&
		    (!best[0] || strverscmp(d->d_name, best) > 0))
			snprintf(best, sizeof(best), "%s", d->d_name);
	if (dir)
		closedir(dir);
	if (!best[0]) {
		print_message("skipped: no /boot/vmlinuz-*\n");
		skip();
	}
	snprintf(path, sizeof(path), "/boot/%s", best);
	if (access(path, R_OK)) {
		print_message("skipped: '%s' is not readable\n", path);
		skip();
	}
	rc = boot_kernel_unpack(path, fx->out, &e);
	if (rc == -ENOTSUP) {
		print_message("skipped: %s\n", e.msg);
		skip();
	}
	if (rc)
		fail_msg("%s: %s", path, e.msg);
	f = fopen(fx->out, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 4, f), 4);
	fclose(f);
	assert_memory_equal(magic, ELFMAG, 4);
	unlink(fx->out);
}

/* ---- initrds ------------------------------------------------------------------ */

struct ent {
	const char *name;
	unsigned mode;
	const char *data;
};

static size_t cpio_put(unsigned char *b, size_t off, const char *name, unsigned mode,
		       const char *data, unsigned ino)
{
	size_t nlen = strlen(name) + 1, dlen = data ? strlen(data) : 0;
	char hdr[111];

	snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 ino, mode, 0u, 0u, 1u, 0u, (unsigned)dlen, 0u, 0u, 0u, 0u, (unsigned)nlen, 0u);
	memcpy(b + off, hdr, 110);
	off += 110;
	memcpy(b + off, name, nlen);
	off = (off + nlen + 3) & ~(size_t)3;
	if (dlen)
		memcpy(b + off, data, dlen);
	off = (off + dlen + 3) & ~(size_t)3;
	return off;
}

static size_t make_cpio(unsigned char *b, size_t size, const struct ent *ents, bool trailer)
{
	size_t off = 0;
	unsigned ino = 1;

	memset(b, 0, size);
	for (; ents->name; ents++)
		off = cpio_put(b, off, ents->name, ents->mode, ents->data, ino++);
	if (trailer)
		off = cpio_put(b, off, "TRAILER!!!", 0, NULL, 0);
	assert_true(off <= size);
	return off;
}

/* "name=data;" for each regular file in a newc archive, in order */
static void cpio_summary(const unsigned char *b, size_t n, char *out, size_t size)
{
	size_t off = 0, len = 0;

	out[0] = '\0';
	while (off + 110 <= n) {
		char f[9] = { 0 };
		unsigned long mode, fsz, nsz;
		const char *name;

		assert_memory_equal(b + off, "070701", 6);
		memcpy(f, b + off + 14, 8);
		mode = strtoul(f, NULL, 16);
		memcpy(f, b + off + 54, 8);
		fsz = strtoul(f, NULL, 16);
		memcpy(f, b + off + 94, 8);
		nsz = strtoul(f, NULL, 16);
		name = (const char *)b + off + 110;
		off = (off + 110 + nsz + 3) & ~(size_t)3;
		if (!strcmp(name, "TRAILER!!!"))
			return;
		if (S_ISREG(mode))
			len += (size_t)snprintf(out + len, size - len, "%s=%.*s;", name, (int)fsz,
						(const char *)b + off);
		else
			len += (size_t)snprintf(out + len, size - len, "%s/;", name);
		off = (off + fsz + 3) & ~(size_t)3;
	}
	fail_msg("no trailer in the output archive");
}

static void test_initrd_slim_cases(void **state)
{
	struct fixture *fx = *state;
	static const struct ent supermin[] = {
		{ ".", 040755, NULL },
		{ "a.ko", 0100644, "A" },
		{ "b-x.ko", 0100644, "B" },
		{ "c.ko", 0100644, "C" },
		{ "init", 0100755, "INIT" },
		{ "modules", 0100644, "b-x.ko\na.ko\nc.ko\n" },
		{ "z.ko.xz", 0100644, "Z" },
		{ NULL, 0, NULL },
	};
	static const struct ent no_list[] = {
		{ "a.ko", 0100644, "A" },
		{ "init", 0100755, "INIT" },
		{ NULL, 0, NULL },
	};
	static const char dep_ok[] =
		"kernel/drivers/a.ko: kernel/lib/b-x.ko\n"
		"kernel/lib/b-x.ko:\n"
		"kernel/fs/c.ko: kernel/lib/b-x.ko\n"
		"kernel/fs/z.ko.xz: kernel/drivers/a.ko kernel/lib/b-x.ko\n";
	static const char dep_missing[] = "kernel/drivers/a.ko: kernel/lib/d.ko\nkernel/lib/d.ko:\n";
	static const char dep_cycle[] = "kernel/a.ko: kernel/b-x.ko\nkernel/b-x.ko: kernel/a.ko\n";
	static const char *const want_a[] = { "a", "builtin_only", NULL };
	static const char *const want_z[] = { "z", "b_x", NULL };
	static const char *const want_none[] = { NULL };
	const struct {
		const char *name;
		const struct ent *ents;
		bool trailer, gzip;
		const char *dep;
		const char *const *want;
		int code;
		const char *want_out;	/* summary of the output, or the message substring */
		size_t kept, total;
	} cases[] = {
		{ "dependencies first, others dropped", supermin, true, false, dep_ok, want_a, 0,
		  "./;a.ko=A;b-x.ko=B;init=INIT;modules=b-x.ko\na.ko\n;", 2, 4 },
		{ "compressed module, '-' as '_'", supermin, true, false, dep_ok, want_z, 0,
		  "./;a.ko=A;b-x.ko=B;init=INIT;modules=b-x.ko\na.ko\nz.ko.xz\n;z.ko.xz=Z;", 3, 4 },
		{ "nothing wanted", supermin, true, false, dep_ok, want_none, 0,
		  "./;init=INIT;modules=;", 0, 4 },
		{ "dependency not in the initrd", supermin, true, false, dep_missing, want_a, -ENOENT,
		  "module 'd' is not in", 0, 0 },
		{ "dependency cycle", supermin, true, false, dep_cycle, want_a, -ELOOP, "cycle", 0, 0 },
		{ "no modules list", no_list, true, false, dep_ok, want_a, -ENOTSUP,
		  "not a supermin ext2 initrd", 0, 0 },
		{ "no trailer", supermin, false, false, dep_ok, want_a, -ENOTSUP, "newc cpio", 0, 0 },
		{ "compressed archive", supermin, true, true, dep_ok, want_a, -ENOTSUP, "newc cpio", 0, 0 },
	};
	static unsigned char b[1 << 14];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = ERR_INIT;
		size_t n, kept = 99, total = 99, got_len;
		unsigned char *got;
		char summary[1024];
		int rc;

		n = make_cpio(b, sizeof(b), cases[i].ents, cases[i].trailer);
		if (cases[i].gzip) {
			b[0] = 0x1f;
			b[1] = 0x8b;
		}
		write_file(fx->in, b, n);
		write_file(fx->dep, cases[i].dep, strlen(cases[i].dep));
		unlink(fx->out);

		rc = boot_initrd_slim(fx->in, fx->out, fx->dep, cases[i].want, &kept, &total, &e);
		if (rc != cases[i].code || e.code != rc)
			fail_msg("%s: rc %d (want %d): %s", cases[i].name, rc, cases[i].code, e.msg);
		if (rc) {
			if (!strstr(e.msg, cases[i].want_out))
				fail_msg("%s: message '%s' lacks '%s'", cases[i].name, e.msg,
					 cases[i].want_out);
			if (access(fx->out, F_OK) == 0)
				fail_msg("%s: failed but left '%s'", cases[i].name, fx->out);
			continue;
		}
		got = read_file(fx->out, &got_len);
		cpio_summary(got, got_len, summary, sizeof(summary));
		free(got);
		if (strcmp(summary, cases[i].want_out))
			fail_msg("%s: got '%s', want '%s'", cases[i].name, summary, cases[i].want_out);
		if (kept != cases[i].kept || total != cases[i].total)
			fail_msg("%s: kept %zu of %zu, want %zu of %zu", cases[i].name, kept, total,
				 cases[i].kept, cases[i].total);
	}
}

static void test_initrd_slim_bad_args(void **state)
{
	struct fixture *fx = *state;
	static const char *const want[] = { "a", NULL };
	struct err e = ERR_INIT;

	assert_int_equal(boot_initrd_slim(fx->in, fx->out, fx->dep, NULL, NULL, NULL, &e), -EINVAL);
	err_clear(&e);
	assert_int_equal(boot_initrd_slim("/nonexistent/initrd", fx->out, "/nonexistent/modules.dep",
					  want, NULL, NULL, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "modules.dep"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_unpack_cases),
		cmocka_unit_test(test_kernel_unpack_bad_files),
		cmocka_unit_test(test_kernel_unpack_host),
		cmocka_unit_test(test_initrd_slim_cases),
		cmocka_unit_test(test_initrd_slim_bad_args),
	};

	return cmocka_run_group_tests_name("images/boot", tests, setup, teardown);
}
