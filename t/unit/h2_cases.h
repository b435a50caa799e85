/*
 * h2_cases.h: test_h2session.c's tables of bad input (each connection
 * error with its GOAWAY code, each stream error with its RST_STREAM
 * code), the floods' bounds, input cut at every byte, and the rest.
 * Included by test_h2session.c only.
 */

static const uint8_t zero[20000];

static void
open1(h_t *h)
{
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 1, block3, 3);
}

static void b_data_big(h_t *h) { open1(h); h_frame(h, RX_H2_DATA, 0, 1, zero, 16385); }
static void b_settings_len(h_t *h) { h_frame(h, RX_H2_SETTINGS, 0, 0, zero, 5); }
static void b_settings_ack_len(h_t *h) { h_frame(h, RX_H2_SETTINGS, RX_H2_F_ACK, 0, zero, 6); }
static void b_ping_len(h_t *h) { h_frame(h, RX_H2_PING, 0, 0, zero, 7); }
static void b_data_idle(h_t *h) { h_frame(h, RX_H2_DATA, 0, 1, zero, 5); }
static void b_headers0(h_t *h) { h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 0, block3, 3); }
static void b_data0(h_t *h) { h_frame(h, RX_H2_DATA, 0, 0, zero, 3); }
static void b_even(h_t *h) { h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 2, block3, 3); }
static void b_rst0(h_t *h) { h_u32(h, RX_H2_RST_STREAM, 0, 0, 0); }
static void b_rst_idle(h_t *h) { h_u32(h, RX_H2_RST_STREAM, 0, 7, 0); }
static void b_rst_len(h_t *h) { open1(h); h_frame(h, RX_H2_RST_STREAM, 0, 1, zero, 5); }
static void b_ping_stream(h_t *h) { h_frame(h, RX_H2_PING, 0, 1, zero, 8); }
static void b_goaway_stream(h_t *h) { h_frame(h, RX_H2_GOAWAY, 0, 1, zero, 8); }
static void b_goaway_short(h_t *h) { h_frame(h, RX_H2_GOAWAY, 0, 0, zero, 7); }
static void b_wu_len(h_t *h) { h_frame(h, RX_H2_WINDOW_UPDATE, 0, 0, zero, 3); }
static void b_priority_len(h_t *h) { h_frame(h, RX_H2_PRIORITY, 0, 1, zero, 4); }
static void b_push(h_t *h) { open1(h); h_frame(h, RX_H2_PUSH_PROMISE, RX_H2_F_END_HEADERS, 1, zero, 7); }
static void b_wu_conn0(h_t *h) { h_u32(h, RX_H2_WINDOW_UPDATE, 0, 0, 0); }
static void b_wu_conn_big(h_t *h) { h_u32(h, RX_H2_WINDOW_UPDATE, 0, 0, 0x7fffffff - 65535 + 1); }
static void b_wu_idle(h_t *h) { h_u32(h, RX_H2_WINDOW_UPDATE, 0, 5, 1); }
static void b_cont_alone(h_t *h) { h_frame(h, RX_H2_CONTINUATION, RX_H2_F_END_HEADERS, 1, block3, 3); }
static void b_cont_other(h_t *h)
{
    h_frame(h, RX_H2_HEADERS, 0, 1, block3, 3);
    h_frame(h, RX_H2_CONTINUATION, RX_H2_F_END_HEADERS, 3, block3, 3);
}
static void b_inside_block(h_t *h)
{
    h_frame(h, RX_H2_HEADERS, 0, 1, block3, 3);
    h_frame(h, RX_H2_PING, 0, 0, zero, 8);
}
static void b_unknown_inside(h_t *h)
{
    h_frame(h, RX_H2_HEADERS, 0, 1, block3, 3);
    h_frame(h, 0x42, 0, 0, zero, 8);
}
static void b_lower_id(h_t *h)
{
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 5, block3, 3);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 3, block3, 3);
}
static void b_pad_long(h_t *h)
{
    uint8_t p[10] = { 10 };

    open1(h);
    h_frame(h, RX_H2_DATA, RX_H2_F_PADDED, 1, p, 10);
}
static void b_pad_headers(h_t *h)
{
    uint8_t p[4] = { 4, 0x82, 0x84, 0x87 };

    h_frame(h, RX_H2_HEADERS, RX_H2_F_PADDED | RX_H2_F_END_HEADERS, 1, p, 4);
}
static void b_pad_empty(h_t *h) { open1(h); h_frame(h, RX_H2_DATA, RX_H2_F_PADDED, 1, NULL, 0); }
static void b_conn_window(h_t *h)
{
    int i;

    for (i = 0; i < 5; i++) {       /* 5 streams x 16384 > 65535 */
        h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 1 + 2 * i, block3, 3);
        h_frame(h, RX_H2_DATA, 0, 1 + 2 * i, zero, 16384);
    }
}

