/*
 * http_upstream_int.h: the upstream engine's own header. The files of the
 * engine (http/http_upstream*.c: the exchange, its peers and balancers,
 * the capacity of a group, TLS, lookups, the upstream {} block) share
 * these; a protocol (proxy, FastCGI) uses http_upstream.h only.
 */
#ifndef RX_HTTP_UPSTREAM_INT_H
#define RX_HTTP_UPSTREAM_INT_H

#include "http_upstream.h"

/* One address of a `server` line; its failure state is per worker. */
struct rx_http_upstream_peer_s {
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
};

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
    /* at the end of the loop turn (http_upstream_keepalive.c): the
     * connects left to it, then the pool's excess over keepalive closed */
    rx_posted_t               turn;
    rx_http_upstream_t       *dhead;       /* deferred connects, FIFO */
    rx_http_upstream_t       *dtail;
    rx_uint_t                 ndeferred;
    /* this worker's counters (http_metrics.h); NULL: not collected */
    struct rx_http_metrics_ups_s *metrics;
};

/* The group's peers, primary and backup (resolve slots included). */
static inline rx_uint_t
rx_http_upstream_npeers(const rx_http_upstream_srv_conf_t *us)
{
    return us->primary.n + us->backup.n;
}

/* Per try, for $upstream_* variables (comma-joined as nginx). */
struct rx_http_upstream_state_s {
    rx_str_t    peer;
    rx_uint_t   status;
    rx_msec_t   connect_time;     /* -1: not connected */
    rx_msec_t   header_time;      /* -1: no header */
    rx_msec_t   response_time;
    int64_t     bytes_received;
    int64_t     bytes_sent;
    int64_t     response_length;  /* body bytes, $upstream_response_length */
};

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
    rx_msec_t                     idle_at;    /* put back to the pool */
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

/* http_upstream_block.c */
/* Every upstream group of an http block (its main confs): *n of them
 * (the metrics module walks them). */
rx_http_upstream_srv_conf_t **rx_http_upstream_groups(void **main_conf,
    rx_uint_t *n);
extern rx_module_t rx_http_upstream_module;
/* For a balancer's directive in an upstream block: installs it (a second
 * one warns "load balancing method redefined", as nginx) and refuses the
 * block's `backup` servers when the balancer has none. Returns RX_CONF_OK
 * or RX_CONF_ERROR (logged). */
const char *rx_http_upstream_set_balancer(rx_conf_t *cf,
    const rx_http_upstream_balancer_t *balancer, void *balancer_conf);

/* The capacity of a group, in layers that each call only those below:
 * the exchange asks http_upstream_queue.c (the interface), which stands
 * on learning, the idle pool and the shared counts; round robin asks the
 * counts alone. */

/* http_upstream_queue.c: the capacity interface. conn_open counts a new
 * connection to uc->peer if max_conns allows it (false: it does not);
 * conn_release gives a request's connection back (kept idle or closed);
 * conn_closed is the connection's end (idle: it was in the pool). */
bool rx_http_upstream_conn_open(rx_http_upstream_conn_t *uc);
void rx_http_upstream_conn_release(rx_http_upstream_conn_t *uc);
void rx_http_upstream_conn_closed(rx_http_upstream_conn_t *uc, bool idle);
/* Every server is full: u waits (at the head when the queue was resuming
 * it: it keeps its place), and the queue calls resume when a
 * connection may be free, failed when none came in time. RX_OK, or
 * RX_DECLINED when the queue is full (the caller answers 503). */
rx_int_t rx_http_upstream_queue_add(rx_http_upstream_t *u,
    void (*resume)(rx_http_upstream_t *u),
    void (*failed)(rx_http_upstream_t *u, rx_int_t status));
void rx_http_upstream_queue_remove(rx_http_upstream_t *u);
void rx_http_upstream_queue_kick(rx_http_upstream_srv_conf_t *us);

/* http_upstream_learn.c: a unix or loopback pool's capacity, learned.
 * init: at load, whether the group learns any peer's. */
bool rx_http_upstream_learn_init(rx_http_upstream_srv_conf_t *us);
void rx_http_upstream_learn_opened(rx_http_upstream_conn_t *uc);
int64_t rx_http_upstream_learn_split(const rx_http_upstream_t *u);
void rx_http_upstream_learn_sent(rx_http_upstream_conn_t *uc);
void rx_http_upstream_learn_read(rx_http_upstream_conn_t *uc);
void rx_http_upstream_learn_closed(rx_http_upstream_conn_t *uc);

