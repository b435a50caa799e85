/*
 * conn_quiet.c: a connection's quiet send (event/ring_quiet.c), settled
 * by the connection itself, since its success posts no completion.
 *
 * The send goes out inside the loop's next io_uring_enter, the one that
 * then sleeps: a request to an upstream (FastCGI, proxy) costs no syscall
 * of its own (a sendmsg on the worker's thread did) and no completion.
 * Only in a light turn (RX_CONN_LIGHT_TURN completions or fewer, as for
 * conn.c's direct sends): that enter comes at once. Under load it would
 * hold every request of a long turn back until the turn's end, and the
 * upstream, idle meanwhile, answers them in a burst the worker then waits
 * for (proxy c=50: req/s 0.86x, CPU per request 0.94x); there a sendmsg
 * each, made at once, keeps both sides busy. Its protocol hears on_sent
 * exactly once, as from any send:
 *
 * - a failure came back (a short send, a full socket, an error): its
 *   completion carries the bytes that went or -errno (RX_OP_SEND_QUIET),
 *   and the connection's sends go through the ring's waiting send from
 *   then on, so a full socket cannot make the protocol try again and
 *   again;
 * - else, once the kernel has taken the entry (its ticket), the send is
 *   done: at the first completion of the connection dispatched after
 *   that (the kernel posts a quiet send's failure as it takes it, before
 *   the answer to what it sent can come), or after the loop's
 *   completions (rx_conn_quiet_sweep).
 *
 * A connection closed with its quiet send not yet taken turns the entry
 * into a no-op: the protocol's bytes may be freed with it. A failure's
 * completion that comes after its send was settled (the connection
 * closed) is dropped.
 */
#include "event.h"
#include "ring.h"

bool
rx_conn_send_quiet(rx_conn_t *c, const struct msghdr *msg)
{
    rx_worker_t *w = &rx_worker;
    size_t       total = 0, i;

    if (rx_ring_turn_cqes > RX_CONN_LIGHT_TURN
        || c->transport != &rx_plain_transport || c->sending || c->pp_read
        || c->quiet_off || w->nquiet == RX_CONN_QUIET_MAX) {
        return false;
    }
    for (i = 0; i < msg->msg_iovlen; i++) {
        total += msg->msg_iov[i].iov_len;
    }
    if (total == 0 || total > INT32_MAX
        || !rx_ring_sendmsg_quiet(c->fd, msg,
                                  rx_conn_ud(c, RX_OP_SEND_QUIET),
                                  &c->quiet_ticket)) {
        return false;
    }
    c->quiet_send = true;
    c->sending = true;
    c->sent_direct = (uint32_t) total;
    c->inflight++;
    w->quiet[w->nquiet++] = c->slot;
    return true;
}

/* The send is over for the connection. */
static void
clear(rx_conn_t *c)
{
    c->quiet_send = false;
    c->sending = false;
    c->sent_direct = 0;
    c->inflight--;
}

/* The send is over: its protocol hears res. */
static void
settle(rx_conn_t *c, ssize_t res)
{
    clear(c);
    if (c->state == RX_CONN_ACTIVE) {
        c->ops->on_sent(c, res);
    }
}

void
rx_conn_quiet_settle(rx_conn_t *c)
{
    if (c->quiet_send && rx_ring_quiet_taken(c->quiet_ticket)) {
        settle(c, (ssize_t) c->sent_direct);
    }
}

void
rx_conn_quiet_failed(rx_conn_t *c, ssize_t res)
{
    if (!c->quiet_send) {
        return;                 /* settled before its failure came */
    }
    c->quiet_off = true;
    settle(c, res == -EAGAIN ? 0 : res);
}

void
rx_conn_quiet_close(rx_conn_t *c)
{
    if (!c->quiet_send) {
        return;
    }
    (void) rx_ring_quiet_drop(c->quiet_ticket);
    clear(c);
}

void
rx_conn_quiet_sweep(rx_worker_t *w)
{
    uint32_t   taken[RX_CONN_QUIET_MAX];
    unsigned   i, n = w->nquiet, ntaken = 0;
    rx_conn_t *c;

    if (n == 0) {
        return;                /* the loop's every turn asks */
    }
    /* every completion posted so far has been dispatched: what the kernel
     * has taken by now without a failure went whole. Those prepared
     * since stay listed, first: the protocols called back below may
     * start new ones, which go after them (and are not settled here, even
     * if a full queue hands them to the kernel meanwhile) */
    rx_ring_quiet_mark();
    w->nquiet = 0;
    for (i = 0; i < n; i++) {
        c = &w->conns[w->quiet[i]];
        if (!c->quiet_send) {
            continue;          /* settled already, or listed twice */
        }
        if (rx_ring_quiet_taken(c->quiet_ticket)) {
            taken[ntaken++] = w->quiet[i];
        } else {
            w->quiet[w->nquiet++] = w->quiet[i];
        }
    }
    for (i = 0; i < ntaken; i++) {
        c = &w->conns[taken[i]];
        if (c->quiet_send && rx_ring_quiet_taken(c->quiet_ticket)) {
            settle(c, (ssize_t) c->sent_direct);
        }
    }
}
