/*
 * http_v2.c: an HTTP/2 connection. libnghttp2's session does the frames,
 * HPACK and flow control (docs/ARCHITECTURE.md, "HTTP/2"): it is fed the
 * bytes the connection's transport (plain, TLS, kTLS) receives and
 * drained into one send at a time on that transport, so the loop stays
 * ringx's. Each stream's request runs on a connection of its own
 * (http_v2_stream.c). Bounds ringx adds to nghttp2 1.52's: new streams
 * per read, resets per connection, CONTINUATION frames per header block.
 */
#include "http_v2_int.h"
#include "http_stats.h"
#include "clock.h"

#define OUT_BATCH        (64 * 1024)  /* bytes of frames per send */
/* the send buffer: a batch and the frame that crosses its end */
#define OUT_SIZE         ((size_t) OUT_BATCH + 16384 + 9)
#define CONTINUATION_MAX 8            /* CONTINUATION frames of one block */
#define FRAME_HDLEN      9            /* a frame's header (RFC 9113 4.1) */

static void on_read(rx_conn_t *c, const char *data, ssize_t len);
static void on_sent(rx_conn_t *c, ssize_t res);
static void on_free(rx_conn_t *c);
static void timer_handler(rx_timer_t *t);
static void send_posted(rx_posted_t *p);
static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len,
    int flags, void *ud);
static int on_send_data(nghttp2_session *s, nghttp2_frame *f,
    const uint8_t *hd, size_t length, nghttp2_data_source *source, void *ud);

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
        nghttp2_session_terminate_session(h2->session, code);
    }
    rx_http_v2_schedule_send(h2);
}

/* keepalive_requests (and keepalive_timeout 0) end an HTTP/2 connection
 * as nginx 1.19.7 does: the stream that reaches the count is the last,
 * GOAWAY NO_ERROR names it, and the connection closes once the streams
 * let in have finished (nghttp2 wants to read no more). */
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
        nghttp2_submit_goaway(h2->session, NGHTTP2_FLAG_NONE, id,
                              NGHTTP2_NO_ERROR, NULL, 0);
    }
}

/* The stream of id: the one whose header block is being received is
 * remembered, so each of its fields does not look it up in nghttp2's
 * stream map (a cache miss each: ~2 % of a worker's CPU). */
static rx_http_v2_stream_t *
stream_of(rx_http_v2_conn_t *h2, int32_t id)
{
    if (h2->recv_st && h2->recv_st->id == id) {
        return h2->recv_st;
    }
    return nghttp2_session_get_stream_user_data(h2->session, id);
}

static int
on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    rx_http_v2_conn_t   *h2 = ud;
    rx_http_v2_stream_t *st;

    if (f->hd.type != NGHTTP2_HEADERS
        || f->headers.cat != NGHTTP2_HCAT_REQUEST) {
        return 0;
    }
    h2->max_id = rx_max(h2->max_id, f->hd.stream_id);
    /* new streams per read: twice the streams allowed at once, as nginx
     * (a rapid reset opens many in one read) */
    if (++h2->new_streams > 2 * h2->conf->max_concurrent_streams) {
        go_away(h2, NGHTTP2_ENHANCE_YOUR_CALM, "opened too many streams at once");
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    /* streams beyond the limit are refused, also before the client saw
     * our SETTINGS (nghttp2 counts only what it acknowledged); so are
     * those after the last one keepalive_requests let in (they crossed
     * our GOAWAY: the client may retry them elsewhere) */
    st = h2->nstreams < h2->conf->max_concurrent_streams && h2->last_id == 0
         ? rx_http_v2_stream_create(h2, f->hd.stream_id) : NULL;
    if (st == NULL) {
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id,
                                  NGHTTP2_REFUSED_STREAM);
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    nghttp2_session_set_stream_user_data(s, f->hd.stream_id, st);
    h2->recv_st = st;
    last_request(h2, f->hd.stream_id);
    return 0;
}

static int
on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
    void *ud)
{
    rx_http_v2_stream_t *st = stream_of(ud, f->hd.stream_id);

    (void) s;
    if (st == NULL || f->hd.type != NGHTTP2_HEADERS) {
        return 0;
    }
    return rx_http_v2_stream_header(st, name, namelen, value, valuelen);
}

/* RFC 9113 5.1.1: a HEADERS frame that would open a stream numbered
 * below one the client already opened is a connection error
 * PROTOCOL_ERROR, with nginx's words; nghttp2 1.52 ignores it when the
 * stream is not open (a trailer section on an open stream is fine). */
