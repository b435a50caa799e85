/*
 * http_v2.c: an HTTP/2 connection. ringx's own session (http_v2_session.c)
 * does the frames, stream states, flow control and the floods' bounds; it
 * is fed the bytes the connection's transport (plain, TLS, kTLS) receives
 * and drained into one send at a time on that transport, so the loop
 * stays ringx's. Header blocks are decoded and checked in
 * http_v2_fields.c, each stream's request runs on a connection of its own
 * (http_v2_stream.c).
 */
#include "http_v2_int.h"
#include "http_stats.h"
#include "clock.h"

#define OUT_BATCH        (128 * 1024)  /* bytes of frames per send */
/* the send buffer: a batch and the frame that crosses its end */
#define OUT_SIZE         ((size_t) OUT_BATCH + 16384 + 9)
/* the plaintext of a full TLS record (RFC 8446 5.1): a batch that more
 * frames follow is sent in whole records, its tail goes with the next */
#define TLS_RECORD       16384
/* a longer tail is a record worth its own (and is not moved to the front) */
#define TAIL_HELD_MAX    4096

static void on_read(rx_conn_t *c, const char *data, ssize_t len);
static void on_sent(rx_conn_t *c, ssize_t res);
static void on_free(rx_conn_t *c);
static void timer_handler(rx_timer_t *t);
static void send_posted(rx_posted_t *p);

static const rx_conn_ops_t v2_conn_ops = { on_read, on_sent, on_free, NULL };

/* Ends the connection with GOAWAY(code), sent as the last frame. */
static void
go_away(rx_http_v2_conn_t *h2, uint32_t code, const char *why)
{
    if (why) {
        rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
                                 "client %s, closing HTTP/2 connection", why);
    }
    if (!h2->terminated) {
        h2->terminated = true;           /* the first reason is the one sent */
        rx_h2_session_terminate(h2->session, code);
    }
    rx_http_v2_schedule_send(h2);
}

/* keepalive_requests (and keepalive_timeout 0) end an HTTP/2 connection
 * as nginx 1.19.7 does: the stream that reaches the count is the last,
 * GOAWAY NO_ERROR names it, and the connection closes once the streams
 * let in have finished (the session wants to read no more). */
static void
last_request(rx_http_v2_conn_t *h2, int32_t id)
{
    rx_http_core_loc_conf_t *clcf =
        h2->hc->default_server->ctx->loc_conf[rx_http_core_module.ctx_index];

    if (++h2->requests < (rx_uint_t) clcf->keepalive_requests
        && clcf->keepalive_timeout > 0) {
        return;
    }
    h2->last_id = id;
    if (!h2->terminated) {
        rx_h2_submit_goaway(h2->session, id, RX_H2_NO_ERROR);
    }
}

/* A client's HEADERS opens stream id: streams beyond the limit are
 * refused, also before the client saw our SETTINGS; so are those after
 * the last one keepalive_requests let in (they crossed our GOAWAY: the
 * client may retry them elsewhere). */
static uint32_t
begin_headers(rx_h2_session_t *s, int32_t id, void *ud)
{
    rx_http_v2_conn_t   *h2 = ud;
    rx_http_v2_stream_t *st;

    st = h2->nstreams < h2->conf->max_concurrent_streams && h2->last_id == 0
         ? rx_http_v2_stream_create(h2, id) : NULL;
    if (st == NULL) {
        return RX_H2_REFUSED_STREAM;
    }
    rx_h2_session_set_stream_user_data(s, id, st);
    last_request(h2, id);
    return 0;
}

/* A header block: a request's (its fields, then the request starts), a
 * trailer section's (decoded, dropped: it ends the body) or a refused
 * stream's (decoded only, to keep the client's HPACK table in step). */
