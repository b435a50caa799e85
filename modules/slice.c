/*
 * slice.c: nginx's slice module: `slice SIZE` and $slice_range. The main
 * request fetches the first slice (its proxy sends Range: $slice_range);
 * this filter turns that 206 into the client's response (200, or 206 for
 * the client's one range) and fetches the other slices it needs, one after
 * another, as subrequests whose bodies take their places in the output
 * (http/http_postpone.c). Every slice must agree with the first (ETag,
 * Last-Modified) and answer the range asked; one that does not cuts the
 * response, with nginx's error line.
 */
#include "http.h"
#include "http_range.h"
#include "http_date.h"
#include "http_variables.h"

typedef struct {
    size_t  size;                 /* slice; 0: off */
} slice_conf_t;

typedef struct {
    int64_t   start;      /* first byte of the slice asked now / next */
    int64_t   end;        /* one past the last byte the response needs */
    int64_t   offset;     /* where the next body byte that comes sits */
    int64_t   from, to;   /* the bytes the client gets: [from, to) */
    rx_str_t  etag;       /* the first slice's validators */
    rx_str_t  last_modified;
    rx_str_t  range;      /* $slice_range: "bytes=S-E" */
    bool      active;     /* the first slice was a 206: stitching */
    bool      failed;     /* a slice was refused: the response is cut */
} slice_ctx_t;

typedef struct {
    int64_t  start, end;  /* end: one past the last byte */
    int64_t  complete;    /* -1: "*" */
} slice_cr_t;

static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t add_variables(rx_conf_t *cf);
static void init_filters(rx_http_filters_t *top);

#define SLICE_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t slice_commands[] = {
    { "slice", SLICE_CONF | RX_CONF_TAKE1, rx_conf_set_size_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(slice_conf_t, size), NULL },
    rx_null_command
};

static const rx_http_module_t slice_module_ctx = {
    add_variables, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf,
    init_filters
};

rx_module_t rx_http_slice_filter_module = {
    "rx_http_slice_filter_module", 0, 0, RX_HTTP_MODULE,
    &slice_module_ctx, slice_commands, NULL, NULL, NULL, NULL
};

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

static void *
create_conf(rx_conf_t *cf)
{
    slice_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->size = RX_CONF_UNSET_SIZE;
    }
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *parent, void *child)
{
    slice_conf_t *p = parent, *c = child;

    rx_unused(cf);
    rx_conf_merge_size(c->size, p->size, 0);
    return RX_CONF_OK;
}

/* Where the client's range starts, as nginx reads it: 0 unless a single
 * "bytes=N-..." without If-Range (the first slice is the one holding N). */
static int64_t
client_start(rx_http_request_t *r)
{
    const rx_table_elt_t *h = r->headers_in.range;
    const char           *p, *end;
    int64_t               n = 0;

    if (r->headers_in.if_range || h == NULL || h->value.len < 7
        || strncasecmp(h->value.data, "bytes=", 6) != 0
        || memchr(h->value.data, ',', h->value.len)) {
        return 0;
    }
    p = h->value.data + 6;
    end = h->value.data + h->value.len;
    while (p < end && *p == ' ') p++;
    if (p == end || *p < '0' || *p > '9') {
        return 0;
    }
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (n > (INT64_MAX - 9) / 10) {
            return 0;
        }
        n = n * 10 + (*p - '0');
    }
    return n;
}

static rx_int_t
set_range(rx_http_request_t *r, slice_ctx_t *ctx, int64_t start, size_t size)
{
    ctx->range.data = rx_pnalloc(r->pool, 64);
    if (ctx->range.data == NULL) {
        return RX_ERROR;
    }
    ctx->range.len = (size_t) snprintf(ctx->range.data, 64,
        "bytes=%" PRId64 "-%" PRId64, start, start + (int64_t) size - 1);
    return RX_OK;
}

/* $slice_range: the range the request (main or slice) asks for now. */
static rx_int_t
slice_range_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    slice_conf_t *conf = rx_http_get_module_loc_conf(r,
                            rx_http_slice_filter_module);
    slice_ctx_t  *ctx = r->slice_ctx;
    int64_t       start;

    rx_unused(data);
    if (ctx == NULL) {
        if (r != r->main || conf->size == 0) {
            v->not_found = 1;
            return RX_OK;
        }
        ctx = rx_pcalloc(r->pool, sizeof(*ctx));
        if (ctx == NULL) {
            return RX_ERROR;
        }
        start = client_start(r);
        ctx->start = start - start % (int64_t) conf->size;
        if (set_range(r, ctx, ctx->start, conf->size) != RX_OK) {
            return RX_ERROR;
        }
        r->slice_ctx = ctx;
    }
    v->data = ctx->range.data;
    v->len = ctx->range.len;
    v->valid = 1;
    v->not_found = 0;
    return RX_OK;
}

