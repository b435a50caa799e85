/*
 * http_postpone.c: subrequests whose response body takes its place in the
 * parent's output (nginx's postponed output: ssi include, addition), or
 * is kept in memory for the parent (ssi include set=). The postpone
 * filter sits between the filters that make subrequests (ssi, addition)
 * and those that work on the client's bytes (gzip, chunked, the writer):
 * a subrequest's header stops at it, and its body goes on below it as the
 * main request's bytes. Subrequests run one at a time and the filter that
 * made one holds the parent's remaining input until it ends, so the
 * document's order is kept whatever the subrequests are (nginx runs them
 * side by side and reorders here; ringx routes the client connection's
 * operations to the one subrequest its parent waits for, so it does not).
 */
#include "http.h"

typedef struct {
    rx_buf_t  *capture;     /* set=: the body kept here; NULL: output */
    bool       overflow;    /* more than capture holds: the rest dropped */
    bool       stub;        /* an error response's body is dropped */
    bool       drop;        /* ... and this one is such */
    size_t     passed;      /* body bytes that went to the output */
} postpone_t;

static void init_filters(rx_http_filters_t *top);

static const rx_http_module_t postpone_module_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, init_filters
};

rx_module_t rx_http_postpone_filter_module = {
    "rx_http_postpone_filter_module", 0, 0, RX_HTTP_MODULE,
    &postpone_module_ctx, NULL, NULL, NULL, NULL, NULL
};

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

rx_http_request_t *
rx_http_subrequest_in_body(rx_http_request_t *r, const rx_str_t *uri,
    const rx_str_t *args, size_t capture_max, rx_http_subrequest_done_pt done,
    void *data)
{
    rx_http_request_t *sr;
    postpone_t        *pp = rx_pcalloc(r->pool, sizeof(*pp));

    if (pp == NULL) {
        return NULL;
    }
    if (capture_max) {
        pp->capture = rx_create_temp_buf(r->pool, capture_max);
        if (pp->capture == NULL) {
            return NULL;
        }
    }
    sr = rx_http_subrequest(r, uri, args, done, data);
    if (sr == NULL) {
        return NULL;
    }
    sr->postpone_ctx = pp;
    sr->in_body = 1;
    sr->header_only = 0;
    /* its bytes go through the filters and into the parent's response:
     * a producer must not splice a file to the socket */
    sr->filter_need_in_memory = 1;
    return sr;
}

void
rx_http_subrequest_captured(rx_http_request_t *sr, rx_str_t *body)
{
    postpone_t *pp = sr->postpone_ctx;

    body->len = 0;
    body->data = NULL;
    if (pp && pp->capture) {
        body->data = (char *) pp->capture->pos;
        body->len = (size_t) (pp->capture->last - pp->capture->pos);
    }
}

void
rx_http_subrequest_stub(rx_http_request_t *sr)
{
    postpone_t *pp = sr->postpone_ctx;

    pp->stub = true;
}

bool
rx_http_subrequest_output_empty(rx_http_request_t *sr)
{
    postpone_t *pp = sr->postpone_ctx;

    return pp == NULL || pp->passed == 0;
}

void
rx_http_postpone_release(rx_http_request_t *r)
{
    rx_http_request_t *m = r->main;
    rx_int_t           rc;

    r->filter_buffered = 0;
    if (r->response_done || m->out || m->conn->sending
        || m->conn->state != RX_CONN_ACTIVE || r->write_handler == NULL
        || rx_http_op_target(m) != r) {
        return;                 /* a send's end calls the producer */
    }
    rc = r->write_handler(r);
    if (rc != RX_OK && rc != RX_AGAIN && rc != RX_DONE) {
        rx_http_finalize_request(r, rc);
    }
}

/* A subrequest's header goes no further: its status and headers stay in
 * it, and only its body joins the parent's response. */
static rx_int_t
postpone_header_filter(rx_http_request_t *r)
{
    postpone_t *pp = r->postpone_ctx;

    if (r->subrequest) {
        if (pp && pp->stub && r->headers_out.status >= 300) {
            pp->drop = true;        /* ssi's stub block takes its place */
        }
        return RX_OK;
    }
    return next_header(r);
}

/* set=: the bytes, up to the buffer's size, are kept. */
static void
capture(rx_http_request_t *r, postpone_t *pp, rx_buf_t *b)
{
    size_t size = (size_t) (b->last - b->pos);
    size_t room = (size_t) (pp->capture->end - pp->capture->last);

    if (size > room) {
        if (!pp->overflow) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "too big subrequest "
                "response for \"%.*s\": kept %zu bytes", (int) r->uri.len,
                r->uri.data, (size_t) (pp->capture->end - pp->capture->pos));
        }
        pp->overflow = true;
        size = room;
    }
    memcpy(pp->capture->last, b->pos, size);
    pp->capture->last += size;
}

/* A subrequest's body: copied (the producer's buffers are free again at
 * once, whatever the filters below hold) and passed on as the main
 * request's bytes; its last buffer ends the subrequest, not the response. */
static rx_int_t
postpone_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    postpone_t  *pp = r->postpone_ctx;
    rx_chain_t  *out = NULL, **ll = &out, *cl;
    bool         last = false;
    rx_int_t     rc = RX_OK;

    if (r->subrequest == NULL || pp == NULL) {
        return next_body(r, in);
    }
    for (; in; in = in->next) {
        rx_buf_t *b = in->buf;
        size_t    size = (size_t) (b->last - b->pos);

        last |= b->last_buf;
        if (b->in_file && !b->memory) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "postpone filter "
                "got a file buffer: its producer ignored "
                "filter_need_in_memory");
            return RX_ERROR;
        }
        if (size == 0) {
            continue;
        }
        if (pp->capture) {
            capture(r, pp, b);
        } else if (!pp->drop) {
            pp->passed += size;
            cl = rx_chain_from_text(r->pool, (const char *) b->pos, size,
                                    false);
            if (cl == NULL) {
                return RX_ERROR;
            }
            *ll = cl;
            ll = &cl->next;
        }
        b->pos = b->last;
    }
    if (out) {
        rc = next_body(r->main, out);
    }
    /* the producer waits while the client's send is in flight, as it
     * would for its own (http_send.c calls its write_handler) */
    r->out = r->main->out;
    if (last) {
        r->out = NULL;
        rx_http_subrequest_output(r, NULL);       /* it ends */
    }
    return rc;
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = postpone_header_filter;
    top->body = postpone_body_filter;
}
