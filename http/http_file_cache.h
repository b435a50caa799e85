/*
 * http_file_cache.h: open_file_cache's store, one per directive occurrence
 * and per worker: entries keyed by path holding an open fd (or a cached
 * error) and what statx said about the file, in LRU order, with reference
 * counts so that an fd is closed only when no request still reads from it.
 * No request logic here: http_open_file.c decides when to look up,
 * revalidate and insert.
 */
#ifndef RX_HTTP_FILE_CACHE_H
#define RX_HTTP_FILE_CACHE_H

#include "core.h"

typedef struct rx_http_file_cache_s rx_http_file_cache_t;
typedef struct rx_http_file_entry_s rx_http_file_entry_t;

struct rx_http_file_entry_s {
    rx_http_file_entry_t  *hnext;     /* hash chain */
    rx_http_file_entry_t  *prev;      /* LRU list: head is the most recent */
    rx_http_file_entry_t  *next;
    rx_http_file_cache_t  *cache;     /* NULL once detached (closed at refs 0) */
    uint32_t               hash;
    uint32_t               tag;       /* open policy (disable_symlinks) it
                                         was opened under: must match */
    char                  *key;       /* the path, NUL-terminated */
    size_t                 key_len;
    int                    fd;        /* -1: none kept (an error, or fewer
                                         uses than open_file_cache_min_uses) */
    int                    err;       /* cached errno (open_file_cache_errors) */
    const char            *failed;    /* the call that failed, for the log */
    rx_uint_t              uses;      /* lookups while cached */
    rx_uint_t              refs;      /* requests using fd */
    time_t                 validated; /* last open or statx that confirmed it */
    time_t                 accessed;  /* last lookup (inactive=) */
    /* the file as last seen */
    int64_t                size;
    time_t                 mtime;
    uint64_t               ino;
    uint64_t               dev;
    bool                   is_dir;
};

struct rx_http_file_cache_s {
    rx_uint_t              max;       /* max= entries */
    time_t                 inactive;  /* inactive= seconds */
    rx_http_file_entry_t **buckets;   /* allocated by the worker on first use */
    rx_uint_t              nbuckets;  /* a power of two */
    rx_http_file_entry_t  *head;
    rx_http_file_entry_t  *tail;
    rx_uint_t              n;         /* entries attached */
};

/* A cache with its limits; its entries are freed with pool. NULL on
 * failure. */
rx_http_file_cache_t *rx_http_file_cache_create(rx_pool_t *pool,
    rx_uint_t max, time_t inactive);

/* The entry for key (any tag), made most recent, after closing entries
 * that were not used within inactive; NULL when absent. */
rx_http_file_entry_t *rx_http_file_cache_find(rx_http_file_cache_t *c,
    const char *key, size_t len, time_t now);

/* A new entry for key (fd -1, no error), replacing any entry of that key
 * and evicting the least recently used one when max are held. NULL when
 * memory runs out. */
rx_http_file_entry_t *rx_http_file_cache_add(rx_http_file_cache_t *c,
    const char *key, size_t len, time_t now);

/* Takes e out of its cache: freed (fd closed) now, or when its last
 * reference goes. */
void rx_http_file_cache_remove(rx_http_file_entry_t *e);

/* A request uses e->fd until pool goes: RX_OK or RX_ERROR. */
rx_int_t rx_http_file_cache_ref(rx_http_file_entry_t *e, rx_pool_t *pool);

#endif /* RX_HTTP_FILE_CACHE_H */
