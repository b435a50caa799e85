/*
 * http_v2_session_out.c: the output side of ringx's own HTTP/2 session:
 * what the caller submits (header blocks, bodies, resets, GOAWAY) and the
 * frames written into the caller's buffer, in the order the peer needs:
 * a header block's rest, control frames, GOAWAY, header blocks, then DATA
 * round-robin as the client's windows allow, each payload written by the
 * caller's data_source straight after its frame header (no copy here).
 */
#include <string.h>
#include "http_v2_session_int.h"

/* ---- the queues --------------------------------------------------------- */

static void
q_push(rx_h2_stream_t **head, rx_h2_stream_t **tail, rx_h2_stream_t *st)
{
    st->qnext = NULL;
    if (*tail) {
        (*tail)->qnext = st;
    } else {
        *head = st;
    }
    *tail = st;
}

static rx_h2_stream_t *
q_pop(rx_h2_stream_t **head, rx_h2_stream_t **tail)
{
    rx_h2_stream_t *st = *head;

    *head = st->qnext;
    if (*head == NULL) {
        *tail = NULL;
    }
    st->qnext = NULL;
    return st;
}

static void
q_remove(rx_h2_stream_t **head, rx_h2_stream_t **tail, rx_h2_stream_t *st)
{
    rx_h2_stream_t **pp, *prev = NULL;

    for (pp = head; *pp && *pp != st; pp = &(*pp)->qnext) {
        prev = *pp;
    }
    if (*pp) {
        *pp = st->qnext;
        if (*tail == st) {
            *tail = prev;
        }
    }
}

void
rx_h2_dq_push(rx_h2_session_t *s, rx_h2_stream_t *st)
{
    if (!st->in_dq && !st->in_hq) {
        st->in_dq = true;
        s->ndq++;
        q_push(&s->dq, &s->dq_tail, st);
    }
}

void
rx_h2_queues_drop(rx_h2_session_t *s, rx_h2_stream_t *st)
{
    if (st->in_hq) {
        q_remove(&s->hq, &s->hq_tail, st);
        st->in_hq = false;
    }
    if (st->in_dq) {
        q_remove(&s->dq, &s->dq_tail, st);
        st->in_dq = false;
        s->ndq--;
    }
}

/* ---- submitting ----------------------------------------------------------- */

int
rx_h2_submit_headers(rx_h2_session_t *s, int32_t id, const uint8_t *block,
    size_t len, bool end_stream)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, id);

    /* another header block only after one without a body (a 1xx, or a
     * header section that trailers end); trailers after DATA: not yet */
    if (st == NULL || st->state == RX_H2_ST_HALF_LOCAL || st->in_hq
        || st->hend || st->has_data || s->terminated || len > UINT32_MAX / 2) {
        return -1;
    }
    if (len) {
        st->hblock = rx_h2_alloc(s, len);
        if (st->hblock == NULL) {
            return -1;
        }
        memcpy(st->hblock, block, len);
    }
    st->hlen = (uint32_t) len;
    st->hend = end_stream;
    st->in_hq = true;
    q_push(&s->hq, &s->hq_tail, st);
    return 0;
}

int
rx_h2_submit_data(rx_h2_session_t *s, int32_t id)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, id);

    if (st == NULL || st->hend || st->state == RX_H2_ST_HALF_LOCAL) {
        return -1;
    }
    st->has_data = true;
    st->deferred = false;
    if (st->headers_sent) {
        rx_h2_dq_push(s, st);
    }
    return 0;
}

int
rx_h2_session_resume_data(rx_h2_session_t *s, int32_t id)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, id);

    if (st == NULL || !st->has_data) {
        return -1;
    }
    if (st->deferred) {
        st->deferred = false;
        rx_h2_dq_push(s, st);
    }
    return 0;
}

int
rx_h2_submit_rst_stream(rx_h2_session_t *s, int32_t id, uint32_t code)
{
    if (s->terminated || id <= 0) {
        return -1;
    }
    rx_h2_reset_stream(s, id, code);
    return 0;
}

int
rx_h2_submit_goaway(rx_h2_session_t *s, int32_t last_id, uint32_t code)
{
    if (s->terminated || s->goaway_pending) {
        return -1;
    }
    s->goaway_last = s->goaway_sent ? RX_H2_MIN(s->goaway_last, last_id) : last_id;
    s->goaway_code = code;
    s->goaway_pending = true;
    return 0;
}

/* ---- writing --------------------------------------------------------------- */

static void
sent(rx_h2_session_t *s, const uint8_t *frame)
{
    rx_h2_frame_hd_t hd;

    if (s->cb->frame_sent) {
        rx_h2_frame_hd_read(&hd, frame);
        s->cb->frame_sent(s, hd.type, hd.flags, hd.stream_id, s->ud);
    }
}

/* Our END_STREAM went: the stream closes when the client's side did;
 * while the client still sends (a body nobody waits for) RST_STREAM
 * NO_ERROR follows it, as nginx and RFC 9113 8.1. */
