/*
 * http.h: HTTP/1.x: the request, the HTTP connection, headers, phases,
 * filters and the return vocabulary that handlers use. Every HTTP file
 * includes this header.
 */
#ifndef RX_HTTP_H
#define RX_HTTP_H

#include "core.h"
#include "buf.h"
#include "event.h"
#include "http_core.h"

typedef struct rx_http_request_s     rx_http_request_t;
typedef struct rx_http_connection_s  rx_http_connection_t;
typedef struct rx_http_variable_value_s rx_http_variable_value_t;
typedef struct rx_http_subrequest_s  rx_http_subrequest_t;
typedef struct rx_http_background_s rx_http_background_t;

/* Methods, as bits so that limits and keepalive rules can use masks. */
#define RX_HTTP_UNKNOWN   0x0001
#define RX_HTTP_GET       0x0002
#define RX_HTTP_HEAD      0x0004
#define RX_HTTP_POST      0x0008
#define RX_HTTP_PUT       0x0010
#define RX_HTTP_DELETE    0x0020
#define RX_HTTP_MKCOL     0x0040
#define RX_HTTP_COPY      0x0080
#define RX_HTTP_MOVE      0x0100
#define RX_HTTP_OPTIONS   0x0200
#define RX_HTTP_PROPFIND  0x0400
#define RX_HTTP_PROPPATCH 0x0800
#define RX_HTTP_LOCK      0x1000
#define RX_HTTP_UNLOCK    0x2000
#define RX_HTTP_PATCH     0x4000
#define RX_HTTP_TRACE     0x8000
#define RX_HTTP_CONNECT   0x10000

#define RX_HTTP_VERSION_10  1000
#define RX_HTTP_VERSION_11  1001
#define RX_HTTP_VERSION_20  2000

/* Status codes used by the core. */
#define RX_HTTP_CONTINUE                 100
#define RX_HTTP_SWITCHING_PROTOCOLS      101
#define RX_HTTP_OK                       200
#define RX_HTTP_NO_CONTENT               204
#define RX_HTTP_PARTIAL_CONTENT          206
#define RX_HTTP_MOVED_PERMANENTLY        301
#define RX_HTTP_MOVED_TEMPORARILY        302
#define RX_HTTP_SEE_OTHER                303
#define RX_HTTP_NOT_MODIFIED             304
#define RX_HTTP_TEMPORARY_REDIRECT       307
#define RX_HTTP_PERMANENT_REDIRECT       308
#define RX_HTTP_BAD_REQUEST              400
#define RX_HTTP_UNAUTHORIZED             401
#define RX_HTTP_FORBIDDEN                403
#define RX_HTTP_NOT_FOUND                404
#define RX_HTTP_NOT_ALLOWED              405
#define RX_HTTP_REQUEST_TIME_OUT         408
#define RX_HTTP_CONFLICT                 409
#define RX_HTTP_LENGTH_REQUIRED          411
#define RX_HTTP_PRECONDITION_FAILED      412
#define RX_HTTP_REQUEST_ENTITY_TOO_LARGE 413
#define RX_HTTP_REQUEST_URI_TOO_LARGE    414
#define RX_HTTP_UNSUPPORTED_MEDIA_TYPE   415
#define RX_HTTP_RANGE_NOT_SATISFIABLE    416
#define RX_HTTP_EXPECTATION_FAILED       417
#define RX_HTTP_MISDIRECTED_REQUEST      421
#define RX_HTTP_TOO_MANY_REQUESTS        429
/* nginx's internal codes: logged as such, sent as 400 / closed */
#define RX_HTTP_CLOSE                    444
#define RX_HTTP_REQUEST_HEADER_TOO_LARGE 494
#define RX_HTTPS_CERT_ERROR              495
#define RX_HTTPS_NO_CERT                 496
#define RX_HTTP_TO_HTTPS                 497
#define RX_HTTP_CLIENT_CLOSED_REQUEST    499
#define RX_HTTP_INTERNAL_SERVER_ERROR    500
#define RX_HTTP_NOT_IMPLEMENTED          501
#define RX_HTTP_BAD_GATEWAY              502
#define RX_HTTP_SERVICE_UNAVAILABLE      503
#define RX_HTTP_GATEWAY_TIME_OUT         504
#define RX_HTTP_VERSION_NOT_SUPPORTED    505

/* A header as received or to be sent. */
typedef struct {
    rx_str_t    key;
    rx_str_t    value;
    char       *lowcase_key;     /* NUL-terminated, for $http_ lookups */
    bool        deleted;         /* hidden from output */
} rx_table_elt_t;

