/*
 * http_upstream.c: the upstream engine's exchange (see http_upstream.h).
 * One request's exchange with a peer, as a state machine driven by
 * completions on the upstream connection (u->phase):
 *
 *   connect (or a pooled connection) -> send the request -> read the
 *   response header (protocol's process_header) -> send the header to the
 *   client -> body (protocol's input_filter -> buffers -> client) ->
 *   release the connection to the pool or close it.
 *
 * A failure before the response header reached the client goes to the next
 * peer when *_next_upstream allows; otherwise 502 (504 for timeouts). The
 * body buffers are bounded (*_buffers): when the client is slower than the
 * upstream, reading from the upstream stops until the client catches up.
 *
 * What it stands on, each calling nothing of it back: the try
 * (http_upstream_try.c), sending (_send.c), the header to the client
 * (_header.c), the body (_body.c), tunnels (_tunnel.c), TLS (_ssl.c),
 * lookups (_resolve.c), peers (_rr.c and the balancers) and the group's
 * capacity (_queue.c). A protocol enters through _start.c.
 */
#include <netinet/tcp.h>
#include "http.h"
#include "http_upstream.h"
#include "clock.h"
#include "http_upstream_int.h"
#include "http_metrics.h"

static void on_read(rx_conn_t *c, const char *data, ssize_t len);
static void on_sent(rx_conn_t *c, ssize_t res);
static void on_free(rx_conn_t *c);
static void on_op(rx_conn_t *c, const rx_cqe_t *cqe);
static void upstream_timer(rx_timer_t *t);
static void connect_peer(rx_http_upstream_t *u);
static void send_request(rx_http_upstream_t *u);
static void next_upstream(rx_http_upstream_t *u, rx_uint_t ft);
static void connect_now(rx_http_upstream_t *u);

static const rx_conn_ops_t upstream_ops = { on_read, on_sent, on_free, on_op };

static void lookup_done(rx_http_upstream_t *u, rx_int_t status);

/* The client's body is in (or streams): the exchange begins, with a lookup
 * first for a host named at run time. */
void
rx_http_upstream_run(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;
    rx_uint_t          n;
    rx_int_t           rc;

    r->op_handler = NULL;
    if (u->us == NULL) {
        /* a host named at run time: its addresses first */
        rc = rx_http_upstream_lookup_start(u, lookup_done);
        if (rc != RX_OK) {
            if (rc != RX_AGAIN) {
                rx_http_upstream_finalize(u, rc);
            }
            return;
        }
    }
    /* each peer at most once, and no more than *_next_upstream_tries;
     * the empty slots of resolve servers are no tries */
    n = rx_max(rx_http_upstream_npresent(u->us), 1);
    u->tries = u->conf->next_upstream_tries
               ? rx_min(u->conf->next_upstream_tries, n) : n;
    n = rx_http_upstream_npeers(u->us);
    u->tried = rx_pcalloc(r->pool, ((n + 63) / 64) * sizeof(uint64_t));
    if (u->tried == NULL) {
        rx_http_upstream_finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    r->write_handler = rx_http_upstream_write_handler;
    r->detach_handler = rx_http_upstream_detach;
    connect_peer(u);
}

/* The lookup ended: status 0 (u->us is set) or the one to answer with. */
static void
lookup_done(rx_http_upstream_t *u, rx_int_t status)
{
    if (u->phase == RX_HTTP_UPSTREAM_DONE) {
        return;
    }
    if (status) {
        rx_http_upstream_finalize(u, status);
        return;
    }
    rx_http_upstream_run(u);
}

static void
bind_connection(rx_http_upstream_t *u, rx_http_upstream_conn_t *uc)
{
    u->uc = uc;
    uc->u = u;
    uc->c->timer.handler = upstream_timer;
}

/* The request is built once a connection is there: what it carries
 * ($upstream_queue_time) is then known. */
static rx_int_t
build_request(rx_http_upstream_t *u)
{
    rx_int_t rc;

    if (u->request_bufs) {
        return RX_OK;
    }
    rc = u->create_request(u);
    if (rc != RX_OK) {
        rx_http_upstream_finalize(u, rc == RX_ERROR ? RX_HTTP_INTERNAL_SERVER_ERROR : rc);
        return RX_ERROR;
    }
    u->request_size = (int64_t) rx_chain_size(u->request_bufs);
    return RX_OK;
}

/* Every server is full: the request waits in the group's queue (at its
 * head when the connection it was offered went to another worker), or is
 * answered 503 when the queue is full; true either way. A group without a
 * queue tells the other workers' idle connections to go: false, and the
 * caller answers. */
static bool
wait_for_room(rx_http_upstream_t *u)
{
    if (u->us->queue_max == 0) {
        rx_http_upstream_note_pressure(u->us);
        return false;
    }
    rx_http_upstream_try_undo(u);       /* the try that found none */
    if (rx_http_upstream_queue_add(u, connect_peer,
                                  rx_http_upstream_finalize)
        != RX_OK) {
        rx_http_upstream_finalize(u, RX_HTTP_SERVICE_UNAVAILABLE);
    }
    return true;
}

/* No peer can take the request: 502, the log naming the group (the
 * block's name, or the address), as nginx's. */
static void
no_live_upstreams(rx_http_upstream_t *u)
{
    rx_http_upstream_server_t *s = u->us->servers->elts;

    if (build_request(u) != RX_OK) {
        return;                   /* for the log's upstream URI */
    }
    u->state->peer = u->us->implicit ? s[0].name : u->us->host;
    rx_http_upstream_set_log_upstream(u, &u->state->peer);
    rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "no live upstreams while "
                              "connecting to upstream");
    u->state->status = RX_HTTP_BAD_GATEWAY;
    rx_http_upstream_finalize(u, RX_HTTP_BAD_GATEWAY);
}

