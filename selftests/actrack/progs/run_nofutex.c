// SPDX-License-Identifier: MIT
/*
 * An unmodified program for run_preload: what an image started by a
 * tracked process does at start when it never pushes (every `true` or
 * `sed` of a tracked shell).  `run_nofutex` forks a child that forbids
 * itself futex() (a seccomp filter: the first call kills it with SIGSYS)
 * and execs this program again as `run_nofutex idle`, which returns 0 at
 * once; the parent prints "exit N" or "signal N" for that child, or
 * "skip WHY".  The child makes raw system calls only up to the exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE_ARCH	AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define NATIVE_ARCH	AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define NATIVE_ARCH	AUDIT_ARCH_AARCH64
#endif

#ifdef NATIVE_ARCH
#ifdef __NR_futex_time64
#define KILL_FUTEX_TIME64						\
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_futex_time64, 1, 0),
#else
#define KILL_FUTEX_TIME64
#endif

static void child(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		KILL_FUTEX_TIME64
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_futex, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(f) / sizeof(f[0])),
		.filter = f,
	};
	char *argv[] = { "run_nofutex", "idle", NULL };

	if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		syscall(SYS_exit_group, 100 + errno);
	syscall(SYS_execve, "/proc/self/exe", argv, environ);
	syscall(SYS_exit_group, 99);
}
#endif

int main(int argc, char **argv)
{
	int st = 0;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "idle"))
		return 0;
#ifndef NATIVE_ARCH
	printf("skip no seccomp architecture known for this build\n");
	return 0;
#else
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		child();
	if (syscall(SYS_wait4, pid, &st, 0, NULL) != pid)
		return 2;
	if (WIFSIGNALED(st))
		printf("signal %d\n", WTERMSIG(st));
	else if (WEXITSTATUS(st) > 100)
		printf("skip seccomp: %s\n", strerror(WEXITSTATUS(st) - 100));
	else
		printf("exit %d\n", WEXITSTATUS(st));
	return 0;
#endif
}
