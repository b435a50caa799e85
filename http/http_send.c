/*
 * http_send.c: the response's way out of a client connection. One send is
 * in flight at a time, with up to IOV_BATCH buffers of r->out; when the
 * kernel took them, the buffers advance, and when r->out is empty the
 * request is done, a filter that held input goes on, or the handler's
 * write_handler produces more: the backpressure that keeps a slow
 * client's response to its own buffers.
 */
#include "http.h"
#include "http_connection_int.h"

#define IOV_BATCH  8     /* buffers per send; the rest go in the next one */
_Static_assert(IOV_BATCH == sizeof(((rx_http_request_t *) 0)->send_iov)
               / sizeof(struct iovec), "r->send_iov holds IOV_BATCH entries");

/* limit_rate: cuts the batch to what may go now; 0 when nothing may (a
 * timer sends later). */
static int
paced(rx_http_request_t *r, int n)
{
    size_t total = 0, allow;
    int    i;

    for (i = 0; i < n; i++) {
        total += r->send_iov[i].iov_len;
    }
    allow = rx_http_limit_rate_allow(r, total);
    if (allow == total) {
        return n;
    }
    for (i = 0; i < n && allow; i++) {
        if (r->send_iov[i].iov_len >= allow) {
            r->send_iov[i].iov_len = allow;
            return i + 1;
        }
        allow -= r->send_iov[i].iov_len;
    }
    return 0;
}

/* A request whose client is gone ends (client_gone's response done); one
 * whose last buffer carried no bytes sends what is left and ends. */
static void
gone_done(rx_posted_t *p)
{
    rx_http_request_t *r = p->data;

    if (r->hc->r != r || !r->response_done) {
        return;
    }
    if (r->client_gone) {
        rx_http_request_done(r);
    } else {
        rx_http_connection_send(r->hc);
    }
}

/* The request's end, from a loop turn of its own (the end of this one):
 * the filters that passed its last buffer down may still look at the
 * request when the write filter returns to them, so it must not be freed
 * under them. r->gone_done is cancelled when the request is freed. */
void
rx_http_send_end_posted(rx_http_request_t *r)
{
    r->gone_done.handler = gone_done;
    r->gone_done.data = r;
    rx_post(&r->gone_done);
}

void
rx_http_gone_end(rx_http_request_t *r)
{
    r->response_done = 1;
    rx_http_connection_send(r->hc);
}

/* This send ends the response (rest: what it leaves of r->out) and the
 * connection closes as soon as it is done: its close may go with it. No
 * rate cuts it; HTTP/2's streams never get here. */
static bool
closes_after(rx_http_request_t *r, rx_chain_t *rest)
{
    for (; rest; rest = rest->next) {
        if (rest->buf->last != rest->buf->pos) {
            return false;
        }
    }
    return r->response_done && !r->limit_rate
           && rx_http_conn_closes_at_end(r->hc, r);
}

/* $pipe for the next request: its bytes came before this response's
 * last bytes went to the kernel. Settled here, not when the request ends:
 * the end (on_sent) may come a loop turn later, after a client that read
 * the response has sent its next request. Once per request (the end's
 * empty send asks again); unread body bytes leave it to the end
 * (http_conn_done.c). */
static void
settle_pipe(rx_http_connection_t *hc, rx_http_request_t *r)
{
    if (!hc->pipe_known && r->body_read && !hc->framing) {
        hc->pipelined = hc->in_len > hc->in_parsed;
        hc->pipe_known = 1;
    }
}

/* Sends what the request has queued, one send in flight at a time. */
void
rx_http_connection_send(rx_http_connection_t *hc)
{
    rx_http_request_t       *r = hc->r;
    rx_conn_t               *c = hc->conn;
    rx_chain_t              *cl;
    rx_http_core_loc_conf_t *clcf;
    int                      n = 0;

    if (r == NULL || c->sending || c->state != RX_CONN_ACTIVE) {
        return;
    }
    if (r->client_gone) {
        r->out = NULL;               /* nobody to send it to */
        if (r->response_done) {
            /* from a loop turn of its own: the producer that ended the
             * response may still look at the request */
            rx_http_send_end_posted(r);
        }
        return;
    }
    for (cl = r->out; cl && n < IOV_BATCH; cl = cl->next) {
        size_t size = (size_t) (cl->buf->last - cl->buf->pos);
        if (size == 0) {
            continue;
        }
        r->send_iov[n].iov_base = cl->buf->pos;
        r->send_iov[n].iov_len = size;
        n++;
    }
    if (n == 0) {
        r->out = NULL;
        if (r->response_done) {
            settle_pipe(hc, r);
            rx_timer_del(&c->timer);
            rx_http_request_done(r);
        }
        return;
    }
    if (r->limit_rate && (n = paced(r, n)) == 0) {
        rx_timer_del(&c->timer);     /* waiting on the rate, not the client */
        return;
    }
    if (cl == NULL && r->response_done && !r->limit_rate) {
        settle_pipe(hc, r);          /* paced: the empty send at the end */
    }
    if (closes_after(r, cl)) {
        rx_conn_send_last(c, r->send_iov, n);
    } else if (cl == NULL && r->response_done && !r->limit_rate) {
        rx_conn_send_end(c, r->send_iov, n);    /* the response's last */
    } else {
        c->transport->send(c, r->send_iov, n);
    }
    clcf = rx_http_get_module_loc_conf(r, rx_http_core_module);
    rx_timer_add(&c->timer, clcf->send_timeout);
}

