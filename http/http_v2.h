/*
 * http_v2.h: HTTP/2 as the rest of HTTP sees it: its settings (the
 * http2_* directives, http_v2_module.c), the switch of a connection to
 * HTTP/2 (http_v2.c: after ALPN "h2", or the client's connection preface
 * on a plain listener), and whether a server speaks it.
 */
#ifndef RX_HTTP_V2_H
#define RX_HTTP_V2_H

#include "http.h"

/* The connection preface of a client (RFC 9113 section 3.4). */
#define RX_HTTP_V2_PREFACE      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define RX_HTTP_V2_PREFACE_LEN  (sizeof(RX_HTTP_V2_PREFACE) - 1)

typedef struct {
    rx_int_t     enable;                 /* http2 on|off, listen ... http2 */
    rx_uint_t    max_concurrent_streams; /* SETTINGS_MAX_CONCURRENT_STREAMS */
    size_t       preread_size;           /* a stream's initial window */
} rx_http_v2_srv_conf_t;

typedef struct {
    size_t       chunk_size;             /* bytes of a response per DATA
                                            frame, at most 16 KiB */
} rx_http_v2_loc_conf_t;

extern rx_module_t rx_http_v2_module;

/* Whether HTTP/2 is on for the server (its conf merged). */
bool rx_http_v2_enabled(const rx_http_core_srv_conf_t *cscf);
/* listen ... http2 (http_listen.c): the server speaks HTTP/2. */
void rx_http_v2_listen_enable(rx_conf_t *cf, rx_http_core_srv_conf_t *cscf);

/* The connection hc (no request yet) becomes an HTTP/2 connection; data
 * (len bytes, possibly 0) is what it received so far, the preface
 * included. hc's input is released. */
void rx_http_v2_init(rx_http_connection_t *hc, const char *data, size_t len);

#endif /* RX_HTTP_V2_H */
