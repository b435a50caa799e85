/*
 * http_request_fields.h: a request's header as fields, for a framing that
 * does not carry HTTP/1.1 text (HTTP/2): what http_request_fields.c
 * offers it.
 */
#ifndef RX_HTTP_REQUEST_FIELDS_H
#define RX_HTTP_REQUEST_FIELDS_H

#include "http.h"

/* One field of a request's header as another framing hands it over (an
 * HTTP/2 stream's, decoded by HPACK): not NUL-terminated. */
typedef struct {
    const char               *name;
    size_t                    name_len;
    const char               *value;
    size_t                    value_len;
} rx_http_field_t;

/* A request's header as fields: its method, target (:path) and fields in
 * the order HTTP/1.1 text would carry them (the framing makes :authority
 * a host field when there is none, and joins cookie crumbs). */
typedef struct {
    const char               *method;
    size_t                    method_len;
    const char               *target;
    size_t                    target_len;
    const rx_http_field_t    *fields;
    rx_uint_t                 nfields;
    bool                      body;      /* a body follows (below) */
} rx_http_request_fields_t;

/* http_request_fields.c: the request of a framed connection hc whose
 * header came as fields runs as the same request parsed from HTTP/1.1
 * text would: the same checks, limits, statuses and log lines, then its
 * phases; without llhttp. hc may be closed on return. With f->body, the
 * body's bytes follow through the connection's on_read as they are (no
 * chunked framing: a "transfer-encoding: chunked" field among the fields
 * says no length was given), and rx_http_request_body_end() says they
 * all came; the body owner takes them as it takes parsed ones. */
void rx_http_request_from_fields(rx_http_connection_t *hc,
    const rx_http_request_fields_t *f);
void rx_http_request_body_end(rx_http_connection_t *hc);

#endif /* RX_HTTP_REQUEST_FIELDS_H */
