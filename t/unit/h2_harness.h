/*
 * h2_harness.h: what t/unit/test_h2session.c drives ringx's own HTTP/2
 * session (http/http_v2_session.h) with: a frame builder for the client's
 * bytes, callbacks that write what they saw into a text log, response
 * bodies served from memory, a counting allocator, and a parser of the
 * frames the session wrote.
 */
#ifndef RX_H2_HARNESS_H
#define RX_H2_HARNESS_H

#include <stdlib.h>
#include <string.h>
#include "http_v2_session.h"

#define H_IN_MAX    (256 * 1024)
#define H_OUT_MAX   (256 * 1024)
#define H_LOG_MAX   16384
#define H_FRAMES    1024

typedef struct {
    uint8_t          type, flags;
    int32_t          id;
    uint32_t         len;
    const uint8_t   *payload;
} h_frame_t;

typedef struct {
    const uint8_t   *body;       /* the response of stream `id` */
    size_t           len, off;
    int32_t          id;
    bool             defer;      /* data_source says DEFERRED */
} h_src_t;

typedef struct {
    rx_h2_session_t *s;
    uint8_t          in[H_IN_MAX];
    size_t           in_len;
    uint8_t          out[H_OUT_MAX];
    size_t           out_len;
    h_frame_t        f[H_FRAMES];
    int              nf;
    char             log[H_LOG_MAX];
    size_t           log_len;
    h_src_t          src[4];
    uint32_t         refuse;     /* begin_headers' answer */
    uint32_t         terminate;  /* header_block terminates with it */
    uint32_t         override;   /* the error callback terminates with it */
    long             fail_after; /* allocations that succeed (0: all) */
    const char      *why;        /* the last error's */
    bool             auto_consume;
    long             allocs;     /* live allocations */
    size_t           bytes;      /* live bytes */
} h_t;

static void __attribute__((format(printf, 2, 3)))
h_log(h_t *h, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    h->log_len += (size_t) vsnprintf(h->log + h->log_len,
                                     H_LOG_MAX - h->log_len, fmt, ap);
    va_end(ap);
    if (h->log_len >= H_LOG_MAX) {
        h->log_len = H_LOG_MAX - 1;
    }
}

static uint32_t
h_sum(const uint8_t *p, size_t n)
{
    uint32_t v = 2166136261u;

    while (n--) {
        v = (v ^ *p++) * 16777619u;
    }
    return v;
}

static uint32_t
cb_begin(rx_h2_session_t *s, int32_t id, void *ud)
{
    h_t *h = ud;

    h_log(h, "B%d ", id);
    return h->refuse;
}

static void
cb_block(rx_h2_session_t *s, int32_t id, void *sud, const uint8_t *b,
    size_t len, unsigned flags, void *ud)
{
    h_t *h = ud;

    h_log(h, "H%d:%zu:%08x%s%s%s ", id, len, h_sum(b, len),
          flags & RX_H2_BLOCK_END_STREAM ? "e" : "",
          flags & RX_H2_BLOCK_TRAILERS ? "t" : "",
          flags & RX_H2_BLOCK_REFUSED ? "r" : "");
    if (h->terminate) {
        rx_h2_session_terminate(s, h->terminate);
    }
}

/* DATA: logged byte by byte would differ by split; bytes are summed
 * into one entry per run of calls of a stream instead */
static int32_t  h_data_id;
static size_t   h_data_n;
static uint32_t h_data_sum;

static void
h_data_flush(h_t *h)
{
    if (h_data_id) {
        h_log(h, "D%d:%zu:%08x ", h_data_id, h_data_n, h_data_sum);
        h_data_id = 0;
    }
}

static void
cb_data(rx_h2_session_t *s, int32_t id, void *sud, const uint8_t *p,
    size_t len, bool end, void *ud)
{
    h_t    *h = ud;
    size_t  i;

    if (h_data_id != id) {
        h_data_flush(h);
        h_data_id = id;
        h_data_n = 0;
        h_data_sum = 0;
    }
    for (i = 0; i < len; i++) {
        h_data_sum = h_data_sum * 31 + p[i];
    }
    h_data_n += len;
    if (end) {
        h_data_flush(h);
        h_log(h, "E%d ", id);
    }
    if (h->auto_consume) {
        rx_h2_session_consume(s, id, len);
    }
}

static void
cb_close(rx_h2_session_t *s, int32_t id, void *sud, uint32_t code, void *ud)
{
    h_data_flush(ud);
    h_log(ud, "C%d:%u ", id, code);
}

static void
cb_rst(rx_h2_session_t *s, int32_t id, void *sud, uint32_t code, void *ud)
{
    h_data_flush(ud);
    h_log(ud, "R%d:%u ", id, code);
}

static void
cb_goaway(rx_h2_session_t *s, int32_t last, uint32_t code, void *ud)
{
    h_log(ud, "G%d:%u ", last, code);
}

static void
cb_settings(rx_h2_session_t *s, const rx_h2_settings_t *r, void *ud)
{
    h_log(ud, "S:%u:%u ", r->initial_window_size, r->max_frame_size);
}

static void
cb_error(rx_h2_session_t *s, int32_t id, uint32_t code, const char *why,
    void *ud)
{
    h_t *h = ud;

    h_data_flush(h);
    h_log(h, "X%d:%u ", id, code);
    h->why = why;
    if (h->override && id == 0) {
        rx_h2_session_terminate(s, h->override);
    }
}