static void
header_block(rx_h2_session_t *s, int32_t id, void *sud, const uint8_t *block,
    size_t len, unsigned flags, void *ud)
{
    rx_http_v2_conn_t   *h2 = ud;
    rx_http_v2_stream_t *st = sud;
    bool                 end = (flags & RX_H2_BLOCK_END_STREAM) != 0;

    if (flags & (RX_H2_BLOCK_REFUSED | RX_H2_BLOCK_TRAILERS) || st == NULL) {
        if (rx_http_v2_fields(h2, NULL, block, len) == RX_ERROR) {
            return;
        }
        st = rx_h2_session_get_stream_user_data(s, id);
        if (st && end && (flags & RX_H2_BLOCK_TRAILERS)
            && !(flags & RX_H2_BLOCK_REFUSED)) {
            rx_http_v2_stream_end(st);
        }
        return;
    }
    if (rx_http_v2_fields(h2, st, block, len) == RX_OK) {
        rx_http_v2_stream_start(st, end);   /* st may be gone after it */
    }
}

/* DATA of a request's body: checked against its content-length, then to
 * its connection; nobody reads it any more: the windows open at once. */
static void
data(rx_h2_session_t *s, int32_t id, void *sud, const uint8_t *p, size_t len,
    bool end_stream, void *ud)
{
    rx_http_v2_stream_t *st = sud;

    (void) ud;
    if (st == NULL || st->vc == NULL) {
        if (len) {
            rx_h2_session_consume(s, id, len);
        }
        if (st && end_stream) {
            st->req_ended = true;
        }
        return;
    }
    if (!rx_http_v2_fields_data(st, len, end_stream)) {
        return;                          /* reset: st may be gone */
    }
    if (len) {
        rx_http_v2_stream_data(st, p, len);
    }
    if (end_stream) {
        /* the request may have ended with the data: looked up again */
        st = rx_h2_session_get_stream_user_data(s, id);
        if (st) {
            rx_http_v2_stream_end(st);
        }
    }
}

static void
stream_close(rx_h2_session_t *s, int32_t id, void *sud, uint32_t code,
    void *ud)
{
    rx_http_v2_stream_t *st = sud;

    (void) ud;
    if (st) {
        rx_h2_session_set_stream_user_data(s, id, NULL);
        rx_http_v2_stream_closed(st, code);
    }
}

static void
rst_recv(rx_h2_session_t *s, int32_t id, void *sud, uint32_t code, void *ud)
{
    rx_http_v2_stream_t *st = sud;

    (void) s; (void) id; (void) code; (void) ud;
    if (st) {
        st->client_reset = true;
    }
}

/* A frame left. A response's END_STREAM: RFC 9113 8.1, a request body
 * still coming is not wanted, RST_STREAM NO_ERROR tells the client to
 * stop sending it (after the END_STREAM, so no byte of the response is
 * lost), as nginx. */
static void
frame_sent(rx_h2_session_t *s, uint8_t type, uint8_t flags, int32_t id,
    void *ud)
{
    (void) ud;
    if ((type == RX_H2_DATA || type == RX_H2_HEADERS)
        && (flags & RX_H2_F_END_STREAM)
        && rx_h2_session_remote_closed(s, id) == 0) {
        rx_h2_submit_rst_stream(s, id, RX_H2_NO_ERROR);
    }
}

/* The session found an error of the client's: logged at info, in nginx's
 * words where nginx has some. */
static void
session_error(rx_h2_session_t *s, int32_t id, uint32_t code, const char *why,
    void *ud)
{
    rx_http_v2_conn_t *h2 = ud;

    (void) s;
    if (id != 0) {
        rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
            "client sent invalid HTTP/2 frame on stream %d: %s, reset with %s",
            (int) id, why, rx_h2_error_name(code));
        return;
    }
    if (h2->terminated) {
        return;
    }
    h2->terminated = true;
    if (code == RX_H2_ENHANCE_YOUR_CALM
        || strncmp(why, "sent HEADERS frame with incorrect identifier", 44) == 0) {
        rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
            "client %s, closing HTTP/2 connection", why);
        return;
    }
    rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
        "client sent invalid HTTP/2, closing connection with GOAWAY %s: %s",
        rx_h2_error_name(code), strncmp(why, "sent ", 5) == 0 ? why + 5 : why);
}

