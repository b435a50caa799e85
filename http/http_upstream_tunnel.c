/*
 * http_upstream_tunnel.c: an upgraded connection (WebSocket) after the
 * upstream's 101: the client and upstream connections become a tunnel.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "clock.h"


#define TUNNEL_CHUNK  16384

struct rx_http_tunnel_chunk_s {
    struct rx_http_tunnel_chunk_s  *next;
    size_t                          len;
    size_t                          sent;
    size_t                          cap;
    char                            data[];
};

void
rx_http_upstream_tunnel_free(rx_http_upstream_t *u)
{
    struct rx_http_tunnel_chunk_s *ch;

    while ((ch = u->tun_head) != NULL) {
        u->tun_head = ch->next;
        free(ch);
    }
    u->tun_tail = NULL;
    u->tun_bytes = 0;
}

/*
 * The tunnel after a 101: bytes go both ways as they are, until either
 * side closes or nothing moves for proxy_read_timeout. Upstream-to-client
 * bytes use the body buffers (and their backpressure); client-to-upstream
 * bytes wait in the chunk queue below, at most TUNNEL_MAX before the
 * client's reading stops.
 */
#define TUNNEL_MAX  (64 * 1024)

/* Bytes of the upgraded protocol from the upstream go to the client:
 * false when they cannot (the tunnel is ended). */
bool
rx_http_upstream_tunnel_in(rx_http_upstream_t *u, const char *data,
    size_t len)
{
    if (rx_http_upstream_body(u, data, len) != RX_OK
        || rx_http_upstream_flush(u) != RX_OK) {
        rx_http_upstream_end_tunnel(u);
        return false;
    }
    return true;
}

/* The upstream ended the tunnel: what it sent reaches the client first. */
void
rx_http_upstream_tunnel_eof(rx_http_upstream_t *u)
{
    rx_chain_t *cl = rx_chain_from_text(u->r->pool, "", 0, true);

    rx_http_upstream_end_state(u);
    u->r->tunnel_read = NULL;
    u->r->write_handler = NULL;
    rx_http_upstream_end(u);
    if (cl == NULL || rx_http_write_filter(u->r, cl) != RX_OK) {
        rx_http_close_request(u->r);
    }
}

void
rx_http_upstream_end_tunnel(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;

    rx_http_upstream_end_state(u);
    r->tunnel_read = NULL;
    r->write_handler = NULL;
    rx_http_upstream_end(u);
    rx_http_close_request(r);
}

/*
 * Bytes from the client to the upstream (a tunnel's, or a request body
 * streamed with *_request_buffering off) wait in malloc'd chunks; the
 * first one is being sent and never moves. Beyond TUNNEL_MAX queued bytes
 * the client's reading stops until the upstream has taken half of them.
 */
rx_int_t
rx_http_upstream_out_append(rx_http_upstream_t *u, const char *data, size_t len)
{
    struct rx_http_tunnel_chunk_s *ch;
    size_t                         left = len, n;

    while (left) {
        ch = u->tun_tail;
        /* the chunk being sent is appended to only past what the kernel
         * was given: its bytes never move */
        if (ch == NULL || ch->len == ch->cap) {
            size_t cap = rx_max(left, (size_t) TUNNEL_CHUNK);
            ch = malloc(sizeof(*ch) + cap);
            if (ch == NULL) {
                return RX_ERROR;
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
    u->tun_bytes += len;
    if (u->tun_bytes > TUNNEL_MAX && !u->tunnel_paused) {
        u->tunnel_paused = 1;
        u->r->conn->transport->stop_read(u->r->conn);
    }
    return RX_OK;
}

/* Sends the queue's first chunk when no send is in flight; false when
 * there is nothing to send. */
bool
rx_http_upstream_out_send(rx_http_upstream_t *u)
{
    rx_conn_t                     *c = u->uc->c;
    struct rx_http_tunnel_chunk_s *ch = u->tun_head;

    if (ch == NULL || ch->sent == ch->len) {
        return false;
    }
    if (!c->sending) {
        u->iov[0].iov_base = ch->data + ch->sent;
        u->iov[0].iov_len = ch->len - ch->sent;
        c->transport->send(c, u->iov, 1);
    }
    return true;
}

static void
tunnel_client_read(rx_http_request_t *r, const char *data, ssize_t len)
{
    rx_http_upstream_t *u = r->upstream;

    if (u == NULL || u->phase == RX_HTTP_UPSTREAM_DONE || u->uc == NULL) {
        return;
    }
    if (len <= 0) {
        rx_http_upstream_end_tunnel(u);      /* the client closed (or failed) */
        return;
    }
    if (rx_http_upstream_out_append(u, data, (size_t) len) != RX_OK) {
        rx_http_upstream_end_tunnel(u);
        return;
    }
    rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
    (void) rx_http_upstream_out_send(u);
}

void
rx_http_upstream_out_sent(rx_http_upstream_t *u, ssize_t res)
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
    (void) rx_http_upstream_out_send(u);
}

void
rx_http_upstream_start_tunnel(rx_http_upstream_t *u)
{
    rx_http_request_t    *r = u->r;
    rx_http_connection_t *hc = r->hc;

    u->tunnel = 1;
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_TUNNEL);
    r->tunnel_read = tunnel_client_read;
    /* the 101 goes out now, alone if need be: a header otherwise waits in
     * r->out for the first body bytes, but after a 101 either side may be
     * the first to speak, and a browser waits for the 101 before it does */
    rx_http_connection_send(hc);
    /* bytes the client sent right after its request */
    if (hc->in_len > hc->in_parsed) {
        size_t n = hc->in_len - hc->in_parsed;
        hc->in_parsed = hc->in_len;
        tunnel_client_read(r, hc->in + hc->in_len - n, (ssize_t) n);
        if (u->phase == RX_HTTP_UPSTREAM_DONE) {
            return;
        }
    }
    r->conn->transport->start_read(r->conn);
    if (u->uc) {
        rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
    }
}
