/*
 * gzip_ctx.h: one compressed response's state, shared by the gzip filter
 * (gzip.c, which queues the input) and its two compressors: zlib's stream
 * (gzip_stream.c) and libdeflate's one call (gzip_whole.c). Private to
 * those files.
 */
#ifndef RX_GZIP_CTX_H
#define RX_GZIP_CTX_H

#include <zlib.h>
#include "http.h"
#include "gzip.h"


/* One compressed response. Output buffers are ours until the writer has
 * sent them (pos == last again); input buffers belong to the producer,
 * which reuses them only once everything queued is sent and no filter
 * holds input (r->filter_buffered). */
typedef struct {
    z_stream              zs;
    rx_http_gzip_conf_t  *conf;
    int64_t               length;     /* Content-Length before us, or -1 */
    rx_chain_t           *in;         /* input links not yet taken */
    rx_chain_t          **in_tail;
    rx_chain_t           *free;       /* spare chain links */
    rx_buf_t             *in_buf;     /* being deflated (zs.next_in) */
    rx_buf_t            **bufs;       /* output buffers, up to bufs_num */
    rx_int_t              nbufs;
    rx_buf_t             *cur;        /* deflate writes here */
    uint64_t              zin, zout;  /* totals, set when the stream ends */
    bool                  zinit;      /* deflateEnd is owed */
    bool                  last;       /* last_buf seen */
    bool                  flush;      /* a flush was asked */
    bool                  done;       /* the stream ended */
    bool                  stream;     /* zlib's stream, not one call */
    rx_buf_t             *gathered;   /* pieces kept for one call */
} rx_http_gzip_ctx_t;

/* ---- gzip.c: the input queue ------------------------------------------ */

/* A chain link from the spare ones, else from the pool; NULL when out of
 * memory. */
rx_chain_t *rx_http_gzip_get_link(rx_http_request_t *r,
    rx_http_gzip_ctx_t *ctx);

/* Gives the first queued link back to the spare ones and notes its
 * buffer's flags (last_buf, flush); the buffer, or NULL when none is
 * queued. */
rx_buf_t *rx_http_gzip_take_input(rx_http_gzip_ctx_t *ctx);

/* ---- gzip_stream.c: zlib's stream ------------------------------------- */

/*
 * Deflates what is queued (starting zlib's stream on the first call) into
 * free output buffers, linking the full ones and the last one at *ll.
 * RX_OK: the input is used up (or the stream ended); RX_AGAIN: every
 * output buffer is in flight and input stays queued; RX_ERROR (logged).
 */
rx_int_t rx_http_gzip_deflate(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx,
    rx_chain_t ***ll);

#if (RX_HAVE_LIBDEFLATE)

/* ---- gzip_whole.c: libdeflate in one call ----------------------------- */

/*
 * A body that surely fits gzip_buffers compressed, in one call. RX_OK:
 * compressed, done; RX_AGAIN: all input taken, more to come; RX_DECLINED:
 * zlib's stream from here on (the gathered bytes queued first); RX_ERROR.
 */
rx_int_t rx_http_gzip_whole(rx_http_request_t *r, rx_http_gzip_ctx_t *ctx,
    rx_chain_t ***ll);

/* Frees this worker's compressors (at its exit). */
void rx_http_gzip_whole_free(void);

#endif

#endif /* RX_GZIP_CTX_H */
