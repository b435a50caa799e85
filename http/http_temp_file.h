/*
 * http_temp_file.h: an append-only temporary file written through the
 * ring, for bodies that do not fit in memory (a request body beyond
 * client_body_buffer_size, a response the client reads slower than the
 * upstream sends). The file has no name (O_TMPFILE in its directory).
 *
 * Bytes are appended to one of two memory buffers; when no write is in
 * flight the filled one is written at the end of the file while the other
 * fills, so at most two buffers are in memory: 64 KiB each while the
 * disk keeps up, doubling while it does not, as far as the caller lets
 * the bytes waiting grow (a request body stops reading beyond 128 KiB,
 * the cache store gives up beyond 4 MiB). The operations run on the
 * request's connection (rx_http_op_ud), so the request's memory outlives
 * them.
 */
#ifndef RX_HTTP_TEMP_FILE_H
#define RX_HTTP_TEMP_FILE_H

#include "http.h"

#define RX_HTTP_TEMP_CHUNK  (64 * 1024)

typedef struct rx_http_temp_file_s {
    const char  *dir;            /* NUL-terminated */
    int          fd;             /* -1 until the open completed */
    int64_t      submitted;      /* end of the writes given to the kernel */
    int64_t      written;        /* writes completed */
    char        *wbuf[2];        /* malloc'd */
    size_t       wlen[2];
    size_t       wcap[2];
    unsigned     wcur;           /* the one filling */
    unsigned     opening:1;
    unsigned     writing:1;
    /* a named file (client_body_in_file_only): its path, NULL for an
     * O_TMPFILE one; keep: left in place when freed, else unlinked */
    char        *name;
    unsigned     keep:1;
    unsigned     name_tries;     /* EEXIST: the next number is tried */
} rx_http_temp_file_t;

void rx_http_temp_init(rx_http_temp_file_t *tf, const char *dir);
/* Makes tf (before its first kick) a file with a name in its directory,
 * ten digits as nginx's, for $request_body_file: kept when freed if keep.
 * RX_OK or RX_ERROR (memory). */
rx_int_t rx_http_temp_set_named(rx_http_temp_file_t *tf, rx_pool_t *pool,
    bool keep);
/* Copies bytes into the filling buffer. RX_OK or RX_ERROR (memory). */
rx_int_t rx_http_temp_append(rx_http_temp_file_t *tf, const char *data,
    size_t len);
/* Opens the file, or writes the filling buffer if no write is in flight. */
void rx_http_temp_kick(rx_http_request_t *r, rx_http_temp_file_t *tf);
/* The same, its operations on slot c (a file that outlives its request:
 * the owner of c gets their completions and frees tf after the last). */
void rx_http_temp_kick_on(rx_conn_t *c, rx_http_temp_file_t *tf);
/*
 * A completion of the file's open or write (the caller's op handler gets
 * it first). Returns RX_OK, RX_DECLINED (not this file's operation) or
 * RX_ERROR with *err set and a message in *what ("creating", "writing
 * to"); the caller logs it and does without the file (the response:
 * from memory) or fails the request (a request body). After an error no
 * write is in flight, and wbuf still holds every byte not in the file.
 */
rx_int_t rx_http_temp_handle(rx_http_temp_file_t *tf, const rx_cqe_t *cqe,
    int *err, const char **what);
/*
 * Logs [crit] that a temporary file could not be made (what "creating")
 * or written in dir, naming the directive, the worker's user and, when
 * the user lacks permission, what to change; purpose ("an upstream
 * response") and effect (what happens instead) complete the sentence.
 * Once per directory in a worker: the file is tried again for every body,
 * so a repaired directory is used again at once.
 */
/* The name of the user the worker runs as (buf holds the uid when the
 * name is unknown). */
const char *rx_http_temp_worker_user(char *buf, size_t size);
void rx_http_temp_log_failure(rx_http_request_t *r, const char *dir,
    const char *directive, const char *what, int err, const char *purpose,
    const char *effect);
/* Bytes waiting in memory (not yet written). */
size_t rx_http_temp_backlog(const rx_http_temp_file_t *tf);
/* Everything appended is in the file. */
bool rx_http_temp_settled(const rx_http_temp_file_t *tf);
/* Starts over at offset 0 (the reader caught up); only when settled. */
void rx_http_temp_rewind(rx_http_temp_file_t *tf);
/* Setter of *_temp_path path [levels] (cmd->offset: an rx_str_t, made
 * absolute and created by the master at start). */
const char *rx_http_set_temp_path_slot(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
/* Closes the fd and frees the buffers (the request's pool cleanup); a
 * named file not kept is unlinked. */
void rx_http_temp_free(rx_http_temp_file_t *tf);

#endif /* RX_HTTP_TEMP_FILE_H */
