/*
 * http_v2_session.c: the core of ringx's own HTTP/2 server session
 * (http_v2_session.h): the session's memory, its streams and their
 * states, the control frames queued, the receive windows reopened as the
 * caller consumes, and the session's end. The bytes themselves are read
 * in http_v2_session_in.c and written in http_v2_session_out.c.
 */
#include <stdlib.h>
#include <string.h>
#include "http_v2_session_int.h"


static void *
std_alloc(size_t size, void *mud)
{
    (void) mud;
    return malloc(size);
}

static void
std_free(void *p, size_t size, void *mud)
{
    (void) size; (void) mud;
    free(p);
}

void *
rx_h2_alloc(rx_h2_session_t *s, size_t size)
{
    void *p = s->mem.alloc(size, s->mem.mud);

    if (p == NULL) {
        s->nomem = true;
        rx_h2_session_terminate(s, RX_H2_INTERNAL_ERROR);
        return NULL;
    }
    s->held += size;
    return p;
}

void
rx_h2_free(rx_h2_session_t *s, void *p, size_t size)
{
    if (p) {
        s->held -= size;
        s->mem.free(p, size, s->mem.mud);
    }
}

static void
defaults(rx_h2_config_t *c)
{
    c->max_concurrent_streams = c->max_concurrent_streams ?: 128;
    c->initial_window_size = RX_H2_MIN(c->initial_window_size ?: RX_H2_DEFAULT_WINDOW,
                                 RX_H2_MAX_WINDOW);
    c->conn_window = RX_H2_MIN(c->conn_window ?: RX_H2_DEFAULT_WINDOW, RX_H2_MAX_WINDOW);
    c->max_header_block = c->max_header_block ?: 65536;
    c->chunk_size = c->chunk_size ?: RX_H2_MAX_FRAME_SIZE;
    c->max_settings = c->max_settings ?: 32;
    c->max_queued_acks = c->max_queued_acks ?: 1000;
    c->max_new_streams = c->max_new_streams ?: 2 * c->max_concurrent_streams;
    c->max_resets = c->max_resets ?: 2 * c->max_concurrent_streams + 100;
    c->max_empty_frames = c->max_empty_frames ?: 100;
    c->max_continuations = c->max_continuations ?: 8;
}

rx_h2_session_t *
rx_h2_session_new(const rx_h2_callbacks_t *cb, const rx_h2_config_t *conf,
    const rx_h2_mem_t *mem, void *ud)
{
    rx_h2_mem_t      m = mem ? *mem : (rx_h2_mem_t) { std_alloc, std_free, NULL };
    rx_h2_session_t *s = m.alloc(sizeof(*s), m.mud);

    if (s == NULL) {
        return NULL;
    }
    memset(s, 0, sizeof(*s));
    s->cb = cb;          /* the caller's, which outlives it */
    s->ud = ud;
    s->mem = m;
    if (conf) {
        s->conf = *conf;
    }
    defaults(&s->conf);
    s->held = sizeof(*s);
    s->remote = (rx_h2_settings_t) { 4096, 1, UINT32_MAX, RX_H2_DEFAULT_WINDOW,
                                     RX_H2_MIN_FRAME_SIZE, UINT32_MAX };
    s->send_window = RX_H2_DEFAULT_WINDOW;
    s->recv_window = (int32_t) s->conf.conn_window;
    s->local_iws = RX_H2_DEFAULT_WINDOW;
    s->goaway_code = -1;
    s->settings_pending = true;
    s->settings_window = s->conf.conn_window > RX_H2_DEFAULT_WINDOW
                         ? s->conf.conn_window - RX_H2_DEFAULT_WINDOW : 0;
    s->in_state = RX_H2_IN_PREFACE;
    s->need = RX_H2_PREFACE_LEN;
    return s;
}

void
rx_h2_session_del(rx_h2_session_t *s)
{
    rx_h2_stream_t *st, *next;

    if (s == NULL) {
        return;
    }
    for (st = s->streams; st; st = next) {
        next = st->next;
        rx_h2_free(s, st->hblock, st->hlen);
        rx_h2_free(s, st, sizeof(*st));
    }
    rx_h2_free(s, s->hout, s->hout_len);
    rx_h2_free(s, s->block, s->block_size);
    rx_h2_free(s, s->ctrl, s->ctrl_size * sizeof(rx_h2_ctrl_t));
    s->mem.free(s, sizeof(*s), s->mem.mud);
}

