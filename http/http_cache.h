/*
 * http_cache.h: proxy_cache and fastcgi_cache: responses of the upstream
 * engine kept on disk under *_cache_path, indexed by a keys zone in shared
 * memory, and served again to requests with the same *_cache_key.
 *
 * The parts: http_cache.c (the cache of one *_cache_path: its zone, the
 * index in it, its files' names, the loader that rebuilds the index at
 * start, the marks of unlinks in flight), http_cache_conf.c (the
 * directives, one table for every protocol, and $upstream_cache_status), http_cache_store.c (whether a
 * response may be stored and for how long, and the file written through
 * the ring while the response streams to the client). Hits are answered
 * by modules/cache_serve.c (the file opened and read through the ring,
 * its body sent by the static module's zero-copy path; a small file kept
 * by the worker, modules/cache_hot.c, answered with no file operation).
 *
 * A cache file: a fixed head (rx_http_cache_head_t), the key, the
 * response header as text ("200 OK\r\nName: value\r\n...\r\n"), then the
 * body. A new version is written under a temporary name in the cache's
 * own directory and renamed over the old one once complete, so a reader
 * sees one version whole or none.
 */
#ifndef RX_HTTP_CACHE_H
#define RX_HTTP_CACHE_H

#include "http.h"
#include "http_script.h"
#include "shm_zone.h"

/* $upstream_cache_status (r->cache_status). */
typedef enum {
    RX_HTTP_CACHE_NONE = 0,
    RX_HTTP_CACHE_MISS,
    RX_HTTP_CACHE_BYPASS,
    RX_HTTP_CACHE_EXPIRED,
    RX_HTTP_CACHE_STALE,
    RX_HTTP_CACHE_UPDATING,
    RX_HTTP_CACHE_REVALIDATED,
    RX_HTTP_CACHE_HIT
} rx_http_cache_status_e;

#define RX_HTTP_CACHE_MAGIC      "RXCACHE3"
/* *_cache_use_stale updating (beside the RX_HTTP_UPSTREAM_FT_* bits) */
#define RX_HTTP_CACHE_STALE_UPDATING  0x10000
#define RX_HTTP_CACHE_VARY_LEN   48     /* the Vary names kept per entry */

/* The head of a cache file (host byte order: the files are this
 * machine's). */
typedef struct {
    char        magic[8];
    uint8_t     md5[16];         /* of the key */
    int64_t     valid_until;     /* seconds since the epoch */
    int64_t     stored;          /* when it was written */
    int64_t     body_len;
    uint32_t    body_start;      /* head + key + header text */
    uint32_t    key_len;
    uint32_t    vary_hash;       /* of the request's Vary headers */
    uint16_t    status;
    uint16_t    pad;
    char        vary[RX_HTTP_CACHE_VARY_LEN];  /* names, NUL-terminated */
    int32_t     swr;             /* Cache-Control stale-while-revalidate */
    int32_t     sie;             /* ... stale-if-error (seconds; 0: none) */
    int64_t     last_modified;   /* the response's validators, for */
    char        etag[48];        /* *_cache_revalidate (-1, "": none) */
} rx_http_cache_head_t;

/* One *_cache_path: made by the directive, zone->data. */
typedef struct {
    rx_str_t        path;            /* absolute, NUL-terminated, no '/' at
                                        the end */
    rx_uint_t       levels[3];       /* 0 ends the list */
    time_t          inactive;        /* seconds */
    int64_t         max_size;        /* bytes of files; 0: no bound */
    rx_shm_zone_t  *zone;
    const char     *directive;       /* "proxy_cache_path" */
} rx_http_cache_t;

