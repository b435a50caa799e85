/*
 * http_upstream.h: the upstream engine shared by proxy and FastCGI.
 *
 * An upstream is a set of peers (an `upstream {}` block, or the one
 * address of a proxy_pass). A request that goes upstream gets an
 * rx_http_upstream_t: the engine picks a peer, takes a pooled keepalive
 * connection or connects, sends what the protocol's create_request built,
 * hands received bytes to the protocol's process_header until the response
 * header is complete, then to its input_filter, which gives back decoded
 * body bytes; the engine buffers them (bounded by *_buffers) and sends
 * them to the client with backpressure on the upstream. Failures go to the
 * next peer as *_next_upstream allows, else 502/504 with nginx's lines.
 *
 * The protocol (modules/proxy.c, modules/fastcgi.c) supplies only the
 * callbacks; the engine knows nothing of HTTP/1.x or FastCGI framing.
 */
#ifndef RX_HTTP_UPSTREAM_H
#define RX_HTTP_UPSTREAM_H

#include "http.h"
#include "http_script.h"
#include "inet.h"
#include "http_temp_file.h"
#include "http_cache.h"

/* *_next_upstream conditions (bitmask). */
#define RX_HTTP_UPSTREAM_FT_ERROR           0x0002
#define RX_HTTP_UPSTREAM_FT_TIMEOUT         0x0004
#define RX_HTTP_UPSTREAM_FT_INVALID_HEADER  0x0008
#define RX_HTTP_UPSTREAM_FT_HTTP_500        0x0010
#define RX_HTTP_UPSTREAM_FT_HTTP_502        0x0020
#define RX_HTTP_UPSTREAM_FT_HTTP_503        0x0040
#define RX_HTTP_UPSTREAM_FT_HTTP_504        0x0080
#define RX_HTTP_UPSTREAM_FT_HTTP_403        0x0100
#define RX_HTTP_UPSTREAM_FT_HTTP_404        0x0200
#define RX_HTTP_UPSTREAM_FT_HTTP_429        0x0400
#define RX_HTTP_UPSTREAM_FT_NON_IDEMPOTENT  0x1000
#define RX_HTTP_UPSTREAM_FT_NOLIVE          0x4000
#define RX_HTTP_UPSTREAM_FT_OFF             0x8000

/* *_ignore_headers (bitmask). */
#define RX_HTTP_UPSTREAM_IGN_XA_REDIRECT    0x0002
#define RX_HTTP_UPSTREAM_IGN_XA_EXPIRES     0x0004
#define RX_HTTP_UPSTREAM_IGN_XA_LIMIT_RATE  0x0008
#define RX_HTTP_UPSTREAM_IGN_XA_BUFFERING   0x0010
#define RX_HTTP_UPSTREAM_IGN_XA_CHARSET     0x0020
#define RX_HTTP_UPSTREAM_IGN_EXPIRES        0x0040
#define RX_HTTP_UPSTREAM_IGN_CACHE_CONTROL  0x0080
#define RX_HTTP_UPSTREAM_IGN_SET_COOKIE     0x0100
#define RX_HTTP_UPSTREAM_IGN_VARY           0x0200

/* Returned by process_header for a response the engine must refuse. */
#define RX_HTTP_UPSTREAM_INVALID_HEADER     40

typedef struct rx_http_upstream_s       rx_http_upstream_t;
/* The engine's own (http_upstream_int.h): a protocol holds them only by
 * pointer. */
typedef struct rx_http_upstream_conn_s  rx_http_upstream_conn_t;
typedef struct rx_http_upstream_srv_conf_s rx_http_upstream_srv_conf_t;
typedef struct rx_http_upstream_peer_s  rx_http_upstream_peer_t;
typedef struct rx_http_upstream_state_s rx_http_upstream_state_t;

/* TLS to the peers (proxy_pass https://): filled by the protocol's
 * directives (modules/proxy_ssl.c); the engine starts TLS on every new
 * connection and keeps each peer's last session (http_upstream_ssl.c). */