/* ---- streams ---------------------------------------------------------- */

rx_h2_stream_t *
rx_h2_stream_find(rx_h2_session_t *s, int32_t id)
{
    rx_h2_stream_t *st = s->last_st;

    if (st && st->id == id) {
        return st;
    }
    for (st = s->streams; st; st = st->next) {
        if (st->id == id) {
            s->last_st = st;
            return st;
        }
    }
    return NULL;
}

bool
rx_h2_reset_lately(rx_h2_session_t *s, int32_t id)
{
    size_t i;

    for (i = 0; i < sizeof(s->reset_ids) / sizeof(s->reset_ids[0]); i++) {
        if (s->reset_ids[i] == id) {
            return true;
        }
    }
    return false;
}

void
rx_h2_stream_close(rx_h2_session_t *s, rx_h2_stream_t *st, uint32_t code)
{
    rx_h2_stream_t **pp;

    for (pp = &s->streams; *pp != st; pp = &(*pp)->next) { /* void */ }
    *pp = st->next;
    s->nstreams--;
    if (s->last_st == st) {
        s->last_st = NULL;
    }
    rx_h2_queues_drop(s, st);
    if (s->cb->stream_close) {
        s->cb->stream_close(s, st->id, st->sud, code, s->ud);
    }
    rx_h2_free(s, st->hblock, st->hlen);
    rx_h2_free(s, st, sizeof(*st));
}

/* The client's side of the stream ended. */
void
rx_h2_remote_close(rx_h2_session_t *s, rx_h2_stream_t *st)
{
    if (st->state == RX_H2_ST_HALF_LOCAL) {
        rx_h2_stream_close(s, st, RX_H2_NO_ERROR);
    } else {
        st->state = RX_H2_ST_HALF_REMOTE;
    }
}

/* RST_STREAM(code) queued and the stream, if live, closed; its frames
 * still in flight are ignored. */
void
rx_h2_reset_stream(rx_h2_session_t *s, int32_t id, uint32_t code)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, id);

    rx_h2_ctrl_push(s, RX_H2_RST_STREAM, id, code, NULL);
    s->reset_ids[s->reset_next++ % RX_H2_RESET_IDS] = id;
    if (st) {
        rx_h2_stream_close(s, st, code);
    }
}

void
rx_h2_stream_error(rx_h2_session_t *s, int32_t id, uint32_t code, const char *why)
{
    if (s->cb->error) {
        s->cb->error(s, id, code, why, s->ud);
    }
    rx_h2_reset_stream(s, id, code);
}

/* ---- control queue ------------------------------------------------------ */

bool
rx_h2_ctrl_push(rx_h2_session_t *s, uint8_t type, int32_t id, uint32_t value,
    const uint8_t *opaque)
{
    rx_h2_ctrl_t *c;
    uint32_t      n = s->nctrl - s->ctrl_head;
    /* answers to the client's frames (SETTINGS and PING acks, RST_STREAM
     * for frames on closed streams, refused streams) are bounded while it
     * does not read them, as nghttp2's; a WINDOW_UPDATE answers the
     * caller's consumption, which the windows bound */
    bool          ack = type != RX_H2_WINDOW_UPDATE;

    if (ack && ++s->acks > s->conf.max_queued_acks) {
        rx_h2_conn_error(s, RX_H2_ENHANCE_YOUR_CALM,
                         "sent frames faster than it read the answers");
        return false;
    }
    if (s->nctrl == s->ctrl_size && s->ctrl_head > 0) {
        memmove(s->ctrl, s->ctrl + s->ctrl_head, n * sizeof(*c));
        s->ctrl_head = 0;
        s->nctrl = n;
    } else if (s->nctrl == s->ctrl_size) {
        uint32_t size = s->ctrl_size ? 2 * s->ctrl_size : 8;

        c = rx_h2_alloc(s, size * sizeof(*c));
        if (c == NULL) {
            return false;
        }
        if (s->ctrl) {
            memcpy(c, s->ctrl + s->ctrl_head, n * sizeof(*c));
        }
        rx_h2_free(s, s->ctrl, s->ctrl_size * sizeof(*c));
        s->ctrl = c;
        s->ctrl_size = size;
        s->ctrl_head = 0;
        s->nctrl = n;
    }
    c = &s->ctrl[s->nctrl++];
    c->type = type;
    c->id = id;
    c->value = value;
    if (opaque) {
        memcpy(c->opaque, opaque, 8);
    }
    return true;
}

