/*
 * event.h: one worker's event layer: the connection table, the timers and
 * the transport seam the HTTP code reads and writes through. Every
 * operation is a completion: submit with a kind, get called back.
 */
#ifndef RX_EVENT_H
#define RX_EVENT_H

#include <sys/uio.h>
#include "core.h"
#include "cycle.h"
#include "heap.h"
#include "proxy_protocol.h"
#include "ring.h"
#include "slab.h"

typedef struct rx_conn_s       rx_conn_t;
typedef struct rx_timer_s      rx_timer_t;
typedef struct rx_transport_s  rx_transport_t;

typedef struct rx_posted_s     rx_posted_t;
typedef struct rx_tls_conn_s   rx_tls_conn_t;

typedef void (*rx_timer_handler_pt)(rx_timer_t *t);

/* The events module's conf (event_conf.c). */
typedef struct {
    rx_uint_t    connections;             /* worker_connections */
    rx_int_t     multi_accept;
    rx_int_t     accept_mutex;
    rx_str_t     use;
    bool         use_epoll;               /* use epoll; (else io_uring) */
} rx_event_conf_t;

/* The events conf: the parsed one (NULL before a configuration loaded). */
rx_event_conf_t *rx_event_get_conf(rx_cycle_t *cycle);

/* Work deferred to the end of the current loop turn (before the loop
 * sleeps again): lets a layer call back its protocol without re-entering
 * it from inside the protocol's own call. Embedded in its owner. */
struct rx_posted_s {
    void        (*handler)(rx_posted_t *p);
    void         *data;
    rx_posted_t  *prev;
    rx_posted_t  *next;
    bool          queued;
};

/* A deadline in the worker's heap; embedded in its owner. */
struct rx_timer_s {
    rx_heap_node_t       node;      /* node.key is the deadline (ms) */
    rx_timer_handler_pt  handler;
    void                *data;
};

/* Callbacks from a connection to its protocol (HTTP). */
typedef struct {
    /* Bytes arrived (plaintext); len 0 means the peer closed its side,
     * negative is -errno. The data is only valid during the call. */
    void (*on_read)(rx_conn_t *c, const char *data, ssize_t len);
    /* A send finished: bytes written or -errno. */
    void (*on_sent)(rx_conn_t *c, ssize_t res);
    /* The connection is being freed: drop every reference to it. */
    void (*on_free)(rx_conn_t *c);
    /* Any other operation the protocol submitted on the connection's slot
     * (file open, read, splice ...) completed. Called also while the
     * connection closes, so that the protocol can release what the
     * operation produced (an fd); c->state tells which. The tag given to
     * rx_conn_ud_tag comes back as rx_op_tag(cqe->user_data). */
    void (*on_op)(rx_conn_t *c, const rx_cqe_t *cqe);
} rx_conn_ops_t;

/*
 * The transport seam: plain TCP or TLS (event/tls.c, kTLS included),
 * without the HTTP code knowing which. send() takes iovecs that must stay valid until on_sent.
 */
struct rx_transport_s {
    const char *name;
    void (*start_read)(rx_conn_t *c);
    void (*stop_read)(rx_conn_t *c);
    void (*send)(rx_conn_t *c, const struct iovec *iov, int niov);
    void (*shutdown_write)(rx_conn_t *c);
    /* Optional: the ring's recv and send completions go here instead of
     * straight to the protocol (TLS decrypts and encrypts in between). */
    void (*recv_done)(rx_conn_t *c, const char *data, ssize_t len);
    void (*send_done)(rx_conn_t *c, ssize_t res);
};

typedef enum {
    RX_CONN_FREE = 0,
    RX_CONN_ACTIVE,       /* owned by its protocol */
    RX_CONN_CLOSING       /* waiting for in-flight operations to finish */
} rx_conn_state_t;

