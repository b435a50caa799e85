/*
 * http_open_file.h: how content handlers open the file they serve (nginx's
 * open_cached_file): through the worker's ring, under the location's
 * disable_symlinks policy, and through open_file_cache when it is on.
 */
#ifndef RX_HTTP_OPEN_FILE_H
#define RX_HTTP_OPEN_FILE_H

#include "http.h"
#include "http_file_content.h"

typedef struct {
    int          fd;        /* the open file (or directory), -1 on failure */
    int          err;       /* errno of the failure, 0 on success */
    const char  *failed;    /* the call that failed: "open()", "openat()" */
    bool         is_dir;
    bool         is_file;   /* a regular file */
    int64_t      size;
    time_t       mtime;
    bool         cached;    /* fd belongs to open_file_cache */
    /* fd is still O_NONBLOCK (opened inline, not cached): before an
     * io_uring read or splice of it, rx_ring_file_blocking() */
    bool         nonblock;
    /* small_file_cache (the static module's opens): the caller sets
     * want_content; a hit gives the file's size bytes in content (held
     * until the request's pool goes), with fd -1; a miss names the store
     * that takes the bytes once read (content_store) with the state the
     * open found (id, id_known) */
    bool                     want_content;
    bool                     id_known;
    const char              *content;
    rx_http_file_content_t  *content_store;
    rx_http_file_id_t        id;
} rx_http_open_file_t;

typedef void (*rx_http_open_file_pt)(rx_http_request_t *r,
    rx_http_open_file_t *of);

/*
 * Opens path (NUL-terminated, living as long as r) for reading. Returns
 * RX_OK when of is filled at once (open_file_cache answered, or the
 * open needed no disk), RX_AGAIN
 * when done(r, of) will be called from a completion (r->op_handler is the
 * opener's meanwhile, and is restored before done runs), RX_ERROR when
 * memory ran out. A failure is reported in of->err, not logged. The fd
 * is the request's until r->pool goes (closed, or its cache reference
 * released): callers never close it.
 */
rx_int_t rx_http_open_file(rx_http_request_t *r, const rx_str_t *path,
    rx_http_open_file_t *of, rx_http_open_file_pt done);

/* For index and try_files: with open_file_cache on in r's location, a
 * candidate path is tested through it (and so under disable_symlinks), as
 * nginx does: done gets the answer (at once when the cache has it) and
 * true is returned. false: the cache is off, the caller tests the path
 * itself (statx). */
bool rx_http_open_file_test(rx_http_request_t *r, const rx_str_t *path,
    rx_http_open_file_t *of, rx_http_open_file_pt done);

extern rx_module_t rx_http_open_file_module;

#endif /* RX_HTTP_OPEN_FILE_H */
