#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static __attribute__((noreturn)) void child_exec(const char *path, char *const argv[],
						 const struct child_opts *o, int out_fd, int report_fd,
						 pid_t parent)
{
	int nul, saved;

	if (o->own_group)
		setpgid(0, 0);		/* killed as one */
	/* it dies with the workload (a runner timeout kills the workload, not it) */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(126);
	if (o->unblock_signals) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	signal(SIGPIPE, SIG_DFL);
	/* only stdin's when both outputs go to the pipe */
	nul = open("/dev/null", (o->out_to_pipe && o->err_to_pipe ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (nul < 0 || dup2(nul, STDIN_FILENO) < 0 ||
	    dup2(o->out_to_pipe ? out_fd : nul, STDOUT_FILENO) < 0 ||
	    dup2(o->err_to_pipe ? out_fd : nul, STDERR_FILENO) < 0)
		goto fail;
	if (o->cwd && chdir(o->cwd) && chdir("/"))
		goto fail;
	execve(path, argv, o->envp);
fail:
	saved = errno;
	if (write(report_fd, &saved, sizeof(saved)) < 0)
		_exit(126);
	_exit(127);
}

int child_spawn(const char *path, char *const argv[], const struct child_opts *o, struct child_proc *cp,
		struct err *e)
{
	int op[2], rp[2], ret;
	pid_t self = getpid();

	cp->pid = -1;
	cp->out_fd = cp->report_fd = -1;
	if (pipe2(op, O_CLOEXEC))
		return err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
	if (pipe2(rp, O_CLOEXEC)) {
		ret = err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
		close(op[0]);
		close(op[1]);
		return ret;
	}
	cp->t0 = harness_now_ns();
	cp->pid = fork();
	if (cp->pid == 0)
		child_exec(path, argv, o, op[1], rp[1], self);
	close(op[1]);
	close(rp[1]);
	if (cp->pid < 0) {
		ret = err_set(e, -errno, "cannot fork: %s", strerror(errno));
		close(op[0]);
		close(rp[0]);
		return ret;
	}
	if (o->own_group)
		setpgid(cp->pid, cp->pid);	/* as the child does: whichever runs first */
	cp->out_fd = op[0];
	cp->report_fd = rp[0];
	return 0;
}

int child_exec_errno(int report_fd)
{
	int child_errno = 0;
	ssize_t n;

	do
		n = read(report_fd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(report_fd);
	return n == (ssize_t)sizeof(child_errno) ? child_errno : 0;
}

int child_run(const char *path, char *const argv[], const struct child_opts *o, child_chunk_fn fn,
	      void *opaque, struct child_result *res, struct err *e)
{
	struct child_proc cp;
	char chunk[4096];
	int exec_errno;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	if (child_spawn(path, argv, o, &cp, e))
		return e->code;
	/* the output until it exits (and every process holding the pipe) */
	for (;;) {
		n = read(cp.out_fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (fn)
			fn(opaque, chunk, (size_t)n);
	}
	close(cp.out_fd);
	while (wait4(cp.pid, &res->status, 0, &res->ru) < 0 && errno == EINTR)
		;
	res->wall_ns = harness_now_ns() - cp.t0;
	exec_errno = child_exec_errno(cp.report_fd);
	if (exec_errno)
		return err_set(e, -exec_errno, "cannot execute '%s': %s", path, strerror(exec_errno));
	return 0;
}