static void
local_close(rx_h2_session_t *s, int32_t id)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, id);

    if (st == NULL) {
        return;
    }
    st->has_data = false;
    if (st->state == RX_H2_ST_HALF_REMOTE) {
        rx_h2_stream_close(s, st, RX_H2_NO_ERROR);
    } else {
        rx_h2_reset_stream(s, id, RX_H2_NO_ERROR);
    }
}

static size_t
write_ctrl(rx_h2_session_t *s, uint8_t *p, size_t room)
{
    size_t        n = 0, len;
    rx_h2_ctrl_t *c;

    while (s->ctrl_head < s->nctrl && room - n >= RX_H2_PING_LEN) {
        c = &s->ctrl[s->ctrl_head++];
        switch (c->type) {
        case RX_H2_RST_STREAM:
            s->acks--;
            len = rx_h2_write_rst(p + n, c->id, c->value);
            break;
        case RX_H2_WINDOW_UPDATE:
            len = rx_h2_write_window_update(p + n, c->id, c->value);
            break;
        case RX_H2_PING:
            s->acks--;
            len = rx_h2_write_ping_ack(p + n, c->opaque);
            break;
        default:                        /* SETTINGS: an ack */
            s->acks--;
            len = rx_h2_write_settings(p + n, NULL, NULL, 0, 1);
            break;
        }
        sent(s, p + n);
        n += len;
    }
    if (s->ctrl_head == s->nctrl && s->ctrl) {
        /* drained: no buffer held while idle */
        rx_h2_free(s, s->ctrl, s->ctrl_size * sizeof(rx_h2_ctrl_t));
        s->ctrl = NULL;
        s->ctrl_size = s->nctrl = s->ctrl_head = 0;
    }
    return n;
}

static size_t
write_settings(rx_h2_session_t *s, uint8_t *p)
{
    uint16_t ids[4];
    uint32_t values[4];
    size_t   k = 0, n;

    ids[k] = RX_H2_SET_MAX_CONCURRENT_STREAMS;
    values[k++] = s->conf.max_concurrent_streams;
    ids[k] = RX_H2_SET_INITIAL_WINDOW_SIZE;
    values[k++] = s->conf.initial_window_size;
    ids[k] = RX_H2_SET_ENABLE_PUSH;
    values[k++] = 0;
    if (s->conf.max_header_list_size) {
        ids[k] = RX_H2_SET_MAX_HEADER_LIST_SIZE;
        values[k++] = s->conf.max_header_list_size;
    }
    n = rx_h2_write_settings(p, ids, values, k, 0);
    sent(s, p);
    if (s->settings_window) {
        rx_h2_write_window_update(p + n, 0, s->settings_window);
        sent(s, p + n);
        n += RX_H2_WU_LEN;
    }
    s->settings_pending = false;
    return n;
}

/* The header block in hout, as HEADERS + CONTINUATIONs each within the
 * client's max frame size and the room left; false when it did not end
 * (its rest goes first next time). */
static bool
write_block(rx_h2_session_t *s, uint8_t *p, size_t room, size_t *n)
{
    uint32_t len;
    uint8_t  flags;
    bool     first;

    while (room - *n > RX_H2_FRAME_HDLEN
           || (s->hout_len == 0 && room - *n >= RX_H2_FRAME_HDLEN)) {
        first = s->hout_off == 0;
        len = (uint32_t) RX_H2_MIN((size_t) (s->hout_len - s->hout_off),
                  RX_H2_MIN((size_t) s->remote.max_frame_size,
                            room - *n - RX_H2_FRAME_HDLEN));
        flags = s->hout_off + len == s->hout_len ? RX_H2_F_END_HEADERS : 0;
        flags |= first && s->hout_end ? RX_H2_F_END_STREAM : 0;
        rx_h2_frame_hd_write(p + *n, len, first ? RX_H2_HEADERS
                             : RX_H2_CONTINUATION, flags, s->hout_id);
        if (len) {
            memcpy(p + *n + RX_H2_FRAME_HDLEN, s->hout + s->hout_off, len);
        }
        s->hout_off += len;
        sent(s, p + *n);
        *n += RX_H2_FRAME_HDLEN + len;
        if (flags & RX_H2_F_END_HEADERS) {
            rx_h2_free(s, s->hout, s->hout_len);
            s->hout = NULL;
            s->hout_id = 0;
            return true;
        }
    }
    return false;
}

/* Header blocks in the order submitted; a stream whose block went starts
 * its body, or ends. */
