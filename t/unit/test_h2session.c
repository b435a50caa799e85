/*
 * test_h2session.c: ringx's own HTTP/2 server session
 * (http/http_v2_session.h), driven with byte strings built here
 * (h2_harness.h) and checked by its callbacks and the frames it writes:
 * the preface and SETTINGS exchange, a GET, a POST and its windows, a
 * response split by windows and frame sizes, every connection and stream
 * error of RFC 9113 it owns with its code, the floods' bounds, input cut
 * at every byte, and the memory it holds.
 */
#include <stdarg.h>
#include "tap.h"
#include "h2_harness.h"

static h_t H;

static const uint8_t block3[] = { 0x82, 0x84, 0x87 };  /* any bytes */

static void
test_preface_settings(void)
{
    h_t *h = &H;
    int  i;

    h_init(h, &(rx_h2_config_t) { .max_concurrent_streams = 10,
                                  .initial_window_size = 1000,
                                  .conn_window = 1 << 20 });
    ok(rx_h2_session_want_write(h->s), "a new session wants to write its SETTINGS");
    h_send(h);
    ok(h->nf == 2 && h->f[0].type == RX_H2_SETTINGS && h->f[0].flags == 0
       && h->f[0].len == 18, "SETTINGS first, 3 entries");
    ok(h->f[0].payload[1] == RX_H2_SET_MAX_CONCURRENT_STREAMS
       && rx_h2_get32(h->f[0].payload + 2) == 10
       && h->f[0].payload[7] == RX_H2_SET_INITIAL_WINDOW_SIZE
       && rx_h2_get32(h->f[0].payload + 8) == 1000,
       "SETTINGS say max_concurrent_streams and initial_window_size");
    ok(h->f[1].type == RX_H2_WINDOW_UPDATE && h->f[1].id == 0
       && rx_h2_get32(h->f[1].payload) == (1 << 20) - 65535,
       "the connection window opened to conn_window");
    ok(!rx_h2_session_want_write(h->s), "then nothing to write");
    h_out_reset(h);
    h_hello(h);
    is_int(h_recv(h), RX_H2_PREFACE_LEN + 9, "the preface and SETTINGS taken");
    is_str(h->log, "S:65535:16384 ", "the settings callback");
    h_send(h);
    ok(h->nf == 1 && h->f[0].type == RX_H2_SETTINGS
       && h->f[0].flags == RX_H2_F_ACK && h->f[0].len == 0, "SETTINGS acknowledged");
    for (i = 0; i < 3; i++) {
        ok(rx_h2_session_want_read(h->s), "wants to read");
    }
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "everything freed");
}

static void
test_get(void)
{
    h_t *h = &H;

    h_init(h, NULL);
    h_send(h);
    h_hello(h);
    h_frame(h, RX_H2_SETTINGS, RX_H2_F_ACK, 0, NULL, 0);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1,
            block3, 3);
    h_recv(h);
    ok(strstr(h->log, "B1 H1:3:") && strstr(h->log, "e "), "GET: begin_headers, block, end_stream: %s", h->log);
    is_int(rx_h2_session_remote_closed(h->s, 1), 1, "its client side is closed");
    is_int(rx_h2_session_mem(h->s) > 0 && h->bytes == rx_h2_session_mem(h->s), 1,
           "mem() is what the allocator holds");
    ok(rx_h2_submit_headers(h->s, 1, block3, 3, true) == 0, "response submitted");
    h_out_reset(h);
    h_send(h);
    ok(h->nf == 2 && h->f[1].type == RX_H2_HEADERS && h->f[1].id == 1
       && h->f[1].flags == (RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM)
       && h->f[1].len == 3 && memcmp(h->f[1].payload, block3, 3) == 0,
       "HEADERS with END_STREAM and the block as given");
    ok(strstr(h->log, "C1:0 ") != NULL, "the stream closed with NO_ERROR");
    is_int(h_rst(h, 1), -1, "no RST_STREAM (the client's side was closed)");
    ok(!rx_h2_session_want_write(h->s), "nothing more to write");
    is_int(h->bytes, rx_h2_session_mem(h->s), "idle: mem() is all it holds");
    ok(rx_h2_session_mem(h->s) < 640, "an idle session holds < 640 bytes (%zu)",
       rx_h2_session_mem(h->s));
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "everything freed");
}