void
rx_http_out_sent(rx_http_request_t *r, size_t sent)
{
    r->bytes_sent += (int64_t) sent;
    while (r->out) {
        rx_buf_t *b = r->out->buf;
        size_t    size = (size_t) (b->last - b->pos);

        if (sent < size) {
            b->pos += sent;
            break;
        }
        b->pos = b->last;
        sent -= size;
        r->out = r->out->next;
    }
}

/* The client left mid-response: the request may go on without it (its
 * handler says: a fetch others wait for must not stop). True when it
 * does: nothing is queued any more, nothing will be sent. */
static bool
detach(rx_http_connection_t *hc, rx_http_request_t *r)
{
    if (r->client_gone || r->response_done || hc->framing
        || r->detach_handler == NULL || !r->detach_handler(r)) {
        return false;
    }
    r->client_gone = 1;
    r->out = NULL;
    /* a filter's held input is dropped with its output: the handler
     * passes nothing down the filters any more */
    r->filter_buffered = 0;
    hc->close_after = 1;
    rx_timer_del(&hc->conn->timer);
    rx_http_log_error_action(hc, RX_LOG_INFO, 0, "sending response to client",
        "the response goes on without the client, for the cache");
    return true;
}

/* The timed-out client ends as one that left: the socket's sending side
 * is shut, so the send in flight completes (EPIPE) through
 * rx_http_on_sent, which detaches there. Not detached here: the kernel
 * still holds r->out's buffers until that completion, and the producer
 * (a fetch for the cache) must not refill them under it. */
bool
rx_http_send_timed_out(rx_http_connection_t *hc)
{
    rx_http_request_t *r = hc->r;
    rx_conn_t         *c = hc->conn;

    if (r == NULL || !c->sending || r->sending_file || c->fd == -1
        || r->client_gone || r->response_done || hc->framing
        || r->detach_handler == NULL || !r->detach_handler(r)) {
        return false;
    }
    return shutdown(c->fd, SHUT_WR) == 0;
}

void
rx_http_on_sent(rx_conn_t *c, ssize_t res)
{
    rx_http_connection_t *hc = c->data;
    rx_http_request_t    *r = hc->r, *w;

    if (r == NULL) {
        return;
    }
    if (res < 0) {
        if (res != -ECANCELED) {
            rx_http_log_error_action(hc, RX_LOG_INFO, (int) -res,
                                     "sending response to client",
                                     "writev() failed");
        }
        if (r->headers_out.status == 0) {
            r->headers_out.status = RX_HTTP_CLIENT_CLOSED_REQUEST;
        }
        if (res == -ECANCELED || !detach(hc, r)) {
            rx_conn_close(c);
            return;
        }
        res = 0;                 /* on as if sent: the handler produces */
    }
    rx_http_out_sent(r, (size_t) res);
    if (!r->out) {
        rx_timer_del(&c->timer);
        if (r->filter_buffered && !r->response_done) {
            /* a filter's output buffers are free again: it goes on with
             * the input it holds before the producer may send more */
            if (rx_http_top_body_filter(r, NULL) != RX_OK) {
                rx_http_finalize_request(r, RX_ERROR);
                return;
            }
            if (r->out || c->sending || c->state != RX_CONN_ACTIVE) {
                return;                  /* its output is being sent */
            }
        }
        if (r->response_done) {
            rx_http_request_done(r);
            return;
        }
        /* the producer of a subrequest r waits for (an ssi include) is
         * the one that goes on; r's own waits until it ends */
        w = rx_http_op_target(r);
        if (w != r) {
            w->out = NULL;      /* http_postpone.c's copy of r->out */
        }
        if (w->write_handler) {
            rx_int_t rc = w->write_handler(w);
            if (rc != RX_OK && rc != RX_AGAIN && rc != RX_DONE) {
                rx_http_finalize_request(w, rc);
            }
            return;
        }
        if (!r->body_read && r->body_mode != RX_HTTP_BODY_DISCARD
            && rx_http_body_claimed(r)) {
            rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                               rx_http_core_module);
            rx_timer_add(&c->timer, clcf->client_body_timeout);
        }
        return;
    }
    rx_http_connection_send(hc);
}