/* ---- ending ------------------------------------------------------------- */

void
rx_h2_session_terminate(rx_h2_session_t *s, uint32_t code)
{
    s->in_state = RX_H2_IN_DEAD;
    if (s->terminated) {
        return;                      /* the first reason is the one sent */
    }
    s->terminated = true;
    s->goaway_last = s->goaway_pending || s->goaway_sent
                     ? RX_H2_MIN(s->goaway_last, s->last_proc) : s->last_proc;
    s->goaway_code = code;
    s->goaway_pending = true;
}

void
rx_h2_conn_error(rx_h2_session_t *s, uint32_t code, const char *why)
{
    if (s->terminated) {
        return;
    }
    if (s->cb->error) {
        s->cb->error(s, 0, code, why, s->ud);   /* may terminate first */
    }
    rx_h2_session_terminate(s, code);
}

/* ---- receive windows ---------------------------------------------------- */

void
rx_h2_conn_consume(rx_h2_session_t *s, size_t n)
{
    uint32_t inc;

    s->unacked += (uint32_t) RX_H2_MIN(n, (size_t) RX_H2_MAX_WINDOW);
    if (s->unacked < s->conf.conn_window / 2 || s->terminated) {
        return;
    }
    /* batched: a WINDOW_UPDATE once half the window was consumed */
    inc = RX_H2_MIN(s->unacked, (uint32_t) (RX_H2_MAX_WINDOW - s->recv_window));
    s->unacked = 0;
    if (inc && rx_h2_ctrl_push(s, RX_H2_WINDOW_UPDATE, 0, inc, NULL)) {
        s->recv_window += (int32_t) inc;
    }
}

void
rx_h2_stream_consume(rx_h2_session_t *s, rx_h2_stream_t *st, size_t n)
{
    uint32_t inc;
    int64_t  room = (int64_t) RX_H2_MAX_WINDOW - st->recv_window;

    st->unacked += (uint32_t) RX_H2_MIN(n, (size_t) RX_H2_MAX_WINDOW);
    /* no more DATA comes on a half-closed (remote) stream */
    if (st->unacked < s->local_iws / 2 || st->state == RX_H2_ST_HALF_REMOTE
        || s->terminated) {
        return;
    }
    inc = (uint32_t) RX_H2_MIN((int64_t) st->unacked, room);
    st->unacked = 0;
    if (inc && rx_h2_ctrl_push(s, RX_H2_WINDOW_UPDATE, st->id, inc, NULL)) {
        st->recv_window += (int32_t) inc;
    }
}

void
rx_h2_session_consume(rx_h2_session_t *s, int32_t id, size_t n)
{
    rx_h2_stream_t *st = id ? rx_h2_stream_find(s, id) : NULL;

    rx_h2_conn_consume(s, n);
    if (st) {
        rx_h2_stream_consume(s, st, n);
    }
}


/* ---- what the caller asks ----------------------------------------------- */

void
rx_h2_session_set_stream_user_data(rx_h2_session_t *s, int32_t id, void *sud)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, id);

    if (st) {
        st->sud = sud;
    }
}

void *
rx_h2_session_get_stream_user_data(rx_h2_session_t *s, int32_t id)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, id);

    return st ? st->sud : NULL;
}

int
rx_h2_session_remote_closed(rx_h2_session_t *s, int32_t id)
{
    rx_h2_stream_t *st = rx_h2_stream_find(s, id);

    return st ? st->state == RX_H2_ST_HALF_REMOTE : -1;
}

int32_t
rx_h2_session_last_stream(const rx_h2_session_t *s)
{
    return s->max_id;
}

size_t
rx_h2_session_mem(const rx_h2_session_t *s)
{
    return s->held;
}

int64_t
rx_h2_session_goaway_code(const rx_h2_session_t *s)
{
    return s->goaway_code;
}

/* As nghttp2's: no more input after a connection error, nor once a GOAWAY
 * went either way and no stream is left. */
bool
rx_h2_session_want_read(const rx_h2_session_t *s)
{
    if (s->terminated) {
        return false;
    }
    return s->nstreams > 0 || !(s->goaway_sent || s->goaway_recv);
}
