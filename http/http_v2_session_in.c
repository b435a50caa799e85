/*
 * http_v2_session_in.c: the client's bytes, cut anywhere, run through a
 * small state machine (preface, frame header, fixed fields, payload,
 * skip) that checks each frame against RFC 9113 and the floods' bounds
 * and hands header blocks and DATA to the caller. Nothing is buffered but
 * the header block being collected and a frame's fixed fields (ibuf).
 */
#include <string.h>
#include <stdio.h>
#include "http_v2_session_int.h"

static void frame_begin(rx_h2_session_t *s);
static void fill_done(rx_h2_session_t *s);
static void frame_end(rx_h2_session_t *s);

static void
expect(rx_h2_session_t *s, uint8_t state, uint32_t need)
{
    if (s->in_state != RX_H2_IN_DEAD) {
        s->in_state = state;
        s->need = need;
        s->have = 0;
    }
}

/* Runs the steps that take no more input (a field complete, a payload
 * done) until one needs bytes. */
static void
settle(rx_h2_session_t *s)
{
    for (;;) {
        switch (s->in_state) {
        case RX_H2_IN_PREFACE:
            if (s->have < s->need) {
                return;
            }
            expect(s, RX_H2_IN_HEAD, RX_H2_FRAME_HDLEN);
            break;
        case RX_H2_IN_HEAD:
            if (s->have < s->need) {
                return;
            }
            frame_begin(s);
            break;
        case RX_H2_IN_FILL:
            if (s->have < s->need) {
                return;
            }
            s->have = 0;
            fill_done(s);
            break;
        case RX_H2_IN_BODY:
            if (s->left > s->pad) {
                return;
            }
            expect(s, RX_H2_IN_SKIP, 0);      /* the padding */
            break;
        case RX_H2_IN_SKIP:
            if (s->left) {
                return;
            }
            frame_end(s);
            break;
        default:
            return;
        }
    }
}

/* A header block fragment's bytes, collected up to max_header_block. */
static void
block_add(rx_h2_session_t *s, const uint8_t *p, uint32_t n)
{
    uint32_t size;
    uint8_t *b;

    if ((uint64_t) s->block_len + n > s->conf.max_header_block) {
        rx_h2_conn_error(s, RX_H2_ENHANCE_YOUR_CALM,
                         "sent a header block beyond the limit");
        return;
    }
    if (s->block_len + n > s->block_size) {
        size = RX_H2_MIN(s->conf.max_header_block,
                   RX_H2_MAX(RX_H2_MAX(2 * s->block_size, s->block_len + n), 512u));
        b = rx_h2_alloc(s, size);
        if (b == NULL) {
            return;
        }
        if (s->block_len) {
            memcpy(b, s->block, s->block_len);
        }
        rx_h2_free(s, s->block, s->block_size);
        s->block = b;
        s->block_size = size;
    }
    memcpy(s->block + s->block_len, p, n);
    s->block_len += n;
}

/* DATA payload bytes: to the caller while its stream lives, else the
 * connection's window reopens at once (nobody will consume them). */
static void
data_bytes(rx_h2_session_t *s, const uint8_t *p, uint32_t n)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, s->hd.stream_id);
    bool            last = n == s->left - s->pad
                           && (s->hd.flags & RX_H2_F_END_STREAM);

    if (st == NULL || st->state == RX_H2_ST_HALF_REMOTE) {
        rx_h2_conn_consume(s, n);
        return;
    }
    s->end_told = last;
    s->cb->data(s, st->id, st->sud, p, n, last, s->ud);
}