static void
b_set(h_t *h, uint16_t id, uint32_t v)
{
    h_settings(h, 1, &id, &v);
}
static void b_push2(h_t *h) { b_set(h, RX_H2_SET_ENABLE_PUSH, 2); }
static void b_iws_big(h_t *h) { b_set(h, RX_H2_SET_INITIAL_WINDOW_SIZE, 0x80000000u); }
static void b_mfs_small(h_t *h) { b_set(h, RX_H2_SET_MAX_FRAME_SIZE, 16383); }
static void b_mfs_big(h_t *h) { b_set(h, RX_H2_SET_MAX_FRAME_SIZE, 1 << 24); }
static void b_iws_overflow(h_t *h)
{
    open1(h);
    h_u32(h, RX_H2_WINDOW_UPDATE, 0, 1, 0x7fffffff - 65535);
    b_set(h, RX_H2_SET_INITIAL_WINDOW_SIZE, 65536);
}

typedef struct {
    const char  *what;
    void       (*build)(h_t *h);
    uint32_t     code;
} h_case_t;

static const h_case_t conn_cases[] = {
    { "DATA beyond SETTINGS_MAX_FRAME_SIZE", b_data_big, RX_H2_FRAME_SIZE_ERROR },
    { "SETTINGS of a length not a multiple of 6", b_settings_len, RX_H2_FRAME_SIZE_ERROR },
    { "SETTINGS ACK with a payload", b_settings_ack_len, RX_H2_FRAME_SIZE_ERROR },
    { "PING of 7 bytes", b_ping_len, RX_H2_FRAME_SIZE_ERROR },
    { "RST_STREAM of 5 bytes", b_rst_len, RX_H2_FRAME_SIZE_ERROR },
    { "GOAWAY of 7 bytes", b_goaway_short, RX_H2_FRAME_SIZE_ERROR },
    { "WINDOW_UPDATE of 3 bytes", b_wu_len, RX_H2_FRAME_SIZE_ERROR },
    { "PRIORITY of 4 bytes", b_priority_len, RX_H2_FRAME_SIZE_ERROR },
    { "DATA PADDED without its pad length", b_pad_empty, RX_H2_FRAME_SIZE_ERROR },
    { "DATA on an idle stream", b_data_idle, RX_H2_PROTOCOL_ERROR },
    { "HEADERS on stream 0", b_headers0, RX_H2_PROTOCOL_ERROR },
    { "DATA on stream 0", b_data0, RX_H2_PROTOCOL_ERROR },
    { "RST_STREAM on stream 0", b_rst0, RX_H2_PROTOCOL_ERROR },
    { "RST_STREAM on an idle stream", b_rst_idle, RX_H2_PROTOCOL_ERROR },
    { "PING on a stream", b_ping_stream, RX_H2_PROTOCOL_ERROR },
    { "GOAWAY on a stream", b_goaway_stream, RX_H2_PROTOCOL_ERROR },
    { "a client stream with an even id", b_even, RX_H2_PROTOCOL_ERROR },
    { "PUSH_PROMISE from a client", b_push, RX_H2_PROTOCOL_ERROR },
    { "SETTINGS_ENABLE_PUSH 2", b_push2, RX_H2_PROTOCOL_ERROR },
    { "SETTINGS_INITIAL_WINDOW_SIZE 2^31", b_iws_big, RX_H2_FLOW_CONTROL_ERROR },
    { "SETTINGS_INITIAL_WINDOW_SIZE overflowing a stream's window",
      b_iws_overflow, RX_H2_FLOW_CONTROL_ERROR },
    { "SETTINGS_MAX_FRAME_SIZE 16383", b_mfs_small, RX_H2_PROTOCOL_ERROR },
    { "SETTINGS_MAX_FRAME_SIZE 2^24", b_mfs_big, RX_H2_PROTOCOL_ERROR },
    { "WINDOW_UPDATE of 0 on the connection", b_wu_conn0, RX_H2_PROTOCOL_ERROR },
    { "WINDOW_UPDATE beyond 2^31-1 (connection)", b_wu_conn_big, RX_H2_FLOW_CONTROL_ERROR },
    { "WINDOW_UPDATE on an idle stream", b_wu_idle, RX_H2_PROTOCOL_ERROR },
    { "CONTINUATION without HEADERS", b_cont_alone, RX_H2_PROTOCOL_ERROR },
    { "CONTINUATION of another stream", b_cont_other, RX_H2_PROTOCOL_ERROR },
    { "PING inside a header block", b_inside_block, RX_H2_PROTOCOL_ERROR },
    { "an unknown frame inside a header block", b_unknown_inside, RX_H2_PROTOCOL_ERROR },
    { "HEADERS on stream 3 after stream 5", b_lower_id, RX_H2_PROTOCOL_ERROR },
    { "DATA padding as long as the payload", b_pad_long, RX_H2_PROTOCOL_ERROR },
    { "HEADERS padding longer than the payload", b_pad_headers, RX_H2_PROTOCOL_ERROR },
    { "DATA beyond the connection's window", b_conn_window, RX_H2_FLOW_CONTROL_ERROR },
};