typedef struct {
    rx_array_t        headers;          /* rx_table_elt_t, in arrival order */
    rx_table_elt_t   *host;
    rx_table_elt_t   *connection;
    rx_table_elt_t   *if_modified_since;
    rx_table_elt_t   *if_unmodified_since;
    rx_table_elt_t   *if_match;
    rx_table_elt_t   *if_none_match;
    rx_table_elt_t   *user_agent;
    rx_table_elt_t   *referer;
    rx_table_elt_t   *content_length;
    rx_table_elt_t   *content_type;
    rx_table_elt_t   *range;
    rx_table_elt_t   *if_range;
    rx_table_elt_t   *transfer_encoding;
    rx_table_elt_t   *expect;
    rx_table_elt_t   *upgrade;
    rx_table_elt_t   *accept_encoding;
    rx_table_elt_t   *authorization;
    rx_table_elt_t   *keep_alive;
    rx_table_elt_t   *x_forwarded_for;
    rx_table_elt_t   *cookie;           /* the first; others in headers */
    rx_str_t          server;           /* validated, lower-cased host */
    /* Basic credentials, decoded on first use (rx_http_auth_basic_user) */
    rx_str_t          user;
    rx_str_t          passwd;
    signed char       basic_auth;       /* 0 not looked at, 1 valid, -1 not */
    int64_t           content_length_n; /* -1: none */
    bool              chunked;
    bool              connection_close;
    bool              connection_keep_alive;
    bool              msie;             /* for keepalive_disable msie6 */
    bool              msie6;
    bool              safari;
} rx_http_headers_in_t;

typedef struct {
    rx_array_t        headers;          /* rx_table_elt_t: added and passed */
    rx_uint_t         status;
    rx_str_t          status_line;      /* "404 Not Found"; built if empty */
    rx_str_t          content_type;
    rx_str_t          charset;
    int64_t           content_length_n; /* -1: unknown (chunked) */
    time_t            last_modified_time;  /* -1: none */
    rx_table_elt_t   *location;
    rx_table_elt_t   *etag;
    rx_table_elt_t   *expires;
    rx_table_elt_t   *content_encoding;
    rx_table_elt_t   *accept_ranges;
    rx_table_elt_t   *server;           /* an upstream's, passed
                                           (proxy_pass_header Server):
                                           then not ringx's own */
    /* rx_table_elt_t: add_trailer's (modules/headers.c, filled when the
     * last buffer passes), sent by http_chunked_filter.c after the last
     * chunk; NULL: none */
    rx_array_t       *trailers;
} rx_http_headers_out_t;

/* Request body state (http_body.c owns it). */
typedef void (*rx_http_body_handler_pt)(rx_http_request_t *r);

/*
 * Who has the request body. A request starts UNCLAIMED: its body bytes
 * stay unparsed in the connection's input (reading stops when too many
 * wait) however many phases, internal redirects, try_files, index or
 * error_page hops the request takes, until the handler that answers says
 * what becomes of them: read and kept (KEEP), read and handed over piece
 * by piece (STREAM), or read and dropped (DISCARD). Nothing is parsed,
 * and so nothing lost, before that decision.
 */
typedef enum {
    RX_HTTP_BODY_UNCLAIMED = 0,
    RX_HTTP_BODY_KEEP,
    RX_HTTP_BODY_STREAM,
    RX_HTTP_BODY_DISCARD
} rx_http_body_mode_t;

/* How a handler reads the body (rx_http_read_client_request_body). */
typedef struct {
    /* the whole body is in (and written to its file): never called from
     * inside rx_http_read_client_request_body itself */
    rx_http_body_handler_pt  post_handler;
    /* STREAM when set: each decoded piece as it arrives, nothing kept;
     * returns RX_OK or an HTTP status */
    rx_int_t               (*piece)(rx_http_request_t *r, const char *data,
                                    size_t len);
    /* KEEP: beyond client_body_buffer_size the rest goes to a temporary
     * file in client_body_temp_path (else all of it stays in memory) */
    bool                     spill;
    /* with spill: every byte goes to the file, none stays in memory, and
     * the file is not warned about (nginx's request_body_in_file_only,
     * for a PUT that renames the file into place) */
    bool                     file_only;
} rx_http_body_reader_t;

typedef struct {
    rx_chain_t              *bufs;      /* the body kept so far (memory) */
    rx_chain_t              *last;
    int64_t                  received;  /* decoded body bytes */
    rx_http_body_reader_t    reader;
    /* Beyond client_body_buffer_size the rest goes to a temporary file
     * (when the reader allows it: spill); the body is then bufs followed
     * by the file's bytes. */
    struct rx_http_temp_file_s *file;
    size_t                   in_memory;
    bool                     done_pending;  /* complete, file still writing */
    bool                     paused;        /* client reading stopped */
    bool                     done;          /* post_handler ran */
    bool                     consumed;      /* streamed: nothing kept to
                                               hand to another reader */
} rx_http_request_body_t;

/* Handler and filter signatures. */
typedef rx_int_t (*rx_http_handler_pt)(rx_http_request_t *r);
typedef rx_int_t (*rx_http_output_header_filter_pt)(rx_http_request_t *r);
typedef rx_int_t (*rx_http_output_body_filter_pt)(rx_http_request_t *r,
    rx_chain_t *in);

extern rx_http_output_header_filter_pt rx_http_top_header_filter;
extern rx_http_output_body_filter_pt   rx_http_top_body_filter;

struct rx_http_filters_s {
    rx_http_output_header_filter_pt header;
    rx_http_output_body_filter_pt   body;
};

