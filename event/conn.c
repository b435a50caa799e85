/*
 * conn.c: the connection table of a worker: slots, free list, generations,
 * in-flight counts and the close protocol (cancel, wait for every CQE,
 * close the fd, then free the slot); the reusable list (connections that
 * wait for a first byte, idle keepalive ones, lingering closes) whose
 * oldest makes room when the table is full; the plain TCP transport.
 */
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include "event.h"
#include "clock.h"

rx_worker_t rx_worker;

/* A connection's own pool block: 96 bytes of pool header and 256 for an
 * idle connection's protocol state (HTTP: its connection, 160 bytes, and
 * the peer's and local addresses, 32 each). Nginx holds ~527 bytes for an
 * idle connection (docs/performance.md). */
#define CONN_POOL_SIZE  (RX_POOL_HEAD + 256)

/* Provided buffers for multishot recv: small requests use one each and
 * give it back at once, so a few hundred serve thousands of connections. */
#define RECV_BUFS      256
#define RECV_BUF_SIZE  4096

rx_int_t
rx_conn_table_init(rx_worker_t *w, rx_uint_t n)
{
    rx_uint_t i;

    /* calloc: pages of slots never used are never touched */
    w->conns = calloc(n, sizeof(rx_conn_t));
    w->free_slots = calloc(n, sizeof(uint32_t));
    if (w->conns == NULL || w->free_slots == NULL) {
        rx_log_error(RX_LOG_EMERG, w->cycle->log, errno,
                     "cannot allocate %lu connections", (unsigned long) n);
        return RX_ERROR;
    }
    w->nconns = n;
    for (i = 0; i < n; i++) {
        w->free_slots[i] = (uint32_t) (n - 1 - i);   /* slot 0 on top */
        w->conns[i].slot = (uint32_t) i;
        w->conns[i].fd = -1;
    }
    w->nfree = n;
    rx_slab_init(&w->conn_pools, CONN_POOL_SIZE);
    if (rx_heap_init(&w->timers, n + 16) != RX_OK) {
        return RX_ERROR;
    }
    w->recv_buf_size = RECV_BUF_SIZE;
    w->recv_bufs = rx_buf_ring_create(RX_RECV_GROUP, RECV_BUFS, RECV_BUF_SIZE,
                                      w->cycle->log);
    return w->recv_bufs ? RX_OK : RX_ERROR;
}

void
rx_conn_table_free(rx_worker_t *w)
{
    rx_buf_ring_destroy(w->recv_bufs);
    w->recv_bufs = NULL;
    rx_heap_free(&w->timers);
    rx_slab_release(&w->conn_pools);
    free(w->conns);
    free(w->free_slots);
    w->conns = NULL;
    w->free_slots = NULL;
}

uint64_t
rx_conn_ud(rx_conn_t *c, rx_op_kind_t kind)
{
    return rx_op_pack(kind, c->slot, c->gen);
}

/* The protocol's tag rides with the slot; on_op reads it (rx_op_tag). */
uint64_t
rx_conn_ud_tag(rx_conn_t *c, rx_op_kind_t kind, uint8_t tag)
{
    return rx_op_pack(kind, c->slot | ((uint32_t) tag << RX_OP_TAG_SHIFT),
                      c->gen);
}

static void
conn_log_ctx(rx_conn_t *c)
{
    c->log = *rx_worker.cycle->log;
    c->log.connection = c->number;
    c->log.data = c;
}

rx_conn_t *
rx_conn_get(rx_worker_t *w, int fd, rx_listening_t *ls)
{
    rx_conn_t *c;
    uint32_t   slot;

    if (w->nfree == 0) {
        return NULL;
    }
    slot = w->free_slots[--w->nfree];
    c = &w->conns[slot];
    /* small: an idle keepalive connection holds only its protocol's state
     * in one block; what a request needs lives in the request's pool. The
     * block comes from a slab apart from malloc's heap: pools interleaved
     * with requests' buffers there kept the pages between them resident
     * once the buffers were freed (idle connections opened under load) */
    c->pool = rx_pool_create_in(&w->conn_pools, w->cycle->log);
    if (c->pool == NULL) {
        w->free_slots[w->nfree++] = slot;
        return NULL;
    }
    c->fd = fd;
    c->state = RX_CONN_ACTIVE;
    c->free_queued = false;
    c->inflight = 0;
    c->reading = c->read_eof = c->idle = c->sending = c->want_read = false;
    c->reusable = c->reclaimed = c->nonblocking = false;
    c->quiet_send = c->quiet_off = false;
    c->recv_armed = c->rearm_queued = false;
    c->sent_direct = 0;
    c->peer = c->local = NULL;
    c->listening = ls;
    c->number = ++w->connection_counter;
    c->ops = NULL;
    c->data = NULL;
    c->transport = &rx_plain_transport;
    c->tls = NULL;
    c->reuse_prev = c->reuse_next = NULL;
    c->proxy_protocol = NULL;
    c->pp_read = NULL;
    c->start_msec = rx_current_msec;
    memset(&c->timer, 0, sizeof(c->timer));
    c->timer.node.index = RX_HEAP_NONE;
    c->timer.data = c;
    conn_log_ctx(c);
    c->pool->log = &c->log;
    return c;
}

