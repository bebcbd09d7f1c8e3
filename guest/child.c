#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static void child_exec(const char *path, char *const argv[], const struct child_opts *o, int out_fd,
		       int report_fd, pid_t parent)
{
	int nul, saved;

	/* it dies with the workload (a runner timeout kills the workload, not it) */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	signal(SIGPIPE, SIG_DFL);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0 || dup2(nul, STDIN_FILENO) < 0 ||
	    dup2(o->out_to_pipe ? out_fd : nul, STDOUT_FILENO) < 0 ||
	    dup2(o->err_to_pipe ? out_fd : nul, STDERR_FILENO) < 0)
		goto fail;
	execve(path, argv, o->envp);
fail:
	saved = errno;
	if (write(report_fd, &saved, sizeof(saved)) < 0)
		_exit(126);
	_exit(127);
}

int child_run(const char *path, char *const argv[], const struct child_opts *o, child_chunk_fn fn,
	      void *opaque, struct child_result *res, struct err *e)
{
	char chunk[4096];
	int op[2], rp[2], exec_errno = 0, ret;
	uint64_t t0;
	ssize_t n;
	pid_t pid, self;

	memset(res, 0, sizeof(*res));
	if (pipe2(op, O_CLOEXEC))
		return err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
	if (pipe2(rp, O_CLOEXEC)) {
		ret = err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
		close(op[0]);
		close(op[1]);
		return ret;
	}
	self = getpid();
	t0 = harness_now_ns();
	pid = fork();
	if (pid == 0)
		child_exec(path, argv, o, op[1], rp[1], self);
	close(op[1]);
	close(rp[1]);
	if (pid < 0) {
		ret = err_set(e, -errno, "cannot fork: %s", strerror(errno));
		close(op[0]);
		close(rp[0]);
		return ret;
	}
	/* the output until it exits (and every process holding the pipe) */
	for (;;) {
		n = read(op[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (fn)
			fn(opaque, chunk, (size_t)n);
	}
	close(op[0]);
	while (wait4(pid, &res->status, 0, &res->ru) < 0 && errno == EINTR)
		;
	res->wall_ns = harness_now_ns() - t0;
	do
		n = read(rp[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(rp[0]);
	if (n == (ssize_t)sizeof(exec_errno))
		return err_set(e, -exec_errno, "cannot execute '%s': %s", path, strerror(exec_errno));
	return 0;
}
