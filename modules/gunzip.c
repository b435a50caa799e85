/*
 * gunzip.c: nginx's gunzip filter (gunzip, gunzip_buffers): a response
 * that comes with "Content-Encoding: gzip" (an upstream's) is inflated for
 * a client that does not take gzip, streaming into at most gunzip_buffers
 * output buffers. zlib's inflate side: gzip.c owns deflate, this file
 * inflate; the gzip family (gzip*.c, gunzip.c) are the only zlib users.
 */
#include <zlib.h>
#include "http.h"
#include "gzip.h"

typedef struct {
    rx_int_t     enable;          /* gunzip */
    rx_int_t     bufs_num;        /* gunzip_buffers number */
    size_t       bufs_size;       /* gunzip_buffers size */
} gunzip_conf_t;

/* One inflated response. Output buffers are ours until the writer has
 * sent them (pos == last again); input buffers are the producer's, which
 * reuses them only once everything queued is sent and no filter holds
 * input (r->filter_buffered). */
typedef struct {
    z_stream        zs;
    gunzip_conf_t  *conf;
    rx_chain_t     *in;           /* input links not yet taken */
    rx_chain_t    **in_tail;
    rx_chain_t     *free;         /* spare links */
    rx_buf_t       *in_buf;       /* being inflated (zs.next_in) */
    rx_buf_t      **bufs;         /* output buffers, up to bufs_num */
    rx_int_t        nbufs;
    rx_buf_t       *cur;          /* inflate writes here */
    bool            zinit;        /* inflateEnd is owed */
    bool            ended;        /* a gzip member ended (Z_STREAM_END) */
    bool            last;         /* last_buf seen */
    bool            flush;        /* a flush was asked */
    bool            done;         /* last_buf passed on */
} gunzip_ctx_t;

static const char *set_buffers(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static void init_filters(rx_http_filters_t *top);

#define GUNZIP_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t gunzip_commands[] = {
    { "gunzip", GUNZIP_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(gunzip_conf_t, enable), NULL },
    { "gunzip_buffers", GUNZIP_CONF | RX_CONF_TAKE2, set_buffers,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t gunzip_module_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf, init_filters
};

rx_module_t rx_http_gunzip_module = {
    "rx_http_gunzip_module", 0, 0, RX_HTTP_MODULE, &gunzip_module_ctx,
    gunzip_commands, NULL, NULL, NULL, NULL
};

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

/* ---- configuration ------------------------------------------------------ */

static void *
create_conf(rx_conf_t *cf)
{
    gunzip_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->enable = RX_CONF_UNSET;
    c->bufs_num = RX_CONF_UNSET;
    c->bufs_size = RX_CONF_UNSET_SIZE;
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *parent, void *child)
{
    gunzip_conf_t *p = parent, *c = child;
    long           page = sysconf(_SC_PAGESIZE);

    rx_unused(cf);
    rx_conf_merge_value(c->enable, p->enable, 0);
    if (c->bufs_num == RX_CONF_UNSET) {
        /* nginx: 32 4k | 16 8k, one page each */
        c->bufs_num = p->bufs_num != RX_CONF_UNSET ? p->bufs_num
                      : page > 4096 ? 16 : 32;
        c->bufs_size = p->bufs_num != RX_CONF_UNSET ? p->bufs_size
                       : (size_t) (page > 4096 ? 8192 : 4096);
    }
    return RX_CONF_OK;
}

/* gunzip_buffers number size */
static const char *
set_buffers(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    gunzip_conf_t *gcf = conf;
    rx_str_t      *value = cf->args->elts;
    rx_int_t       n;
    ssize_t        size;

    rx_unused(cmd);
    if (gcf->bufs_num != RX_CONF_UNSET) {
        return "is duplicate";
    }
    n = rx_atoi(value[1].data, value[1].len);
    size = rx_parse_size(&value[2]);
    if (n <= 0 || size <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s %s\" in "
                          "\"%s\" directive, it must be a number of buffers "
                          "and their size (e.g. 32 4k)", value[1].data,
                          value[2].data, value[0].data);
        return RX_CONF_ERROR;
    }
    gcf->bufs_num = n;
    gcf->bufs_size = (size_t) size;
    return RX_CONF_OK;
}

/* ---- the header filter -------------------------------------------------- */

