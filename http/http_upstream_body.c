/*
 * http_upstream_body.c: the response body on its way from the upstream to
 * the client: decoded bytes are copied into blocks of *_buffers, slices of
 * the blocks go down the body filters, and every block is free again once
 * the client has all of them (write handler). When every block is in use,
 * reading from the upstream stops (backpressure), so memory stays bounded
 * whatever the body size. *_limit_rate pauses reading the same way.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include <fcntl.h>
#include "clock.h"


/* Body buffers: blocks of bufs_size; a slice of a block is handed to the
 * client, and every block is free again once the client has all. */
rx_int_t
rx_http_upstream_emit_slice(rx_http_upstream_t *u)
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
    /* proxy_buffering off: each piece is meant to reach the client as it
     * comes, so a filter that holds bytes (gzip) lets it out (nginx) */
    b->flush = !u->buffering;
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

/* The next block to fill. left: the body bytes known to be still to come
 * (these included; 0: unknown). A body known to fit in less than a block,
 * before any block was made, gets a block of its own size from the pool
 * (a small response then costs no *_buffers-sized allocation); it is kept
 * out of u->blocks, which are reused at their full size. */
static rx_int_t
next_block(rx_http_upstream_t *u, size_t left)
{
    size_t size = u->conf->bufs_size;
    char  *block;

    if (rx_http_upstream_emit_slice(u) != RX_OK) {
        return RX_ERROR;
    }
    if (left && left < size && u->nblocks == 0 && u->used == 0) {
        block = rx_pnalloc(u->r->pool, left);
        if (block == NULL) {
            return RX_ERROR;
        }
        u->used++;
        u->fill = u->slice = block;
        u->fill_end = block + left;
        return RX_OK;
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

static void temp_kick(rx_http_upstream_t *u);
static void file_op(rx_http_request_t *r, const rx_cqe_t *cqe);
static void send_last(rx_http_upstream_t *u);
static void finish_from_memory(rx_http_upstream_t *u);

/* Copies bytes into the blocks, taking the next one as each fills; left
 * as next_block's (at least len when known). */
static rx_int_t
to_blocks(rx_http_upstream_t *u, const char *data, size_t len, size_t left)
{
    size_t n;

    while (len) {
        if (u->fill == u->fill_end && next_block(u, left) != RX_OK) {
            return RX_ERROR;
        }
        n = rx_min(len, (size_t) (u->fill_end - u->fill));
        memcpy(u->fill, data, n);
        u->fill += n;
        data += n;
        len -= n;
        left = left > n ? left - n : 0;
    }
    return RX_OK;
}

rx_int_t
rx_http_upstream_body(rx_http_upstream_t *u, const char *data, size_t len)
{
    size_t left = 0;

    u->body_bytes += (int64_t) len;
    if (u->state) {
        u->state->response_length += (int64_t) len;
    }
    rx_http_cache_store_body(u, data, len);     /* HEAD too: convert_head */
    if (u->r->header_only && !u->tunnel) {
        return RX_OK;          /* HEAD: the body is read and dropped */
    }
    if (u->spilling) {
        return rx_http_temp_append(&u->temp, data, len);
    }
    if (u->body_bytes == (int64_t) len
        && u->headers_in.content_length_n >= u->body_bytes) {
        /* the body's first bytes: what the upstream announced (a hint for
         * the first block's size, once per try, see next_block) */
        left = (size_t) u->headers_in.content_length_n;
    }
    return to_blocks(u, data, len, left);
}

static void
pause_upstream(rx_http_upstream_t *u)
{
    if (u->uc && !u->paused) {
        u->paused = 1;
        rx_timer_del(&u->uc->c->timer);
        u->uc->c->transport->stop_read(u->uc->c);
    }
}

static void
resume_upstream(rx_http_upstream_t *u)
{
    if (u->paused && u->uc && !u->disk_paused && !u->rate_paused) {
        u->paused = 0;
        u->uc->c->transport->start_read(u->uc->c);
        rx_timer_add(&u->uc->c->timer, u->conf->read_timeout);
    }
}

/* The client can take more bytes than are queued for it. */
static bool
client_idle(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;

    return r->out == NULL && !r->conn->sending && !r->filter_buffered
           && u->pending == NULL && u->slice == u->fill;
}

/* Hands what was buffered to the client. When every buffer is in use and
 * the client is slow: with buffering on the rest goes to a temporary file
 * (the upstream is read at its own pace and released early); otherwise
 * reading from the upstream stops until the client catches up. */
rx_int_t
rx_http_upstream_flush(rx_http_upstream_t *u)
{
    rx_chain_t *cl;

    rx_http_upstream_rate_check(u);
    if (rx_http_upstream_emit_slice(u) != RX_OK) {
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
    } else if (cl == NULL && !u->buffering && u->r->out
               && !u->r->response_done) {
        /* buffering off and no body byte yet: the header, which waits in
         * r->out for the first of them, goes out now (nginx flushes it;
         * an event stream's first event may be minutes away) */
        rx_http_connection_send(u->r->hc);
    }
    if (cl && client_idle(u)) {
        /* a filter (gzip) took the bytes and queued nothing yet: no send
         * will call the write handler, and the blocks are free already */
        rx_http_upstream_write_handler(u->r);
    }
    if (u->spilling) {
        temp_kick(u);
        return RX_OK;
    }
    if (!u->body_done && u->uc && u->used >= (rx_uint_t) u->conf->bufs_num) {
        if (u->buffering && !u->tunnel && u->conf->max_temp_file_size > 0
            && u->conf->temp_path.data && !u->temp_failed) {
            u->spilling = 1;       /* from now on, via the file */
            u->r->op_handler = file_op;
            if (u->temp.fd == -1) {
                /* nginx's warning, once per response */
                rx_http_request_log_error_action(u->r, RX_LOG_WARN, 0, u->action,
                    "an upstream response is buffered to a temporary file "
                    "in %s", u->conf->temp_path.data);
            }
            temp_kick(u);
        } else {
            pause_upstream(u);
        }
    }
    return RX_OK;
}

/* The client has everything queued: every block is free again, and the
 * file (if any) gives its next part. */
rx_int_t
rx_http_upstream_write_handler(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    if (u == NULL || u->pending || u->slice != u->fill) {
        return RX_OK;
    }
    u->used = 0;
    u->fill = u->fill_end = u->slice = NULL;
    if (u->spilling) {
        temp_kick(u);
        return RX_OK;
    }
    if (u->phase != RX_HTTP_UPSTREAM_DONE) {
        resume_upstream(u);
    }
    return RX_OK;
}

/* r's client left mid-response (http_send.c): the exchange goes on to
 * its end when the response is going into the cache (nginx finishes the
 * upstream read into the cache then), so the requests streaming from its
 * growing file lose nothing. */
bool
rx_http_upstream_detach(rx_http_request_t *r)
{
    rx_http_upstream_t *u = r->upstream;

    /* a body complete upstream whose file is being finished counts too:
     * its end (finish_from_memory) waits for the file */
    return u && !u->tunnel && rx_http_cache_storing(u);
}

/* The body is complete: the connection goes back to the pool (when both
 * sides allow) and the response ends, after what the file still holds. */
void
rx_http_upstream_finish_body(rx_http_upstream_t *u)
{
    rx_http_upstream_conn_t *uc = u->uc;

    rx_http_upstream_end_state(u);
    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_DONE);
    if (uc) {
        uc->requests++;
        if (u->keepalive && u->request_sent && !uc->c->sending) {
            u->uc = NULL;
            uc->u = NULL;
            rx_timer_del(&uc->c->timer);
            rx_http_upstream_conn_release(uc);   /* or closes it */
        } else {
            rx_http_upstream_drop_connection(u);
        }
    }
    rx_http_upstream_release_peer(u, false);
    if (u->spilling) {
        u->eof_pending = 1;
        temp_kick(u);            /* the rest leaves through the file */
        return;
    }
    if (rx_http_cache_store_end(u, finish_from_memory) == RX_AGAIN) {
        return;                  /* the end waits for the cache file */
    }
    finish_from_memory(u);
}

/* The upstream is done and the rest of the body is in the blocks: it
 * leaves with the body's end. */
static void
finish_from_memory(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;

    r->write_handler = NULL;
    if (rx_http_upstream_emit_slice(u) != RX_OK) {
        rx_http_close_request(r);
        return;
    }
    if (u->pending) {
        /* the rest of the body and its end in one pass down the filters:
         * a body that came whole in one read (with the header, often)
         * leaves in one send, the last chunk included, not two */
        rx_chain_t *cl = u->pending;
        rx_buf_t   *b = rx_calloc_buf(r->pool);
        rx_chain_t *end = rx_alloc_chain_link(r->pool);

        u->pending = NULL;
        u->eof_pending = 0;
        if (b == NULL || end == NULL) {
            rx_http_close_request(r);
            return;
        }
        b->last_buf = 1;
        b->sync = 1;
        end->buf = b;
        end->next = NULL;
        *u->pending_last = end;
        if (rx_http_output_filter(r, cl) == RX_ERROR) {
            rx_http_close_request(r);
        }
        return;
    }
    send_last(u);
}

static void
send_last(rx_http_upstream_t *u)
{
    u->r->write_handler = NULL;
    u->eof_pending = 0;
    if (rx_http_output_filter(u->r, NULL) == RX_ERROR) {
        rx_http_close_request(u->r);
    }
}

/*
 * The temporary file. Bytes from the upstream fill wbuf[wcur]; when no
 * write is in flight it is written at the end of the file and the other
 * buffer fills meanwhile. When the client has taken everything queued, the
 * next part is read back into rbuf and sent. When the file is empty again
 * (all written bytes read back, nothing waiting), it starts over from
 * offset 0 and the body goes back to the memory blocks. The upstream is
 * paused only when both write buffers are full (the disk is slower) or the
 * file reached *_max_temp_file_size (the client is much slower).
 *
 * When the file cannot be made or written (a directory the worker's user
 * cannot write, a full disk), nothing is lost: the upstream is paused,
 * what the file holds is read back and sent, then the bytes that never
 * reached it, and the response goes on in memory with backpressure, as
 * with *_max_temp_file_size 0.
 */
static void
temp_fail(rx_http_upstream_t *u, const char *what, int err)
{
    rx_http_request_log_error(u->r, RX_LOG_CRIT, err, "%s temporary file in "
                              "\"%s\" failed", what, u->conf->temp_path.data);
    u->spilling = 0;
    u->r->op_handler = NULL;
    rx_http_upstream_cut_body(u, NULL, 0);
}

/* The file failed (open or write): no more writes; temp_kick drains it. */
static void
temp_give_up(rx_http_upstream_t *u, const char *what, int err)
{
    char directive[32];

    snprintf(directive, sizeof(directive), "%s_temp_path", u->conf->module);
    rx_http_temp_log_failure(u->r, u->conf->temp_path.data, directive, what,
        err, "an upstream response", "responses are held in memory and read "
        "from the upstream at the client's pace");
    u->temp_broken = 1;
    u->disk_paused = 1;
    pause_upstream(u);
}

/* Everything the file held has been sent: the bytes that never reached it
 * go to the blocks (oldest first: a failed write's, then the filling
 * buffer's), and the response goes on from memory. */
static void
temp_to_memory(rx_http_upstream_t *u)
{
    rx_http_temp_file_t *tf = &u->temp;
    unsigned             i = tf->wcur ^ 1, k;

    u->spilling = 0;
    u->temp_broken = 0;
    u->temp_failed = 1;          /* memory only, for the rest of this body */
    u->disk_paused = 0;
    u->r->op_handler = NULL;
    for (k = 0; k < 2; k++, i ^= 1) {
        if (tf->wlen[i] && to_blocks(u, tf->wbuf[i], tf->wlen[i], 0) != RX_OK) {
            rx_http_upstream_cut_body(u, NULL, 0);
            return;
        }
        tf->wlen[i] = 0;
    }
    rx_http_temp_free(tf);
    u->temp_read = 0;
    if (u->eof_pending) {
        u->eof_pending = 0;
        finish_from_memory(u);
        return;
    }
    if (rx_http_upstream_flush(u) != RX_OK) {
        rx_http_upstream_cut_body(u, NULL, 0);
        return;
    }
    if (client_idle(u)) {
        rx_http_upstream_write_handler(u->r);   /* nothing was queued */
    }
}

static void
temp_kick(rx_http_upstream_t *u)
{
    rx_http_request_t   *r = u->r;
    rx_http_temp_file_t *tf = &u->temp;

    if (!u->temp_broken) {
        rx_http_temp_kick(r, tf);
        /* the upstream waits when the disk is behind or the file is full */
        if ((tf->writing && tf->wlen[tf->wcur] >= RX_HTTP_TEMP_CHUNK)
            || tf->submitted >= u->conf->max_temp_file_size) {
            u->disk_paused = 1;
            pause_upstream(u);
        } else if (u->disk_paused) {
            u->disk_paused = 0;
            resume_upstream(u);
        }
    }
    if ((tf->fd == -1 && !u->temp_broken) || u->temp_reading
        || !client_idle(u)) {
        return;
    }
    if (tf->written > u->temp_read) {
        size_t n = (size_t) rx_min(tf->written - u->temp_read,
                                   (int64_t) RX_HTTP_TEMP_CHUNK);
        if (u->rbuf == NULL && (u->rbuf = malloc(RX_HTTP_TEMP_CHUNK)) == NULL) {
            temp_fail(u, "reading", ENOMEM);
            return;
        }
        u->temp_reading = 1;
        rx_ring_read(tf->fd, u->rbuf, (unsigned) n, (uint64_t) u->temp_read,
                     rx_http_op_ud(r, RX_OP_READ));
        return;
    }
    if (u->temp_broken) {
        temp_to_memory(u);
        return;
    }
    if (!rx_http_temp_settled(tf)) {
        return;                      /* more is on its way to the file */
    }
    /* the client caught up: the file is empty */
    rx_http_temp_rewind(tf);
    u->temp_read = 0;
    if (u->eof_pending) {
        send_last(u);
        return;
    }
    if (u->phase != RX_HTTP_UPSTREAM_DONE) {
        u->spilling = 0;
        u->disk_paused = 0;
        resume_upstream(u);
    }
}

static void
file_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    rx_http_upstream_t *u = r->upstream;
    const char         *what;
    int                 err;

    if (u == NULL || !u->spilling) {
        if (rx_op_kind(cqe->user_data) == RX_OP_OPEN && cqe->res >= 0) {
            close(cqe->res);
        }
        return;
    }
    if (rx_op_kind(cqe->user_data) == RX_OP_READ) {
        rx_chain_t *cl;

        u->temp_reading = 0;
        if (cqe->res <= 0) {
            temp_fail(u, "reading a", cqe->res < 0 ? -cqe->res : EIO);
            return;
        }
        u->temp_read += cqe->res;
        cl = rx_chain_from_text(r->pool, "", 0, false);
        if (cl == NULL) {
            temp_fail(u, "reading a", ENOMEM);
            return;
        }
        /* the bytes stay in rbuf: the next read waits until they are sent */
        cl->buf->start = cl->buf->pos = u->rbuf;
        cl->buf->end = cl->buf->last = u->rbuf + cqe->res;
        if (rx_http_output_filter(r, cl) == RX_ERROR) {
            rx_http_close_request(r);
            return;
        }
    } else if (rx_http_temp_handle(&u->temp, cqe, &err, &what) == RX_ERROR) {
        temp_give_up(u, what, err);
    }
    temp_kick(u);
}