/* http_upstream_keepalive.c: the idle pool */
rx_http_upstream_conn_t *rx_http_upstream_keepalive_get(
    rx_http_upstream_srv_conf_t *us, rx_http_upstream_peer_t *peer);
/* Keeps the connection when the pool takes it (true); else closes it. */
bool rx_http_upstream_keepalive_put(rx_http_upstream_conn_t *uc);
void rx_http_upstream_keepalive_remove(rx_http_upstream_conn_t *uc);
/* Closes the idle connections that rx_http_upstream_give_back() names. */
void rx_http_upstream_keepalive_give_back(rx_http_upstream_srv_conf_t *us);
/* A request that found no idle connection to its peer: true when its
 * connect waits for the end of the loop turn (a connection put back in
 * the meantime serves it instead), then `connect` runs (the exchange's:
 * the pool is below it and calls it only through this hook); false:
 * connect now. undefer: it ends before (any state). */
bool rx_http_upstream_keepalive_defer(rx_http_upstream_t *u,
    void (*connect)(rx_http_upstream_t *u));
void rx_http_upstream_keepalive_undefer(rx_http_upstream_t *u);

/* http_upstream_shared.c: the counts, across workers, and what they say */
rx_int_t rx_http_upstream_init_shared(rx_conf_t *cf,
    rx_http_upstream_srv_conf_t *us, bool learn);
rx_int_t rx_http_upstream_shared_reclaim(rx_cycle_t *cycle);
const rx_array_t *rx_http_upstream_shared_groups(void);
rx_uint_t rx_http_upstream_peer_open(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p);
bool rx_http_upstream_conn_take(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p);
void rx_http_upstream_conn_put(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p);
/* Every server that is not down is full: waiting helps. */
bool rx_http_upstream_full(rx_http_upstream_srv_conf_t *us);
/* p can take a new connection of this worker: under max_conns and this
 * worker's share of it, or under what p was learned to take */
bool rx_http_upstream_has_room(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p);
/* The peer holds all the connections this worker learned it takes. */
bool rx_http_upstream_learn_full(const rx_http_upstream_peer_t *p);
/* A finished or idle connection closes rather than stay with this worker:
 * a connection waits in its peer's backlog, or others wait and this
 * worker holds more than its share */
bool rx_http_upstream_give_back(const rx_http_upstream_conn_t *uc);
bool rx_http_upstream_learn_give_way(const rx_http_upstream_conn_t *uc);
void rx_http_upstream_note_pressure(rx_http_upstream_srv_conf_t *us);
bool rx_http_upstream_wanted_elsewhere(const rx_http_upstream_srv_conf_t *us);
uint32_t rx_http_upstream_shared_wait(rx_http_upstream_srv_conf_t *us,
    int delta);
uint32_t rx_http_upstream_shared_waiting(const rx_http_upstream_srv_conf_t *us);
bool rx_http_upstream_shared_enter(rx_http_upstream_srv_conf_t *us,
    uint32_t *waiting);
void rx_http_upstream_shared_stuck(rx_http_upstream_srv_conf_t *us,
    rx_http_upstream_peer_t *p, int delta);
bool rx_http_upstream_stuck_elsewhere(const rx_http_upstream_srv_conf_t *us,
    const rx_http_upstream_peer_t *p);

/* http_upstream_resolve.c: the block's `server ... resolve` lines at load (a resolver is needed),
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

/* http_upstream.c: the exchange. run: it begins (the client's body is in,
 * or streams); finalize (http_upstream_try.c): it ends with rc for the
 * request; abort (http_upstream_stop.c): the client went away; cleanup
 * (http_upstream_stop.c): the request's pool goes (a pool cleanup). */
void rx_http_upstream_run(rx_http_upstream_t *u);
void rx_http_upstream_finalize(rx_http_upstream_t *u, rx_int_t rc);
void rx_http_upstream_abort(rx_http_request_t *r);
void rx_http_upstream_cleanup(void *data);

/* http_upstream_try.c: a try's phase, record and end */
void rx_http_upstream_set_phase(rx_http_upstream_t *u,
    rx_http_upstream_phase_e phase);
void rx_http_upstream_log_error(rx_http_upstream_t *u, unsigned level, int err,
    const char *msg);
