/*
 * http_upstream_stop.c: the exchange stopped from outside, when the client
 * goes (the request's abort handler) or the request's pool does (its
 * cleanup): out of the queue and the lookup, its try ended, its tunnel
 * and body buffers freed. Above the files it calls (try, queue, tunnel,
 * body), none of which calls it: only the engine's entry sets it as the
 * request's handlers and the state machine calls it when the client is
 * gone.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"

/* The client went away: the exchange stops (its memory stays until the
 * request's pool goes). */
void
rx_http_upstream_abort(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    if (u == NULL) {
        return;
    }
    rx_http_upstream_queue_remove(u);
    rx_http_upstream_lookup_cancel(u);
    rx_http_upstream_end(u);
    r->tunnel_read = NULL;
}

/* The request's pool is destroyed: nothing in flight reads its memory. */
void
rx_http_upstream_cleanup(void *data)
{
    rx_http_upstream_t *u = data;

    rx_http_upstream_abort(u->r);
    rx_http_upstream_tunnel_free(u);
    rx_http_upstream_free_body(u);
}
