/*
 * http_file_cache.c: open_file_cache's store: a hash of entries by path,
 * an LRU list bounded by max=, lazy expiry of entries unused for
 * inactive=, and reference counts that keep an fd open while requests
 * still read from it after its entry was replaced or evicted.
 *
 * The configuration creates the cache (in the master, empty); each worker
 * fills its own copy after fork, so nothing is shared and nothing locks.
 */
#include "http_file_cache.h"

#define EXPIRE_PER_CALL  16      /* bounds the close() calls of one lookup */
#define MAX_BUCKETS      65536

static void
entry_free(rx_http_file_entry_t *e)
{
    if (e->fd != -1) {
        close(e->fd);
    }
    free(e);
}

static void
lru_unlink(rx_http_file_cache_t *c, rx_http_file_entry_t *e)
{
    if (e->prev) e->prev->next = e->next; else c->head = e->next;
    if (e->next) e->next->prev = e->prev; else c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void
lru_push(rx_http_file_cache_t *c, rx_http_file_entry_t *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head) c->head->prev = e; else c->tail = e;
    c->head = e;
}

void
rx_http_file_cache_remove(rx_http_file_entry_t *e)
{
    rx_http_file_cache_t  *c = e->cache;
    rx_http_file_entry_t **pp;

    if (c) {
        for (pp = &c->buckets[e->hash & (c->nbuckets - 1)]; *pp;
             pp = &(*pp)->hnext) {
            if (*pp == e) {
                *pp = e->hnext;
                break;
            }
        }
        lru_unlink(c, e);
        c->n--;
        e->cache = NULL;
    }
    if (e->refs == 0) {
        entry_free(e);
    }
}

static void
release(void *data)
{
    rx_http_file_entry_t *e = data;

    if (--e->refs == 0 && e->cache == NULL) {
        entry_free(e);
    }
}

rx_int_t
rx_http_file_cache_ref(rx_http_file_entry_t *e, rx_pool_t *pool)
{
    rx_pool_cleanup_t *cln = rx_pool_cleanup_add(pool, 0);

    if (cln == NULL) {
        return RX_ERROR;
    }
    e->refs++;
    cln->handler = release;
    cln->data = e;
    return RX_OK;
}

/* Pool cleanup of the configuration: in a worker, the entries it made. */
static void
cache_free(void *data)
{
    rx_http_file_cache_t *c = data;

    while (c->head) {
        rx_http_file_cache_remove(c->head);
    }
    free(c->buckets);
    c->buckets = NULL;
}

rx_http_file_cache_t *
rx_http_file_cache_create(rx_pool_t *pool, rx_uint_t max, time_t inactive)
{
    rx_http_file_cache_t *c = rx_pcalloc(pool, sizeof(*c));
    rx_pool_cleanup_t    *cln = rx_pool_cleanup_add(pool, 0);

    if (c == NULL || cln == NULL) {
        return NULL;
    }
    c->max = max;
    c->inactive = inactive;
    c->nbuckets = 16;
    while (c->nbuckets < max && c->nbuckets < MAX_BUCKETS) {
        c->nbuckets <<= 1;
    }
    cln->handler = cache_free;
    cln->data = c;
    return c;
}

static uint32_t
hash_key(const char *key, size_t len)
{
    uint32_t h = 2166136261u;                   /* FNV-1a */

    while (len--) {
        h = (h ^ (unsigned char) *key++) * 16777619u;
    }
    return h;
}

/* Closes entries at the cold end that nobody looked up within inactive. */
static void
expire(rx_http_file_cache_t *c, time_t now)
{
    rx_uint_t n = EXPIRE_PER_CALL;

    while (n-- && c->tail && now - c->tail->accessed >= c->inactive) {
        rx_http_file_cache_remove(c->tail);
    }
}

rx_http_file_entry_t *
rx_http_file_cache_find(rx_http_file_cache_t *c, const char *key, size_t len,
    time_t now)
{
    rx_http_file_entry_t *e;
    uint32_t              h;

    if (c->buckets == NULL) {
        return NULL;
    }
    expire(c, now);
    h = hash_key(key, len);
    for (e = c->buckets[h & (c->nbuckets - 1)]; e; e = e->hnext) {
        if (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0) {
            lru_unlink(c, e);
            lru_push(c, e);
            e->accessed = now;
            return e;
        }
    }
    return NULL;
}

rx_http_file_entry_t *
rx_http_file_cache_add(rx_http_file_cache_t *c, const char *key, size_t len,
    time_t now)
{
    rx_http_file_entry_t *e, *old;

    if (c->buckets == NULL) {
        c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
        if (c->buckets == NULL) {
            return NULL;
        }
    }
    old = rx_http_file_cache_find(c, key, len, now);
    if (old) {
        rx_http_file_cache_remove(old);
    }
    while (c->n >= c->max && c->tail) {
        rx_http_file_cache_remove(c->tail);
    }
    e = calloc(1, sizeof(*e) + len + 1);
    if (e == NULL) {
        return NULL;
    }
    e->key = (char *) (e + 1);
    memcpy(e->key, key, len);
    e->key_len = len;
    e->hash = hash_key(key, len);
    e->fd = -1;
    e->accessed = e->validated = now;
    e->cache = c;
    e->hnext = c->buckets[e->hash & (c->nbuckets - 1)];
    c->buckets[e->hash & (c->nbuckets - 1)] = e;
    lru_push(c, e);
    c->n++;
    return e;
}
