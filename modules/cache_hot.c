/*
 * cache_hot.c: a worker's copies of small cache files (up to 64 KiB),
 * as open_file_cache keeps fds: a hit of a hot entry is answered from
 * memory, with no open, read or close. A copy is the entry's only while
 * the index (looked up under its lock for every request anyway) names
 * the same file: every file put in place gets a new number (node->gen),
 * so a replaced, purged or evicted entry is never answered from an old
 * copy; and a copy is read again from its file once a second, so that
 * a file removed behind ringx's back stops being served within that.
 * Copies are reference-counted: one dropped while a response is
 * sent from it is freed when that request ends.
 */
#include "http.h"
#include "cache_hot.h"
#include "clock.h"

#define HOT_BUCKETS  1024                /* a power of two */

static rx_cache_hot_t *buckets[HOT_BUCKETS];
static rx_cache_hot_t *lru_head, *lru_tail;
static size_t          total;            /* bytes of the kept copies */

static rx_uint_t
bucket(const uint8_t md5[16])
{
    return ((rx_uint_t) md5[0] | (rx_uint_t) md5[1] << 8) & (HOT_BUCKETS - 1);
}

static void
unref(rx_cache_hot_t *h)
{
    if (--h->refs == 0) {
        free(h);
    }
}

static void
release(void *data)
{
    unref(data);
}

static void
lru_unlink(rx_cache_hot_t *h)
{
    if (h->prev) h->prev->next = h->next; else lru_head = h->next;
    if (h->next) h->next->prev = h->prev; else lru_tail = h->prev;
    h->prev = h->next = NULL;
}

static void
lru_front(rx_cache_hot_t *h)
{
    h->next = lru_head;
    h->prev = NULL;
    if (lru_head) lru_head->prev = h; else lru_tail = h;
    lru_head = h;
}

/* Out of the table (freed now, or when its last request ends). */
static void
drop(rx_cache_hot_t *h)
{
    rx_cache_hot_t **pp = &buckets[bucket(h->md5)];

    while (*pp != h) {
        pp = &(*pp)->hnext;
    }
    *pp = h->hnext;
    lru_unlink(h);
    total -= h->len;
    h->kept = false;
    unref(h);
}

/* r holds h until its pool goes. */
static bool
hold(rx_http_request_t *r, rx_cache_hot_t *h)
{
    rx_pool_cleanup_t *cln = rx_pool_cleanup_add(r->pool, 0);

    if (cln == NULL) {
        return false;
    }
    h->refs++;
    cln->handler = release;
    cln->data = h;
    return true;
}

static rx_cache_hot_t *
find(const void *cache, const uint8_t md5[16])
{
    rx_cache_hot_t *h;

    for (h = buckets[bucket(md5)]; h; h = h->hnext) {
        if (h->cache == cache && memcmp(h->md5, md5, 16) == 0) {
            return h;
        }
    }
    return NULL;
}

rx_cache_hot_t *
rx_cache_hot_find(rx_http_request_t *r, const void *cache,
    const uint8_t md5[16], uint64_t gen)
{
    rx_cache_hot_t *h = find(cache, md5);

    if (h == NULL) {
        return NULL;
    }
    if (h->gen != gen
        || rx_current_msec - h->kept_at >= RX_CACHE_HOT_VALID_MS)
    {
        drop(h);     /* the entry has another file now, or the copy is
                      * old enough that its file is read again */
        return NULL;
    }
    if (!hold(r, h)) {
        return NULL;
    }
    lru_unlink(h);
    lru_front(h);
    return h;
}

rx_cache_hot_t *
rx_cache_hot_new(rx_http_request_t *r, size_t len)
{
    rx_cache_hot_t *h;

    if (len > RX_CACHE_HOT_MAX_FILE) {
        return NULL;
    }
    h = malloc(sizeof(*h) + len);
    if (h == NULL) {
        return NULL;
    }
    memset(h, 0, sizeof(*h));
    h->len = len;
    if (!hold(r, h)) {
        free(h);
        return NULL;
    }
    return h;
}

void
rx_cache_hot_keep(rx_cache_hot_t *h, const void *cache,
    const uint8_t md5[16], uint64_t gen)
{
    rx_cache_hot_t *old;

    if (h->kept || gen == 0) {
        return;
    }
    if ((old = find(cache, md5)) != NULL) {
        drop(old);
    }
    while (lru_tail && total + h->len > RX_CACHE_HOT_MAX_BYTES) {
        drop(lru_tail);
    }
    h->cache = cache;
    memcpy(h->md5, md5, 16);
    h->gen = gen;
    h->kept = true;
    h->kept_at = rx_current_msec;
    h->refs++;
    h->hnext = buckets[bucket(md5)];
    buckets[bucket(md5)] = h;
    lru_front(h);
    total += h->len;
}
