#include "probe.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "memset.h"
#include "sysinfo.h"

#define HUGE_2M (2ull << 20)
#define PROBE_TOUCH_MARGIN (64ull << 20)	/* of MemFree left to the guest's kernel */

enum guest_thp probe_guest_thp(const struct plan *p)
{
	size_t i;

	for (i = 0; i < p->nthp; i++)
		if (p->guest_thp[i] != GUEST_THP_NEVER)
			return p->guest_thp[i];
	return GUEST_THP_NEVER;
}

enum host_word { HOST_NONE, HOST_STOP, HOST_TOUCH };

/* wait up to ms for a word from the host on fd: "stop" (or the port closed: the host is done), "touch" */
static enum host_word wait_host(int fd, int64_t ms, char *got, size_t cap, size_t *have)
{
	int64_t deadline = harness_now_ms() + ms;

	if (fd < 0) {
		if (ms > 0)
			harness_sleep_ms((unsigned)ms);
		return HOST_NONE;
	}
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = deadline - harness_now_ms();
		ssize_t n;
		char *w;
		int r;

		if (left <= 0)
			return HOST_NONE;
		r = poll(&pfd, 1, (int)left);
		if (r <= 0)
			continue;	/* EINTR or nothing yet */
		if (!(pfd.revents & POLLIN))
			return HOST_STOP;
		n = read(fd, got + *have, cap - 1 - *have);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return HOST_STOP;
		*have += (size_t)n;
		got[*have] = '\0';
		if (strstr(got, REC_PROBE_STOP))
			return HOST_STOP;
		if ((w = strstr(got, REC_PROBE_TOUCH))) {
			size_t past = (size_t)(w - got) + strlen(REC_PROBE_TOUCH);

			memmove(got, got + past, *have - past + 1);
			*have -= past;
			return HOST_TOUCH;
		}
		if (*have == cap - 1) {
			memmove(got, got + *have - 5, 5);
			*have = 5;
		}
	}
}

/*
 * The host's "touch": fault one fresh buffer of most of the guest's free
 * memory (one write per 4K page) and free it again, so the guest's
 * allocator hands out guest-physical memory the host never backed and
 * QEMU takes new faults there under the host's new setting (the kernel
 * puts a process on khugepaged's list at such a fault); its size and time
 * go to the host in one record (event=probe_touch).
 */
static int probe_touch(const struct probe_env *env, uint64_t start, struct emitter *em, struct err *e)
{
	uint64_t free_b = 0, len = 0, t0, off;
	struct record r;
	char *m = MAP_FAILED;

	if (!meminfo_get(env->root, "MemFree", &free_b, NULL) && free_b > PROBE_TOUCH_MARGIN)
		len = (free_b - PROBE_TOUCH_MARGIN) & ~(HUGE_2M - 1);
	t0 = harness_now_ns();
	if (len)
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m != MAP_FAILED) {
		for (off = 0; off < len; off += 4096)
			((volatile char *)m)[off] = 1;
		munmap(m, len);
	} else {
		len = 0;
	}
	t0 = harness_now_ns() - t0;
	rec_init(&r, REC_INFO, 0);
	rec_add_str(&r, "event", "probe_touch");
	rec_add_u64(&r, "t_ms", (harness_now_ns() - start) / 1000000);
	rec_add_u64(&r, "bytes", len);
	rec_add_u64(&r, "free_bytes", free_b);
	rec_add_f64(&r, "touch_ms", (double)t0 / 1e6);
	return emitter_send(em, &r, e);
}

static int send_end(struct emitter *em, uint64_t passes, const char *skipped, struct err *e)
{
	struct record r;

	rec_init(&r, REC_INFO, 0);
	rec_add_str(&r, "event", "probe_end");
	rec_add_u64(&r, "passes", passes);
	if (skipped)
		rec_add_str(&r, "skipped", skipped);
	return emitter_send(em, &r, e);
}

int probe_run(const struct probe_env *env, const struct plan *p, struct emitter *em, struct err *e)
{
	enum guest_thp t = probe_guest_thp(p);
	uint64_t acc = p->accesses < PROBE_ACCESSES_MAX ? p->accesses : PROBE_ACCESSES_MAX;
	size_t npages = p->size / 4096, map_len = p->size + HUGE_2M, have = 0;
	struct err why = ERR_INIT;
	struct smaps_vma vma;
	uint64_t i, t0, start;
	uint32_t *scratch;
	char *map, *buf, got[64];
	struct record r;
	bool touched = false, stop = false;
	void *node;
	int ret;

	if (!p->probe)
		return 0;
	if (env->set_thp && thp_supported(env->root) && thp_knob_set(env->root, "enabled", guest_thp_name(t), &why))
		return send_end(em, 0, why.msg, e);
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return send_end(em, 0, "cannot map the probe buffer", e);
	buf = (char *)(((uintptr_t)map + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
	if (t == GUEST_THP_MADVISE)
		madvise(buf, p->size, MADV_HUGEPAGE);
	memset(buf, 1, p->size);
	scratch = malloc(npages * sizeof(*scratch));
	if (!scratch) {
		munmap(map, map_len);
		return send_end(em, 0, "out of memory for the probe's chain", e);
	}
	node = memset_chain_build(buf, npages, p->seed, scratch);
	free(scratch);
	node = memset_chase(node, 1024);	/* warm the code path */

	rec_init(&r, REC_INFO, 0);
	rec_add_str(&r, "event", "probe_start");
	/* the buffer's share on guest huge pages: the guest side's evidence of its THP setting */
	if (!smaps_self(env->root, (uint64_t)(uintptr_t)buf, &vma, &why) && vma.have_anon_huge && vma.rss_bytes)
		rec_add_f64(&r, "guest_huge_pct", 100.0 * (double)vma.anon_huge_bytes / (double)vma.rss_bytes);
	rec_add_u64(&r, "passes", p->probe);
	rec_add_u64(&r, "period_ms", p->probe_period_ms);
	rec_add_u64(&r, "size_bytes", p->size);
	rec_add_u64(&r, "accesses", acc);
	rec_add_str(&r, "guest_thp", guest_thp_name(t));
	if ((ret = emitter_send(em, &r, e)))
		goto out;
	start = harness_now_ns();
	for (i = 0; i < p->probe; i++) {
		int64_t due = (int64_t)((i + 1) * p->probe_period_ms);

		t0 = harness_now_ns();
		node = memset_chase(node, acc);
		t0 = harness_now_ns() - t0;
		rec_init(&r, REC_INFO, 0);
		rec_add_str(&r, "event", "probe");
		rec_add_u64(&r, "pass", i);
		rec_add_u64(&r, "t_ms", (harness_now_ns() - start) / 1000000);
		rec_add_f64(&r, "access_ns", (double)t0 / (double)acc);
		if ((ret = emitter_send(em, &r, e)))
			goto out;
		for (;;) {
			enum host_word w = wait_host(env->stop_fd, due - (int64_t)((harness_now_ns() - start) / 1000000),
						     got, sizeof(got), &have);

			if (w == HOST_TOUCH && !touched) {
				touched = true;
				if ((ret = probe_touch(env, start, em, e)))
					goto out;
				continue;
			}
			if (w == HOST_TOUCH)
				continue;
			stop = w == HOST_STOP;
			break;
		}
		if (stop) {
			i++;
			break;
		}
	}
	__asm__ volatile("" : : "r"(node) : "memory");	/* the sink: the chase cannot be dropped */
	ret = send_end(em, i, NULL, e);
out:
	munmap(map, map_len);
	return ret;
}
