/*
 * http_response_parse.h: the parser of HTTP/1.x responses from upstreams
 * (a plain head in one pass of its own, any other by llhttp in response
 * mode, strict; both give the same answer). It fills the upstream's header
 * structure, skips 1xx interim responses, and decodes the body framing
 * (Content-Length, chunked, or up to the close), handing decoded body
 * bytes to a callback. A 204, a 304 and a response to HEAD end with their
 * header, whatever length they announce. Used by the proxy module and the
 * fuzz target.
 */
#ifndef RX_HTTP_RESPONSE_PARSE_H
#define RX_HTTP_RESPONSE_PARSE_H

#include "http.h"
#include "http_upstream.h"

typedef struct rx_http_response_parser_s rx_http_response_parser_t;

typedef rx_int_t (*rx_http_response_body_pt)(void *data, const char *at,
    size_t len);

/* A trailer field of a chunked body (name and value in the pool, kept):
 * RX_OK, or RX_ERROR to fail the body. */
typedef rx_int_t (*rx_http_response_trailer_pt)(void *data,
    const rx_str_t *name, const rx_str_t *value);

/* head: the request was HEAD (the response has no body whatever it says). */
rx_http_response_parser_t *rx_http_response_parser_create(rx_pool_t *pool,
    rx_http_upstream_headers_in_t *h, bool head,
    rx_http_response_body_pt on_body, void *data);

/*
 * Parses len bytes at data. Header bytes must stay where they are (the
 * header fields point into them): feed the header from a buffer that does
 * not move. Returns RX_AGAIN (more needed), RX_OK (the header is complete;
 * body bytes after it in data were parsed too), RX_DONE (the whole
 * response is complete; *used tells where it ended) or RX_ERROR (see
 * rx_http_response_parser_error).
 */
rx_int_t rx_http_response_parse(rx_http_response_parser_t *p,
    const char *data, size_t len, size_t *used);
/* The upstream closed: RX_DONE when that ends the body, else RX_ERROR. */
rx_int_t rx_http_response_parse_eof(rx_http_response_parser_t *p);
bool rx_http_response_parser_header_done(rx_http_response_parser_t *p);
/* The response allows another request on the connection. */
bool rx_http_response_parser_keepalive(rx_http_response_parser_t *p);
const char *rx_http_response_parser_error(rx_http_response_parser_t *p);
/* The head was read without llhttp (the plain way of
 * http_response_parse.c): for tests and the fuzz target. */
bool rx_http_response_parser_plain(rx_http_response_parser_t *p);
/* Trailer fields go to cb (with the data given at create) instead of
 * being dropped. */
void rx_http_response_parser_on_trailer(rx_http_response_parser_t *p,
    rx_http_response_trailer_pt cb);

#endif /* RX_HTTP_RESPONSE_PARSE_H */
