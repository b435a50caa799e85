/*
 * charset_recode.c: recoding a response body with a charset_map table,
 * streamed: each input buffer is recoded whole into the filter's own
 * buffers (used again once the writer has sent them), except the first
 * bytes of a UTF-8 sequence the buffer cuts, held for the next one. A
 * character the single-byte charset lacks becomes "&#NNNN;", a byte that
 * is no UTF-8 "?", as nginx does.
 */
#include "charset.h"

#define RECODE_BUF_SIZE  16384
#define RECODE_ROOM      16        /* the longest output of one character */

static rx_int_t
link_buf(rx_http_request_t *r, rx_charset_ctx_t *ctx, rx_buf_t *b)
{
    return rx_chain_append_buf(r->pool, &ctx->free, &ctx->last_out, b);
}

static rx_buf_t *
get_buf(rx_http_request_t *r, rx_charset_ctx_t *ctx)
{
    return rx_buf_get_spent(r->pool, &ctx->bufs, RECODE_BUF_SIZE);
}

/* Room for one character's output in the current buffer. */
static char *
room(rx_http_request_t *r, rx_charset_ctx_t *ctx)
{
    if (ctx->cur && ctx->cur->end - ctx->cur->last < RECODE_ROOM) {
        if (link_buf(r, ctx, ctx->cur) != RX_OK) {
            return NULL;
        }
        ctx->cur = NULL;
    }
    if (ctx->cur == NULL && (ctx->cur = get_buf(r, ctx)) == NULL) {
        return NULL;
    }
    return ctx->cur->last;
}

/* The byte of a code point in the single-byte charset, or -1. */
static int
cp_byte(const rx_charset_map_t *m, uint32_t cp)
{
    rx_uint_t lo = 0, hi = m->ncps, mid;

    while (lo < hi) {
        mid = (lo + hi) / 2;
        if ((m->cps[mid] >> 8) == cp) {
            return (int) (m->cps[mid] & 0xff);
        }
        if ((m->cps[mid] >> 8) < cp) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return -1;
}

/* How long the UTF-8 sequence led by c is (0: not a lead byte). */
static int
seq_len(unsigned char c)
{
    return c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3
           : c < 0xf5 ? 4 : 0;
}

/* One whole sequence s[0..n) to the output: its byte, "&#cp;", or "?"
 * when it is not UTF-8 (overlong, a surrogate, a bad continuation). */
static void
put_from_utf8(const rx_charset_map_t *m, const unsigned char *s, int n,
    char **p)
{
    static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    uint32_t              cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
    int                   i, b;

    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *(*p)++ = '?';
            return;
        }
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        *(*p)++ = '?';
        return;
    }
    b = cp_byte(m, cp);
    if (b >= 0) {
        *(*p)++ = (char) b;
    } else {
        *p += snprintf(*p, RECODE_ROOM, "&#%u;", (unsigned) cp);
    }
}

/* UTF-8 in data[0..len) (after what is held) to single bytes; a sequence
 * cut at the end is held, even over a flush, unless this is the last
 * buffer (then it is "?"). */
static rx_int_t
from_utf8(rx_http_request_t *r, rx_charset_ctx_t *ctx, const unsigned char *d,
    size_t len, bool final)
{
    size_t i = 0;
    char  *p;
    int    n, k;

    while (ctx->held_len && i < len) {        /* finish the held sequence */
        n = seq_len(ctx->held[0]);
        if ((d[i] & 0xc0) != 0x80) {
            n = (int) ctx->held_len;           /* cut short: not UTF-8 */
        } else {
            ctx->held[ctx->held_len++] = d[i++];
        }
        if ((int) ctx->held_len == n) {
            if ((p = room(r, ctx)) == NULL) {
                return RX_ERROR;
            }
            if (n == seq_len(ctx->held[0])) {
                put_from_utf8(ctx->map, ctx->held, n, &p);
            } else {
                *p++ = '?';
            }
            ctx->cur->last = p;
            ctx->held_len = 0;
        }
    }
    while (i < len) {
        if ((p = room(r, ctx)) == NULL) {
            return RX_ERROR;
        }
        /* a run of ASCII up to the room left */
        while (i < len && d[i] < 0x80 && p < ctx->cur->end) {
            *p++ = (char) d[i++];
        }
        if (i < len && d[i] >= 0x80 && ctx->cur->end - p >= RECODE_ROOM) {
            n = seq_len(d[i]);
            if (n == 0) {
                *p++ = '?';
                i++;
            } else if (i + (size_t) n > len) {
                for (k = 0; i < len; k++) {
                    ctx->held[k] = d[i++];
                }
                ctx->held_len = (size_t) k;
            } else {
                put_from_utf8(ctx->map, d + i, n, &p);
                i += (size_t) n;
            }
        }
        ctx->cur->last = p;
    }
    if (final && ctx->held_len) {
        if ((p = room(r, ctx)) == NULL) {
            return RX_ERROR;
        }
        *p++ = '?';
        ctx->cur->last = p;
        ctx->held_len = 0;
    }
    return RX_OK;
}

