/*
 * gzip.h: what the gzip filter (gzip.c) and its client-side checks
 * (gzip_ok.c) share: the location conf of the gzip directives and the
 * decision whether a request may get a gzip-compressed response.
 */
#ifndef RX_GZIP_H
#define RX_GZIP_H

#include "http.h"

/* gzip_proxied: bits as nginx names them; 0 is "not set" for the setter */
#define RX_GZIP_PROXIED_OFF       0x0002
#define RX_GZIP_PROXIED_EXPIRED   0x0004
#define RX_GZIP_PROXIED_NO_CACHE  0x0008
#define RX_GZIP_PROXIED_NO_STORE  0x0010
#define RX_GZIP_PROXIED_PRIVATE   0x0020
#define RX_GZIP_PROXIED_NO_LM     0x0040
#define RX_GZIP_PROXIED_NO_ETAG   0x0080
#define RX_GZIP_PROXIED_AUTH      0x0100
#define RX_GZIP_PROXIED_ANY       0x0200

typedef struct {
    rx_int_t     enable;         /* gzip */
    rx_int_t     level;          /* gzip_comp_level */
    rx_int_t     vary;           /* gzip_vary */
    int64_t      min_length;     /* gzip_min_length */
    rx_uint_t    http_version;   /* gzip_http_version, RX_HTTP_VERSION_1x */
    rx_uint_t    proxied;        /* gzip_proxied, RX_GZIP_PROXIED_* bits */
    rx_int_t     bufs_num;       /* gzip_buffers number */
    size_t       bufs_size;      /* gzip_buffers size */
    rx_int_t     wbits;          /* gzip_window, as log2 */
    rx_int_t     memlevel;       /* gzip_hash, as zlib's memLevel */
    rx_array_t  *types;          /* gzip_types: lower-cased rx_str_t */
    rx_int_t     types_any;      /* gzip_types * */
    rx_array_t  *disable;        /* gzip_disable: rx_regex_t * */
    rx_int_t     disable_msie6;  /* gzip_disable msie6 */
    bool         disable_set;
} rx_http_gzip_conf_t;

/* optional whitespace of HTTP fields */
#define RX_GZIP_OWS(c)  ((c) == ' ' || (c) == '\t')

extern rx_module_t rx_http_gzip_module;

/* A header of the list by name (not deleted, any case), or NULL. */
rx_table_elt_t *rx_http_gzip_find_header(rx_array_t *headers, const char *name);

/* Does Accept-Encoding accept gzip (RFC 9110 list with q-values)? */
bool rx_http_gzip_accepts(const rx_str_t *accept_encoding);

/*
 * The client's side of the decision (nginx's ngx_http_gzip_ok):
 * Accept-Encoding, gzip_disable (msie6 and regexes), gzip_http_version,
 * and gzip_proxied for a request that came through a proxy (Via). The
 * response headers are read for gzip_proxied, so call it from a header
 * filter.
 */
bool rx_http_gzip_ok(rx_http_request_t *r, rx_http_gzip_conf_t *conf);

#endif /* RX_GZIP_H */