static const rx_h2_callbacks_t callbacks = {
    begin_headers, header_block, data, stream_close, rst_recv, NULL, NULL,
    rx_http_v2_stream_source, frame_sent, session_error
};

static rx_h2_session_t *
create_session(rx_http_v2_conn_t *h2)
{
    rx_http_core_srv_conf_t *cscf = h2->hc->default_server;
    rx_h2_config_t           conf;

    memset(&conf, 0, sizeof(conf));
    conf.max_concurrent_streams = (uint32_t) h2->conf->max_concurrent_streams;
    conf.initial_window_size = (uint32_t) rx_min(h2->conf->preread_size,
                                                 (size_t) RX_H2_MAX_WINDOW);
    conf.max_header_list_size = (uint32_t) rx_min(
        cscf->large_client_header_buffers_size
        * (size_t) cscf->large_client_header_buffers_num, (size_t) 0x7fffffff);
    /* the connection's window: every stream's, as nginx opens it */
    conf.conn_window = (uint32_t) rx_min((size_t) RX_H2_MAX_WINDOW,
        h2->conf->preread_size * h2->conf->max_concurrent_streams + 65535);
    /* a block whose fields are beyond large_client_header_buffers is
     * still taken whole, so that its stream is refused alone (and the
     * client's table stays in step): what HPACK encodes is at most a few
     * bytes a field more than the fields; beyond twice that and 64 KiB,
     * the connection ends (ENHANCE_YOUR_CALM) */
    conf.max_header_block = (uint32_t) rx_min(2 * (size_t) conf.max_header_list_size
                                              + 65536, (size_t) 0x7fffffff);
    /* new streams per read: twice the streams allowed at once, as nginx
     * (a rapid reset opens many in one read); client resets per
     * connection bounded the same way (CVE-2023-44487) */
    conf.max_new_streams = 2 * conf.max_concurrent_streams;
    conf.max_resets = 2 * conf.max_concurrent_streams + 100;
    return rx_h2_session_new(&callbacks, &conf, &rx_http_v2_session_mem, h2);
}

void
rx_http_v2_init(rx_http_connection_t *hc, const char *data, size_t len)
{
    rx_conn_t          *c = hc->conn;
    rx_http_v2_conn_t  *h2;

    h2 = rx_pcalloc(c->pool, sizeof(*h2));
    if (h2 == NULL) {
        rx_conn_close(c);
        return;
    }
    h2->conn = c;
    h2->hc = hc;
    h2->conf = hc->default_server->ctx->srv_conf[rx_http_v2_module.ctx_index];
    h2->send_post.handler = send_posted;
    h2->send_post.data = h2;
    h2->session = create_session(h2);
    if (h2->session == NULL) {
        rx_log_error(RX_LOG_ALERT, &c->log, 0, "HTTP/2 session failed");
        rx_conn_close(c);
        return;
    }
    /* HTTP/1's handlers no longer see this connection */
    rx_conn_set_reusable(c, false);
    c->ops = &v2_conn_ops;
    c->data = h2;
    c->timer.handler = timer_handler;
    c->timer.data = h2;
    rx_timer_add(&c->timer, hc->default_server->client_header_timeout);
    if (len) {
        on_read(c, data, (ssize_t) len);
    }
    rx_http_v2_schedule_send(h2);
}

static void
v2_close(rx_http_v2_conn_t *h2)
{
    rx_conn_close(h2->conn);
}

/* Done (GOAWAY sent, no stream left): as nginx, the connection lingers
 * (lingering_close, lingering_time, lingering_timeout) instead of closing
 * at once, so frames the client still sends (a WINDOW_UPDATE, a request
 * that crossed the GOAWAY) do not make the kernel answer with a reset
 * that destroys the responses the client has not read yet. */
static void
linger(rx_http_v2_conn_t *h2)
{
    rx_conn_t               *c = h2->conn;
    rx_http_core_loc_conf_t *clcf =
        h2->hc->default_server->ctx->loc_conf[rx_http_core_module.ctx_index];

    if (h2->lingering) {
        return;
    }
    if (clcf->lingering_close == RX_HTTP_LINGERING_OFF || rx_worker.quit) {
        v2_close(h2);
        return;
    }
    h2->lingering = true;
    h2->linger_deadline = rx_current_msec + clcf->lingering_time;
    c->transport->shutdown_write(c);
    rx_timer_add(&c->timer, clcf->lingering_timeout);
}

