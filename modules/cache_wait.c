/*
 * cache_wait.c: a request whose entry another request (of any worker) is
 * fetching. Concurrent misses are coalesced for as long as the fetch
 * runs, with no timeout to give up after: the waiter follows the fetch
 * through the keys zone, and once the fetch's file holds the header it
 * opens that file (its temporary name) and sends what is written of it as
 * it grows, so the waiters get the response as it arrives. When the fetch
 * ends: stored, the rest of the file is sent (its final length is the
 * entry's); not a response to store, the waiter goes upstream itself
 * (nginx's behaviour without a lock); failed before the waiter sent
 * anything, it looks up again (the next waiter fetches: no stampede);
 * failed after, its connection is closed (a short response, never a
 * wrong one).
 *
 * The waiter learns of progress by looking at the zone every few
 * milliseconds (a timer per waiter): a fetch's writes complete in its
 * own worker, and a poll is a lock and a hash lookup.
 */
#include <fcntl.h>
#include "http.h"
#include "http_cache.h"
#include "cache_serve.h"

#define WAIT_POLL_MS   5
#define WAIT_CHUNK     (64 * 1024)

typedef enum {
    WAIT_FETCH = 1,          /* the fetch has no header in its file yet */
    WAIT_OPENING,            /* its file is being opened ... */
    WAIT_HEAD,               /* ... and its head read */
    WAIT_BODY,               /* the header went out: the body as written */
    WAIT_READING,            /* a read of the body runs */
    WAIT_SENDING             /* the client has bytes to take */
} wait_state_e;

typedef struct {
    rx_http_request_t           *r;
    rx_http_cache_req_t         *ctx;
    const rx_http_cache_conf_t  *conf;
    rx_int_t                   (*go)(rx_http_request_t *r);
    wait_state_e                 state;
    rx_timer_t                   timer;
    int                          fd;
    uint32_t                     body_start;
    int64_t                      offset;     /* next byte of the file */
    char                        *buf;
    char                        *path;
} wait_t;

static void poll_fetch(wait_t *w);

static void
end(rx_http_request_t *r, rx_int_t rc)
{
    if (rc != RX_AGAIN && rc != RX_OK) {
        rx_http_finalize_request(r, rc);
    }
}

static void
wait_cleanup(void *data)
{
    wait_t *w = data;

    rx_timer_del(&w->timer);
    if (w->fd != -1) {
        close(w->fd);
        w->fd = -1;
    }
}

static void
wait_abort(rx_http_request_t *r)
{
    wait_t *w = r->ctx;

    rx_timer_del(&w->timer);
}

static void
timer_fired(rx_timer_t *t)
{
    wait_t            *w = t->data;
    rx_http_request_t *r = w->r;

    if (r->freed || r->hc == NULL || r->hc->r != r) {
        return;                  /* the request ended while it waited */
    }
    poll_fetch(w);
}

/* The fetch ended without a file for this waiter before it sent anything:
 * look up again (a hit, a fetch of its own, or another wait), or, when
 * the response was not one to store, go upstream as nginx would. */
static void
again(wait_t *w, bool pass)
{
    rx_http_request_t *r = w->r;

    rx_timer_del(&w->timer);
    r->abort_handler = NULL;
    r->op_handler = NULL;
    wait_cleanup(w);
    if (pass) {
        r->cache_status = RX_HTTP_CACHE_MISS;
        end(r, w->go(r));
        return;
    }
    end(r, rx_http_cache_handler(r, w->conf, w->go));
}

/* The fetch failed after this waiter sent the header: its client gets a
 * short response and the connection is closed. */
static void
cut(wait_t *w)
{
    rx_http_request_t *r = w->r;

    rx_http_request_log_error(r, RX_LOG_ERR, 0, "the fetch of cache entry "
        "\"%s\" this request shared failed: the response is cut short",
        w->ctx->file);
    rx_timer_del(&w->timer);
    r->write_handler = NULL;
    r->keepalive = 0;
    rx_http_close_request(r);
}

static void
finish(wait_t *w)
{
    rx_http_request_t *r = w->r;

    rx_timer_del(&w->timer);
    r->write_handler = NULL;
    r->op_handler = NULL;
    end(r, rx_http_output_filter(r, NULL));
}