ssize_t
rx_h2_session_recv(rx_h2_session_t *s, const uint8_t *data, size_t len)
{
    const uint8_t *p = data, *end = data + len;
    uint32_t       n;

    s->new_streams = 0;
    for (;;) {
        settle(s);
        if (p == end || s->in_state == RX_H2_IN_DEAD) {
            break;
        }
        switch (s->in_state) {
        case RX_H2_IN_PREFACE:
            n = (uint32_t) RX_H2_MIN((size_t) (s->need - s->have), (size_t) (end - p));
            if (memcmp(p, &RX_H2_PREFACE[s->have], n) != 0) {
                rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                                 "sent an invalid connection preface");
                break;
            }
            s->have += n;
            break;
        case RX_H2_IN_HEAD:
        case RX_H2_IN_FILL:
            n = (uint32_t) RX_H2_MIN((size_t) (s->need - s->have), (size_t) (end - p));
            memcpy(s->ibuf + s->have, p, n);
            s->have += n;
            if (s->in_state == RX_H2_IN_FILL) {
                s->left -= n;
            }
            break;
        case RX_H2_IN_BODY:
            n = (uint32_t) RX_H2_MIN((size_t) (s->left - s->pad), (size_t) (end - p));
            if (s->hd.type == RX_H2_DATA) {
                data_bytes(s, p, n);
            } else if (s->hd.type == RX_H2_HEADERS
                       && (s->hd.flags & RX_H2_F_END_HEADERS)
                       && s->block_len == 0 && (size_t) (end - p) >= s->left
                       && n <= s->conf.max_header_block) {
                /* a whole block in this read (most requests): handed
                 * over from the caller's bytes, no copy, no buffer */
                s->zc = p;
                s->block_len = n;
            } else {
                block_add(s, p, n);
            }
            s->left -= n;
            break;
        default:                         /* RX_H2_IN_SKIP */
            n = (uint32_t) RX_H2_MIN((size_t) s->left, (size_t) (end - p));
            s->left -= n;
            break;
        }
        p += n;
    }
    return s->nomem ? -1 : (ssize_t) len;
}

/* ---- frames ------------------------------------------------------------- */

static void
data_begin(rx_h2_session_t *s)
{
    rx_h2_frame_hd_t *hd = &s->hd;
    rx_h2_stream_t   *st;

    if (hd->stream_id > s->max_id) {
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR, "sent DATA frame for an idle stream");
        return;
    }
    if (hd->length > (uint32_t) s->recv_window) {
        rx_h2_conn_error(s, RX_H2_FLOW_CONTROL_ERROR,
                         "violated connection flow control");
        return;
    }
    s->recv_window -= (int32_t) hd->length;
    st = rx_h2_stream_find(s, hd->stream_id);
    if (st == NULL || st->state == RX_H2_ST_HALF_REMOTE) {
        rx_h2_conn_consume(s, hd->length);
        if (!rx_h2_reset_lately(s, hd->stream_id)) {
            rx_h2_stream_error(s, hd->stream_id, RX_H2_STREAM_CLOSED,
                         "sent DATA frame for a closed stream");
        }
        expect(s, RX_H2_IN_SKIP, 0);
        return;
    }
    if (hd->length > (uint32_t) RX_H2_MAX(st->recv_window, 0)) {
        rx_h2_conn_consume(s, hd->length);
        rx_h2_stream_error(s, hd->stream_id, RX_H2_FLOW_CONTROL_ERROR,
                     "violated flow control for a stream");
        expect(s, RX_H2_IN_SKIP, 0);
        return;
    }
    st->recv_window -= (int32_t) hd->length;
    expect(s, (hd->flags & RX_H2_F_PADDED) ? RX_H2_IN_FILL : RX_H2_IN_BODY,
           (hd->flags & RX_H2_F_PADDED) ? 1 : 0);
}

/* A HEADERS frame that opens stream id: refused, or a stream. */
static void
stream_open(rx_h2_session_t *s, int32_t id)
{
    rx_h2_stream_t *st;
    uint32_t        code = 0;

    s->max_id = id;
    if (++s->new_streams > s->conf.max_new_streams) {
        rx_h2_conn_error(s, RX_H2_ENHANCE_YOUR_CALM,
                         "opened too many streams at once");
        return;
    }
    /* refused: beyond the streams allowed (also before the client
     * acknowledged our SETTINGS), or crossing our GOAWAY */
    if (s->nstreams >= s->conf.max_concurrent_streams
        || ((s->goaway_pending || s->goaway_sent) && id > s->goaway_last)) {
        code = RX_H2_REFUSED_STREAM;
        goto refused;
    }
    st = rx_h2_alloc(s, sizeof(*st));
    if (st == NULL) {
        return;
    }
    memset(st, 0, sizeof(*st));
    st->id = id;
    st->state = RX_H2_ST_OPEN;
    st->send_window = (int32_t) s->remote.initial_window_size;
    st->recv_window = (int32_t) s->local_iws;
    st->next = s->streams;
    s->streams = st;
    s->nstreams++;
    /* the stream exists when the caller hears of it: it may set its user
     * data (rx_h2_session_set_stream_user_data) from begin_headers */
    code = s->cb->begin_headers ? s->cb->begin_headers(s, id, s->ud) : 0;
    if (code) {
        s->streams = st->next;           /* still the first */
        s->nstreams--;
        if (s->last_st == st) {
            s->last_st = NULL;
        }
        rx_h2_free(s, st, sizeof(*st));
        goto refused;
    }
    s->last_proc = id;
    return;

refused:
    s->block_flags |= RX_H2_BLOCK_REFUSED;
    rx_h2_reset_stream(s, id, code);
}

