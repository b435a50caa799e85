/*
 * ring_try.c: a file's open and read done on the worker's own thread when
 * they need no disk, for a caller that can take the answer at once and so
 * save the loop turn a completion costs; when they would wait, the caller
 * submits the ring's operation as before (io_uring's own first attempt,
 * made in the kernel, is the same: a cached lookup, then io-wq).
 *
 *   open  openat2 with RESOLVE_CACHED (the path in the dentry cache, Linux
 *         5.12) and O_NONBLOCK (a FIFO opens at once, a lease to break
 *         answers EAGAIN instead of waiting). Without RESOLVE_CACHED every
 *         open is the ring's: a cold lookup never reads the disk here.
 *   read  preadv2(RWF_NOWAIT): page-cached data only.
 *
 * The results are the caller's at once, never queued as completions: this
 * is not the epoll backend's inline path (epoll_file_try.c), which hands
 * its results out at the next dispatch behind ring.h's promise.
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/openat2.h>
#include "core.h"
#include "ring.h"

static int  have_cached = -1;     /* openat2 knows RESOLVE_CACHED: -1 unknown */

bool
rx_ring_cached_lookups(void)
{
    struct open_how how;
    long            fd;

    if (have_cached == -1) {
        memset(&how, 0, sizeof(how));
        how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
        how.resolve = RESOLVE_CACHED;
        fd = syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
        have_cached = fd >= 0;
        if (fd >= 0) {
            close((int) fd);
        }
    }
    return have_cached == 1;
}

int
rx_ring_try_openat2(int dfd, const char *path, const struct open_how *how)
{
    struct open_how h = *how;
    long            fd;

    if ((h.flags & (O_CREAT | O_TRUNC | O_PATH))
        || (h.flags & O_TMPFILE) == O_TMPFILE || !rx_ring_cached_lookups()) {
        return -EAGAIN;     /* RESOLVE_CACHED refuses them; O_PATH: no need */
    }
    h.flags |= O_NONBLOCK;
    h.resolve |= RESOLVE_CACHED;
    fd = syscall(SYS_openat2, dfd, path, &h, sizeof(h));
    if (fd == -1) {
        /* EAGAIN: not cached, or a lease to break; EINTR: the ring's turn */
        return errno == EINTR ? -EAGAIN : -errno;
    }
    return (int) fd;
}

int
rx_ring_file_blocking(int fd, int flags)
{
    /* the flags F_SETFL can set, as the open asked for them */
    return fcntl(fd, F_SETFL, flags & (O_APPEND | O_DIRECT | O_NOATIME));
}

ssize_t
rx_ring_try_read(int fd, void *buf, size_t len, int64_t off)
{
    struct iovec iov;
    size_t       got = 0;
    ssize_t      n;

    while (got < len) {
        iov.iov_base = (char *) buf + got;
        iov.iov_len = len - got;
        n = preadv2(fd, &iov, 1, (off_t) (off + (int64_t) got), RWF_NOWAIT);
        if (n > 0) {
            got += (size_t) n;
            continue;
        }
        if (n == 0) {
            break;                  /* the end of the file */
        }
        if (errno == EINTR) {
            continue;
        }
        /* EAGAIN: not all cached; EOPNOTSUPP: no RWF_NOWAIT here; any
         * other error the ring's read reports as it would (errno says
         * which: ESPIPE for a pipe or a socket) */
        return -1;
    }
    return (ssize_t) got;
}
