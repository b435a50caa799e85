/*
 * static.c: the static module: files for URIs. The file is opened through
 * the worker's ring (a cold directory lookup never blocks the loop), then
 * answered with validators (ETag, Last-Modified), conditional and range
 * requests honoured; the body (read, sendfile, splice) is
 * static_send.c's.
 *
 * The open itself (disable_symlinks, open_file_cache) is
 * http/http_open_file.c's; the fd is the request's until its pool goes.
 */
#include "http.h"
#include "static.h"
#include "static_send.h"
#include "http_date.h"
#include "clock.h"

/* sendfile_min_size's default: sendfile(2) measured cheaper than the read
 * path from about 4 KiB up (session 9: 16 KiB 7.3 against 9.4 us/req),
 * splices (io-wq hand-offs) only from about 64 KiB */
#define SENDFILE_MIN       (4 * 1024)
#define SPLICE_MIN         (64 * 1024)

static rx_int_t static_postconfiguration(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

static const rx_command_t static_commands[] = {
    { "max_ranges", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, rx_conf_set_num_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_static_conf_t, max_ranges), NULL },
    { "sendfile_splice", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_FLAG, rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_static_conf_t, splice), NULL },
    { "sendfile_min_size", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE1, rx_conf_set_size_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_static_conf_t, zc_min), NULL },
    rx_null_command
};

static const rx_http_module_t static_ctx = {
    NULL, static_postconfiguration, NULL, NULL, NULL, NULL, create_conf,
    merge_conf
};

rx_module_t rx_http_static_module = {
    "rx_http_static_module", 0, 0, RX_HTTP_MODULE, &static_ctx,
    static_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_static_conf_t *scf = rx_pcalloc(cf->pool, sizeof(*scf));

    if (scf) {
        scf->max_ranges = RX_CONF_UNSET;
        scf->splice = RX_CONF_UNSET;
        scf->zc_min = RX_CONF_UNSET_SIZE;
    }
    return scf;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_static_conf_t *p = prev, *c = conf;

    rx_conf_merge_value(c->max_ranges, p->max_ranges, STATIC_MAX_RANGES);
    rx_conf_merge_value(c->splice, p->splice, 0);
    rx_conf_merge_size(c->zc_min, p->zc_min,
                       c->splice ? SPLICE_MIN : SENDFILE_MIN);
    if (c->max_ranges > STATIC_MAX_RANGES) {
        c->max_ranges = STATIC_MAX_RANGES;
    }
    return RX_CONF_OK;
}

/* A zeroed response state (r->ctx) with room for one range; NULL when out
 * of memory. */
static rx_http_static_ctx_t *
ctx_new(rx_http_request_t *r)
{
    rx_http_static_ctx_t *ctx = rx_pcalloc(r->pool, sizeof(*ctx));

    if (ctx) {
        ctx->ranges = &ctx->one;
        ctx->fd = -1;
    }
    return ctx;
}

/* If-Range: ranges apply only while the validator still matches. */
static bool
if_range_holds(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_str_t *v;

    if (r->headers_in.if_range == NULL) {
        return true;
    }
    v = &r->headers_in.if_range->value;
    if (v->len && (v->data[0] == '"' || (v->len > 2 && v->data[0] == 'W'))) {
        return v->len == ctx->etag.len
               && memcmp(v->data, ctx->etag.data, v->len) == 0;
    }
    return rx_http_parse_date(v->data, v->len) == ctx->mtime;
}

/* Several ranges: multipart/byteranges with a known length. */
static rx_int_t
plan_multipart(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_uint_t i;
    int64_t   len;

    ctx->multipart = true;
    {
        /* unique enough within the response: it must only not occur in
         * the parts, which are bytes of one file */
        static uint64_t seq;
        uint64_t b = (uint64_t) rx_time_msec * 7919 + ++seq;
        /* 20 digits, as nginx's boundary */
        snprintf(ctx->boundary, sizeof(ctx->boundary), "%020" PRIu64, b);
    }
    ctx->content_type = r->headers_out.content_type;
    len = 0;
    for (i = 0; i < ctx->nranges; i++) {
        len += (int64_t) rx_http_static_part_header(r, ctx, i).len
               + ctx->ranges[i].end - ctx->ranges[i].start;
    }
    len += (int64_t) (sizeof("\r\n--") - 1 + strlen(ctx->boundary)
                      + sizeof("--\r\n") - 1);
    r->headers_out.content_length_n = len;
    r->headers_out.content_type.data = rx_pnalloc(r->pool, 64);
    if (r->headers_out.content_type.data == NULL) return RX_ERROR;
    r->headers_out.content_type.len = (size_t) sprintf(
        r->headers_out.content_type.data,
        "multipart/byteranges; boundary=%s", ctx->boundary);
    return RX_OK;

}