/* The ends of the chains (http_header_filter.c, http_write_filter.c). */
rx_int_t rx_http_header_filter(rx_http_request_t *r);
rx_int_t rx_http_write_filter(rx_http_request_t *r, rx_chain_t *in);

/* Phases, in order. POST_READ runs once per request, with the confs of the
 * server Host chose (an internal redirect starts at SERVER_REWRITE);
 * PREACCESS with the location's. */
typedef enum {
    RX_HTTP_POST_READ_PHASE = 0,    /* realip */
    RX_HTTP_SERVER_REWRITE_PHASE,
    RX_HTTP_FIND_CONFIG_PHASE,
    RX_HTTP_REWRITE_PHASE,
    RX_HTTP_PREACCESS_PHASE,        /* realip (location-level), limit_req,
                                       limit_conn */
    RX_HTTP_ACCESS_PHASE,
    RX_HTTP_PRECONTENT_PHASE,   /* try_files */
    RX_HTTP_CONTENT_PHASE,
    RX_HTTP_LOG_PHASE,
    RX_HTTP_PHASES
} rx_http_phase_t;

#define RX_HTTP_MAX_URI_CHANGES  10
#define RX_HTTP_MAX_CAPTURES     10

struct rx_http_request_s {
    rx_http_connection_t     *hc;
    /* the send in flight (the request outlives it): kept here, not in the
     * connection, so that an idle keepalive connection stays small */
    struct iovec              send_iov[8];
    rx_conn_t                *conn;
    rx_pool_t                *pool;
    void                    **main_conf;
    void                    **srv_conf;
    void                    **loc_conf;
    rx_http_handler_pt        content_handler;   /* from the location */

    rx_uint_t                 method;
    rx_str_t                  method_name;
    rx_uint_t                 http_version;
    rx_str_t                  http_protocol;     /* "HTTP/1.1" */
    rx_str_t                  request_line;
    rx_str_t                  unparsed_uri;      /* as received */
    rx_str_t                  uri;               /* decoded, normalised */
    rx_str_t                  args;
    rx_str_t                  exten;
    rx_str_t                  schema;            /* absolute-form only */
    rx_str_t                  host;              /* absolute-form only */
    rx_uint_t                 host_port;         /* its ":port", 0: none */
    bool                      quoted_uri;

    rx_http_headers_in_t      headers_in;
    rx_http_headers_out_t     headers_out;
    rx_http_request_body_t   *request_body;
    /* The client as realip found it behind a trusted proxy (in the
     * request's pool; the port is 0 when the header gave none); NULL:
     * the connection's peer. Read it through rx_http_remote_addr(). */
    const rx_sockaddr_t      *remote_addr;
    rx_http_body_mode_t       body_mode;         /* who has the body */
    /* its held body bytes are to be parsed (http_body.c claims them from
     * inside a handler; the parse runs after it returns): in the request,
     * so that an idle connection stays small */
    rx_posted_t               body_resume;

    rx_msec_t                 start_msec;        /* monotonic */
    int64_t                   start_usec;        /* wall clock, $request_start_us */
    time_t                    start_sec;
    rx_uint_t                 start_msec_part;   /* for $msec */

    rx_uint_t                 uri_changes;       /* internal redirects left */
    rx_http_phase_t           phase;
    int                       captures[RX_HTTP_MAX_CAPTURES * 2];
    rx_int_t                  ncaptures;
    const char               *captures_data;

    rx_http_variable_value_t *variables;         /* cached per request */

    int64_t                   request_length;    /* bytes of the request */
    int64_t                   bytes_sent;        /* header + body sent */
    int64_t                   header_size;

    rx_chain_t               *out;               /* waiting to be sent */
    rx_uint_t                 err_status;
    rx_uint_t                 access_code;       /* satisfy any: refusal so far */
    rx_uint_t                 access_index;      /* access handler running */

    /* Subrequests (http_subrequest.c). main is the client's request (r
     * itself for it); a subrequest shares its pool and variables.
     * subrequest links a subrequest to its parent (NULL for the main
     * request); wait_sr is the subrequest a parent waits for: operations
     * on the client connection go to it, and an abort reaches it. */
    rx_http_request_t        *main;
    rx_http_subrequest_t     *subrequest;
    rx_http_subrequest_t     *wait_sr;
    /* the main request's subrequests that run alongside it (mirror,
     * http_background.c): its end waits for them; NULL: none started */
    rx_http_background_t     *background;

