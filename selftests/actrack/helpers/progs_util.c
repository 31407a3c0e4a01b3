// SPDX-License-Identifier: MIT
/*
 * The run_* and hangs_* tests' helpers (progs_util.h): the unmodified
 * programs beside the tests, a free port, a started job.
 */
#include <stdbool.h>
#include "actrack.h"
#include "snapshot_helpers.h"
#include "progs_util.h"

const char *progs_path(char *buf, size_t len, const char *name)
{
	char *slash;
	ssize_t n;

	n = readlink("/proc/self/exe", buf, len);
	if (n <= 0 || (size_t)n >= len)
		return "no /proc/self/exe";
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash || snprintf(slash, len - (size_t)(slash - buf),
			       "/progs/%s", name) >=
	    (int)(len - (size_t)(slash - buf)))
		return "path too long";
	if (access(buf, X_OK))
		return "the program is not built beside the test (progs/)";
	return NULL;
}

int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int s, port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (!bind(s, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(s, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(s);
	return port;
}

const char *run_refused(const char *prog, const char *arg)
{
	char *argv[] = { "actrack", "run", "--", (char *)prog, (char *)arg,
			 arg ? "true" : NULL, NULL };
	static char why[256];
	struct run r;

	why[0] = 0;
	if (run_cli(&r, "ACTRACK_ARENA=/nonexistent/actrack-probe", argv))
		return "cannot run the CLI";
	if (r.status == 126)
		snprintf(why, sizeof(why), "%.*s", (int)strcspn(r.err, "\n"),
			 r.err);
	run_free(&r);
	return why[0] ? why : NULL;
}

int job_start(struct job *j, char *const argv[], const char *arena,
	      const char *out_file)
{
	int pin[2], pout[2];

	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC))
		return -1;
	j->pid = fork();
	if (j->pid < 0)
		return -1;
	if (!j->pid) {
		int fd = out_file ? open(out_file, O_WRONLY | O_CREAT |
					 O_TRUNC, 0644) : pout[1];

		dup2(pin[0], 0);
		dup2(fd, 1);
		if (out_file)
			dup2(fd, 2);
		setpgid(0, 0);
		if (arena)
			setenv(ACTRACK_ENV_ARENA, arena, 1);
		execv(cli_path(), argv);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	j->in = pin[1];
	j->out = pout[0];
	return 0;
}

bool job_read_until(struct job *j, const char *prefix, char *buf,
		    size_t len)
{
	size_t n = 0, k = strlen(prefix);

	buf[0] = 0;
	while (n + 1 < len) {
		ssize_t r = read(j->out, buf + n, len - n - 1);

		if (r <= 0)
			return false;
		n += (size_t)r;
		buf[n] = 0;
		for (const char *l = buf; l; l = strchr(l, '\n')) {
			if (*l == '\n')
				l++;
			if (!strncmp(l, prefix, k) && strchr(l + k, '\n'))
				return true;
		}
	}
	return false;
}

int job_finish(struct job *j)
{
	int st;

	close(j->in);
	close(j->out);
	if (waitpid(j->pid, &st, 0) != j->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void job_kill(struct job *j)
{
	kill(-j->pid, SIGKILL);
	kill(j->pid, SIGKILL);
	job_finish(j);
}