struct rx_conn_s {
    int                    fd;
    uint32_t               slot;
    uint32_t               gen;         /* bumped on free: stale CQEs drop */
    uint32_t               inflight;    /* operations the kernel holds */
    rx_conn_state_t        state;
    bool                   reading;     /* a (multishot) recv is armed */
    bool                   want_read;   /* the protocol wants bytes */
    bool                   read_eof;
    bool                   reusable;    /* on the reusable list */
    bool                   reclaimed;   /* closed to make room for a new one */
    bool                   idle;        /* between requests (keepalive):
                                           closed by a graceful stop */
    bool                   quiet_send;  /* one is out (conn_quiet.c) */
    bool                   quiet_off;   /* a quiet send came back short:
                                           this socket's sends wait */
    uint32_t               quiet_ticket;
    rx_msec_t              idle_since;  /* when it became idle */
    bool                   sending;
    bool                   nonblocking; /* O_NONBLOCK set on fd (sendfile) */
    bool                   free_queued; /* on the worker's free_later list */
    bool                   recv_armed;  /* a recv was armed once: the next
                                           is multishot */
    bool                   rearm_queued; /* on the worker's rearm list */
    /* What a direct send (rx_conn_send_last, _end) sent before the rest
     * went through the ring (added to that send's count); while a quiet
     * send is out, its length. In padding. */
    uint32_t               sent_direct;
    rx_listening_t        *listening;
    rx_sockaddr_t         *peer;        /* NULL until rx_conn_peer() */
    rx_sockaddr_t         *local;       /* NULL until rx_conn_local() */
    rx_pool_t             *pool;        /* lives as long as the connection */
    rx_log_t               log;
    rx_uint_t              number;      /* $connection */
    rx_timer_t             timer;
    const rx_conn_ops_t   *ops;
    const rx_transport_t  *transport;
    rx_tls_conn_t         *tls;         /* NULL on plain TCP */
    /* What the balancer's PROXY protocol header said (c->pool); NULL on
     * a listener without proxy_protocol, or when the header carried no
     * address. */
    rx_proxy_protocol_t   *proxy_protocol;
    /* While the header is awaited: the reading state of
     * event/conn_proxy_protocol.c, which gets every received byte before
     * the transport does. */
    void                  *pp_read;
    void                  *data;        /* the protocol's connection */
    rx_conn_t             *reuse_prev;  /* the reusable list; reuse_next */
    rx_conn_t             *reuse_next;  /* also links the free_later list */
    rx_msec_t              start_msec;
    /* a direct send that took every byte, reported at the end of the turn */
    rx_posted_t            sent_posted;
};

#define RX_CONN_QUIET_MAX  256     /* quiet sends out at once */
#define RX_CONN_REARM_MAX  256     /* receives re-armed at a turn's end */

/* The worker: its table, its timers, its state. The only global of the
 * event layer besides the ring. */
typedef struct {
    rx_cycle_t      *cycle;
    rx_uint_t        index;           /* worker number */
    rx_conn_t       *conns;
    rx_uint_t        nconns;          /* worker_connections */
    rx_uint_t        nfree;
    uint32_t        *free_slots;      /* stack of free slot numbers */
    rx_heap_t        timers;
    rx_conn_t       *reuse_head;      /* oldest reusable connection */
    rx_conn_t       *reuse_tail;
    rx_uint_t        nreusable;
    rx_uint_t        nreclaiming;     /* reclaimed, slot not yet free */
    rx_conn_t       *free_later;      /* closed, freed at the end of the turn */
    rx_buf_ring_t   *recv_bufs;
    unsigned         recv_buf_size;
    rx_slab_t        conn_pools;      /* connections' own pool blocks */
    rx_uint_t        connection_counter;
    bool             quit;            /* graceful stop in progress */
    bool             terminate;
    rx_timer_t       shutdown_timer;
    rx_log_limit_t   reuse_limit;     /* "worker_connections are not enough" */
    rx_log_limit_t   accept_limit;    /* accept4() failures */
    rx_posted_t     *posted_head;
    rx_posted_t     *posted_tail;
    /* slots whose quiet send is out (conn_quiet.c; some settled since) */
    uint32_t         quiet[RX_CONN_QUIET_MAX];
    unsigned         nquiet;
    /* slots whose receive ended after data this turn, for a standing one */
    uint32_t         rearm[RX_CONN_REARM_MAX];
    unsigned         nrearm;
} rx_worker_t;