/* An entry of the index, in the zone. */
typedef struct rx_http_cache_node_s rx_http_cache_node_t;
struct rx_http_cache_node_s {
    rx_http_cache_node_t  *hnext;
    rx_http_cache_node_t  *prev;         /* LRU: head is the most recent */
    rx_http_cache_node_t  *next;
    uint8_t                md5[16];
    int64_t                valid_until;
    time_t                 accessed;
    int64_t                fsize;        /* 0: no file (being written) */
    uint32_t               vary_hash;
    char                   vary[RX_HTTP_CACHE_VARY_LEN];
    rx_uint_t              uses;         /* fetches asked for (min_uses) */
    int32_t                swr;          /* the file's head's */
    int32_t                sie;
    uint16_t               status;
    int64_t                last_modified;
    char                   etag[48];
    /* One request (in any worker) fetches a missing or expired entry;
     * the others wait for it and read its file as it is written. */
    unsigned               updating:1;
    unsigned               last_pass:1;  /* fetch seq ended: not stored */
    unsigned               last_stored:1; /* fetch seq ended: its file is
                                            the entry's now */
    uint32_t               seq;          /* the fetch (updating) or the last */
    pid_t                  pid;          /* the fetching worker */
    char                   tmp[12];      /* its file's name ("" until open) */
    uint32_t               body_start;   /* of that file, once known */
    int64_t                clen;         /* the upstream's length; -1 */
    int64_t                written;      /* bytes of it in the file */
    /* which file: every file put in place (a store, the loader) gets the
     * zone's next number, so a worker's copy of a file (cache_hot.c) is
     * the entry's as long as this is the same */
    uint64_t               gen;
};

/* What a lookup found (copied out of the zone under its lock). */
typedef struct {
    bool        found;           /* a file is there */
    int64_t     valid_until;
    int64_t     fsize;
    uint32_t    vary_hash;
    char        vary[RX_HTTP_CACHE_VARY_LEN];
    int32_t     swr;
    int32_t     sie;
    uint16_t    status;
    int64_t     last_modified;
    char        etag[48];
    bool        exists;          /* a node (maybe without a file) */
    bool        updating;        /* a fetch runs ... */
    bool        claimed;         /* ... and it is this request's */
    rx_uint_t   uses;
    bool        last_pass;       /* the fetch seq ended without storing */
    bool        last_stored;     /* the fetch seq's file is in place */
    uint32_t    seq;
    char        tmp[12];
    uint32_t    body_start;
    int64_t     clen;
    int64_t     written;
    uint64_t    gen;             /* the file's (node->gen) */
} rx_http_cache_entry_t;

typedef struct {
    rx_uint_t   status;          /* 0: any */
    time_t      valid;           /* seconds; 0: not cached */
} rx_http_cache_valid_t;

/* A cache's figures (the metrics): what its requests were, summed over
 * the workers in its zone; entries and bytes now. */
#define RX_HTTP_CACHE_STATUSES  8       /* rx_http_cache_status_e */
typedef struct {
    int64_t     responses[RX_HTTP_CACHE_STATUSES];
    int64_t     entries;
    int64_t     bytes;
    int64_t     max_size;               /* 0: none */
} rx_http_cache_stats_t;

/* A location's settings (inside rx_http_upstream_conf_t). */
typedef struct {
    rx_shm_zone_t           *zone;     /* NULL: off; UNSET_PTR: unset */
    rx_http_complex_value_t *key;      /* UNSET_PTR: unset */
    rx_array_t              *valid;    /* rx_http_cache_valid_t; UNSET_PTR */
    rx_int_t                 lock;     /* coalesce concurrent misses */
    rx_array_t              *bypass;   /* rx_http_complex_value_t; UNSET_PTR */
    rx_array_t              *no_cache; /* the same */
    rx_uint_t                use_stale; /* FT_* | STALE_UPDATING; 0 unset */
    rx_uint_t                methods;  /* RX_HTTP_GET ... ; 0 unset */
    rx_int_t                 convert_head;
    rx_int_t                 min_uses;
    rx_array_t              *purge;    /* rx_http_complex_value_t; UNSET_PTR */
    rx_int_t                 revalidate;
    rx_int_t                 background_update;
} rx_http_cache_conf_t;

