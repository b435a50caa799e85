/*
 * fastcgi_upstream.c: the FastCGI protocol on the upstream engine. The
 * request: BEGIN_REQUEST and PARAMS (fastcgi_params.c), STDIN (the body,
 * in records that point into it). The response: records
 * decoded as they come (split anywhere), STDOUT holding the CGI header
 * then the body, STDERR logged, END_REQUEST ending the exchange. The CGI
 * header's lines are read as uwsgi's and SCGI's (cgi_upstream.c).
 */
#include "fastcgi.h"

static rx_chain_t **
append(rx_http_request_t *r, rx_chain_t **ll, rx_buf_t *b)
{
    rx_chain_t *cl = rx_alloc_chain_link(r->pool);

    if (cl == NULL) {
        return NULL;
    }
    cl->buf = b;
    cl->next = NULL;
    *ll = cl;
    return &cl->next;
}

/* A small buffer: the previous record's padding, then a record header. */
static rx_buf_t *
stdin_header(rx_http_request_t *r, size_t padding, size_t content_len)
{
    rx_buf_t *b = rx_create_temp_buf(r->pool, padding + RX_FCGI_HEADER_LEN);

    if (b == NULL) {
        return NULL;
    }
    memset(b->last, 0, padding);
    b->last += padding;
    rx_fcgi_write_header(b->last, RX_FCGI_STDIN, RX_FCGI_ID, content_len,
                         rx_fcgi_padding(content_len));
    b->last += RX_FCGI_HEADER_LEN;
    return b;
}

/* A buffer over n bytes of the body's own memory. */
static rx_buf_t *
body_slice(rx_http_request_t *r, char *pos, size_t n)
{
    rx_buf_t *d = rx_calloc_buf(r->pool);

    if (d != NULL) {
        d->start = d->pos = pos;
        d->end = d->last = pos + n;
        d->memory = 1;
        d->fd = -1;
    }
    return d;
}

/* A buffer over n bytes of the body's temporary file from off. */
static rx_buf_t *
file_slice(rx_http_request_t *r, int fd, int64_t off, size_t n)
{
    rx_buf_t *d = rx_calloc_buf(r->pool);

    if (d != NULL) {
        d->in_file = 1;
        d->fd = fd;
        d->file_pos = off;
        d->file_last = off + (int64_t) n;
    }
    return d;
}

/* STDIN records of up to 32 KiB around the body where it is: its memory
 * buffers, then the temporary file holding the rest of a large body (the
 * engine reads file buffers as it sends them). Nothing is copied; a
 * record spans as many pieces as it needs. Then the empty record that
 * ends the stream. */
static rx_chain_t **
stdin_records(rx_http_request_t *r, rx_chain_t **ll, bool body)
{
    rx_http_request_body_t *rb = body ? r->request_body : NULL;
    rx_chain_t             *in = rb ? rb->bufs : NULL;
    int64_t                 total = 0, file_len, file_off = 0;
    size_t                  padding = 0, left = 0, n;
    rx_buf_t               *b;
    char                   *pos = in ? in->buf->pos : NULL;

    file_len = rb && rb->file ? (int64_t) rb->file->written : 0;
    for (; in; in = in->next) {
        total += in->buf->last - in->buf->pos;
    }
    total += file_len;
    in = rb ? rb->bufs : NULL;
    while (ll && total > 0) {
        if (left == 0) {
            left = (size_t) rx_min(total, (int64_t) RX_FCGI_STDIN_CONTENT);
            b = stdin_header(r, padding, left);
            ll = b ? append(r, ll, b) : NULL;
            padding = rx_fcgi_padding(left);
            continue;
        }
        if (in && pos == in->buf->last) {
            in = in->next;
            pos = in ? in->buf->pos : NULL;
            continue;
        }
        if (in) {
            n = rx_min((size_t) (in->buf->last - pos), left);
            b = body_slice(r, pos, n);
            pos += n;
        } else {
            n = (size_t) rx_min(file_len - file_off, (int64_t) left);
            b = file_slice(r, rb->file->fd, file_off, n);
            file_off += (int64_t) n;
        }
        ll = b ? append(r, ll, b) : NULL;
        left -= n;
        total -= (int64_t) n;
    }
    if (ll) {
        b = stdin_header(r, padding, 0);
        ll = b ? append(r, ll, b) : NULL;
    }
    return ll;
}