void
rx_http_upstream_free_body(rx_http_upstream_t *u)
{
    if (u->rate_timer.handler) {
        rx_timer_del(&u->rate_timer);
    }
    rx_http_temp_free(&u->temp);
    free(u->rbuf);
    u->rbuf = NULL;
}

/* The body broke after the header went to the client: what arrived is
 * sent, then the client connection is closed (the client sees a short
 * body, never a wrong one). */
void
rx_http_upstream_cut_body(rx_http_upstream_t *u, const char *reason, int err)
{
    rx_http_request_t *r = u->r;

    if (reason) {
        rx_http_upstream_log_error(u, RX_LOG_ERR, err, reason);
    }
    rx_http_upstream_end_state(u);
    u->spilling = 0;
    r->write_handler = NULL;
    rx_http_upstream_end(u);
    r->keepalive = 0;
    rx_http_close_request(r);       /* a subrequest fails instead */
}

/* ---- *_limit_rate ---- */

static void
rate_expired(rx_timer_t *t)
{
    rx_http_upstream_t *u = t->data;

    u->rate_paused = 0;
    if (u->uc == NULL || u->phase == RX_HTTP_UPSTREAM_DONE) {
        return;                  /* the exchange ended while it waited */
    }
    /* reading goes on unless the buffers or the disk still hold it */
    if (u->spilling || u->used < (rx_uint_t) u->conf->bufs_num) {
        resume_upstream(u);
    }
}

