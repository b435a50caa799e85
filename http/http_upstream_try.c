/*
 * http_upstream_try.c: one try of an exchange, from the engine's side: its
 * phase (and the log's "while ..." that goes with it), its record for the
 * $upstream_* variables, the reset that starts a try afresh, and its end:
 * the connection dropped, the peer released. Every file of the exchange
 * (http_upstream.c, _body.c, _tunnel.c, _ssl.c, _queue.c) goes through
 * these; they call nothing of http_upstream.c's state machine back.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "http_metrics.h"
#include "clock.h"

/* nginx's words for what an upstream is doing when a line is logged; a
 * phase without words leaves the last ones (a line logged as the exchange
 * ends still says what it was doing). */
static const char *const phase_action[] = {
    [RX_HTTP_UPSTREAM_START] = NULL,
    [RX_HTTP_UPSTREAM_QUEUED] = "waiting in the upstream queue",
    [RX_HTTP_UPSTREAM_CONNECTING] = "connecting to upstream",
    [RX_HTTP_UPSTREAM_HANDSHAKING] = "SSL handshaking to upstream",
    [RX_HTTP_UPSTREAM_SENDING] = "sending request to upstream",
    [RX_HTTP_UPSTREAM_READING_HEADER] = "reading response header from upstream",
    [RX_HTTP_UPSTREAM_READING] = "reading upstream",
    [RX_HTTP_UPSTREAM_TUNNEL] = "proxying upgraded connection",
    [RX_HTTP_UPSTREAM_DONE] = NULL,
};

void
rx_http_upstream_set_phase(rx_http_upstream_t *u, rx_http_upstream_phase_e phase)
{
    u->phase = phase;
    if (phase_action[phase]) {
        u->action = phase_action[phase];
    }
}

void
rx_http_upstream_log_error(rx_http_upstream_t *u, unsigned level, int err,
    const char *msg)
{
    rx_http_request_log_error_action(u->r, level, err, u->action, "%s", msg);
}

/* The log's "upstream:" field: schema, peer, URI. */
void
rx_http_upstream_set_log_upstream(rx_http_upstream_t *u, const rx_str_t *peer)
{
    rx_http_request_t *r = u->r;
    char              *p = rx_pnalloc(r->pool, u->schema.len + peer->len
                                                + u->uri.len);

    if (p == NULL) {
        return;
    }
    memcpy(p, u->schema.data, u->schema.len);
    memcpy(p + u->schema.len, peer->data, peer->len);
    if (u->uri.len) {
        memcpy(p + u->schema.len + peer->len, u->uri.data, u->uri.len);
    }
    r->log_upstream.data = p;
    r->log_upstream.len = u->schema.len + peer->len + u->uri.len;
}

/* A new try: a record for the $upstream_* variables, and nothing of an
 * earlier try (its header, its buffered body, how much of the request it
 * sent) is kept. RX_ERROR: no memory. */
rx_int_t
rx_http_upstream_try_begin(rx_http_upstream_t *u)
{
    rx_http_upstream_state_t *st = rx_array_push(u->states);

    if (st == NULL) {
        return RX_ERROR;
    }
    memset(st, 0, sizeof(*st));
    st->connect_time = st->header_time = -1;
    u->state = st;
    u->try_start = rx_current_msec;
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_CONNECTING);
    u->header_len = 0;
    u->header_done = u->body_done = u->keepalive = u->reused = 0;
    u->error = NULL;
    u->pending = NULL;
    u->used = 0;
    u->fill = u->fill_end = u->slice = NULL;
    u->body_bytes = 0;
    u->request_sent = 0;
    u->head_sent = 0;
    u->fchunk_len = 0;
    u->sent = 0;
    return RX_OK;
}

/* The try that found no connection is not a try: its record goes. */
void
rx_http_upstream_try_undo(rx_http_upstream_t *u)
{
    if (u->states->nelts) {
        u->states->nelts--;
    }
    u->state = NULL;
}

void
rx_http_upstream_end_state(rx_http_upstream_t *u)
{
    if (u->state) {
        u->state->response_time = rx_current_msec - u->try_start;
    }
}

/* A connection that is no longer of use to its request. */
void
rx_http_upstream_drop_connection(rx_http_upstream_t *u)
{
    rx_http_upstream_conn_t *uc = u->uc;

    if (uc == NULL) {
        return;
    }
    u->uc = NULL;
    uc->u = NULL;
    if (uc->c->sending || u->freading) {
        /* the kernel may still read (or write) the request's memory */
        (void) rx_http_request_hold_for(u->r, uc->c);
    }
    rx_conn_close(uc->c);
}

void
rx_http_upstream_release_peer(rx_http_upstream_t *u, bool failed)
{
    if (u->peer) {
        rx_http_metrics_peer_try(u->peer->metrics, rx_current_msec - u->try_start,
                                 u->headers_in.status);
        rx_http_upstream_free_peer(u->peer, failed);
        u->peer = NULL;
    }
}

/* The exchange is over (ended, given up, or left to another location):
 * its connection and peer go, nothing more of it runs. */
void
rx_http_upstream_end(rx_http_upstream_t *u)
{
    rx_http_upstream_keepalive_undefer(u);
    rx_http_upstream_drop_connection(u);
    rx_http_upstream_release_peer(u, false);
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_DONE);
}

/* The exchange ends before a response went out: r is answered with rc,
 * unless the cache has a stale copy that may stand in
 * (*_cache_use_stale, stale-if-error), or a copy the upstream just said
 * is still good (a 304 to *_cache_revalidate). */
void
rx_http_upstream_finalize(rx_http_upstream_t *u, rx_int_t rc)
{
    rx_http_request_t *r = u->r;

    rx_http_upstream_queue_remove(u);
    rx_http_upstream_end_state(u);
    rx_http_upstream_end(u);
    r->write_handler = NULL;
    if ((rc >= RX_HTTP_BAD_REQUEST || rc == RX_HTTP_NOT_MODIFIED)
        && rx_http_cache_stale(r, rc)) {
        return;
    }
    rx_http_finalize_request(r, rc);
}
