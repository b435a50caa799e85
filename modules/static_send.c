/*
 * static_send.c: the body of a static response, after its header. Read
 * through the ring in chunks that are sent before the next one is read,
 * so memory per response stays bounded whatever the file size; ranges
 * one after the other, multipart boundaries between them.
 *
 * With `sendfile on`, a body of sendfile_min_size (4 KiB) or more goes
 * out by sendfile(2) from the worker on the non-blocking socket, the
 * header ahead of it with MSG_MORE, and a POLLOUT on the ring when the
 * socket is full (once the handler has returned, a body sent whole ends
 * on a posted event instead). With `sendfile_splice on` as well (and
 * sendfile_min_size 64 KiB), it goes by
 * splice(file -> pipe) linked with splice(pipe -> socket) instead, one
 * chunk at a time, through a pipe the connection borrows from the worker.
 * Smaller bodies always leave with the header in one send: the read path
 * measured cheaper for them (docs/performance.md). Their first chunk is
 * read on the worker's thread when the page cache holds it
 * (rx_ring_try_read), so the response goes out in the handler's loop turn;
 * the ring reads it otherwise, and reads the chunks after it.
 */
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include "http.h"
#include "static_send.h"
#include "tls.h"

#define STATIC_CHUNK       (128 * 1024)
#define SPLICE_CHUNK       (256 * 1024)
#define SPARE_PIPES        16
#define SENDFILE_MAX       0x7ffff000   /* the kernel's most per call */

/* The worker's spare pipes, kept between responses. */
static int       spare[SPARE_PIPES][2];
static rx_uint_t nspare;

/* ---- the read path -------------------------------------------------- */

rx_str_t
rx_http_static_part_header(rx_http_request_t *r,
    rx_http_static_ctx_t *ctx, rx_uint_t i)
{
    rx_str_t h;

    h.data = rx_pnalloc(r->pool, 256 + ctx->content_type.len);
    if (h.data == NULL) {
        h.len = 0;
        return h;
    }
    h.len = (size_t) sprintf(h.data, "\r\n--%s\r\nContent-Type: %.*s\r\n"
        "Content-Range: bytes %" PRId64 "-%" PRId64 "/%" PRId64 "\r\n\r\n",
        ctx->boundary, (int) ctx->content_type.len, ctx->content_type.data,
        ctx->ranges[i].start - ctx->base, ctx->ranges[i].end - 1 - ctx->base,
        ctx->size);
    return h;
}

/* Queues a multipart boundary (before part i, or the closing one). */
static rx_int_t
send_boundary(rx_http_request_t *r, rx_http_static_ctx_t *ctx, rx_uint_t i,
    bool last)
{
    rx_str_t    h;
    rx_chain_t *cl;
    char        end[64];

    if (last) {
        h.data = end;
        h.len = (size_t) snprintf(end, sizeof(end), "\r\n--%s--\r\n",
                                  ctx->boundary);
    } else {
        h = rx_http_static_part_header(r, ctx, i);
        if (h.data == NULL) return RX_ERROR;
    }
    cl = rx_chain_from_text(r->pool, h.data, h.len, last);
    return cl ? rx_http_output_filter(r, cl) : RX_ERROR;
}

/* A file opened inline is still O_NONBLOCK: io_uring would answer a read
 * or splice of it that needs the disk with -EAGAIN. On failure the ring's
 * read reports what it gets. */
static void
fd_blocking(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    if (!ctx->nonblock) {
        return;
    }
    ctx->nonblock = false;
    if (rx_ring_file_blocking(ctx->fd, 0) == -1) {
        rx_http_request_log_error(r, RX_LOG_ALERT, errno, "fcntl() of \"%s\" "
                                  "failed", ctx->path.data);
    }
}

static rx_int_t take_chunk(rx_http_request_t *r, int32_t res);