/* fastcgi_request_buffering off: each piece of the body as it arrives in
 * STDIN records (padding and header in one small copy), the empty record
 * after the last. */
rx_int_t
rx_http_fastcgi_frame_body(rx_http_upstream_t *u, const char *data,
    size_t len, bool last)
{
    char   head[RX_FCGI_HEADER_LEN];
    static const char zeros[8];
    size_t n;

    while (len > 0) {
        n = rx_min(len, (size_t) RX_FCGI_STDIN_CONTENT);
        rx_fcgi_write_header(head, RX_FCGI_STDIN, RX_FCGI_ID, n,
                             rx_fcgi_padding(n));
        if (rx_http_upstream_out_append(u, head, sizeof(head)) != RX_OK
            || rx_http_upstream_out_append(u, data, n) != RX_OK
            || (rx_fcgi_padding(n)
                && rx_http_upstream_out_append(u, zeros, rx_fcgi_padding(n))
                   != RX_OK)) {
            return RX_ERROR;
        }
        data += n;
        len -= n;
    }
    if (last) {
        rx_fcgi_write_header(head, RX_FCGI_STDIN, RX_FCGI_ID, 0, 0);
        return rx_http_upstream_out_append(u, head, sizeof(head));
    }
    return RX_OK;
}

rx_int_t
rx_http_fastcgi_create_request(rx_http_upstream_t *u)
{
    rx_http_request_t          *r = u->r;
    rx_http_fastcgi_loc_conf_t *flcf = rx_http_get_module_loc_conf(r,
                                          rx_http_fastcgi_module);
    rx_buf_t                   *b;
    rx_chain_t                **ll;
    bool                        body;

    if (u->headers_in.headers.elts == NULL
        && rx_array_init(&u->headers_in.headers, r->pool, 16,
                         sizeof(rx_table_elt_t)) != RX_OK) {
        return RX_ERROR;
    }
    rx_http_fastcgi_reinit_request(u);
    body = flcf->upstream.pass_request_body && r->request_body
           && (u->streaming || rx_chain_size(r->request_body->bufs) > 0
               || (r->request_body->file
                   && r->request_body->file->written > 0));
    b = rx_http_fastcgi_begin_and_params(r, flcf, !body);
    if (b == NULL) {
        return RX_ERROR;
    }
    u->request_bufs = NULL;
    ll = append(r, &u->request_bufs, b);
    if (ll == NULL) {
        return RX_ERROR;
    }
    if (!body || u->streaming) {
        return RX_OK;   /* the empty STDIN is in b, or records follow */
    }
    if (stdin_records(r, ll, true) == NULL) {
        return RX_ERROR;
    }
    return RX_OK;
}

void
rx_http_fastcgi_reinit_request(rx_http_upstream_t *u)
{
    rx_http_fastcgi_ctx_t         *ctx = u->proto;
    rx_http_upstream_headers_in_t *h = &u->headers_in;

    rx_fcgi_decoder_init(&ctx->dec);
    ctx->hlen = ctx->hparsed = ctx->err_len = 0;
    ctx->has_status = ctx->stdout_done = ctx->header_done = false;
    ctx->length_left = -1;
    h->headers.nelts = 0;
    h->status = 0;
    rx_str_null(&h->status_line);
    h->content_length_n = -1;
    h->chunked = h->connection_close = false;
    h->location = h->x_accel_redirect = h->x_accel_buffering = NULL;
}

/* What a STDERR record said: logged in nginx's words, without the
 * trailing newlines and dots; fastcgi_catch_stderr turns it into an
 * error (RX_DECLINED). */