/* After the bad input: GOAWAY(code) is the last frame, no more input,
 * nothing more to write. */
static void
check_conn_error(h_t *h, const char *what, uint32_t code)
{
    char want[32];

    h_out_reset(h);
    h_send(h);
    is_int(h_goaway(h), code, "%s: GOAWAY %s", what, rx_h2_error_name(code));
    snprintf(want, sizeof(want), "X0:%u ", code);
    ok(strstr(h->log, want) != NULL, "%s: the error callback told", what);
    ok(!rx_h2_session_want_read(h->s) && !rx_h2_session_want_write(h->s),
       "%s: then neither reading nor writing", what);
    h_frame(h, RX_H2_PING, 0, 0, zero, 8);
    h_recv(h);
    ok(h_send(h) == 0, "%s: later input is dropped", what);
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "%s: everything freed", what);
}

static void
test_errors(void)
{
    h_t    *h = &H;
    size_t  i;

    for (i = 0; i < sizeof(conn_cases) / sizeof(conn_cases[0]); i++) {
        h_init(h, NULL);
        h_send(h);
        h_hello(h);
        conn_cases[i].build(h);
        h_recv(h);
        check_conn_error(h, conn_cases[i].what, conn_cases[i].code);
    }
    /* a bad preface, and a first frame other than SETTINGS */
    h_init(h, NULL);
    h_raw(h, "PRI * HTTP/1.1\r\n", 16);
    h_recv(h);
    check_conn_error(h, "a bad preface", RX_H2_PROTOCOL_ERROR);
    h_init(h, NULL);
    h_raw(h, RX_H2_PREFACE, RX_H2_PREFACE_LEN);
    h_frame(h, RX_H2_PING, 0, 0, zero, 8);
    h_recv(h);
    check_conn_error(h, "PING before SETTINGS", RX_H2_PROTOCOL_ERROR);
    /* the caller's HPACK error: its code, and GOAWAY's last stream id */
    h_init(h, NULL);
    h->terminate = RX_H2_COMPRESSION_ERROR;
    h_hello(h);
    open1(h);
    h_recv(h);
    h_send(h);
    ok(h_goaway(h) == RX_H2_COMPRESSION_ERROR
       && rx_h2_get32(h->f[h->nf - 1].payload) == 1,
       "the caller's terminate: GOAWAY COMPRESSION_ERROR, last stream 1");
    rx_h2_session_del(h->s);
}

/* ---- stream errors: RST_STREAM, the connection stays ---- */

static void s_data_half(h_t *h)
{
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 5);
}
static void s_headers_half(h_t *h)
{
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
}
static void s_wu_big(h_t *h) { open1(h); h_u32(h, RX_H2_WINDOW_UPDATE, 0, 1, 0x7fffffff); }
static void s_wu0(h_t *h) { open1(h); h_u32(h, RX_H2_WINDOW_UPDATE, 0, 1, 0); }
static void s_prio_self(h_t *h)
{
    uint8_t p[5] = { 0, 0, 0, 1, 16 };

    open1(h);
    h_frame(h, RX_H2_PRIORITY, 0, 1, p, 5);
}
static void s_headers_prio_self(h_t *h)
{
    uint8_t p[8] = { 0, 0, 0, 1, 16, 0x82, 0x84, 0x87 };

    h_frame(h, RX_H2_HEADERS, RX_H2_F_PRIORITY | RX_H2_F_END_HEADERS, 1, p, 8);
}
static void s_trailers_open(h_t *h)
{
    open1(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 1, block3, 3);
}
static void s_stream_window(h_t *h)
{
    open1(h);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 16384);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 16384);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 16384);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 16384);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 1);      /* 65537 > 65535 */
}

static const h_case_t stream_cases[] = {
    { "DATA on a half-closed (remote) stream", s_data_half, RX_H2_STREAM_CLOSED },
    { "HEADERS on a half-closed (remote) stream", s_headers_half, RX_H2_STREAM_CLOSED },
    { "WINDOW_UPDATE beyond 2^31-1 (stream)", s_wu_big, RX_H2_FLOW_CONTROL_ERROR },
    { "WINDOW_UPDATE of 0 on a stream", s_wu0, RX_H2_PROTOCOL_ERROR },
    { "PRIORITY: a stream depending on itself", s_prio_self, RX_H2_PROTOCOL_ERROR },
    { "HEADERS: a stream depending on itself", s_headers_prio_self, RX_H2_PROTOCOL_ERROR },
    { "trailers without END_STREAM", s_trailers_open, RX_H2_PROTOCOL_ERROR },
    { "DATA beyond the stream's window", s_stream_window, RX_H2_FLOW_CONTROL_ERROR },
};

