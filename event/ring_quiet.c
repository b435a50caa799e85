/*
 * ring_quiet.c: quiet sends, whose success posts no completion.
 *
 * A send prepared here goes out inside the next io_uring_enter the loop
 * makes anyway, and when the socket takes every byte nothing comes back:
 * no syscall of its own (a sendmsg costs 1.2 us on a PVM guest, more than
 * the work of a small send) and no completion to wake the loop for. It is
 * a sendmsg with MSG_DONTWAIT | MSG_WAITALL and IOSQE_CQE_SKIP_SUCCESS:
 *
 * - DONTWAIT: the kernel tries it once, while it takes the entry from the
 *   queue (inline, at the submit), and never waits for room. Once the
 *   entry is taken (its ticket, below) the send is over, and the caller's
 *   buffers are free again.
 * - WAITALL: a short send is a failure, so it posts a completion; its
 *   result is the bytes that went (> 0), -EAGAIN when none did (a full
 *   socket), or -errno.
 * - CQE_SKIP_SUCCESS: a send that took everything posts nothing.
 *
 * Kernels have not always kept these promises (the count of a short send
 * was lost before io_uring's send learned to report it), so the worker
 * tries them once on its ring at start, on a socket pair it fills
 * (rx_ring_quiet_probe), and quiet sends are refused where they fail;
 * callers then send as before. What a send became is read from the
 * queue's head: the kernel has taken an entry when the head has passed
 * the ticket given when it was prepared. The kernel posts a quiet send's
 * failure as it takes it; so once the completions posted up to a moment
 * are all dispatched, a send taken by that moment without a failure among
 * them went whole. rx_ring_quiet_mark() records that moment's head.
 */
#include <liburing.h>
#include <sys/socket.h>
#include "core.h"
#include "ring.h"
#include "ring_int.h"

#define QUIET_FLAGS  (MSG_NOSIGNAL | MSG_DONTWAIT | MSG_WAITALL)
#define PROBE_UD     0           /* RX_OP_NONE: the probe's own */
#define PROBE_LARGE  (64 * 1024)

/* The queue's head when the completions being dispatched were all posted
 * (rx_ring_quiet_mark): a quiet send taken by then has its failure, if
 * any, among them. */
static uint32_t head_marked;

static void
prep_quiet(struct io_uring_sqe *sqe, int fd, const struct msghdr *msg,
    uint64_t ud)
{
    io_uring_prep_sendmsg(sqe, fd, msg, QUIET_FLAGS);
    io_uring_sqe_set_data64(sqe, ud);
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
}

bool
rx_ring_sendmsg_quiet(int fd, const struct msghdr *msg, uint64_t ud,
    uint32_t *ticket)
{
    struct io_uring     *ring = rx_ring_uring();
    struct io_uring_sqe *sqe;

    if (rx_ring_epoll || !rx_ring_features.quiet_send || ring == NULL
        || (sqe = rx_ring_sqe()) == NULL) {
        return false;
    }
    prep_quiet(sqe, fd, msg, ud);
    *ticket = ring->sq.sqe_tail;
    return true;
}

/* Whether the kernel has taken the entry at ticket: live, or as of
 * rx_ring_quiet_mark(). */
static bool
taken_by(uint32_t head, uint32_t ticket)
{
    return (int32_t) (head - ticket) >= 0;
}

void
rx_ring_quiet_mark(void)
{
    struct io_uring *ring = rx_ring_uring();

    if (ring) {
        head_marked = io_uring_smp_load_acquire(ring->sq.khead);
    }
}

bool
rx_ring_quiet_taken(uint32_t ticket)
{
    return taken_by(head_marked, ticket);
}

bool
rx_ring_quiet_drop(uint32_t ticket)
{
    struct io_uring     *ring = rx_ring_uring();
    struct io_uring_sqe *sqe;
    uint64_t             ud;

    if (ring == NULL
        || taken_by(io_uring_smp_load_acquire(ring->sq.khead), ticket)) {
        return false;
    }
    /* still ours: the kernel reads an entry when it takes it */
    sqe = &ring->sq.sqes[(ticket - 1) & ring->sq.ring_mask];
    ud = sqe->user_data;
    io_uring_prep_nop(sqe);
    io_uring_sqe_set_data64(sqe, ud);
    sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
    return true;
}

/* One quiet send on the probe's socket: the completion's result, or 1
 * when none came (the send took everything); -1 when the kernel did not
 * take the entry. */
static int
probe_send(struct io_uring *ring, int fd, void *buf, size_t len)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    struct io_uring_cqe *cqe;
    struct iovec         iov = { buf, len };
    struct msghdr        msg;
    int                  res = 1;

    if (sqe == NULL) {
        return -1;
    }
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    prep_quiet(sqe, fd, &msg, PROBE_UD);
    if (io_uring_submit(ring) != 1) {
        return -1;
    }
    if (io_uring_peek_cqe(ring, &cqe) == 0) {
        res = cqe->res;
        io_uring_cqe_seen(ring, cqe);
        if (io_uring_peek_cqe(ring, &cqe) == 0) {
            return -1;                  /* two completions for one send */
        }
    }
    return res;
}

/* Bytes waiting on a socket, read and counted. */
static ssize_t
drain(int fd)
{
    char    buf[16384];
    ssize_t n, total = 0;

    while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
        total += n;
    }
    return total;
}

bool
rx_ring_quiet_probe(struct io_uring *ring)
{
    static char large[PROBE_LARGE];
    int         sv[2], sndbuf = 4096, short_res, ok = 0;

    if (!(ring->features & IORING_FEAT_CQE_SKIP)
        || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        return false;
    }
    (void) setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
    /* a send larger than the socket takes: one completion, the bytes that
     * went; then one into the full socket: -EAGAIN, at once; then, the
     * socket emptied, one it takes: nothing at all, and its bytes there */
    short_res = probe_send(ring, sv[0], large, sizeof(large));
    if (short_res > 0 && short_res < (int) sizeof(large)
        && probe_send(ring, sv[0], large, 1) == -EAGAIN
        && drain(sv[1]) == short_res
        && probe_send(ring, sv[0], large, 100) == 1
        && drain(sv[1]) == 100) {
        ok = 1;
    }
    close(sv[0]);
    close(sv[1]);
    return ok;
}