static rx_int_t
stderr_flush(rx_http_upstream_t *u, rx_http_fastcgi_ctx_t *ctx)
{
    rx_http_fastcgi_loc_conf_t *flcf = rx_http_get_module_loc_conf(u->r,
                                          rx_http_fastcgi_module);
    rx_str_t                   *pat;
    size_t                      n = ctx->err_len;
    rx_uint_t                   i;

    ctx->err_len = 0;
    while (n && (ctx->err[n - 1] == '\n' || ctx->err[n - 1] == '\r'
                 || ctx->err[n - 1] == '.' || ctx->err[n - 1] == ' ')) {
        n--;
    }
    if (n == 0) {
        return RX_OK;
    }
    rx_http_request_log_error_action(u->r, RX_LOG_ERR, 0, u->action,
                             "FastCGI sent in stderr: \"%.*s\"", (int) n,
                             ctx->err);
    pat = flcf->catch_stderr ? flcf->catch_stderr->elts : NULL;
    for (i = 0; pat && i < flcf->catch_stderr->nelts; i++) {
        if (memmem(ctx->err, n, pat[i].data, pat[i].len)) {
            return RX_DECLINED;
        }
    }
    return RX_OK;
}

/* Collects STDERR text; a record longer than what one log line holds is
 * logged in several lines. */
#define RX_FCGI_STDERR_MAX  (RX_MAX_ERROR_STR - 512)

static rx_int_t
stderr_add(rx_http_upstream_t *u, rx_http_fastcgi_ctx_t *ctx, const char *data,
    size_t len)
{
    size_t n;

    if (ctx->err == NULL) {
        ctx->err = rx_pnalloc(u->r->pool, RX_FCGI_STDERR_MAX);
        if (ctx->err == NULL) {
            return RX_ERROR;
        }
        ctx->err_cap = RX_FCGI_STDERR_MAX;
    }
    while (len) {
        n = rx_min(len, ctx->err_cap - ctx->err_len);
        memcpy(ctx->err + ctx->err_len, data, n);
        ctx->err_len += n;
        data += n;
        len -= n;
        if (ctx->err_len == ctx->err_cap) {
            rx_int_t rc = stderr_flush(u, ctx);
            if (rc != RX_OK) {
                return rc;
            }
        }
    }
    return RX_OK;
}

/* The empty line was seen: the status as CGI defines it. */
static void
header_complete(rx_http_upstream_t *u, rx_http_fastcgi_ctx_t *ctx)
{
    rx_http_upstream_headers_in_t *h = &u->headers_in;
    rx_http_request_t             *r = u->r;

    ctx->header_done = true;
    if (!ctx->has_status) {
        /* a Location without Status is a 302 whatever its form, as in
         * nginx: CGI's "local redirect" (RFC 3875 6.2.2) would let a
         * script's open redirect reach internal locations; X-Accel-Redirect
         * is the way */
        h->status = h->location ? RX_HTTP_MOVED_TEMPORARILY : RX_HTTP_OK;
    }
    if (r->method == RX_HTTP_HEAD) {
        /* a response to HEAD has the length of a body it does not carry */
        ctx->length_left = -1;
    } else if (h->status == RX_HTTP_NO_CONTENT
               || h->status == RX_HTTP_NOT_MODIFIED) {
        /* no body whatever its Content-Length says: STDOUT after the
         * header is dropped (with nginx's warning), as nginx */
        ctx->length_left = 0;
    } else {
        ctx->length_left = h->content_length_n;
    }
}

/* The length of the CGI header when all of it (up to the empty line) is
 * in data; 0 when it is not. */
static size_t
whole_header(const char *data, size_t len)
{
    const char *p = data, *end = data + len, *lf;

    while (p < end && (lf = memchr(p, '\n', (size_t) (end - p))) != NULL) {
        if (lf == p || (lf == p + 1 && *p == '\r')) {
            return (size_t) (lf + 1 - data);
        }
        p = lf + 1;
    }
    return 0;
}

/* A piece of STDOUT while the header is incomplete. *rest: how many of its
 * bytes follow the header (body). When the first piece holds the whole
 * header (the usual case: one record), its lines are parsed where they
 * are: the engine's header buffer, which the request keeps. Otherwise the
 * pieces are gathered in hbuf first. */