void rx_http_upstream_set_log_upstream(rx_http_upstream_t *u,
    const rx_str_t *peer);
/* The one reset for a try (the first or a retry). RX_OK or RX_ERROR. */
rx_int_t rx_http_upstream_try_begin(rx_http_upstream_t *u);
void rx_http_upstream_try_undo(rx_http_upstream_t *u);
void rx_http_upstream_end_state(rx_http_upstream_t *u);
void rx_http_upstream_drop_connection(rx_http_upstream_t *u);
void rx_http_upstream_release_peer(rx_http_upstream_t *u, bool failed);
/* Connection and peer go, the phase is DONE. */
void rx_http_upstream_end(rx_http_upstream_t *u);

/* http_upstream_resolve.c: RX_OK (u->us set), RX_AGAIN (waits: done is
 * called with 0, u->us set, or the status to answer with) or a status. */
rx_int_t rx_http_upstream_lookup_start(rx_http_upstream_t *u,
    void (*done)(rx_http_upstream_t *u, rx_int_t status));
void rx_http_upstream_lookup_cancel(rx_http_upstream_t *u);

/* http_upstream_send.c: the request to the peer. send: RX_OK (going,
 * or all gone) or RX_ERROR (no memory); stream_kick: a streamed body's
 * bytes go on after the request's head. */
rx_int_t rx_http_upstream_send(rx_http_upstream_t *u);
void rx_http_upstream_stream_kick(rx_http_upstream_t *u);

/* http_upstream_header.c: the response header to the client (RX_OK or
 * RX_ERROR), a status's *_next_upstream condition (0: none), whether an
 * error_page answers it, and X-Accel-Redirect (the exchange ends);
 * hidden_lens: the mask of conf->hidden_lens, made at the merge. */
rx_int_t rx_http_upstream_copy_headers(rx_http_upstream_t *u);
uint64_t rx_http_upstream_hidden_lens(const rx_array_t *hide_headers);
rx_uint_t rx_http_upstream_status_ft(rx_uint_t status);
bool rx_http_upstream_has_error_page(rx_http_request_t *r, rx_uint_t status);
void rx_http_upstream_accel_redirect(rx_http_upstream_t *u,
    const rx_str_t *value);

/* http_upstream_body.c */
rx_int_t rx_http_upstream_emit_slice(rx_http_upstream_t *u);
/* Hands what was buffered to the client; stops or spills when every
 * buffer is in use. */
rx_int_t rx_http_upstream_flush(rx_http_upstream_t *u);
rx_int_t rx_http_upstream_write_handler(rx_http_request_t *r);
/* r's detach_handler: the client left; true when the exchange goes on
 * (its response is being stored in the cache). */
bool rx_http_upstream_detach(rx_http_request_t *r);
/* The body is complete: the connection is released, the response ends
 * (after what a temporary file still holds). */
void rx_http_upstream_finish_body(rx_http_upstream_t *u);
/* The body broke after the header went out: the client connection closes. */
void rx_http_upstream_cut_body(rx_http_upstream_t *u, const char *reason,
    int err);
/* The request's pool goes: the temporary file and its buffers too. */
void rx_http_upstream_free_body(rx_http_upstream_t *u);

/* http_upstream_tunnel.c */
void rx_http_upstream_start_tunnel(rx_http_upstream_t *u);
/* The client-to-upstream byte queue (tunnels, streamed request bodies). */
bool rx_http_upstream_out_send(rx_http_upstream_t *u);
void rx_http_upstream_out_sent(rx_http_upstream_t *u, ssize_t res);
void rx_http_upstream_end_tunnel(rx_http_upstream_t *u);
/* The upstream's bytes, or its end, in a tunnel (false: it ended). */
bool rx_http_upstream_tunnel_in(rx_http_upstream_t *u, const char *data,
    size_t len);
void rx_http_upstream_tunnel_eof(rx_http_upstream_t *u);
void rx_http_upstream_tunnel_free(rx_http_upstream_t *u);

/* http_upstream_body.c: *_limit_rate, after each flush of the body: its
 * value is evaluated when the body begins (buffering on only, as nginx);
 * reading pauses while the bytes read are ahead of the rate, and a timer
 * resumes it. */
void rx_http_upstream_rate_check(rx_http_upstream_t *u);

#endif /* RX_HTTP_UPSTREAM_INT_H */
