/*
 * fuzz_h2session.c: ringx's own HTTP/2 server session
 * (http/http_v2_session.h) fed a client's bytes, the connection preface
 * prepended. Input: byte 0 = the send buffer (64 << (bits 0-2) bytes) and
 * the window (bit 3: a small stream window, 100 bytes), byte 1 = the size
 * of each read (1-256, 0: one read), bytes 2-3 seed what the callbacks do
 * (refuse a stream, answer with a header block of some size, with a body
 * of some size, deferred and resumed, consume now or later, reset, fail
 * a HPACK decoding with COMPRESSION_ERROR); the rest is the client's.
 * After each read the session is drained with rx_h2_session_send.
 *
 * Invariants: every send gives whole frames; a header block's frames are
 * never interleaved with others and end with END_HEADERS; nothing follows
 * a GOAWAY with an error code; no DATA beyond a stream's body nor after
 * its END_STREAM; DATA within the client's windows (each stream's
 * bytes at most the largest SETTINGS_INITIAL_WINDOW_SIZE plus its
 * WINDOW_UPDATEs, all of them at most 65535 plus the connection's
 * WINDOW_UPDATEs); the bytes the session reports holding are the
 * allocator's; everything is freed at the end (LeakSanitizer).
 * RX_FUZZ_VERBOSE=1 lists the frames written.
 */
#include "fuzz.h"
#include "http_v2_session.h"

#define NSRC 8
#define NIDS 4096                       /* streams whose windows are checked */

/* DATA written, per stream and in all */
static uint64_t sent_data[NIDS], sent_total;

typedef struct {
    int32_t      id;
    size_t       len, off;
    bool         defer, ended;
} src_t;

typedef struct {
    rx_h2_session_t *s;
    uint32_t         rng;
    src_t            src[NSRC];
    size_t           bytes;          /* the allocator's live bytes */
    int32_t          pending[16];    /* consumed later */
    size_t           pending_n[16];
    int              npending;
} fz_t;

static uint8_t body_bytes[70000];
static uint8_t block_bytes[40000];

static uint32_t
rnd(fz_t *f)
{
    f->rng = f->rng * 1103515245u + 12345u;
    return f->rng >> 16;
}

static src_t *
src_of(fz_t *f, int32_t id)
{
    int i;

    for (i = 0; i < NSRC; i++) {
        if (f->src[i].id == id) {
            return &f->src[i];
        }
    }
    return NULL;
}

static uint32_t
on_begin(rx_h2_session_t *s, int32_t id, void *ud)
{
    return rnd(ud) % 16 == 0 ? RX_H2_REFUSED_STREAM : 0;
}

static void
on_block(rx_h2_session_t *s, int32_t id, void *sud, const uint8_t *b,
    size_t len, unsigned flags, void *ud)
{
    fz_t   *f = ud;
    src_t  *src;
    uint32_t r = rnd(f);

    if (r % 64 == 0) {
        rx_h2_session_terminate(s, RX_H2_COMPRESSION_ERROR);
        return;
    }
    if ((flags & (RX_H2_BLOCK_REFUSED | RX_H2_BLOCK_TRAILERS)) || r % 4 == 0
        || (src = src_of(f, 0)) == NULL) {
        return;                         /* answered later, or never */
    }
    *src = (src_t) { id, rnd(f) % 3 == 0 ? 0 : rnd(f) % sizeof(body_bytes),
                     0, rnd(f) % 4 == 0, false };
    if (rx_h2_submit_headers(s, id, block_bytes, rnd(f) % 3 ? 20
                             : rnd(f) % sizeof(block_bytes), src->len == 0) != 0
        || (src->len && rx_h2_submit_data(s, id) != 0)) {
        src->id = 0;
    }
}

static void
on_data(rx_h2_session_t *s, int32_t id, void *sud, const uint8_t *p,
    size_t len, bool end, void *ud)
{
    fz_t    *f = ud;
    uint32_t r = rnd(f);

    if (len) {
        volatile uint8_t x = p[0] ^ p[len - 1];   /* ASan: inside */
        (void) x;
    }
    if (r % 32 == 0) {
        rx_h2_submit_rst_stream(s, id, RX_H2_CANCEL);
    }
    if (r % 3 == 0 && f->npending < 16) {
        f->pending[f->npending] = id;
        f->pending_n[f->npending++] = len;
    } else {
        rx_h2_session_consume(s, id, len);
    }
}

static void
on_close(rx_h2_session_t *s, int32_t id, void *sud, uint32_t code, void *ud)
{
    src_t *src = src_of(ud, id);

    if (src) {
        src->id = 0;
    }
}