    /* Asynchronous work of a handler: op_handler gets the completions of
     * the operations it submitted on the connection (rx_http_op_ud);
     * write_handler is called when everything queued has been sent and
     * the response is not finished, to produce more (backpressure). A
     * filter may take a buffer and queue nothing (gzip): a producer that
     * finds r->out empty, no send in flight and no filter_buffered after
     * its output call must go on by itself, as no send will call back. */
    void                    (*op_handler)(rx_http_request_t *r,
                                          const rx_cqe_t *cqe);
    /* which request of the connection an operation's completion goes
     * to (rx_http_op_ud): a parent that waits for a subrequest may still
     * have its own in flight (a proxied body's temporary file) */
    uint8_t                   op_tag;
    rx_http_handler_pt        write_handler;
    void                     *ctx;               /* the content handler's */
    void                     *upstream;          /* rx_http_upstream_t */
    /* The client connection went while the request lived: the handler
     * lets go of what it holds elsewhere (an upstream connection). */
    void                    (*abort_handler)(rx_http_request_t *r);
    /* A send to the client failed (it left mid-response): true when the
     * handler goes on without it (a fetch for the cache that others
     * wait for); r->client_gone is set and its output is dropped. */
    bool                    (*detach_handler)(rx_http_request_t *r);
    /* Called once when the response went out whole, after the log line,
     * before the request ends: RX_AGAIN keeps the request, which goes on
     * with client_gone set (nothing more reaches the client) and ends
     * when its next response is done (a cache's background update). */
    rx_int_t                (*after_response)(rx_http_request_t *r);
    rx_posted_t               gone_done;         /* client_gone's end */
    rx_str_t                  log_upstream;      /* error log's "upstream:" */
    /* Operations of other connections that still read the request's
     * memory (a send to an upstream): the pool waits for them. */
    rx_uint_t                 holds;
    /* After a 101: the client's bytes go here instead of the parser
     * (len 0: the client closed; negative: -errno). */
    void                    (*tunnel_read)(rx_http_request_t *r,
                                           const char *data, ssize_t len);
    void                     *gzip_ctx;          /* modules/gzip.c's state */
    void                     *open_file_ctx;     /* http_open_file.c's, while
                                                    an open is in flight */
    void                     *auth_request_ctx;  /* modules/auth_request.c's */
    void                     *ssi_ctx;           /* modules/ssi.c's */
    void                     *addition_ctx;      /* modules/addition.c's */
    void                     *slice_ctx;         /* modules/slice.c's */
    void                     *mirror_ctx;        /* modules/mirror.c's */
    /* an in-body subrequest's (http_postpone.c): where its body goes */
    void                     *postpone_ctx;
    void                     *userid_ctx;        /* modules/userid.c's */
    void                     *sub_filter_ctx;    /* modules/sub_filter.c's */
    void                     *gunzip_ctx;        /* modules/gunzip.c's */
    void                     *cache_ctx;         /* http_cache*.c's */
    uint8_t                   cache_status;      /* rx_http_cache_status_e,
                                                    $upstream_cache_status */
    void                     *charset_ctx;       /* modules/charset*.c's */
    rx_uint_t                 content_index;     /* content handler running */
    /* what limit_req / limit_conn decided (modules/limit_*.c; 0: not yet),
     * once per request whatever internal redirects follow, as nginx */
    uint8_t                   limit_req_status;
    uint8_t                   limit_conn_status;
    /* limit_rate (http_limit_rate.c): bytes a second (0: no limit), the
     * bytes sent before it applies, and the timer of a paced send (NULL
     * until the first delay); *_set: evaluated, or given by $limit_rate */
    size_t                    limit_rate;
    size_t                    limit_rate_after;
    rx_timer_t               *rate_timer;

    unsigned                  keepalive:1;
    unsigned                  header_only:1;     /* HEAD, 204, 304 */
    unsigned                  header_sent:1;
    unsigned                  internal:1;        /* after an internal redirect */
    unsigned                  uri_changed:1;     /* a rewrite changed the URI:
                                                    find the location again */
    unsigned                  uri_rewritten:1;   /* ... and the request stayed
                                                    in its location (break):
                                                    alias cannot map it */
    unsigned                  error_page:1;      /* an error_page is being served */
    unsigned                  chunked:1;         /* response is chunked */
    unsigned                  body_read:1;       /* the whole body is in */
    unsigned                  expect_sent:1;     /* 100 Continue sent */
    unsigned                  response_done:1;   /* last_buf went out */
    unsigned                  finalized:1;
    unsigned                  logged:1;
    unsigned                  lingering_close:1;
    unsigned                  allow_ranges:1;
    unsigned                  no_body:1;         /* a handler said so */
    unsigned                  invalid_header:1;
    unsigned                  sending_file:1;    /* a splice to the client runs */
    unsigned                  upgrade:1;         /* 101: "Connection: upgrade" */
    unsigned                  freed:1;           /* waits for its holds */
    unsigned                  access_resume:1;   /* the access phase goes on
                                                    from access_index */
    /* a phase handler waits on its own timer (limit_req's delay) with
     * nothing in flight: a client that closes ends the request (499) */
    unsigned                  watch_client:1;
    /* a body filter holds input it could not process yet (its output
     * buffers are all queued): when r->out drains, the body filters run
     * again with no input before write_handler may produce more */
    unsigned                  filter_buffered:1;
    /* a body filter reads the bytes (gzip): producers must pass memory
     * buffers, not file ranges or splices */
    unsigned                  filter_need_in_memory:1;
    unsigned                  pipeline:1;        /* $pipe: it was pipelined */
    unsigned                  limit_rate_set:1;
    unsigned                  limit_rate_after_set:1;
    /* add_trailer applies (modules/headers.c): an HTTP/1.1 response is
     * chunked even with a known length, so the trailer can follow */
    unsigned                  expect_trailers:1;
    /* a subrequest whose body goes into its parent's output, in document
     * order (http_postpone.c), not dropped */
    unsigned                  in_body:1;
    /* the client left and detach_handler kept the request: what it
     * sends is dropped, its end closes the connection (http_send.c) */
    unsigned                  client_gone:1;
};

