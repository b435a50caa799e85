/*
 * cache_serve.c: where proxy and fastcgi meet the cache. Before going
 * upstream a request looks its key up (http/http_cache_conf.c); a hit is
 * answered from the file: opened and its head read through the ring, the
 * stored header replayed, the body sent by the static module's path
 * (sendfile or splice: zero-copy when the location allows). A file that
 * vanished or is broken turns the hit into a miss.
 */
#include <fcntl.h>
#include "http.h"
#include "http_cache.h"
#include "http_date.h"
#include "http_range.h"
#include "static.h"
#include "cache_serve.h"
#include "cache_hot.h"

#define HEAD_READ  8192          /* the first read: most headers fit */
#define WHOLE_READ (64 * 1024)
#define MAX_RANGES 64            /* static's most (max_ranges) */   /* a file this small is read whole: its
                                    body leaves from memory, one read less */

static void serve_op(rx_http_request_t *r, const rx_cqe_t *cqe);

static void
close_fd(void *data)
{
    rx_http_cache_req_t *ctx = data;

    if (ctx->fd != -1) {
        close(ctx->fd);
        ctx->fd = -1;
    }
}

static void
end(rx_http_request_t *r, rx_int_t rc)
{
    if (rc != RX_AGAIN && rc != RX_OK) {
        rx_http_finalize_request(r, rc);
    }
}

/* The file is not what the index said: forgotten, and the request goes
 * upstream as a miss (its response takes the entry's place). */
static void
to_miss(rx_http_request_t *r, const char *why, int err)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;

    if (why) {
        rx_http_request_log_error(r, RX_LOG_CRIT, err, "cache file \"%s\" %s",
                                  ctx->file, why);
    }
    rx_http_cache_forget(ctx->cache, ctx->md5);
    close_fd(ctx);
    r->op_handler = NULL;
    r->after_response = NULL;            /* no stale copy: fetched now */
    ctx->background = false;
    r->cache_status = RX_HTTP_CACHE_MISS;
    end(r, ctx->miss(r));
}

static void
read_head(rx_http_request_t *r, size_t size)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;
    rx_cache_hot_t      *hot = NULL;

    /* a whole small file: read into a buffer the worker may keep */
    if ((int64_t) size == ctx->entry.fsize) {
        hot = rx_cache_hot_new(r, size);
    }
    ctx->hot = hot;
    ctx->head_buf = hot ? hot->data : rx_pnalloc(r->pool, size);
    if (ctx->head_buf == NULL) {
        end(r, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    ctx->head_size = size;
    rx_ring_read(ctx->fd, ctx->head_buf, (unsigned) size, 0,
                 rx_http_op_ud(r, RX_OP_READ));
}

static rx_table_elt_t *
push_header(rx_http_request_t *r, char *name, size_t nlen, char *value,
    size_t vlen)
{
    rx_table_elt_t *h = rx_array_push(&r->headers_out.headers);

    if (h == NULL) {
        return NULL;
    }
    memset(h, 0, sizeof(*h));
    h->key.data = name;
    h->key.len = nlen;
    h->value.data = value;
    h->value.len = vlen;
    return h;
}

#define IS(name, lit)  (nlen == sizeof(lit) - 1 && strncasecmp(name, lit, nlen) == 0)

/* The stored header ("200 OK\r\nName: value\r\n...\r\n") into
 * r->headers_out. RX_OK or RX_ERROR (not a header). */
rx_int_t
rx_http_cache_replay_header(rx_http_request_t *r, char *p, char *last)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    char                  *eol, *colon, *v;
    rx_table_elt_t        *h;
    size_t                 nlen;

    eol = memmem(p, (size_t) (last - p), "\r\n", 2);
    if (eol == NULL || eol - p < 3) {
        return RX_ERROR;
    }
    ho->status = (rx_uint_t) rx_atoi(p, 3);
    ho->status_line.data = p;
    ho->status_line.len = (size_t) (eol - p);
    for (p = eol + 2; p < last; p = eol + 2) {
        eol = memmem(p, (size_t) (last - p), "\r\n", 2);
        if (eol == NULL) {
            return RX_ERROR;
        }
        if (eol == p) {
            return RX_OK;                /* the empty line */
        }
        colon = memchr(p, ':', (size_t) (eol - p));
        if (colon == NULL) {
            return RX_ERROR;
        }
        nlen = (size_t) (colon - p);
        for (v = colon + 1; v < eol && *v == ' '; v++) { }
        if (IS(p, "content-type")) {
            ho->content_type.data = v;
            ho->content_type.len = (size_t) (eol - v);
            continue;
        }
        h = push_header(r, p, nlen, v, (size_t) (eol - v));
        if (h == NULL) {
            return RX_ERROR;
        }
        if (IS(p, "etag")) ho->etag = h;
        else if (IS(p, "expires")) ho->expires = h;
        else if (IS(p, "content-encoding")) ho->content_encoding = h;
        else if (IS(p, "accept-ranges")) ho->accept_ranges = h;
        else if (IS(p, "server")) ho->server = h;
        else if (IS(p, "location") && (v == eol || *v != '/')) ho->location = h;
    }
    return RX_ERROR;
}