static rx_int_t
read_next(rx_http_request_t *r)
{
    rx_http_static_ctx_t *ctx = r->ctx;
    rx_http_range_t      *rg = &ctx->ranges[ctx->range];
    size_t                n = (size_t) rx_min((int64_t) ctx->buf_size,
                                              rg->end - ctx->offset);

    r->write_handler = NULL;
    if (ctx->content) {
        /* small_file_cache's bytes: the chunk is where they are */
        ctx->buf = (char *) ctx->content + ctx->offset;
        if (take_chunk(r, (int32_t) n) != RX_OK) {
            rx_conn_close(r->conn);
        }
        return RX_AGAIN;
    }
    fd_blocking(r, ctx);
    rx_ring_read(ctx->fd, ctx->buf, (unsigned) n, (uint64_t) ctx->offset,
                 rx_http_op_ud(r, RX_OP_READ));
    return RX_AGAIN;
}

/* res (> 0) bytes read into ctx->buf: to the output, then the next chunk
 * or the end. RX_ERROR: the connection is to be closed. */
static rx_int_t
take_chunk(rx_http_request_t *r, int32_t res)
{
    rx_http_static_ctx_t *ctx = r->ctx;
    rx_http_range_t      *rg = &ctx->ranges[ctx->range];
    rx_chain_t           *cl;
    rx_buf_t             *b;
    bool                  range_done, all_done;

    ctx->offset += res;
    range_done = ctx->offset >= rg->end;
    all_done = range_done && ctx->range + 1 == ctx->nranges;

    b = rx_calloc_buf(r->pool);
    cl = rx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    b->memory = 1;
    b->start = b->pos = ctx->buf;
    b->last = b->end = ctx->buf + res;
    b->last_buf = all_done && !ctx->multipart;
    cl->buf = b;
    if (rx_http_output_filter(r, cl) != RX_OK) {
        return RX_ERROR;
    }
    if (all_done) {
        if (ctx->multipart && send_boundary(r, ctx, 0, true) != RX_OK) {
            return RX_ERROR;
        }
        return RX_OK;
    }
    if (range_done) {
        ctx->range++;
        ctx->offset = ctx->ranges[ctx->range].start;
        if (send_boundary(r, ctx, ctx->range, false) != RX_OK) {
            return RX_ERROR;
        }
    }
    /* a filter may have taken the chunk whole and queued nothing yet (gzip
     * keeps small output inside zlib): no send will call back, read on */
    if (r->out == NULL && !r->conn->sending && !r->filter_buffered) {
        read_next(r);
        return RX_OK;
    }
    /* the buffer is reused: read the next chunk once this one is sent */
    r->write_handler = read_next;
    return RX_OK;
}

static void
on_file_read(rx_http_request_t *r, int32_t res)
{
    rx_http_static_ctx_t *ctx = r->ctx;

    if (res <= 0) {
        /* the file shrank (or failed) under us: the promised length cannot
         * be kept, so the connection ends with the response */
        rx_http_request_log_error(r, RX_LOG_CRIT, res < 0 ? -res : 0,
            "read() of \"%s\" at %" PRId64 " failed%s", ctx->path.data,
            ctx->offset, res == 0 ? ": file was truncated while sent" : "");
        r->hc->close_after = 1;
        rx_conn_close(r->conn);
        return;
    }
    if (take_chunk(r, res) != RX_OK) {
        rx_conn_close(r->conn);
    }
}

/* The whole file read at once on a miss of small_file_cache: its bytes
 * go to the store with the state the open found (before this read). */
static void
offer_content(rx_http_static_ctx_t *ctx, size_t n)
{
    rx_http_open_file_t *of = ctx->of;

    if (of && of->content_store && of->id_known && ctx->offset == 0
        && !ctx->multipart && (int64_t) n == ctx->size) {
        rx_http_file_content_add(of->content_store, ctx->path.data,
                                 ctx->path.len, ctx->fd, &of->id, ctx->buf, n);
    }
}

/* The first chunk, from the content handler: from the page cache at once
 * when it is all there (the response then leaves in this loop turn), else
 * through the ring. A short read (the file shrank) is the ring's to
 * report. */
