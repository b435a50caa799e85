/*
 * http_open_file_int.h: what the directives (http_open_file_conf.c) and
 * the opener (http_open_file.c) share: the location conf of
 * open_file_cache* and disable_symlinks.
 */
#ifndef RX_HTTP_OPEN_FILE_INT_H
#define RX_HTTP_OPEN_FILE_INT_H

#include "http_open_file.h"
#include "http_file_cache.h"
#include "http_script.h"

typedef enum {
    RX_SYMLINKS_OFF = 0,
    RX_SYMLINKS_ON,
    RX_SYMLINKS_NOT_OWNER          /* if_not_owner */
} rx_http_symlinks_t;

typedef struct {
    rx_http_file_cache_t     *cache;      /* NULL: open_file_cache off */
    rx_msec_t                 valid;      /* open_file_cache_valid, seconds */
    rx_int_t                  min_uses;   /* open_file_cache_min_uses */
    rx_int_t                  errors;     /* open_file_cache_errors */
    rx_uint_t                 symlinks;   /* rx_http_symlinks_t */
    rx_http_complex_value_t  *from;       /* disable_symlinks from=, or NULL */
    rx_http_file_content_t   *content;    /* small_file_cache; NULL: off */
} rx_http_open_file_conf_t;

#endif /* RX_HTTP_OPEN_FILE_INT_H */