static rx_int_t
add_variables(rx_conf_t *cf)
{
    rx_str_t            name = rx_string("slice_range");
    rx_http_variable_t *v = rx_http_add_variable(cf, &name,
                                                 RX_HTTP_VAR_NOCACHEABLE);

    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = slice_range_variable;
    return RX_OK;
}

static rx_table_elt_t *
header_out(rx_http_request_t *r, const char *lc)
{
    rx_table_elt_t *h = r->headers_out.headers.elts;
    rx_uint_t       i;

    for (i = 0; i < r->headers_out.headers.nelts; i++) {
        if (!h[i].deleted && h[i].key.len == strlen(lc)
            && strncasecmp(h[i].key.data, lc, h[i].key.len) == 0) {
            return &h[i];
        }
    }
    return NULL;
}

static bool
read_int(const char **pp, const char *end, int64_t *out)
{
    const char *p = *pp;
    int64_t     n = 0;

    if (p == end || *p < '0' || *p > '9') {
        return false;
    }
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (n > (INT64_MAX - 9) / 10) {
            return false;
        }
        n = n * 10 + (*p - '0');
    }
    *pp = p;
    *out = n;
    return true;
}

/* "bytes A-B/T", or a star for T (RFC 9110 14.4). */
static bool
parse_content_range(const rx_table_elt_t *h, slice_cr_t *cr)
{
    const char *p, *end;

    if (h == NULL || h->value.len < 6
        || strncasecmp(h->value.data, "bytes ", 6) != 0) {
        return false;
    }
    p = h->value.data + 6;
    end = h->value.data + h->value.len;
    while (p < end && *p == ' ') p++;
    if (!read_int(&p, end, &cr->start) || p == end || *p++ != '-'
        || !read_int(&p, end, &cr->end) || p == end || *p++ != '/'
        || cr->end < cr->start) {
        return false;
    }
    cr->end++;
    if (p < end && *p == '*') {
        cr->complete = -1;
        p++;
    } else if (!read_int(&p, end, &cr->complete)
               || cr->complete < cr->end) {
        return false;
    }
    return p == end;
}

/* Each slice's validators against the first's: nginx checks the ETag;
 * ringx the Last-Modified too (an origin without ETags). */
static bool
same_validator(rx_http_request_t *r, rx_str_t *kept, const rx_table_elt_t *h,
    bool first, const char *what)
{
    if (first) {
        if (h) {
            *kept = h->value;
        }
        return true;
    }
    if (kept->len == 0) {
        return true;
    }
    if (h == NULL || h->value.len != kept->len
        || memcmp(h->value.data, kept->data, kept->len) != 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0,
                                  "%s mismatch in slice response", what);
        return false;
    }
    return true;
}

/* If-Range: the client's range applies while the validator matches. */
static bool
if_range_holds(rx_http_request_t *r, slice_ctx_t *ctx)
{
    const rx_str_t *v;
    time_t          t;

    if (r->headers_in.if_range == NULL) {
        return true;
    }
    v = &r->headers_in.if_range->value;
    if (v->len && v->data[0] == '"') {
        return v->len == ctx->etag.len
               && memcmp(v->data, ctx->etag.data, v->len) == 0;
    }
    if (ctx->last_modified.len == 0) {
        return false;
    }
    t = rx_http_parse_date(v->data, v->len);
    return t != -1 && t == rx_http_parse_date(ctx->last_modified.data,
                                              ctx->last_modified.len);
}

static rx_int_t
set_content_range(rx_http_request_t *r, const char *fmt_star, int64_t a,
    int64_t b, int64_t total)
{
    rx_str_t v;

    v.data = rx_pnalloc(r->pool, 80);
    if (v.data == NULL) {
        return RX_ERROR;
    }
    v.len = fmt_star
            ? (size_t) snprintf(v.data, 80, "bytes */%" PRId64, total)
            : (size_t) snprintf(v.data, 80, "bytes %" PRId64 "-%" PRId64
                                "/%" PRId64, a, b - 1, total);
    return rx_http_add_header_out(r, "Content-Range", &v) ? RX_OK : RX_ERROR;
}

