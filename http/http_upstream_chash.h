/*
 * http_upstream_chash.h: the ring of `hash key consistent` (ketama): each
 * server line gets 160 points per unit of weight, placed by the CRC-32 of
 * its name as written, so that adding or removing a server moves only the
 * keys between its points and their neighbours (about 1/N of them).
 */
#ifndef RX_HTTP_UPSTREAM_CHASH_H
#define RX_HTTP_UPSTREAM_CHASH_H

#include "http_upstream_int.h"

#define RX_HTTP_UPSTREAM_CHASH_POINTS  160     /* per unit of weight */

typedef struct {
    uint32_t   hash;
    rx_uint_t  server;          /* index in the servers given to init */
} rx_http_upstream_chash_point_t;

typedef struct {
    rx_http_upstream_chash_point_t  *point;     /* sorted by hash, unique */
    rx_uint_t                        n;
} rx_http_upstream_chash_t;

/* Builds the ring of servers[0 .. n-1] (each server's name and weight) in
 * pool. Points are those of nginx for the same names ("host\0port" hashed,
 * then each point the CRC of the previous one; "unix:" names hash the path
 * with an empty port; a name without a port has port 80), so keys land on
 * the same servers as with nginx. Of points with the same hash only the
 * first is kept. Returns RX_OK or RX_ERROR (memory). */
rx_int_t rx_http_upstream_chash_init(rx_pool_t *pool,
    rx_http_upstream_chash_t *ring, const rx_http_upstream_server_t *servers,
    rx_uint_t n);

/* The index of the first point whose hash is >= hash, wrapping to 0 past
 * the last (binary search). The ring must not be empty. */
rx_uint_t rx_http_upstream_chash_find(const rx_http_upstream_chash_t *ring,
    uint32_t hash);

#endif /* RX_HTTP_UPSTREAM_CHASH_H */