static void
test_post_windows(void)
{
    h_t     *h = &H;
    uint8_t  body[600], pad[60];
    int      i;

    for (i = 0; i < 600; i++) {
        body[i] = (uint8_t) i;
    }
    h_init(h, &(rx_h2_config_t) { .initial_window_size = 1000,
                                  .conn_window = 2000 });
    h_send(h);
    h_out_reset(h);
    h_hello(h);
    h_frame(h, RX_H2_SETTINGS, RX_H2_F_ACK, 0, NULL, 0);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 1, block3, 3);
    h_frame(h, RX_H2_DATA, 0, 1, body, 500);
    /* padded: 1 + 40 + 19 bytes of padding */
    pad[0] = 19;
    memcpy(pad + 1, body + 500, 40);
    memset(pad + 41, 0, 19);
    h_frame(h, RX_H2_DATA, RX_H2_F_PADDED, 1, pad, 60);
    h_recv(h);
    ok(strstr(h->log, "D1:540:") != NULL, "540 bytes of DATA given, padding removed: %s", h->log);
    h_send(h);
    is_int(h_count(h, RX_H2_WINDOW_UPDATE), 0, "no WINDOW_UPDATE before the caller consumes");
    rx_h2_session_consume(h->s, 1, 400);
    h_send(h);
    is_int(h_count(h, RX_H2_WINDOW_UPDATE), 0, "420 of 1000 consumed: no WINDOW_UPDATE yet");
    rx_h2_session_consume(h->s, 1, 140);
    h_send(h);
    ok(h_count(h, RX_H2_WINDOW_UPDATE) == 1 && h->f[h->nf - 1].id == 1
       && rx_h2_get32(h->f[h->nf - 1].payload) == 540 + 20,
       "half the stream's window consumed: WINDOW_UPDATE 560 (padding included)");
    /* the stream's window is 1000 again; 1001 is too much */
    h_frame(h, RX_H2_DATA, 0, 1, body, 600);
    h_frame(h, RX_H2_DATA, 0, 1, body, 401);
    h_out_reset(h);
    h_recv(h);
    h_send(h);
    is_int(h_rst(h, 1), RX_H2_FLOW_CONTROL_ERROR,
           "DATA beyond the stream's window: RST_STREAM FLOW_CONTROL_ERROR");
    is_int(h_goaway(h), -1, "... and the connection stays");
    /* the connection's (2000): 560 consumed, the reset stream's 401 given
     * back at once, 600 more reach half of it */
    rx_h2_session_consume(h->s, 1, 600);
    h_out_reset(h);
    h_send(h);
    ok(h_count(h, RX_H2_WINDOW_UPDATE) == 1 && h->f[0].id == 0,
       "the connection's WINDOW_UPDATE once half of it was consumed");
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "everything freed");
}

/* a stream open with a response of n bytes submitted */
static void
respond(h_t *h, int32_t id, const uint8_t *body, size_t n)
{
    h->src[id / 2 % 4] = (h_src_t) { body, n, 0, id, false };
    rx_h2_submit_headers(h->s, id, block3, 3, false);
    rx_h2_submit_data(h->s, id);
}

static void
test_response_split(void)
{
    h_t            *h = &H;
    static uint8_t  body[40000];
    size_t          i, got;
    uint16_t        ids[] = { RX_H2_SET_INITIAL_WINDOW_SIZE };
    uint32_t        v[] = { 100 };

    for (i = 0; i < sizeof(body); i++) {
        body[i] = (uint8_t) (i * 7);
    }
    h_init(h, &(rx_h2_config_t) { .chunk_size = 64 });
    h_send(h);
    h_raw(h, RX_H2_PREFACE, RX_H2_PREFACE_LEN);
    h_settings(h, 1, ids, v);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1,
            block3, 3);
    h_recv(h);
    respond(h, 1, body, 250);
    h_out_reset(h);
    h_send(h);
    /* ack, HEADERS, then DATA 64 + 36: the stream's window of 100 */
    ok(h->nf == 4 && h->f[1].type == RX_H2_HEADERS && h->f[1].flags == RX_H2_F_END_HEADERS
       && h->f[2].type == RX_H2_DATA && h->f[2].len == 64
       && h->f[3].type == RX_H2_DATA && h->f[3].len == 36 && h->f[3].flags == 0,
       "DATA by chunk_size (64) within the stream's window (100)");
    ok(!rx_h2_session_want_write(h->s), "window shut: nothing to write");
    /* the client lowers the window: -100, then WINDOW_UPDATE 150 = 50 */
    v[0] = 0;
    h_settings(h, 1, ids, v);
    h_u32(h, RX_H2_WINDOW_UPDATE, 0, 1, 150);
    h_recv(h);
    h_out_reset(h);
    h_send(h);
    ok(h->nf == 2 && h->f[1].type == RX_H2_DATA && h->f[1].len == 50,
       "a negative window counts (-100 + 150 = 50 bytes)");
    h_u32(h, RX_H2_WINDOW_UPDATE, 0, 1, 1000);
    h_recv(h);
    h_out_reset(h);
    h_send(h);
    ok(h->nf == 2 && h->f[0].len == 64 && h->f[1].len == 36
       && h->f[1].flags == RX_H2_F_END_STREAM, "END_STREAM on the last DATA");
    for (got = 0, i = 0; i < (size_t) h->nf; i++) {
        got += h->f[i].len;
    }
    ok(strstr(h->log, "C1:0 ") != NULL, "the stream closed");
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "everything freed");
}