typedef struct {
    void                        *ctx;             /* SSL_CTX */
    rx_http_complex_value_t     *name;            /* NULL: the host */
    rx_int_t                     server_name;     /* send SNI */
    rx_int_t                     verify;
    rx_int_t                     session_reuse;
} rx_http_upstream_ssl_t;

/* The engine's settings in a location: each protocol fills one from its
 * own directives (proxy_connect_timeout, fastcgi_connect_timeout ...). */
typedef struct {
    rx_http_upstream_srv_conf_t *upstream;      /* NULL: url has variables */
    rx_http_complex_value_t     *url;           /* proxy_pass with $vars */
    rx_msec_t                    connect_timeout;
    rx_msec_t                    send_timeout;
    rx_msec_t                    read_timeout;
    rx_msec_t                    next_upstream_timeout;
    rx_uint_t                    next_upstream_tries;
    rx_uint_t                    next_upstream;    /* RX_HTTP_UPSTREAM_FT_* */
    size_t                       buffer_size;      /* the response header */
    rx_int_t                     bufs_num;         /* body buffers */
    size_t                       bufs_size;
    rx_int_t                     buffering;
    rx_int_t                     request_buffering;
    rx_int_t                     pass_request_headers;
    rx_int_t                     pass_request_body;
    rx_int_t                     intercept_errors;
    rx_int_t                     ignore_client_abort;
    /* *_limit_rate: bytes a second the response is read at, with
     * buffering on (a size with variables; NULL: no limit) */
    rx_http_complex_value_t     *limit_rate;
    rx_uint_t                    ignore_headers;   /* RX_HTTP_UPSTREAM_IGN_* */
    rx_array_t                  *hide_headers;     /* rx_str_t, lower case */
    /* the lengths of the hop-by-hop and hidden names, a bit each
     * (rx_http_upstream_hidden_lens): most fields of a response are
     * passed without a look at the lists; 0: not known, every list read */
    uint64_t                     hidden_lens;
    rx_array_t                  *pass_headers;     /* rx_str_t, lower case */
    int64_t                      max_temp_file_size;  /* 0: no spill */
    rx_str_t                     temp_path;        /* NUL-terminated */
    const char                  *module;           /* "proxy", for messages */
    rx_http_cache_conf_t         cache;            /* *_cache, *_cache_key ... */
} rx_http_upstream_conf_t;

/* The response header as the protocol parsed it. */
typedef struct {
    rx_uint_t        status;
    rx_str_t         status_line;     /* "200 OK" */
    rx_array_t       headers;         /* rx_table_elt_t, as received */
    int64_t          content_length_n;
    bool             chunked;
    bool             connection_close;
    rx_table_elt_t  *location;
    rx_table_elt_t  *x_accel_redirect;
    rx_table_elt_t  *x_accel_buffering;
} rx_http_upstream_headers_in_t;

/* A try's lifecycle (u->phase). Each phase with words sets the log's
 * "while ..." (u->action), as nginx's do; the engine moves it
 * (rx_http_upstream_set_phase(), http_upstream_try.c). */
typedef enum {
    RX_HTTP_UPSTREAM_START = 0,       /* no try yet: the body, a lookup */
    RX_HTTP_UPSTREAM_QUEUED,          /* waiting for a connection */
    RX_HTTP_UPSTREAM_CONNECTING,      /* a try began: a peer, a connection */
    RX_HTTP_UPSTREAM_HANDSHAKING,     /* TLS */
    RX_HTTP_UPSTREAM_SENDING,
    RX_HTTP_UPSTREAM_READING_HEADER,
    RX_HTTP_UPSTREAM_READING,         /* the header is in: the body */
    RX_HTTP_UPSTREAM_TUNNEL,          /* after a 101 */
    RX_HTTP_UPSTREAM_DONE             /* the exchange is over */
} rx_http_upstream_phase_e;

