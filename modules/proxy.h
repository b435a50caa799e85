/*
 * proxy.h: what the proxy module's files share: the location conf that
 * proxy.c's directives fill, a request's view of its target, and the
 * HTTP/1.x protocol on the upstream engine (proxy_upstream.c).
 */
#ifndef RX_PROXY_H
#define RX_PROXY_H

#include "http.h"
#include "http_upstream.h"
#include "http_script.h"
#include "http_response_parse.h"
#include "proxy_rewrite.h"

typedef struct {
    rx_str_t                  name;       /* as written */
    rx_str_t                  lowcase;
    rx_http_complex_value_t   value;
} rx_http_proxy_header_t;

typedef struct {
    rx_http_upstream_conf_t   upstream;
    rx_str_t                  url;          /* as written */
    rx_str_t                  host_header;  /* $proxy_host */
    rx_str_t                  port_text;    /* $proxy_port */
    rx_str_t                  uri;          /* the URI part, if any */
    bool                      has_uri;
    rx_str_t                  location;     /* prefix it replaces */
    rx_array_t               *set_headers;  /* rx_http_proxy_header_t */
    rx_array_t               *headers;      /* merged with the defaults */
    rx_uint_t                 http_version; /* RX_HTTP_VERSION_10/11 */
    rx_int_t                  pass_trailers; /* proxy_pass_trailers */
    rx_http_complex_value_t  *method;
    rx_http_proxy_rewrite_conf_t rewrite;   /* proxy_redirect, proxy_cookie_* */
    rx_http_complex_value_t  *body;         /* proxy_set_body */
    const rx_http_upstream_ssl_t *ssl;      /* https (or variables): the
                                               location's proxy_ssl_* */
    bool                      https;        /* proxy_pass https:// */
    rx_str_t                  ssl_host;     /* its host, for the SNI */
} rx_http_proxy_loc_conf_t;

/* A request's view of the target (variables may make it differ per
 * request). */
typedef struct {
    rx_str_t                    host_header;
    rx_str_t                    port_text;
    rx_str_t                    uri;
    bool                        has_uri;
    rx_http_response_parser_t  *parser;
    rx_str_t                    body;       /* proxy_set_body's value */
    bool                        body_set;
} rx_http_proxy_ctx_t;

extern rx_module_t rx_http_proxy_module;

/* proxy_upstream.c: installs the HTTP/1.x protocol's callbacks on u (the
 * request built, the response parsed, proxy_redirect and proxy_cookie_*
 * where the location has them, a streamed body's framing). */
void rx_http_proxy_set_protocol(rx_http_upstream_t *u,
    const rx_http_proxy_loc_conf_t *plcf);

rx_http_proxy_ctx_t *rx_http_proxy_ctx(rx_http_request_t *r);

#endif /* RX_PROXY_H */
