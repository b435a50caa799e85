/*
 * ring_fs.c: the ring's operations on paths (WebDAV's methods, the cache's
 * store): rename, unlink, mkdir, link. Prepared as ring.c prepares the
 * others; the epoll backend runs them on its file thread pool.
 */
#include <liburing.h>
#include "core.h"
#include "ring.h"
#include "epoll.h"
#include "ring_int.h"

void
rx_ring_renameat(int olddfd, const char *oldpath, int newdfd,
    const char *newpath, unsigned flags, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep_path(RX_EOP_RENAME, olddfd, oldpath, ud);
        op->fd3 = newdfd;
        op->arg = newpath;
        op->flags = (int) flags;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_renameat(sqe, olddfd, oldpath, newdfd, newpath, flags);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_unlinkat(int dfd, const char *path, int flags, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep_path(RX_EOP_UNLINK, dfd, path, ud);
        op->flags = flags;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_unlinkat(sqe, dfd, path, flags);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_mkdirat(int dfd, const char *path, unsigned mode, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep_path(RX_EOP_MKDIR, dfd, path, ud);
        op->mode = mode;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_mkdirat(sqe, dfd, path, (mode_t) mode);
    io_uring_sqe_set_data64(sqe, ud);
}

void
rx_ring_linkat(int olddfd, const char *oldpath, int newdfd,
    const char *newpath, int flags, uint64_t ud)
{
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll) {
        rx_eop_t *op = rx_epoll_prep_path(RX_EOP_LINK, olddfd, oldpath, ud);
        op->fd3 = newdfd;
        op->arg = newpath;
        op->flags = flags;
        return;
    }
    sqe = rx_ring_get_sqe();
    io_uring_prep_linkat(sqe, olddfd, oldpath, newdfd, newpath, flags);
    io_uring_sqe_set_data64(sqe, ud);
}