static void
conn_free(rx_worker_t *w, rx_conn_t *c)
{
    /* nothing is in flight on it any more: the ring closes it with the
     * loop's next submission, without a syscall of its own (and without
     * an alert for a failure, which close(2) of a socket has no reason
     * for) */
    if (c->fd != -1) {
        rx_ring_close_quiet(c->fd);
    }
    c->fd = -1;
    rx_pool_destroy(c->pool);
    c->pool = NULL;
    c->state = RX_CONN_FREE;
    c->gen = (c->gen + 1) & RX_OP_GEN_MASK;
    if (c->reclaimed) {
        c->reclaimed = false;
        w->nreclaiming--;           /* the slot a held socket waited for */
    }
    w->free_slots[w->nfree++] = c->slot;
    rx_accept_slot_freed(w);
}

static void
queue_free(rx_worker_t *w, rx_conn_t *c)
{
    if (c->free_queued) {
        return;
    }
    c->free_queued = true;
    c->reuse_next = w->free_later;
    w->free_later = c;
}

/* Frees the connections closed during this loop turn. */
void
rx_conn_free_closed(rx_worker_t *w)
{
    rx_conn_t *c;

    while ((c = w->free_later) != NULL) {
        w->free_later = c->reuse_next;
        c->reuse_next = NULL;
        c->free_queued = false;
        if (c->inflight != 0) {
            continue;       /* an operation was started while closing */
        }
        conn_free(w, c);
    }
}

void
rx_conn_close(rx_conn_t *c)
{
    rx_worker_t *w = &rx_worker;

    if (c->state != RX_CONN_ACTIVE) {
        return;
    }
    /* CLOSING first: whatever on_free triggers sees a closing connection
     * and arms nothing on it */
    c->state = RX_CONN_CLOSING;
    rx_conn_quiet_close(c);        /* before the protocol frees its bytes */
    rx_conn_set_idle(c, false);
    if (c->ops && c->ops->on_free) {
        c->ops->on_free(c);
    }
    rx_timer_del(&c->timer);
    rx_post_cancel(&c->sent_posted);
    c->data = NULL;
    if (c->inflight == 0) {
        /* freed at the end of this loop turn, never under the caller's
         * feet: code that closed a connection may still look at it */
        queue_free(w, c);
        return;
    }
    if (c->fd == -1) {
        /* a slot without a socket (an HTTP/2 stream): its operations are
         * on files and end by themselves; the slot waits for them */
        return;
    }
    /* every operation on the fd completes (most with -ECANCELED) before
     * the fd is closed and the slot reused. When the multishot recv is all
     * that is in flight (a connection closed after its response), it is
     * cancelled by its user_data: the kernel finds it in one bucket of
     * its poll table, where a cancel by fd walks every bucket */
    if (c->inflight == 1 && c->reading) {
        rx_ring_cancel(rx_conn_ud(c, RX_OP_RECV), rx_conn_ud(c, RX_OP_CANCEL));
    } else {
        rx_ring_cancel_fd(c->fd, rx_conn_ud(c, RX_OP_CANCEL));
    }
    c->inflight++;
}

/*
 * A reusable connection is one its protocol can drop without losing
 * anything (nginx's "reusable"): it waits for its first byte, it is idle
 * between requests, or it drains a lingering close. They are listed oldest
 * first; when the table is full, the oldest is closed for a new one.
 */