/* A lingering connection's bytes are dropped until the client closes,
 * lingering_timeout passes without any, or lingering_time is over. */
static void
linger_read(rx_http_v2_conn_t *h2, ssize_t len)
{
    rx_http_core_loc_conf_t *clcf =
        h2->hc->default_server->ctx->loc_conf[rx_http_core_module.ctx_index];

    if (len <= 0 || rx_current_msec >= h2->linger_deadline) {
        v2_close(h2);
        return;
    }
    rx_timer_add(&h2->conn->timer, clcf->lingering_timeout);
}

static void
on_read(rx_conn_t *c, const char *data, ssize_t len)
{
    rx_http_v2_conn_t *h2 = c->data;
    ssize_t            n;

    if (h2->lingering) {
        linger_read(h2, len);
        return;
    }
    if (len <= 0) {
        if (len < 0) {
            rx_http_log_error_action(h2->hc, RX_LOG_INFO, (int) -len, NULL,
                                     "recv() failed");
        }
        v2_close(h2);
        return;
    }
    n = rx_h2_session_recv(h2->session, (const uint8_t *) data,
                           (size_t) len);
    if (n < 0) {
        rx_log_error(RX_LOG_ALERT, &c->log, 0, "HTTP/2 session out of memory");
        v2_close(h2);
        return;
    }
    rx_http_v2_schedule_send(h2);
}

void
rx_http_v2_schedule_send(rx_http_v2_conn_t *h2)
{
    if (!h2->closing) {
        rx_post(&h2->send_post);
    }
}

/* Gathers up to OUT_BATCH bytes of frames into h2->out (a frame that
 * crosses it fits: OUT_SIZE), behind the tail the last send left; -1
 * without memory. A batch that filled up (more frames follow) is sent in
 * whole TLS records and its tail waits for the next: cut at the batch's
 * end, each send of a long response ended in a record of a few bytes (a
 * sendto, a record's overhead and an encryption of its own). A batch the
 * session had no more for goes whole: a tail is never held back alone. */
static ssize_t
gather(rx_http_v2_conn_t *h2)
{
    size_t n, tail = h2->out_len - h2->out_sent;

    if (h2->out == NULL) {
        h2->out = rx_http_v2_out_alloc(OUT_SIZE);
        if (h2->out == NULL) {
            return -1;
        }
        h2->out_size = OUT_SIZE;
    }
    if (tail && h2->out_sent) {
        memmove(h2->out, h2->out + h2->out_sent, tail);
    }
    h2->out_len = tail;
    h2->out_sent = 0;
    do {
        n = rx_h2_session_send(h2->session, (uint8_t *) h2->out + h2->out_len,
                               h2->out_size - h2->out_len);
        h2->out_len += n;
    } while (n && h2->out_len < OUT_BATCH);
    h2->out_end = h2->out_len;
    if (n && h2->out_len > TLS_RECORD
        && h2->out_len % TLS_RECORD < TAIL_HELD_MAX) {
        h2->out_end -= h2->out_len % TLS_RECORD;
    }
    return (ssize_t) h2->out_len;
}

/* No stream: the connection waits keepalive_timeout for the next, may be
 * closed for a new connection when the table is full, and goes at once in
 * a graceful stop (GOAWAY NO_ERROR), as an idle HTTP/1.1 connection. */
