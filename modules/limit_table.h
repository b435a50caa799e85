/*
 * limit_table.h: keyed records in a shared memory zone, for limit_req and
 * limit_conn: a hash table of nodes, each an owner's struct that starts
 * with rx_limit_node_t and ends with its key. Every call is made with the
 * zone locked (core/shm_zone.h).
 */
#ifndef RX_LIMIT_TABLE_H
#define RX_LIMIT_TABLE_H

#include "shm_zone.h"

typedef struct rx_limit_node_s rx_limit_node_t;

struct rx_limit_node_s {
    rx_limit_node_t  *hnext;     /* the bucket's chain */
    uint32_t          hash;
    uint16_t          len;       /* keys are at most 65535 bytes */
    uint16_t          key_off;   /* the key: at (char *) node + key_off */
};

#define rx_limit_node_key(n)  ((char *) (n) + (n)->key_off)

typedef struct {
    rx_uint_t         nbuckets;  /* a power of two */
    rx_uint_t         nodes;
    rx_limit_node_t **buckets;
} rx_limit_table_t;

/* In the zone's init: a table with a bucket for every per_bucket bytes of
 * the zone (at least 16). NULL when the zone has no room. */
rx_limit_table_t *rx_limit_table_create(rx_shm_zone_t *zone,
    size_t per_bucket);

uint32_t rx_limit_hash(const char *key, size_t len);

rx_limit_node_t *rx_limit_table_find(rx_limit_table_t *t, uint32_t hash,
    const char *key, size_t len);

/*
 * A node of node_size bytes (the owner's struct) plus the key (len at most
 * 65535), from the zone, its key copied and linked in; the owner's fields
 * are zeroed. NULL when the zone is full (nothing changed).
 */
rx_limit_node_t *rx_limit_table_insert(rx_shm_zone_t *zone,
    rx_limit_table_t *t, size_t node_size, uint32_t hash, const char *key,
    size_t len);

/* Unlinks the node and gives its memory back to the zone. */
void rx_limit_table_delete(rx_shm_zone_t *zone, rx_limit_table_t *t,
    rx_limit_node_t *node);

#endif /* RX_LIMIT_TABLE_H */