/* A request's dealings with the cache (r->cache_ctx). */
typedef struct rx_http_cache_req_s {
    rx_http_cache_t         *cache;
    const rx_http_cache_conf_t *conf;
    rx_str_t                 key;
    uint8_t                  md5[16];
    char                    *file;       /* the entry's path */
    rx_http_cache_entry_t    entry;      /* what the lookup found */
    struct rx_http_cache_store_s *store; /* a response being written */
    bool                     claimed;    /* this request fetches for all */
    bool                     head_as_get; /* *_cache_convert_head */
    bool                     decided;    /* the store said yes or no */
    bool                     revalidating; /* the fetch asks "modified?" */
    bool                     refreshed;  /* ... and the answer was no */
    /* ... valid until then (0: no new time): the file's head learns it
     * when the serve opens it (cache_serve.c), so a restart keeps it */
    int64_t                  refreshed_until;
    bool                     head_written;
    ssize_t                  head_res;   /* the head's read, meanwhile */
    /* *_cache_background_update: r is answered from the expired copy
     * (STALE), then fetches the entry with its output dropped */
    bool                     background;
    rx_uint_t                uses;       /* requests of the entry so far */
    /* body bytes the protocol's parser handed over with the header, before
     * the store could decide (every try's, the last try's at the end) */
    char                    *early;
    size_t                   early_len;
    size_t                   early_cap;
    uint32_t                 seq;        /* the fetch it runs or waits for */
    /* a hit being served (modules/cache_serve.c) */
    int                      fd;
    char                    *head_buf;
    size_t                   head_size;
    void                    *hot;        /* head_buf's copy (cache_hot.h) */
    rx_int_t               (*miss)(rx_http_request_t *r);  /* go upstream */
    /* answers r from ctx->file (modules/cache_serve.c's): for a stale
     * copy standing in for a failed fetch */
    rx_int_t               (*serve)(rx_http_request_t *r);
} rx_http_cache_req_t;

/* http_cache.c: the index. Each returns after unlocking. */
rx_http_cache_t *rx_http_cache_of(rx_shm_zone_t *zone);
/* Finds md5 into *e (found false: no file); touches the entry. An entry
 * unused for longer than inactive is dropped with its file; a fetch whose
 * worker is gone no longer counts. */
rx_int_t rx_http_cache_lookup(rx_http_cache_t *cache, const uint8_t md5[16],
    rx_http_cache_entry_t *e, rx_log_t *log);
/* For a request that would fetch md5: when nobody fetches it, this one
 * does (e->claimed; the entry is made if missing); else e->updating and
 * e->seq say which fetch to wait for. RX_OK or RX_ERROR (the zone is
 * full or unusable: fetch without the cache's help). */
rx_int_t rx_http_cache_claim(rx_http_cache_t *cache, const uint8_t md5[16],
    rx_http_cache_entry_t *e, rx_log_t *log);
/* Records a file just put in place (creating the entry, evicting the
 * least recently used ones when the zone is full); ends fetch seq. */
rx_int_t rx_http_cache_insert(rx_http_cache_t *cache,
    const rx_http_cache_head_t *h, int64_t fsize, uint32_t seq, rx_log_t *log);
/* The fetch seq's file, for its waiters: its name and what is in it. */
void rx_http_cache_progress(rx_http_cache_t *cache, const uint8_t md5[16],
    uint32_t seq, const char *tmp, uint32_t body_start, int64_t clen,
    int64_t written);
/* The fetch seq ends without a file: pass (the response was not one to
 * store: its waiters go upstream each) or failed (the next of them
 * fetches). */
void rx_http_cache_release(rx_http_cache_t *cache, const uint8_t md5[16],
    uint32_t seq, bool pass);
/* Forgets md5 (a file found missing or broken). */
void rx_http_cache_forget(rx_http_cache_t *cache, const uint8_t md5[16]);
/* The fetch seq found the file still good (a 304 to a revalidation): it
 * is valid until valid_until, and the fetch ends as if it stored it. */
void rx_http_cache_refresh(rx_http_cache_t *cache, const uint8_t md5[16],
    uint32_t seq, int64_t valid_until);
/* Removes md5's entry and file (*_cache_purge); a fetch under way goes on
 * and stores the new response. True when there was a file. */