static ssize_t
on_source(rx_h2_session_t *s, int32_t id, void *sud, uint8_t *dst, size_t max,
    bool *eof, void *ud)
{
    fz_t   *f = ud;
    src_t  *src = src_of(f, id);
    size_t  n;

    FUZZ_CHECK(src != NULL && !src->ended, "DATA asked of stream %d without a body", id);
    FUZZ_CHECK(max > 0, "DATA of 0 bytes asked of stream %d", id);
    if (src->defer || rnd(f) % 8 == 0) {
        return RX_H2_DEFERRED;
    }
    n = src->len - src->off < max ? src->len - src->off : max;
    n = rnd(f) % 2 ? n : n / 2;
    memcpy(dst, body_bytes + src->off, n);
    src->off += n;
    *eof = src->off == src->len;
    src->ended = *eof;
    return (ssize_t) n;
}

static void *
fz_alloc(size_t size, void *mud)
{
    ((fz_t *) mud)->bytes += size;
    return malloc(size);
}

static void
fz_free(void *p, size_t size, void *mud)
{
    ((fz_t *) mud)->bytes -= size;
    free(p);
}

static const rx_h2_callbacks_t cbs = {
    on_begin, on_block, on_data, on_close, NULL, NULL, NULL, on_source,
    NULL, NULL
};

/* What was written: whole frames, header blocks not interleaved, nothing
 * after an error's GOAWAY. */
static void
check_out(const uint8_t *out, size_t n, int32_t *hopen, bool *dead)
{
    rx_h2_frame_hd_t hd;
    size_t           off = 0;

    while (off < n) {
        FUZZ_CHECK(!*dead, "a frame after GOAWAY with an error");
        FUZZ_CHECK(n - off >= 9, "a cut frame header (%zu bytes)", n - off);
        rx_h2_frame_hd_read(&hd, out + off);
        if (fuzz_verbose()) {
            fprintf(stderr, "out: type %u flags 0x%x stream %d length %u\n",
                    hd.type, hd.flags, (int) hd.stream_id, hd.length);
        }
        FUZZ_CHECK(n - off - 9 >= hd.length, "a cut frame (type %u)", hd.type);
        FUZZ_CHECK(hd.length <= RX_H2_MAX_FRAME_SIZE, "frame of %u", hd.length);
        if (*hopen) {
            FUZZ_CHECK(hd.type == RX_H2_CONTINUATION && hd.stream_id == *hopen,
                       "frame type %u inside the header block of stream %d",
                       hd.type, *hopen);
        }
        if (hd.type == RX_H2_HEADERS || hd.type == RX_H2_CONTINUATION) {
            *hopen = (hd.flags & RX_H2_F_END_HEADERS) ? 0 : hd.stream_id;
        }
        if (hd.type == RX_H2_DATA) {
            sent_total += hd.length;
            if (hd.stream_id < NIDS) {
                sent_data[hd.stream_id] += hd.length;
            }
        }
        if (hd.type == RX_H2_GOAWAY && rx_h2_get32(out + off + 13) != 0) {
            *dead = true;
        }
        off += 9 + hd.length;
    }
}

static void
drain(fz_t *f, uint8_t *out, size_t room, int32_t *hopen, bool *dead)
{
    size_t n;
    int    i, turns = 0;

    for (i = 0; i < f->npending; i++) {
        rx_h2_session_consume(f->s, f->pending[i], f->pending_n[i]);
    }
    f->npending = 0;
    for (i = 0; i < NSRC; i++) {
        if (f->src[i].id && f->src[i].defer && rnd(f) % 2) {
            f->src[i].defer = false;
            rx_h2_session_resume_data(f->s, f->src[i].id);
        }
    }
    while (turns++ < 64 && (n = rx_h2_session_send(f->s, out, room)) > 0) {
        check_out(out, n, hopen, dead);
    }
    FUZZ_CHECK(rx_h2_session_mem(f->s) == f->bytes,
               "the session says it holds %zu bytes, the allocator %zu",
               rx_h2_session_mem(f->s), f->bytes);
}

/* The client's windows as its frames allow at most (a bound, whatever
 * the session made of them), against the DATA written: a stream's window
 * starts at the SETTINGS_INITIAL_WINDOW_SIZE in effect when its HEADERS
 * came and follows the later ones, so it never exceeds the largest of
 * those plus its WINDOW_UPDATEs. */