/* Decides 200 / 206 / 416 and the body's extent; sets the headers. */
static rx_int_t
plan_ranges(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_http_static_conf_t *scf = rx_http_get_module_loc_conf(r,
                                     rx_http_static_module);
    rx_int_t               rc;
    char                  *cr;

    ctx->nranges = 0;
    if (r->headers_in.range == NULL || !if_range_holds(r, ctx)) {
        goto whole;
    }
    if (scf->max_ranges > 1) {
        ctx->ranges = rx_palloc(r->pool, (size_t) scf->max_ranges
                                         * sizeof(rx_http_range_t));
        if (ctx->ranges == NULL) {
            return RX_ERROR;
        }
    }
    rc = rx_http_parse_range(&r->headers_in.range->value, ctx->size,
                             ctx->ranges, (rx_uint_t) scf->max_ranges,
                             &ctx->nranges);
    if (rc == RX_HTTP_RANGE_IGNORE) {
        goto whole;
    }
    if (rc == RX_HTTP_RANGE_UNSATISFIABLE) {
        rx_str_t v;
        v.data = rx_pnalloc(r->pool, 48);
        if (v.data == NULL) return RX_ERROR;
        v.len = (size_t) sprintf(v.data, "bytes */%" PRId64, ctx->size);
        if (rx_http_add_header_out(r, "Content-Range", &v) == NULL) {
            return RX_ERROR;
        }
        return RX_HTTP_RANGE_NOT_SATISFIABLE;
    }
    r->headers_out.status = RX_HTTP_PARTIAL_CONTENT;
    if (ctx->nranges == 1) {
        rx_str_t v;
        cr = rx_pnalloc(r->pool, 80);
        if (cr == NULL) return RX_ERROR;
        v.data = cr;
        v.len = (size_t) sprintf(cr, "bytes %" PRId64 "-%" PRId64 "/%" PRId64,
                                 ctx->ranges[0].start, ctx->ranges[0].end - 1,
                                 ctx->size);
        if (rx_http_add_header_out(r, "Content-Range", &v) == NULL) {
            return RX_ERROR;
        }
        r->headers_out.content_length_n = ctx->ranges[0].end - ctx->ranges[0].start;
        return RX_OK;
    }
    return plan_multipart(r, ctx);

whole:
    /* as nginx: announced on the whole file only, not on a 206 or 416 */
    if (scf->max_ranges > 0) {
        static rx_str_t bytes = rx_string("bytes");
        if (rx_http_add_header_out(r, "Accept-Ranges", &bytes) == NULL) {
            return RX_ERROR;
        }
    }
    ctx->nranges = 1;
    ctx->ranges[0].start = 0;
    ctx->ranges[0].end = ctx->size;
    r->headers_out.content_length_n = ctx->size;
    return RX_OK;
}