static rx_int_t
header_text(rx_http_upstream_t *u, rx_http_fastcgi_ctx_t *ctx,
    const rx_fcgi_event_t *ev, size_t *rest)
{
    size_t      cap = u->conf->buffer_size, take, whole;
    const char *text;
    rx_str_t    name, value;
    rx_int_t    rc;

    if (ctx->hlen == 0 && (whole = whole_header(ev->data, ev->len)) != 0
        && whole <= cap) {
        text = ev->data;
        take = ev->len;
        ctx->hlen = take;
    } else {
        if (ctx->hbuf == NULL
            && (ctx->hbuf = rx_pnalloc(u->r->pool, cap)) == NULL) {
            return RX_ERROR;
        }
        take = rx_min(ev->len, cap - ctx->hlen);
        memcpy(ctx->hbuf + ctx->hlen, ev->data, take);
        ctx->hlen += take;
        text = ctx->hbuf;
    }
    for ( ;; ) {
        rc = rx_fcgi_parse_header_line(text, ctx->hlen, &ctx->hparsed,
                                       &name, &value);
        if (rc == RX_OK) {
            rc = rx_http_cgi_add_header(u, &name, &value, 0,
                                        &ctx->has_status);
            if (rc != RX_OK) {
                return rc;
            }
            continue;
        }
        if (rc == RX_DONE) {
            *rest = ctx->hlen - ctx->hparsed + (ev->len - take);
            ctx->hlen = ctx->hparsed;
            header_complete(u, ctx);
            return RX_OK;
        }
        if (rc == RX_ERROR) {
            u->error = "upstream sent invalid header";
            return RX_HTTP_UPSTREAM_INVALID_HEADER;
        }
        if (ctx->hlen == cap) {
            u->error = "upstream sent too big header";
            return RX_HTTP_UPSTREAM_INVALID_HEADER;
        }
        return RX_AGAIN;
    }
}

static rx_int_t
check_id(rx_http_upstream_t *u, const rx_fcgi_event_t *ev)
{
    if (ev->id == RX_FCGI_ID) {
        return RX_OK;
    }
    u->error = "upstream sent unexpected FastCGI request id";
    return RX_ERROR;
}

rx_int_t
rx_http_fastcgi_process_header(rx_http_upstream_t *u, const char *data,
    size_t len, size_t *used)
{
    rx_http_fastcgi_ctx_t *ctx = u->proto;
    const char            *pos = data, *end = data + len;
    rx_fcgi_event_t        ev;
    rx_int_t               rc;
    size_t                 rest;

    for ( ;; ) {
        rc = rx_fcgi_decode(&ctx->dec, &pos, end, &ev);
        if (rc == RX_AGAIN) {
            *used = len;
            return RX_AGAIN;
        }
        if (rc == RX_ERROR) {
            u->error = ctx->dec.error;
            return RX_HTTP_UPSTREAM_INVALID_HEADER;
        }
        if (check_id(u, &ev) != RX_OK) {
            return RX_HTTP_UPSTREAM_INVALID_HEADER;
        }
        if (ev.kind == RX_FCGI_EV_CONTENT) {
            if (ev.type == RX_FCGI_STDOUT) {
                rest = 0;
                rc = header_text(u, ctx, &ev, &rest);
                if (rc == RX_OK) {
                    rx_fcgi_decoder_unread(&ctx->dec, rest);
                    *used = (size_t) (pos - data) - rest;
                    return RX_OK;
                }
                if (rc != RX_AGAIN) {
                    return rc == RX_ERROR ? RX_ERROR : RX_HTTP_UPSTREAM_INVALID_HEADER;
                }
            } else if (ev.type == RX_FCGI_STDERR) {
                rc = stderr_add(u, ctx, ev.data, ev.len);
                if (rc != RX_OK) {
                    return rc == RX_ERROR ? RX_ERROR : RX_HTTP_UPSTREAM_INVALID_HEADER;
                }
            }
            continue;            /* other types are skipped */
        }
        if (ev.type == RX_FCGI_STDERR) {
            if (stderr_flush(u, ctx) != RX_OK) {
                return RX_HTTP_UPSTREAM_INVALID_HEADER;
            }
        } else if (ev.type == RX_FCGI_END_REQUEST
                   || (ev.type == RX_FCGI_STDOUT && ev.content_len == 0)) {
            u->error = "upstream prematurely closed FastCGI stdout";
            if (ev.type == RX_FCGI_END_REQUEST && ev.protocol_status != 0) {
                u->error = "upstream sent FastCGI END_REQUEST with a non-zero "
                           "protocolStatus";
            }
            return RX_HTTP_UPSTREAM_INVALID_HEADER;
        }
    }
}