static bool
write_headers(rx_h2_session_t *s, uint8_t *p, size_t room, size_t *n)
{
    rx_h2_stream_t *st;
    int32_t         id;

    if (s->hout_id && !write_block(s, p, room, n)) {
        return false;
    }
    while (s->hq && room - *n >= RX_H2_FRAME_HDLEN) {
        st = q_pop(&s->hq, &s->hq_tail);
        st->in_hq = false;
        st->headers_sent = true;
        s->hout = st->hblock;
        s->hout_len = st->hlen;
        s->hout_off = 0;
        s->hout_id = id = st->id;
        s->hout_end = st->hend;
        st->hblock = NULL;              /* the session's now */
        st->hlen = 0;
        if (st->hend) {
            local_close(s, id);         /* END_STREAM is in the buffer */
        } else if (st->has_data) {
            rx_h2_dq_push(s, st);
        }
        if (!write_block(s, p, room, n)) {
            return false;
        }
    }
    return true;
}

/* One DATA frame of st: false when the stream gives nothing now. */
static bool
write_data_frame(rx_h2_session_t *s, rx_h2_stream_t *st, uint8_t *p,
    size_t max, size_t *n)
{
    int32_t id = st->id;
    bool    eof = false;
    ssize_t r = s->cb->data_source(s, id, st->sud, p + RX_H2_FRAME_HDLEN, max,
                                  &eof, s->ud);

    st = rx_h2_stream_find(s, id);     /* the callback may reset it */
    if (st == NULL) {
        return false;
    }
    if (r == RX_H2_DEFERRED || (r == 0 && !eof)) {
        st->deferred = true;
        return false;
    }
    if (r < 0 || (size_t) r > max) {
        rx_h2_reset_stream(s, id, RX_H2_INTERNAL_ERROR);
        return false;
    }
    rx_h2_frame_hd_write(p, (uint32_t) r, RX_H2_DATA,
                         eof ? RX_H2_F_END_STREAM : 0, id);
    s->send_window -= r;
    st->send_window -= (int32_t) r;
    *n += RX_H2_FRAME_HDLEN + (size_t) r;
    sent(s, p);
    if (eof) {
        local_close(s, id);
        return false;
    }
    return true;
}

/* DATA round-robin: one frame per stream per turn, each sized by the
 * windows, the client's max frame size, chunk_size and the room left. */
static void
write_data(rx_h2_session_t *s, uint8_t *p, size_t room, size_t *n)
{
    rx_h2_stream_t *st;
    uint32_t        idle = 0;
    int64_t         max;

    while (s->dq && idle < s->ndq && s->send_window > 0
           && room - *n > RX_H2_FRAME_HDLEN) {
        st = q_pop(&s->dq, &s->dq_tail);
        st->in_dq = false;
        s->ndq--;
        max = RX_H2_MIN(s->send_window, (int64_t) st->send_window);
        max = RX_H2_MIN(max, (int64_t) RX_H2_MIN(s->remote.max_frame_size,
                                                 s->conf.chunk_size));
        max = RX_H2_MIN(max, (int64_t) (room - *n - RX_H2_FRAME_HDLEN));
        if (max <= 0) {
            idle++;                     /* its window is shut: it waits */
            rx_h2_dq_push(s, st);
            continue;
        }
        idle = 0;
        if (write_data_frame(s, st, p + *n, (size_t) max, n)) {
            rx_h2_dq_push(s, st);      /* alive: it gave bytes */
        }
    }
}

size_t
rx_h2_session_send(rx_h2_session_t *s, uint8_t *buf, size_t size)
{
    size_t n = 0;

    if (s->term_sent || size < 64) {
        return 0;
    }
    if (s->settings_pending) {
        n += write_settings(s, buf);
    }
    /* a header block's rest first: nothing may interleave (6.10) */
    if (s->hout_id && !write_block(s, buf, size, &n)) {
        return n;
    }
    n += write_ctrl(s, buf + n, size - n);
    if (s->goaway_pending && size - n >= RX_H2_GOAWAY_LEN) {
        n += rx_h2_write_goaway(buf + n, s->goaway_last, (uint32_t) s->goaway_code);
        s->goaway_pending = false;
        s->goaway_sent = true;
        sent(s, buf + n - RX_H2_GOAWAY_LEN);
        if (s->terminated) {
            s->term_sent = true;        /* nothing more after it */
            return n;
        }
    }
    if (s->terminated || s->ctrl_head < s->nctrl || s->goaway_pending) {
        return n;
    }
    if (write_headers(s, buf, size, &n)) {
        write_data(s, buf, size, &n);
    }
    return n;
}

/* As nghttp2's: something to write now (DATA only with a window open). */
bool
rx_h2_session_want_write(const rx_h2_session_t *s)
{
    const rx_h2_stream_t *st;

    if (s->term_sent) {
        return false;
    }
    if (s->settings_pending || s->hout_id || s->ctrl_head < s->nctrl
        || s->goaway_pending || s->hq) {
        return true;
    }
    if (s->terminated || s->send_window <= 0) {
        return false;
    }
    for (st = s->dq; st; st = st->qnext) {
        if (st->send_window > 0) {
            return true;
        }
    }
    return false;
}
