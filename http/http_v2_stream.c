/*
 * http_v2_stream.c: one HTTP/2 stream's request, on a connection of its
 * own: a table slot without a socket whose transport is the stream. The
 * request goes to the request layer as fields (rx_http_request_from_fields:
 * the same limits and checks as HTTP/1.1's, without llhttp) and its DATA
 * as the body's bytes, without framing; DATA opens the
 * window again only as the request layer takes it (backpressure per
 * stream), and the response leaves as HEADERS (the framing's
 * send_header) and DATA frames (the transport's send), so the phases,
 * filters, body owner, upstreams and logs run as for HTTP/1.1.
 */
#include "http_v2_int.h"
#include "clock.h"

static void request_done(rx_http_request_t *r);
static void closed(rx_http_connection_t *hc);

static const rx_http_framing_t v2_framing = { rx_http_v2_send_header,
                                               request_done, closed };

static void st_start_read(rx_conn_t *c);
static void st_stop_read(rx_conn_t *c);
static void st_send(rx_conn_t *c, const struct iovec *iov, int niov);
static void st_shutdown_write(rx_conn_t *c);

static const rx_transport_t v2_stream_transport = {
    "http2", st_start_read, st_stop_read, st_send, st_shutdown_write, NULL, NULL
};

static void sent_posted(rx_posted_t *p);

/* Copies n bytes to p; returns the end of the copy. */
static char *
put(char *p, const void *data, size_t n)
{
    memcpy(p, data, n);
    return p + n;
}

/* Makes room for n more bytes in a malloc'd buffer. RX_OK or RX_ERROR. */
static rx_int_t
reserve(char **buf, size_t len, size_t *size, size_t n)
{
    if (len + n > *size) {
        size_t size2 = rx_max(*size * 2, rx_max(len + n, (size_t) 512));
        char  *grown = rx_http_v2_realloc(*buf, size2);

        if (grown == NULL) {
            return RX_ERROR;
        }
        *buf = grown;
        *size = size2;
    }
    return RX_OK;
}

