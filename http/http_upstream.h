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
typedef struct rx_http_upstream_conn_s  rx_http_upstream_conn_t;

/* One address of a `server` line; its failure state is per worker. */
typedef struct {
    rx_sockaddr_t  addr;
    rx_str_t       name;            /* "127.0.0.1:8080", "unix:/x" */
    rx_int_t       weight;
    rx_int_t       effective_weight;
    rx_int_t       current_weight;  /* smooth weighted round robin */
    rx_uint_t      max_fails;
    rx_msec_t      fail_timeout;
    rx_uint_t      max_conns;       /* 0: no limit */
    rx_uint_t      conns;           /* busy with a request, this worker */
    rx_uint_t      open;            /* connections open, this worker */
    rx_uint_t      idle;            /* of them, idle in the pool */
    rx_uint_t      shared_index;    /* its counter in the group's shm */
    rx_uint_t      fails;
    rx_msec_t      checked;         /* when it last failed or was tried */
    rx_msec_t      accessed;
    bool           down;
    /* `server NAME resolve`: a slot for one of the name's addresses, empty
     * (absent) until the answer gives it one (http_upstream_resolve.c) */
    bool           absent;
    /* in a request's pool (proxy_pass with variables, resolved): no TLS
     * session is kept for it */
    bool           transient;
    void          *ssl_session;     /* TLS: the last session (per worker,
                                       http_upstream_ssl.c's) */
    /* the pool's capacity, learned (http_upstream_learn.c), this worker */
    bool           learn;           /* unix: or loopback, no max_conns */
    bool           probing;         /* a connection beyond it is out */
    bool           diag_found;      /* TCP: sock_diag found its sockets */
    uint8_t        diag_misses;     /* ... or did not, so many times */
    rx_uint_t      learned;         /* connections it takes; 0: unknown */
    rx_uint_t      unconfirmed;     /* open, their request not read yet */
    rx_uint_t      stuck;           /* of them, waiting in the backlog */
    rx_msec_t      probe_after;
    rx_msec_t      logged;          /* when it was last said to be full */
    rx_msec_t      logged_up;       /* ... to take more */
    /* this worker's counters (http_metrics.h); NULL: not collected */
    struct rx_http_metrics_peer_s *metrics;
} rx_http_upstream_peer_t;

/* A `server` line as written. */
typedef struct {
    rx_str_t       name;
    rx_array_t    *addrs;           /* rx_sockaddr_t, all of a hostname's */
    rx_int_t       weight;
    rx_uint_t      max_fails;
    rx_msec_t      fail_timeout;
    rx_uint_t      max_conns;
    bool           backup;
    bool           down;
    /* `resolve`: host is looked up while running; addrs holds
     * RX_HTTP_UPSTREAM_RESOLVE_MAX empty slots, their peers are rpeers */
    bool           resolve;
    rx_str_t       host;
    in_port_t      port;
    rx_http_upstream_peer_t *peers_of;   /* its slots (set by the rr build) */
    void          *host_state;      /* the lookup (http_upstream_resolve.c) */
} rx_http_upstream_server_t;

#define RX_HTTP_UPSTREAM_RESOLVE_MAX  16   /* addresses of a resolve server */

typedef struct {
    rx_http_upstream_peer_t  *peer;
    rx_uint_t                 n;
    rx_uint_t                 absent;       /* of them, empty resolve slots */
    rx_int_t                  total_weight;
} rx_http_upstream_peers_t;

/* A balancer other than round robin (least_conn, hash, ...): set by its
 * directive in the upstream block. init runs once the peers exist; get
 * picks a peer for a try (NULL: none live) and must skip and mark the
 * peers in u->tried as round robin does (rx_http_upstream_tried/_mark). */
typedef struct rx_http_upstream_srv_conf_s rx_http_upstream_srv_conf_t;

typedef struct {
    const char               *name;
    bool                      backup;     /* supports `backup` servers */
    rx_int_t                (*init)(rx_conf_t *cf,
                                    rx_http_upstream_srv_conf_t *us);
    rx_http_upstream_peer_t *(*get)(rx_http_upstream_t *u);
} rx_http_upstream_balancer_t;