void
rx_conn_set_reusable(rx_conn_t *c, bool reusable)
{
    rx_worker_t *w = &rx_worker;

    if (c->reusable == reusable) {
        return;
    }
    c->reusable = reusable;
    if (!reusable) {
        if (c->reuse_prev) c->reuse_prev->reuse_next = c->reuse_next;
        else w->reuse_head = c->reuse_next;
        if (c->reuse_next) c->reuse_next->reuse_prev = c->reuse_prev;
        else w->reuse_tail = c->reuse_prev;
        c->reuse_prev = c->reuse_next = NULL;
        w->nreusable--;
        return;
    }
    c->reuse_prev = w->reuse_tail;
    c->reuse_next = NULL;
    if (w->reuse_tail) w->reuse_tail->reuse_next = c; else w->reuse_head = c;
    w->reuse_tail = c;
    w->nreusable++;
    if (rx_accept_held() > w->nreclaiming) {
        /* a held socket waits and no slot is on its way (accepting is
         * paused): make one. An idle keepalive connection gives way
         * itself; one that has not had a request (it may be a held socket
         * that just got its slot) only takes an older one's place, or the
         * held sockets would take each other's slots in turn */
        rx_conn_reclaim(w, c->idle ? NULL : c);
    }
}

/* Idle between requests: reusable, and closed at once by a graceful stop
 * (a connection that has not had a request yet is left to finish). */
void
rx_conn_set_idle(rx_conn_t *c, bool idle)
{
    if (c->idle == idle && c->reusable == idle) {
        return;
    }
    c->idle = idle;
    c->idle_since = rx_current_msec;
    rx_conn_set_reusable(c, idle);
    if (idle && rx_worker.quit) {
        rx_worker_close_idle_later(&rx_worker);
    }
}

/*
 * The table is full: close the oldest reusable connection (other than
 * spare) so that its slot can take a held socket. Returns false when none
 * is reusable. One per held socket, so that none is closed for nothing:
 * nreclaiming counts the slots on their way.
 */
bool
rx_conn_reclaim(rx_worker_t *w, rx_conn_t *spare)
{
    rx_conn_t *c = w->reuse_head;

    if (c == spare && c != NULL) {
        c = c->reuse_next;
    }
    if (c == NULL) {
        return false;
    }
    if (rx_log_limit_allow(&w->reuse_limit, 1000)) {
        rx_log_error(RX_LOG_WARN, w->cycle->log, 0, "%lu worker_connections "
                     "are not enough, reusing connections",
                     (unsigned long) w->nconns);
    }
    c->reclaimed = true;
    w->nreclaiming++;
    rx_conn_close(c);
    return true;
}

/*
 * Graceful stop: idle keepalive connections go, without racing a request
 * that is arriving on one (nginx trac #1022: the client sees its reused
 * connection close with no answer). A connection idle for less than quiet
 * ms is likely to be reused at once (its client just read a response):
 * it is left to bring its request, which is answered with Connection:
 * close. One whose socket holds bytes is left to read them, and while
 * completions wait to be dispatched (a recv may have taken a request out
 * of the socket already) nothing is closed. Returns the ms until the next
 * try, 0 when no idle connection is left; force closes them all.
 */
rx_msec_t
rx_conn_close_idle(rx_worker_t *w, rx_msec_t quiet, bool force)
{
    rx_conn_t *c, *next;
    rx_msec_t  wait = 0, age;
    int        pending;

    for (c = w->reuse_head; c; c = next) {
        next = c->reuse_next;
        if (!c->idle) {
            continue;
        }
        age = rx_current_msec - c->idle_since;
        if (!force && age < quiet) {
            wait = wait == 0 ? quiet - age : rx_min(wait, quiet - age);
            continue;
        }
        if (!force && ((ioctl(c->fd, FIONREAD, &pending) == 0 && pending > 0)
                       || rx_ring_cq_ready() > 0)) {
            wait = 1;
            continue;
        }
        rx_conn_close(c);
        if (next && !next->reusable) {
            next = w->reuse_head;    /* closing took it off: start over */
        }
    }
    return wait;
}

/* Bytes (or EOF, or an error) for the connection: through its transport
 * when it has a hook (TLS), else straight to the protocol. */
void
rx_conn_deliver(rx_conn_t *c, const char *data, ssize_t len)
{
    if (c->transport->recv_done) {
        c->transport->recv_done(c, data, len);
    } else {
        c->ops->on_read(c, data, len);
    }
}