static bool
stream_id_down(rx_http_v2_conn_t *h2, const nghttp2_frame_hd *hd)
{
    nghttp2_stream *st;

    if (hd->type != NGHTTP2_HEADERS || hd->stream_id > h2->max_id) {
        return false;
    }
    st = nghttp2_session_find_stream(h2->session, hd->stream_id);
    if (st && nghttp2_stream_get_state(st) != NGHTTP2_STREAM_STATE_CLOSED) {
        return false;
    }
    rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
        "client sent HEADERS frame with incorrect identifier %d, the last "
        "was %d", (int) hd->stream_id, (int) h2->max_id);
    go_away(h2, NGHTTP2_PROTOCOL_ERROR, NULL);
    return true;
}

static int
on_begin_frame(nghttp2_session *s, const nghttp2_frame_hd *hd, void *ud)
{
    rx_http_v2_conn_t *h2 = ud;
    static __thread rx_uint_t continuations;

    (void) s;
    if (stream_id_down(h2, hd)) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    /* nghttp2 1.52 takes any number of CONTINUATION frames (2024's flood):
     * a header block gets at most CONTINUATION_MAX of them */
    if (hd->type != NGHTTP2_CONTINUATION) {
        continuations = 0;
        return 0;
    }
    if (++continuations > CONTINUATION_MAX) {
        continuations = 0;
        go_away(h2, NGHTTP2_ENHANCE_YOUR_CALM,
                "sent too many CONTINUATION frames");
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int
on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    rx_http_v2_conn_t   *h2 = ud;
    rx_http_v2_stream_t *st = stream_of(h2, f->hd.stream_id);
    bool                 end = (f->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;

    switch (f->hd.type) {
    case NGHTTP2_HEADERS:
        if (st && f->headers.cat == NGHTTP2_HCAT_REQUEST) {
            rx_http_v2_stream_start(st, end);
        } else if (st && end) {
            rx_http_v2_stream_end(st);         /* a trailer section */
        }
        break;
    case NGHTTP2_DATA:
        if (st && end) {
            rx_http_v2_stream_end(st);
        }
        break;
    case NGHTTP2_RST_STREAM:
        if (st) {
            st->client_reset = true;
        }
        /* CVE-2023-44487: streams reset by the client are bounded per
         * connection, like the streams it may open */
        if (++h2->resets > 2 * h2->conf->max_concurrent_streams + 100) {
            go_away(h2, NGHTTP2_ENHANCE_YOUR_CALM, "reset too many streams");
        }
        break;
    default:
        break;
    }
    return 0;
}

/* Bytes a client sent, for a log line: printable ASCII as is, the rest
 * as \xNN, at most size - 1 characters. */
static void
escape(char *out, size_t size, const uint8_t *in, size_t len)
{
    size_t i, n = 0;

    for (i = 0; i < len && n + 5 < size; i++) {
        n += (size_t) (in[i] >= 0x20 && in[i] < 0x7f && in[i] != '\\'
            ? snprintf(out + n, size - n, "%c", in[i])
            : snprintf(out + n, size - n, "\\x%02x", in[i]));
    }
    out[n] = '\0';
}

/* A frame left. A GOAWAY with an error that ringx did not ask for: nghttp2
 * ended the connection, logged. A response's END_STREAM: RFC 9113 8.1,
 * a request body still coming is not wanted, RST_STREAM NO_ERROR tells the
 * client to stop sending it (after the END_STREAM, so no byte of the
 * response is lost), as nginx. */
static int
on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    rx_http_v2_conn_t *h2 = ud;

    if (f->hd.type == NGHTTP2_GOAWAY && f->goaway.error_code != NGHTTP2_NO_ERROR
        && !h2->terminated) {
        char why[128];

        /* nghttp2 ended the connection itself: its reason travels as the
         * GOAWAY's debug data */
        escape(why, sizeof(why), f->goaway.opaque_data, f->goaway.opaque_data_len);
        rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
            "client sent invalid HTTP/2, closing connection with GOAWAY %s: %s",
            nghttp2_http2_strerror(f->goaway.error_code), why);
        return 0;
    }
    if ((f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS)
        && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)
        && nghttp2_session_get_stream_remote_close(s, f->hd.stream_id) == 0) {
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id,
                                  NGHTTP2_NO_ERROR);
    }
    return 0;
}

/* A frame nghttp2 refused: a malformed request (RST_STREAM
 * PROTOCOL_ERROR follows) or a connection error; a log line names it. */
static int
on_invalid_frame(nghttp2_session *s, const nghttp2_frame *f, int error,
    void *ud)
{
    static const char *const types[] = { "DATA", "HEADERS", "PRIORITY",
        "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY",
        "WINDOW_UPDATE", "CONTINUATION" };
    rx_http_v2_conn_t *h2 = ud;

    (void) s;
    rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
        "client sent invalid HTTP/2 %s frame on stream %d: %s",
        f->hd.type < rx_nelems(types) ? types[f->hd.type] : "unknown",
        (int) f->hd.stream_id, nghttp2_strerror(error));
    return 0;
}