/* An entity tag without its weakness (W/), for the weak comparison of
 * If-None-Match. */
static void
opaque(const char *p, size_t len, rx_str_t *out)
{
    if (len > 2 && p[0] == 'W' && p[1] == '/') {
        p += 2;
        len -= 2;
    }
    out->data = (char *) p;
    out->len = len;
}

static bool
etag_matches(const rx_str_t *list, const rx_table_elt_t *etag)
{
    const char *p = list->data, *end = list->data + list->len, *start, *e;
    rx_str_t    mine, theirs;

    opaque(etag->value.data, etag->value.len, &mine);
    while (p < end) {
        while (p < end && (*p == ' ' || *p == ',' || *p == '\t')) p++;
        if (p == end) break;
        if (*p == '*') {
            return true;
        }
        for (start = p; p < end && *p != ','; p++) { }
        for (e = p; e > start && (e[-1] == ' ' || e[-1] == '\t'); e--) { }
        opaque(start, (size_t) (e - start), &theirs);
        if (theirs.len == mine.len && memcmp(theirs.data, mine.data, mine.len) == 0) {
            return true;
        }
    }
    return false;
}

/* The client's If-None-Match / If-Modified-Since against the stored
 * response's ETag and Last-Modified (as nginx's not_modified filter does
 * for a cached response): 304 or 0. */
static rx_uint_t
not_modified(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_headers_in_t    *hi = &r->headers_in;
    rx_table_elt_t          *h = r->headers_out.headers.elts;
    const rx_table_elt_t    *lm = NULL;
    time_t                   t, mtime;
    rx_uint_t                i;

    if (r->headers_out.status != RX_HTTP_OK) {
        return 0;
    }
    if (hi->if_none_match) {
        return r->headers_out.etag
               && etag_matches(&hi->if_none_match->value, r->headers_out.etag)
               ? RX_HTTP_NOT_MODIFIED : 0;
    }
    if (hi->if_modified_since == NULL
        || clcf->if_modified_since == RX_HTTP_IMS_OFF) {
        return 0;
    }
    for (i = 0; i < r->headers_out.headers.nelts; i++) {
        if (h[i].key.len == 13 && strncasecmp(h[i].key.data, "last-modified", 13) == 0) {
            lm = &h[i];
        }
    }
    if (lm == NULL) {
        return 0;
    }
    mtime = rx_http_parse_date(lm->value.data, lm->value.len);
    t = rx_http_parse_date(hi->if_modified_since->value.data,
                           hi->if_modified_since->value.len);
    if (mtime == -1 || t == -1) {
        return 0;
    }
    return (clcf->if_modified_since == RX_HTTP_IMS_EXACT ? t == mtime
                                                         : mtime <= t)
           ? RX_HTTP_NOT_MODIFIED : 0;
}

/* Range on a stored 200 (an If-Range that does not hold, or more ranges
 * than max_ranges, get the whole body, as nginx's range filter). 0: the
 * whole body; 206 with rg[0 .. *n) set (several: multipart/byteranges,
 * sent by static's path); 416. */