struct rx_http_upstream_s {
    rx_http_request_t               *r;
    const rx_http_upstream_conf_t   *conf;
    rx_http_upstream_srv_conf_t     *us;
    rx_http_upstream_peer_t         *peer;
    rx_http_upstream_conn_t         *uc;
    void                            *proto;      /* the protocol's state */
    rx_str_t                         schema;     /* "http://" for logs */
    rx_str_t                         uri;        /* for the log's upstream: */
    /* TLS (the protocol sets both for https): NULL is plain TCP; ssl_host
     * is the name *_pass gave, the default SNI and verified name */
    const rx_http_upstream_ssl_t    *ssl;
    rx_str_t                         ssl_host;

    /* The protocol. process_header gets the bytes received since the last
     * call (contiguous with earlier ones in the header buffer) and returns
     * RX_AGAIN (all used, more needed), RX_OK (header complete, *used bytes
     * were header) or RX_HTTP_UPSTREAM_INVALID_HEADER. input_filter gets
     * body bytes and calls rx_http_upstream_body() with decoded ones; it
     * sets body_done (and keepalive when the connection may be reused) or
     * returns RX_ERROR for a broken body. on_eof says whether the upstream
     * closing ends the body (RX_OK) or cuts it (RX_ERROR). */
    rx_int_t  (*create_request)(rx_http_upstream_t *u);
    void      (*reinit_request)(rx_http_upstream_t *u);
    rx_int_t  (*process_header)(rx_http_upstream_t *u, const char *data,
                                size_t len, size_t *used);
    rx_int_t  (*input_filter)(rx_http_upstream_t *u, const char *data,
                              size_t len);
    rx_int_t  (*on_eof)(rx_http_upstream_t *u);
    /* Rewrite a Location/Refresh value (proxy_redirect) or a Set-Cookie
     * one (proxy_cookie_*) in place; NULL: keep. RX_OK (rewritten),
     * RX_DECLINED (left as it came) or RX_ERROR. */
    /* A request body streamed as it arrives (*_request_buffering off):
     * frames the bytes for the wire and queues them with
     * rx_http_upstream_out_append(); last: the body is complete. NULL:
     * the protocol cannot stream (the body is buffered whole). */
    rx_int_t  (*frame_body)(rx_http_upstream_t *u, const char *data,
                            size_t len, bool last);
    rx_int_t  (*rewrite_redirect)(rx_http_upstream_t *u, rx_table_elt_t *h);
    rx_int_t  (*rewrite_cookie)(rx_http_upstream_t *u, rx_table_elt_t *h);

    rx_chain_t                      *request_bufs;   /* what to send */
    /* a part of the request in a file (a spilled body): read in chunks */
    char                            *fchunk;
    int64_t                          fchunk_off;
    size_t                           fchunk_len;
    int64_t                          request_size;
    int64_t                          sent;           /* of request_bufs */
    struct iovec                     iov[16];
    struct msghdr                    quiet_msg;      /* iov, sent quietly */

    rx_http_upstream_headers_in_t    headers_in;
    char                            *header_buf;     /* buffer_size bytes */
    size_t                           header_len;

    /* body buffers: blocks of bufs_size; slices go to the client */
    char                           **blocks;
    rx_uint_t                        nblocks;        /* allocated */
    rx_uint_t                        used;           /* filled since recycle */
    char                            *fill;           /* next free byte */
    char                            *fill_end;
    char                            *slice;          /* start of unsent */
    rx_chain_t                      *pending;        /* slices to hand on */
    rx_chain_t                     **pending_last;
    int64_t                          body_bytes;