/* A PROXY protocol header, while one is awaited, reads ahead of all. */
static void
conn_read(rx_conn_t *c, const char *data, ssize_t len)
{
    if (c->pp_read) {
        rx_conn_proxy_protocol_recv(c, data, len);
    } else {
        rx_conn_deliver(c, data, len);
    }
}

static void conn_rearm_later(rx_worker_t *w, rx_conn_t *c);

static void
handle_recv(rx_worker_t *w, rx_conn_t *c, const rx_cqe_t *cqe, bool more)
{
    char          *data = NULL;
    unsigned short bid = 0;
    bool           has_buf = (cqe->flags & RX_CQE_F_BUFFER) != 0;

    if (has_buf) {
        bid = (unsigned short) (cqe->flags >> RX_CQE_BUFFER_SHIFT);
        data = rx_buf_ring_addr(w->recv_bufs, bid);
    }
    if (!more && cqe->res != -ECANCELED) {
        c->reading = false;   /* a cancelled recv was already forgotten */
    }
    if (c->state == RX_CONN_ACTIVE) {
        if (cqe->res > 0) {
            conn_read(c, data, cqe->res);
        } else if (cqe->res == 0) {
            c->read_eof = true;
            conn_read(c, NULL, 0);
        } else if (cqe->res == -ENOBUFS) {
            /* every buffer was in use this turn; they are back now */
            if (has_buf) {
                rx_buf_ring_recycle(w->recv_bufs, bid);
                has_buf = false;
            }
            if (c->state == RX_CONN_ACTIVE && (c->want_read || c->tls)) {
                rx_conn_arm_recv(c);
            }
        } else if (cqe->res != -ECANCELED) {
            conn_read(c, NULL, cqe->res);
        }
    }
    if (has_buf) {
        rx_buf_ring_recycle(w->recv_bufs, bid);
    }
    /* a single first recv, or a multishot one the kernel ended after data
     * (CQ overflow, a full buffer ring): a reader that still wants bytes
     * gets a standing one at the end of the turn (rx_conn_rearm_sweep) */
    if (!more && cqe->res > 0 && c->state == RX_CONN_ACTIVE && c->want_read
        && !c->reading) {
        conn_rearm_later(w, c);
    }
}

void
rx_conn_handle_cqe(rx_worker_t *w, const rx_cqe_t *cqe)
{
    uint32_t   slot = rx_op_slot(cqe->user_data) & RX_OP_SLOT_MASK;
    bool       more = (cqe->flags & RX_CQE_F_MORE) != 0;
    ssize_t    res;
    rx_conn_t *c;

    if (slot >= w->nconns) {
        return;
    }
    c = &w->conns[slot];
    if (c->gen != rx_op_gen(cqe->user_data) || c->state == RX_CONN_FREE) {
        /* a completion of a previous life of this slot: only its buffer
         * matters */
        if (cqe->flags & RX_CQE_F_BUFFER) {
            rx_buf_ring_recycle(w->recv_bufs,
                (unsigned short) (cqe->flags >> RX_CQE_BUFFER_SHIFT));
        }
        return;
    }
    if (rx_op_kind(cqe->user_data) == RX_OP_SEND_QUIET) {
        rx_conn_quiet_failed(c, cqe->res);   /* counts itself */
        goto done;
    }
    if (c->quiet_send) {
        rx_conn_quiet_settle(c);       /* went whole, if taken (conn_quiet.c) */
    }
    if (!more) {
        if (c->inflight == 0) {
            rx_log_error(RX_LOG_ALERT, &c->log, 0, "completion of kind %d with "
                         "no operation in flight", (int) rx_op_kind(cqe->user_data));
        } else {
            c->inflight--;
        }
    }
    switch (rx_op_kind(cqe->user_data)) {
    case RX_OP_RECV:
        handle_recv(w, c, cqe, more);
        break;
    case RX_OP_SEND:
        if (c->transport->send_done) {
            /* the transport's own send (ciphertext): it decides when the
             * protocol's send is done */
            if (c->state == RX_CONN_ACTIVE) {
                c->transport->send_done(c, cqe->res);
            }
            break;
        }
        c->sending = false;
        res = cqe->res;
        if (res >= 0) {
            res += c->sent_direct;   /* a direct send's first part */
        }
        c->sent_direct = 0;
        if (c->state == RX_CONN_ACTIVE) {
            c->ops->on_sent(c, res);
        }
        break;
    case RX_OP_CONNECT:
    case RX_OP_OPEN:
    case RX_OP_READ:
    case RX_OP_WRITE:
    case RX_OP_SPLICE:
    case RX_OP_POLL:
    case RX_OP_STATX:
    case RX_OP_FS:
        if (c->ops && c->ops->on_op) {
            c->ops->on_op(c, cqe);
        } else if (rx_op_kind(cqe->user_data) == RX_OP_OPEN && cqe->res >= 0) {
            close(cqe->res);          /* nobody wants this file any more */
        }
        break;
    default:
        break;
    }
done:
    if (c->state == RX_CONN_CLOSING && c->inflight == 0) {
        queue_free(w, c);
    }
}