static rx_uint_t
hit_range(rx_http_request_t *r, int64_t len, rx_http_range_t *rg,
    rx_uint_t max, rx_uint_t *n)
{
    rx_http_headers_in_t *hi = &r->headers_in;
    rx_int_t              rc;
    rx_str_t              v;

    if (hi->range == NULL || r->headers_out.status != RX_HTTP_OK) {
        return 0;
    }
    if (hi->if_range && (r->headers_out.etag == NULL
            || hi->if_range->value.len != r->headers_out.etag->value.len
            || memcmp(hi->if_range->value.data, r->headers_out.etag->value.data,
                      hi->if_range->value.len) != 0)) {
        return 0;
    }
    *n = 0;
    rc = rx_http_parse_range(&hi->range->value, len, rg,
                             rx_min(max, rx_http_static_max_ranges(r)), n);
    if (rc == RX_HTTP_RANGE_IGNORE) {
        return 0;
    }
    if (rc == RX_HTTP_RANGE_OK && *n > 1) {
        return RX_HTTP_PARTIAL_CONTENT;      /* Content-Range per part */
    }
    v.data = rx_pnalloc(r->pool, 80);
    if (v.data == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (rc == RX_HTTP_RANGE_UNSATISFIABLE) {
        v.len = (size_t) sprintf(v.data, "bytes */%" PRId64, len);
        (void) rx_http_add_header_out(r, "Content-Range", &v);
        return RX_HTTP_RANGE_NOT_SATISFIABLE;
    }
    v.len = (size_t) sprintf(v.data, "bytes %" PRId64 "-%" PRId64 "/%" PRId64,
                             rg->start, rg->end - 1, len);
    if (rx_http_add_header_out(r, "Content-Range", &v) == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    r->headers_out.status = RX_HTTP_PARTIAL_CONTENT;
    r->headers_out.status_line.len = 0;
    return RX_HTTP_PARTIAL_CONTENT;
}

/* The stored response (its header replayed into r), or what the client's
 * conditions and Range make of it; res bytes of the file are in
 * head_buf. Returns as a content handler does. */
static rx_int_t
send_stored(rx_http_request_t *r, const rx_http_cache_head_t *h, ssize_t res)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;
    rx_http_range_t      rgs[MAX_RANGES];
    rx_http_range_t      rg = { 0, h->body_len };
    rx_chain_t          *cl;
    rx_uint_t            st, n = 1;
    rx_str_t             path;

    if (not_modified(r) == RX_HTTP_NOT_MODIFIED) {
        r->headers_out.status = RX_HTTP_NOT_MODIFIED;
        r->headers_out.status_line.len = 0;
        r->headers_out.content_type.len = 0;
        r->headers_out.content_length_n = -1;
        if (rx_http_send_header(r) == RX_ERROR) {
            return RX_ERROR;
        }
        return rx_http_output_filter(r, NULL);
    }
    st = hit_range(r, h->body_len, rgs, MAX_RANGES, &n);
    if (st != 0 && st != RX_HTTP_PARTIAL_CONTENT) {
        return (rx_int_t) st;
    }
    path.data = ctx->file;
    path.len = strlen(ctx->file);
    if (st == RX_HTTP_PARTIAL_CONTENT && n > 1) {
        return rx_http_static_send_multipart(r, ctx->fd, h->body_start,
                                             h->body_len, rgs, n, &path);
    }
    if (st == RX_HTTP_PARTIAL_CONTENT) {
        rg = rgs[0];
    }
    r->headers_out.content_length_n = rg.end - rg.start;
    if (rx_http_send_header(r) == RX_ERROR) {
        return RX_ERROR;
    }
    if (r->header_only || rg.end == rg.start) {
        return rx_http_output_filter(r, NULL);
    }
    if ((int64_t) res == (int64_t) h->body_start + h->body_len) {
        cl = rx_chain_from_text(r->pool, "", 0, true);
        if (cl == NULL) {
            return RX_ERROR;
        }
        cl->buf->start = cl->buf->pos = ctx->head_buf + h->body_start + rg.start;
        cl->buf->end = cl->buf->last = ctx->head_buf + h->body_start + rg.end;
        return rx_http_output_filter(r, cl);
    }
    return rx_http_static_send_file(r, ctx->fd, h->body_start + rg.start,
                                    h->body_start + rg.end, &path);
}

/* The head is read: the stored response goes out. */
static void
on_head(rx_http_request_t *r, ssize_t res)
{
    rx_http_cache_req_t  *ctx = r->cache_ctx;
    rx_http_cache_head_t  h;

    if (res < (ssize_t) sizeof(h)) {
        to_miss(r, res < 0 ? "could not be read" : "is too short",
                res < 0 ? (int) -res : 0);
        return;
    }
    memcpy(&h, ctx->head_buf, sizeof(h));
    if (memcmp(h.magic, RX_HTTP_CACHE_MAGIC, 8) != 0
        || memcmp(h.md5, ctx->md5, 16) != 0 || h.body_start < sizeof(h)) {
        to_miss(r, "has a broken head", 0);
        return;
    }
    if ((size_t) res < h.body_start) {
        if (ctx->head_size >= h.body_start) {
            to_miss(r, "is too short", 0);
        } else {
            read_head(r, h.body_start);      /* a large header: once more */
        }
        return;
    }
    if (ctx->refreshed_until > h.valid_until && !ctx->head_written) {
        /* a 304 refreshed the entry: its file's head says so too (the
         * loader reads it after a restart); the serve goes on after */
        ctx->head_written = true;
        ctx->head_res = res;
        memcpy(ctx->head_buf + offsetof(rx_http_cache_head_t, valid_until),
               &ctx->refreshed_until, sizeof(ctx->refreshed_until));
        rx_ring_write(ctx->fd,
            ctx->head_buf + offsetof(rx_http_cache_head_t, valid_until),
            sizeof(ctx->refreshed_until),
            offsetof(rx_http_cache_head_t, valid_until),
            rx_http_op_ud(r, RX_OP_WRITE));
        return;
    }
    if (r->client_gone) {
        /* a background update's revalidation: nothing to send */
        r->op_handler = NULL;
        rx_http_gone_end(r);
        return;
    }
    if (rx_http_cache_replay_header(r, ctx->head_buf + sizeof(h) + h.key_len,
                      ctx->head_buf + h.body_start) != RX_OK) {
        to_miss(r, "has a broken header", 0);
        return;
    }
    r->op_handler = NULL;
    if (ctx->hot && (int64_t) res == ctx->entry.fsize
        && (uint64_t) res == (uint64_t) h.body_start + (uint64_t) h.body_len) {
        /* sound and whole: later hits of this file need no file I/O */
        rx_cache_hot_keep(ctx->hot, ctx->cache, ctx->md5, ctx->entry.gen);
    }
    end(r, send_stored(r, &h, res));
}

/* A hit of a file the worker holds (cache_hot.c): checked when kept. */
static rx_int_t
serve_hot(rx_http_request_t *r, rx_cache_hot_t *hot)
{
    rx_http_cache_req_t  *ctx = r->cache_ctx;
    rx_http_cache_head_t  h;

    memcpy(&h, hot->data, sizeof(h));
    ctx->hot = hot;
    ctx->head_buf = hot->data;
    ctx->head_size = hot->len;
    if (rx_http_cache_replay_header(r, hot->data + sizeof(h) + h.key_len,
                                    hot->data + h.body_start) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    return send_stored(r, &h, (ssize_t) hot->len);
}

static void
serve_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;
    rx_pool_cleanup_t   *cln;

    switch (rx_op_kind(cqe->user_data)) {
    case RX_OP_OPEN:
        if (cqe->res < 0) {
            to_miss(r, cqe->res == -ENOENT ? NULL : "could not be opened",
                    -cqe->res);
            return;
        }
        ctx->fd = cqe->res;
        cln = rx_pool_cleanup_add(r->pool, 0);
        if (cln == NULL) {
            close_fd(ctx);
            end(r, RX_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
        cln->handler = close_fd;
        cln->data = ctx;
        read_head(r, (size_t) (ctx->entry.fsize <= WHOLE_READ
                               ? ctx->entry.fsize : HEAD_READ));
        return;
    case RX_OP_READ:
        on_head(r, cqe->res);
        return;
    case RX_OP_WRITE:
        if (cqe->res != (int) sizeof(ctx->refreshed_until)) {
            rx_http_request_log_error(r, RX_LOG_CRIT,
                cqe->res < 0 ? -cqe->res : 0, "cache file \"%s\": its new "
                "expiry could not be written (a restart revalidates it "
                "again)", ctx->file);
        }
        on_head(r, ctx->head_res);
        return;
    default:
        return;
    }
}

/* Answers r from its entry's file (a hit, a stale copy). */
static rx_int_t
serve_file(rx_http_request_t *r)
{
    rx_http_cache_req_t *ctx = r->cache_ctx;
    rx_cache_hot_t      *hot;
    rx_int_t             rc = rx_http_discard_request_body(r);

    if (rc != RX_OK) {
        return rc;
    }
    /* a hot file, for a plain hit (a range may need the fd; a refreshed
     * entry's file learns its new expiry when opened) */
    if (r->cache_status == RX_HTTP_CACHE_HIT && !ctx->refreshed_until
        && r->headers_in.range == NULL && !r->client_gone
        && (hot = rx_cache_hot_find(r, ctx->cache, ctx->md5, ctx->entry.gen))
           != NULL) {
        return serve_hot(r, hot);
    }
    r->op_handler = serve_op;
    /* read-write when a 304 refreshed it: its head gets the new time */
    rx_ring_openat(AT_FDCWD, ctx->file, (ctx->refreshed_until ? O_RDWR
                   : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW, 0,
                   rx_http_op_ud(r, RX_OP_OPEN));
    return RX_AGAIN;
}

/*
 * *_cache_background_update: the stale copy went out whole (and was
 * logged); the request now fetches the entry as a miss would, with
 * client_gone set, so the response is stored and nothing of it reaches
 * the client. The connection's next request waits for its end, as
 * nginx's request waits for its background subrequest.
 */
static rx_int_t
background_update(rx_http_request_t *r)
{
    rx_http_cache_req_t   *ctx = r->cache_ctx;
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_int_t               rc;

    close_fd(ctx);
    if (!ctx->claimed) {
        return RX_OK;                    /* nothing to fetch any more */
    }
    r->client_gone = 1;
    r->response_done = 0;
    r->header_sent = 0;
    r->header_only = 0;
    r->chunked = 0;
    r->err_status = 0;
    r->out = NULL;
    r->filter_buffered = 0;
    r->op_handler = NULL;
    r->write_handler = NULL;
    memset(ho, 0, sizeof(*ho));
    if (rx_array_init(&ho->headers, r->pool, 8, sizeof(rx_table_elt_t))
        != RX_OK) {
        return RX_OK;
    }
    ho->content_length_n = -1;
    ho->last_modified_time = -1;
    r->cache_status = RX_HTTP_CACHE_EXPIRED;
    rc = ctx->miss(r);
    if (rc != RX_OK && rc != RX_AGAIN && rc != RX_DONE) {
        rx_http_gone_end(r);             /* could not start: ends quietly */
    }
    return RX_AGAIN;
}

rx_int_t
rx_http_cache_handler(rx_http_request_t *r, const rx_http_cache_conf_t *conf,
    rx_int_t (*go)(rx_http_request_t *r))
{
    rx_http_cache_req_t *ctx;
    rx_int_t             rc = rx_http_cache_purge(r, conf);

    if (rc != RX_DECLINED) {
        return rc;               /* a purge is answered here */
    }
    rc = rx_http_cache_begin(r, conf);
    if (rc == RX_ERROR) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (rc == RX_DECLINED) {
        return go(r);
    }
    ctx = r->cache_ctx;
    ctx->miss = go;
    ctx->serve = serve_file;
    if (rc == RX_AGAIN) {
        return rx_http_cache_wait(r, conf, go);
    }
    if (ctx->background) {
        r->after_response = background_update;
    } else if (r->cache_status != RX_HTTP_CACHE_HIT
               && r->cache_status != RX_HTTP_CACHE_UPDATING) {
        return go(r);
    }
    return serve_file(r);
}