/* Single bytes to single bytes, or to UTF-8 (an unmapped byte: "?"). */
static rx_int_t
from_bytes(rx_http_request_t *r, rx_charset_ctx_t *ctx, const unsigned char *d,
    size_t len)
{
    const rx_charset_map_t *m = ctx->map;
    const uint8_t          *t = ctx->reverse ? m->back : m->to;
    size_t                  i = 0;
    char                   *p;

    while (i < len) {
        if ((p = room(r, ctx)) == NULL) {
            return RX_ERROR;
        }
        if (ctx->mode == RX_CHARSET_BYTES) {
            while (i < len && p < ctx->cur->end) {
                *p++ = (char) t[d[i++]];
            }
        } else {
            while (i < len && ctx->cur->end - p >= 4) {
                if (m->ulen[d[i]] == 0) {
                    *p++ = '?';
                } else {
                    memcpy(p, m->utf[d[i]], m->ulen[d[i]]);
                    p += m->ulen[d[i]];
                }
                i++;
            }
        }
        ctx->cur->last = p;
    }
    return RX_OK;
}

/* The last buffer or a flush: on the output's last bytes, or alone. */
static rx_int_t
mark_end(rx_http_request_t *r, rx_charset_ctx_t *ctx, const rx_buf_t *in)
{
    rx_buf_t *b = ctx->cur;

    if (b == NULL || b->last == b->pos) {
        b = rx_calloc_buf(r->pool);
        if (b == NULL) {
            return RX_ERROR;
        }
        b->sync = 1;
        b->fd = -1;
    } else {
        ctx->cur = NULL;
    }
    b->last_buf = in->last_buf;
    b->flush = in->flush;
    return link_buf(r, ctx, b);
}

rx_int_t
rx_http_charset_recode(rx_http_request_t *r, rx_charset_ctx_t *ctx,
    rx_chain_t *in, rx_http_output_body_filter_pt next)
{
    rx_chain_t *cl, *nx;
    rx_buf_t   *b;
    rx_int_t    rc;
    bool        final;

    for (; in; in = in->next) {
        b = in->buf;
        if (b->in_file && !b->memory) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "charset filter got "
                "a file buffer: its producer ignored filter_need_in_memory");
            return RX_ERROR;
        }
        final = b->last_buf || b->flush;
        rc = ctx->mode == RX_CHARSET_FROM_UTF8
             ? from_utf8(r, ctx, (unsigned char *) b->pos,
                         (size_t) (b->last - b->pos), b->last_buf)
             : from_bytes(r, ctx, (unsigned char *) b->pos,
                          (size_t) (b->last - b->pos));
        if (rc != RX_OK) {
            return RX_ERROR;
        }
        b->pos = b->last;                      /* all of it is recoded */
        if (final && mark_end(r, ctx, b) != RX_OK) {
            return RX_ERROR;
        }
    }
    if (ctx->cur && ctx->cur->last > ctx->cur->pos) {
        if (link_buf(r, ctx, ctx->cur) != RX_OK) {
            return RX_ERROR;
        }
        ctx->cur = NULL;
    }
    /* even with nothing to pass the writer runs: the header may wait for
     * the first body bytes */
    cl = ctx->out;
    ctx->out = NULL;
    ctx->last_out = &ctx->out;
    rc = next(r, cl);
    for (; cl; cl = nx) {                      /* downstream keeps its own */
        nx = cl->next;
        cl->next = ctx->free;
        ctx->free = cl;
    }
    return rc;
}
