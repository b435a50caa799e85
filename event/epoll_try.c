/*
 * epoll_try.c: the epoll backend's attempts of socket operations (accept,
 * recv into provided buffers, send/writev/splice to a socket, connect,
 * one-shot reads and polls) without blocking, with io_uring's results:
 * the loop (epoll.c) calls rx_epoll_try at submit and on readiness.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "core.h"
#include "epoll.h"

/* Multishot recv into provided buffers: one CQE with F_MORE per buffer
 * filled, until the socket is drained. A short read drains it unless the
 * peer's FIN came with this edge (no later edge would announce it). */
static bool
try_recv_ms(rx_eop_t *op, uint32_t ev, int32_t *res)
{
    rx_epoll_bufs_t *b = rx_epoll_group(op->group);
    unsigned short   bid;
    ssize_t          n;

    for ( ;; ) {
        if (b == NULL || b->nfree == 0) {
            *res = -ENOBUFS;
            return true;
        }
        bid = b->free[--b->nfree];
        n = recv(op->fd, rx_epoll_bufs_addr(b, bid), b->size, MSG_DONTWAIT);
        if (n > 0) {
            rx_epoll_post(op->ud, (int32_t) n, RX_CQE_F_MORE | RX_CQE_F_BUFFER
                 | ((uint32_t) bid << RX_CQE_BUFFER_SHIFT));
            if ((size_t) n < b->size && ev
                && !(ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
                return false;
            }
            continue;
        }
        b->free[b->nfree++] = bid;
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n == -1 && errno == EAGAIN) {
            return false;
        }
        *res = n == 0 ? 0 : -errno;
        return true;
    }
}

static bool
try_accept(rx_eop_t *op, int32_t *res)
{
    int s;

    for ( ;; ) {
        s = accept4(op->fd, NULL, NULL, SOCK_CLOEXEC);
        if (s >= 0) {
            if (op->multishot) {
                rx_epoll_post(op->ud, s, RX_CQE_F_MORE);
                continue;
            }
            *res = s;
            return true;
        }
        if (errno == EAGAIN) {
            return false;
        }
        if (errno != EINTR && errno != ECONNABORTED) {
            *res = -errno;
            return true;
        }
    }
}

/* One send step of a stream operation: bytes moved, or -1 with errno. */
static ssize_t
send_step(rx_eop_t *op)
{
    struct iovec        tmp[64];
    struct msghdr       msg;
    const struct iovec *iov = op->buf;
    size_t              skip = op->done;
    unsigned            i, k;

    switch (op->type) {
    case RX_EOP_SEND:
        return send(op->fd, (char *) op->buf + op->done, op->len - op->done,
                    op->flags | MSG_DONTWAIT);
    case RX_EOP_SPLICE:
        return splice(op->fd2, NULL, op->fd, NULL, op->len - op->done,
                      SPLICE_F_NONBLOCK | (op->more ? SPLICE_F_MORE : 0));
    default:
        break;
    }
    /* writev: from where the last step stopped */
    for (i = 0; i < op->len && skip >= iov[i].iov_len; i++) {
        skip -= iov[i].iov_len;
    }
    for (k = 0; i < op->len && k < rx_nelems(tmp); i++, k++) {
        tmp[k] = iov[i];
    }
    if (k == 0) {
        return 0;
    }
    tmp[0].iov_base = (char *) tmp[0].iov_base + skip;
    tmp[0].iov_len -= skip;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = tmp;
    msg.msg_iovlen = k;
    return sendmsg(op->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static size_t
send_total(const rx_eop_t *op)
{
    const struct iovec *iov = op->buf;
    size_t              total = 0;
    unsigned            i;

    if (op->type != RX_EOP_WRITEV) {
        return op->len;
    }
    for (i = 0; i < op->len; i++) {
        total += iov[i].iov_len;
    }
    return total;
}

/* Sends finish whole (as a blocking socket's send does under io_uring):
 * a short count only with an error after some bytes. */
static bool
try_send(rx_eop_t *op, int32_t *res)
{
    size_t  total = send_total(op);
    ssize_t n;

    while (op->done < total) {
        n = send_step(op);
        if (n > 0) {
            op->done += (size_t) n;
            continue;
        }
        if (n == 0) {
            break;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN) {
            return false;
        }
        *res = op->done ? (int32_t) op->done : -errno;
        return true;
    }
    *res = (int32_t) op->done;
    return true;
}

static bool
try_connect(rx_eop_t *op, int32_t *res)
{
    struct pollfd p = { op->fd, POLLOUT, 0 };
    int           err = 0;
    socklen_t     len = sizeof(err);

    if (!op->connecting) {
        if (connect(op->fd, op->buf, op->len) == 0) {
            *res = 0;
            return true;
        }
        if (errno != EINPROGRESS && errno != EINTR) {
            *res = -errno;
            return true;
        }
        op->connecting = true;
        return false;
    }
    if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLOUT | POLLERR | POLLHUP))) {
        return false;
    }
    if (getsockopt(op->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1) {
        err = errno;
    }
    *res = -err;
    return true;
}

static bool
try_once(rx_eop_t *op, int32_t *res)
{
    struct pollfd p = { op->fd, (short) op->len, 0 };
    ssize_t       n;

    switch (op->type) {
    case RX_EOP_RECV:
        n = recv(op->fd, op->buf, op->len, MSG_DONTWAIT);
        break;
    case RX_EOP_READ:
        n = read(op->fd, op->buf, op->len);
        break;
    case RX_EOP_SENDMSG:
        n = sendmsg(op->fd, op->buf, op->flags | MSG_DONTWAIT);
        break;
    default:                                    /* RX_EOP_POLL */
        if (poll(&p, 1, 0) > 0 && p.revents) {
            *res = p.revents;
            return true;
        }
        return false;
    }
    if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
        return false;
    }
    *res = n == -1 ? -errno : (int32_t) n;
    return true;
}

bool
rx_epoll_try(rx_eop_t *op, uint32_t ev, int32_t *res)
{
    rx_ring_epoch++;           /* input may come (ring.h) */
    switch (op->type) {
    case RX_EOP_RECV_MS:
        return try_recv_ms(op, ev, res);
    case RX_EOP_ACCEPT:
        return try_accept(op, res);
    case RX_EOP_SEND:
    case RX_EOP_WRITEV:
    case RX_EOP_SPLICE:
        return try_send(op, res);
    case RX_EOP_CONNECT:
        return try_connect(op, res);
    default:
        return try_once(op, res);
    }
}