bool rx_http_cache_remove(rx_http_cache_t *cache, const uint8_t md5[16]);
/* The path of the entry md5 in the cache (levels applied), from pool. */
char *rx_http_cache_file_name(rx_pool_t *pool, const rx_http_cache_t *cache,
    const uint8_t md5[16]);
/* http_cache_unlink.c: removes a cache file without waiting for it (on
 * the ring in a worker; directly in the master's loader, or when a worker
 * has no free slot). True: on the ring, and done (when given) is called
 * with data and md5 once it completed. */
typedef void (*rx_http_cache_unlinked_pt)(void *data, const uint8_t md5[16]);
bool rx_http_cache_unlink(const char *file, rx_http_cache_unlinked_pt done,
    void *data, const uint8_t *md5);
/* http_cache.c: the marks of entries' unlinks in flight (any worker's): a
 * completion clears its own (a done hook of http_cache.c's); a store asks
 * before renaming into place
 * (true: an old file's unlink of that name is pending, wait). */
bool rx_http_cache_unlinking(rx_http_cache_t *cache, const uint8_t md5[16]);
/* Counts a request's final $upstream_cache_status in its cache. */
void rx_http_cache_count(rx_http_cache_t *cache, rx_uint_t status);
/* The figures of the cache of zone (false: not a cache's zone, or no
 * mapping); its statuses' names for labels. */
bool rx_http_cache_stats(rx_shm_zone_t *zone, rx_http_cache_stats_t *out);
extern const char *const rx_http_cache_status_names[RX_HTTP_CACHE_STATUSES];
/* The zone's init hook (the loader): see http_cache.c. */
rx_int_t rx_http_cache_init_zone(rx_shm_zone_t *zone, void *old);
/* The hash of the request headers named in vary ("accept-encoding,
 * cookie"), as stored with an entry. */
uint32_t rx_http_cache_vary_hash(rx_http_request_t *r, const char *vary);

/* http_cache_conf.c */
void rx_http_cache_init_conf(rx_http_cache_conf_t *conf);
/* module: "proxy" (its default key), "fastcgi" (a key must be given). */
const char *rx_http_cache_merge_conf(rx_conf_t *cf, rx_http_cache_conf_t *conf,
    const rx_http_cache_conf_t *prev, const char *module);
