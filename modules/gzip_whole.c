/*
 * gzip_whole.c: the gzip filter's libdeflate path (the only libdeflate
 * user): a body whose compressed form surely fits in gzip_buffers is
 * compressed in one call, in place when it arrives whole, else gathered
 * from its pieces first.
 */
#include "http.h"
#include "gzip_ctx.h"

#if (RX_HAVE_LIBDEFLATE)

#include <libdeflate.h>

/* One compressor per level, made in each worker on first use: a
 * compressor keeps no state from one call to the next. */
static struct libdeflate_compressor *whole_compressors[10];

static struct libdeflate_compressor *
compressor(rx_http_gzip_ctx_t *ctx)
{
    struct libdeflate_compressor **comp = &whole_compressors[ctx->conf->level];

    if (*comp == NULL) {
        *comp = libdeflate_alloc_compressor((int) ctx->conf->level);
    }
    return *comp;
}

/* Whether n bytes of input surely compress into gzip_buffers. */
static bool
fits(rx_http_gzip_ctx_t *ctx, struct libdeflate_compressor *comp, size_t n)
{
    return libdeflate_gzip_compress_bound(comp, n)
           <= (size_t) ctx->conf->bufs_num * ctx->conf->bufs_size;
}

/* Compresses len bytes at data, the whole body, into one output buffer. */
static rx_int_t
compress_whole(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx,
    struct libdeflate_compressor *comp, const char *data, size_t len,
    rx_chain_t ***ll)
{
    size_t      bound = libdeflate_gzip_compress_bound(comp, len), n;
    rx_buf_t   *b = rx_create_temp_buf(r->pool, bound);
    rx_chain_t *cl = rx_http_gzip_get_link(r, ctx);

    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    n = libdeflate_gzip_compress(comp, data, len, b->last, bound);
    if (n == 0) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "libdeflate_gzip_"
                                  "compress() failed for %zu bytes", len);
        return RX_ERROR;
    }
    b->last += n;
    b->last_buf = 1;
    ctx->zin = len;
    ctx->zout = n;
    ctx->done = true;
    cl->buf = b;
    **ll = cl;
    *ll = &cl->next;
    return RX_OK;
}

/* Appends len bytes to the gathered input, growing it (16 KiB, doubling,
 * or the known length at once); RX_DECLINED when the total would not
 * surely compress into gzip_buffers. */
static rx_int_t
gather(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx,
    struct libdeflate_compressor *comp, const char *data, size_t len)
{
    rx_buf_t *g = ctx->gathered, *bigger;
    size_t    used = g ? (size_t) (g->last - g->pos) : 0, need = used + len;
    size_t    size;

    if (!fits(ctx, comp, need)) {
        return RX_DECLINED;
    }
    if (g == NULL || (size_t) (g->end - g->last) < len) {
        size = g ? (size_t) (g->end - g->start) * 2 : 16384;
        if (ctx->length > 0 && (size_t) ctx->length > size) {
            size = (size_t) ctx->length;
        }
        size = rx_max(size, need);
        bigger = rx_create_temp_buf(r->pool, size);
        if (bigger == NULL) {
            return RX_ERROR;
        }
        if (used) {
            memcpy(bigger->last, g->pos, used);
            bigger->last += used;
        }
        if (g) {
            (void) rx_pfree(r->pool, g->start);   /* a large block: back */
        }
        ctx->gathered = g = bigger;
    }
    memcpy(g->last, data, len);
    g->last += len;
    return RX_OK;
}

/*
 * Bodies up to what gzip_buffers can surely hold compressed go through
 * libdeflate in one call: ~60 % of zlib's time at levels 1 and 6, and a
 * few % smaller (docs/performance.md). A body queued whole in one buffer
 * (a static file up to the read size, a short response read at once) is
 * compressed where it lies; one that comes in pieces (an upstream's
 * buffers) is copied aside until its end. RX_OK: compressed, done;
 * RX_AGAIN: all input taken, more to come; RX_DECLINED: zlib's stream from
 * here on, the gathered bytes first (too long for gzip_buffers, a flush
 * asked, or no compressor).
 */
rx_int_t
rx_http_gzip_whole(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx,
    rx_chain_t ***ll)
{
    struct libdeflate_compressor *comp = compressor(ctx);
    rx_chain_t *cl;
    rx_buf_t   *b, *data = NULL;
    bool        last = false, pieces = false;
    rx_int_t    rc;

    if (comp == NULL
        || (ctx->length > 0 && !fits(ctx, comp, (size_t) ctx->length))) {
        goto stream;
    }
    for (cl = ctx->in; cl; cl = cl->next) {
        last |= cl->buf->last_buf;
        if (cl->buf->last > cl->buf->pos) {
            pieces |= data != NULL;
            data = cl->buf;
        }
    }
    if (last && !pieces && ctx->gathered == NULL) {
        /* whole in one buffer: no copy */
        if (data && !fits(ctx, comp, (size_t) (data->last - data->pos))) {
            goto stream;
        }
        rc = compress_whole(r, ctx, comp, data ? data->pos : "",
                            data ? (size_t) (data->last - data->pos) : 0, ll);
        if (data) {
            data->pos = data->last;
        }
        while (rx_http_gzip_take_input(ctx)) {    /* every link back */
        }
        return rc;
    }
    while (ctx->in) {
        b = ctx->in->buf;
        if (b->flush && !b->last_buf) {
            goto stream;                      /* it wants bytes out now */
        }
        if (b->last > b->pos) {
            rc = gather(r, ctx, comp, b->pos, (size_t) (b->last - b->pos));
            if (rc == RX_DECLINED) {
                goto stream;
            }
            if (rc != RX_OK) {
                return RX_ERROR;
            }
            b->pos = b->last;
        }
        (void) rx_http_gzip_take_input(ctx);      /* the link back */
    }
    if (!ctx->last) {
        return RX_AGAIN;
    }
    b = ctx->gathered;
    rc = compress_whole(r, ctx, comp, b ? b->pos : "",
                        b ? (size_t) (b->last - b->pos) : 0, ll);
    if (b) {
        ctx->gathered = NULL;
        (void) rx_pfree(r->pool, b->start);
    }
    return rc;

stream:
    ctx->stream = true;
    if (ctx->gathered) {
        /* the gathered bytes go first */
        cl = rx_http_gzip_get_link(r, ctx);
        if (cl == NULL) {
            return RX_ERROR;
        }
        cl->buf = ctx->gathered;
        cl->next = ctx->in;
        ctx->in = cl;
        if (cl->next == NULL) {
            ctx->in_tail = &cl->next;
        }
    }
    return RX_DECLINED;
}


void
rx_http_gzip_whole_free(void)
{
    size_t i;

    for (i = 0; i < rx_nelems(whole_compressors); i++) {
        if (whole_compressors[i]) {
            libdeflate_free_compressor(whole_compressors[i]);
            whole_compressors[i] = NULL;
        }
    }
}

#endif /* RX_HAVE_LIBDEFLATE */