/* A strong ETag becomes weak: the bytes sent differ. */
static rx_int_t
weaken_etag(rx_http_request_t *r)
{
    rx_table_elt_t *etag = r->headers_out.etag;
    char           *p;

    if (etag == NULL || etag->deleted
        || (etag->value.len > 2 && etag->value.data[0] == 'W'
            && etag->value.data[1] == '/')) {
        return RX_OK;
    }
    if (etag->value.len == 0 || etag->value.data[0] != '"') {
        etag->deleted = true;
        r->headers_out.etag = NULL;
        return RX_OK;
    }
    p = rx_pnalloc(r->pool, etag->value.len + 2);
    if (p == NULL) {
        return RX_ERROR;
    }
    p[0] = 'W';
    p[1] = '/';
    memcpy(p + 2, etag->value.data, etag->value.len);
    etag->value.data = p;
    etag->value.len += 2;
    return RX_OK;
}

static void
zstream_end(void *data)
{
    gunzip_ctx_t *ctx = data;

    if (ctx->zinit) {
        inflateEnd(&ctx->zs);
        ctx->zinit = false;
    }
}

static rx_int_t
gunzip_header_filter(rx_http_request_t *r)
{
    gunzip_conf_t         *conf = rx_http_get_module_loc_conf(r,
                                      rx_http_gunzip_module);
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_table_elt_t        *ce = ho->content_encoding, *h;
    gunzip_ctx_t          *ctx;
    rx_pool_cleanup_t     *cln;

    if (ce == NULL || ce->deleted) {
        ce = rx_http_gzip_find_header(&ho->headers, "Content-Encoding");
    }
    if (!conf->enable || r != r->main || ce == NULL
        || !rx_str_caseeq(&ce->value, "gzip")
        || rx_http_gzip_ok(r, rx_http_get_module_loc_conf(r,
                                  rx_http_gzip_module))) {
        return next_header(r);
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    cln = rx_pool_cleanup_add(r->pool, 0);
    if (ctx == NULL || cln == NULL) {
        return RX_ERROR;
    }
    ctx->conf = conf;
    ctx->in_tail = &ctx->in;
    /* 16 + MAX_WBITS: a gzip wrapper, any window */
    if (inflateInit2(&ctx->zs, MAX_WBITS + 16) != Z_OK) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "inflateInit2() failed");
        return RX_ERROR;
    }
    ctx->zinit = true;
    cln->handler = zstream_end;
    cln->data = ctx;
    ce->deleted = true;
    ho->content_encoding = NULL;
    rx_http_clear_content_length(r);
    r->allow_ranges = 0;
    h = rx_http_gzip_find_header(&ho->headers, "Accept-Ranges");
    if (h) {
        h->deleted = true;
    }
    if (weaken_etag(r) != RX_OK) {
        return RX_ERROR;
    }
    r->filter_need_in_memory = 1;
    r->gunzip_ctx = ctx;
    return next_header(r);
}

/* ---- the body filter ---------------------------------------------------- */

static rx_chain_t *
get_link(rx_http_request_t *r, gunzip_ctx_t *ctx)
{
    return rx_chain_get_free_link(r->pool, &ctx->free);
}

/* Takes the links of in (the buffers stay the producer's). */
static rx_int_t
queue_input(rx_http_request_t *r, gunzip_ctx_t *ctx, rx_chain_t *in)
{
    rx_int_t rc = rx_chain_take_links(r->pool, &ctx->free, in, &ctx->in_tail);

    if (rc == RX_DECLINED) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "gunzip filter got a "
                                  "file buffer: its producer ignored "
                                  "filter_need_in_memory");
        return RX_ERROR;
    }
    return rc;
}

/* Moves inflate to the next input buffer; false when none is queued. */
static bool
next_input(gunzip_ctx_t *ctx)
{
    rx_chain_t *cl = ctx->in;
    rx_buf_t   *b;

    if (cl == NULL) {
        return false;
    }
    ctx->in = cl->next;
    if (ctx->in == NULL) {
        ctx->in_tail = &ctx->in;
    }
    cl->next = ctx->free;
    ctx->free = cl;
    b = cl->buf;
    ctx->last |= b->last_buf;
    ctx->flush |= b->flush;
    ctx->in_buf = b;
    ctx->zs.next_in = (Bytef *) b->pos;
    ctx->zs.avail_in = (uInt) (b->last - b->pos);
    return true;
}

/* A free output buffer: one the writer has sent, else a new one while
 * fewer than gunzip_buffers exist; NULL when all are in flight. */
static rx_buf_t *
get_buf(rx_http_request_t *r, gunzip_ctx_t *ctx)
{
    return rx_buf_get_free(r->pool, &ctx->bufs, &ctx->nbufs,
                           ctx->conf->bufs_num, (size_t) ctx->conf->bufs_size);
}