static ssize_t
cb_source(rx_h2_session_t *s, int32_t id, void *sud, uint8_t *dst,
    size_t max, bool *eof, void *ud)
{
    h_t    *h = ud;
    h_src_t *src = NULL;
    size_t  i, n;

    for (i = 0; i < 4; i++) {
        if (h->src[i].id == id) {
            src = &h->src[i];
        }
    }
    if (src == NULL) {
        return RX_H2_SOURCE_ERR;
    }
    if (src->defer) {
        return RX_H2_DEFERRED;
    }
    n = src->len - src->off < max ? src->len - src->off : max;
    memcpy(dst, src->body + src->off, n);
    src->off += n;
    *eof = src->off == src->len;
    return (ssize_t) n;
}

static void *
h_alloc(size_t size, void *mud)
{
    h_t *h = mud;

    if (h->fail_after && --h->fail_after == 0) {
        return NULL;
    }
    h->allocs++;
    h->bytes += size;
    return malloc(size);
}

static void
h_free(void *p, size_t size, void *mud)
{
    h_t *h = mud;

    h->allocs--;
    h->bytes -= size;
    free(p);
}

static const rx_h2_callbacks_t h_cb = {
    cb_begin, cb_block, cb_data, cb_close, cb_rst, cb_goaway, cb_settings,
    cb_source, NULL, cb_error
};

static void
h_init(h_t *h, const rx_h2_config_t *conf)
{
    rx_h2_mem_t mem = { h_alloc, h_free, h };

    memset(h, 0, sizeof(*h));
    h_data_id = 0;
    h->s = rx_h2_session_new(&h_cb, conf, &mem, h);
}

/* ---- the client's bytes ---- */

static void
h_frame(h_t *h, uint8_t type, uint8_t flags, int32_t id, const void *p,
    size_t len)
{
    rx_h2_frame_hd_write(h->in + h->in_len, (uint32_t) len, type, flags, id);
    if (len) {
        memcpy(h->in + h->in_len + 9, p, len);
    }
    h->in_len += 9 + len;
}

static void
h_raw(h_t *h, const void *p, size_t len)
{
    memcpy(h->in + h->in_len, p, len);
    h->in_len += len;
}

static void
h_settings(h_t *h, int n, const uint16_t *ids, const uint32_t *v)
{
    uint8_t p[6 * 64];
    int     i;

    for (i = 0; i < n; i++) {
        p[6 * i] = (uint8_t) (ids[i] >> 8);
        p[6 * i + 1] = (uint8_t) ids[i];
        rx_h2_put32(p + 6 * i + 2, v[i]);
    }
    h_frame(h, RX_H2_SETTINGS, 0, 0, p, (size_t) n * 6);
}

static void
h_u32(h_t *h, uint8_t type, uint8_t flags, int32_t id, uint32_t v)
{
    uint8_t p[4];

    rx_h2_put32(p, v);
    h_frame(h, type, flags, id, p, 4);
}

/* the preface and an empty SETTINGS */
static void
h_hello(h_t *h)
{
    h_raw(h, RX_H2_PREFACE, RX_H2_PREFACE_LEN);
    h_settings(h, 0, NULL, NULL);
}

/* feeds what was built, as one piece, and empties it */
static ssize_t
h_recv(h_t *h)
{
    ssize_t r = rx_h2_session_recv(h->s, h->in, h->in_len);

    h->in_len = 0;
    h_data_flush(h);
    return r;
}

/* ---- what the session wrote ---- */

/* one send into room bytes; appended to out and parsed into f */
static size_t
h_send_room(h_t *h, size_t room)
{
    size_t   n = rx_h2_session_send(h->s, h->out + h->out_len, room);
    size_t   off = h->out_len;

    h->out_len += n;
    while (off + 9 <= h->out_len && h->nf < H_FRAMES) {
        rx_h2_frame_hd_t hd;

        rx_h2_frame_hd_read(&hd, h->out + off);
        h->f[h->nf++] = (h_frame_t) { hd.type, hd.flags, hd.stream_id,
                                      hd.length, h->out + off + 9 };
        off += 9 + hd.length;
    }
    return n;
}

static size_t
h_send(h_t *h)
{
    return h_send_room(h, 65536);
}

static void
h_out_reset(h_t *h)
{
    h->out_len = 0;
    h->nf = 0;
}

/* the code of the last GOAWAY written, -1 when none */
static int64_t
h_goaway(h_t *h)
{
    int i;

    for (i = h->nf - 1; i >= 0; i--) {
        if (h->f[i].type == RX_H2_GOAWAY) {
            return rx_h2_get32(h->f[i].payload + 4);
        }
    }
    return -1;
}

/* the code of the last RST_STREAM of stream id written, -1 when none */
static int64_t
h_rst(h_t *h, int32_t id)
{
    int i;

    for (i = h->nf - 1; i >= 0; i--) {
        if (h->f[i].type == RX_H2_RST_STREAM && h->f[i].id == id) {
            return rx_h2_get32(h->f[i].payload);
        }
    }
    return -1;
}

/* frames of a type written */
static int
h_count(h_t *h, uint8_t type)
{
    int i, n = 0;

    for (i = 0; i < h->nf; i++) {
        n += h->f[i].type == type;
    }
    return n;
}

#endif /* RX_H2_HARNESS_H */