/* Appends to a malloc'd buffer. RX_OK or RX_ERROR. */
static rx_int_t
append(char **buf, size_t *len, size_t *size, const void *data, size_t n)
{
    if (reserve(buf, *len, size, n) != RX_OK) {
        return RX_ERROR;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    return RX_OK;
}

/* A field kept in st->fields as a record: its name's and value's lengths
 * (uint32_t each, unaligned), then the name and the value. RX_OK or
 * RX_ERROR. */
static rx_int_t
append_field(rx_http_v2_stream_t *st, const void *name, size_t namelen,
    const void *value, size_t valuelen)
{
    uint32_t lens[2] = { (uint32_t) namelen, (uint32_t) valuelen };
    char    *p;

    if (reserve(&st->fields, st->fields_len, &st->fields_size,
                sizeof(lens) + namelen + valuelen) != RX_OK) {
        return RX_ERROR;
    }
    p = put(st->fields + st->fields_len, lens, sizeof(lens));
    p = put(p, name, namelen);
    p = put(p, value, valuelen);
    st->fields_len = (size_t) (p - st->fields);
    st->nfields++;
    return RX_OK;
}

/* The record at *off of st->fields, and *off moved past it. */
static void
next_field(rx_http_v2_stream_t *st, size_t *off, rx_http_field_t *f)
{
    uint32_t lens[2];

    memcpy(lens, st->fields + *off, sizeof(lens));
    f->name = st->fields + *off + sizeof(lens);
    f->name_len = lens[0];
    f->value = f->name + lens[0];
    f->value_len = lens[1];
    *off += sizeof(lens) + lens[0] + lens[1];
}

rx_http_v2_stream_t *
rx_http_v2_stream_create(rx_http_v2_conn_t *h2, int32_t id)
{
    rx_http_v2_stream_t *st = rx_http_v2_calloc(1, sizeof(*st));

    if (st == NULL) {
        return NULL;
    }
    st->h2 = h2;
    st->id = id;
    st->content_length = -1;
    st->sent_post.handler = sent_posted;
    st->sent_post.data = st;
    st->next = h2->streams;
    if (h2->streams) {
        h2->streams->prev = st;
    }
    h2->streams = st;
    h2->nstreams++;
    rx_timer_del(&h2->conn->timer);      /* streams have their own timers */
    rx_conn_set_idle(h2->conn, false);
    return st;
}

void
rx_http_v2_stream_free(rx_http_v2_stream_t *st)
{
    rx_http_v2_conn_t *h2 = st->h2;

    rx_post_cancel(&st->sent_post);
    if (st->prev) {
        st->prev->next = st->next;
    } else {
        h2->streams = st->next;
    }
    if (st->next) {
        st->next->prev = st->prev;
    }
    h2->nstreams--;
    rx_http_v2_free(st->head);
    rx_http_v2_free(st->fields);
    rx_http_v2_free(st->cookie);
    rx_http_v2_free(st);
    if (h2->nstreams == 0) {
        rx_http_v2_schedule_send(h2);    /* the idle timer */
    }
}

/* Which pseudo-header field name is: RX_V2_METHOD, _PATH, _AUTHORITY,
 * or -1 for one the request does not use (:scheme, :protocol). */
static int
pseudo_index(const char *n, size_t namelen)
{
    switch (namelen) {
    case 5:
        return memcmp(n, ":path", 5) == 0 ? RX_V2_PATH : -1;
    case 7:
        return memcmp(n, ":method", 7) == 0 ? RX_V2_METHOD : -1;
    case 10:
        return memcmp(n, ":authority", 10) == 0 ? RX_V2_AUTHORITY : -1;
    }
    return -1;
}

/* The values of :method, :path and :authority are kept in st->head, each
 * ahead of a NUL, where st->ps_off says (http_v2_fields.c lets each come
 * once, and counted their bytes) */
int
rx_http_v2_stream_header(rx_http_v2_stream_t *st, const uint8_t *name,
    size_t namelen, const uint8_t *value, size_t valuelen)
{
    const char              *n = (const char *) name;
    rx_int_t                 rc = RX_OK;
    char                    *p;

    if (n[0] == ':') {
        int k = pseudo_index(n, namelen);

        if (k < 0) {
            return 0;
        }
        if (reserve(&st->head, st->head_len, &st->head_size, valuelen + 1)
            != RX_OK) {
            return -1;
        }
        st->ps_off[k] = (uint32_t) st->head_len + 1;
        st->ps_len[k] = (uint32_t) valuelen;
        p = put(st->head + st->head_len, value, valuelen);
        *p++ = '\0';
        st->head_len = (size_t) (p - st->head);
        return 0;
    }
    if (namelen == 6 && memcmp(n, "cookie", 6) == 0) {
        /* crumbs become one Cookie line (RFC 9113 section 8.2.3) */
        if (st->cookie_len) {
            rc = append(&st->cookie, &st->cookie_len, &st->cookie_size, "; ", 2);
        }
        rc |= append(&st->cookie, &st->cookie_len, &st->cookie_size, value,
                     valuelen);
        return rc == RX_OK ? 0 : -1;
    }
    /* 100-continue is HTTP/1.1's: a stream's body just follows */
    if (namelen == 6 && memcmp(n, "expect", 6) == 0) {
        return 0;
    }
    if (namelen == 4 && memcmp(n, "host", 4) == 0) {
        st->has_host = true;
    }
    if (namelen == 14 && memcmp(n, "content-length", 14) == 0) {
        st->has_length = true;
    }
    if (st->fields == NULL) {
        st->fields_len = st->fields_size = 0;
        st->nfields = 0;
    }
    rc = append_field(st, n, namelen, value, valuelen);
    return rc == RX_OK ? 0 : -1;
}

/* The value of a pseudo-header field kept in st->head (k: RX_V2_*), or
 * NULL. */
static const char *
pseudo(rx_http_v2_stream_t *st, int k)
{
    return st->ps_off[k] ? st->head + st->ps_off[k] - 1 : NULL;
}

/* Hands bytes of the request to its connection. False when it went. */
static bool
deliver(rx_http_v2_stream_t *st, const char *data, size_t len)
{
    if (st->vc == NULL) {
        return false;
    }
    st->vc->ops->on_read(st->vc, data, (ssize_t) len);
    return st->vc != NULL;
}

static rx_conn_t *
stream_connection(rx_http_v2_stream_t *st)
{
    rx_conn_t *c = st->h2->conn, *vc;

    vc = rx_conn_get(&rx_worker, -1, c->listening);
    if (vc == NULL) {
        rx_log_error(RX_LOG_ALERT, &c->log, 0, "%u worker_connections are not "
                     "enough for HTTP/2 streams", (unsigned) rx_worker.nconns);
        return NULL;
    }
    if (rx_http_init_framed_connection(vc, st->h2->hc, &v2_framing, st)
        != RX_OK) {
        rx_conn_close(vc);
        return NULL;
    }
    vc->transport = &v2_stream_transport;
    vc->peer = (rx_sockaddr_t *) rx_conn_peer(c);
    vc->local = (rx_sockaddr_t *) rx_conn_local(c);
    vc->tls = c->tls;                    /* $https, $ssl_* (not its I/O) */
    vc->proxy_protocol = c->proxy_protocol;
    vc->number = c->number;              /* $connection: the client's */
    vc->log.connection = c->number;
    vc->want_read = true;
    st->vc = vc;
    return vc;
}

/* The request's fields go to the request layer as they are, in the
 * order HTTP/1.1 text of them would have (host from :authority first when
 * no host field came, the cookie crumbs joined last, and for a body
 * without content-length "transfer-encoding: chunked", as the request
 * layer knows a body of unknown length). False when memory is short. */
static bool
start_fields(rx_http_v2_stream_t *st, const char *method, const char *path,
    const char *authority, bool end_stream)
{
    rx_http_request_fields_t  rf;
    rx_http_field_t          *fields;
    char                     *kept = st->fields;
    size_t                    off = 0;
    rx_uint_t                 n = 0;

    fields = rx_http_v2_alloc((st->nfields + 3) * sizeof(rx_http_field_t));
    if (fields == NULL) {
        return false;
    }
    if (authority && !st->has_host) {
        fields[n].name = "host";
        fields[n].name_len = 4;
        fields[n].value = authority;
        fields[n++].value_len = st->ps_len[RX_V2_AUTHORITY];
    }
    while (off < st->fields_len) {
        next_field(st, &off, &fields[n++]);
    }
    if (st->cookie_len) {
        fields[n].name = "cookie";
        fields[n].name_len = 6;
        fields[n].value = st->cookie;
        fields[n++].value_len = st->cookie_len;
    }
    if (!end_stream && !st->has_length) {
        fields[n].name = "transfer-encoding";
        fields[n].name_len = 17;
        fields[n].value = "chunked";
        fields[n++].value_len = 7;
    }
    rf.method = method;
    rf.method_len = st->ps_len[RX_V2_METHOD];
    rf.target = path;
    rf.target_len = st->ps_len[RX_V2_PATH];
    rf.fields = fields;
    rf.nfields = n;
    rf.body = !end_stream;
    /* the fields' bytes stay ours until the request layer copied them;
     * st may go during the call (a request that ends at once without
     * its response resets the stream): it is not touched after it */
    st->fields = NULL;
    st->fields_len = st->fields_size = 0;
    st->started = true;
    rx_http_request_from_fields(st->vc->data, &rf);
    rx_http_v2_free(fields);
    rx_http_v2_free(kept);
    return true;
}

void
rx_http_v2_stream_start(rx_http_v2_stream_t *st, bool end_stream)
{
    const char *method = pseudo(st, RX_V2_METHOD);
    const char *path = pseudo(st, RX_V2_PATH);
    const char *authority = pseudo(st, RX_V2_AUTHORITY);

    if (method == NULL || path == NULL || stream_connection(st) == NULL) {
        rx_h2_submit_rst_stream(st->h2->session, st->id,
            method && path ? RX_H2_REFUSED_STREAM : RX_H2_PROTOCOL_ERROR);
        return;
    }
    st->req_ended = end_stream;
    if (!start_fields(st, method, path, authority, end_stream)) {
        rx_conn_close(st->vc);
    }
}

/* DATA: its bytes go to the request layer as they are (the body owner
 * takes them, or holds them until a handler claims the body). */
void
rx_http_v2_stream_data(rx_http_v2_stream_t *st, const uint8_t *data,
    size_t len)
{
    if (len == 0) {
        return;
    }
    if (st->vc->want_read) {
        rx_h2_session_consume(st->h2->session, st->id, len);
    } else {
        st->unconsumed += len;           /* opened when reading resumes */
    }
    (void) deliver(st, (const char *) data, len);
}

void
rx_http_v2_stream_end(rx_http_v2_stream_t *st)
{
    st->req_ended = true;
    if (st->started && st->vc) {
        rx_http_request_body_end(st->vc->data);
    }
}

/* The session is done with the stream: a request still running was reset
 * by the client (or ended by an error) and ends as for a client that
 * closed. */
void
rx_http_v2_stream_closed(rx_http_v2_stream_t *st, uint32_t error)
{
    rx_http_connection_t *hc;

    st->closed = true;
    if (st->vc == NULL) {
        rx_http_v2_stream_free(st);
        return;
    }
    if (st->end_sent && error == RX_H2_NO_ERROR && !st->client_reset) {
        /* the response's last DATA frame ended the stream, as the
         * request's END_STREAM had: the request ends as usual, once it
         * hears its send went (sent_posted); closed() frees st */
        return;
    }
    hc = st->vc->data;
    if (hc && hc->r && !hc->r->logged) {
        if (st->client_reset || error == RX_H2_NO_ERROR) {
            rx_http_log_error_action(hc, RX_LOG_INFO, 0, NULL, "client %s "
                "HTTP/2 stream %d (error %u)", error == RX_H2_NO_ERROR
                ? "closed" : "reset", (int) st->id, (unsigned) error);
        } else {
            /* reset for a rule the request broke (content-length against
             * its DATA, a window overflow) */
            rx_http_log_error_action(hc, RX_LOG_INFO, 0, NULL, "HTTP/2 stream "
                "%d reset with %s: the client broke HTTP/2's rules", (int) st->id,
                rx_h2_error_name(error));
        }
    }
    rx_conn_close(st->vc);               /* closed() frees st */
}

void
rx_http_v2_stream_abort(rx_http_v2_stream_t *st)
{
    st->closed = true;
    if (st->vc) {
        rx_conn_close(st->vc);           /* closed() frees st */
        return;
    }
    rx_http_v2_stream_free(st);
}

/* ---- the stream as the request's transport ---------------------------- */

static void
st_start_read(rx_conn_t *c)
{
    rx_http_connection_t *hc = c->data;
    rx_http_v2_stream_t  *st = hc->framing_data;

    c->want_read = true;
    if (st->unconsumed && !st->closed) {
        rx_h2_session_consume(st->h2->session, st->id, st->unconsumed);
        st->unconsumed = 0;
        rx_http_v2_schedule_send(st->h2);
    }
}

static void
st_stop_read(rx_conn_t *c)
{
    c->want_read = false;
}

static void
st_shutdown_write(rx_conn_t *c)
{
    (void) c;                            /* the stream ends in request_done */
}

/* Whether a send of size bytes carries the rest of the response: its
 * last buffer was queued (response_done) and the send holds every byte
 * queued (not a part that IOV_BATCH or limit_rate cut off). Its last DATA
 * frame then ends the stream, as nginx's does, instead of an empty DATA
 * frame with END_STREAM after the request's end (9 bytes and a frame of
 * the session's work per response). */
static bool
last_send(rx_http_request_t *r, size_t size)
{
    rx_chain_t *cl;
    size_t      queued = 0;

    if (r == NULL || !r->response_done) {
        return false;
    }
    for (cl = r->out; cl; cl = cl->next) {
        queued += (size_t) (cl->buf->last - cl->buf->pos);
    }
    return queued == size;
}

static void
st_send(rx_conn_t *c, const struct iovec *iov, int niov)
{
    rx_http_connection_t *hc = c->data;
    rx_http_v2_stream_t  *st = hc->framing_data;

    st->iov = iov;
    st->niov = niov;
    st->iov_index = 0;
    st->iov_off = 0;
    st->iov_total = 0;
    st->iov_left = 0;
    while (niov-- > 0) {
        st->iov_left += iov[niov].iov_len;
    }
    st->last_send = last_send(hc->r, st->iov_left);
    c->sending = true;
    if (st->iov_left == 0) {
        st->niov = 0;                    /* nothing to frame: done at once */
        rx_post(&st->sent_post);
        return;
    }
    if (st->deferred && !st->closed) {
        st->deferred = false;
        rx_h2_session_resume_data(st->h2->session, st->id);
    }
    rx_http_v2_schedule_send(st->h2);
}

/* The session took every byte of the send: the request layer hears it from
 * the end of this loop turn, not from inside the session. */
static void
sent_posted(rx_posted_t *p)
{
    rx_http_v2_stream_t *st = p->data;
    rx_conn_t           *vc = st->vc;
    size_t               total = st->iov_total;

    if (vc == NULL || vc->state != RX_CONN_ACTIVE) {
        return;
    }
    st->iov_total = 0;
    vc->sending = false;
    vc->ops->on_sent(vc, (ssize_t) total);
}

/* Copies length bytes of the send in progress to dst; the request hears
 * that its send went (from the end of the loop turn) once all of it was
 * taken. */
static void
take(rx_http_v2_stream_t *st, uint8_t *dst, size_t length)
{
    size_t copied = 0;

    while (st->iov_index < st->niov && copied < length) {
        const struct iovec *v = &st->iov[st->iov_index];
        size_t              n = rx_min(v->iov_len - st->iov_off, length - copied);

        memcpy(dst + copied, (char *) v->iov_base + st->iov_off, n);
        copied += n;
        st->iov_off += n;
        if (st->iov_off == v->iov_len) {
            st->iov_index++;
            st->iov_off = 0;
        }
    }
    st->iov_total += copied;
    st->iov_left -= copied;
    if (st->niov && st->iov_index == st->niov) {
        st->niov = 0;
        rx_post(&st->sent_post);
    }
}

/* The session's data_source: a DATA frame's payload, copied once from
 * the request's buffers straight into the connection's send buffer. The
 * response's last bytes end the stream with them when the request's side
 * is closed too (its body all came: nothing the request may still wait
 * for is cut off by the stream's close). */
ssize_t
rx_http_v2_stream_source(rx_h2_session_t *s, int32_t id, void *sud,
    uint8_t *dst, size_t max, bool *eof, void *ud)
{
    rx_http_v2_stream_t *st = sud;
    size_t               length;

    (void) s; (void) id; (void) ud;
    if (st == NULL) {
        return RX_H2_SOURCE_ERR;         /* its request went */
    }
    length = rx_min(rx_min(max, st->chunk_size), st->iov_left);
    if (length) {
        if (st->last_send && length == st->iov_left && st->req_ended) {
            *eof = true;
            st->end_sent = true;
        }
        take(st, dst, length);
        return (ssize_t) length;
    }
    if (st->eof) {
        *eof = true;
        return 0;
    }
    st->deferred = true;
    return RX_H2_DEFERRED;
}

/* ---- the framing: the response header, the end of the request --------- */

/* HEADERS (and the DATA of the body that follows) submitted: the fields
 * encoded (HPACK, without indexing) into one block of the request's pool. */
rx_int_t
rx_http_v2_stream_submit(rx_http_request_t *r, rx_http_v2_nv_t *nva, size_t n)
{
    rx_http_v2_stream_t *st = r->hc->framing_data;
    rx_h2_session_t     *s = st->h2->session;
    size_t               i, size = 0, bound = 8;
    u_char              *block, *p, *q;

    for (i = 0; i < n; i++) {
        size += nva[i].namelen + nva[i].valuelen + 4;
        bound += rx_hpack_encode_bound(nva[i].namelen, nva[i].valuelen);
    }
    r->header_size = (int64_t) size;
    r->bytes_sent += (int64_t) size;
    block = rx_pnalloc(r->pool, bound);
    if (block == NULL) {
        return RX_ERROR;
    }
    p = rx_hpack_encode_status(block, r->headers_out.status
                                      ? r->headers_out.status : RX_HTTP_OK);
    for (i = 1; p && i < n; i++) {       /* nva[0] is :status */
        q = rx_hpack_encode_field(p, nva[i].name, nva[i].namelen,
                                  nva[i].value, nva[i].valuelen);
        p = q ? q : p;                   /* a field with CR, LF, NUL: not sent */
    }
    if (p == NULL) {
        return RX_ERROR;
    }
    st->chunk_size = ((rx_http_v2_loc_conf_t *) rx_http_get_module_loc_conf(r,
                         rx_http_v2_module))->chunk_size;
    st->responded = true;
    st->with_body = !r->header_only;
    /* a HEADERS without a body ends the stream: the request ends as
     * usual, not as one whose client closed (see end_sent) */
    st->end_sent = r->header_only && st->req_ended;
    if (rx_h2_submit_headers(s, st->id, block, (size_t) (p - block),
                             r->header_only) != 0
        || (!r->header_only && rx_h2_submit_data(s, st->id) != 0)) {
        return RX_ERROR;
    }
    rx_http_v2_schedule_send(st->h2);
    return RX_OK;
}

/* The response is sent: the stream ends (END_STREAM after its last DATA)
 * and so does its connection. */
static void
request_done(rx_http_request_t *r)
{
    rx_http_connection_t *hc = r->hc;
    rx_http_v2_stream_t  *st = hc->framing_data;

    st->eof = r->response_done;
    hc->r = NULL;
    rx_http_request_free(r);
    rx_conn_close(hc->conn);
}

static void
closed(rx_http_connection_t *hc)
{
    rx_http_v2_stream_t *st = hc->framing_data;
    rx_http_v2_conn_t   *h2 = st->h2;

    st->vc = NULL;
    /* the bytes of a send not yet taken die with the request: a DATA frame
     * sized for them is not sent (http_v2.c resets the stream) */
    st->niov = 0;
    st->iov_left = 0;
    if (st->closed) {
        rx_http_v2_stream_free(st);
        return;
    }
    if (h2->closing) {
        return;
    }
    if (!st->eof) {
        /* the response cannot be finished: the client learns it */
        rx_h2_submit_rst_stream(h2->session, st->id, RX_H2_INTERNAL_ERROR);
    } else if (st->with_body && st->deferred) {
        st->deferred = false;
        rx_h2_session_resume_data(h2->session, st->id);
    }
    rx_http_v2_schedule_send(h2);
}