static rx_int_t
read_first(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_http_range_t *rg = &ctx->ranges[ctx->range];
    size_t           n = (size_t) rx_min((int64_t) ctx->buf_size,
                                         rg->end - ctx->offset);

    if (ctx->content) {
        ctx->buf = (char *) ctx->content + ctx->offset;
        return take_chunk(r, (int32_t) n) == RX_OK ? RX_AGAIN : RX_ERROR;
    }
    if (rx_ring_try_read(ctx->fd, ctx->buf, n, ctx->offset) != (ssize_t) n) {
        return read_next(r);
    }
    offer_content(ctx, n);
    /* as from the ring's completion: the response's end comes from its
     * send, so the handler goes on waiting for it */
    return take_chunk(r, (int32_t) n) == RX_OK ? RX_AGAIN : RX_ERROR;
}

/* ---- zero copy: splice and sendfile ---------------------------------- */

static rx_int_t
pipe_get(rx_http_static_ctx_t *ctx, rx_log_t *log)
{
    if (nspare) {
        nspare--;
        ctx->pipe[0] = spare[nspare][0];
        ctx->pipe[1] = spare[nspare][1];
        return RX_OK;
    }
    if (pipe2(ctx->pipe, O_CLOEXEC) == -1) {
        rx_log_error(RX_LOG_ALERT, log, errno, "pipe2() failed");
        return RX_ERROR;
    }
    /* a chunk fits the pipe: one splice pair moves it */
    if (fcntl(ctx->pipe[1], F_SETPIPE_SZ, SPLICE_CHUNK) == -1) {
        rx_log_error(RX_LOG_NOTICE, log, errno, "fcntl(F_SETPIPE_SZ, %d) "
                     "failed, splicing in smaller chunks", SPLICE_CHUNK);
    }
    return RX_OK;
}

/* Pool cleanup: an empty pipe goes back to the worker, one that still
 * holds bytes (an aborted response) is closed. */
static void
pipe_put(void *data)
{
    rx_http_static_ctx_t *ctx = data;

    if (ctx->pipe[0] == -1) {
        return;
    }
    if (ctx->in_pipe == 0 && ctx->splices == 0 && nspare < SPARE_PIPES) {
        spare[nspare][0] = ctx->pipe[0];
        spare[nspare][1] = ctx->pipe[1];
        nspare++;
    } else {
        close(ctx->pipe[0]);
        close(ctx->pipe[1]);
    }
    ctx->pipe[0] = ctx->pipe[1] = -1;
}

/* Bodies may go from the file to the socket without passing through the
 * worker: plain TCP, or TLS that the kernel encrypts (kTLS). */
static bool
socket_takes_files(const rx_conn_t *c)
{
#if (RX_HAVE_OPENSSL)
    if (rx_tls_ktls_send(c)) {
        return true;
    }
#endif
    return c->transport == &rx_plain_transport;
}

/* The body may go from the file to the socket without the worker reading
 * it (by splice or sendfile, as the location says). */
static bool
use_zero_copy(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    rx_http_static_conf_t   *scf = rx_http_get_module_loc_conf(r,
                                       rx_http_static_module);

    /* a file small_file_cache may keep is read (its bytes go to it) */
    return clcf->sendfile && !ctx->content && !ctx->multipart
           && !(ctx->of && ctx->of->content_store && ctx->of->id_known
                && rx_http_file_content_wants(ctx->of->content_store,
                                              &ctx->of->id))
           && !r->filter_need_in_memory
           && socket_takes_files(r->conn)
           && ctx->ranges[0].end - ctx->ranges[0].start
              >= (int64_t) scf->zc_min;
}

/* The next step of a spliced body: drain what the pipe holds, else move
 * the next chunk, else end the response. */
