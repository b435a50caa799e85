/*
 * epoll_file_try.c: the epoll backend's file operations done on the loop's
 * thread when they need no disk, as nginx does them in its worker; what
 * would wait for a disk (or for another process) goes to the thread pool
 * (epoll_files.c). epoll.c calls rx_epoll_file_try at submit.
 *
 * The trade-off, by operation (io_uring makes the same first attempt):
 *   open   inline when the dentry cache resolves the path (openat2's
 *          RESOLVE_CACHED, Linux 5.12) and with O_NONBLOCK, so that a FIFO
 *          opens at once and a lease to break answers EAGAIN instead of
 *          waiting: then the pool (so is the first lookup of a name that
 *          does not exist, until its negative dentry is cached). Creating
 *          opens (O_CREAT, O_TRUNC, O_TMPFILE) always go to the pool; an
 *          O_PATH open gets no O_NONBLOCK. Without RESOLVE_CACHED the
 *          open is inline all the same (nginx's trade-off: a cold lookup
 *          reads the disk on the worker).
 *   statx  inline (nginx's stat()): no flag keeps a lookup from the disk;
 *          AT_STATX_FORCE_SYNC (a network file system's server) pooled.
 *   read   preadv2(RWF_NOWAIT): page-cached data inline, the pool for the
 *          rest (not cached, or no RWF_NOWAIT on that file system).
 *   others (write, rename, unlink, mkdir, link, splice from a file) may
 *          wait for the journal or the disk: pooled. ext4 and tmpfs refuse
 *          RWF_NOWAIT on buffered writes; a splice reads the file even
 *          with SPLICE_F_NONBLOCK, and cachestat, which would tell a cached
 *          range, wants write permission on the file (EPERM for a worker
 *          serving a docroot it cannot write).
 * A result made here is queued as a completion by the caller (epoll.c),
 * handed out by the next dispatch, never inside the submit.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/openat2.h>
#include "core.h"
#include "epoll.h"

/* The open flags F_SETFL can set again (O_ASYNC is not taken at open). */
#define SETFL_FLAGS  (O_APPEND | O_DIRECT | O_NOATIME)

void
rx_epoll_file_try_init(rx_log_t *log)
{
    if (!rx_ring_cached_lookups()) {
        rx_log_error(RX_LOG_INFO, log, 0, "openat2(RESOLVE_CACHED) is "
                     "not available: the epoll backend opens files on the "
                     "worker whether their path is cached or not");
    }
}

/* An open on the loop's thread: DONE with the fd or the error the path
 * gives, POOL when it would wait. */
static rx_efile_e
try_open(rx_eop_t *op, int32_t *res)
{
    struct open_how how;
    uint64_t        asked;
    long            fd;

    memset(&how, 0, sizeof(how));
    if (op->type == RX_EOP_OPENAT2) {
        how = *(const struct open_how *) op->arg;
    } else {
        how.flags = (uint64_t) (unsigned) op->flags;   /* mode: not creating */
    }
    asked = how.flags;
    if ((asked & (O_CREAT | O_TRUNC)) || (asked & O_TMPFILE) == O_TMPFILE) {
        return RX_EFILE_POOL;       /* RESOLVE_CACHED refuses them */
    }
    if (!(asked & O_PATH)) {
        /* an O_PATH open opens no file (no FIFO to wait for, no lease),
         * and openat2 refuses O_NONBLOCK beside it */
        how.flags |= O_NONBLOCK;
    }
    if (rx_ring_cached_lookups()) {
        how.resolve |= RESOLVE_CACHED;
        fd = syscall(SYS_openat2, op->fd2, op->buf, &how, sizeof(how));
    } else if (op->type == RX_EOP_OPENAT) {
        fd = openat(op->fd2, op->buf, (int) how.flags);
    } else {
        fd = syscall(SYS_openat2, op->fd2, op->buf, &how, sizeof(how));
    }
    if (fd == -1) {
        /* EAGAIN: not cached, or a lease to break; EINVAL: flags openat2
         * refuses and openat ignores (the pool's openat decides) */
        if (errno == EAGAIN || errno == EINTR
            || (errno == EINVAL && op->type == RX_EOP_OPENAT)) {
            return RX_EFILE_POOL;
        }
        *res = -errno;
        return RX_EFILE_DONE;
    }
    if (!(asked & (O_NONBLOCK | O_PATH))
        && fcntl((int) fd, F_SETFL, (int) asked & SETFL_FLAGS) == -1) {
        /* not asked for, so not given (as io_uring clears it); a failure
         * here is the pool's to do again */
        close((int) fd);
        return RX_EFILE_POOL;
    }
    *res = (int32_t) fd;
    return RX_EFILE_DONE;
}

/* A read at an offset from the page cache: whole, or up to the end of the
 * file (io_uring's result for a regular file). NOT: a pipe or a socket. */
static rx_efile_e
try_read(rx_eop_t *op, int32_t *res)
{
    ssize_t n = rx_ring_try_read(op->fd, op->buf, op->len, op->off);

    if (n >= 0) {
        *res = (int32_t) n;
        return RX_EFILE_DONE;
    }
    /* ESPIPE: not a file; EAGAIN: not all cached; EOPNOTSUPP, EINVAL: no
     * RWF_NOWAIT here; anything else the pool's pread reports as it
     * would. The pool reads the whole length again (what was read is
     * cached). */
    return errno == ESPIPE ? RX_EFILE_NOT : RX_EFILE_POOL;
}

rx_efile_e
rx_epoll_file_try(rx_eop_t *op, int32_t *res)
{
    struct stat st;

    switch (op->type) {
    case RX_EOP_READ:
        if (op->off != -1) {
            return try_read(op, res);
        }
        /* at the file position: a signalfd's or a pipe's waits for
         * readiness, a file's goes to the pool */
        if (fstat(op->fd, &st) == -1
            || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))) {
            return RX_EFILE_NOT;
        }
        return RX_EFILE_POOL;
    case RX_EOP_OPENAT:
    case RX_EOP_OPENAT2:
        return try_open(op, res);
    case RX_EOP_STATX:
        if (op->flags & AT_STATX_FORCE_SYNC) {
            return RX_EFILE_POOL;
        }
        *res = rx_epoll_file_run(op);
        return RX_EFILE_DONE;
    case RX_EOP_SPLICE:
        return op->off == -1 ? RX_EFILE_NOT : RX_EFILE_POOL;
    case RX_EOP_WRITE: case RX_EOP_RENAME: case RX_EOP_UNLINK:
    case RX_EOP_MKDIR: case RX_EOP_LINK:
        return RX_EFILE_POOL;
    default:
        return RX_EFILE_NOT;
    }
}