/*
 * The framing a connection's request goes out in, between the request
 * layer and the bytes: NULL is HTTP/1.1 (status line, headers, chunked
 * bodies, keepalive). An HTTP/2 stream (http_v2_stream.c) runs its one
 * request on a connection of its own whose transport makes DATA frames:
 * send_header sends the response header (a HEADERS frame) instead of the
 * HTTP/1.1 text, request_done ends the stream once the response is sent
 * (instead of keepalive or a close), closed tells it its connection goes.
 */
typedef struct {
    rx_int_t (*send_header)(rx_http_request_t *r);
    void     (*request_done)(rx_http_request_t *r);
    void     (*closed)(rx_http_connection_t *hc);
} rx_http_framing_t;

/* The HTTP side of a connection (http_connection.c owns the state). */
typedef enum {
    RX_HC_WAIT = 1,        /* no request yet, or keepalive: holds no buffer */
    RX_HC_HEADER,          /* reading a request header */
    RX_HC_PROCESS,         /* a request is being processed / answered */
    RX_HC_LINGER,          /* lingering close: draining the client */
    RX_HC_CLOSED
} rx_http_conn_state_t;

struct rx_http_connection_s {
    rx_conn_t                *conn;
    rx_http_conn_state_t      state;
    void                     *names;         /* the address's server names */
    rx_http_core_srv_conf_t  *default_server;
    rx_http_core_srv_conf_t  *server;        /* chosen by Host */
    void                     *parser;        /* http_parse.c */
    char                     *in;            /* input bytes (malloc) */
    size_t                    in_len;        /* bytes held */
    size_t                    in_size;       /* capacity */
    size_t                    in_parsed;     /* consumed by the parser */
    rx_http_request_t        *r;             /* the current request */
    rx_uint_t                 requests;      /* $connection_requests */
    uint8_t                   op_tags;       /* the last request's op_tag */
    rx_msec_t                 keepalive_start;
    rx_msec_t                 linger_deadline;
    const char               *action;        /* "while <action>" in logs */
    rx_http_core_srv_conf_t  *ssl_server;    /* chosen by SNI (modules/ssl.c) */
    const rx_http_framing_t  *framing;       /* NULL: HTTP/1.1 */
    void                     *framing_data;  /* the framing's (an h2 stream) */
    unsigned                  keepalive:1;
    unsigned                  close_after:1; /* close once the response is sent */
    unsigned                  client_eof:1;
    unsigned                  parse_failed:1; /* the parser is in error */
    unsigned                  held_stopped:1; /* reading stopped: too many
                                                 bytes wait unparsed */
    unsigned                  pipelined:1;   /* the next request's bytes came
                                                before its predecessor's
                                                response was all handed to
                                                the kernel ($pipe) */
    unsigned                  pipe_known:1;  /* pipelined was settled at
                                                that last send (http_send.c) */
    unsigned                  body_raw:1;    /* the body's bytes come without
                                                framing (a stream's DATA):
                                                no parser reads them */
    unsigned                  body_ended:1;  /* ... and the framing said
                                                they all came */
};

/* Content handler registered by a location's directive (stub_status...). */
#define rx_http_get_module_main_conf(r, module)  (r)->main_conf[(module).ctx_index]
#define rx_http_get_module_srv_conf(r, module)   (r)->srv_conf[(module).ctx_index]
#define rx_http_get_module_loc_conf(r, module)   (r)->loc_conf[(module).ctx_index]

/* http_request.c */
rx_http_request_t *rx_http_create_request(rx_http_connection_t *hc);
void rx_http_run_phases(rx_http_request_t *r);
/* A phase handler that went asynchronous and is done: the next phase. */
void rx_http_phase_next(rx_http_request_t *r);
/* ... or its phase again from the first handler (each handler that already
 * decided declines on the second visit: limit_req after its delay). */
void rx_http_phase_again(rx_http_request_t *r);
void rx_http_finalize_request(rx_http_request_t *r, rx_int_t rc);
rx_int_t rx_http_internal_redirect(rx_http_request_t *r, const rx_str_t *uri,
    const rx_str_t *args);
rx_int_t rx_http_named_location(rx_http_request_t *r, const rx_str_t *name);
/* Takes the location's settings: its content handler and error log,
 * and its limit_except block's confs when the method is not listed there. */