extern rx_worker_t rx_worker;

#define RX_RECV_GROUP  1

/* conn.c */
rx_int_t rx_conn_table_init(rx_worker_t *w, rx_uint_t n);
void rx_conn_table_free(rx_worker_t *w);
rx_conn_t *rx_conn_get(rx_worker_t *w, int fd, rx_listening_t *ls);
void rx_conn_close(rx_conn_t *c);
void rx_conn_free_closed(rx_worker_t *w);
void rx_conn_rearm_sweep(rx_worker_t *w);
void rx_conn_handle_cqe(rx_worker_t *w, const rx_cqe_t *cqe);
void rx_conn_set_reusable(rx_conn_t *c, bool reusable);
void rx_conn_set_idle(rx_conn_t *c, bool idle);
bool rx_conn_reclaim(rx_worker_t *w, rx_conn_t *spare);
rx_msec_t rx_conn_close_idle(rx_worker_t *w, rx_msec_t quiet, bool force);
/* worker_loop.c: a graceful stop closes idle connections once quiet */
void rx_worker_close_idle_later(rx_worker_t *w);

/* mem_tidy.c */
void rx_mem_tidy_init(rx_worker_t *w);
void rx_mem_tidy_turn(rx_worker_t *w);
const rx_sockaddr_t *rx_conn_peer(rx_conn_t *c);
const rx_sockaddr_t *rx_conn_local(rx_conn_t *c);
uint64_t rx_conn_ud(rx_conn_t *c, rx_op_kind_t kind);
uint64_t rx_conn_ud_tag(rx_conn_t *c, rx_op_kind_t kind, uint8_t tag);
extern const rx_transport_t rx_plain_transport;

/* timer.c */
void rx_timer_add(rx_timer_t *t, rx_msec_t after);
void rx_timer_del(rx_timer_t *t);
bool rx_timer_is_set(const rx_timer_t *t);
rx_msec_t rx_timers_next_wait(rx_worker_t *w);
void rx_timers_expire(rx_worker_t *w);

/* posted.c */
void rx_post(rx_posted_t *p);
void rx_post_cancel(rx_posted_t *p);
void rx_posted_run(rx_worker_t *w);

/* conn.c: arms the multishot recv without changing want_read. */
void rx_conn_arm_recv(rx_conn_t *c);

/* conn.c: received bytes (or 0: EOF, or -errno) to the transport (TLS) or
 * straight to the protocol: the path of every recv once nothing reads
 * ahead of them (the PROXY protocol header). */
void rx_conn_deliver(rx_conn_t *c, const char *data, ssize_t len);

/* conn.c: a log handler for lines about a connection before its protocol
 * has one of its own (TLS handshake, PROXY protocol): appends nginx's
 * ", client: ADDR, server: ADDR" (log->data is the connection). */
size_t rx_conn_log_client_server(rx_log_t *log, char *buf, size_t len);

/*
 * conn_proxy_protocol.c: the connection starts with a PROXY protocol
 * header (listen ... proxy_protocol). Call before the first read; every
 * byte received goes to the header's reader first, then what follows it
 * to the transport, in order, as if it had come alone: HTTP's first
 * bytes, or a TLS ClientHello (the header comes before TLS). A broken,
 * oversized or truncated header is logged (nginx's words: `broken header:
 * "..." while reading PROXY protocol, client: ..., server: ...`) and the
 * connection closed. The wait is bounded by the protocol's own timer.
 * The header's addresses end up in c->proxy_protocol. RX_ERROR when out
 * of memory.
 */
rx_int_t rx_conn_proxy_protocol_start(rx_conn_t *c);
/* The header is still awaited (the protocol's timeout names it). */
bool rx_conn_proxy_protocol_reading(const rx_conn_t *c);
/* conn.c: a recv while the header is awaited. */
void rx_conn_proxy_protocol_recv(rx_conn_t *c, const char *data, ssize_t len);