    rx_array_t                      *states;         /* rx_http_upstream_state_t */
    rx_http_upstream_state_t        *state;          /* this try's */
    rx_uint_t                        tries;          /* left */
    /* the lookup of a host named at run time (http_upstream_resolve.c) */
    struct rx_http_upstream_lookup_s *lookup;
    /* the upstream queue (http_upstream_queue.c) */
    rx_http_upstream_t              *qnext;
    rx_http_upstream_t              *qprev;
    /* a connect left to the end of the loop turn, in the group's list
     * (http_upstream_keepalive.c) */
    rx_http_upstream_t              *dnext;
    unsigned                         deferred:1;
    /* what the end of the turn calls for it (the exchange's connect) */
    void                           (*deferred_connect)(rx_http_upstream_t *u);
    /* what the queue calls: a connection may be free, or none came */
    void                           (*queue_resume)(rx_http_upstream_t *u);
    void                           (*queue_failed)(rx_http_upstream_t *u,
                                                   rx_int_t status);
    rx_timer_t                       queue_timer;
    rx_msec_t                        queue_start;
    rx_msec_t                        queue_time;     /* $upstream_queue_time */
    uint64_t                        *tried;          /* bit per peer */
    rx_msec_t                        start_msec;     /* of the first try */
    rx_msec_t                        try_start;
    rx_http_upstream_phase_e         phase;
    const char                      *action;         /* "while ...": the
                                                        phase's words */
    const char                      *error;          /* the protocol's why */

    unsigned                         header_done:1;
    unsigned                         body_done:1;
    unsigned                         keepalive:1;    /* the protocol allows */
    unsigned                         reused:1;       /* a pooled connection */
    unsigned                         request_sent:1;
    unsigned                         quiet_sent:1;   /* its last send quiet */
    unsigned                         paused:1;       /* buffers are full */
    unsigned                         header_sent:1;  /* to the client */
    unsigned                         buffering:1;
    unsigned                         tunnel:1;       /* after a 101 (stays
                                                        set once DONE) */
    unsigned                         file_body:1;    /* protocol sends file bufs */
    unsigned                         freading:1;     /* a file chunk read runs */
    unsigned                         streaming:1;    /* the body as it comes */
    unsigned                         head_sent:1;    /* request head written */
    unsigned                         body_complete:1;
    unsigned                         spilling:1;     /* body goes via the file */
    unsigned                         disk_paused:1;  /* reading waits for the disk */
    unsigned                         eof_pending:1;  /* upstream done, file not */
    unsigned                         temp_reading:1;
    unsigned                         temp_broken:1;  /* the file failed: it
                                                        is drained, no more
                                                        writes */
    unsigned                         temp_failed:1;  /* memory only now */

    /* The temporary file: a queue of body bytes between the upstream and
     * a slow client; written at its end, read back from temp_read, and
     * rewound to empty whenever the client has caught up. */
    rx_http_temp_file_t              temp;
    int64_t                          temp_read;      /* read back, handed on */
    char                            *rbuf;
    unsigned                         tunnel_paused:1; /* client reading stopped */
    /* the protocol copies what it needs of the header bytes (FastCGI:
     * records interleave STDERR and framing with the CGI header): after
     * RX_AGAIN the header buffer is refilled from its start, and the
     * protocol itself limits the header's size */
    unsigned                         header_copied:1;
    /* a 404 goes to the error page whatever *_intercept_errors says
     * (memcached's miss: nginx's intercept_404) */
    unsigned                         intercept_404:1;
    /* *_limit_rate (http_upstream_body.c): reading waits for rate_timer */
    unsigned                         rate_paused:1;
    unsigned                         rate_started:1;
    size_t                           rate;           /* 0: no limit */
    int64_t                          rate_base;      /* bytes_received then */
    rx_msec_t                        rate_start;
    rx_timer_t                       rate_timer;

    /* the tunnel's client-to-upstream bytes: malloc'd chunks, the first
     * one being sent (never moved while the kernel reads it) */
    struct rx_http_tunnel_chunk_s   *tun_head;
    struct rx_http_tunnel_chunk_s   *tun_tail;
    size_t                           tun_bytes;      /* queued, unsent */
};

/* http_upstream.c */
rx_http_upstream_t *rx_http_upstream_create(rx_http_request_t *r,
    const rx_http_upstream_conf_t *conf);
/* Reads the client body as the conf says, then connects. Returns what a
 * content handler returns. */
rx_int_t rx_http_upstream_start(rx_http_upstream_t *u);
/* For frame_body: queues bytes for the upstream. */
rx_int_t rx_http_upstream_out_append(rx_http_upstream_t *u, const char *data,
    size_t len);