static rx_int_t
splice_next(rx_http_request_t *r)
{
    rx_http_static_ctx_t    *ctx = r->ctx;
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_range_t         *rg = &ctx->ranges[0];
    int                      sock = r->conn->fd;
    unsigned                 n;

    r->write_handler = NULL;
    if (ctx->in_pipe > 0) {
        ctx->fill_first = false;
        ctx->splices = 1;
        rx_ring_splice(ctx->pipe[0], -1, sock, -1, (unsigned) ctx->in_pipe,
                       false, ctx->offset < rg->end,
                       rx_http_op_ud(r, RX_OP_SPLICE));
    } else if (ctx->offset < rg->end) {
        n = (unsigned) rx_min((int64_t) SPLICE_CHUNK, rg->end - ctx->offset);
        ctx->fill_first = true;
        ctx->splices = 2;
        rx_ring_splice(ctx->fd, ctx->offset, ctx->pipe[1], -1, n, true, false,
                       rx_http_op_ud(r, RX_OP_SPLICE));
        rx_ring_splice(ctx->pipe[0], -1, sock, -1, n, false,
                       ctx->offset + n < rg->end,
                       rx_http_op_ud(r, RX_OP_SPLICE));
    } else {
        r->sending_file = 0;
        return rx_http_output_filter(r, NULL);      /* the end */
    }
    rx_timer_add(&r->conn->timer, clcf->send_timeout);
    return RX_AGAIN;
}

static void
on_splice(rx_http_request_t *r, int32_t res)
{
    rx_http_static_ctx_t *ctx = r->ctx;
    bool                  fill = ctx->fill_first;

    ctx->fill_first = false;
    ctx->splices--;
    if (fill) {
        if (res <= 0) {
            rx_http_request_log_error(r, RX_LOG_CRIT, res < 0 ? -res : 0,
                "splice() of \"%s\" at %" PRId64 " failed%s", ctx->path.data,
                ctx->offset, res == 0 ? ": file was truncated while sent" : "");
            r->hc->close_after = 1;
            rx_conn_close(r->conn);
            return;
        }
        ctx->offset += res;
        ctx->in_pipe += res;
        return;                        /* its partner follows */
    }
    if (res == -ECANCELED && r->conn->state == RX_CONN_ACTIVE) {
        /* a short fill (an unaligned offset, a smaller pipe) breaks the
         * link: nothing left the pipe, the next step drains it */
        res = 0;
    }
    if (res < 0) {
        rx_http_log_error_action(r->hc, RX_LOG_INFO, -res,
                                 "sending response to client",
                                 "splice() failed");
        rx_conn_close(r->conn);
        return;
    }
    ctx->in_pipe -= res;
    r->bytes_sent += res;
    if (ctx->splices == 0 && r->conn->state == RX_CONN_ACTIVE) {
        rx_int_t rc = splice_next(r);
        if (rc != RX_AGAIN && rc != RX_OK) {
            rx_conn_close(r->conn);
        }
    }
}