static void
test_headers_continuation(void)
{
    h_t            *h = &H;
    static uint8_t  blk[40000], body[100000];
    size_t          i, n;
    int             k, big;

    for (i = 0; i < sizeof(blk); i++) {
        blk[i] = (uint8_t) (i * 13);
    }
    h_init(h, NULL);
    h_send(h);
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 3, block3, 3);
    h_recv(h);
    h_send(h);
    h_out_reset(h);
    rx_h2_submit_headers(h->s, 1, blk, sizeof(blk), false);
    h->src[0] = (h_src_t) { body, 70000, 0, 1, false };
    rx_h2_submit_data(h->s, 1);
    respond(h, 3, body, 70000);
    /* small sends: the block's frames never interleave with others */
    for (k = 0; k < 200 && (n = h_send_room(h, 1000)) > 0; k++) { }
    ok(h->f[0].type == RX_H2_HEADERS && h->f[0].len == 991 && h->f[0].flags == 0
       && h->f[1].type == RX_H2_CONTINUATION, "a header block split to fit the room");
    for (n = 0, k = 0; k < h->nf && h->f[k].type != RX_H2_DATA; k++) {
        if (h->f[k].id == 1) {
            n += h->f[k].len;
        }
    }
    is_int(n, sizeof(blk), "the whole block went before any DATA");
    for (i = 0, k = 0; k < h->nf; k++) {
        if (h->f[k].type == RX_H2_DATA) {
            i += h->f[k].len;
        }
    }
    is_int(i, 65535, "DATA up to the connection's window (65535)");
    ok(!rx_h2_session_want_write(h->s), "then the window is shut");
    h_u32(h, RX_H2_WINDOW_UPDATE, 0, 0, 1 << 20);
    h_u32(h, RX_H2_WINDOW_UPDATE, 0, 1, 1 << 20);
    h_u32(h, RX_H2_WINDOW_UPDATE, 0, 3, 1 << 20);
    h_recv(h);
    h_out_reset(h);
    while (h_send(h) > 0) { }
    for (n = 0, i = 0, k = 0, big = 0; k < h->nf; k++) {
        if (h->f[k].type == RX_H2_DATA) {
            n += h->f[k].len;
            i += (h->f[k].flags & RX_H2_F_END_STREAM) != 0;
            big += h->f[k].len > 16384;
        }
    }
    is_int(n, 140000 - 65535, "the rest of both bodies");
    is_int(big, 0, "no DATA beyond the max frame size");
    is_int(i, 2, "two END_STREAMs");
    /* max frame size 16384: the block again on a fresh session, whole */
    rx_h2_session_del(h->s);
    h_init(h, NULL);
    h_send(h);
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_recv(h);
    rx_h2_submit_headers(h->s, 1, blk, sizeof(blk), true);
    h_out_reset(h);
    h_send(h);
    ok(h->nf == 4 && h->f[1].len == 16384 && h->f[2].len == 16384
       && h->f[3].len == 40000 - 32768 && h->f[3].flags == RX_H2_F_END_HEADERS
       && h->f[1].flags == RX_H2_F_END_STREAM,
       "HEADERS + CONTINUATIONs of the client's max frame size");
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "everything freed");
}

#include "h2_cases.h"

int
main(void)
{
    test_preface_settings();
    test_get();
    test_post_windows();
    test_response_split();
    test_headers_continuation();
    test_errors();
    test_stream_errors();
    test_floods();
    test_splits();
    test_misc();
    return done();
}
