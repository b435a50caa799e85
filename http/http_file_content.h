/*
 * http_file_content.h: small_file_cache's store: the bytes of small
 * regular files, per worker, each checked against its file at every use
 * by one statx(2) of the path. No request logic here: http_open_file.c
 * looks up, the static module offers what it read.
 */
#ifndef RX_HTTP_FILE_CONTENT_H
#define RX_HTTP_FILE_CONTENT_H

#include "core.h"

/* What identifies a file's state: any write, truncate, rename over it,
 * chmod or chown changes one of these (ctime at least). */
typedef struct {
    uint64_t   ino;
    uint64_t   dev;
    int64_t    size;
    int64_t    mtime_ns;
    int64_t    ctime_ns;
    uint32_t   mode;
} rx_http_file_id_t;

typedef struct rx_http_file_content_s rx_http_file_content_t;
typedef struct rx_http_content_entry_s rx_http_content_entry_t;

struct rx_http_file_content_s {
    size_t                     size;       /* size=: bytes held at most */
    size_t                     file_max;   /* file=: the largest file kept */
    size_t                     used;       /* entries' bytes, with overhead */
    rx_http_content_entry_t  **buckets;    /* the worker's, on first use */
    rx_http_content_entry_t   *head;       /* most recently used */
    rx_http_content_entry_t   *tail;
    /* devices whose filesystem was asked (fstatfs) whether statx tells
     * the truth at once: local ones do, network ones may cache it */
    uint64_t                   devs[16];
    uint8_t                    dev_local[16];
    rx_uint_t                  ndevs;
};

/* A store with its limits (in the configuration's pool, empty: each
 * worker fills its own after fork). NULL on failure. */
rx_http_file_content_t *rx_http_file_content_create(rx_pool_t *pool,
    size_t size, size_t file_max);

/* The entry kept for path (NUL-terminated, len without the NUL) when
 * statx says the file is still what its bytes were read from, with a
 * reference: *data and *n stay valid until rx_http_file_content_release;
 * the file's state in *id. NULL: not kept, or changed or gone (then
 * dropped). */
rx_http_content_entry_t *rx_http_file_content_find(rx_http_file_content_t *c,
    const char *path, size_t len, const char **data, size_t *n,
    rx_http_file_id_t *id);

/* Lets an entry find gave go (freed when it left the store meanwhile). */
void rx_http_file_content_release(rx_http_content_entry_t *e);

/* Whether a file in state id would be kept (small, regular, settled),
 * its filesystem aside: a sender reads it rather than send it by
 * sendfile, so that its bytes can be offered. */
bool rx_http_file_content_wants(const rx_http_file_content_t *c,
    const rx_http_file_id_t *id);

/* Offers the whole file path read as data (n bytes) from fd, whose state
 * before the read was id: kept when it is small enough, settled (not
 * changed in the last 2 seconds: timestamps are coarse, a write within
 * the same tick would go unseen) and on a local filesystem; the least
 * recently used entries go to make room. */
void rx_http_file_content_add(rx_http_file_content_t *c, const char *path,
    size_t len, int fd, const rx_http_file_id_t *id, const char *data,
    size_t n);

#endif /* RX_HTTP_FILE_CONTENT_H */