/* The main request's first slice becomes the client's response: the
 * whole representation (200), or the client's one range of it (206). */
static rx_int_t
main_header(rx_http_request_t *r, slice_ctx_t *ctx, const slice_cr_t *cr)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_http_range_t        rg;
    rx_uint_t              n;
    rx_int_t               rc = RX_HTTP_RANGE_IGNORE;

    ho->status = RX_HTTP_OK;
    ho->status_line.len = 0;
    ho->content_length_n = cr->complete;
    ctx->from = 0;
    ctx->to = cr->complete;
    if (r->headers_in.range && if_range_holds(r, ctx)) {
        rc = rx_http_parse_range(&r->headers_in.range->value, cr->complete,
                                 &rg, 1, &n);
    }
    if (rc == RX_HTTP_RANGE_OK) {
        ho->status = RX_HTTP_PARTIAL_CONTENT;
        ho->content_length_n = rg.end - rg.start;
        ctx->from = rg.start;
        ctx->to = rg.end;
        if (set_content_range(r, NULL, rg.start, rg.end, cr->complete)
            != RX_OK) {
            return RX_ERROR;
        }
    } else if (rc == RX_HTTP_RANGE_UNSATISFIABLE) {
        ho->status = RX_HTTP_RANGE_NOT_SATISFIABLE;
        ho->content_length_n = 0;
        ctx->to = 0;
        if (set_content_range(r, "*", 0, 0, cr->complete) != RX_OK) {
            return RX_ERROR;
        }
    }
    if (ctx->from < cr->start && ctx->to > ctx->from) {
        /* the first slice was chosen from the client's Range: it must
         * hold the first byte the client gets */
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "unexpected range in "
            "slice response: %" PRId64 "-%" PRId64, cr->start, cr->end);
        return RX_ERROR;
    }
    ctx->end = ctx->to;
    ctx->active = !r->header_only;
    /* the bytes are cut to the client's range here */
    r->filter_need_in_memory = 1;
    return next_header(r);
}

static rx_int_t
slice_header_filter(rx_http_request_t *r)
{
    slice_conf_t   *conf = rx_http_get_module_loc_conf(r,
                              rx_http_slice_filter_module);
    slice_ctx_t    *ctx = r->slice_ctx;
    rx_table_elt_t *crh;
    slice_cr_t      cr;
    int64_t         end;
    bool            first = r == r->main;

    if (ctx == NULL || (first && ctx->active)) {
        return next_header(r);
    }
    if (r->headers_out.status != RX_HTTP_PARTIAL_CONTENT) {
        if (first) {            /* not sliced: passes whole, as it came */
            r->slice_ctx = NULL;
            return next_header(r);
        }
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "unexpected status "
            "code %u in slice response", (unsigned) r->headers_out.status);
        goto failed;
    }
    if (!same_validator(r, &ctx->etag, r->headers_out.etag, first, "etag")
        || !same_validator(r, &ctx->last_modified,
                           header_out(r, "last-modified"), first,
                           "last-modified")) {
        goto failed;
    }
    crh = header_out(r, "content-range");
    if (!parse_content_range(crh, &cr)) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0,
                                  "invalid range in slice response");
        goto failed;
    }
    if (cr.complete == -1) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0,
                                  "no complete length in slice response");
        goto failed;
    }
    end = rx_min(cr.start + (int64_t) conf->size, cr.complete);
    if (cr.start != ctx->start || cr.end != end) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "unexpected range in "
            "slice response: %" PRId64 "-%" PRId64, cr.start, cr.end);
        goto failed;
    }
    ctx->start = end;
    ctx->offset = cr.start;
    if (!first) {
        return next_header(r);      /* the postpone filter keeps it */
    }
    crh->deleted = true;
    return main_header(r, ctx, &cr);

failed:
    ctx->failed = true;
    ctx->active = ctx->active && !first;
    return RX_ERROR;
}

static void sr_done(rx_http_request_t *sr, void *data);