/* An idle pooled connection to the peer, if one speaks the location's
 * protocol: the request goes out on it. */
static bool
use_pooled(rx_http_upstream_t *u, rx_http_upstream_peer_t *peer)
{
    rx_http_upstream_conn_t *uc = rx_http_upstream_keepalive_get(u->us, peer);

    if (uc != NULL && uc->tls != (u->ssl != NULL)) {
        /* the pool is the upstream's: a location that speaks the other
         * protocol (http:// against https://) to the same peer cannot
         * use this connection */
        rx_conn_close(uc->c);
        uc = NULL;
    }
    if (uc == NULL) {
        return false;
    }
    bind_connection(u, uc);
    u->reused = 1;
    u->state->connect_time = 0;
    if (build_request(u) == RX_OK) {
        rx_http_upstream_set_log_upstream(u, &peer->name);
        send_request(u);
    }
    return true;
}

/* A socket to the peer, in a connection of the worker's table: NULL when
 * there is none (the request is answered). */
static rx_conn_t *
new_socket(rx_http_upstream_t *u, rx_http_upstream_peer_t *peer)
{
    rx_conn_t *c;
    int        fd, one = 1;

    fd = socket(peer->addr.u.sa.sa_family,
                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        rx_http_upstream_log_error(u, RX_LOG_ALERT, errno, "socket() failed");
        next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
        return NULL;
    }
    if (peer->addr.u.sa.sa_family != AF_UNIX) {
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    c = rx_conn_get(&rx_worker, fd, NULL);
    if (c == NULL) {
        close(fd);
        rx_http_request_log_error(u->r, RX_LOG_ALERT, 0, "%lu "
            "worker_connections are not enough while connecting to upstream",
            (unsigned long) rx_worker.nconns);
        rx_http_upstream_release_peer(u, false);
        u->state->status = RX_HTTP_BAD_GATEWAY;
        rx_http_upstream_finalize(u, RX_HTTP_BAD_GATEWAY);
    }
    return c;
}

/* A new connection to the peer, within its capacity: connect. */
static void
open_connection(rx_http_upstream_t *u, rx_http_upstream_peer_t *peer)
{
    rx_http_upstream_conn_t *uc;
    rx_conn_t               *c = new_socket(u, peer);

    if (c == NULL) {
        return;
    }
    uc = rx_pcalloc(c->pool, sizeof(*uc));
    if (uc == NULL) {
        rx_conn_close(c);
        rx_http_upstream_finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    uc->c = c;
    uc->us = u->us;
    uc->peer = peer;
    uc->start = rx_current_msec;
    c->data = uc;
    c->ops = &upstream_ops;
    if (!rx_http_upstream_conn_open(uc)) {
        /* another worker took the last slot since the peer was chosen */
        rx_conn_close(c);
        rx_http_upstream_release_peer(u, false);
        rx_http_upstream_mark_untried(u, peer);
        if (!wait_for_room(u)) {
            rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "no live "
                                      "upstreams while connecting to upstream");
            rx_http_upstream_finalize(u, RX_HTTP_BAD_GATEWAY);
        }
        return;
    }
    bind_connection(u, uc);
    if (build_request(u) != RX_OK) {
        return;
    }
    rx_http_upstream_set_log_upstream(u, &peer->name);
    rx_ring_connect(c->fd, &peer->addr.u.sa, peer->addr.len,
                    rx_conn_ud(c, RX_OP_CONNECT));
    c->inflight++;
    rx_timer_add(&c->timer, u->conf->connect_timeout);
}

/* A try: a peer (the balancer's), then a pooled connection to it or a new
 * one. */
static void
connect_peer(rx_http_upstream_t *u)
{
    rx_http_upstream_peer_t *peer;
    rx_uint_t                again;
    bool                     full = false;

    if (rx_http_upstream_try_begin(u) != RX_OK) {
        rx_http_upstream_finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    /* The pick and the full check read the shared counts at two moments,
     * another worker may close a connection in between: not full then is
     * room, not "no live upstreams": pick again (3 times at most). */
    for (again = 0; again < 4; again++) {
        peer = u->us->balancer ? u->us->balancer->get(u)
                               : rx_http_upstream_get_peer(u->us, u->tried);
        if (peer || !u->us->shared || (full = rx_http_upstream_full(u->us))) {
            break;
        }
    }
    if (peer == NULL) {
        if ((full || rx_http_upstream_full(u->us)) && wait_for_room(u)) {
            return;
        }
        no_live_upstreams(u);
        return;
    }
    u->peer = peer;
    u->state->peer = peer->name;
    rx_http_upstream_set_log_upstream(u, &peer->name);
    if (!use_pooled(u, peer)
        && !rx_http_upstream_keepalive_defer(u, connect_now)) {
        open_connection(u, peer);
    }
}

/* The end of the loop turn for a deferred connect: the pool may hold a
 * connection to the peer now. */
static void
connect_now(rx_http_upstream_t *u)
{
    if (!use_pooled(u, u->peer)) {
        open_connection(u, u->peer);
    }
}

static void
on_op(rx_conn_t *c, const rx_cqe_t *cqe)
{
    rx_http_upstream_conn_t *uc = c->data;
    rx_http_upstream_t      *u = uc ? uc->u : NULL;

    if (rx_op_kind(cqe->user_data) == RX_OP_READ) {
        /* a chunk of the request body's file */
        if (u == NULL || c->state != RX_CONN_ACTIVE) {
            return;
        }
        u->freading = 0;
        if (cqe->res <= 0) {
            rx_http_request_log_error(u->r, RX_LOG_CRIT,
                cqe->res < 0 ? -cqe->res : EIO, "reading the client request "
                "body's temporary file failed");
            rx_http_upstream_finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
        u->fchunk_len = (size_t) cqe->res;
        send_request(u);
        return;
    }
    if (rx_op_kind(cqe->user_data) != RX_OP_CONNECT || c->state != RX_CONN_ACTIVE
        || u == NULL) {
        return;
    }
    if (cqe->res < 0) {
        char msg[RX_SOCKADDR_STRLEN + 32];

        /* nginx names a unix socket's path, not an address */
        if (u->peer && u->peer->addr.u.sa.sa_family == AF_UNIX) {
            snprintf(msg, sizeof(msg), "connect() to %.*s failed",
                     (int) u->peer->name.len, u->peer->name.data);
        } else {
            snprintf(msg, sizeof(msg), "connect() failed");
        }
        rx_http_upstream_log_error(u, RX_LOG_ERR, -cqe->res, msg);
        next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
        return;
    }
    u->state->connect_time = rx_current_msec - u->try_start;
#if (RX_HAVE_OPENSSL)
    if (u->ssl) {
        /* proxy_pass https://: the request waits in the TLS transport
         * for the handshake, which runs under the connect timeout */
        if (rx_http_upstream_ssl_start(u) != RX_OK) {
            next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
            return;
        }
        send_request(u);
        if (u->uc && !u->request_sent && !u->freading) {
            rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_HANDSHAKING);
            rx_timer_add(&c->timer, u->conf->connect_timeout);
        }
        return;
    }
#endif
    send_request(u);
}

/* A TLS connection failed (res: -EPROTO) or closed before its handshake
 * ended: true when so and why is logged (http_upstream_ssl.c). */
static bool
tls_error(rx_http_upstream_t *u, ssize_t res)
{
#if (RX_HAVE_OPENSSL)
    if (u->ssl == NULL || u->uc == NULL || !u->uc->tls) {
        return false;
    }
    return rx_http_upstream_ssl_error(u, res);
#else
    (void) u;
    (void) res;
    return false;
#endif
}

/* Sends what is left of the request (http_upstream_send.c). */
static void
send_request(rx_http_upstream_t *u)
{
    if (rx_http_upstream_send(u) != RX_OK) {
        rx_http_upstream_finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
    }
}

static void
on_sent(rx_conn_t *c, ssize_t res)
{
    rx_http_upstream_conn_t *uc = c->data;
    rx_http_upstream_t      *u = uc ? uc->u : NULL;

    if (u == NULL) {
        return;
    }
    if (res < 0) {
        if (res != -ECANCELED && !tls_error(u, res)) {
            rx_http_upstream_log_error(u, RX_LOG_ERR, (int) -res, "send() failed");
        }
        next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
        return;
    }
    u->state->bytes_sent += res;
    if (u->tunnel) {
        rx_http_upstream_out_sent(u, res);
        return;
    }
    if (u->streaming && u->head_sent) {
        rx_http_upstream_out_sent(u, res);
        if (!u->header_done) {
            rx_http_upstream_stream_kick(u);
        }
        return;
    }
    u->sent += res;
    if (u->header_done) {
        return;        /* answered before it read everything: fine */
    }
    send_request(u);
}

/* The header is complete: another peer, an error page, an internal
 * redirect, or the response goes to the client. */
static rx_int_t
process_header(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;
    rx_uint_t          status = u->headers_in.status, ft = rx_http_upstream_status_ft(status);
    rx_int_t           rc;

    u->state->status = status;
    u->state->header_time = rx_current_msec - u->try_start;
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_READING);
    if (ft && (u->conf->next_upstream & ft) && u->tries > 1) {
        next_upstream(u, ft);
        return RX_DONE;
    }
    if ((u->intercept_404 && status == RX_HTTP_NOT_FOUND) || (u->conf->intercept_errors
        && status >= 300 && rx_http_upstream_has_error_page(r, status))) {
        u->keepalive = 0;
        rx_http_upstream_drop_connection(u);
        rx_http_upstream_release_peer(u, false);
        rx_http_upstream_finalize(u, (rx_int_t) status);
        return RX_DONE;
    }
    if (u->headers_in.x_accel_redirect
        && !(u->conf->ignore_headers & RX_HTTP_UPSTREAM_IGN_XA_REDIRECT)) {
        rx_http_upstream_accel_redirect(u, &u->headers_in.x_accel_redirect->value);
        return RX_DONE;
    }
    if (u->headers_in.x_accel_buffering
        && !(u->conf->ignore_headers & RX_HTTP_UPSTREAM_IGN_XA_BUFFERING)) {
        u->buffering = rx_str_caseeq(&u->headers_in.x_accel_buffering->value,
                                     "yes");
    }
    if (status == RX_HTTP_SWITCHING_PROTOCOLS) {
        if (r->headers_in.upgrade == NULL) {
            rx_http_upstream_log_error(u, RX_LOG_ERR, 0, "upstream sent \"101 Switching "
                               "Protocols\" to a request without \"Upgrade\"");
            next_upstream(u, RX_HTTP_UPSTREAM_FT_INVALID_HEADER);
            return RX_DONE;
        }
        r->upgrade = 1;
        r->header_only = 1;       /* no body framing: raw bytes follow */
        r->keepalive = 0;
        u->keepalive = 0;
    }
    rc = rx_http_upstream_copy_headers(u);
    if (rc != RX_OK) {     /* RX_DONE: a stale copy of the cache answers */
        if (rc != RX_DONE) rx_http_upstream_finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return RX_DONE;
    }
    if (r->upgrade) {
        r->headers_out.content_length_n = -1;
    }
    u->header_sent = 1;
    rc = rx_http_send_header(r);
    if (rc == RX_ERROR) {
        rx_http_upstream_cut_body(u, NULL, 0);
        return RX_DONE;
    }
    if (r->upgrade) {
        rx_http_upstream_start_tunnel(u);
        return RX_DONE;
    }
    return RX_OK;
}

/* Bytes of the response header: RX_OK once it is complete (*n of data
 * went into the header buffer, *used of them were header), RX_AGAIN for
 * more, RX_DONE when the try failed (next_upstream or finalize ran). */
static rx_int_t
read_header(rx_http_upstream_t *u, const char *data, size_t len, size_t *n,
    size_t *used)
{
    rx_int_t rc;

    if (u->header_buf == NULL) {
        u->header_buf = rx_pnalloc(u->r->pool, u->conf->buffer_size);
        if (u->header_buf == NULL) {
            rx_http_upstream_finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
            return RX_DONE;
        }
    }
    *n = rx_min(u->conf->buffer_size - u->header_len, len);
    memcpy(u->header_buf + u->header_len, data, *n);
    rc = u->process_header(u, u->header_buf + u->header_len, *n, used);
    u->header_len += *n;
    if (rc == RX_AGAIN) {
        if (u->header_copied) {
            u->header_len = 0;
        } else if (u->header_len == u->conf->buffer_size) {
            rx_http_upstream_log_error(u, RX_LOG_ERR, 0, "upstream sent too "
                                       "big header");
            next_upstream(u, RX_HTTP_UPSTREAM_FT_INVALID_HEADER);
            return RX_DONE;
        }
        return RX_AGAIN;
    }
    if (rc != RX_OK) {
        rx_http_upstream_log_error(u, RX_LOG_ERR, 0, u->error ? u->error
                                   : "upstream sent invalid header");
        next_upstream(u, RX_HTTP_UPSTREAM_FT_INVALID_HEADER);
        return RX_DONE;
    }
    u->header_done = 1;
    return RX_OK;
}

static void
body_broken(rx_http_upstream_t *u)
{
    rx_http_upstream_cut_body(u, u->error ? u->error
                              : "upstream sent invalid response body", 0);
}

/* Received bytes of the response: header first, then body. */
static void
on_data(rx_http_upstream_t *u, const char *data, size_t len)
{
    size_t used = 0, n = 0;

    u->state->bytes_received += (int64_t) len;
    if (u->tunnel) {
        if (rx_http_upstream_tunnel_in(u, data, len)
            && u->uc && !u->paused) {
            rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
        }
        return;
    }
    if (!u->header_done) {
        if (read_header(u, data, len, &n, &used) != RX_OK) {
            return;
        }
        if (process_header(u) != RX_OK) {
            if (u->tunnel && u->phase != RX_HTTP_UPSTREAM_DONE) {
                /* what followed the 101 belongs to the new protocol */
                if (used < n && !rx_http_upstream_tunnel_in(u,
                        u->header_buf + u->header_len - n + used, n - used)) {
                    return;
                }
                if (len > n) {
                    (void) rx_http_upstream_tunnel_in(u, data + n, len - n);
                }
            }
            return;
        }
        if (!u->body_done && used < n
            && u->input_filter(u, u->header_buf + u->header_len - n + used,
                               n - used) != RX_OK) {
            body_broken(u);
            return;
        }
        data += n;
        len -= n;
    }
    if (len && !u->body_done && u->input_filter(u, data, len) != RX_OK) {
        body_broken(u);
        return;
    }
    if (u->body_done) {
        rx_http_upstream_finish_body(u);
        return;
    }
    if (rx_http_upstream_flush(u) != RX_OK) {
        rx_http_upstream_cut_body(u, NULL, 0);
        return;
    }
    if (u->uc && !u->paused) {
        rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
    }
}

static void
on_read(rx_conn_t *c, const char *data, ssize_t len)
{
    rx_http_upstream_conn_t *uc = c->data;
    rx_http_upstream_t      *u = uc ? uc->u : NULL;

    if (u == NULL) {
        /* idle in the pool: the upstream closed it or sent what nobody
         * asked for; either way it cannot serve a request */
        rx_conn_close(c);
        return;
    }
    if (u->r->conn->state != RX_CONN_ACTIVE) {
        rx_http_upstream_cleanup(u);
        return;
    }
    if (u->tunnel && len <= 0) {
        rx_http_upstream_tunnel_eof(u);
        return;
    }
    if (len < 0) {
        if (!tls_error(u, len)) {
            rx_http_upstream_log_error(u, RX_LOG_ERR, (int) -len,
                                       "recv() failed");
        }
        if (!u->header_done) {
            next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
        } else {
            rx_http_upstream_cut_body(u, NULL, 0);
        }
        return;
    }
    if (len == 0) {
        if (!u->header_done) {
            if (!tls_error(u, 0)) {
                rx_http_upstream_log_error(u, RX_LOG_ERR, 0,
                                   "upstream prematurely closed connection");
            }
            next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
            return;
        }
        u->keepalive = 0;
        if (u->on_eof(u) != RX_OK) {
            rx_http_upstream_cut_body(u, "upstream prematurely closed connection", 0);
            return;
        }
        u->body_done = 1;
        rx_http_upstream_finish_body(u);
        return;
    }
    rx_http_upstream_learn_read(uc);
    on_data(u, data, (size_t) len);
}

static void
upstream_timer(rx_timer_t *t)
{
    rx_conn_t               *c = t->data;
    rx_http_upstream_conn_t *uc = c->data;
    rx_http_upstream_t      *u = uc ? uc->u : NULL;

    if (u == NULL) {
        rx_conn_close(c);
        return;
    }
    rx_http_upstream_log_error(u, RX_LOG_ERR, ETIMEDOUT, "upstream timed out");
    if (u->tunnel) {
        rx_http_upstream_end_tunnel(u);
        return;
    }
    if (!u->header_sent) {
        next_upstream(u, RX_HTTP_UPSTREAM_FT_TIMEOUT);
    } else {
        rx_http_upstream_cut_body(u, NULL, 0);
    }
}

static void
on_free(rx_conn_t *c)
{
    rx_http_upstream_conn_t *uc = c->data;
    bool                     idle;

    if (uc == NULL) {
        return;
    }
    idle = uc->u == NULL;
    if (uc->u) {
        uc->u->uc = NULL;
        uc->u = NULL;
    }
    c->data = NULL;
    rx_http_upstream_conn_closed(uc, idle);
}

static bool
idempotent(rx_http_request_t *r)
{
    return !(r->method & (RX_HTTP_POST | RX_HTTP_LOCK | RX_HTTP_PATCH));
}

/* Another try: the protocol starts its request afresh (the try's own
 * fields are reset by connect_peer's rx_http_upstream_try_begin()). */
static void
retry(rx_http_upstream_t *u)
{
    u->headers_in.status = 0;
    if (u->reinit_request) {
        u->reinit_request(u);
    }
    connect_peer(u);
}

static void
next_upstream(rx_http_upstream_t *u, rx_uint_t ft)
{
    rx_http_request_t *r = u->r;
    rx_uint_t          status;
    bool               failed, retry_free;
    const rx_http_upstream_conf_t *conf = u->conf;

    status = ft == RX_HTTP_UPSTREAM_FT_TIMEOUT ? RX_HTTP_GATEWAY_TIME_OUT
             : ft & (RX_HTTP_UPSTREAM_FT_ERROR | RX_HTTP_UPSTREAM_FT_INVALID_HEADER)
               ? RX_HTTP_BAD_GATEWAY : u->headers_in.status;
    if (u->state && u->state->status == 0) {
        u->state->status = status;
    }
    rx_http_upstream_end_state(u);
    /* a pooled connection that the upstream had closed: not the peer's
     * fault, and the request goes again on a fresh connection */
    /* a streamed body that started to go cannot be sent again */
    bool body_gone = u->streaming && u->head_sent;

    retry_free = u->reused && ft == RX_HTTP_UPSTREAM_FT_ERROR
                 && u->state->bytes_received == 0 && !body_gone;
    failed = !retry_free && (ft & (RX_HTTP_UPSTREAM_FT_ERROR
                                   | RX_HTTP_UPSTREAM_FT_TIMEOUT
                                   | RX_HTTP_UPSTREAM_FT_INVALID_HEADER
                                   | RX_HTTP_UPSTREAM_FT_HTTP_500
                                   | RX_HTTP_UPSTREAM_FT_HTTP_502
                                   | RX_HTTP_UPSTREAM_FT_HTTP_503
                                   | RX_HTTP_UPSTREAM_FT_HTTP_504
                                   | RX_HTTP_UPSTREAM_FT_HTTP_429));
    if (!retry_free && u->peer && (ft & (RX_HTTP_UPSTREAM_FT_ERROR
            | RX_HTTP_UPSTREAM_FT_TIMEOUT | RX_HTTP_UPSTREAM_FT_INVALID_HEADER))) {
        /* what went wrong with this try (a 5xx is counted with the try) */
        rx_http_metrics_peer_failed(u->peer->metrics,
            ft == RX_HTTP_UPSTREAM_FT_TIMEOUT ? RX_HTTP_METRICS_FAIL_TIMEOUT
            : ft == RX_HTTP_UPSTREAM_FT_ERROR && u->state
              && u->state->connect_time == (rx_msec_t) -1
            ? RX_HTTP_METRICS_FAIL_CONNECT : RX_HTTP_METRICS_FAIL_ERROR);
    }
    if (retry_free && u->peer) {
        rx_http_upstream_mark_untried(u, u->peer);   /* it may be tried again */
    }
    rx_http_upstream_drop_connection(u);
    rx_http_upstream_release_peer(u, failed);

    if (retry_free) {
        retry(u);
        return;
    }
    if (u->tries > 1 && (conf->next_upstream & ft) && !u->header_sent
        && !body_gone
        && (idempotent(r) || (conf->next_upstream & RX_HTTP_UPSTREAM_FT_NON_IDEMPOTENT)
            || u->sent == 0)
        && (conf->next_upstream_timeout == 0
            || rx_current_msec - u->start_msec < conf->next_upstream_timeout)) {
        u->tries--;
        retry(u);
        return;
    }
    if (ft & (RX_HTTP_UPSTREAM_FT_HTTP_500 | RX_HTTP_UPSTREAM_FT_HTTP_502
              | RX_HTTP_UPSTREAM_FT_HTTP_503 | RX_HTTP_UPSTREAM_FT_HTTP_504
              | RX_HTTP_UPSTREAM_FT_HTTP_403 | RX_HTTP_UPSTREAM_FT_HTTP_404
              | RX_HTTP_UPSTREAM_FT_HTTP_429)) {
        /* no other peer: the upstream's own response goes out */
        status = u->headers_in.status;
    }
    rx_http_upstream_finalize(u, (rx_int_t) status);
}
