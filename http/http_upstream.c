/*
 * http_upstream.c: the upstream engine (see http_upstream.h). One request's
 * exchange with a peer, as a state machine driven by completions on the
 * upstream connection:
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
 */
#include <netinet/tcp.h>
#include "http.h"
#include "http_upstream.h"
#include "clock.h"

static void on_read(rx_conn_t *c, const char *data, ssize_t len);
static void on_sent(rx_conn_t *c, ssize_t res);
static void on_free(rx_conn_t *c);
static void on_op(rx_conn_t *c, const rx_cqe_t *cqe);
static void upstream_timer(rx_timer_t *t);
static void connect_peer(rx_http_upstream_t *u);
static void send_request(rx_http_upstream_t *u);
static void next_upstream(rx_http_upstream_t *u, rx_uint_t ft);
static void finalize(rx_http_upstream_t *u, rx_int_t rc);
static void finish_body(rx_http_upstream_t *u);
static void cut_body(rx_http_upstream_t *u, const char *reason, int err);
static rx_int_t write_handler(rx_http_request_t *r);
static void start_tunnel(rx_http_upstream_t *u);
static void end_state(rx_http_upstream_t *u);
static void tunnel_sent(rx_http_upstream_t *u, ssize_t res);
static void end_tunnel(rx_http_upstream_t *u);

static const rx_conn_ops_t upstream_ops = { on_read, on_sent, on_free, on_op };

/* A connection that is no longer of use to its request. */
static void
drop_connection(rx_http_upstream_t *u)
{
    rx_http_upstream_conn_t *uc = u->uc;

    if (uc == NULL) {
        return;
    }
    u->uc = NULL;
    uc->u = NULL;
    rx_conn_close(uc->c);
}

static void
release_peer(rx_http_upstream_t *u, bool failed)
{
    if (u->peer) {
        rx_http_upstream_free_peer(u->peer, failed);
        u->peer = NULL;
    }
}

/* The request goes (its pool is destroyed, or the client went away). */
#define TUNNEL_CHUNK  16384

struct rx_http_tunnel_chunk_s {
    struct rx_http_tunnel_chunk_s  *next;
    size_t                          len;
    size_t                          sent;
    size_t                          cap;
    char                            data[];
};

static void
tunnel_free(rx_http_upstream_t *u)
{
    struct rx_http_tunnel_chunk_s *ch;

    while ((ch = u->tun_head) != NULL) {
        u->tun_head = ch->next;
        free(ch);
    }
    u->tun_tail = NULL;
    u->tun_bytes = 0;
}

static void
request_cleanup(void *data)
{
    rx_http_upstream_t *u = data;

    drop_connection(u);
    release_peer(u, false);
    u->finished = 1;
    if (u->r->tunnel_read) {
        u->r->tunnel_read = NULL;
    }
    tunnel_free(u);
}

static void
client_abort(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    if (u && !u->finished) {
        request_cleanup(u);
    }
}

rx_http_upstream_t *
rx_http_upstream_create(rx_http_request_t *r, const rx_http_upstream_conf_t *conf)
{
    rx_http_upstream_t *u = rx_pcalloc(r->pool, sizeof(*u));
    rx_pool_cleanup_t  *cln = rx_pool_cleanup_add(r->pool, 0);

    if (u == NULL || cln == NULL) {
        return NULL;
    }
    u->r = r;
    u->conf = conf;
    u->us = conf->upstream;
    u->states = rx_array_create(r->pool, 1, sizeof(rx_http_upstream_state_t));
    if (u->states == NULL) {
        return NULL;
    }
    u->start_msec = rx_current_msec;
    u->buffering = conf->buffering ? 1 : 0;
    rx_str_set(&u->schema, "http://");
    cln->handler = request_cleanup;
    cln->data = u;
    r->upstream = u;
    r->abort_handler = client_abort;
    return u;
}

