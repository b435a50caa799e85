/*
 * http_upstream_start.c: where a protocol enters the engine. The upstream
 * of a request is created, then the client's body is read as the conf
 * says: discarded, read whole (to a file beyond client_body_buffer_size)
 * before the exchange runs, or streamed to the upstream as it arrives
 * (*_request_buffering off) once the exchange has a connection.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "clock.h"

rx_http_upstream_t *
rx_http_upstream_create(rx_http_request_t *r, const rx_http_upstream_conf_t *conf)
{
    rx_http_upstream_t *u = rx_pcalloc(r->pool, sizeof(*u));
    rx_pool_cleanup_t  *cln = rx_pool_cleanup_add(r->pool, 0);

    if (u == NULL || cln == NULL) {
        return NULL;
    }
    u->r = r;
    u->conf = conf;
    u->us = conf->upstream;
    u->states = rx_array_create(r->pool, 1, sizeof(rx_http_upstream_state_t));
    if (u->states == NULL) {
        return NULL;
    }
    u->start_msec = rx_current_msec;
    u->buffering = conf->buffering ? 1 : 0;
    rx_http_temp_init(&u->temp, conf->temp_path.data);
    u->queue_timer.node.index = RX_HEAP_NONE;
    u->queue_timer.handler = NULL;
    u->rate_timer.node.index = RX_HEAP_NONE;
    u->rate_timer.handler = NULL;
    rx_str_set(&u->schema, "http://");
    cln->handler = rx_http_upstream_cleanup;
    cln->data = u;
    r->upstream = u;
    r->abort_handler = rx_http_upstream_abort;
    return u;
}

static void
body_ready(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    if (u->phase != RX_HTTP_UPSTREAM_DONE && u->uc == NULL
        && u->state == NULL) {
        rx_http_upstream_run(u);
    }
}

static rx_int_t
stream_piece(rx_http_request_t *r, const char *data, size_t len)
{
    rx_http_upstream_t *u = r->upstream;

    if (u == NULL || u->phase == RX_HTTP_UPSTREAM_DONE) {
        return RX_OK;                   /* nobody wants it any more */
    }
    if (u->frame_body(u, data, len, false) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    rx_http_upstream_stream_kick(u);
    return RX_OK;
}

static void
stream_done(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    if (u == NULL || u->phase == RX_HTTP_UPSTREAM_DONE || u->body_complete) {
        return;
    }
    u->body_complete = 1;
    if (u->frame_body(u, NULL, 0, true) != RX_OK) {
        rx_http_upstream_finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    rx_http_upstream_stream_kick(u);
}

rx_int_t
rx_http_upstream_start(rx_http_upstream_t *u)
{
    rx_http_request_t     *r = u->r;
    rx_http_body_reader_t  reader = { body_ready, NULL, false };
    rx_int_t               rc;
    bool                   has_body = r->headers_in.content_length_n > 0
                                      || r->headers_in.chunked;

    if (!has_body || !u->conf->pass_request_body) {
        rc = rx_http_discard_request_body(r);
        if (rc != RX_OK) {
            return rc;
        }
        rx_http_upstream_run(u);
        return RX_DONE;
    }
    if (!u->conf->request_buffering && u->frame_body && !r->body_read
        && r->body_mode == RX_HTTP_BODY_UNCLAIMED) {
        /* streamed: connect now, the body follows as it arrives (a body
         * already read, or taken by a reader before an X-Accel-Redirect,
         * is sent from what is kept instead) */
        u->streaming = 1;
        reader.post_handler = stream_done;
        reader.piece = stream_piece;
        rc = rx_http_read_client_request_body(r, &reader);
        if (rc != RX_OK) {
            return rc;
        }
        rx_http_upstream_run(u);
        return RX_DONE;
    }
    /* beyond client_body_buffer_size, the body may go to a file; the
     * exchange starts when all of it is in (body_ready) */
    reader.spill = u->file_body;
    rc = rx_http_read_client_request_body(r, &reader);
    return rc == RX_OK ? RX_DONE : rc;
}