static void
open_file(wait_t *w, const rx_http_cache_entry_t *e)
{
    rx_http_request_t *r = w->r;
    size_t             len = w->ctx->cache->path.len;

    w->path = rx_pnalloc(r->pool, len + sizeof(e->tmp) + 2);
    if (w->path == NULL) {
        end(r, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    memcpy(w->path, w->ctx->cache->path.data, len);
    w->path[len] = '/';
    memcpy(w->path + len + 1, e->tmp, sizeof(e->tmp));
    w->body_start = e->body_start;
    if (w->body_start > WAIT_CHUNK) {
        /* a header larger than a chunk (a large *_buffer_size) */
        w->buf = rx_pnalloc(r->pool, w->body_start);
        if (w->buf == NULL) {
            end(r, RX_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
    }
    w->state = WAIT_OPENING;
    rx_ring_openat(AT_FDCWD, w->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0,
                   rx_http_op_ud(r, RX_OP_OPEN));
}

static void
read_body(wait_t *w, int64_t avail)
{
    size_t n = (size_t) rx_min(avail, (int64_t) WAIT_CHUNK);

    w->state = WAIT_READING;
    rx_ring_read(w->fd, w->buf, (unsigned) n, (uint64_t) w->offset,
                 rx_http_op_ud(w->r, RX_OP_READ));
}

/* Looks at the fetch in the zone and takes the next step. */
static void
poll_fetch(wait_t *w)
{
    rx_http_cache_entry_t e;
    bool                  running, stored;

    if (rx_http_cache_lookup(w->ctx->cache, w->ctx->md5, &e,
                             &w->r->conn->log) != RX_OK) {
        if (w->state == WAIT_FETCH) again(w, true); else cut(w);
        return;
    }
    running = e.exists && e.updating && e.seq == w->ctx->seq;
    stored = e.exists && !e.updating && e.seq == w->ctx->seq && e.last_stored;
    if (w->state == WAIT_FETCH) {
        if (running && e.tmp[0] && e.body_start
            && e.written >= e.body_start) {
            open_file(w, &e);
        } else if (running) {
            rx_timer_add(&w->timer, WAIT_POLL_MS);
        } else {
            /* stored: a hit now; else the next fetch, or upstream */
            again(w, !stored && e.exists && e.seq == w->ctx->seq
                     && e.last_pass);
        }
        return;
    }
    /* WAIT_BODY */
    if (running && e.written > w->offset) {
        read_body(w, e.written - w->offset);
    } else if (running) {
        rx_timer_add(&w->timer, WAIT_POLL_MS);
    } else if (stored && e.fsize > w->offset) {
        read_body(w, e.fsize - w->offset);
    } else if (stored) {
        finish(w);
    } else {
        cut(w);
    }
}

static rx_int_t
written(rx_http_request_t *r)
{
    wait_t *w = r->ctx;

    if (w->state == WAIT_SENDING && r->out == NULL && !r->conn->sending) {
        w->state = WAIT_BODY;
        poll_fetch(w);
    }
    return RX_OK;
}

static void
on_body(wait_t *w, ssize_t res)
{
    rx_http_request_t *r = w->r;
    rx_chain_t        *cl;

    if (res <= 0) {
        cut(w);
        return;
    }
    w->offset += res;
    cl = rx_chain_from_text(r->pool, "", 0, false);
    if (cl == NULL) {
        cut(w);
        return;
    }
    /* the bytes stay in buf: the next read waits until they are sent */
    cl->buf->start = cl->buf->pos = w->buf;
    cl->buf->end = cl->buf->last = w->buf + res;
    cl->buf->flush = 1;
    w->state = WAIT_SENDING;
    r->write_handler = written;
    if (rx_http_output_filter(r, cl) == RX_ERROR) {
        rx_http_close_request(r);
        return;
    }
    (void) written(r);       /* taken at once: go on */
}

/* The head of the fetch's file is read: the header goes out. */
static void
on_head(wait_t *w, ssize_t res)
{
    rx_http_request_t     *r = w->r;
    rx_http_cache_entry_t  e;
    size_t                 skip = sizeof(rx_http_cache_head_t)
                                  + w->ctx->key.len;

    if (res != (ssize_t) w->body_start || w->body_start <= skip
        || rx_http_cache_replay_header(r, w->buf + skip,
                                       w->buf + w->body_start) != RX_OK) {
        again(w, true);
        return;
    }
    (void) rx_http_cache_lookup(w->ctx->cache, w->ctx->md5, &e,
                                &r->conn->log);
    r->cache_status = RX_HTTP_CACHE_HIT;
    r->headers_out.content_length_n = e.seq == w->ctx->seq && e.clen >= 0
                                      ? e.clen : -1;
    if (rx_http_send_header(r) == RX_ERROR) {
        end(r, RX_ERROR);
        return;
    }
    if (r->header_only || r->headers_out.content_length_n == 0) {
        finish(w);
        return;
    }
    w->offset = w->body_start;
    w->state = WAIT_BODY;
    poll_fetch(w);
}

static void
wait_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    wait_t *w = r->ctx;

    switch (rx_op_kind(cqe->user_data)) {
    case RX_OP_OPEN:
        if (cqe->res < 0) {
            again(w, false);     /* renamed or dropped meanwhile */
            return;
        }
        w->fd = cqe->res;
        w->state = WAIT_HEAD;
        rx_ring_read(w->fd, w->buf, w->body_start, 0,
                     rx_http_op_ud(r, RX_OP_READ));
        return;
    case RX_OP_READ:
        if (w->state == WAIT_HEAD) {
            on_head(w, cqe->res);
        } else {
            on_body(w, cqe->res);
        }
        return;
    default:
        return;
    }
}

rx_int_t
rx_http_cache_wait(rx_http_request_t *r, const rx_http_cache_conf_t *conf,
    rx_int_t (*go)(rx_http_request_t *r))
{
    rx_pool_cleanup_t *cln = rx_pool_cleanup_add(r->pool, 0);
    wait_t            *w = rx_pcalloc(r->pool, sizeof(*w));
    rx_int_t           rc;

    if (cln == NULL || w == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    w->buf = rx_pnalloc(r->pool, WAIT_CHUNK);
    if (w->buf == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    rc = rx_http_discard_request_body(r);
    if (rc != RX_OK) {
        return rc;
    }
    w->r = r;
    w->ctx = r->cache_ctx;
    w->conf = conf;
    w->go = go;
    w->fd = -1;
    w->state = WAIT_FETCH;
    rx_heap_node_init(&w->timer.node);
    w->timer.handler = timer_fired;
    w->timer.data = w;
    cln->handler = wait_cleanup;
    cln->data = w;
    r->ctx = w;
    r->op_handler = wait_op;
    r->abort_handler = wait_abort;
    rx_timer_add(&w->timer, WAIT_POLL_MS);
    return RX_AGAIN;
}