/* An upstream block (or proxy_pass's implicit one). */
struct rx_http_upstream_srv_conf_s {
    rx_str_t                  host;        /* the block's name or the host */
    in_port_t                 port;        /* implicit ones: the port */
    bool                      implicit;    /* made by proxy_pass, no block */
    bool                      no_port;     /* proxy_pass named no port */
    rx_str_t                  file;
    rx_uint_t                 line;
    rx_array_t               *servers;     /* rx_http_upstream_server_t */
    rx_http_upstream_peers_t  primary;
    rx_http_upstream_peers_t  backup;
    const rx_http_upstream_balancer_t *balancer;   /* NULL: round robin */
    void                     *balancer_conf;       /* the balancer's */
    /* keepalive: idle connections of this worker */
    rx_uint_t                 keepalive;   /* 0: no pool */
    rx_uint_t                 keepalive_requests;
    rx_msec_t                 keepalive_time;
    rx_msec_t                 keepalive_timeout;
    /* max_conns across workers and the queue (http_upstream_queue.c) */
    struct rx_http_upstream_shared_s *shared;  /* NULL: no limit, no queue */
    rx_uint_t                 queue_max;   /* 0: no queue */
    rx_msec_t                 queue_timeout;
    bool                      per_process; /* fastcgi_pass names it */
    rx_http_upstream_t       *qhead;       /* this worker's waiters, FIFO */
    rx_http_upstream_t       *qtail;
    rx_uint_t                 nqueued;
    /* `server ... resolve`: the block's resolver (else the http block's) */
    struct rx_resolver_s     *resolver;
    rx_msec_t                 resolver_timeout;
    bool                      resolve;     /* a server line has `resolve` */
    rx_http_upstream_conn_t  *idle_head;   /* most recently used first */
    rx_http_upstream_conn_t  *idle_tail;
    rx_uint_t                 nidle;
    /* this worker's counters (http_metrics.h); NULL: not collected */
    struct rx_http_metrics_ups_s *metrics;
};

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
    rx_uint_t                    ignore_headers;   /* RX_HTTP_UPSTREAM_IGN_* */
    rx_array_t                  *hide_headers;     /* rx_str_t, lower case */
    rx_array_t                  *pass_headers;     /* rx_str_t, lower case */
    int64_t                      max_temp_file_size;  /* 0: no spill */
    rx_str_t                     temp_path;        /* NUL-terminated */
    const char                  *module;           /* "proxy", for messages */
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

/* Per try, for $upstream_* variables (comma-joined as nginx). */
typedef struct {
    rx_str_t    peer;
    rx_uint_t   status;
    rx_msec_t   connect_time;     /* -1: not connected */
    rx_msec_t   header_time;      /* -1: no header */
    rx_msec_t   response_time;
    int64_t     bytes_received;
    int64_t     bytes_sent;
    int64_t     response_length;  /* body bytes, $upstream_response_length */
} rx_http_upstream_state_t;