#define NSET 256
static void
check_windows(const uint8_t *p, size_t n)
{
    static uint64_t wu[NIDS];
    static uint32_t opened[NIDS], set_at[NSET], set_v[NSET];
    uint64_t        conn = RX_H2_DEFAULT_WINDOW, iws, bound;
    uint32_t        cur = RX_H2_DEFAULT_WINDOW, frame = 0, nset = 0, k;
    size_t          off = 0, i;
    rx_h2_frame_hd_t hd;

    memset(wu, 0, sizeof(wu));
    memset(opened, 0, sizeof(opened));
    for (; off + 9 <= n; off += 9 + hd.length, frame++) {
        rx_h2_frame_hd_read(&hd, p + off);
        if (off + 9 + hd.length > n) {
            /* a frame cut by the end of the input: the session applies
             * a SETTINGS frame's entries one by one as they come, so
             * those that arrived whole count */
            if (hd.type != RX_H2_SETTINGS) {
                break;
            }
            hd.length = (uint32_t) (n - off - 9);
        }
        if (hd.type == RX_H2_HEADERS && hd.stream_id < NIDS && !opened[hd.stream_id]) {
            opened[hd.stream_id] = frame + 1;
        }
        if (hd.type == RX_H2_WINDOW_UPDATE && hd.length == 4) {
            uint32_t inc = rx_h2_get32(p + off + 9) & 0x7fffffff;

            if (hd.stream_id == 0) {
                conn += inc;
            } else if (hd.stream_id < NIDS) {
                wu[hd.stream_id] += inc;
            }
        }
        for (i = 0; hd.type == RX_H2_SETTINGS && !(hd.flags & RX_H2_F_ACK)
                    && i + 6 <= hd.length; i += 6) {
            const uint8_t *e = p + off + 9 + i;

            if ((e[0] << 8 | e[1]) == RX_H2_SET_INITIAL_WINDOW_SIZE) {
                cur = rx_h2_get32(e + 2);
                if (nset == NSET) {
                    return;                 /* too many to follow */
                }
                set_at[nset] = frame + 1;
                set_v[nset++] = cur;
            }
        }
    }
    FUZZ_CHECK(sent_total <= conn, "%llu bytes of DATA, the connection's "
               "window at most %llu", (unsigned long long) sent_total,
               (unsigned long long) conn);
    for (i = 1; i < NIDS; i++) {
        if (sent_data[i] == 0) {
            continue;
        }
        /* the IWS in effect at its HEADERS, then the later ones */
        for (iws = RX_H2_DEFAULT_WINDOW, k = 0; k < nset && set_at[k] < opened[i]; k++) {
            iws = set_v[k];
        }
        for (bound = iws; k < nset; k++) {
            bound = set_v[k] > bound ? set_v[k] : bound;
        }
        FUZZ_CHECK(opened[i] && sent_data[i] <= bound + wu[i], "stream %zu: "
                   "%llu bytes of DATA, its window at most %llu", i,
                   (unsigned long long) sent_data[i],
                   (unsigned long long) (bound + wu[i]));
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t out[(64 << 7) + 64];
    fz_t           f;
    rx_h2_mem_t    mem = { fz_alloc, fz_free, &f };
    size_t         room, step, off;
    int32_t        hopen = 0;
    bool           dead = false;
    ssize_t        r;

    if (size < 4) {
        return 0;
    }
    memset(&f, 0, sizeof(f));
    memset(sent_data, 0, sizeof(sent_data));
    sent_total = 0;
    room = (size_t) 64 << (data[0] & 7);
    step = data[1] ? data[1] : SIZE_MAX;
    f.rng = (uint32_t) data[2] << 8 | data[3];
    f.s = rx_h2_session_new(&cbs, &(rx_h2_config_t) {
              .max_concurrent_streams = 8,
              .initial_window_size = (data[0] & 8) ? 100 : 0,
              .conn_window = 1 << 20, .max_header_block = 8192 }, &mem, &f);
    FUZZ_CHECK(f.s != NULL, "no session");
    r = rx_h2_session_recv(f.s, (const uint8_t *) RX_H2_PREFACE, RX_H2_PREFACE_LEN);
    FUZZ_CHECK(r == RX_H2_PREFACE_LEN, "the preface refused");
    data += 4;
    size -= 4;
    for (off = 0; off < size; off += step) {
        /* an exact heap copy of each read: ASan sees a byte past it */
        size_t   n = size - off < step ? size - off : step;
        uint8_t *copy = (uint8_t *) fuzz_dup(data + off, n);

        r = rx_h2_session_recv(f.s, copy, n);
        free(copy);
        FUZZ_CHECK(r == (ssize_t) n, "recv took %zd of %zu", r, n);
        drain(&f, out, room, &hopen, &dead);
        if (step == SIZE_MAX) {
            break;
        }
    }
    drain(&f, out, room, &hopen, &dead);
    check_windows(data, size);
    rx_h2_session_del(f.s);
    FUZZ_CHECK(f.bytes == 0, "%zu bytes not freed", f.bytes);
    return 0;
}