static void
headers_begin(rx_h2_session_t *s)
{
    rx_h2_frame_hd_t *hd = &s->hd;
    rx_h2_stream_t   *st = rx_h2_stream_find(s, hd->stream_id);
    uint32_t          prefix;

    s->block_id = hd->stream_id;
    s->block_len = 0;
    s->block_flags = (hd->flags & RX_H2_F_END_STREAM) ? RX_H2_BLOCK_END_STREAM : 0;
    s->continuations = 0;
    if ((hd->stream_id & 1) == 0) {
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                         "sent HEADERS frame with an even identifier");
        return;
    }
    if (st) {
        /* trailers: they end the stream (RFC 9113 8.1) */
        s->block_flags |= RX_H2_BLOCK_TRAILERS;
        if (st->state == RX_H2_ST_HALF_REMOTE) {
            s->block_flags |= RX_H2_BLOCK_REFUSED;
            rx_h2_stream_error(s, hd->stream_id, RX_H2_STREAM_CLOSED,
                         "sent HEADERS frame for a half-closed stream");
        } else if (!(hd->flags & RX_H2_F_END_STREAM)) {
            s->block_flags |= RX_H2_BLOCK_REFUSED;
            rx_h2_stream_error(s, hd->stream_id, RX_H2_PROTOCOL_ERROR,
                         "sent trailers without END_STREAM");
        }
    } else if (hd->stream_id <= s->max_id && rx_h2_reset_lately(s, hd->stream_id)) {
        /* trailers in flight on a stream we reset: decoded, ignored */
        s->block_flags |= RX_H2_BLOCK_TRAILERS | RX_H2_BLOCK_REFUSED;
    } else if (hd->stream_id <= s->max_id) {
        static char why[96];

        /* nginx's words, with both ids */
        snprintf(why, sizeof(why), "sent HEADERS frame with incorrect "
                 "identifier %d, the last was %d", (int) hd->stream_id,
                 (int) s->max_id);
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR, why);
        return;
    } else {
        stream_open(s, hd->stream_id);
    }
    prefix = ((hd->flags & RX_H2_F_PADDED) ? 1 : 0)
             + ((hd->flags & RX_H2_F_PRIORITY) ? 5 : 0);
    expect(s, prefix ? RX_H2_IN_FILL : RX_H2_IN_BODY, prefix);
}

static void
continuation_begin(rx_h2_session_t *s)
{
    if (s->block_id == 0 || s->hd.stream_id != s->block_id) {
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                         "sent unexpected CONTINUATION frame");
        return;
    }
    if (++s->continuations > s->conf.max_continuations) {
        rx_h2_conn_error(s, RX_H2_ENHANCE_YOUR_CALM,
                         "sent too many CONTINUATION frames");
        return;
    }
    expect(s, RX_H2_IN_BODY, 0);
}