static rx_int_t
redirect_directory(rx_http_request_t *r)
{
    rx_str_t loc;
    char    *p;

    loc.len = r->uri.len + 1 + (r->args.len ? 1 + r->args.len : 0);
    p = loc.data = rx_pnalloc(r->pool, loc.len + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    p += sprintf(p, "%.*s/", (int) r->uri.len, r->uri.data);
    if (r->args.len) {
        sprintf(p, "?%.*s", (int) r->args.len, r->args.data);
    }
    r->headers_out.location = rx_http_add_header_out(r, "Location", &loc);
    return r->headers_out.location ? RX_HTTP_MOVED_PERMANENTLY : RX_ERROR;
}

/* Lower-case hex of n, no leading zeros; returns the end. */
static char *
put_hex(char *p, unsigned long n)
{
    char tmp[2 * sizeof(n)], *t = tmp + sizeof(tmp);

    do {
        *--t = "0123456789abcdef"[n & 0xf];
        n >>= 4;
    } while (n);
    memcpy(p, t, (size_t) (tmp + sizeof(tmp) - t));
    return p + (tmp + sizeof(tmp) - t);
}

/* "mtime-size" in hex, quoted, as nginx's (printf's "\"%lx-%lx\"", which
 * costs more than the rest of the ETag's path). */
static size_t
etag(char *buf, unsigned long mtime, unsigned long size)
{
    char *p = buf;

    *p++ = '"';
    p = put_hex(p, mtime);
    *p++ = '-';
    p = put_hex(p, size);
    *p++ = '"';
    return (size_t) (p - buf);
}

/* The response's state ctx (r->ctx, path set) from the open file, and
 * the strong ETag nginx makes of mtime and size ("mtime-size" in hex).
 * RX_ERROR when out of memory. */
static rx_int_t
serve_ctx(rx_http_request_t *r, rx_http_static_ctx_t *ctx,
    const rx_http_open_file_t *of)
{
    r->ctx = ctx;
    r->op_handler = rx_http_static_op;
    ctx->fd = of->fd;
    ctx->size = of->size;
    ctx->mtime = of->mtime;
    ctx->nonblock = of->nonblock;
    ctx->content = of->content;
    ctx->etag.data = rx_pnalloc(r->pool, 48);
    if (ctx->etag.data == NULL) {
        return RX_ERROR;
    }
    ctx->etag.len = etag(ctx->etag.data, (unsigned long) ctx->mtime,
                         (unsigned long) ctx->size);
    return RX_OK;
}

/* 200 with the validators (Last-Modified, ETag unless `etag off`) and the
 * type: set before the conditionals, which a 304 answers with. */
static rx_int_t
set_validators(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    r->headers_out.status = RX_HTTP_OK;
    r->headers_out.last_modified_time = ctx->mtime;
    rx_http_set_content_type(r);
    if (clcf->etag) {
        r->headers_out.etag = rx_http_add_header_out(r, "ETag", &ctx->etag);
        if (r->headers_out.etag == NULL) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/*
 * Answers r with the open file of, as static does: validators,
 * conditional requests, ranges, then the body (static_send.c). ctx is
 * fresh from ctx_new with its path set (static_handler's own, so that a
 * request makes one). Returns as a content handler does.
 */
static rx_int_t
serve(rx_http_request_t *r, rx_http_static_ctx_t *ctx,
    const rx_http_open_file_t *of)
{
    rx_uint_t             status;
    rx_int_t              rc;
    bool                  empty;

    if (r->method == RX_HTTP_POST) {
        return RX_HTTP_NOT_ALLOWED;
    }
    rc = rx_http_discard_request_body(r);
    if (rc != RX_OK) {
        return rc;
    }
    if (serve_ctx(r, ctx, of) != RX_OK || set_validators(r, ctx) != RX_OK) {
        return RX_ERROR;
    }
    status = rx_http_test_preconditions(r, &ctx->etag, ctx->mtime);
    if (status == RX_HTTP_NOT_MODIFIED) {
        return rx_http_send_not_modified(r);
    }
    if (status) {
        return (rx_int_t) status;
    }
    rc = plan_ranges(r, ctx);
    if (rc != RX_OK) {
        return rc;
    }
    /* the length as planned: a filter (gzip) may hide it from the header */
    empty = r->headers_out.content_length_n == 0;
    if (rx_http_send_header(r) == RX_ERROR) {
        return RX_ERROR;
    }
    if (r->header_only || empty) {
        return rx_http_output_filter(r, NULL);
    }
    return rx_http_static_send_body(r, ctx);
}

/* path names the file in logs. gzip_static serves its .gz through this. */
rx_int_t
rx_http_static_serve(rx_http_request_t *r, const rx_str_t *path,
    const rx_http_open_file_t *of)
{
    rx_http_static_ctx_t *ctx = ctx_new(r);

    if (ctx == NULL) {
        return RX_ERROR;
    }
    ctx->path = *path;
    return serve(r, ctx, of);
}

rx_int_t
rx_http_static_send_file(rx_http_request_t *r, int fd, int64_t start,
    int64_t end, const rx_str_t *path)
{
    rx_http_static_ctx_t *ctx = ctx_new(r);

    if (ctx == NULL) {
        return RX_ERROR;
    }
    r->ctx = ctx;
    r->op_handler = rx_http_static_op;
    ctx->path = *path;
    ctx->fd = fd;
    ctx->size = end;
    ctx->ranges[0].start = start;
    ctx->ranges[0].end = end;
    ctx->nranges = 1;
    return rx_http_static_send_body(r, ctx);
}

rx_uint_t
rx_http_static_max_ranges(rx_http_request_t *r)
{
    rx_http_static_conf_t *scf = rx_http_get_module_loc_conf(r,
                                     rx_http_static_module);

    return (rx_uint_t) scf->max_ranges;
}

rx_int_t
rx_http_static_send_multipart(rx_http_request_t *r, int fd, int64_t base,
    int64_t size, const rx_http_range_t *ranges, rx_uint_t n,
    const rx_str_t *path)
{
    rx_http_static_ctx_t *ctx = ctx_new(r);
    rx_uint_t             i;

    if (ctx == NULL || n < 2 || n > STATIC_MAX_RANGES) {
        return RX_ERROR;
    }
    ctx->ranges = rx_palloc(r->pool, n * sizeof(rx_http_range_t));
    if (ctx->ranges == NULL) {
        return RX_ERROR;
    }
    r->ctx = ctx;
    r->op_handler = rx_http_static_op;
    ctx->path = *path;
    ctx->fd = fd;
    ctx->size = size;
    ctx->base = base;
    for (i = 0; i < n; i++) {
        ctx->ranges[i].start = base + ranges[i].start;
        ctx->ranges[i].end = base + ranges[i].end;
    }
    ctx->nranges = n;
    r->headers_out.status = RX_HTTP_PARTIAL_CONTENT;
    r->headers_out.status_line.len = 0;
    if (plan_multipart(r, ctx) != RX_OK
        || rx_http_send_header(r) == RX_ERROR) {
        return RX_ERROR;
    }
    if (r->header_only) {
        return rx_http_output_filter(r, NULL);
    }
    return rx_http_static_send_body(r, ctx);
}

/* nginx's answer to a failed open: 404, 403 or 500, logged as it does. */
static rx_int_t
open_failed(rx_http_request_t *r, const rx_str_t *path,
    const rx_http_open_file_t *of)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    switch (of->err) {
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
        if (clcf->log_not_found) {
            rx_http_request_log_error(r, RX_LOG_ERR, of->err, "%s \"%s\" "
                                      "failed", of->failed, path->data);
        }
        return RX_HTTP_NOT_FOUND;
    case EACCES:
    case EPERM:
    case ELOOP:
    case EMLINK:
        rx_http_request_log_error(r, RX_LOG_ERR, of->err, "%s \"%s\" failed",
                                  of->failed, path->data);
        return RX_HTTP_FORBIDDEN;
    default:
        rx_http_request_log_error(r, RX_LOG_CRIT, of->err, "%s \"%s\" "
                                  "failed", of->failed, path->data);
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
}

static rx_int_t
on_open(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_http_open_file_t *of = ctx->of;

    if (of->err) {
        return open_failed(r, &ctx->path, of);
    }
    if (of->is_dir) {
        return redirect_directory(r);
    }
    if (!of->is_file) {
        rx_http_request_log_error(r, RX_LOG_CRIT, 0, "\"%s\" is not a regular "
                                  "file", ctx->path.data);
        return RX_HTTP_NOT_FOUND;
    }
    return serve(r, ctx, of);
}

/* The open completed (open_file_ctx): answer. */
static void
static_opened(rx_http_request_t *r, rx_http_open_file_t *of)
{
    rx_int_t rc;

    (void) of;
    rc = on_open(r, r->ctx);
    if (rc != RX_AGAIN && rc != RX_OK) {
        rx_http_finalize_request(r, rc);
    }
}


static rx_int_t
static_handler(rx_http_request_t *r)
{
    rx_http_static_ctx_t *ctx;
    rx_int_t              rc;

    if (!(r->method & (RX_HTTP_GET | RX_HTTP_HEAD | RX_HTTP_POST))) {
        return RX_HTTP_NOT_ALLOWED;
    }
    if (r->uri.len == 0 || r->uri.data[r->uri.len - 1] == '/') {
        return RX_DECLINED;
    }
    /* the body stays until the file is found: a 404 may go on to an
     * error_page location that reads it (rx_http_static_serve drops it) */
    ctx = ctx_new(r);
    if (ctx == NULL || rx_http_map_uri_to_path(r, &ctx->path, 0) != RX_OK) {
        return RX_ERROR;
    }
    ctx->of = rx_pcalloc(r->pool, sizeof(*ctx->of));
    if (ctx->of == NULL) {
        return RX_ERROR;
    }
    r->ctx = ctx;
    ctx->of->want_content = true;       /* small_file_cache */
    rc = rx_http_open_file(r, &ctx->path, ctx->of, static_opened);
    return rc == RX_OK ? on_open(r, ctx) : rc;
}

static rx_int_t
static_postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_CONTENT_PHASE, static_handler);
}

