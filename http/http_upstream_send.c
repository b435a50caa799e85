/*
 * http_upstream_send.c: the request on its way to the peer. It goes from
 * the chain the protocol built, from offset u->sent (the chain is kept: a
 * retry sends it again); a body spilled to a file is read back in chunks;
 * while a unix or loopback peer's size is learned, a connection's first
 * request goes in two sends (http_upstream_learn.c); a body streamed as
 * the client sends it (*_request_buffering off) follows the request's
 * head through the tunnel's byte queue.
 *
 * On a plain (not TLS) connection a request whole in memory goes out as a
 * quiet send in a light loop turn (event/conn_quiet.c): inside the
 * io_uring_enter with which the worker then waits for the answer, no
 * syscall and no completion of its own. Otherwise it is first offered to
 * the socket on the worker's own thread, as nginx's writev does: it takes
 * it whole nearly always (a request is smaller than the socket's buffer),
 * and the ring's send, its completion and the loop turn that completion
 * costs (a FastCGI request waited a turn for it before its answer could be
 * waited for) are saved. What the socket does not take at once, and any
 * error, goes to the ring's send as before, which reports it; so does the
 * rest of a quiet send that came back short.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "http_temp_file.h"

/* A streamed body: bytes go to the upstream as the client sends them. */
void
rx_http_upstream_stream_kick(rx_http_upstream_t *u)
{
    rx_conn_t *c;

    if (u->uc == NULL || !u->head_sent || u->request_sent) {
        return;
    }
    c = u->uc->c;
    if (rx_http_upstream_out_send(u)) {
        rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_SENDING);
        rx_timer_add(&c->timer, u->conf->send_timeout);
        return;
    }
    if (u->body_complete && !c->sending) {
        u->request_sent = 1;
        rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_READING_HEADER);
        rx_timer_add(&c->timer, u->conf->read_timeout);
        rx_http_upstream_learn_sent(u->uc);
    }
}

/* The part of a spilled body at file offset off: RX_DONE when a chunk read
 * earlier holds it (u->iov[0] is set), RX_OK when a read of it runs (the
 * send goes on when it completes), RX_ERROR (no memory). */
static rx_int_t
from_file(rx_http_upstream_t *u, const rx_buf_t *b, int64_t off)
{
    rx_conn_t *c = u->uc->c;

    if (u->fchunk && off >= u->fchunk_off
        && off < u->fchunk_off + (int64_t) u->fchunk_len) {
        u->iov[0].iov_base = u->fchunk + (off - u->fchunk_off);
        u->iov[0].iov_len = (size_t) (u->fchunk_off
                                      + (int64_t) u->fchunk_len - off);
        return RX_DONE;
    }
    if (!u->freading) {
        size_t want = (size_t) rx_min(b->file_last - off,
                                      (int64_t) RX_HTTP_TEMP_CHUNK);

        if (u->fchunk == NULL
            && (u->fchunk = rx_palloc(u->r->pool, RX_HTTP_TEMP_CHUNK))
               == NULL) {
            return RX_ERROR;
        }
        u->freading = 1;
        u->fchunk_off = off;
        u->fchunk_len = 0;
        rx_ring_read(b->fd, u->fchunk, (unsigned) want, (uint64_t) off,
                     rx_conn_ud(c, RX_OP_READ));
        c->inflight++;
    }
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_SENDING);
    rx_timer_add(&c->timer, u->conf->send_timeout);
    return RX_OK;
}

/* The n iovecs offered to a plain connection's socket at once: the bytes
 * it took (0: none, the ring's send goes). */
static size_t
send_inline(rx_http_upstream_t *u, rx_conn_t *c, int n)
{
    size_t k = rx_conn_send_inline(c, u->iov, n, 0);

    u->state->bytes_sent += (int64_t) k;
    u->sent += (int64_t) k;
    return k;
}

/* The rest of the request, whole in the n iovecs, sent quietly: inside
 * the loop's next io_uring_enter, with no completion when the socket takes
 * it all (event/conn_quiet.c); on_sent comes as for the ring's send. */
static bool
send_quiet(rx_http_upstream_t *u, rx_conn_t *c, int n)
{
    memset(&u->quiet_msg, 0, sizeof(u->quiet_msg));
    u->quiet_msg.msg_iov = u->iov;
    u->quiet_msg.msg_iovlen = (size_t) n;
    if (!rx_conn_send_quiet(c, &u->quiet_msg)) {
        return false;
    }
    /* it cannot wait for room: the kernel sends it (or fails) as it takes
     * it, in the enter that then waits for the answer, so the answer's
     * timeout starts now */
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_SENDING);
    rx_timer_add(&c->timer, u->conf->read_timeout);
    u->quiet_sent = 1;
    return true;
}

/* The whole request went: its answer is waited for. */
static void
all_sent(rx_http_upstream_t *u, rx_conn_t *c, bool after_quiet)
{
    u->request_sent = 1;
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_READING_HEADER);
    if (!after_quiet) {
        /* (a quiet send's answer timeout runs since it was made: it may
         * be settled only at a later wake-up, the answer's) */
        rx_timer_add(&c->timer, u->conf->read_timeout);
    }
    rx_http_upstream_learn_sent(u->uc);
}

/* Sends what is left of the request, from offset u->sent (the chain is
 * not consumed: a retry sends it again). */
rx_int_t
rx_http_upstream_send(rx_http_upstream_t *u)
{
    rx_conn_t  *c = u->uc->c;
    rx_chain_t *cl;
    int64_t     skip, split;
    int         n;
    rx_int_t    rc;
    bool        after_quiet = u->quiet_sent;

    u->quiet_sent = 0;
again:
    skip = u->sent;
    n = 0;
    if (!c->want_read) {
        /* an early answer or close is seen while the request goes out
         * (want_read, not reading: TLS reads for its handshake alone) */
        c->transport->start_read(c);
    }
    for (cl = u->request_bufs; cl && n < (int) rx_nelems(u->iov); cl = cl->next) {
        rx_buf_t *b = cl->buf;
        size_t    size = rx_buf_size(b);

        if ((int64_t) size <= skip) {
            skip -= (int64_t) size;
            continue;
        }
        if (b->in_file && !b->memory) {
            /* a spilled body: sent from memory chunks read from its file */
            if (n > 0) {
                break;                 /* what comes before goes first */
            }
            rc = from_file(u, b, b->file_pos + skip);
            if (rc != RX_DONE) {
                return rc;
            }
            n = 1;
            break;
        }
        u->iov[n].iov_base = b->pos + skip;
        u->iov[n].iov_len = size - (size_t) skip;
        skip = 0;
        n++;
    }
    if (n == 0) {
        if (u->streaming) {
            u->head_sent = 1;
            rx_http_upstream_stream_kick(u);
            return RX_OK;
        }
        all_sent(u, c, after_quiet);
        return RX_OK;
    }
    split = rx_http_upstream_learn_split(u);
    if (split > u->sent) {
        /* the request's first part alone (http_upstream_learn.c) */
        int64_t room = split - u->sent;
        int     i;

        for (i = 0; i < n && room > 0; i++) {
            if ((int64_t) u->iov[i].iov_len > room) {
                u->iov[i].iov_len = (size_t) room;
            }
            room -= (int64_t) u->iov[i].iov_len;
        }
        n = i;
    } else if (cl == NULL && !u->streaming && send_quiet(u, c, n)) {
        return RX_OK;
    } else if (send_inline(u, c, n) > 0) {
        goto again;
    }
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_SENDING);
    c->transport->send(c, u->iov, n);
    rx_timer_add(&c->timer, u->conf->send_timeout);
    return RX_OK;
}