static void
init_request(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;
    rx_int_t           rc;
    rx_uint_t          n;

    r->op_handler = NULL;
    rc = u->create_request(u);
    if (rc != RX_OK) {
        finalize(u, rc == RX_ERROR ? RX_HTTP_INTERNAL_SERVER_ERROR : rc);
        return;
    }
    u->request_size = (int64_t) rx_chain_size(u->request_bufs);
    /* each peer at most once, and no more than *_next_upstream_tries */
    n = rx_http_upstream_npeers(u->us);
    u->tries = u->conf->next_upstream_tries
               ? rx_min(u->conf->next_upstream_tries, n) : n;
    u->tried = rx_pcalloc(r->pool, ((n + 63) / 64) * sizeof(uint64_t));
    if (u->tried == NULL) {
        finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    r->write_handler = write_handler;
    connect_peer(u);
}

static void
body_ready(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    if (!u->finished && u->uc == NULL && u->state == NULL) {
        init_request(u);
    }
}

rx_int_t
rx_http_upstream_start(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;
    rx_int_t           rc;
    bool               has_body = r->headers_in.content_length_n > 0
                                  || r->headers_in.chunked;

    if (!has_body || !u->conf->pass_request_body) {
        rc = rx_http_discard_request_body(r);
        if (rc != RX_OK) {
            return rc;
        }
        init_request(u);
        return RX_DONE;
    }
    rc = rx_http_read_client_request_body(r, body_ready);
    if (rc != RX_OK) {
        return rc;
    }
    rc = rx_http_parse_buffered_body(r->hc);
    if (rc != RX_OK) {
        return rc;
    }
    if (r->body_read && u->state == NULL && !u->finished) {
        r->request_body->done = true;
        body_ready(r);
    }
    return RX_DONE;
}

/* The log's "upstream:" field: schema, peer, URI. */
static void
set_log_upstream(rx_http_upstream_t *u, const rx_str_t *peer)
{
    rx_http_request_t *r = u->r;
    char              *p = rx_pnalloc(r->pool, u->schema.len + peer->len
                                                + u->uri.len);

    if (p == NULL) {
        return;
    }
    memcpy(p, u->schema.data, u->schema.len);
    memcpy(p + u->schema.len, peer->data, peer->len);
    memcpy(p + u->schema.len + peer->len, u->uri.data, u->uri.len);
    r->log_upstream.data = p;
    r->log_upstream.len = u->schema.len + peer->len + u->uri.len;
}

static void
log_upstream_error(rx_http_upstream_t *u, unsigned level, int err,
    const char *msg)
{
    rx_http_log_error_action(u->r->hc, level, err, u->action, "%s", msg);
}

static rx_http_upstream_state_t *
new_state(rx_http_upstream_t *u)
{
    rx_http_upstream_state_t *st = rx_array_push(u->states);

    if (st == NULL) {
        return NULL;
    }
    memset(st, 0, sizeof(*st));
    st->connect_time = st->header_time = -1;
    u->state = st;
    u->try_start = rx_current_msec;
    return st;
}

static void
bind_connection(rx_http_upstream_t *u, rx_http_upstream_conn_t *uc)
{
    u->uc = uc;
    uc->u = u;
    uc->c->timer.handler = upstream_timer;
}

static void
connect_peer(rx_http_upstream_t *u)
{
    rx_http_request_t       *r = u->r;
    rx_http_upstream_conn_t *uc;
    rx_http_upstream_peer_t *peer;
    rx_conn_t               *c;
    int                      fd, one = 1;

    if (new_state(u) == NULL) {
        finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    u->action = "connecting to upstream";
    u->header_len = 0;
    u->header_done = u->body_done = u->keepalive = u->reused = 0;
    u->error = NULL;
    /* what an earlier try buffered is not this response */
    u->pending = NULL;
    u->used = 0;
    u->fill = u->fill_end = u->slice = NULL;
    u->body_bytes = 0;
    u->request_sent = 0;
    u->sent = 0;
    peer = u->us->balancer ? u->us->balancer->get(u)
                           : rx_http_upstream_get_peer(u->us, u->tried);
    if (peer == NULL) {
        rx_http_upstream_server_t *s = u->us->servers->elts;
        /* nginx names the group: the block's name, or the address */
        u->state->peer = u->us->implicit ? s[0].name : u->us->host;
        set_log_upstream(u, &u->state->peer);
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "no live upstreams while "
                                  "connecting to upstream");
        u->state->status = RX_HTTP_BAD_GATEWAY;
        finalize(u, RX_HTTP_BAD_GATEWAY);
        return;
    }
    u->peer = peer;
    u->state->peer = peer->name;
    set_log_upstream(u, &peer->name);

    uc = rx_http_upstream_keepalive_get(u->us, peer);
    if (uc != NULL) {
        bind_connection(u, uc);
        u->reused = 1;
        u->state->connect_time = 0;
        send_request(u);
        return;
    }

    fd = socket(peer->addr.u.sa.sa_family,
                SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        log_upstream_error(u, RX_LOG_ALERT, errno, "socket() failed");
        next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
        return;
    }
    if (peer->addr.u.sa.sa_family != AF_UNIX) {
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    c = rx_conn_get(&rx_worker, fd, NULL);
    if (c == NULL) {
        close(fd);
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "%lu worker_connections "
            "are not enough while connecting to upstream",
            (unsigned long) rx_worker.nconns);
        release_peer(u, false);
        u->state->status = RX_HTTP_BAD_GATEWAY;
        finalize(u, RX_HTTP_BAD_GATEWAY);
        return;
    }
    uc = rx_pcalloc(c->pool, sizeof(*uc));
    if (uc == NULL) {
        rx_conn_close(c);
        finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    uc->c = c;
    uc->us = u->us;
    uc->peer = peer;
    uc->start = rx_current_msec;
    c->data = uc;
    c->ops = &upstream_ops;
    bind_connection(u, uc);
    rx_ring_connect(fd, &peer->addr.u.sa, peer->addr.len,
                    rx_conn_ud(c, RX_OP_CONNECT));
    c->inflight++;
    rx_timer_add(&c->timer, u->conf->connect_timeout);
}

static void
on_op(rx_conn_t *c, const rx_cqe_t *cqe)
{
    rx_http_upstream_conn_t *uc = c->data;
    rx_http_upstream_t      *u = uc ? uc->u : NULL;

    if (rx_op_kind(cqe->user_data) != RX_OP_CONNECT || c->state != RX_CONN_ACTIVE
        || u == NULL) {
        return;
    }
    if (cqe->res < 0) {
        log_upstream_error(u, RX_LOG_ERR, -cqe->res, "connect() failed");
        next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
        return;
    }
    u->state->connect_time = rx_current_msec - u->try_start;
    send_request(u);
}

/* Sends what is left of the request, from offset u->sent (the chain is
 * not consumed: a retry sends it again). */
static void
send_request(rx_http_upstream_t *u)
{
    rx_conn_t  *c = u->uc->c;
    rx_chain_t *cl;
    int64_t     skip = u->sent;
    int         n = 0;

    if (!c->reading) {
        /* an early answer or close is seen while the request goes out */
        c->transport->start_read(c);
    }
    for (cl = u->request_bufs; cl && n < (int) rx_nelems(u->iov); cl = cl->next) {
        size_t size = rx_buf_size(cl->buf);

        if ((int64_t) size <= skip) {
            skip -= (int64_t) size;
            continue;
        }
        u->iov[n].iov_base = cl->buf->pos + skip;
        u->iov[n].iov_len = size - (size_t) skip;
        skip = 0;
        n++;
    }
    if (n == 0) {
        u->request_sent = 1;
        u->action = "reading response header from upstream";
        rx_timer_add(&c->timer, u->conf->read_timeout);
        return;
    }
    u->action = "sending request to upstream";
    c->transport->send(c, u->iov, n);
    rx_timer_add(&c->timer, u->conf->send_timeout);
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
        if (res != -ECANCELED) {
            log_upstream_error(u, RX_LOG_ERR, (int) -res, "send() failed");
        }
        next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
        return;
    }
    u->state->bytes_sent += res;
    if (u->tunnel) {
        tunnel_sent(u, res);
        return;
    }
    u->sent += res;
    if (u->header_done) {
        return;        /* answered before it read everything: fine */
    }
    send_request(u);
}

/* Body buffers: blocks of bufs_size; a slice of a block is handed to the
 * client, and every block is free again once the client has all. */
static rx_int_t
emit_slice(rx_http_upstream_t *u)
{
    rx_chain_t *cl;
    rx_buf_t   *b;

    if (u->slice == NULL || u->slice == u->fill) {
        return RX_OK;
    }
    b = rx_calloc_buf(u->r->pool);
    cl = rx_alloc_chain_link(u->r->pool);
    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    b->start = b->pos = u->slice;
    b->end = b->last = u->fill;
    b->memory = 1;
    b->fd = -1;
    cl->buf = b;
    cl->next = NULL;
    if (u->pending == NULL) {
        u->pending = cl;
    } else {
        *u->pending_last = cl;
    }
    u->pending_last = &cl->next;
    u->slice = u->fill;
    return RX_OK;
}

static rx_int_t
next_block(rx_http_upstream_t *u)
{
    size_t size = u->conf->bufs_size;
    char  *block;

    if (emit_slice(u) != RX_OK) {
        return RX_ERROR;
    }
    if (u->used < u->nblocks) {
        block = u->blocks[u->used];
    } else {
        /* beyond bufs_num only for bytes already on their way when
         * reading stopped */
        char **grown = rx_palloc(u->r->pool, (u->nblocks + 4) * sizeof(char *));

        block = rx_palloc(u->r->pool, size);
        if (grown == NULL || block == NULL) {
            return RX_ERROR;
        }
        if (u->nblocks) {
            memcpy(grown, u->blocks, u->nblocks * sizeof(char *));
        }
        u->blocks = grown;
        u->blocks[u->nblocks++] = block;
    }
    u->used++;
    u->fill = u->slice = block;
    u->fill_end = block + size;
    return RX_OK;
}

rx_int_t
rx_http_upstream_body(rx_http_upstream_t *u, const char *data, size_t len)
{
    size_t n;

    u->body_bytes += (int64_t) len;
    if (u->r->header_only && !u->tunnel) {
        return RX_OK;          /* HEAD: the body is read and dropped */
    }
    while (len) {
        if (u->fill == u->fill_end && next_block(u) != RX_OK) {
            return RX_ERROR;
        }
        n = rx_min(len, (size_t) (u->fill_end - u->fill));
        memcpy(u->fill, data, n);
        u->fill += n;
        data += n;
        len -= n;
    }
    return RX_OK;
}

/* Hands what was buffered to the client; stops reading the upstream when
 * every buffer is in use. */
static rx_int_t
flush(rx_http_upstream_t *u)
{
    rx_chain_t *cl;

    if (emit_slice(u) != RX_OK) {
        return RX_ERROR;
    }
    cl = u->pending;
    u->pending = NULL;
    if (cl && u->tunnel) {
        /* raw bytes of the upgraded protocol: no chunking, no filters */
        if (rx_http_write_queue(u->r, cl) != RX_OK) {
            return RX_ERROR;
        }
        rx_http_connection_send(u->r->hc);
    } else if (cl && rx_http_output_filter(u->r, cl) == RX_ERROR) {
        return RX_ERROR;
    }
    if (!u->body_done && u->uc && u->used >= (rx_uint_t) u->conf->bufs_num
        && u->fill == u->fill_end && !u->paused) {
        u->paused = 1;
        rx_timer_del(&u->uc->c->timer);
        u->uc->c->transport->stop_read(u->uc->c);
    }
    return RX_OK;
}

/* The client has everything queued: every block is free again. */
static rx_int_t
write_handler(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    if (u == NULL || u->finished || u->pending || u->slice != u->fill) {
        return RX_OK;
    }
    u->used = 0;
    u->fill = u->fill_end = u->slice = NULL;
    if (u->paused && u->uc) {
        u->paused = 0;
        u->uc->c->transport->start_read(u->uc->c);
        rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
    }
    return RX_OK;
}

static bool
hidden(const rx_http_upstream_conf_t *conf, const char *lowcase, bool upgrade)
{
    static const char *const hop[] = {
        "connection", "keep-alive", "transfer-encoding", "te", "trailer",
        "upgrade", "proxy-connection", NULL
    };
    const rx_str_t *s;
    rx_uint_t       i;

    if (upgrade && strcmp(lowcase, "upgrade") == 0) {
        return false;        /* the protocol switched to */
    }
    for (i = 0; hop[i]; i++) {
        if (strcmp(lowcase, hop[i]) == 0) {
            return true;
        }
    }
    if (conf->hide_headers) {
        s = conf->hide_headers->elts;
        for (i = 0; i < conf->hide_headers->nelts; i++) {
            if (strlen(lowcase) == s[i].len
                && memcmp(lowcase, s[i].data, s[i].len) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* The upstream's header becomes the client's. */
static rx_int_t
copy_headers(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;
    rx_http_upstream_headers_in_t *h = &u->headers_in;
    rx_table_elt_t    *in = h->headers.elts, *out;
    rx_uint_t          i;

    r->headers_out.status = h->status;
    r->headers_out.status_line = h->status_line;
    r->headers_out.content_length_n = h->content_length_n;
    for (i = 0; i < h->headers.nelts; i++) {
        const char *k = in[i].lowcase_key;

        if (hidden(u->conf, k, h->status == RX_HTTP_SWITCHING_PROTOCOLS)) {
            continue;
        }
        if (strcmp(k, "content-length") == 0) {
            continue;          /* content_length_n carries it */
        }
        if (strcmp(k, "content-type") == 0) {
            r->headers_out.content_type = in[i].value;
            continue;
        }
        out = rx_array_push(&r->headers_out.headers);
        if (out == NULL) {
            return RX_ERROR;
        }
        *out = in[i];
        if (strcmp(k, "location") == 0 || strcmp(k, "refresh") == 0) {
            if (strcmp(k, "location") == 0) {
                r->headers_out.location = out;
            }
            if (u->rewrite_redirect && u->rewrite_redirect(u, out) != RX_OK) {
                return RX_ERROR;
            }
        } else if (strcmp(k, "set-cookie") == 0) {
            if (u->rewrite_cookie && u->rewrite_cookie(u, out) != RX_OK) {
                return RX_ERROR;
            }
        } else if (strcmp(k, "etag") == 0) {
            r->headers_out.etag = out;
        } else if (strcmp(k, "content-encoding") == 0) {
            r->headers_out.content_encoding = out;
        } else if (strcmp(k, "expires") == 0) {
            r->headers_out.expires = out;
        } else if (strcmp(k, "accept-ranges") == 0) {
            r->headers_out.accept_ranges = out;
        }
    }
    return RX_OK;
}

/*
 * The tunnel after a 101: bytes go both ways as they are, until either
 * side closes or nothing moves for proxy_read_timeout. Upstream-to-client
 * bytes use the body buffers (and their backpressure); client-to-upstream
 * bytes wait in tun_buf, at most TUNNEL_MAX, while the client's reading
 * stops.
 */
#define TUNNEL_MAX  (64 * 1024)

static void
end_tunnel(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;

    end_state(u);
    u->finished = 1;
    r->tunnel_read = NULL;
    r->write_handler = NULL;
    drop_connection(u);
    release_peer(u, false);
    rx_conn_close(r->conn);
}

static void
tunnel_send(rx_http_upstream_t *u)
{
    rx_conn_t                     *c = u->uc->c;
    struct rx_http_tunnel_chunk_s *ch = u->tun_head;

    if (c->sending || ch == NULL || ch->sent == ch->len) {
        return;
    }
    u->iov[0].iov_base = ch->data + ch->sent;
    u->iov[0].iov_len = ch->len - ch->sent;
    c->transport->send(c, u->iov, 1);
}

static void
tunnel_client_read(rx_http_request_t *r, const char *data, ssize_t len)
{
    rx_http_upstream_t            *u = r->upstream;
    struct rx_http_tunnel_chunk_s *ch;
    size_t                         left = (size_t) len, n;

    if (u == NULL || u->finished || u->uc == NULL) {
        return;
    }
    if (len <= 0) {
        end_tunnel(u);           /* the client closed (or failed) */
        return;
    }
    while (left) {
        ch = u->tun_tail;
        /* the chunk being sent is appended to only past what the kernel
         * was given: its bytes never move */
        if (ch == NULL || ch->len == ch->cap) {
            size_t cap = rx_max(left, (size_t) TUNNEL_CHUNK);
            ch = malloc(sizeof(*ch) + cap);
            if (ch == NULL) {
                end_tunnel(u);
                return;
            }
            ch->next = NULL;
            ch->len = ch->sent = 0;
            ch->cap = cap;
            if (u->tun_tail) u->tun_tail->next = ch; else u->tun_head = ch;
            u->tun_tail = ch;
        }
        n = rx_min(left, ch->cap - ch->len);
        memcpy(ch->data + ch->len, data, n);
        ch->len += n;
        data += n;
        left -= n;
    }
    u->tun_bytes += (size_t) len;
    if (u->tun_bytes > TUNNEL_MAX && !u->tunnel_paused) {
        u->tunnel_paused = 1;
        r->conn->transport->stop_read(r->conn);
    }
    rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
    tunnel_send(u);
}

static void
tunnel_sent(rx_http_upstream_t *u, ssize_t res)
{
    struct rx_http_tunnel_chunk_s *ch = u->tun_head;

    if (ch == NULL) {
        return;
    }
    ch->sent += (size_t) res;
    u->tun_bytes -= (size_t) res;
    if (ch->sent == ch->len && (ch->next || ch->len == ch->cap)) {
        u->tun_head = ch->next;
        if (u->tun_head == NULL) {
            u->tun_tail = NULL;
        }
        free(ch);
    } else if (ch->sent == ch->len) {
        ch->len = ch->sent = 0;      /* empty and alone: reused from the start */
    }
    if (u->tunnel_paused && u->tun_bytes <= TUNNEL_MAX / 2) {
        u->tunnel_paused = 0;
        u->r->conn->transport->start_read(u->r->conn);
    }
    tunnel_send(u);
}

static void
start_tunnel(rx_http_upstream_t *u)
{
    rx_http_request_t    *r = u->r;
    rx_http_connection_t *hc = r->hc;

    u->tunnel = 1;
    u->action = "proxying upgraded connection";
    r->tunnel_read = tunnel_client_read;
    /* bytes the client sent right after its request */
    if (hc->in_len > hc->in_parsed) {
        size_t n = hc->in_len - hc->in_parsed;
        hc->in_parsed = hc->in_len;
        tunnel_client_read(r, hc->in + hc->in_len - n, (ssize_t) n);
        if (u->finished) {
            return;
        }
    }
    r->conn->transport->start_read(r->conn);
    if (u->uc) {
        rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
    }
}

static bool
has_error_page(rx_http_request_t *r, rx_uint_t status)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_err_page_t      *ep;
    rx_uint_t                i;

    if (clcf->error_pages == NULL) {
        return false;
    }
    ep = clcf->error_pages->elts;
    for (i = 0; i < clcf->error_pages->nelts; i++) {
        if (ep[i].status == status) {
            return true;
        }
    }
    return false;
}

static rx_uint_t
status_ft(rx_uint_t status)
{
    switch (status) {
    case 500: return RX_HTTP_UPSTREAM_FT_HTTP_500;
    case 502: return RX_HTTP_UPSTREAM_FT_HTTP_502;
    case 503: return RX_HTTP_UPSTREAM_FT_HTTP_503;
    case 504: return RX_HTTP_UPSTREAM_FT_HTTP_504;
    case 403: return RX_HTTP_UPSTREAM_FT_HTTP_403;
    case 404: return RX_HTTP_UPSTREAM_FT_HTTP_404;
    case 429: return RX_HTTP_UPSTREAM_FT_HTTP_429;
    default:  return 0;
    }
}

/* The header is complete: another peer, an error page, an internal
 * redirect, or the response goes to the client. */
static rx_int_t
process_header(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;
    rx_uint_t          status = u->headers_in.status, ft = status_ft(status);
    rx_int_t           rc;

    u->state->status = status;
    u->state->header_time = rx_current_msec - u->try_start;
    u->action = "reading upstream";
    if (ft && (u->conf->next_upstream & ft) && u->tries > 1) {
        next_upstream(u, ft);
        return RX_DONE;
    }
    if (u->conf->intercept_errors && status >= 300 && has_error_page(r, status)) {
        u->keepalive = 0;
        drop_connection(u);
        release_peer(u, false);
        finalize(u, (rx_int_t) status);
        return RX_DONE;
    }
    if (u->headers_in.x_accel_redirect
        && !(u->conf->ignore_headers & RX_HTTP_UPSTREAM_IGN_XA_REDIRECT)) {
        rx_str_t uri = u->headers_in.x_accel_redirect->value, args = rx_null_string;
        char    *q = memchr(uri.data, '?', uri.len);

        drop_connection(u);
        release_peer(u, false);
        u->finished = 1;
        r->write_handler = NULL;
        if (q) {
            args.data = q + 1;
            args.len = (size_t) (uri.data + uri.len - q - 1);
            uri.len = (size_t) (q - uri.data);
        }
        if (uri.len && uri.data[0] == '@') {
            rx_http_named_location(r, &uri);
        } else {
            rx_http_internal_redirect(r, &uri, args.data ? &args : NULL);
        }
        return RX_DONE;
    }
    if (u->headers_in.x_accel_buffering
        && !(u->conf->ignore_headers & RX_HTTP_UPSTREAM_IGN_XA_BUFFERING)) {
        u->buffering = rx_str_caseeq(&u->headers_in.x_accel_buffering->value,
                                     "yes");
    }
    if (status == RX_HTTP_SWITCHING_PROTOCOLS) {
        if (r->headers_in.upgrade == NULL) {
            log_upstream_error(u, RX_LOG_ERR, 0, "upstream sent \"101 Switching "
                               "Protocols\" to a request without \"Upgrade\"");
            next_upstream(u, RX_HTTP_UPSTREAM_FT_INVALID_HEADER);
            return RX_DONE;
        }
        r->upgrade = 1;
        r->header_only = 1;       /* no body framing: raw bytes follow */
        r->keepalive = 0;
        u->keepalive = 0;
    }
    if (copy_headers(u) != RX_OK) {
        finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
        return RX_DONE;
    }
    if (r->upgrade) {
        r->headers_out.content_length_n = -1;
    }
    u->header_sent = 1;
    rc = rx_http_send_header(r);
    if (rc == RX_ERROR) {
        cut_body(u, NULL, 0);
        return RX_DONE;
    }
    if (r->upgrade) {
        start_tunnel(u);
        return RX_DONE;
    }
    return RX_OK;
}

/* Received bytes of the response: header first, then body. */
static void
on_data(rx_http_upstream_t *u, const char *data, size_t len)
{
    size_t used = 0, room, n;
    rx_int_t rc;

    u->state->bytes_received += (int64_t) len;
    if (u->tunnel) {
        if (rx_http_upstream_body(u, data, len) != RX_OK || flush(u) != RX_OK) {
            end_tunnel(u);
            return;
        }
        if (u->uc && !u->paused) {
            rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
        }
        return;
    }
    if (!u->header_done) {
        if (u->header_buf == NULL) {
            u->header_buf = rx_pnalloc(u->r->pool, u->conf->buffer_size);
            if (u->header_buf == NULL) {
                finalize(u, RX_HTTP_INTERNAL_SERVER_ERROR);
                return;
            }
        }
        room = u->conf->buffer_size - u->header_len;
        n = rx_min(room, len);
        memcpy(u->header_buf + u->header_len, data, n);
        rc = u->process_header(u, u->header_buf + u->header_len, n, &used);
        u->header_len += n;
        if (rc == RX_AGAIN) {
            if (u->header_copied) {
                u->header_len = 0;
            } else if (u->header_len == u->conf->buffer_size) {
                log_upstream_error(u, RX_LOG_ERR, 0, "upstream sent too big "
                                   "header");
                next_upstream(u, RX_HTTP_UPSTREAM_FT_INVALID_HEADER);
            }
            return;
        }
        if (rc != RX_OK) {
            log_upstream_error(u, RX_LOG_ERR, 0,
                               u->error ? u->error : "upstream sent invalid header");
            next_upstream(u, RX_HTTP_UPSTREAM_FT_INVALID_HEADER);
            return;
        }
        u->header_done = 1;
        if (process_header(u) != RX_OK) {
            if (u->tunnel && !u->finished) {
                /* what followed the 101 belongs to the new protocol */
                if (used < n && (rx_http_upstream_body(u,
                        u->header_buf + u->header_len - n + used, n - used) != RX_OK
                    || flush(u) != RX_OK)) {
                    end_tunnel(u);
                    return;
                }
                data += n;
                len -= n;
                if (len && (rx_http_upstream_body(u, data, len) != RX_OK
                            || flush(u) != RX_OK)) {
                    end_tunnel(u);
                }
            }
            return;
        }
        if (!u->body_done && used < n
            && u->input_filter(u, u->header_buf + u->header_len - n + used,
                               n - used) != RX_OK) {
            cut_body(u, u->error ? u->error : "upstream sent invalid response body", 0);
            return;
        }
        data += n;
        len -= n;
    }
    if (len && !u->body_done && u->input_filter(u, data, len) != RX_OK) {
        cut_body(u, u->error ? u->error : "upstream sent invalid response body", 0);
        return;
    }
    if (u->body_done) {
        finish_body(u);
        return;
    }
    if (flush(u) != RX_OK) {
        cut_body(u, NULL, 0);
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
        request_cleanup(u);
        return;
    }
    if (u->tunnel && len <= 0) {
        /* the upstream ended: what it sent reaches the client first */
        rx_chain_t *cl = rx_chain_from_text(u->r->pool, "", 0, true);

        end_state(u);
        u->finished = 1;
        u->r->tunnel_read = NULL;
        u->r->write_handler = NULL;
        drop_connection(u);
        release_peer(u, false);
        if (cl == NULL || rx_http_write_filter(u->r, cl) != RX_OK) {
            rx_conn_close(u->r->conn);
        }
        return;
    }
    if (len < 0) {
        log_upstream_error(u, RX_LOG_ERR, (int) -len, "recv() failed");
        if (!u->header_done) {
            next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
        } else {
            cut_body(u, NULL, 0);
        }
        return;
    }
    if (len == 0) {
        if (!u->header_done) {
            log_upstream_error(u, RX_LOG_ERR, 0,
                               "upstream prematurely closed connection");
            next_upstream(u, RX_HTTP_UPSTREAM_FT_ERROR);
            return;
        }
        u->keepalive = 0;
        if (u->on_eof(u) != RX_OK) {
            cut_body(u, "upstream prematurely closed connection", 0);
            return;
        }
        u->body_done = 1;
        finish_body(u);
        return;
    }
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
    log_upstream_error(u, RX_LOG_ERR, ETIMEDOUT, "upstream timed out");
    if (u->tunnel) {
        end_tunnel(u);
        return;
    }
    if (!u->header_sent) {
        next_upstream(u, RX_HTTP_UPSTREAM_FT_TIMEOUT);
    } else {
        cut_body(u, NULL, 0);
    }
}

static void
on_free(rx_conn_t *c)
{
    rx_http_upstream_conn_t *uc = c->data;

    if (uc == NULL) {
        return;
    }
    if (uc->u) {
        uc->u->uc = NULL;
        uc->u = NULL;
    } else {
        rx_http_upstream_keepalive_remove(uc);
    }
    c->data = NULL;
}

static void
end_state(rx_http_upstream_t *u)
{
    if (u->state) {
        u->state->response_time = rx_current_msec - u->try_start;
    }
}

/* The body is complete: the connection goes back to the pool (when both
 * sides allow) and the response ends. */
static void
finish_body(rx_http_upstream_t *u)
{
    rx_http_request_t       *r = u->r;
    rx_http_upstream_conn_t *uc = u->uc;

    end_state(u);
    u->finished = 1;
    r->write_handler = NULL;
    if (uc) {
        u->uc = NULL;
        uc->requests++;
        if (u->keepalive && u->request_sent) {
            rx_timer_del(&uc->c->timer);
            rx_http_upstream_keepalive_put(uc);   /* or closes it */
        } else {
            uc->u = NULL;
            rx_conn_close(uc->c);
        }
    }
    release_peer(u, false);
    if (emit_slice(u) != RX_OK) {
        rx_conn_close(r->conn);
        return;
    }
    if (u->pending) {
        rx_chain_t *cl = u->pending;
        u->pending = NULL;
        if (rx_http_output_filter(r, cl) == RX_ERROR) {
            rx_conn_close(r->conn);
            return;
        }
    }
    if (rx_http_output_filter(r, NULL) == RX_ERROR) {
        rx_conn_close(r->conn);
    }
}

/* The body broke after the header went to the client: what arrived is
 * sent, then the client connection is closed (the client sees a short
 * body, never a wrong one). */
static void
cut_body(rx_http_upstream_t *u, const char *reason, int err)
{
    rx_http_request_t *r = u->r;

    if (reason) {
        log_upstream_error(u, RX_LOG_ERR, err, reason);
    }
    end_state(u);
    u->finished = 1;
    r->write_handler = NULL;
    drop_connection(u);
    release_peer(u, false);
    r->keepalive = 0;
    r->hc->close_after = 1;
    rx_conn_close(r->conn);
}

static bool
idempotent(rx_http_request_t *r)
{
    return !(r->method & (RX_HTTP_POST | RX_HTTP_LOCK | RX_HTTP_PATCH));
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
    end_state(u);
    /* a pooled connection that the upstream had closed: not the peer's
     * fault, and the request goes again on a fresh connection */
    retry_free = u->reused && ft == RX_HTTP_UPSTREAM_FT_ERROR
                 && u->state->bytes_received == 0;
    failed = !retry_free && (ft & (RX_HTTP_UPSTREAM_FT_ERROR
                                   | RX_HTTP_UPSTREAM_FT_TIMEOUT
                                   | RX_HTTP_UPSTREAM_FT_INVALID_HEADER
                                   | RX_HTTP_UPSTREAM_FT_HTTP_500
                                   | RX_HTTP_UPSTREAM_FT_HTTP_502
                                   | RX_HTTP_UPSTREAM_FT_HTTP_503
                                   | RX_HTTP_UPSTREAM_FT_HTTP_504
                                   | RX_HTTP_UPSTREAM_FT_HTTP_429));
    drop_connection(u);
    release_peer(u, failed);

    if (retry_free) {
        u->headers_in.status = 0;
        if (u->reinit_request) {
            u->reinit_request(u);
        }
        connect_peer(u);
        return;
    }
    if (u->tries > 1 && (conf->next_upstream & ft) && !u->header_sent
        && (idempotent(r) || (conf->next_upstream & RX_HTTP_UPSTREAM_FT_NON_IDEMPOTENT)
            || u->sent == 0)
        && (conf->next_upstream_timeout == 0
            || rx_current_msec - u->start_msec < conf->next_upstream_timeout)) {
        u->tries--;
        u->headers_in.status = 0;
        if (u->reinit_request) {
            u->reinit_request(u);
        }
        connect_peer(u);
        return;
    }
    if (ft & (RX_HTTP_UPSTREAM_FT_HTTP_500 | RX_HTTP_UPSTREAM_FT_HTTP_502
              | RX_HTTP_UPSTREAM_FT_HTTP_503 | RX_HTTP_UPSTREAM_FT_HTTP_504
              | RX_HTTP_UPSTREAM_FT_HTTP_403 | RX_HTTP_UPSTREAM_FT_HTTP_404
              | RX_HTTP_UPSTREAM_FT_HTTP_429)) {
        /* no other peer: the upstream's own response goes out */
        status = u->headers_in.status;
    }
    finalize(u, (rx_int_t) status);
}

static void
finalize(rx_http_upstream_t *u, rx_int_t rc)
{
    rx_http_request_t *r = u->r;

    end_state(u);
    drop_connection(u);
    release_peer(u, false);
    u->finished = 1;
    r->write_handler = NULL;
    rx_http_finalize_request(r, rc);
}

void
rx_http_upstream_init_conf(rx_http_upstream_conf_t *conf)
{
    conf->connect_timeout = RX_CONF_UNSET_MSEC;
    conf->send_timeout = RX_CONF_UNSET_MSEC;
    conf->read_timeout = RX_CONF_UNSET_MSEC;
    conf->next_upstream_timeout = RX_CONF_UNSET_MSEC;
    conf->next_upstream_tries = RX_CONF_UNSET_UINT;
    conf->buffer_size = RX_CONF_UNSET_SIZE;
    conf->bufs_num = RX_CONF_UNSET;
    conf->bufs_size = RX_CONF_UNSET_SIZE;
    conf->buffering = RX_CONF_UNSET;
    conf->request_buffering = RX_CONF_UNSET;
    conf->pass_request_headers = RX_CONF_UNSET;
    conf->pass_request_body = RX_CONF_UNSET;
    conf->intercept_errors = RX_CONF_UNSET;
    conf->ignore_client_abort = RX_CONF_UNSET;
    conf->hide_headers = RX_CONF_UNSET_PTR;
    conf->pass_headers = RX_CONF_UNSET_PTR;
}

/* nginx's defaults; hide_headers gets the protocol's default list minus
 * what *_pass_header lets through. */
const char *
rx_http_upstream_merge_conf(rx_conf_t *cf, rx_http_upstream_conf_t *conf,
    const rx_http_upstream_conf_t *prev, const char *const *default_hide)
{
    rx_str_t  *s;
    rx_uint_t  i, j;

    if (conf->upstream == NULL && conf->url == NULL) {
        conf->upstream = prev->upstream;
        conf->url = prev->url;
    }
    rx_conf_merge_msec(conf->connect_timeout, prev->connect_timeout, 60000);
    rx_conf_merge_msec(conf->send_timeout, prev->send_timeout, 60000);
    rx_conf_merge_msec(conf->read_timeout, prev->read_timeout, 60000);
    rx_conf_merge_msec(conf->next_upstream_timeout, prev->next_upstream_timeout, 0);
    rx_conf_merge_uint(conf->next_upstream_tries, prev->next_upstream_tries, 0);
    rx_conf_merge_size(conf->buffer_size, prev->buffer_size, 4096);
    rx_conf_merge_value(conf->bufs_num, prev->bufs_num, 8);
    rx_conf_merge_size(conf->bufs_size, prev->bufs_size, 4096);
    rx_conf_merge_value(conf->buffering, prev->buffering, 1);
    rx_conf_merge_value(conf->request_buffering, prev->request_buffering, 1);
    rx_conf_merge_value(conf->pass_request_headers, prev->pass_request_headers, 1);
    rx_conf_merge_value(conf->pass_request_body, prev->pass_request_body, 1);
    rx_conf_merge_value(conf->intercept_errors, prev->intercept_errors, 0);
    rx_conf_merge_value(conf->ignore_client_abort, prev->ignore_client_abort, 0);
    if (conf->ignore_headers == 0) {
        conf->ignore_headers = prev->ignore_headers;
    }
    if (conf->next_upstream == 0) {
        conf->next_upstream = prev->next_upstream
            ? prev->next_upstream
            : RX_HTTP_UPSTREAM_FT_ERROR | RX_HTTP_UPSTREAM_FT_TIMEOUT;
    }
    if (conf->next_upstream & RX_HTTP_UPSTREAM_FT_OFF) {
        conf->next_upstream = RX_HTTP_UPSTREAM_FT_OFF;
    }
    rx_conf_merge_ptr(conf->pass_headers, prev->pass_headers, NULL);
    if (conf->hide_headers == RX_CONF_UNSET_PTR) {
        if (prev->hide_headers != RX_CONF_UNSET_PTR
            && conf->pass_headers == prev->pass_headers) {
            conf->hide_headers = prev->hide_headers;
            return RX_CONF_OK;
        }
        conf->hide_headers = rx_array_create(cf->pool, 8, sizeof(rx_str_t));
    } else {
        /* proxy_hide_header given here: add nginx's defaults to it */
    }
    if (conf->hide_headers == NULL) {
        return RX_CONF_ERROR;
    }
    for (i = 0; default_hide && default_hide[i]; i++) {
        bool passed = false;

        if (conf->pass_headers) {
            s = conf->pass_headers->elts;
            for (j = 0; j < conf->pass_headers->nelts; j++) {
                if (strcasecmp(s[j].data, default_hide[i]) == 0) {
                    passed = true;
                }
            }
        }
        if (!passed) {
            s = rx_array_push(conf->hide_headers);
            if (s == NULL) {
                return RX_CONF_ERROR;
            }
            s->data = (char *) default_hide[i];
            s->len = strlen(default_hide[i]);
        }
    }
    if (conf->bufs_num < 2) {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "there must be at least 2 "
                     "\"%s_buffers\"", conf->module);
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}