/*
 * A plain connection's first receive is a single one: a request that
 * comes whole in it and closes the connection (Connection: close) leaves
 * nothing armed, so the close needs no cancel; a multishot recv would
 * have tried the socket again, armed its poll, and been cancelled (an
 * SQE and two completions). Every later receive is multishot. TLS and
 * the epoll backend keep the standing receive from the start.
 */
void
rx_conn_arm_recv(rx_conn_t *c)
{
    bool multishot = c->recv_armed || c->transport != &rx_plain_transport;

    if (c->reading || c->read_eof) {
        return;
    }
    rx_ring_recv_select(c->fd, RX_RECV_GROUP, multishot,
                        rx_conn_ud(c, RX_OP_RECV));
    c->recv_armed = true;
    c->reading = true;
    c->inflight++;
}

/*
 * A reader whose receive ended after data gets a standing one at the end
 * of the loop turn, not at once: a response made in the same turn that
 * closes the connection (a direct send, its on_sent posted) comes first,
 * and then none is armed. The SQE leaves with the loop's next submission
 * either way, so waiting costs no latency.
 */
static void
conn_rearm_later(rx_worker_t *w, rx_conn_t *c)
{
    if (c->rearm_queued) {
        return;
    }
    if (w->nrearm == RX_CONN_REARM_MAX) {
        rx_conn_arm_recv(c);            /* a crowded turn: at once */
        return;
    }
    c->rearm_queued = true;
    w->rearm[w->nrearm++] = c->slot;
}

void
rx_conn_rearm_sweep(rx_worker_t *w)
{
    rx_conn_t *c;
    unsigned   i;

    for (i = 0; i < w->nrearm; i++) {
        c = &w->conns[w->rearm[i]];
        c->rearm_queued = false;
        if (c->state == RX_CONN_ACTIVE && c->want_read) {
            rx_conn_arm_recv(c);
        }
    }
    w->nrearm = 0;
}

/* The plain TCP transport. */

static void
plain_start_read(rx_conn_t *c)
{
    c->want_read = true;
    rx_conn_arm_recv(c);
}

static void
plain_stop_read(rx_conn_t *c)
{
    c->want_read = false;
    if (!c->reading) {
        return;
    }
    rx_ring_cancel(rx_conn_ud(c, RX_OP_RECV), rx_conn_ud(c, RX_OP_CANCEL));
    c->inflight++;
    c->reading = false;   /* the final recv CQE arrives with -ECANCELED */
}

void
rx_conn_send_iov(rx_conn_t *c, const struct iovec *iov, int niov)
{
    /* no msghdr: the connection would have to hold one (56 bytes in
     * every slot) for the length of the send; the iovecs are the
     * protocol's and live until on_sent anyway */
    if (niov == 1) {
        rx_ring_send(c->fd, iov[0].iov_base, (unsigned) iov[0].iov_len,
                     MSG_NOSIGNAL, rx_conn_ud(c, RX_OP_SEND));
    } else {
        rx_ring_writev(c->fd, iov, (unsigned) niov, rx_conn_ud(c, RX_OP_SEND));
    }
    c->inflight++;
}

static void
plain_send(rx_conn_t *c, const struct iovec *iov, int niov)
{
    rx_conn_send_iov(c, iov, niov);
    c->sending = true;
}

/* A direct send took every byte: the protocol hears it as from the ring,
 * at the end of the turn (a close cancels it). */
static void
sent_direct_report(rx_posted_t *p)
{
    rx_conn_t *c = p->data;
    ssize_t    res = c->sent_direct;

    c->sent_direct = 0;
    c->sending = false;
    if (c->state == RX_CONN_ACTIVE) {
        c->ops->on_sent(c, res);
    }
}