static void
idle(rx_http_v2_conn_t *h2)
{
    rx_conn_t               *c = h2->conn;
    rx_http_core_loc_conf_t *clcf =
        h2->hc->default_server->ctx->loc_conf[rx_http_core_module.ctx_index];

    if (rx_worker.quit) {
        if (!h2->terminated) {
            go_away(h2, RX_H2_NO_ERROR, NULL);
        }
        return;
    }
    /* everything went: an idle connection keeps no send buffer (it goes
     * to the worker's few spares: the next connection that sends takes it) */
    rx_http_v2_out_free(h2->out, h2->out_size);
    h2->out = NULL;
    h2->out_size = h2->out_len = h2->out_end = h2->out_sent = 0;
    /* before its first stream a connection has client_header_timeout,
     * as nginx (keepalive_timeout 0 must not end it before any request) */
    rx_timer_add(&c->timer, h2->requests ? clcf->keepalive_timeout
                            : h2->hc->default_server->client_header_timeout);
    rx_conn_set_idle(c, true);
}

static void
send_out(rx_http_v2_conn_t *h2)
{
    rx_conn_t *c = h2->conn;
    ssize_t    n;

    if (c->sending || c->state != RX_CONN_ACTIVE) {
        return;
    }
    if (h2->out_sent == h2->out_end) {
        n = gather(h2);
        if (n < 0) {
            rx_log_error(RX_LOG_ALERT, &c->log, 0, "HTTP/2 send buffer: "
                         "out of memory");
            v2_close(h2);
            return;
        }
        if (n == 0) {
            if (!rx_h2_session_want_read(h2->session)
                && !rx_h2_session_want_write(h2->session)) {
                linger(h2);                /* GOAWAY sent, or both sides done */
                return;
            }
            if (h2->nstreams == 0) {
                idle(h2);
            }
            return;
        }
    }
    h2->iov.iov_base = h2->out + h2->out_sent;
    h2->iov.iov_len = h2->out_end - h2->out_sent;
    c->sending = true;
    c->transport->send(c, &h2->iov, 1);
}

static void
send_posted(rx_posted_t *p)
{
    send_out(p->data);
}

static void
on_sent(rx_conn_t *c, ssize_t res)
{
    rx_http_v2_conn_t *h2 = c->data;

    c->sending = false;
    if (res < 0) {
        if (res != -ECANCELED) {
            rx_http_log_error_action(h2->hc, RX_LOG_INFO, (int) -res, NULL,
                                     "writev() failed");
        }
        v2_close(h2);
        return;
    }
    h2->out_sent += (size_t) res;
    send_out(h2);
}

static void
timer_handler(rx_timer_t *t)
{
    rx_http_v2_conn_t *h2 = t->data;

    if (h2->conn->state != RX_CONN_ACTIVE) {
        return;
    }
    if (h2->lingering) {
        v2_close(h2);                    /* lingering_timeout: silent */
        return;
    }
    if (h2->nstreams == 0 && !h2->goaway_sent) {
        go_away(h2, RX_H2_NO_ERROR, NULL);    /* idle: keepalive_timeout */
        h2->goaway_sent = true;
        /* a client that does not read its GOAWAY is not waited for long */
        rx_timer_add(&h2->conn->timer, 1000);
        return;
    }
    v2_close(h2);
}

static void
on_free(rx_conn_t *c)
{
    rx_http_v2_conn_t   *h2 = c->data;
    rx_http_v2_stream_t *st, *next;

    if (h2 == NULL) {
        return;
    }
    h2->closing = true;
    rx_post_cancel(&h2->send_post);
    /* every frame gathered went to the transport: a stream whose send the
     * session took whole has its bytes with the kernel (with a direct TLS
     * send, even with the client, which may have closed since), and its
     * request hears so before it ends, or it would log them unsent (the
     * report is posted to the next loop turn, after the close came) */
    if (h2->out_sent == h2->out_len) {
        for (st = h2->streams; st; st = st->next) {
            if (st->sent_post.queued) {
                rx_post_cancel(&st->sent_post);
                st->sent_post.handler(&st->sent_post);
            }
        }
    }
    for (st = h2->streams; st; st = next) {
        next = st->next;
        rx_http_v2_stream_abort(st);
    }
    rx_h2_session_del(h2->session);
    h2->session = NULL;
    rx_hpack_dec_free(&h2->dec);
    rx_http_v2_out_free(h2->out, h2->out_size);
    h2->out = NULL;
    rx_http_stat_accepted(-1);
}