static void
rate_start(rx_http_upstream_t *u)
{
    rx_str_t text;
    ssize_t  n;

    u->rate = 0;
    u->rate_started = 1;
    if (u->conf->limit_rate == NULL || !u->buffering || u->tunnel
        || rx_http_complex_value(u->r, u->conf->limit_rate, &text) != RX_OK) {
        return;
    }
    n = rx_parse_size(&text);
    if (n < 0) {
        rx_http_request_log_error(u->r, RX_LOG_ERR, 0, "invalid \"%s_limit_rate"
                                  "\" value \"%.*s\"", u->conf->module,
                                  (int) text.len, text.data);
        return;
    }
    u->rate = (size_t) n;
    u->rate_base = u->state->bytes_received;
    u->rate_start = rx_current_msec;
    u->rate_timer.handler = rate_expired;
    u->rate_timer.data = u;
}

/* As nginx: a second's worth at once, then no more than the rate since
 * the body began; ahead of it, reading pauses until it is not. */
void
rx_http_upstream_rate_check(rx_http_upstream_t *u)
{
    double    rate, elapsed, excess;
    rx_msec_t ms;

    if (!u->rate_started && u->header_sent) {
        rate_start(u);             /* the body began: buffering is known */
    }
    if (u->rate == 0 || u->body_done || u->rate_paused || u->uc == NULL) {
        return;
    }
    rate = (double) u->rate;
    elapsed = (double) (rx_current_msec - u->rate_start) / 1000.0;
    excess = (double) (u->state->bytes_received - u->rate_base)
             - rate * (elapsed + 1.0);
    if (excess <= 0) {
        return;
    }
    ms = (rx_msec_t) (excess * 1000.0 / rate) + 1;
    u->rate_paused = 1;
    pause_upstream(u);
    rx_timer_add(&u->rate_timer, ms);
}
