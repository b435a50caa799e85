/*
 * cache_hot.h: a worker's copies of small cache files (cache_hot.c), so
 * that a hit of a hot entry needs no file operation.
 */
#ifndef RX_CACHE_HOT_H
#define RX_CACHE_HOT_H

#include "http.h"

/* The largest file copied (its whole read is cache_serve.c's WHOLE_READ)
 * and the most bytes of copies a worker keeps, least recently used out. */
#define RX_CACHE_HOT_MAX_FILE   (64 * 1024)
#define RX_CACHE_HOT_MAX_BYTES  (8 * 1024 * 1024)
/* How long a copy answers without the file being opened again: a file
 * removed or changed behind ringx's back (an operator's rm of the cache
 * tree) is noticed within this, as open_file_cache_valid does for fds. */
#define RX_CACHE_HOT_VALID_MS   1000

typedef struct rx_cache_hot_s rx_cache_hot_t;

struct rx_cache_hot_s {
    rx_cache_hot_t  *hnext;          /* the bucket's chain */
    rx_cache_hot_t  *prev;           /* LRU: the head is the most recent */
    rx_cache_hot_t  *next;
    const void      *cache;          /* rx_http_cache_t *, with md5: */
    uint8_t          md5[16];        /* the entry */
    uint64_t         gen;            /* the file (the index's node->gen) */
    unsigned         refs;           /* requests sending from it, and 1
                                        while it is in the table */
    bool             kept;           /* in the table */
    rx_msec_t        kept_at;        /* rx_current_msec when read */
    size_t           len;
    char             data[];         /* the whole file */
};

/* The copy of entry (cache, md5) when it is the file gen (a copy of
 * another file is dropped); r holds it until its pool goes (the response
 * is sent from it). NULL: none. */
rx_cache_hot_t *rx_cache_hot_find(rx_http_request_t *r, const void *cache,
    const uint8_t md5[16], uint64_t gen);
/* A buffer for a whole file of len bytes, held by r like a found copy;
 * NULL when len is too large (or no memory): read into r's pool. */
rx_cache_hot_t *rx_cache_hot_new(rx_http_request_t *r, size_t len);
/* h holds the whole file gen of (cache, md5), checked: later hits of
 * the same file are answered from it (it replaces an older copy). */
void rx_cache_hot_keep(rx_cache_hot_t *h, const void *cache,
    const uint8_t md5[16], uint64_t gen);

#endif /* RX_CACHE_HOT_H */