/* The next slice: a subrequest of the same URI whose body follows. */
static rx_int_t
next_slice(rx_http_request_t *r, slice_ctx_t *ctx)
{
    slice_conf_t      *conf = rx_http_get_module_loc_conf(r,
                                 rx_http_slice_filter_module);
    rx_http_request_t *sr;

    if (set_range(r, ctx, ctx->start, conf->size) != RX_OK) {
        return RX_ERROR;
    }
    sr = rx_http_subrequest_in_body(r, &r->uri, r->args.len ? &r->args : NULL,
                                    0, sr_done, r);
    if (sr == NULL) {
        return RX_ERROR;
    }
    sr->slice_ctx = ctx;
    rx_http_subrequest_stub(sr);    /* an error page's body never joins */
    r->filter_buffered = 1;         /* the main request's end waits */
    return RX_OK;
}

static rx_int_t
send_last(rx_http_request_t *r)
{
    rx_buf_t   *b = rx_calloc_buf(r->pool);
    rx_chain_t *cl = rx_alloc_chain_link(r->pool);

    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    b->last_buf = 1;
    b->sync = 1;
    cl->buf = b;
    cl->next = NULL;
    return next_body(r, cl);
}

/* A slice ended: the next one, or the response's end. A slice that
 * failed or came short cuts the response (the client sees a short body,
 * as with nginx). */
static void
sr_done(rx_http_request_t *sr, void *data)
{
    rx_http_request_t *r = data;
    slice_ctx_t       *ctx = r->slice_ctx;

    if (ctx->failed || sr->headers_out.status != RX_HTTP_PARTIAL_CONTENT
        || ctx->offset != ctx->start) {
        if (!ctx->failed) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "slice subrequest "
                "\"%.*s\" ended at byte %" PRId64 " of %" PRId64
                " (status %u): the response is cut", (int) sr->uri.len,
                sr->uri.data, ctx->offset, ctx->start,
                (unsigned) sr->headers_out.status);
        }
        rx_http_close_request(r);
        return;
    }
    if (ctx->start < ctx->end) {
        if (next_slice(r, ctx) != RX_OK) {
            rx_http_close_request(r);
        }
        return;
    }
    /* the end: nothing is held any more, and the last buffer's send
     * ends the request (which may be freed before send_last returns:
     * r is not touched after it) */
    r->filter_buffered = 0;
    if (send_last(r) == RX_ERROR) {
        rx_http_close_request(r);
    }
}

/* Keeps the bytes of [from, to) of the link's buffer; false: none. */
static bool
trim(slice_ctx_t *ctx, rx_buf_t *b)
{
    int64_t size = (int64_t) (b->last - b->pos);
    int64_t lo = ctx->offset, hi = ctx->offset + size;

    ctx->offset = hi;
    if (hi <= ctx->from || lo >= ctx->to) {
        b->pos = b->last;
        return false;
    }
    if (lo < ctx->from) {
        b->pos += ctx->from - lo;
    }
    if (hi > ctx->to) {
        b->last -= hi - ctx->to;
    }
    return b->pos < b->last;
}

static rx_int_t
slice_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    slice_ctx_t *ctx = r->slice_ctx;
    rx_chain_t  *out = NULL, **ll = &out, *cl;
    bool         last = false;

    if (ctx == NULL || !ctx->active) {
        return next_body(r, in);
    }
    for (; in; in = in->next) {
        rx_buf_t *b = in->buf;

        if (b->in_file && !b->memory) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "slice filter got "
                "a file buffer: its producer ignored filter_need_in_memory");
            return RX_ERROR;
        }
        if (!trim(ctx, b) && !b->last_buf && !b->flush) {
            continue;
        }
        if (b->last_buf && r == r->main && ctx->start < ctx->end
            && !ctx->failed) {
            b->last_buf = 0;        /* the other slices follow */
            b->sync = 1;
            last = true;
        }
        cl = rx_alloc_chain_link(r->pool);
        if (cl == NULL) {
            return RX_ERROR;
        }
        cl->buf = b;
        cl->next = NULL;
        *ll = cl;
        ll = &cl->next;
    }
    if (next_body(r, out) == RX_ERROR) {
        return RX_ERROR;
    }
    if (last) {
        if (ctx->offset != ctx->start) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "slice response "
                "ended at byte %" PRId64 " of %" PRId64, ctx->offset,
                ctx->start);
            return RX_ERROR;
        }
        return next_slice(r, ctx);
    }
    return RX_OK;
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = slice_header_filter;
    top->body = slice_body_filter;
}
