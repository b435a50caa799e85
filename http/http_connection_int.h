/*
 * http_connection_int.h: what http_connection.c (reading and parsing a
 * request) shares with http_conn_done.c (a request's end on its
 * connection, and the connection's timeouts).
 */
#ifndef RX_HTTP_CONNECTION_INT_H
#define RX_HTTP_CONNECTION_INT_H

#include "http.h"

static inline rx_http_core_srv_conf_t *
rx_http_conn_srv_conf(rx_http_connection_t *hc)
{
    return hc->server;
}

/* The server's own location conf (no request picked a location yet). */
static inline rx_http_core_loc_conf_t *
rx_http_conn_loc_conf(rx_http_connection_t *hc)
{
    return hc->server->ctx->loc_conf[rx_http_core_module.ctx_index];
}

static inline void
rx_http_conn_close(rx_http_connection_t *hc)
{
    rx_conn_close(hc->conn);
}

/* Moves hc to state, keeping stub_status's reading/writing counts. */
void rx_http_conn_set_state(rx_http_connection_t *hc,
    rx_http_conn_state_t state);
/* What an idle connection does not need: the input buffer and the
 * parser (a new one starts the next request). */
void rx_http_conn_release_input(rx_http_connection_t *hc);
/* Parses what is buffered: a request's header, its body, the next one. */
void rx_http_conn_process_input(rx_http_connection_t *hc);
/* The request's header is in (parsed, or handed over as fields by
 * http_request_fields.c): its phases run; false when the connection moved
 * on or closed meanwhile. Then the whole message is in (message_done):
 * a waiting body reader hears it, a finished response ends the request.
 * header_failed: the header was refused with status (logged), answered,
 * and the connection ends after it. */
bool rx_http_conn_header_done(rx_http_connection_t *hc);
void rx_http_conn_message_done(rx_http_connection_t *hc);
void rx_http_conn_header_failed(rx_http_connection_t *hc, rx_int_t status);
/* The body's owner refused it with status (logged): answered if nothing
 * was, and nothing more is read. */
void rx_http_conn_body_failed(rx_http_connection_t *hc, rx_int_t status);
/* http_conn_done.c: the request's end will close its connection at once
 * (no keep-alive, no lingering close, nothing after the response), so
 * its last send may take the close along (rx_conn_send_last). */
bool rx_http_conn_closes_at_end(rx_http_connection_t *hc,
    rx_http_request_t *r);
/* The connection's one timer, whatever its state waits for. */
void rx_http_conn_timer_handler(rx_timer_t *t);

#endif /* RX_HTTP_CONNECTION_INT_H */
