/*
 * http_parse.h: the llhttp glue. llhttp is included only by http_parse*.c;
 * the rest of ringx sees a parser that reports a message's parts through
 * callbacks and stops (pauses) after the header and after the message so
 * that the caller decides what happens next. Strict mode: no lenient flags.
 */
#ifndef RX_HTTP_PARSE_H
#define RX_HTTP_PARSE_H

typedef struct rx_http_parser_s rx_http_parser_t;

/* What the parser hands to its owner; each returns RX_OK or an HTTP status
 * (>= 400) that stops parsing with that status. Spans point into the bytes
 * being parsed and are complete (a span split across reads is joined). */
typedef struct {
    rx_int_t (*on_url)(void *data, const char *at, size_t len);
    /* the request line is complete (method, target and version known) */
    rx_int_t (*on_request_line)(void *data);
    rx_int_t (*on_header)(void *data, const char *key, size_t klen,
                          const char *value, size_t vlen);
    rx_int_t (*on_headers_complete)(void *data);
    rx_int_t (*on_body)(void *data, const char *at, size_t len);
    /* a chunk's size line was read: size body bytes follow */
    rx_int_t (*on_chunk_size)(void *data, uint64_t size);
    rx_int_t (*on_message_complete)(void *data);
} rx_http_parse_handlers_t;

typedef enum {
    RX_HTTP_PARSE_AGAIN = 0,      /* everything consumed; need more bytes */
    RX_HTTP_PARSE_HEADER_DONE,    /* paused after the header */
    RX_HTTP_PARSE_MESSAGE_DONE,   /* paused after the whole message */
    RX_HTTP_PARSE_ERROR           /* see rx_http_parser_status/_reason */
} rx_http_parse_rc_t;

/* Facts of the header, valid after RX_HTTP_PARSE_HEADER_DONE. */
typedef struct {
    rx_uint_t  method;            /* RX_HTTP_GET ... */
    const char *method_name;
    unsigned   http_major;
    unsigned   http_minor;
    int64_t    content_length;    /* -1 when absent */
    bool       chunked;
    bool       keep_alive;        /* as the protocol version and Connection say */
    bool       upgrade;
} rx_http_message_info_t;

/* http_request.c, for the parser's callbacks and for a request that
 * comes as fields (http_request_fields.c): the request line ($request,
 * $server_protocol) from info and r->unparsed_uri; and the header's end
 * (framing, version, Host, server, method, keep-alive). RX_OK, or an
 * HTTP status (logged). */
rx_int_t rx_http_request_set_line(rx_http_request_t *r,
    const rx_http_message_info_t *info);
rx_int_t rx_http_request_header_complete(rx_http_request_t *r,
    const rx_http_message_info_t *info);

/*
 * Creates a request parser whose spans are offsets into *base, so that the
 * owner may move (realloc) its input buffer between calls. The sizes are
 * client_header_buffer_size and large_client_header_buffers: a request
 * line longer than a large buffer is a 414, a header line longer than one
 * or a header needing more large buffers than allowed is a 494, counted
 * the way nginx fills its buffers.
 */
rx_http_parser_t *rx_http_parser_create_request(rx_log_t *log,
    const rx_http_parse_handlers_t *h, void *data, char **base,
    size_t first_size, size_t large_size, rx_uint_t large_num);
/* A parser lives while requests are read; an idle connection has none. */
void rx_http_parser_free(rx_http_parser_t *p);
/* Parses bytes [from, from + len) of *base; *consumed gets how many. */
rx_http_parse_rc_t rx_http_parser_execute(rx_http_parser_t *p, size_t from,
    size_t len, size_t *consumed);
/* Continues after a pause. */
void rx_http_parser_resume(rx_http_parser_t *p);
/* The facts of the header just parsed (valid from the request line on). */
void rx_http_parser_info(rx_http_parser_t *p, rx_http_message_info_t *info);
/* A method by its name, as a request line's: its RX_HTTP_* (or
 * RX_HTTP_UNKNOWN) and its name; false for a name llhttp refuses. */
bool rx_http_parse_method(const char *name, size_t len, rx_uint_t *method,
    const char **method_name);
rx_uint_t rx_http_parser_status(rx_http_parser_t *p);   /* 400, 414, 494, 505 */
const char *rx_http_parser_reason(rx_http_parser_t *p);
unsigned rx_http_parser_reason_level(rx_http_parser_t *p);
/* True between messages (nothing of the next message parsed yet). */
bool rx_http_parser_idle(rx_http_parser_t *p);

#endif /* RX_HTTP_PARSE_H */
