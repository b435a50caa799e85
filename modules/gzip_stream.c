/*
 * gzip_stream.c: zlib's deflate stream for the gzip filter (gzip's only zlib
 * caller): each chain is deflated as it arrives into at most gzip_buffers
 * output buffers, passed on as they fill, so that neither the body nor its
 * compressed form is ever held whole.
 */
#include "http.h"
#include "gzip_ctx.h"

static void
zstream_end(void *data)
{
    rx_http_gzip_ctx_t *ctx = data;

    if (ctx->zinit) {
        deflateEnd(&ctx->zs);
        ctx->zinit = false;
    }
}

/* zlib's memory follows the body: a known small length gets a smaller
 * window and hash (nginx does the same), whatever gzip_window says. */
static rx_int_t
deflate_start(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx)
{
    rx_pool_cleanup_t *cln = rx_pool_cleanup_add(r->pool, 0);
    int                wbits = (int) ctx->conf->wbits;
    int                memlevel = (int) ctx->conf->memlevel;
    int                rc;

    if (cln == NULL) {
        return RX_ERROR;
    }
    if (ctx->length > 0) {
        while (ctx->length < (1 << (wbits - 1)) && wbits > 9) {
            wbits--;
            memlevel--;
        }
        memlevel = rx_max(memlevel, 1);
    }
    rc = deflateInit2(&ctx->zs, (int) ctx->conf->level, Z_DEFLATED,
                      wbits + 16, memlevel, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0,
                                  "deflateInit2() failed: %d", rc);
        return RX_ERROR;
    }
    ctx->zinit = true;
    cln->handler = zstream_end;
    cln->data = ctx;
    return RX_OK;
}

/* A free output buffer: one the writer has sent, else a new one while
 * fewer than gzip_buffers exist; NULL when all are in flight. */
static rx_buf_t *
get_buf(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx)
{
    return rx_buf_get_free(r->pool, &ctx->bufs, &ctx->nbufs,
                           ctx->conf->bufs_num, ctx->conf->bufs_size);
}

/* Moves deflate to the next input buffer; false when none is queued. */
static bool
next_input(rx_http_gzip_ctx_t *ctx)
{
    rx_buf_t *b = rx_http_gzip_take_input(ctx);

    if (b == NULL) {
        return false;
    }
    ctx->in_buf = b;
    ctx->zs.next_in = (Bytef *) b->pos;
    ctx->zs.avail_in = (uInt) (b->last - b->pos);
    return true;
}

/*
 * Deflates what is queued into free output buffers and links the full
 * ones (and the last one) to *out. Stops when the input is used up, or
 * when every output buffer is in flight (the input stays queued).
 */
static rx_int_t
deflate_chain(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx, rx_chain_t ***ll)
{
    rx_chain_t *cl;
    int         mode, rc;
    bool        emit;

    for (;;) {
        if (ctx->zs.avail_in == 0 && next_input(ctx)) {
            continue;
        }
        if (ctx->zs.avail_in == 0) {
            mode = ctx->last ? Z_FINISH : ctx->flush ? Z_SYNC_FLUSH : -1;
            if (mode == -1) {
                return RX_OK;                      /* wants more input */
            }
        } else {
            mode = Z_NO_FLUSH;
        }
        if (ctx->cur == NULL && (ctx->cur = get_buf(r, ctx)) == NULL) {
            return ctx->nbufs ? RX_AGAIN : RX_ERROR;
        }
        ctx->zs.next_out = (Bytef *) ctx->cur->last;
        ctx->zs.avail_out = (uInt) (ctx->cur->end - ctx->cur->last);
        rc = deflate(&ctx->zs, mode);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0,
                                      "deflate() failed: %d, %d", mode, rc);
            return RX_ERROR;
        }
        ctx->cur->last = (char *) ctx->zs.next_out;
        if (ctx->in_buf) {
            ctx->in_buf->pos = (char *) ctx->zs.next_in;
        }
        emit = ctx->zs.avail_out == 0;
        if (rc == Z_STREAM_END) {
            ctx->zin = ctx->zs.total_in;
            ctx->zout = ctx->zs.total_out;
            zstream_end(ctx);                     /* free zlib's memory now */
            ctx->done = true;
            ctx->cur->last_buf = 1;
            emit = true;
        } else if (mode == Z_SYNC_FLUSH && ctx->zs.avail_out > 0) {
            ctx->flush = false;                   /* all of it is out */
            ctx->cur->flush = 1;
            emit = ctx->cur->last > ctx->cur->pos;
        }
        if (emit) {
            cl = rx_http_gzip_get_link(r, ctx);
            if (cl == NULL) {
                return RX_ERROR;
            }
            cl->buf = ctx->cur;
            **ll = cl;
            *ll = &cl->next;
            ctx->cur = NULL;
        }
        if (ctx->done) {
            return RX_OK;
        }
    }
}

rx_int_t
rx_http_gzip_deflate(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx,
    rx_chain_t ***ll)
{
    if (!ctx->zinit && deflate_start(r, ctx) != RX_OK) {
        return RX_ERROR;
    }
    return deflate_chain(r, ctx, ll);
}
