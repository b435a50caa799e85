/*
 * static.h: what static.c offers other content handlers (gzip_static):
 * answering with a file that is already open.
 */
#ifndef RX_STATIC_H
#define RX_STATIC_H

#include "http.h"
#include "http_open_file.h"

/* Answers r with the open regular file of as static does (validators,
 * conditional requests, ranges, the body); path names it in logs. Takes
 * r->ctx and r->op_handler; returns as a content handler does. */
rx_int_t rx_http_static_serve(rx_http_request_t *r, const rx_str_t *path,
    const rx_http_open_file_t *of);

#endif /* RX_STATIC_H */