/* The frame's header is in ibuf. */
static void
frame_begin(rx_h2_session_t *s)
{
    rx_h2_frame_hd_t *hd = &s->hd;
    const char       *why = NULL;
    uint32_t          code;
    bool              end;

    rx_h2_frame_hd_read(hd, s->ibuf);
    s->left = hd->length;
    s->pad = 0;
    s->end_told = false;
    expect(s, RX_H2_IN_SKIP, 0);
    if (!s->settings_seen
        && (hd->type != RX_H2_SETTINGS || (hd->flags & RX_H2_F_ACK))) {
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                         "sent no SETTINGS frame after the preface");
        return;
    }
    code = rx_h2_frame_check(hd, RX_H2_MIN_FRAME_SIZE, &why);
    if (code) {
        rx_h2_conn_error(s, code, why);
        return;
    }
    if (s->block_id && hd->type != RX_H2_CONTINUATION) {
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                         "sent inappropriate frame while CONTINUATION was expected");
        return;
    }
    /* frames that carry nothing and end nothing cost us a frame's work
     * each: a flood of them ends the connection */
    end = hd->flags & (hd->type == RX_H2_CONTINUATION ? RX_H2_F_END_HEADERS
                                                      : RX_H2_F_END_STREAM);
    if (hd->length == 0 && !end && hd->type <= RX_H2_CONTINUATION
        && (hd->type == RX_H2_DATA || hd->type == RX_H2_HEADERS
            || hd->type == RX_H2_CONTINUATION)
        && ++s->empty_frames > s->conf.max_empty_frames) {
        rx_h2_conn_error(s, RX_H2_ENHANCE_YOUR_CALM, "sent too many empty frames");
        return;
    }
    switch (hd->type) {
    case RX_H2_DATA:          data_begin(s); break;
    case RX_H2_HEADERS:       headers_begin(s); break;
    case RX_H2_CONTINUATION:  continuation_begin(s); break;
    case RX_H2_PRIORITY:
    case RX_H2_RST_STREAM:
    case RX_H2_PING:
    case RX_H2_GOAWAY:
    case RX_H2_WINDOW_UPDATE:
        expect(s, RX_H2_IN_FILL, RX_H2_MIN(hd->length, 8));
        break;
    case RX_H2_SETTINGS:
        if (hd->length / 6 > s->conf.max_settings) {
            rx_h2_conn_error(s, RX_H2_ENHANCE_YOUR_CALM,
                             "sent too many SETTINGS parameters");
            return;
        }
        s->settings_seen = true;
        expect(s, hd->length ? RX_H2_IN_FILL : RX_H2_IN_SKIP, 6);
        break;
    case RX_H2_PUSH_PROMISE:
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR, "sent PUSH_PROMISE frame");
        break;
    default:
        break;                           /* unknown: skipped */
    }
}

/* ---- fixed fields and control frames ------------------------------------ */

/* A frame's padding length (ibuf[0]): RFC 9113 6.1, padding as long as
 * the payload or longer is a connection error. */
static bool
padding(rx_h2_session_t *s, uint32_t pad)
{
    if (pad > s->left) {
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                         "sent padded frame with incorrect length");
        return false;
    }
    s->pad = pad;
    return true;
}

static void
data_prefix(rx_h2_session_t *s)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, s->hd.stream_id);

    if (!padding(s, s->ibuf[0])) {
        return;
    }
    /* the padding is flow-controlled but never the caller's to consume */
    rx_h2_conn_consume(s, s->pad + 1);
    if (st) {
        rx_h2_stream_consume(s, st, s->pad + 1);
    }
    expect(s, RX_H2_IN_BODY, 0);
}

static void
headers_prefix(rx_h2_session_t *s)
{
    uint32_t off = 0, dep;

    if ((s->hd.flags & RX_H2_F_PADDED) && !padding(s, s->ibuf[off++])) {
        return;
    }
    if (s->hd.flags & RX_H2_F_PRIORITY) {
        dep = rx_h2_get32(s->ibuf + off) & 0x7fffffff;
        if (dep == (uint32_t) s->hd.stream_id
            && !(s->block_flags & RX_H2_BLOCK_REFUSED)) {
            s->block_flags |= RX_H2_BLOCK_REFUSED;
            rx_h2_stream_error(s, s->hd.stream_id, RX_H2_PROTOCOL_ERROR,
                               "sent HEADERS frame with incorrect dependency");
        }
    }
    expect(s, RX_H2_IN_BODY, 0);
}