static void
test_stream_errors(void)
{
    h_t    *h = &H;
    size_t  i;

    for (i = 0; i < sizeof(stream_cases) / sizeof(stream_cases[0]); i++) {
        h_init(h, &(rx_h2_config_t) { .conn_window = 1 << 20 });
        h_send(h);
        h_hello(h);
        stream_cases[i].build(h);
        h_recv(h);
        h_out_reset(h);
        h_send(h);
        is_int(h_rst(h, 1), stream_cases[i].code, "%s: RST_STREAM %s",
               stream_cases[i].what, rx_h2_error_name(stream_cases[i].code));
        ok(h_goaway(h) == -1 && rx_h2_session_want_read(h->s),
           "%s: the connection stays", stream_cases[i].what);
        ok(rx_h2_session_remote_closed(h->s, 1) == -1, "%s: the stream is gone",
           stream_cases[i].what);
        rx_h2_session_del(h->s);
        is_int(h->allocs, 0, "%s: everything freed", stream_cases[i].what);
    }

    /* DATA on a stream closed both ways; then frames of a stream we
     * reset are ignored (RFC 9113 5.4.2), not answered again */
    h_init(h, NULL);
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_recv(h);
    rx_h2_submit_headers(h->s, 1, block3, 3, true);
    h_send(h);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 5);
    h_recv(h);
    h_out_reset(h);
    h_send(h);
    is_int(h_rst(h, 1), RX_H2_STREAM_CLOSED, "DATA on a closed stream: RST_STREAM STREAM_CLOSED");
    h_frame(h, RX_H2_DATA, 0, 1, zero, 5);
    h_recv(h);
    h_out_reset(h);
    h_send(h);
    is_int(h_count(h, RX_H2_RST_STREAM), 0, "... once: its frames in flight are ignored");
    rx_h2_session_del(h->s);

    /* refused: beyond max_concurrent_streams before our SETTINGS were
     * acknowledged; the refused block still comes, to be decoded */
    h_init(h, &(rx_h2_config_t) { .max_concurrent_streams = 1 });
    h_hello(h);
    open1(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 3, block3, 3);
    h_recv(h);
    h_send(h);
    is_int(h_rst(h, 3), RX_H2_REFUSED_STREAM, "beyond max_concurrent_streams: REFUSED_STREAM");
    ok(strstr(h->log, "H3:3:") && strstr(h->log, "er "),
       "the refused stream's block comes flagged refused: %s", h->log);
    is_int(rx_h2_session_remote_closed(h->s, 1), 0, "stream 1 stays open");
    rx_h2_session_del(h->s);

    /* begin_headers refuses (keepalive_requests' streams) */
    h_init(h, NULL);
    h->refuse = RX_H2_REFUSED_STREAM;
    h_hello(h);
    open1(h);
    h_recv(h);
    h_send(h);
    is_int(h_rst(h, 1), RX_H2_REFUSED_STREAM, "begin_headers' code resets the stream");
    rx_h2_session_del(h->s);
}

/* ---- the floods' bounds ---- */

static void
flood_check(h_t *h, const char *what, bool want)
{
    h_out_reset(h);
    h_send(h);
    if (want) {
        is_int(h_goaway(h), RX_H2_ENHANCE_YOUR_CALM, "%s: GOAWAY ENHANCE_YOUR_CALM", what);
    } else {
        is_int(h_goaway(h), -1, "%s: no GOAWAY", what);
    }
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "%s: everything freed", what);
}

static void
flood_frames(h_t *h, int n, uint8_t type, uint8_t flags, int32_t id, size_t len)
{
    int i;

    for (i = 0; i < n; i++) {
        h_frame(h, type, flags, id, zero, len);
    }
}