void rx_http_update_location_config(rx_http_request_t *r);
/* The limit_except switch alone (http_limit_except.c). */
void rx_http_limit_except(rx_http_request_t *r);
void rx_http_set_request_log(rx_http_request_t *r);
rx_int_t rx_http_send_header(rx_http_request_t *r);
rx_int_t rx_http_output_filter(rx_http_request_t *r, rx_chain_t *in);
rx_int_t rx_http_send_response(rx_http_request_t *r, rx_uint_t status,
    const rx_str_t *content_type, const rx_str_t *body);

/* http_conditional.c: the request's preconditions against a response's
 * validators (etag: the ETag value with its quotes, empty for none;
 * mtime: -1 for none): 0 (answer as planned), 304 or 412. */
rx_uint_t rx_http_test_preconditions(rx_http_request_t *r,
    const rx_str_t *etag, time_t mtime);
/* A 304 with the validators already set, no type and no body. */
rx_int_t rx_http_send_not_modified(rx_http_request_t *r);
rx_table_elt_t *rx_http_add_header_out(rx_http_request_t *r, const char *key,
    const rx_str_t *value);
void rx_http_clear_content_length(rx_http_request_t *r);
/* The write filter (the end of the body chain), and its queue without a
 * send: for bytes that must skip the body filters (an upgraded tunnel). */
rx_int_t rx_http_write_filter(rx_http_request_t *r, rx_chain_t *in);
rx_int_t rx_http_write_queue(rx_http_request_t *r, rx_chain_t *in);
/* Content-Type from the URI's extension (types / mime.types), else
 * default_type; kept when a handler already set one. */
void rx_http_set_content_type(rx_http_request_t *r);
/* The request's memory goes: now, or when the last hold is released. */
void rx_http_request_free(rx_http_request_t *r);
/* Keeps the request's memory until the connection c is freed (its
 * operations in flight may read it). */