/* Passes the current output buffer on (or an empty one for flags). */
static rx_int_t
emit(rx_http_request_t *r, gunzip_ctx_t *ctx, rx_chain_t ***ll,
    bool last, bool flush)
{
    rx_buf_t   *b = ctx->cur;
    rx_chain_t *cl;

    if (b == NULL || b->last == b->pos) {
        if (!last && !flush) {
            return RX_OK;
        }
        b = rx_calloc_buf(r->pool);     /* flags only; never reused */
        if (b == NULL) {
            return RX_ERROR;
        }
        b->sync = 1;
        b->fd = -1;
    } else {
        ctx->cur = NULL;
    }
    b->last_buf = last;
    b->flush = flush;
    cl = get_link(r, ctx);
    if (cl == NULL) {
        return RX_ERROR;
    }
    cl->buf = b;
    **ll = cl;
    *ll = &cl->next;
    return RX_OK;
}

/* The end of the input: a whole stream ends the response, a cut one is
 * an error (nginx's message; the connection closes). */
static rx_int_t
finish(rx_http_request_t *r, gunzip_ctx_t *ctx, rx_chain_t ***ll)
{
    if (!ctx->ended) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "inflate() returned %d "
                                  "on response end", Z_BUF_ERROR);
        return RX_ERROR;
    }
    ctx->done = true;
    zstream_end(ctx);                          /* free zlib's memory now */
    return emit(r, ctx, ll, true, false);
}

/*
 * Inflates what is queued into free output buffers and links the full
 * ones to *ll. RX_OK: the input is used up (or the response ended);
 * RX_AGAIN: every output buffer is in flight (the input stays queued).
 */
static rx_int_t
inflate_chain(rx_http_request_t *r, gunzip_ctx_t *ctx, rx_chain_t ***ll)
{
    int rc;

    for (;;) {
        if (ctx->zs.avail_in == 0 && next_input(ctx)) {
            continue;
        }
        if (ctx->zs.avail_in == 0) {
            if (ctx->last) {
                return finish(r, ctx, ll);
            }
            if (ctx->flush) {
                ctx->flush = false;
                return emit(r, ctx, ll, false, true);
            }
            return emit(r, ctx, ll, false, false);
        }
        if (ctx->ended) {
            /* another gzip member follows (nginx reads them all) */
            if (inflateReset(&ctx->zs) != Z_OK) {
                rx_http_request_log_error(r, RX_LOG_ALERT, 0,
                                          "inflateReset() failed");
                return RX_ERROR;
            }
            ctx->ended = false;
        }
        if (ctx->cur == NULL && (ctx->cur = get_buf(r, ctx)) == NULL) {
            return ctx->nbufs ? RX_AGAIN : RX_ERROR;
        }
        ctx->zs.next_out = (Bytef *) ctx->cur->last;
        ctx->zs.avail_out = (uInt) (ctx->cur->end - ctx->cur->last);
        rc = inflate(&ctx->zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0,
                                      "inflate() failed: %d, %d",
                                      Z_NO_FLUSH, rc);
            return RX_ERROR;
        }
        ctx->cur->last = (char *) ctx->zs.next_out;
        ctx->in_buf->pos = (char *) ctx->zs.next_in;
        ctx->ended = rc == Z_STREAM_END;
        if (ctx->zs.avail_out == 0 && emit(r, ctx, ll, false, false) != RX_OK) {
            return RX_ERROR;
        }
    }
}

static rx_int_t
gunzip_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    gunzip_ctx_t *ctx = r->gunzip_ctx;
    rx_chain_t   *out = NULL, **ll = &out, *cl;
    rx_int_t      rc;
    bool          held;

    if (ctx == NULL || ctx->done || r->header_only) {
        return next_body(r, in);
    }
    if (queue_input(r, ctx, in) != RX_OK) {
        return RX_ERROR;
    }
    rc = inflate_chain(r, ctx, &ll);
    if (rc == RX_ERROR) {
        return RX_ERROR;
    }
    /* input left over waits for buffers: the writer calls back (on_sent)
     * before the producer may reuse its buffers. The flag is shared: a
     * filter after this one (gzip) sets it for itself inside next_body. */
    held = rc == RX_AGAIN;
    r->filter_buffered = 0;
    rc = next_body(r, out);
    if (held) {
        r->filter_buffered = 1;
    }
    while (out) {                         /* downstream keeps its own links */
        cl = out->next;
        out->next = ctx->free;
        ctx->free = out;
        out = cl;
    }
    return rc;
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = gunzip_header_filter;
    top->body = gunzip_body_filter;
}
