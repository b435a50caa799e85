/*
 * static.h: what static.c offers other content handlers (gzip_static):
 * answering with a file that is already open.
 */
#ifndef RX_STATIC_H
#define RX_STATIC_H

#include "http.h"
#include "http_open_file.h"
#include "http_range.h"

/* Answers r with the open regular file of as static does (validators,
 * conditional requests, ranges, the body); path names it in logs. Takes
 * r->ctx and r->op_handler; returns as a content handler does. */
rx_int_t rx_http_static_serve(rx_http_request_t *r, const rx_str_t *path,
    const rx_http_open_file_t *of);

/* After the header went out: bytes [start, end) of the open file fd as
 * the body, by static's path (sendfile or splice when the location
 * allows, else reads through the ring); path names the file in logs. The
 * caller keeps fd open for the request's life. Takes r->ctx and
 * r->op_handler; returns as a content handler does. (The cache's hits.) */
rx_int_t rx_http_static_send_file(rx_http_request_t *r, int fd,
    int64_t start, int64_t end, const rx_str_t *path);

/* The location's max_ranges: how many ranges a request may ask for (0:
 * ranges are off). */
rx_uint_t rx_http_static_max_ranges(rx_http_request_t *r);

/* A 206 of n (2 or more, at most max_ranges) ranges of a representation
 * of size bytes that starts at offset base of the open file fd (a cache
 * file's body): multipart/byteranges, each part with the Content-Type r
 * has; sends the header and the parts as static does. ranges are
 * relative to the representation. Takes r->ctx and r->op_handler;
 * returns as a content handler does. */
rx_int_t rx_http_static_send_multipart(rx_http_request_t *r, int fd,
    int64_t base, int64_t size, const rx_http_range_t *ranges, rx_uint_t n,
    const rx_str_t *path);

#endif /* RX_STATIC_H */
