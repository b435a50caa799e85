/*
 * http_write_filter.c: the last body filter. It queues buffers on the
 * request and starts a send; the connection sends one batch at a time and
 * comes back for the rest (backpressure: nothing is copied twice, and a
 * slow client holds its own buffers, nobody else's).
 */
#include "http.h"

/* Queues without sending: the header waits for the first body bytes so
 * that a small response leaves in one send. */
rx_int_t
rx_http_write_queue(rx_http_request_t *r, rx_chain_t *in)
{
    rx_chain_t **ll = &r->out, *cl;

    if (r->subrequest) {
        return rx_http_subrequest_output(r, in);
    }

    while (*ll) {
        ll = &(*ll)->next;
    }
    for (cl = in; cl; cl = cl->next) {
        rx_chain_t *link = rx_alloc_chain_link(r->pool);
        if (link == NULL) {
            return RX_ERROR;
        }
        link->buf = cl->buf;
        *ll = link;
        ll = &link->next;
    }
    return RX_OK;
}

rx_int_t
rx_http_write_filter(rx_http_request_t *r, rx_chain_t *in)
{
    rx_chain_t *cl, *body = NULL, **ll = &body;

    if (r->subrequest) {
        return rx_http_subrequest_output(r, in);   /* never the client's */
    }

    for (cl = in; cl; cl = cl->next) {
        if (cl->buf->last_buf) {
            r->response_done = 1;
        }
        if (r->header_only || rx_buf_size(cl->buf) == 0) {
            continue;       /* HEAD and flag-only buffers carry no bytes */
        }
        *ll = cl;
        ll = &cl->next;
    }
    *ll = NULL;
    if (body && rx_http_write_queue(r, body) != RX_OK) {
        return RX_ERROR;
    }
    if (r->response_done && r->out == NULL) {
        /* a last buffer without bytes and nothing left to send (over
         * HTTP/2 no last chunk carries it): sending would end and free
         * the request inside the filters that passed it down */
        rx_http_send_end_posted(r);
        return RX_OK;
    }
    rx_http_connection_send(r->hc);
    return RX_OK;
}