static void
test_floods(void)
{
    h_t      *h = &H;
    uint16_t  ids[64];
    uint32_t  v[64];
    int       i, n;

    for (n = 32; n <= 33; n++) {
        h_init(h, NULL);
        h_raw(h, RX_H2_PREFACE, RX_H2_PREFACE_LEN);
        for (i = 0; i < n; i++) {
            ids[i] = 0x100;
            v[i] = (uint32_t) i;
        }
        h_settings(h, n, ids, v);
        h_recv(h);
        flood_check(h, n == 32 ? "32 SETTINGS entries" : "33 SETTINGS entries", n == 33);
    }
    for (n = 999; n <= 1000; n++) {
        h_init(h, NULL);
        h_hello(h);                     /* 1 ack + n more, none sent */
        flood_frames(h, n, RX_H2_SETTINGS, 0, 0, 0);
        h_recv(h);
        flood_check(h, n == 999 ? "1000 SETTINGS acks queued" : "1001 SETTINGS acks queued",
                    n == 1000);
        h_init(h, NULL);
        h_hello(h);
        flood_frames(h, n, RX_H2_PING, 0, 0, 8);
        h_recv(h);
        flood_check(h, n == 999 ? "1000 acks queued (PING)" : "1001 acks queued (PING)",
                    n == 1000);
    }
    /* RST_STREAM answers to DATA on closed streams, unread: 40 streams
     * closed, more than the 32 reset ids kept, DATA on them in turn */
    for (n = 999; n <= 1000; n++) {
        h_init(h, &(rx_h2_config_t) { .conn_window = 1 << 20 });
        h_hello(h);
        for (i = 0; i < 40; i++) {
            h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM,
                    1 + 2 * i, block3, 3);
            h_recv(h);
            rx_h2_submit_headers(h->s, 1 + 2 * i, block3, 3, true);
        }
        h_send(h);
        for (i = 0; i < n + 1; i++) {
            h_frame(h, RX_H2_DATA, 0, 1 + 2 * (i % 40), zero, 1);
            if (h->in_len > H_IN_MAX - 64) {
                h_recv(h);
            }
        }
        h_recv(h);
        flood_check(h, n == 999 ? "1000 RST_STREAM answers queued"
                                : "1001 RST_STREAM answers queued", n == 1000);
    }
    /* new streams per recv call: 2 x max_concurrent_streams */
    for (n = 4; n <= 5; n++) {
        h_init(h, &(rx_h2_config_t) { .max_concurrent_streams = 2 });
        h_hello(h);
        for (i = 0; i < n; i++) {
            h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM,
                    1 + 2 * i, block3, 3);
        }
        h_recv(h);
        flood_check(h, n == 4 ? "4 new streams in a read (2 x 2)"
                              : "5 new streams in a read", n == 5);
    }
    /* Rapid Reset: resets per connection, 2 x max_concurrent_streams + 100,
     * each in a read of its own */
    for (n = 120; n <= 121; n++) {
        h_init(h, &(rx_h2_config_t) { .max_concurrent_streams = 10 });
        h_hello(h);
        h_recv(h);
        for (i = 0; i < n; i++) {
            h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 1 + 2 * i, block3, 3);
            h_u32(h, RX_H2_RST_STREAM, 0, 1 + 2 * i, RX_H2_CANCEL);
            h_recv(h);
        }
        flood_check(h, n == 120 ? "120 resets" : "121 resets (Rapid Reset)", n == 121);
    }
    /* empty frames */
    for (n = 100; n <= 101; n++) {
        h_init(h, NULL);
        h_hello(h);
        open1(h);
        flood_frames(h, n, RX_H2_DATA, 0, 1, 0);
        h_recv(h);
        flood_check(h, n == 100 ? "100 empty DATA" : "101 empty DATA", n == 101);
    }
    h_init(h, NULL);
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, 0, 1, block3, 3);
    flood_frames(h, 101, RX_H2_CONTINUATION, 0, 1, 0);
    h_recv(h);
    flood_check(h, "101 empty CONTINUATION", true);
    /* CONTINUATION frames per block: 8 */
    for (n = 8; n <= 9; n++) {
        h_init(h, NULL);
        h_hello(h);
        h_frame(h, RX_H2_HEADERS, 0, 1, block3, 3);
        flood_frames(h, n - 1, RX_H2_CONTINUATION, 0, 1, 1);
        h_frame(h, RX_H2_CONTINUATION, RX_H2_F_END_HEADERS, 1, block3, 3);
        h_recv(h);
        flood_check(h, n == 8 ? "8 CONTINUATION" : "9 CONTINUATION", n == 9);
    }
    /* the header block's bound */
    for (n = 1000; n <= 1001; n++) {
        h_init(h, &(rx_h2_config_t) { .max_header_block = 1000 });
        h_hello(h);
        h_frame(h, RX_H2_HEADERS, 0, 1, zero, 600);
        h_frame(h, RX_H2_CONTINUATION, RX_H2_F_END_HEADERS, 1, zero, (size_t) n - 600);
        h_recv(h);
        flood_check(h, n == 1000 ? "a block of 1000 bytes (bound 1000)"
                                 : "a block of 1001 bytes (bound 1000)", n == 1001);
    }
}

/* ---- input cut anywhere gives the same result ---- */