/* Body bytes of STDOUT; a Content-Length the script gave is honoured:
 * what goes beyond it is dropped (logged once, as nginx). */
static rx_int_t
body_bytes(rx_http_upstream_t *u, rx_http_fastcgi_ctx_t *ctx, const char *data,
    size_t len)
{
    if (ctx->length_left == -2) {
        return RX_OK;
    }
    if (ctx->length_left >= 0) {
        if ((int64_t) len > ctx->length_left) {
            rx_http_request_log_error_action(u->r, RX_LOG_WARN, 0, u->action,
                "upstream sent more data than specified in "
                "\"Content-Length\" header");
            len = (size_t) ctx->length_left;
            ctx->length_left = -2;
        } else {
            ctx->length_left -= (int64_t) len;
        }
    }
    return len ? rx_http_upstream_body(u, data, len) : RX_OK;
}

rx_int_t
rx_http_fastcgi_input_filter(rx_http_upstream_t *u, const char *data,
    size_t len)
{
    rx_http_fastcgi_ctx_t      *ctx = u->proto;
    rx_http_fastcgi_loc_conf_t *flcf = rx_http_get_module_loc_conf(u->r,
                                          rx_http_fastcgi_module);
    const char                 *pos = data, *end = data + len;
    rx_fcgi_event_t             ev;
    rx_int_t                    rc;

    for ( ;; ) {
        rc = rx_fcgi_decode(&ctx->dec, &pos, end, &ev);
        if (rc == RX_AGAIN) {
            return RX_OK;
        }
        if (rc == RX_ERROR) {
            u->error = ctx->dec.error;
            return RX_ERROR;
        }
        if (check_id(u, &ev) != RX_OK) {
            return RX_ERROR;
        }
        if (ev.kind == RX_FCGI_EV_CONTENT) {
            if (ev.type == RX_FCGI_STDOUT && !ctx->stdout_done) {
                rc = body_bytes(u, ctx, ev.data, ev.len);
            } else if (ev.type == RX_FCGI_STDERR) {
                rc = stderr_add(u, ctx, ev.data, ev.len);
            }
            if (rc != RX_OK) {
                return RX_ERROR;
            }
            continue;
        }
        if (ev.type == RX_FCGI_STDERR) {
            if (stderr_flush(u, ctx) != RX_OK) {
                return RX_ERROR;
            }
        } else if (ev.type == RX_FCGI_STDOUT && ev.content_len == 0) {
            ctx->stdout_done = true;
        } else if (ev.type == RX_FCGI_END_REQUEST) {
            if (ev.protocol_status != 0) {
                u->error = "upstream sent FastCGI END_REQUEST with a non-zero "
                           "protocolStatus";
                return RX_ERROR;
            }
            if (ctx->length_left > 0) {
                u->error = "upstream prematurely closed FastCGI stdout";
                return RX_ERROR;
            }
            u->body_done = 1;
            /* the connection serves another request only when FastCGI
             * was asked to keep it and nothing follows the end */
            u->keepalive = flcf->keep_conn && pos == end;
            return RX_OK;
        }
    }
}

rx_int_t
rx_http_fastcgi_on_eof(rx_http_upstream_t *u)
{
    /* without END_REQUEST the response may be cut short */
    return RX_ERROR;
}