size_t
rx_conn_send_inline(rx_conn_t *c, const struct iovec *iov, int niov,
    int flags)
{
    struct msghdr msg;
    ssize_t       n;

    if (c->transport != &rx_plain_transport || c->sending) {
        return 0;
    }
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = (struct iovec *) iov;
    msg.msg_iovlen = (size_t) niov;
    n = sendmsg(c->fd, &msg, flags | MSG_DONTWAIT | MSG_NOSIGNAL);
    return n > 0 ? (size_t) n : 0;
}

/* A send made at once on the worker's thread (sendmsg with flags): true
 * when the socket took every byte, its on_sent posted for the end of the
 * turn. Else what it took (maybe nothing) is in c->sent_direct, added to
 * the count of the ring's send that follows for the rest, and *iov,
 * *niov are advanced past it. The PROXY protocol reader and the epoll
 * backend keep the transport's send. */
static bool
send_direct(rx_conn_t *c, struct iovec **iovp, int *niovp, int flags)
{
    struct iovec *iov = *iovp;
    size_t        total = 0;
    ssize_t       n;
    int           i;

    for (i = 0; i < *niovp; i++) {
        total += iov[i].iov_len;
    }
    if (c->pp_read || rx_ring_epoll || total == 0 || total > INT32_MAX) {
        return false;
    }
    n = (ssize_t) rx_conn_send_inline(c, iov, *niovp, flags);
    if (n == (ssize_t) total) {
        c->sent_direct = (uint32_t) n;
        c->sending = true;
        c->sent_posted.handler = sent_direct_report;
        c->sent_posted.data = c;
        rx_post(&c->sent_posted);
        return true;
    }
    if (n > 0) {
        c->sent_direct = (uint32_t) n;
        while (n >= (ssize_t) iov->iov_len) {     /* n < total: stays in */
            n -= (ssize_t) iov->iov_len;
            iov++;
            (*niovp)--;
        }
        iov->iov_base = (char *) iov->iov_base + n;
        iov->iov_len -= (size_t) n;
        *iovp = iov;
    }
    return false;
}

/*
 * The last send of a connection that closes once it is done: sendmsg
 * with MSG_MORE holds the last bytes in the socket, and shutdown(SHUT_WR)
 * at once sets the FIN on that queued segment (tcp_send_fin), so data and
 * FIN leave together now. The close linked to a ring send did the same a
 * loop turn later (task work at the next wait, DEFER_TASKRUN), which cost
 * latency. What the socket does not take (a full buffer, EAGAIN) goes
 * through the ring's send without MSG_MORE, which pushes what was held;
 * its count includes this part, and the close is the usual one. Any other
 * error is left to that send to find and report. TLS keeps the
 * transport's send.
 */
void
rx_conn_send_last(rx_conn_t *c, struct iovec *iov, int niov)
{
    if (send_direct(c, &iov, &niov, MSG_MORE)) {
        (void) shutdown(c->fd, SHUT_WR);
        return;
    }
    c->transport->send(c, iov, niov);
}

/*
 * The last send of a response on a connection that stays open. Under a
 * light load (this loop turn began with RX_CONN_LIGHT_TURN completions or
 * fewer) it is made at once: a ring send of a small response completes
 * inside the next io_uring_enter, which then returns for that completion
 * alone and the worker enters again to sleep; one sendmsg instead spares
 * that enter (FastCGI with 4 clients: 2.28 enters per request, 1.77 with
 * it). Under load the ring's send is kept: one enter submits the turn's
 * many sends, where a sendmsg each would add a syscall each.
 */
void
rx_conn_send_end(rx_conn_t *c, struct iovec *iov, int niov)
{
    if (rx_ring_turn_cqes <= RX_CONN_LIGHT_TURN
        && send_direct(c, &iov, &niov, 0)) {
        return;
    }
    c->transport->send(c, iov, niov);
}

static void
plain_shutdown_write(rx_conn_t *c)
{
    rx_ring_shutdown(c->fd, SHUT_WR, rx_conn_ud(c, RX_OP_CLOSE));
    c->inflight++;
}

const rx_transport_t rx_plain_transport = {
    "tcp", plain_start_read, plain_stop_read, plain_send, plain_shutdown_write,
    NULL, NULL
};