/* a conversation touching every frame type and field */
static size_t
conversation(h_t *h, uint8_t *out)
{
    uint8_t  p[64];
    uint16_t id = RX_H2_SET_INITIAL_WINDOW_SIZE;
    uint32_t v = 70000;
    size_t   n;

    h->in_len = 0;
    h_raw(h, RX_H2_PREFACE, RX_H2_PREFACE_LEN);
    h_settings(h, 1, &id, &v);
    h_frame(h, RX_H2_SETTINGS, RX_H2_F_ACK, 0, NULL, 0);
    /* HEADERS padded, with priority, then two CONTINUATIONs */
    memset(p, 0, sizeof(p));
    p[0] = 3; p[4] = 3; p[5] = 200; p[6] = 0x82; p[7] = 0x84;
    h_frame(h, RX_H2_HEADERS, RX_H2_F_PADDED | RX_H2_F_PRIORITY, 1, p, 11);
    h_frame(h, RX_H2_CONTINUATION, 0, 1, "abc", 3);
    h_frame(h, RX_H2_CONTINUATION, RX_H2_F_END_HEADERS, 1, "defg", 4);
    p[0] = 5;
    memcpy(p + 1, "hello world", 11);
    h_frame(h, RX_H2_DATA, RX_H2_F_PADDED, 1, p, 17);
    h_frame(h, 0x42, 0xff, 1, "unknown", 7);
    h_frame(h, RX_H2_PING, 0, 0, "12345678", 8);
    h_frame(h, RX_H2_PRIORITY, 0, 9, "\0\0\0\1\7", 5);
    h_u32(h, RX_H2_WINDOW_UPDATE, 0, 0, 1000);
    h_frame(h, RX_H2_DATA, RX_H2_F_END_STREAM, 1, "bye", 3);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 3, block3, 3);
    h_u32(h, RX_H2_RST_STREAM, 0, 3, RX_H2_CANCEL);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 5, block3, 3);
    h_frame(h, RX_H2_DATA, 0, 5, zero, 3000);
    h_frame(h, RX_H2_GOAWAY, 0, 0, "\0\0\0\0\0\0\0\0debug", 13);
    memcpy(out, h->in, h->in_len);
    n = h->in_len;
    h->in_len = 0;
    return n;
}

static void
split_run(h_t *h, const uint8_t *in, size_t n, size_t cut, size_t step)
{
    size_t off;

    h_init(h, &(rx_h2_config_t) { .initial_window_size = 4000 });
    h->auto_consume = true;
    if (step) {
        for (off = 0; off < n; off += step) {
            rx_h2_session_recv(h->s, in + off, off + step > n ? n - off : step);
        }
    } else {
        rx_h2_session_recv(h->s, in, cut);
        rx_h2_session_recv(h->s, in + cut, n - cut);
    }
    h_data_flush(h);
    h_send(h);
}

static void
test_splits(void)
{
    h_t            *h = &H;
    static uint8_t  in[8192], out[H_OUT_MAX];
    static char     log[H_LOG_MAX];
    size_t          n, cut, out_len, bad = 0;

    n = conversation(h, in);
    split_run(h, in, n, n, 0);
    memcpy(log, h->log, h->log_len + 1);
    memcpy(out, h->out, h->out_len);
    out_len = h->out_len;
    ok(strstr(log, "H1:9:") && strstr(log, "D1:14:") && strstr(log, "E1 ")
       && strstr(log, "R3:8 ") && strstr(log, "D5:3000:") && strstr(log, "G0:0 "),
       "the conversation whole: %s", log);
    rx_h2_session_del(h->s);
    for (cut = 0; cut <= n; cut++) {
        split_run(h, in, n, cut, 0);
        if (strcmp(h->log, log) != 0 || h->out_len != out_len
            || memcmp(h->out, out, out_len) != 0) {
            if (bad++ == 0) {
                diag("cut at %zu: %s", cut, h->log);
            }
        }
        rx_h2_session_del(h->s);
    }
    is_int(bad, 0, "cut at every byte (%zu cuts): the same callbacks and output", n + 1);
    split_run(h, in, n, 0, 1);
    ok(strcmp(h->log, log) == 0 && h->out_len == out_len
       && memcmp(h->out, out, out_len) == 0, "fed one byte at a time: the same");
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "everything freed");
}

/* ---- the rest ---- */

