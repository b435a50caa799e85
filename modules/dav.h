/*
 * dav.h: what the WebDAV module (modules/dav.c: directives and the
 * methods) shares with its file work (modules/dav_tree.c: copying a
 * file, walking a directory tree to delete or copy it). Everything runs
 * through the worker's ring, one step at a time: each step submits its
 * operations and the request's op handler calls the next step with the
 * result, so a request never blocks the worker and a large tree is
 * worked through over many loop turns.
 */
#ifndef RX_DAV_H
#define RX_DAV_H

#include <sys/stat.h>
#include "http.h"

typedef struct {
    rx_uint_t  methods;           /* RX_HTTP_PUT | ...; DAV_OFF alone: off */
    rx_uint_t  access;            /* dav_access: file mode bits */
    rx_int_t   min_delete_depth;
    rx_int_t   create_full_put_path;
} rx_http_dav_conf_t;

typedef struct rx_http_dav_ctx_s   rx_http_dav_ctx_t;
typedef struct rx_http_dav_tree_s  rx_http_dav_tree_t;

/* The next step: res is the result of the operation it waited for (a
 * CQE's res: >= 0, or -errno). */
typedef void (*rx_http_dav_step_pt)(rx_http_request_t *r,
    rx_http_dav_ctx_t *ctx, int res);
/* A copy or a walk ended: RX_OK, or the HTTP status to answer with (the
 * failure is logged). */
typedef void (*rx_http_dav_done_pt)(rx_http_request_t *r,
    rx_http_dav_ctx_t *ctx, rx_int_t rc);

/* One file copy: src (opened here unless src_fd is given) to dst. */
typedef struct {
    const char          *src;
    const char          *dst;
    int                  src_fd;      /* -1: open src */
    int                  dst_fd;
    bool                 own_src;     /* src_fd is ours to close */
    int                  dst_flags;   /* O_TRUNC or O_EXCL */
    mode_t               mode;        /* 0: the source's */
    int64_t              off;
    unsigned             want;        /* bytes of the write in flight */
    bool                 keep_time;   /* the source's mtime on the copy */
    struct timespec      mtime;       /* tv_nsec UTIME_OMIT: leave it */
    char                *buf;         /* RX_HTTP_DAV_CHUNK bytes */
    rx_http_dav_done_pt  done;
} rx_http_dav_copy_t;

#define RX_HTTP_DAV_CHUNK  (64 * 1024)

struct rx_http_dav_ctx_s {
    rx_http_dav_conf_t  *conf;
    rx_http_dav_step_pt  next;        /* gets the one operation's result */
    char                *path;        /* the URI's file, NUL-terminated,
                                         without a trailing '/' */
    char                *dest;        /* COPY/MOVE: the destination's */
    char                *temp;        /* a name beside the destination */
    size_t               dest_uri_len; /* the Destination path's length */
    const char          *failed;      /* the call that failed, for logs */
    struct statx         stx;
    rx_uint_t            status;      /* the answer once all went well */
    int                  fd;          /* PUT: the body's file */
    bool                 overwrite;   /* COPY/MOVE onto something there */
    bool                 slash;       /* COPY/MOVE of collections */
    bool                 dest_dir;
    bool                 made_path;   /* the missing path was created */
    char                *mk_path;     /* creating the path to this file */
    size_t               mkdir_at;    /* ... its '/' being worked on */
    void               (*mk_then)(rx_http_request_t *r,
                                  rx_http_dav_ctx_t *ctx);
    struct rx_http_temp_file_s *empty; /* PUT of an empty body: its file */
    unsigned             tries;
    char                 proc[40];    /* "/proc/self/fd/N" */
    rx_http_dav_copy_t   copy;
    rx_http_dav_tree_t  *tree;
    rx_http_dav_done_pt  tree_done;
};

#define RX_HTTP_DAV_INFINITY  -1
#define RX_HTTP_DAV_INVALID   -2

/* dav.c */
extern rx_module_t rx_http_dav_module;
/* A request header by name (the first), or NULL. */
rx_table_elt_t *rx_http_dav_header(rx_http_request_t *r, const char *name);
/* Depth: 0, 1, RX_HTTP_DAV_INFINITY, dflt when absent, or
 * RX_HTTP_DAV_INVALID (logged). */
rx_int_t rx_http_dav_depth(rx_http_request_t *r, rx_int_t dflt);
/* Ends the request: RX_OK answers ctx->status (201 with Location), else
 * the status rc. */
void rx_http_dav_finish(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    rx_int_t rc);
/* Creates the missing directories above path's last '/' from byte
 * `from` on (dav_access plus x), then calls then. */
void rx_http_dav_mkpath(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    char *path, size_t from,
    void (*then)(rx_http_request_t *r, rx_http_dav_ctx_t *ctx));
/* ctx->temp: a fresh name beside path. */
rx_int_t rx_http_dav_temp_name(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    const char *path);
size_t rx_http_dav_root_len(const char *path, size_t uri_len);
/* A new context, the request's ctx and op handler. */
rx_http_dav_ctx_t *rx_http_dav_ctx(rx_http_request_t *r);
/* root/alias + URI, slashes merged, no trailing '/'. */
rx_int_t rx_http_dav_map(rx_http_request_t *r, char **out);

/* dav_copy.c: COPY and MOVE. A status, or RX_AGAIN. */
rx_int_t rx_http_dav_copy_move(rx_http_request_t *r, rx_http_dav_ctx_t *ctx);

/* dav_tree.c */
/* Copies c->src (or c->src_fd) to c->dst; c->done runs with the result. */
void rx_http_dav_copy_file(rx_http_request_t *r, rx_http_dav_ctx_t *ctx);
/* Deletes what the directory `dir` holds (not dir itself), or copies it
 * into the existing directory `to` (to NULL: delete). done runs once
 * the walk is over: RX_OK, or 500 when the directory could not be read;
 * what fails inside is logged and the walk goes on (nginx). */
void rx_http_dav_walk(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    const char *dir, const char *to, rx_http_dav_done_pt done);
/* The status and the log line for a failed file operation (nginx's
 * mapping): not_found for ENOENT, ENOTDIR, ENAMETOOLONG (0: log only). */
rx_int_t rx_http_dav_error(rx_http_request_t *r, int err, rx_int_t not_found,
    const char *failed, const char *path);
/* The op handler of a dav request: hands the result to ctx->next. */
void rx_http_dav_op(rx_http_request_t *r, const rx_cqe_t *cqe);
/* nginx's ngx_dir_access: x where r is given */
#define rx_http_dav_dir_access(a)  ((a) | ((a) & 0444) >> 2)

/* dav.c: a walked tree's directory removed, then the answer (the end of
 * DELETE, and of MOVE's source after a copy). */
void rx_http_dav_tree_walked(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    rx_int_t rc);

#endif /* RX_DAV_H */
