/*
 * limit_table.c: the keyed records of limit_req and limit_conn in a shared
 * memory zone (limit_table.h): chained hashing by FNV-1a.
 */
#include "core.h"
#include "limit_table.h"

rx_limit_table_t *
rx_limit_table_create(rx_shm_zone_t *zone, size_t per_bucket)
{
    rx_limit_table_t *t;
    rx_uint_t         n = 16;

    while (n * 2 * per_bucket <= zone->size) {
        n *= 2;
    }
    t = rx_shm_zone_alloc_locked(zone, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    t->buckets = rx_shm_zone_alloc_locked(zone, n * sizeof(void *));
    if (t->buckets == NULL) {
        rx_shm_zone_free_locked(zone, t);
        return NULL;
    }
    memset(t->buckets, 0, n * sizeof(void *));
    t->nbuckets = n;
    t->nodes = 0;
    return t;
}

uint32_t
rx_limit_hash(const char *key, size_t len)
{
    uint32_t h = 2166136261u;
    size_t   i;

    for (i = 0; i < len; i++) {
        h = (h ^ (unsigned char) key[i]) * 16777619u;
    }
    return h;
}

rx_limit_node_t *
rx_limit_table_find(rx_limit_table_t *t, uint32_t hash, const char *key,
    size_t len)
{
    rx_limit_node_t *n = t->buckets[hash & (t->nbuckets - 1)];

    for ( ; n; n = n->hnext) {
        if (n->hash == hash && n->len == len
            && memcmp(rx_limit_node_key(n), key, len) == 0) {
            return n;
        }
    }
    return NULL;
}

rx_limit_node_t *
rx_limit_table_insert(rx_shm_zone_t *zone, rx_limit_table_t *t,
    size_t node_size, uint32_t hash, const char *key, size_t len)
{
    rx_limit_node_t **bucket = &t->buckets[hash & (t->nbuckets - 1)];
    rx_limit_node_t  *n;

    if (len > UINT16_MAX || node_size > UINT16_MAX) {
        return NULL;
    }
    n = rx_shm_zone_alloc_locked(zone, node_size + len);
    if (n == NULL) {
        return NULL;
    }
    memset(n, 0, node_size);
    n->key_off = (uint16_t) node_size;
    memcpy(rx_limit_node_key(n), key, len);
    n->hash = hash;
    n->len = (uint16_t) len;
    n->hnext = *bucket;
    *bucket = n;
    t->nodes++;
    return n;
}

void
rx_limit_table_delete(rx_shm_zone_t *zone, rx_limit_table_t *t,
    rx_limit_node_t *node)
{
    rx_limit_node_t **l = &t->buckets[node->hash & (t->nbuckets - 1)];

    while (*l && *l != node) {
        l = &(*l)->hnext;
    }
    if (*l) {
        *l = node->hnext;
        t->nodes--;
    }
    rx_shm_zone_free_locked(zone, node);
}