static void
settings_entry(rx_h2_session_t *s)
{
    uint16_t        id = (uint16_t) (s->ibuf[0] << 8 | s->ibuf[1]);
    uint32_t        v = rx_h2_get32(s->ibuf + 2);
    int64_t         delta, w;
    rx_h2_stream_t *st;

    switch (id) {
    case RX_H2_SET_HEADER_TABLE_SIZE: s->remote.header_table_size = v; break;
    case RX_H2_SET_MAX_CONCURRENT_STREAMS: s->remote.max_concurrent_streams = v; break;
    case RX_H2_SET_MAX_HEADER_LIST_SIZE: s->remote.max_header_list_size = v; break;
    case RX_H2_SET_ENABLE_PUSH:
        if (v > 1) {
            rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR, "sent SETTINGS frame with incorrect ENABLE_PUSH value");
            return;
        }
        s->remote.enable_push = v;
        break;
    case RX_H2_SET_MAX_FRAME_SIZE:
        if (v < RX_H2_MIN_FRAME_SIZE || v > RX_H2_MAX_FRAME_SIZE) {
            rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                             "sent SETTINGS frame with incorrect MAX_FRAME_SIZE value");
            return;
        }
        s->remote.max_frame_size = v;
        break;
    case RX_H2_SET_INITIAL_WINDOW_SIZE:
        /* every stream's send window moves by the change, and may go
         * below 0 (RFC 9113 6.9.2) */
        delta = (int64_t) v - s->remote.initial_window_size;
        for (st = s->streams; v <= RX_H2_MAX_WINDOW && st; st = st->next) {
            w = st->send_window + delta;
            if (w > RX_H2_MAX_WINDOW) {
                break;
            }
            st->send_window = (int32_t) w;
        }
        if (v > RX_H2_MAX_WINDOW || st) {
            rx_h2_conn_error(s, RX_H2_FLOW_CONTROL_ERROR,
                             "sent SETTINGS frame with incorrect INITIAL_WINDOW_SIZE value");
            return;
        }
        s->remote.initial_window_size = v;
        break;
    default:
        break;                          /* unknown: ignored (6.5.2) */
    }
    expect(s, s->left ? RX_H2_IN_FILL : RX_H2_IN_SKIP, 6);
}

/* Our SETTINGS acknowledged: the stream window we announced applies now
 * to the streams opened before (they had the default). */
static void
settings_acked(rx_h2_session_t *s)
{
    rx_h2_stream_t *st;
    int64_t         delta;

    if (s->settings_acked || s->settings_pending) {
        return;
    }
    s->settings_acked = true;
    delta = (int64_t) s->conf.initial_window_size - s->local_iws;
    for (st = s->streams; st; st = st->next) {
        st->recv_window = (int32_t) (st->recv_window + delta);
    }
    s->local_iws = s->conf.initial_window_size;
    /* a smaller window: what was consumed under the default may now be
     * due a WINDOW_UPDATE, and no more DATA may come to trigger it (the
     * client's window went negative with our SETTINGS) */
    for (st = s->streams; st; st = st->next) {
        rx_h2_stream_consume(s, st, 0);
    }
}

static void
rst_stream(rx_h2_session_t *s)
{
    int32_t         id = s->hd.stream_id;
    uint32_t        code = rx_h2_get32(s->ibuf);
    rx_h2_stream_t *st;

    if (id > s->max_id) {
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR, "sent RST_STREAM frame for an idle stream");
        return;
    }
    /* CVE-2023-44487 (Rapid Reset): resets per connection are bounded */
    if (++s->resets > s->conf.max_resets) {
        rx_h2_conn_error(s, RX_H2_ENHANCE_YOUR_CALM, "reset too many streams");
        return;
    }
    st = rx_h2_stream_find(s, id);
    if (st && s->cb->rst_recv) {
        s->cb->rst_recv(s, id, st->sud, code, s->ud);
        st = rx_h2_stream_find(s, id);
    }
    if (st) {
        rx_h2_stream_close(s, st, code);
    }
}

static void
window_update(rx_h2_session_t *s)
{
    int32_t         id = s->hd.stream_id;
    uint32_t        inc = rx_h2_get32(s->ibuf) & 0x7fffffff;
    rx_h2_stream_t *st;

    if (id == 0) {
        if (inc == 0) {
            rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                             "sent WINDOW_UPDATE frame with incorrect window increment 0");
        } else if (s->send_window + inc > RX_H2_MAX_WINDOW) {
            rx_h2_conn_error(s, RX_H2_FLOW_CONTROL_ERROR,
                             "violated connection flow control: WINDOW_UPDATE beyond 2^31-1");
        } else {
            s->send_window += inc;
        }
        return;
    }
    if (id > s->max_id) {
        rx_h2_conn_error(s, RX_H2_PROTOCOL_ERROR,
                         "sent WINDOW_UPDATE frame for an idle stream");
        return;
    }
    st = rx_h2_stream_find(s, id);
    if (st == NULL) {
        return;                         /* closed: ignored (5.1) */
    }
    if (inc == 0) {
        rx_h2_stream_error(s, id, RX_H2_PROTOCOL_ERROR,
                           "sent WINDOW_UPDATE frame with incorrect window increment 0");
    } else if ((int64_t) st->send_window + inc > RX_H2_MAX_WINDOW) {
        rx_h2_stream_error(s, id, RX_H2_FLOW_CONTROL_ERROR,
                           "violated flow control for a stream: WINDOW_UPDATE beyond 2^31-1");
    } else {
        st->send_window += (int32_t) inc;
    }
}

