/*
 * cache_serve.h: the cache's entry for the protocols of the upstream
 * engine (proxy.c, fastcgi.c): look up, answer a hit, or go upstream.
 */
#ifndef RX_CACHE_SERVE_H
#define RX_CACHE_SERVE_H

#include "http.h"
#include "http_cache.h"

/* The content handler's first step when the location has *_cache: a hit
 * is answered from the cache; anything else (no cache, a miss, an
 * expired entry, a method not cached) calls go, the protocol's own start
 * of the upstream exchange (also later, when a hit's file turns out to be
 * gone). Returns as a content handler does. */
rx_int_t rx_http_cache_handler(rx_http_request_t *r,
    const rx_http_cache_conf_t *conf, rx_int_t (*go)(rx_http_request_t *r));

/* The stored header ("200 OK\r\nName: value\r\n...\r\n" in [p, last))
 * into r->headers_out. RX_OK or RX_ERROR (not a header). */
rx_int_t rx_http_cache_replay_header(rx_http_request_t *r, char *p,
    char *last);

/* cache_wait.c: another request fetches this entry (fetch ctx->seq, of
 * r->cache_ctx): r waits, then reads the file as it is written, or,
 * when the fetch ends without one, looks up again or goes upstream (go).
 * Returns as a content handler does. */
rx_int_t rx_http_cache_wait(rx_http_request_t *r,
    const rx_http_cache_conf_t *conf, rx_int_t (*go)(rx_http_request_t *r));

#endif /* RX_CACHE_SERVE_H */