static rx_int_t
start_splice(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_pool_cleanup_t *cln;
    int                fl;

    fd_blocking(r, ctx);
    ctx->pipe[0] = ctx->pipe[1] = -1;
    cln = rx_pool_cleanup_add(r->pool, 0);
    if (cln == NULL || pipe_get(ctx, &r->conn->log) != RX_OK) {
        return RX_ERROR;
    }
    cln->handler = pipe_put;
    cln->data = ctx;
    /* an earlier response on the connection went by sendfile and left the
     * socket non-blocking: a splice into it would then fail with EAGAIN
     * in io-wq instead of waiting */
    fl = fcntl(r->conn->fd, F_GETFL);
    if (fl != -1 && (fl & O_NONBLOCK)) {
        (void) fcntl(r->conn->fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    r->conn->nonblocking = false;
    ctx->offset = ctx->ranges[0].start;
    r->sending_file = 1;
    /* the header goes first; the splices start when it is out */
    r->write_handler = splice_next;
    rx_http_connection_send(r->hc);
    return RX_AGAIN;
}

/*
 * The sendfile(2) path. io_uring has no sendfile opcode, so the worker
 * calls sendfile(2) itself on the socket made non-blocking, at most
 * sendfile_max_chunk per call; when the socket is full (EAGAIN, or a short
 * count) or a chunk was sent and more remains, a one-shot POLLOUT on the
 * ring brings it back, so one big body never holds the loop for longer
 * than a chunk. The file's pages are read by the worker's own thread: a
 * cold page cache blocks the loop while the disk answers, the trade-off
 * nginx's `sendfile on` has without `aio threads` (docs/performance.md).
 */
static rx_int_t
sendfile_wait(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    rx_ring_poll_add(r->conn->fd, POLLOUT, rx_http_op_ud(r, RX_OP_POLL));
    rx_timer_add(&r->conn->timer, clcf->send_timeout);
    return RX_AGAIN;
}

static rx_int_t sendfile_next(rx_http_request_t *r);

static void
end_cancel(void *data)
{
    rx_post_cancel(data);
}

/* The response's end, posted: it runs once the handler has returned,
 * unless its connection is closing (freeing the request's pool cancels
 * the post, so r is still there). */
static void
end_posted(rx_posted_t *p)
{
    rx_http_request_t *r = p->data;
    rx_int_t           rc;

    if (r->conn->state != RX_CONN_ACTIVE) {
        return;
    }
    rc = sendfile_next(r);
    if (rc != RX_AGAIN && rc != RX_OK && rc != RX_DONE) {
        rx_conn_close(r->conn);
    }
}

/* Instead of a POLLOUT on a socket known to have taken everything: no
 * operation, no completion. RX_ERROR when the pool cannot say to cancel
 * it (then the poll goes instead). */
static rx_int_t
post_end(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    rx_pool_cleanup_t *cln = rx_pool_cleanup_add(r->pool, 0);

    if (cln == NULL) {
        return RX_ERROR;
    }
    cln->handler = end_cancel;
    cln->data = &ctx->end;
    ctx->end.handler = end_posted;
    ctx->end.data = r;
    rx_post(&ctx->end);
    return RX_OK;
}

static rx_int_t
sendfile_next(rx_http_request_t *r)
{
    rx_http_static_ctx_t    *ctx = r->ctx;
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_range_t         *rg = &ctx->ranges[0];
    size_t                   n, max = clcf->sendfile_max_chunk;
    off_t                    off;
    ssize_t                  sent;

    r->write_handler = NULL;
    if (ctx->offset >= rg->end) {
        r->sending_file = 0;
        return rx_http_output_filter(r, NULL);      /* the end */
    }
    if (max == 0 || max > SENDFILE_MAX) {
        max = SENDFILE_MAX;
    }
    n = (size_t) rx_min((int64_t) max, rg->end - ctx->offset);
    off = (off_t) ctx->offset;
    do {
        sent = sendfile(r->conn->fd, ctx->fd, &off, n);
    } while (sent == -1 && errno == EINTR);

    if (sent > 0) {
        ctx->offset += sent;
        r->bytes_sent += sent;
        if (ctx->offset >= rg->end && !ctx->in_handler) {
            rx_timer_del(&r->conn->timer);
            r->sending_file = 0;
            return rx_http_output_filter(r, NULL);
        }
        /* All sent from inside the content handler: the end waits for
         * the end of the loop turn, as ending frees the request under its
         * callers. A short count: the socket is full; a whole chunk:
         * others get their turn first. Either way POLLOUT says when to go
         * on. */
        if (ctx->offset >= rg->end && post_end(r, ctx) == RX_OK) {
            return RX_AGAIN;
        }
        return sendfile_wait(r);
    }
    if (sent == -1 && errno == EAGAIN) {
        return sendfile_wait(r);
    }
    if (sent == 0) {
        /* the file shrank under us: the promised length cannot be kept */
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "sendfile() reported "
            "that \"%s\" was truncated at %" PRId64, ctx->path.data,
            ctx->offset);
    } else {
        rx_http_log_error_action(r->hc, RX_LOG_INFO, errno,
                                 "sending response to client",
                                 "sendfile() failed");
    }
    r->hc->close_after = 1;
    rx_conn_close(r->conn);
    return RX_DONE;
}

static void
on_poll(rx_http_request_t *r, int32_t res)
{
    rx_int_t rc;

    if (res < 0) {
        if (res != -ECANCELED) {
            rx_http_log_error_action(r->hc, RX_LOG_INFO, -res,
                                     "sending response to client",
                                     "poll() failed");
        }
        rx_conn_close(r->conn);
        return;
    }
    /* POLLERR / POLLHUP too: sendfile() reports what went wrong */
    rc = sendfile_next(r);
    if (rc != RX_AGAIN && rc != RX_OK && rc != RX_DONE) {
        rx_conn_close(r->conn);
    }
}

/*
 * The header leaves now, from the worker, with MSG_MORE: it waits in the
 * socket for the first body bytes and leaves in the same segments (what
 * tcp_nopush's cork does for nginx, without the two setsockopt calls).
 * Whatever does not fit goes through the ring, and the body after it.
 */
static rx_int_t
start_sendfile(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    struct iovec  iov[16];
    struct msghdr msg;
    rx_chain_t   *cl;
    ssize_t       sent;
    int           n = 0, fl;

    /* once per connection: it stays so for the next responses */
    if (!r->conn->nonblocking) {
        fl = fcntl(r->conn->fd, F_GETFL);
        if (fl == -1 || (!(fl & O_NONBLOCK)
                         && fcntl(r->conn->fd, F_SETFL, fl | O_NONBLOCK) == -1)) {
            rx_log_error(RX_LOG_ALERT, &r->conn->log, errno,
                         "fcntl(O_NONBLOCK) failed");
            return RX_ERROR;
        }
        r->conn->nonblocking = true;
    }
    ctx->offset = ctx->ranges[0].start;
    r->sending_file = 1;
    for (cl = r->out; cl && n < (int) rx_nelems(iov); cl = cl->next) {
        if (cl->buf->last > cl->buf->pos) {
            iov[n].iov_base = cl->buf->pos;
            iov[n].iov_len = (size_t) (cl->buf->last - cl->buf->pos);
            n++;
        }
    }
    if (n == 0 || r->conn->sending) {
        goto ring;
    }
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = iov;
    msg.msg_iovlen = (size_t) n;
    sent = sendmsg(r->conn->fd, &msg, MSG_MORE | MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent <= 0) {
        goto ring;              /* the ring's send reports any error */
    }
    rx_http_out_sent(r, (size_t) sent);
    if (r->out == NULL) {
        rx_int_t rc;

        ctx->in_handler = true;
        rc = sendfile_next(r);
        ctx->in_handler = false;
        return rc;
    }

ring:
    r->write_handler = sendfile_next;
    rx_http_connection_send(r->hc);
    return RX_AGAIN;
}

rx_int_t
rx_http_static_send_body(rx_http_request_t *r, rx_http_static_ctx_t *ctx)
{
    if (use_zero_copy(r, ctx)) {
        rx_http_static_conf_t *scf = rx_http_get_module_loc_conf(r,
                                        rx_http_static_module);

        return scf->splice ? start_splice(r, ctx) : start_sendfile(r, ctx);
    }
    ctx->range = 0;
    ctx->offset = ctx->ranges[0].start;
    ctx->buf_size = (size_t) rx_min((int64_t) STATIC_CHUNK,
                                    ctx->ranges[0].end - ctx->ranges[0].start);
    if (ctx->multipart) {
        ctx->buf_size = STATIC_CHUNK;
        if (send_boundary(r, ctx, 0, false) != RX_OK) {
            return RX_ERROR;
        }
    }
    if (ctx->content) {
        return read_first(r, ctx);      /* no buffer: the bytes are kept */
    }
    ctx->buf = rx_pnalloc(r->pool, ctx->buf_size);
    if (ctx->buf == NULL) {
        return RX_ERROR;
    }
    return read_first(r, ctx);
}

void
rx_http_static_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    switch (rx_op_kind(cqe->user_data)) {
    case RX_OP_READ:
        on_file_read(r, cqe->res);
        return;
    case RX_OP_SPLICE:
        on_splice(r, cqe->res);
        return;
    case RX_OP_POLL:
        on_poll(r, cqe->res);
        return;
    default:
        return;
    }
}