const char *rx_http_cache_set_path(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_cache_set_zone(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_cache_set_key(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_cache_set_valid(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
const char *rx_http_cache_set_refused(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
/* *_cache_bypass, *_no_cache: strings with variables (cmd->offset: an
 * rx_array_t * of rx_http_complex_value_t); several lines add up. */
const char *rx_http_cache_set_predicates(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
/* One of them is neither empty nor "0" for r (http_cache_policy.c: asked by the
 * lookup and by the store, neither of which calls the other for it). */
bool rx_http_cache_test_predicates(rx_http_request_t *r,
    const rx_array_t *list);
rx_int_t rx_http_cache_add_variables(rx_conf_t *cf);
/*
 * Before the upstream: RX_DECLINED when the location does not cache this
 * request (the caller goes upstream as always); RX_OK with r->cache_ctx
 * set and r->cache_status MISS or EXPIRED (go upstream; the response is
 * stored when ctx->claimed and it may be), or HIT (answer from ctx->file:
 * modules/cache_serve.c); RX_AGAIN: another request fetches this entry
 * (fetch ctx->seq): wait for it (modules/cache_wait.c). RX_ERROR: out of
 * memory.
 */
rx_int_t rx_http_cache_begin(rx_http_request_t *r,
    const rx_http_cache_conf_t *conf);

/*
 * The upstream engine is about to answer r with status rc (the fetch
 * failed: 502, 504, or the upstream's own error status): when the
 * location's *_cache_use_stale, or the stored response's stale-if-error,
 * lets the expired copy stand in, r is answered from it (STALE) and true
 * is returned; the engine has let go of the upstream already.
 */
bool rx_http_cache_stale(rx_http_request_t *r, rx_int_t rc);
/* The same question, without answering r; status: rc is the upstream's
 * own status (not the engine's 502/504 for a failure). */
bool rx_http_cache_stale_allowed(rx_http_request_t *r, rx_int_t rc,
    bool status);
extern const rx_conf_enum_t rx_http_cache_use_stale_masks[];

struct rx_http_upstream_s;

/* *_cache_purge: RX_DECLINED when r is not a purge; else the status to
 * answer with: 204 (the entry was removed), 404 (there was none), 500. */
rx_int_t rx_http_cache_purge(rx_http_request_t *r,
    const rx_http_cache_conf_t *conf);

/* *_cache_revalidate: the conditions the protocol sends instead of the
 * client's (which the cache hid): If-None-Match (inm) and
 * If-Modified-Since (ims), each empty when the entry has no such
 * validator. False: not a revalidation. */
bool rx_http_cache_conditions(rx_http_request_t *r, rx_str_t *inm,
    rx_str_t *ims);
/* The upstream answered a revalidation with 304: the entry is refreshed
 * and r will be answered from it (REVALIDATED) when the engine ends. */
bool rx_http_cache_revalidated(struct rx_http_upstream_s *u);

/* The protocol sends this HEAD upstream as a GET (*_cache_convert_head):
 * its response is stored, the client gets its header. */
bool rx_http_cache_head_as_get(rx_http_request_t *r);
extern const rx_conf_enum_t rx_http_cache_methods_masks[];

/* http_cache_store.c: called by the upstream engine (http_upstream*.c). */
struct rx_http_upstream_s;
/* The header went to the client: start storing the response when its
 * status and headers allow. */
void rx_http_cache_store_start(struct rx_http_upstream_s *u);
/* http_cache_policy.c: how long a response may be kept (0: not at all;
 * its stale-* windows set in head), whether it may be stored (Set-Cookie,
 * Vary: head->vary set), and its validators put in head. */
time_t rx_http_cache_validity(struct rx_http_upstream_s *u,
    const rx_http_cache_conf_t *conf, rx_http_cache_head_t *head);
bool rx_http_cache_storable(struct rx_http_upstream_s *u,
    rx_http_cache_head_t *head);
void rx_http_cache_validators(struct rx_http_upstream_s *u,
    rx_http_cache_head_t *head);
/* Body bytes as the client gets them. */
void rx_http_cache_store_body(struct rx_http_upstream_s *u, const char *data,
    size_t len);
/* The body is complete: RX_OK (nothing to wait for) or RX_AGAIN (the
 * file's last write runs; done is called once it is in place). */
rx_int_t rx_http_cache_store_end(struct rx_http_upstream_s *u,
    void (*done)(struct rx_http_upstream_s *u));
/* The response is being written into the cache (and nothing failed). */
bool rx_http_cache_storing(struct rx_http_upstream_s *u);
/* The response broke or the request ended first: the file is dropped. */
void rx_http_cache_store_abort(rx_http_request_t *r);

/*
 * The directives, shared by every protocol of the upstream engine, as
 * RX_HTTP_UPSTREAM_COMMANDS is: p is the prefix ("proxy_"), up the offset
 * of the protocol's rx_http_upstream_conf_t in its location conf, cache
 * the offset of the rx_http_cache_conf_t inside it.
 */
#define RX_HTTP_CACHE_CMD(p, name, ctx, arity, set, off)                     \
    { p name, (ctx) | (arity), set, RX_HTTP_LOC_CONF_OFFSET, off, NULL }
#define RX_HTTP_CACHE_CMDP(p, name, ctx, arity, set, off, post)              \
    { p name, (ctx) | (arity), set, RX_HTTP_LOC_CONF_OFFSET, off, post }
#define RX_HTTP_CACHE_LOC  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)
#define RX_HTTP_CACHE_NOTICE(p, name, why)                                   \
    { p name, RX_HTTP_CACHE_LOC | RX_CONF_TAKE1, rx_conf_set_ignored,        \
      RX_HTTP_LOC_CONF_OFFSET, 0, why }
#define RX_HTTP_CACHE_REFUSED(p, name)                                       \
    RX_HTTP_CACHE_CMD(p, name, RX_HTTP_CACHE_LOC, RX_CONF_ANY,               \
        rx_http_cache_set_refused, 0)

#define RX_HTTP_CACHE_COMMANDS(p, up, cache)                                 \
    RX_HTTP_CACHE_CMD(p, "cache_path", RX_HTTP_MAIN_CONF, RX_CONF_2MORE,     \
        rx_http_cache_set_path, 0),                                          \
    RX_HTTP_CACHE_CMD(p, "cache", RX_HTTP_CACHE_LOC, RX_CONF_TAKE1,          \
        rx_http_cache_set_zone, (up) + (cache)),                             \
    RX_HTTP_CACHE_CMD(p, "cache_key", RX_HTTP_CACHE_LOC, RX_CONF_TAKE1,      \
        rx_http_cache_set_key, (up) + (cache)),                              \
    RX_HTTP_CACHE_CMD(p, "cache_valid", RX_HTTP_CACHE_LOC, RX_CONF_1MORE,    \
        rx_http_cache_set_valid, (up) + (cache)),                            \
    RX_HTTP_CACHE_CMDP(p, "cache_methods", RX_HTTP_CACHE_LOC, RX_CONF_1MORE,  \
        rx_conf_set_bitmask_slot,                                            \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, methods),            \
        rx_http_cache_methods_masks),                                        \
    RX_HTTP_CACHE_CMD(p, "cache_min_uses", RX_HTTP_CACHE_LOC, RX_CONF_TAKE1, \
        rx_conf_set_num_slot,                                                \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, min_uses)),          \
    RX_HTTP_CACHE_CMD(p, "cache_bypass", RX_HTTP_CACHE_LOC, RX_CONF_1MORE,   \
        rx_http_cache_set_predicates,                                        \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, bypass)),            \
    RX_HTTP_CACHE_CMD(p, "no_cache", RX_HTTP_CACHE_LOC, RX_CONF_1MORE,       \
        rx_http_cache_set_predicates,                                        \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, no_cache)),          \
    RX_HTTP_CACHE_CMDP(p, "cache_use_stale", RX_HTTP_CACHE_LOC,              \
        RX_CONF_1MORE, rx_conf_set_bitmask_slot,                             \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, use_stale),          \
        rx_http_cache_use_stale_masks),                                      \
    RX_HTTP_CACHE_CMD(p, "cache_background_update", RX_HTTP_CACHE_LOC,       \
        RX_CONF_FLAG, rx_conf_set_flag_slot,                                 \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, background_update)), \
    RX_HTTP_CACHE_CMD(p, "cache_lock", RX_HTTP_CACHE_LOC, RX_CONF_FLAG,      \
        rx_conf_set_flag_slot,                                               \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, lock)),              \
    RX_HTTP_CACHE_NOTICE(p, "cache_lock_timeout", "a request waits for the " \
        "fetch of its entry as long as the fetch runs, receiving the "       \
        "response as it arrives; none goes upstream after a timeout"),       \
    RX_HTTP_CACHE_NOTICE(p, "cache_lock_age", "a request waits for the "     \
        "fetch of its entry as long as the fetch runs; none goes upstream "  \
        "after a time"),                                                     \
    RX_HTTP_CACHE_CMD(p, "cache_revalidate", RX_HTTP_CACHE_LOC, RX_CONF_FLAG,\
        rx_conf_set_flag_slot,                                               \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, revalidate)),        \
    RX_HTTP_CACHE_CMD(p, "cache_convert_head", RX_HTTP_CACHE_LOC,            \
        RX_CONF_FLAG, rx_conf_set_flag_slot,                                 \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, convert_head)),      \
    RX_HTTP_CACHE_CMD(p, "cache_purge", RX_HTTP_CACHE_LOC, RX_CONF_1MORE,    \
        rx_http_cache_set_predicates,                                        \
        (up) + (cache) + offsetof(rx_http_cache_conf_t, purge))

#endif /* RX_HTTP_CACHE_H */
