/*
 * http_upstream_body.c: the response body on its way from the upstream to
 * the client: decoded bytes are copied into blocks of *_buffers, slices of
 * the blocks go down the body filters, and every block is free again once
 * the client has all of them (write handler). When every block is in use,
 * reading from the upstream stops (backpressure), so memory stays bounded
 * whatever the body size.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
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

    if (rx_http_upstream_emit_slice(u) != RX_OK) {
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
rx_int_t
rx_http_upstream_flush(rx_http_upstream_t *u)
{
    rx_chain_t *cl;

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
    }
    if (cl && u->r->out == NULL && !u->r->conn->sending
        && !u->r->filter_buffered) {
        /* a filter (gzip) took the bytes and queued nothing yet: no send
         * will call the write handler, and the blocks are free already */
        rx_http_upstream_write_handler(u->r);
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
rx_int_t
rx_http_upstream_write_handler(rx_http_request_t *r)
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

/* The body is complete: the connection goes back to the pool (when both
 * sides allow) and the response ends. */
void
rx_http_upstream_finish_body(rx_http_upstream_t *u)
{
    rx_http_request_t       *r = u->r;
    rx_http_upstream_conn_t *uc = u->uc;

    rx_http_upstream_end_state(u);
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
    rx_http_upstream_release_peer(u, false);
    if (rx_http_upstream_emit_slice(u) != RX_OK) {
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
void
rx_http_upstream_cut_body(rx_http_upstream_t *u, const char *reason, int err)
{
    rx_http_request_t *r = u->r;

    if (reason) {
        rx_http_upstream_log_error(u, RX_LOG_ERR, err, reason);
    }
    rx_http_upstream_end_state(u);
    u->finished = 1;
    r->write_handler = NULL;
    rx_http_upstream_drop_connection(u);
    rx_http_upstream_release_peer(u, false);
    r->keepalive = 0;
    r->hc->close_after = 1;
    rx_conn_close(r->conn);
}

void
rx_http_upstream_reset_body(rx_http_upstream_t *u)
{
    /* what an earlier try buffered is not this response */
    u->pending = NULL;
    u->used = 0;
    u->fill = u->fill_end = u->slice = NULL;
    u->body_bytes = 0;
}