/* A field nghttp2 would drop (a name with characters HTTP does not
 * allow): RFC 9113 8.2.1 makes the request malformed, so its stream is
 * reset with PROTOCOL_ERROR instead, and the name is logged escaped. */
static int
on_invalid_header(nghttp2_session *s, const nghttp2_frame *f,
    const uint8_t *name, size_t namelen, const uint8_t *value,
    size_t valuelen, uint8_t flags, void *ud)
{
    rx_http_v2_conn_t *h2 = ud;
    char               shown[128];

    (void) s; (void) value; (void) valuelen; (void) flags;
    escape(shown, sizeof(shown), name, namelen);
    rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
        "client sent invalid header \"%s\" in HTTP/2 stream %d",
        shown, (int) f->hd.stream_id);
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
}

static int
on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t id,
    const uint8_t *data, size_t len, void *ud)
{
    rx_http_v2_stream_t *st = stream_of(ud, id);

    if (st == NULL || st->vc == NULL) {
        /* nobody reads it any more: the windows open again at once */
        nghttp2_session_consume(s, id, len);
        return 0;
    }
    rx_http_v2_stream_data(st, data, len);
    return 0;
}

static int
on_stream_close(nghttp2_session *s, int32_t id, uint32_t error, void *ud)
{
    rx_http_v2_conn_t   *h2 = ud;
    rx_http_v2_stream_t *st = nghttp2_session_get_stream_user_data(s, id);

    if (h2->recv_st == st) {
        h2->recv_st = NULL;              /* as nghttp2 forgets it */
    }
    if (st) {
        nghttp2_session_set_stream_user_data(s, id, NULL);
        rx_http_v2_stream_closed(st, error);
    }
    return 0;
}

static nghttp2_session *
create_session(rx_http_v2_conn_t *h2)
{
    nghttp2_session_callbacks *cb;
    nghttp2_option            *opt;
    nghttp2_session           *s = NULL;

    if (nghttp2_session_callbacks_new(&cb) != 0) {
        return NULL;
    }
    if (nghttp2_option_new(&opt) != 0) {
        nghttp2_session_callbacks_del(cb);
        return NULL;
    }
    nghttp2_session_callbacks_set_send_callback(cb, on_send);
    nghttp2_session_callbacks_set_send_data_callback(cb, on_send_data);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_begin_frame_callback(cb, on_begin_frame);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb,
        on_invalid_frame);
    nghttp2_session_callbacks_set_on_invalid_header_callback(cb,
        on_invalid_header);
    /* a stream's window opens as its body is consumed (backpressure) */
    nghttp2_option_set_no_auto_window_update(opt, 1);
    /* SETTINGS and PING floods: the acknowledgements queued are bounded
     * (nghttp2 then ends the connection with ENHANCE_YOUR_CALM) */
    nghttp2_option_set_max_outbound_ack(opt, 1000);
    nghttp2_option_set_max_settings(opt, 32);
    /* nghttp2's per-stream allocations from the worker's free lists */
    rx_http_v2_mem_init(h2);
    if (nghttp2_session_server_new3(&s, cb, h2, opt, &h2->mem)
        != 0) {
        s = NULL;
    }
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    return s;
}

