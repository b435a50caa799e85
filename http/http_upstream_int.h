/*
 * http_upstream_int.h: what the files of the upstream engine share among
 * themselves (http_upstream.c, http_upstream_body.c,
 * http_upstream_tunnel.c). Protocols use http_upstream.h only.
 */
#ifndef RX_HTTP_UPSTREAM_INT_H
#define RX_HTTP_UPSTREAM_INT_H

#include "http_upstream.h"

/* http_upstream.c */
void rx_http_upstream_drop_connection(rx_http_upstream_t *u);
void rx_http_upstream_release_peer(rx_http_upstream_t *u, bool failed);
void rx_http_upstream_end_state(rx_http_upstream_t *u);
void rx_http_upstream_log_error(rx_http_upstream_t *u, unsigned level, int err,
    const char *msg);

/* A request from the queue tries again; one that gave up gets status. */
void rx_http_upstream_queue_resume(rx_http_upstream_t *u);
void rx_http_upstream_queue_failed(rx_http_upstream_t *u, rx_int_t status);

/* The lookup of a host named at run time ended (http_upstream_resolve.c
 * calls it): 0, u->us set, or the status to answer with. */
void rx_http_upstream_lookup_done(rx_http_upstream_t *u, rx_int_t status);

/* http_upstream_resolve.c: RX_OK (u->us set), RX_AGAIN (waits: the
 * answer comes to rx_http_upstream_lookup_done) or a status. */
rx_int_t rx_http_upstream_lookup_start(rx_http_upstream_t *u);
void rx_http_upstream_lookup_cancel(rx_http_upstream_t *u);

/* http_upstream_body.c */
rx_int_t rx_http_upstream_emit_slice(rx_http_upstream_t *u);
/* Hands what was buffered to the client; stops or spills when every
 * buffer is in use. */
rx_int_t rx_http_upstream_flush(rx_http_upstream_t *u);
rx_int_t rx_http_upstream_write_handler(rx_http_request_t *r);
/* The body is complete: the connection is released, the response ends
 * (after what a temporary file still holds). */
void rx_http_upstream_finish_body(rx_http_upstream_t *u);
/* The body broke after the header went out: the client connection closes. */
void rx_http_upstream_cut_body(rx_http_upstream_t *u, const char *reason,
    int err);
/* The request's pool goes: the temporary file and its buffers too. */
void rx_http_upstream_free_body(rx_http_upstream_t *u);
/* A new try: nothing buffered by an earlier one is kept. */
void rx_http_upstream_reset_body(rx_http_upstream_t *u);

/* http_upstream_tunnel.c */
void rx_http_upstream_start_tunnel(rx_http_upstream_t *u);
/* The client-to-upstream byte queue (tunnels, streamed request bodies). */
bool rx_http_upstream_out_send(rx_http_upstream_t *u);
void rx_http_upstream_out_sent(rx_http_upstream_t *u, ssize_t res);
void rx_http_upstream_end_tunnel(rx_http_upstream_t *u);
void rx_http_upstream_tunnel_free(rx_http_upstream_t *u);

#endif /* RX_HTTP_UPSTREAM_INT_H */