rx_int_t rx_http_request_hold_for(rx_http_request_t *r, rx_conn_t *c);
void rx_http_request_log_error(rx_http_request_t *r, unsigned level, int err,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* nginx's line: "msg (err) while action, client: A, server: S, request: R" */
void rx_http_log_error_action(rx_http_connection_t *hc, unsigned level, int err,
    const char *action, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* http_request.c: rx_http_request_log_error with the action named. */
void rx_http_request_log_error_action(rx_http_request_t *r, unsigned level,
    int err, const char *action, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The response cannot be finished (http_phases.c): the client connection
 * closes; a subrequest ends in failure instead, and its parent goes on. */
void rx_http_close_request(rx_http_request_t *r);
/* http_phases.c: an access handler that returned RX_AGAIN is done
 * waiting: the access phase goes on from it (it is called again and
 * answers this time), with what `satisfy` had gathered so far. */
void rx_http_access_resume(rx_http_request_t *r);

/*
 * http_subrequest.c: a request made inside r for r's own use (see
 * docs/ARCHITECTURE.md, "Subrequests"). rx_http_subrequest starts a GET of
 * uri (decoded) and args (NULL: none) at the end of this loop turn:
 * internal, with r's headers and no body, in r's pool and with its
 * variables. Its response stops at its end of the filters: status and
 * headers_out are kept, the body is dropped where it is made
 * (header_only), nothing reaches the client. r waits: done(sr, data) runs
 * once, from a loop turn of its own, with sr->headers_out.status set (500
 * when the subrequest failed); sr's memory lasts as long as r's. If the
 * client connection goes first, the subrequest is aborted and done never
 * runs. One subrequest at a time per request. Returns sr, or NULL.
 */
typedef void (*rx_http_subrequest_done_pt)(rx_http_request_t *sr, void *data);
rx_http_request_t *rx_http_subrequest(rx_http_request_t *r, const rx_str_t *uri,
    const rx_str_t *args, rx_http_subrequest_done_pt done, void *data);
/* The same subrequest without the wait: r goes on, wait_sr and r's abort
 * handler stay as they are (http_background.c builds on it). */
rx_http_request_t *rx_http_subrequest_make(rx_http_request_t *r,
    const rx_str_t *uri, const rx_str_t *args,
    rx_http_subrequest_done_pt done, void *data);
/* The client connection goes: sr lets go of what it holds and never
 * ends (done does not run). */
void rx_http_subrequest_abort(rx_http_request_t *sr);
/*
 * http_background.c: subrequests that run alongside the main request r
 * (mirror, nginx's NGX_HTTP_SUBREQUEST_BACKGROUND): made as above, their
 * responses dropped, while r goes on through its phases and sends its
 * response. with_body: the subrequest has r's request body (read whole
 * and kept, memory or temporary file; r->body_read must be set), else
 * none. r's end (its access log line, the connection's next request or
 * close) waits until every one has ended; a client connection that goes
 * aborts them. Returns sr, or NULL.
 */
rx_http_request_t *rx_http_subrequest_background(rx_http_request_t *r,
    const rx_str_t *uri, const rx_str_t *args, bool with_body);
/* rx_http_request_done asks: true when r's end must wait (it is called
 * again once the last background subrequest has ended). */
bool rx_http_background_wait(rx_http_request_t *r);
/* The client connection goes (http_connection.c's on_free). */
void rx_http_background_abort(rx_http_request_t *r);
/* rx_http_op_owner among the background subrequests of main request r. */
rx_http_request_t *rx_http_background_owner(rx_http_request_t *r,
    uint8_t tag);
/* http_body.c: a background subrequest's reader gets the kept body of
 * the main request: its post_handler runs from a loop turn of its own. */
rx_int_t rx_http_background_read_body(rx_http_request_t *sr,
    const rx_http_body_reader_t *reader);
/* Where rx_http_send_header and rx_http_output_filter end for a
 * subrequest: nothing is sent; the last buffer ends the subrequest. */
rx_int_t rx_http_subrequest_header(rx_http_request_t *sr);
rx_int_t rx_http_subrequest_output(rx_http_request_t *sr, rx_chain_t *in);
/* rx_http_close_request for a subrequest: it lets go of what it holds
 * (its abort handler) and ends with 500. */
void rx_http_subrequest_fail(rx_http_request_t *sr);
/*
 * http_postpone.c: a subrequest whose response body takes its place in
 * the parent's output (ssi include, addition) or is kept in memory
 * (capture, at most max bytes: ssi's set=). The subrequest's header and
 * body run through the filters above the postpone filter (ssi of its own
 * for nested includes) and then, as the main request's bytes, through
 * those below it (gzip, chunked, the writer). The parent holds its own
 * output until done runs, so the order of the document is kept. Returns
 * sr, or NULL.
 */
rx_http_request_t *rx_http_subrequest_in_body(rx_http_request_t *r,
    const rx_str_t *uri, const rx_str_t *args, size_t capture_max,
    rx_http_subrequest_done_pt done, void *data);
/* ssi's stub: when the subrequest's status is 300 or more its body is
 * dropped; output_empty: nothing of its body reached the output. */
void rx_http_subrequest_stub(rx_http_request_t *sr);
bool rx_http_subrequest_output_empty(rx_http_request_t *sr);
/* The body a capturing subrequest kept (empty when none). */
void rx_http_subrequest_captured(rx_http_request_t *sr, rx_str_t *body);
/* A filter that held its parent's input while a subrequest ran is done
 * holding: the producer goes on when nothing waits to be sent. */
void rx_http_postpone_release(rx_http_request_t *r);
/* The request that the client connection's sends serve: r, or the
 * subrequest r waits for (http_send.c calls its write_handler). */
rx_http_request_t *rx_http_op_target(rx_http_request_t *r);
/* The request among r and the subrequests it waits for whose op_tag is
 * tag, or NULL (http_connection.c routes completions by it). */
rx_http_request_t *rx_http_op_owner(rx_http_request_t *r, uint8_t tag);
/* The client's address for this request: realip's when it replaced the
 * connection's peer, else the peer; NULL only for a request without a
 * connection. What $remote_addr, allow/deny, geo, ip_hash, the error
 * log's "client:" and $proxy_add_x_forwarded_for use. */
const rx_sockaddr_t *rx_http_remote_addr(rx_http_request_t *r);

/* http_auth.c: the user and password of "Authorization: Basic" into
 * r->headers_in.user/passwd. RX_OK; RX_DECLINED when the header is absent
 * or malformed (not Basic, bad base64, no ':', empty user); RX_ERROR. */
rx_int_t rx_http_auth_basic_user(rx_http_request_t *r);

/* http_path.c: root/alias + URI; reserve bytes for appending */
rx_int_t rx_http_map_uri_to_path(rx_http_request_t *r, rx_str_t *path,
    size_t reserve);
rx_int_t rx_http_document_root(rx_http_request_t *r, rx_str_t *root);

/* http_special.c: built-in error pages and error_page */
rx_int_t rx_http_special_response_handler(rx_http_request_t *r, rx_int_t status);
const char *rx_http_status_text(rx_uint_t status);

/* http_connection.c */
uint64_t rx_http_op_ud(rx_http_request_t *r, rx_op_kind_t kind);
void rx_http_init_connection(rx_conn_t *c);

#if (RX_HAVE_OPENSSL)
#endif
/* TLS for HTTP, filled in by modules/ssl.c at configuration load (NULL
 * without it): init_connection starts TLS on a connection to an address
 * with `listen ... ssl` (def is its default server); check_request gives
 * the request's verdict once its server is known: RX_OK or 497, 495, 496,
 * 421 (logged). */
typedef struct {
    rx_int_t (*init_connection)(rx_conn_t *c, rx_http_core_srv_conf_t *def);
    rx_int_t (*check_request)(rx_http_request_t *r);
    /* whether the handshake chose ALPN "h2" */
    bool     (*alpn_h2)(rx_conn_t *c);
} rx_http_tls_hooks_t;
extern rx_http_tls_hooks_t rx_http_tls_hooks;
/* Whether the connection is TLS ($https, $scheme, redirects). */
bool rx_http_conn_is_tls(const rx_conn_t *c);
void rx_http_request_done(rx_http_request_t *r);
/* http_connection.c: c (a table slot without a socket) carries one
 * request of another framing (an HTTP/2 stream): its HTTP connection is
 * parent's server choice with framing fr; the request's bytes come
 * through c->ops->on_read. RX_OK or RX_ERROR. */
rx_int_t rx_http_init_framed_connection(rx_conn_t *c,
    rx_http_connection_t *parent, const rx_http_framing_t *fr, void *data);
/* http_send.c: sends what r->out holds, one send in flight at a time;
 * rx_http_on_sent is the connection's on_sent (http_connection.c installs
 * it). */
void rx_http_connection_send(rx_http_connection_t *hc);
/* A request whose client is gone (client_gone) ends now: its response is
 * done, nothing more is produced (a fetch for the cache that failed). */
void rx_http_gone_end(rx_http_request_t *r);
/* What is left of r->out is sent and the request ends at the end of this
 * loop turn, not under the caller (the write filter, a last buffer
 * without bytes). */
void rx_http_send_end_posted(rx_http_request_t *r);
void rx_http_on_sent(rx_conn_t *c, ssize_t res);
/* send_timeout ran out with a send in flight: true when the request goes
 * on without its client (its detach_handler keeps it, as when the client
 * leaves); false: the caller closes the connection. */
bool rx_http_send_timed_out(rx_http_connection_t *hc);

/* The kernel took sent bytes of r->out: counted in bytes_sent, the buffers
 * they emptied dropped from the chain, the next one advanced. */
void rx_http_out_sent(rx_http_request_t *r, size_t sent);

/* http_limit_rate.c: limit_rate. start evaluates the location's
 * limit_rate and limit_rate_after (unless $limit_rate was set) when the
 * header goes; allow says how many of want bytes may be sent now: 0 means
 * none, and a worker timer calls rx_http_connection_send when some may. */
void rx_http_limit_rate_start(rx_http_request_t *r);
size_t rx_http_limit_rate_allow(rx_http_request_t *r, size_t want);
/* http_body.c: the request body's owner (see rx_http_body_mode_t).
 * Read: KEEP or STREAM as the reader says; the held bytes are parsed at
 * the end of this loop turn. RX_OK, or an HTTP status. */
rx_int_t rx_http_read_client_request_body(rx_http_request_t *r,
    const rx_http_body_reader_t *reader);
/* Drop: what is already here is parsed now (a broken body is answered
 * with its 400 rather than with the handler's response). RX_OK, or the
 * status of a broken body. */
rx_int_t rx_http_discard_request_body(rx_http_request_t *r);
/* Whether the connection may parse the request's body bytes now (false
 * while nobody has claimed a body that exists). */
bool rx_http_body_claimed(const rx_http_request_t *r);
/* Parser callbacks of the request line and header (http_request.c) and
 * of the body (http_body.c); http_connection.c installs them. */
rx_int_t rx_http_on_url(void *data, const char *at, size_t len);
rx_int_t rx_http_on_request_line(void *data);
rx_int_t rx_http_on_header(void *data, const char *k, size_t kl,
    const char *v, size_t vl);
rx_int_t rx_http_on_headers_complete(void *data);
rx_int_t rx_http_on_message_complete(void *data);
rx_int_t rx_http_on_body(void *data, const char *at, size_t len);
rx_int_t rx_http_on_chunk_size(void *data, uint64_t size);
/* The body bytes of a body_raw connection held in its input buffer go to
 * the owner (a body of unknown length checked as a chunk would be). RX_OK
 * or the owner's status (logged). */
rx_int_t rx_http_body_raw_bytes(rx_http_connection_t *hc);
/* Runs the parser over the body bytes already received. RX_OK, or the
 * status of a broken body (the connection is then closed after the
 * answer). */
rx_int_t rx_http_parse_buffered_body(rx_http_connection_t *hc);
/* http_connection.c: parse the held input at the end of this turn, and
 * read again if holding had stopped reading. */
void rx_http_connection_resume_input(rx_http_connection_t *hc);
/* http_request_body_file.c: the body's temporary file */
rx_int_t rx_http_body_spill(rx_http_request_t *r, const char *data, size_t len);
/* The path of the body's file when it has one (client_body_in_file_only),
 * else NULL ($request_body_file). */
const char *rx_http_request_body_file_name(rx_http_request_t *r);
/* The whole body is in: post_handler runs (once its file is written). */
void rx_http_request_body_complete(rx_http_request_t *r);

/* Installs the filter chains in their documented order (http_response.c). */
rx_uint_t rx_http_init_filters(const rx_cycle_t *cycle);

/* A content handler that found nothing to do after going asynchronous
 * hands the request to the next content handler. */
void rx_http_content_next(rx_http_request_t *r);

/* modules/access_log.c: writes buffered access-log lines out. */
void rx_http_log_flush_all(rx_cycle_t *cycle);

/* Runs the log-phase handlers once, when the request ends. */
void rx_http_run_log_phase(rx_http_request_t *r);

/* Phase handlers registered by modules (postconfiguration), run in order. */
rx_int_t rx_http_add_phase_handler(rx_conf_t *cf, rx_http_phase_t phase,
    rx_http_handler_pt handler);

#endif /* RX_HTTP_H */