void
rx_http_v2_init(rx_http_connection_t *hc, const char *data, size_t len)
{
    rx_conn_t          *c = hc->conn;
    rx_http_v2_conn_t  *h2;
    nghttp2_settings_entry iv[3];

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
        rx_log_error(RX_LOG_ALERT, &c->log, 0, "nghttp2 session failed");
        rx_conn_close(c);
        return;
    }
    /* HTTP/1's handlers no longer see this connection */
    rx_conn_set_reusable(c, false);
    c->ops = &v2_conn_ops;
    c->data = h2;
    c->timer.handler = timer_handler;
    c->timer.data = h2;
    iv[0].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
    iv[0].value = (uint32_t) h2->conf->max_concurrent_streams;
    iv[1].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE;
    iv[1].value = (uint32_t) h2->conf->preread_size;
    iv[2].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE;
    iv[2].value = (uint32_t) (hc->default_server->large_client_header_buffers_size
                  * (size_t) hc->default_server->large_client_header_buffers_num);
    nghttp2_submit_settings(h2->session, NGHTTP2_FLAG_NONE, iv, 3);
    /* the connection's window: every stream's, as nginx opens it */
    nghttp2_session_set_local_window_size(h2->session, NGHTTP2_FLAG_NONE, 0,
        (int32_t) rx_min((size_t) 0x7fffffff,
                         h2->conf->preread_size * h2->conf->max_concurrent_streams
                         + 65535));
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
    h2->new_streams = 0;
    n = nghttp2_session_mem_recv(h2->session, (const uint8_t *) data,
                                 (size_t) len);
    if (n < 0) {
        rx_http_log_error_action(h2->hc, RX_LOG_INFO, 0, NULL,
                                 "client sent invalid HTTP/2: %s",
                                 nghttp2_strerror((int) n));
        if (n != NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
            go_away(h2, n == NGHTTP2_ERR_FLOODED
                        || n == NGHTTP2_ERR_TOO_MANY_SETTINGS
                        || n == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS
                        ? NGHTTP2_ENHANCE_YOUR_CALM : NGHTTP2_PROTOCOL_ERROR,
                    NULL);
            return;
        }
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

/* nghttp2's frames into h2->out, up to OUT_BATCH bytes (a frame that
 * crosses it fits: OUT_SIZE); then it is told to wait for the send. */
static ssize_t
on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags,
    void *ud)
{
    rx_http_v2_conn_t *h2 = ud;

    (void) s; (void) flags;
    if (h2->out_len >= OUT_BATCH) {
        return NGHTTP2_ERR_WOULDBLOCK;
    }
    len = rx_min(len, h2->out_size - h2->out_len);
    memcpy(h2->out + h2->out_len, data, len);
    h2->out_len += len;
    return (ssize_t) len;
}

/* A DATA frame (NO_COPY, http_v2_stream.c's read_data): its header and
 * the response's bytes copied once, straight into h2->out. ringx never
 * pads, so the header is the frame's whole prefix. A request that went
 * between the frame's sizing and now (its send waited for room) leaves
 * no bytes: nghttp2 resets the stream with INTERNAL_ERROR instead. */
static int
on_send_data(nghttp2_session *s, nghttp2_frame *f, const uint8_t *hd,
    size_t length, nghttp2_data_source *source, void *ud)
{
    rx_http_v2_conn_t *h2 = ud;

    (void) s; (void) f;
    if (h2->out_len >= OUT_BATCH
        || h2->out_size - h2->out_len < FRAME_HDLEN + length) {
        return NGHTTP2_ERR_WOULDBLOCK;
    }
    if (!rx_http_v2_stream_take(source->ptr,
            (uint8_t *) h2->out + h2->out_len + FRAME_HDLEN, length)) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;   /* RST_STREAM */
    }
    memcpy(h2->out + h2->out_len, hd, FRAME_HDLEN);
    h2->out_len += FRAME_HDLEN + length;
    return 0;
}

/* Gathers up to OUT_BATCH bytes of frames into h2->out. */
static ssize_t
gather(rx_http_v2_conn_t *h2)
{
    int rv;

    h2->out_len = h2->out_sent = 0;
    if (h2->out == NULL) {
        h2->out = rx_http_v2_out_alloc(OUT_SIZE);
        if (h2->out == NULL) {
            return NGHTTP2_ERR_NOMEM;
        }
        h2->out_size = OUT_SIZE;
    }
    rv = nghttp2_session_send(h2->session);
    return rv < 0 ? rv : (ssize_t) h2->out_len;
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
            go_away(h2, NGHTTP2_NO_ERROR, NULL);
        }
        return;
    }
    /* everything went: an idle connection keeps no send buffer (it goes
     * to the worker's few spares: the next connection that sends takes it) */
    rx_http_v2_out_free(h2->out, h2->out_size);
    h2->out = NULL;
    h2->out_size = h2->out_len = h2->out_sent = 0;
    /* nor the pages of nghttp2's frame buffer */
    rx_http_v2_mem_idle(h2);
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
    if (h2->out_sent == h2->out_len) {
        n = gather(h2);
        if (n < 0) {
            rx_log_error(RX_LOG_ALERT, &c->log, 0, "nghttp2_session_send() "
                         "failed: %s", nghttp2_strerror((int) n));
            v2_close(h2);
            return;
        }
        if (n == 0) {
            if (!nghttp2_session_want_read(h2->session)
                && !nghttp2_session_want_write(h2->session)) {
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
    h2->iov.iov_len = h2->out_len - h2->out_sent;
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
        go_away(h2, NGHTTP2_NO_ERROR, NULL);    /* idle: keepalive_timeout */
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
    for (st = h2->streams; st; st = next) {
        next = st->next;
        rx_http_v2_stream_abort(st);
    }
    nghttp2_session_del(h2->session);
    h2->session = NULL;
    rx_http_v2_out_free(h2->out, h2->out_size);
    h2->out = NULL;
    rx_http_stat_accepted(-1);
}