/* A connection to a peer: bound to a request, or idle in the pool. */
struct rx_http_upstream_conn_s {
    rx_conn_t                    *c;
    rx_http_upstream_srv_conf_t  *us;
    rx_http_upstream_peer_t      *peer;
    rx_http_upstream_t           *u;          /* NULL while idle */
    rx_uint_t                     requests;   /* served on it */
    bool                          counted;    /* in the peer's open count */
    bool                          tls;        /* TLS was started on it */
    char                         *ssl_name;   /* the name it was for */
    rx_msec_t                     start;
    rx_http_upstream_conn_t      *prev;       /* the idle list */
    rx_http_upstream_conn_t      *next;
    /* watched until the peer reads its first request
     * (http_upstream_learn.c) */
    bool                          unconfirmed;
    bool                          stuck;      /* in the listen backlog */
    bool                          probe;      /* beyond the learned count */
    rx_msec_t                     sent_at;    /* 0: still going out */
    rx_http_upstream_conn_t      *wprev;
    rx_http_upstream_conn_t      *wnext;
};

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
    /* the upstream queue */
    /* the lookup of a host named at run time (http_upstream_resolve.c) */
    struct rx_http_upstream_lookup_s *lookup;
    rx_http_upstream_t              *qnext;
    rx_http_upstream_t              *qprev;
    rx_timer_t                       queue_timer;
    rx_msec_t                        queue_start;
    rx_msec_t                        queue_time;     /* $upstream_queue_time */
    uint64_t                        *tried;          /* bit per peer */
    rx_msec_t                        start_msec;     /* of the first try */
    rx_msec_t                        try_start;
    const char                      *action;         /* "while ..." */
    const char                      *error;          /* the protocol's why */

    unsigned                         header_done:1;
    unsigned                         body_done:1;
    unsigned                         keepalive:1;    /* the protocol allows */
    unsigned                         reused:1;       /* a pooled connection */
    unsigned                         request_sent:1;
    unsigned                         paused:1;       /* buffers are full */
    unsigned                         finished:1;
    unsigned                         header_sent:1;  /* to the client */
    unsigned                         buffering:1;
    unsigned                         tunnel:1;       /* after a 101 */
    unsigned                         queued:1;
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
/* Setters shared by proxy_* and fastcgi_* directives. */
const char *rx_http_upstream_set_header_list(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
const char *rx_http_upstream_set_buffers(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
const char *rx_http_upstream_parse_host(const rx_str_t *text, rx_str_t *host,
    in_port_t *port, bool *no_port);
extern const rx_conf_enum_t rx_http_upstream_ignore_headers_masks[];


/* modules/upstream.c: blocks and implicit upstreams */
rx_http_upstream_srv_conf_t *rx_http_upstream_add(rx_conf_t *cf,
    const rx_str_t *host, in_port_t port, bool no_port);
rx_http_upstream_srv_conf_t *rx_http_upstream_find(rx_http_request_t *r,
    const rx_str_t *host, in_port_t port);
/* Every upstream group of an http block (its main confs): *n of them. */
rx_http_upstream_srv_conf_t **rx_http_upstream_groups(void **main_conf,
    rx_uint_t *n);
extern rx_module_t rx_http_upstream_module;
/* For a balancer's directive in an upstream block: installs it (a second
 * one warns "load balancing method redefined", as nginx) and refuses the
 * block's `backup` servers when the balancer has none. Returns RX_CONF_OK
 * or RX_CONF_ERROR (logged). */
const char *rx_http_upstream_set_balancer(rx_conf_t *cf,
    const rx_http_upstream_balancer_t *balancer, void *balancer_conf);

/* http_upstream_queue.c */
rx_int_t rx_http_upstream_init_shared(rx_conf_t *cf,
    rx_http_upstream_srv_conf_t *us);
rx_int_t rx_http_upstream_shared_reclaim(rx_cycle_t *cycle);
rx_uint_t rx_http_upstream_peer_open(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p);
bool rx_http_upstream_conn_take(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p);
void rx_http_upstream_conn_put(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p);
bool rx_http_upstream_full(rx_http_upstream_srv_conf_t *us);
/* p can take a new connection of this worker: under max_conns and this
 * worker's share of it, or under what p was learned to take */
bool rx_http_upstream_has_room(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p);
/* A finished or idle connection closes rather than stay with this worker:
 * a connection waits in its peer's backlog, or others wait and this
 * worker holds more than its share */
bool rx_http_upstream_give_back(const rx_http_upstream_conn_t *uc);
rx_int_t rx_http_upstream_queue_add(rx_http_upstream_t *u, bool at_head);
void rx_http_upstream_queue_remove(rx_http_upstream_t *u);
void rx_http_upstream_queue_kick(rx_http_upstream_srv_conf_t *us);
void rx_http_upstream_queue_idle(rx_http_upstream_srv_conf_t *us);
void rx_http_upstream_note_pressure(rx_http_upstream_srv_conf_t *us);
void rx_http_upstream_shared_stuck(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p, int delta);
bool rx_http_upstream_stuck_elsewhere(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p);

/* http_upstream_learn.c: a unix or loopback pool's capacity, learned */
bool rx_http_upstream_learn_init(rx_http_upstream_srv_conf_t *us);
bool rx_http_upstream_learn_full(const rx_http_upstream_peer_t *p);
void rx_http_upstream_learn_opened(rx_http_upstream_conn_t *uc);
int64_t rx_http_upstream_learn_split(const rx_http_upstream_t *u);
void rx_http_upstream_learn_sent(rx_http_upstream_conn_t *uc);
void rx_http_upstream_learn_read(rx_http_upstream_conn_t *uc);
void rx_http_upstream_learn_closed(rx_http_upstream_conn_t *uc);
bool rx_http_upstream_learn_give_way(const rx_http_upstream_conn_t *uc);

/* http_upstream_resolve.c. For proxy_pass and fastcgi_pass with variables
 * whose host names no upstream: u gets its own peers, from the address
 * itself (an IP address, unix:) or from the location's resolver when the
 * exchange starts. RX_DECLINED: a name and no resolver (the caller logs
 * nginx's "no resolver defined to resolve"). */
rx_int_t rx_http_upstream_resolve_host(rx_http_upstream_t *u,
    const rx_str_t *host, in_port_t port);
/* The block's `server ... resolve` lines at load (a resolver is needed),
 * and their lookups in each worker (init_process). */
rx_int_t rx_http_upstream_resolve_init(rx_conf_t *cf,
    rx_http_upstream_srv_conf_t *us);
void rx_http_upstream_resolve_worker(rx_http_upstream_srv_conf_t *us);

/* http_upstream_variables.c */
rx_int_t rx_http_upstream_add_variables(rx_conf_t *cf);

/* http_upstream_rr.c: peers */
rx_int_t rx_http_upstream_init_peers(rx_conf_t *cf,
    rx_http_upstream_srv_conf_t *us);
rx_http_upstream_peer_t *rx_http_upstream_get_peer(rx_http_upstream_srv_conf_t *us,
    uint64_t *tried);
rx_uint_t rx_http_upstream_npeers(const rx_http_upstream_srv_conf_t *us);
/* without the empty slots of resolve servers */
rx_uint_t rx_http_upstream_npresent(const rx_http_upstream_srv_conf_t *us);
/* For balancers: the peer's index (primary first, then backup), whether a
 * request tried it, marking it tried, and whether it may take a request
 * now (not down, not over max_conns, not failed within fail_timeout). */
rx_uint_t rx_http_upstream_peer_index(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p);
bool rx_http_upstream_tried(const rx_http_upstream_t *u, rx_uint_t index);
void rx_http_upstream_mark_tried(rx_http_upstream_t *u, rx_uint_t index);
void rx_http_upstream_mark_untried(rx_http_upstream_t *u,
    const rx_http_upstream_peer_t *p);
bool rx_http_upstream_peer_available(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p);
/* Takes the peer for a try: counts its connection, notes the time. */
void rx_http_upstream_take_peer(rx_http_upstream_peer_t *p);
void rx_http_upstream_free_peer(rx_http_upstream_peer_t *peer, bool failed);

/* http_upstream_ssl.c (with OpenSSL): TLS on a connected peer. start
 * returns RX_OK or RX_ERROR (logged); error logs, in nginx's words, why a
 * TLS connection failed (res: -errno, or 0 for a close) and returns false
 * when TLS had no part in it. */
rx_int_t rx_http_upstream_ssl_start(rx_http_upstream_t *u);
bool rx_http_upstream_ssl_error(rx_http_upstream_t *u, ssize_t res);
/* For the SSL_CTX of *_ssl_session_reuse: keep each peer's last session. */
void rx_http_upstream_ssl_cache_sessions(void *ssl_ctx);

/* http_upstream_keepalive.c: the idle pool */
rx_http_upstream_conn_t *rx_http_upstream_keepalive_get(
    rx_http_upstream_srv_conf_t *us, rx_http_upstream_peer_t *peer);
/* Keeps the connection when the pool takes it; else closes it. */
void rx_http_upstream_keepalive_put(rx_http_upstream_conn_t *uc);
void rx_http_upstream_keepalive_remove(rx_http_upstream_conn_t *uc);
void rx_http_upstream_keepalive_give_back(rx_http_upstream_srv_conf_t *us);

#endif /* RX_HTTP_UPSTREAM_H */