static void
test_misc(void)
{
    h_t     *h = &H;
    uint8_t  body[100];
    size_t   idle, n;
    int      k;

    memset(body, 'x', sizeof(body));
    /* RST_STREAM NO_ERROR after our END_STREAM while the client sends */
    h_init(h, NULL);
    h_hello(h);
    open1(h);
    h_recv(h);
    respond(h, 1, body, 100);
    h_send(h);
    h_send(h);
    ok(h->f[h->nf - 2].type == RX_H2_DATA
       && h->f[h->nf - 2].flags == RX_H2_F_END_STREAM
       && h_rst(h, 1) == RX_H2_NO_ERROR,
       "END_STREAM while the client's side is open: then RST_STREAM NO_ERROR");
    ok(strstr(h->log, "C1:0 ") != NULL, "the stream closed");
    /* the client's body and trailers in flight: ignored, the trailers'
     * block still decoded (HPACK), the connection stays */
    h_log(h, "| ");
    h_frame(h, RX_H2_DATA, 0, 1, zero, 100);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_recv(h);
    h_out_reset(h);
    h_send(h);
    ok(strstr(h->log, "| H1:3:") && strstr(h->log, "etr ") && h->nf == 0
       && rx_h2_session_want_read(h->s),
       "DATA and trailers on the stream we reset: ignored, block decoded: %s",
       h->log);
    rx_h2_session_del(h->s);

    /* trailers on an open stream end it */
    h_init(h, NULL);
    h_hello(h);
    open1(h);
    h_frame(h, RX_H2_DATA, 0, 1, "abc", 3);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_recv(h);
    ok(strstr(h->log, "D1:3:") && strstr(h->log, "et ")
       && rx_h2_session_remote_closed(h->s, 1) == 1,
       "trailers: flagged, the client's side closed: %s", h->log);
    rx_h2_session_del(h->s);

    /* a 1xx header block, then the final one with a body; no third */
    h_init(h, NULL);
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_recv(h);
    ok(rx_h2_submit_headers(h->s, 1, (const uint8_t *) "\x08\x03\x31\x30\x33", 5,
                            false) == 0, "a 1xx block submitted");
    ok(rx_h2_submit_headers(h->s, 1, block3, 3, false) == -1,
       "not a second while the first waits");
    h_out_reset(h);
    h_send(h);
    respond(h, 1, body, 10);
    ok(rx_h2_submit_headers(h->s, 1, block3, 3, true) == -1,
       "no header block while a body is submitted");
    h_send(h);
    k = h->nf - 3;                      /* after our SETTINGS and the ack */
    ok(k == 2 && h->f[k].type == RX_H2_HEADERS && h->f[k].len == 5
       && h->f[k].flags == RX_H2_F_END_HEADERS && h->f[k + 1].type == RX_H2_HEADERS
       && h->f[k + 1].len == 3 && h->f[k + 2].type == RX_H2_DATA
       && h->f[k + 2].flags == RX_H2_F_END_STREAM, "1xx HEADERS, HEADERS, DATA");
    rx_h2_session_del(h->s);

    /* deferred data, resumed */
    h_init(h, NULL);
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_recv(h);
    respond(h, 1, body, 100);
    h->src[0].defer = true;
    h_out_reset(h);
    h_send(h);
    ok(h_count(h, RX_H2_HEADERS) == 1 && h_count(h, RX_H2_DATA) == 0
       && !rx_h2_session_want_write(h->s), "a deferred body: HEADERS only, then waits");
    h->src[0].defer = false;
    rx_h2_session_resume_data(h->s, 1);
    ok(rx_h2_session_want_write(h->s), "resumed: wants to write");
    h_out_reset(h);
    h_send(h);
    ok(h->nf == 1 && h->f[0].len == 100 && h->f[0].flags == RX_H2_F_END_STREAM,
       "resumed: DATA with END_STREAM");
    rx_h2_session_del(h->s);

    /* the client resets; a GOAWAY of its; a data source failing */
    h_init(h, NULL);
    h_hello(h);
    open1(h);
    h_u32(h, RX_H2_RST_STREAM, 0, 1, RX_H2_CANCEL);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 3, block3, 3);
    h_recv(h);
    ok(strstr(h->log, "R1:8 C1:8 ") != NULL, "RST_STREAM: rst_recv, stream_close(CANCEL)");
    rx_h2_submit_headers(h->s, 3, block3, 3, false);
    rx_h2_submit_data(h->s, 3);           /* no source: RX_H2_SOURCE_ERR */
    h_send(h);
    h_send(h);
    is_int(h_rst(h, 3), RX_H2_INTERNAL_ERROR, "a failing data source: RST_STREAM INTERNAL_ERROR");
    h_frame(h, RX_H2_GOAWAY, 0, 0, "\0\0\0\0\0\0\0\2", 8);
    h_recv(h);
    ok(strstr(h->log, "G0:2 ") && !rx_h2_session_want_read(h->s),
       "GOAWAY received, no stream: no more reading");
    rx_h2_session_del(h->s);

    /* our graceful GOAWAY: later streams refused, the open one finishes */
    h_init(h, NULL);
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_recv(h);
    rx_h2_submit_goaway(h->s, 1, RX_H2_NO_ERROR);
    h_out_reset(h);
    h_send(h);
    ok(h_goaway(h) == RX_H2_NO_ERROR && rx_h2_get32(h->f[h->nf - 1].payload) == 1
       && rx_h2_session_want_read(h->s), "GOAWAY(1, NO_ERROR); stream 1 still read");
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 3, block3, 3);
    h_recv(h);
    h_send(h);
    is_int(h_rst(h, 3), RX_H2_REFUSED_STREAM, "a stream after our GOAWAY: REFUSED_STREAM");
    rx_h2_submit_headers(h->s, 1, block3, 3, true);
    h_send(h);
    ok(!rx_h2_session_want_read(h->s) && !rx_h2_session_want_write(h->s),
       "its last stream done: neither reading nor writing");
    rx_h2_session_del(h->s);

    /* the caller maps a connection error to a code of its own */
    h_init(h, &(rx_h2_config_t) { .max_header_block = 100 });
    h->override = RX_H2_PROTOCOL_ERROR;
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 1, zero, 101);
    h_recv(h);
    h_send(h);
    ok(h_goaway(h) == RX_H2_PROTOCOL_ERROR && strstr(h->log, "X0:11 ")
       && strcmp(h->why, "sent a header block beyond the limit") == 0,
       "the error callback's terminate wins (ENHANCE_YOUR_CALM -> PROTOCOL_ERROR)");
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "everything freed");

    /* no memory (for the stream; for a block in two frames): recv says
     * so, GOAWAY INTERNAL_ERROR, nothing leaks */
    for (n = 1; n <= 2; n++) {
        h_init(h, NULL);
        h_hello(h);
        h_recv(h);
        h->fail_after = (long) n;
        h_frame(h, RX_H2_HEADERS, 0, 1, block3, 3);
        h_frame(h, RX_H2_CONTINUATION, RX_H2_F_END_HEADERS, 1, block3, 3);
        ok(h_recv(h) == -1, "no memory (%zu): recv returns -1", n);
        h->fail_after = 0;
        h_send(h);
        ok(h_goaway(h) == RX_H2_INTERNAL_ERROR && !rx_h2_session_want_read(h->s),
           "no memory (%zu): GOAWAY INTERNAL_ERROR, no more reading", n);
        rx_h2_session_del(h->s);
        is_int(h->allocs, 0, "no memory (%zu): everything freed", n);
    }

    /* DATA round-robin: one frame per stream per turn */
    h_init(h, &(rx_h2_config_t) { .chunk_size = 10 });
    h_hello(h);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 1, block3, 3);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS | RX_H2_F_END_STREAM, 3, block3, 3);
    h_recv(h);
    respond(h, 1, body, 30);
    respond(h, 3, body, 30);
    h_out_reset(h);
    h_send(h);
    {
        static const int want[] = { 1, 3, 1, 3, 1, 3 };
        int k, j = 0, same = 1;

        for (k = 0; k < h->nf; k++) {
            if (h->f[k].type == RX_H2_DATA) {
                same &= j < 6 && h->f[k].id == want[j++] && h->f[k].len == 10;
            }
        }
        ok(same && j == 6, "DATA of streams 1 and 3 alternate, 10 bytes each");
    }
    rx_h2_session_del(h->s);

    /* our SETTINGS' stream window applies once acknowledged: DATA sent
     * before counts against the default, and the change after */
    h_init(h, &(rx_h2_config_t) { .initial_window_size = 1000,
                                  .conn_window = 1 << 20 });
    h_send(h);
    h_hello(h);
    open1(h);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 5000);
    h_recv(h);
    h_out_reset(h);
    h_send(h);
    is_int(h_rst(h, 1), -1, "5000 bytes before our SETTINGS were acknowledged: fine");
    h_frame(h, RX_H2_SETTINGS, RX_H2_F_ACK, 0, NULL, 0);
    h_frame(h, RX_H2_DATA, 0, 1, zero, 1);
    h_recv(h);
    h_send(h);
    is_int(h_rst(h, 1), RX_H2_FLOW_CONTROL_ERROR,
           "after the ack the window is 1000 - 5000: 1 byte more is too much");
    rx_h2_session_del(h->s);

    /* memory: the header block's buffer goes after each block */
    h_init(h, &(rx_h2_config_t) { .max_header_block = 20000 });
    h_hello(h);
    h_recv(h);
    h_send(h);
    idle = rx_h2_session_mem(h->s);
    h_frame(h, RX_H2_HEADERS, RX_H2_F_END_HEADERS, 1, zero, 10000);
    h_recv(h);
    ok(rx_h2_session_mem(h->s) < idle + 128,
       "a 10000-byte block delivered: the session holds %zu bytes (idle %zu)",
       rx_h2_session_mem(h->s), idle);
    diag("session %zu bytes idle, %zu with one open stream", idle,
         rx_h2_session_mem(h->s));
    rx_h2_session_del(h->s);
    is_int(h->allocs, 0, "everything freed");
}