/* A frame's fixed fields are in ibuf. */
static void
fill_done(rx_h2_session_t *s)
{
    rx_h2_frame_hd_t *hd = &s->hd;

    expect(s, RX_H2_IN_SKIP, 0);      /* unless the type reads on */
    switch (hd->type) {
    case RX_H2_DATA:      data_prefix(s); break;
    case RX_H2_HEADERS:   headers_prefix(s); break;
    case RX_H2_SETTINGS:  settings_entry(s); break;
    case RX_H2_RST_STREAM: rst_stream(s); break;
    case RX_H2_WINDOW_UPDATE: window_update(s); break;
    case RX_H2_PING:
        if (!(hd->flags & RX_H2_F_ACK)) {
            rx_h2_ctrl_push(s, RX_H2_PING, 0, 0, s->ibuf);
        }
        break;
    case RX_H2_GOAWAY:
        s->goaway_recv = true;
        if (s->cb->goaway_recv) {
            s->cb->goaway_recv(s, (int32_t) (rx_h2_get32(s->ibuf) & 0x7fffffff),
                              rx_h2_get32(s->ibuf + 4), s->ud);
        }
        break;
    case RX_H2_PRIORITY:
        /* parsed and ignored (RFC 9113 5.3.2), but for this error */
        if ((rx_h2_get32(s->ibuf) & 0x7fffffff) == (uint32_t) hd->stream_id) {
            rx_h2_stream_error(s, hd->stream_id, RX_H2_PROTOCOL_ERROR,
                               "sent PRIORITY frame with incorrect dependency");
        }
        break;
    default:
        break;
    }
}

/* ---- a frame's end -------------------------------------------------------- */

/* The header block is complete: to the caller (who decodes even the
 * blocks of refused streams: HPACK's table is the connection's), then
 * its buffer goes. */
static void
block_done(rx_h2_session_t *s)
{
    int32_t         id = s->block_id;
    unsigned        flags = s->block_flags;
    rx_h2_stream_t *st = (flags & RX_H2_BLOCK_REFUSED) ? NULL
                         : rx_h2_stream_find(s, id);

    s->block_id = 0;
    if (st == NULL) {
        flags |= RX_H2_BLOCK_REFUSED;
    }
    s->cb->header_block(s, id, st ? st->sud : NULL, s->zc ? s->zc : s->block,
                       s->block_len, flags, s->ud);
    rx_h2_free(s, s->block, s->block_size);
    s->zc = NULL;
    s->block = NULL;
    s->block_size = s->block_len = 0;
    if ((flags & (RX_H2_BLOCK_END_STREAM | RX_H2_BLOCK_REFUSED))
        == RX_H2_BLOCK_END_STREAM && (st = rx_h2_stream_find(s, id))) {
        rx_h2_remote_close(s, st);
    }
}

static void
data_end(rx_h2_session_t *s)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, s->hd.stream_id);

    if (st == NULL || st->state == RX_H2_ST_HALF_REMOTE
        || !(s->hd.flags & RX_H2_F_END_STREAM)) {
        return;
    }
    if (!s->end_told) {
        s->cb->data(s, st->id, st->sud, NULL, 0, true, s->ud);
        st = rx_h2_stream_find(s, s->hd.stream_id);
    }
    if (st) {
        rx_h2_remote_close(s, st);
    }
}

static void
frame_end(rx_h2_session_t *s)
{
    rx_h2_frame_hd_t *hd = &s->hd;

    expect(s, RX_H2_IN_HEAD, RX_H2_FRAME_HDLEN);
    switch (hd->type) {
    case RX_H2_DATA:
        data_end(s);
        break;
    case RX_H2_HEADERS:
    case RX_H2_CONTINUATION:
        if ((hd->flags & RX_H2_F_END_HEADERS) && s->block_id) {
            block_done(s);
        }
        break;
    case RX_H2_SETTINGS:
        if (hd->flags & RX_H2_F_ACK) {
            settings_acked(s);
        } else if (rx_h2_ctrl_push(s, RX_H2_SETTINGS, 0, 0, NULL)
                   && s->cb->settings) {
            s->cb->settings(s, &s->remote, s->ud);
        }
        break;
    default:
        break;
    }
}