/* Adds a header to the response header (protocols' process_header). */
rx_table_elt_t *rx_http_upstream_header_push(rx_http_upstream_headers_in_t *h);
/* Decoded body bytes from input_filter. */
rx_int_t rx_http_upstream_body(rx_http_upstream_t *u, const char *data,
    size_t len);
/* Merges a protocol's engine settings with nginx's defaults. */
const char *rx_http_upstream_merge_conf(rx_conf_t *cf,
    rx_http_upstream_conf_t *conf, const rx_http_upstream_conf_t *prev,
    const char *const *default_hide);
void rx_http_upstream_init_conf(rx_http_upstream_conf_t *conf);
/* Setters shared by proxy_* and fastcgi_* directives. set_accepted takes
 * a directive whose effect docs/directives.md describes (nothing to set). */
const char *rx_http_upstream_set_accepted(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
const char *rx_http_upstream_set_header_list(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
const char *rx_http_upstream_set_buffers(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
const char *rx_http_upstream_parse_host(const rx_str_t *text, rx_str_t *host,
    in_port_t *port, bool *no_port);
extern const rx_conf_enum_t rx_http_upstream_ignore_headers_masks[];

/*
 * The directives of the engine's settings, the same for every protocol on
 * it (proxy, fastcgi, and those to come): one table, written once, that a
 * protocol's command table takes with its prefix applied, e.g.
 *
 *     RX_HTTP_UPSTREAM_COMMANDS("proxy_",
 *         offsetof(rx_http_proxy_loc_conf_t, upstream), next_masks),
 *
 * gives proxy_connect_timeout and the rest, each writing the
 * rx_http_upstream_conf_t at offset `up` of the protocol's location conf;
 * `masks` are the *_next_upstream conditions the protocol knows. Every
 * name is in docs/directives.md with its prefixes.
 */
#define RX_HTTP_UPSTREAM_CMD(prefix, name, arity, set, up, field, post)      \
    { prefix name, RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF  \
      | (arity), set, RX_HTTP_LOC_CONF_OFFSET,                              \
      (up) + offsetof(rx_http_upstream_conf_t, field), post }
#define RX_HTTP_UPSTREAM_ACCEPTED(prefix, name)                              \
    { prefix name, RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF  \
      | RX_CONF_TAKE1, rx_http_upstream_set_accepted,                        \
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL }

#define RX_HTTP_UPSTREAM_COMMANDS(p, up, masks)                              \
    RX_HTTP_UPSTREAM_CMD(p, "hide_header", RX_CONF_TAKE1,                    \
        rx_http_upstream_set_header_list, up, hide_headers, NULL),           \
    RX_HTTP_UPSTREAM_CMD(p, "pass_header", RX_CONF_TAKE1,                    \
        rx_http_upstream_set_header_list, up, pass_headers, NULL),           \
    RX_HTTP_UPSTREAM_CMD(p, "ignore_headers", RX_CONF_1MORE,                 \
        rx_conf_set_bitmask_slot, up, ignore_headers,                        \
        rx_http_upstream_ignore_headers_masks),                              \
    RX_HTTP_UPSTREAM_CMD(p, "pass_request_headers", RX_CONF_FLAG,            \
        rx_conf_set_flag_slot, up, pass_request_headers, NULL),              \
    RX_HTTP_UPSTREAM_CMD(p, "pass_request_body", RX_CONF_FLAG,               \
        rx_conf_set_flag_slot, up, pass_request_body, NULL),                 \
    RX_HTTP_UPSTREAM_CMD(p, "connect_timeout", RX_CONF_TAKE1,                \
        rx_conf_set_msec_slot, up, connect_timeout, NULL),                   \
    RX_HTTP_UPSTREAM_CMD(p, "send_timeout", RX_CONF_TAKE1,                   \
        rx_conf_set_msec_slot, up, send_timeout, NULL),                      \
    RX_HTTP_UPSTREAM_CMD(p, "read_timeout", RX_CONF_TAKE1,                   \
        rx_conf_set_msec_slot, up, read_timeout, NULL),                      \
    RX_HTTP_UPSTREAM_CMD(p, "next_upstream", RX_CONF_1MORE,                  \
        rx_conf_set_bitmask_slot, up, next_upstream, masks),                 \
    RX_HTTP_UPSTREAM_CMD(p, "next_upstream_tries", RX_CONF_TAKE1,            \
        rx_conf_set_num_slot, up, next_upstream_tries, NULL),                \
    RX_HTTP_UPSTREAM_CMD(p, "next_upstream_timeout", RX_CONF_TAKE1,          \
        rx_conf_set_msec_slot, up, next_upstream_timeout, NULL),             \
    RX_HTTP_UPSTREAM_CMD(p, "buffering", RX_CONF_FLAG,                       \
        rx_conf_set_flag_slot, up, buffering, NULL),                         \
    RX_HTTP_UPSTREAM_CMD(p, "request_buffering", RX_CONF_FLAG,               \
        rx_conf_set_flag_slot, up, request_buffering, NULL),                 \
    RX_HTTP_UPSTREAM_CMD(p, "buffer_size", RX_CONF_TAKE1,                    \
        rx_conf_set_size_slot, up, buffer_size, NULL),                       \
    RX_HTTP_UPSTREAM_CMD(p, "buffers", RX_CONF_TAKE2,                        \
        rx_http_upstream_set_buffers, up, bufs_num, NULL),                   \
    RX_HTTP_UPSTREAM_CMD(p, "intercept_errors", RX_CONF_FLAG,                \
        rx_conf_set_flag_slot, up, intercept_errors, NULL),                  \
    RX_HTTP_UPSTREAM_CMD(p, "max_temp_file_size", RX_CONF_TAKE1,             \
        rx_conf_set_off_slot, up, max_temp_file_size, NULL),                 \
    RX_HTTP_UPSTREAM_CMD(p, "temp_path", RX_CONF_TAKE1234,                   \
        rx_http_set_temp_path_slot, up, temp_path, NULL),                    \
    RX_HTTP_UPSTREAM_CMD(p, "limit_rate", RX_CONF_TAKE1,                     \
        rx_http_set_complex_value_slot, up, limit_rate, NULL),               \
    RX_HTTP_UPSTREAM_ACCEPTED(p, "busy_buffers_size"),                       \
    RX_HTTP_UPSTREAM_ACCEPTED(p, "temp_file_write_size")

/* http_upstream_block.c: the upstream named by a *_pass (a block, or an
 * implicit one for a literal address), found at load or, for a *_pass with
 * variables, while running (NULL: none of that name). */
rx_http_upstream_srv_conf_t *rx_http_upstream_add(rx_conf_t *cf,
    const rx_str_t *host, in_port_t port, bool no_port);
rx_http_upstream_srv_conf_t *rx_http_upstream_find(rx_http_request_t *r,
    const rx_str_t *host, in_port_t port);
/* The upstream's peers give each connection a process of their own
 * (FastCGI): the pool's size may then be learned (http_upstream_learn.c). */
void rx_http_upstream_set_per_process(rx_http_upstream_srv_conf_t *us);

/* http_upstream_resolve.c. For proxy_pass and fastcgi_pass with variables
 * whose host names no upstream: u gets its own peers, from the address
 * itself (an IP address, unix:) or from the location's resolver when the
 * exchange starts. RX_OK, or the status to answer with: 502 for a name
 * and no resolver (nginx's "no resolver defined to resolve" is logged),
 * 500. */
rx_int_t rx_http_upstream_resolve_host(rx_http_upstream_t *u,
    const rx_str_t *host, in_port_t port);

/* http_upstream_ssl.c: for the SSL_CTX of *_ssl_session_reuse, keep each
 * peer's last session. */
void rx_http_upstream_ssl_cache_sessions(void *ssl_ctx);


#endif /* RX_HTTP_UPSTREAM_H */
