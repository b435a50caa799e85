/*
 * static_send.h: what the static module's two halves share: static.c (the
 * handler: the open, validators, conditional and range requests) and
 * static_send.c (the body: read through the ring, sendfile, splice).
 * Private to them.
 */
#ifndef RX_STATIC_SEND_H
#define RX_STATIC_SEND_H

#include "http.h"
#include "http_open_file.h"
#include "http_range.h"

#define STATIC_MAX_RANGES  64

/* One response of the static module (r->ctx). */
typedef struct {
    int               fd;
    int64_t           size;
    time_t            mtime;
    rx_str_t          path;
    rx_str_t          etag;
    char             *buf;             /* one chunk, reused */
    size_t            buf_size;
    /* nranges of them: &one, or an array from the pool when the request
     * asks for several (64 inline would be 1 KiB of every response) */
    rx_http_range_t  *ranges;
    rx_http_range_t   one;
    rx_uint_t         nranges;
    rx_uint_t         range;           /* the one being sent */
    /* the file offset of the representation's first byte (a cache
     * file's body): ranges are file offsets, part headers subtract it */
    int64_t           base;
    int64_t           offset;          /* next byte to read */
    bool              multipart;
    char              boundary[24];
    rx_str_t          content_type;
    /* zero-copy: the borrowed pipe, what it holds, splices in flight */
    int               pipe[2];
    int64_t           in_pipe;
    int               splices;
    bool              fill_first;       /* next CQE is file -> pipe */
    bool              in_handler;       /* sendfile: called by the handler */
    rx_posted_t       end;              /* sendfile: the end, after it */
    rx_http_open_file_t *of;            /* the open (static_handler's) */
    const char       *content;          /* small_file_cache's bytes (in the
                                           request's pool): no fd */
    bool              nonblock;         /* fd still O_NONBLOCK (of->nonblock) */
} rx_http_static_ctx_t;

typedef struct {
    rx_int_t   max_ranges;
    rx_int_t   splice;          /* sendfile_splice */
    size_t     zc_min;          /* sendfile_min_size */
} rx_http_static_conf_t;

extern rx_module_t rx_http_static_module;

/* The header of multipart part i ("\r\n--BOUNDARY\r\nContent-Type: ...
 * Content-Range: ...\r\n\r\n"); len 0 (data NULL) when out of memory.
 * plan_ranges counts its length, the body sends it. */
rx_str_t rx_http_static_part_header(rx_http_request_t *r,
    rx_http_static_ctx_t *ctx, rx_uint_t i);

/* After the header was sent: the body of ctx's ranges, by splice or
 * sendfile when the location and the socket allow it, else read through
 * the ring chunk by chunk. Returns as a content handler does. */
rx_int_t rx_http_static_send_body(rx_http_request_t *r,
    rx_http_static_ctx_t *ctx);

/* r->op_handler of a static response: the ring's completions of its
 * reads, splices and polls. */
void rx_http_static_op(rx_http_request_t *r, const rx_cqe_t *cqe);

#endif /* RX_STATIC_SEND_H */
