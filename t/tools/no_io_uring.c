/*
 * no_io_uring.c: runs a command where io_uring is refused, as Docker's
 * and containerd's default seccomp profiles refuse it: a seccomp filter
 * (raw BPF, no libseccomp) makes io_uring_setup(2) fail with EPERM, then
 * the command is executed in place (same pid). t/event_epoll.t builds it.
 *
 *   no_io_uring PROGRAM ARGS...
 */
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

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

int
main(int argc, char **argv)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

    if (argc < 2) {
        fprintf(stderr, "usage: no_io_uring PROGRAM ARGS...\n");
        return 2;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
        perror("prctl(PR_SET_NO_NEW_PRIVS)");
        return 1;
    }
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1) {
        perror("prctl(PR_SET_SECCOMP)");
        return 1;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "execvp(%s): %s\n", argv[1], strerror(errno));
    return 127;
}