/* Sends the iovecs as they are through the ring (one RX_OP_SEND): the
 * plain transport's send, and TLS's once the kernel encrypts. */
void rx_conn_send_iov(rx_conn_t *c, const struct iovec *iov, int niov);
/* The connection's last send: its protocol closes it as soon as this send
 * is done, reads nothing more and needs no lingering close. Over plain TCP
 * on io_uring it is sent at once (sendmsg) and the FIN queued behind it
 * (shutdown), so both leave in one segment; elsewhere, or for what the
 * socket did not take, it is the transport's send. on_sent comes as usual,
 * never from inside this call. iov (the caller's, valid until on_sent)
 * may be advanced past what was sent directly. */
void rx_conn_send_last(rx_conn_t *c, struct iovec *iov, int niov);
/* The last send of a response on a connection that stays open: at once
 * (sendmsg) when the loop turn is light (see conn.c), else the transport's
 * send; on_sent as for rx_conn_send_last, iov likewise. */
#define RX_CONN_LIGHT_TURN  2
void rx_conn_send_end(rx_conn_t *c, struct iovec *iov, int niov);
/* Offers iov to a plain connection's socket on the worker's thread
 * (sendmsg, MSG_DONTWAIT, plus flags): the bytes it took; 0 when it took
 * none or the connection is not a plain one free to send. Errors are left
 * to the ring's send that follows, which reports them. */
size_t rx_conn_send_inline(rx_conn_t *c, const struct iovec *iov, int niov,
    int flags);

/* conn_quiet.c: msg's iovecs sent inside the loop's next io_uring_enter,
 * posting nothing when the socket takes them all (event/ring_quiet.c).
 * false: not now (a loop turn that is not light, TLS, epoll, a send out,
 * a socket that once came back short, the kernel); send otherwise.
 * true: on_sent comes as for any send, never from inside this call: the
 * length, once the kernel has taken it and no failure came back; else the
 * bytes that went (0 for none) or -errno, and this connection's sends go
 * through the ring from then on. msg, its iovecs and their bytes stay
 * valid until on_sent. */
bool rx_conn_send_quiet(rx_conn_t *c, const struct msghdr *msg);
/* After the loop's completions: the quiet sends the kernel has taken
 * without a failure are done. */
void rx_conn_quiet_sweep(rx_worker_t *w);
/* conn.c's: before another completion of c, and at its close. */
void rx_conn_quiet_settle(rx_conn_t *c);
void rx_conn_quiet_failed(rx_conn_t *c, ssize_t res);
void rx_conn_quiet_close(rx_conn_t *c);

/* accept.c */
rx_int_t rx_accept_init(rx_worker_t *w);
void rx_accept_handle_cqe(rx_worker_t *w, const rx_cqe_t *cqe);
void rx_accept_pause(rx_worker_t *w);
void rx_accept_resume(rx_worker_t *w);
/* Fast stop: accepts cancelled, what they still bring closed. */
void rx_accept_stop(rx_worker_t *w);
/* Graceful stop: accepts cancelled, what waits in the backlogs served, then
 * our copies of the listening sockets closed (rx_accept_draining() counts
 * the listeners still to go: the worker stays until it is 0). */
void rx_accept_stop_gracefully(rx_worker_t *w);
rx_uint_t rx_accept_draining(void);
void rx_accept_slot_freed(rx_worker_t *w);
rx_uint_t rx_accept_held(void);

/* Set by the protocol: called for each accepted connection. */
extern void (*rx_event_init_connection)(rx_conn_t *c);

/* worker_loop.c: work a higher layer starts once the worker's loop is
 * set up (its ring, timers and table exist: init_process is too early for
 * timers). Registered from init_process; at most RX_WORKER_START_MAX. */
#define RX_WORKER_START_MAX  8
rx_int_t rx_worker_at_start(void (*handler)(rx_cycle_t *cycle));

#endif /* RX_EVENT_H */
