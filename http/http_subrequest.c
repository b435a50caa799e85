/*
 * http_subrequest.c: subrequests: a request that a request makes inside
 * itself, for its own use (auth_request). The subrequest runs the phases
 * for its own URI with its parent's headers and no body, in its parent's
 * pool and with its variables; its response stops here (the status and
 * headers_out are kept, the body is dropped where it is made: header_only)
 * and never reaches the client. The parent waits (or, for a background
 * subrequest, http_background.c, goes on) and hears of the end from a
 * loop turn of its own. See docs/ARCHITECTURE.md, "Subrequests".
 */
#include "http.h"
#include "http_uri.h"
#include "clock.h"

struct rx_http_subrequest_s {
    rx_http_request_t          *sr;
    rx_http_request_t          *parent;
    rx_http_subrequest_done_pt  done;
    void                       *data;
    /* the start, then the end: each from a loop turn of its own, so that
     * the subrequest never runs inside its parent's handler, nor the
     * parent inside the subrequest's stack */
    rx_posted_t                 post;
    /* the parent's own abort handler, put back when the wait ends */
    void                      (*parent_abort)(rx_http_request_t *r);
    unsigned                    ended:1;
    /* it runs alongside its parent, which does not wait for it
     * (http_background.c): wait_sr and the abort handler are not its */
    unsigned                    background:1;
};

static void start(rx_posted_t *p);
static void finish(rx_posted_t *p);
static void parent_abort(rx_http_request_t *r);

/* The parent's pool goes: nothing of the subrequest may stay posted. */
static void
cleanup(void *data)
{
    rx_http_subrequest_t *sub = data;

    rx_post_cancel(&sub->post);
}

/* A tag for a new subrequest of r's operations (rx_http_op_ud): the next
 * of the connection's that no request it may be routed past has (r and
 * the requests r is waiting inside, and the main request's background
 * subrequests: a document with hundreds of includes wraps the 8 bits while
 * its main request lives). */
static uint8_t
fresh_op_tag(rx_http_request_t *r)
{
    rx_http_connection_t *hc = r->hc;
    unsigned              tries;
    uint8_t               tag = 0;

    for (tries = 0; tries < 256; tries++) {
        tag = ++hc->op_tags;
        if (rx_http_op_owner(r->main, tag) == NULL) {
            break;
        }
    }
    return tag;
}

/* The subrequest's fields, from its parent: a GET of uri?args, internal,
 * with the parent's headers minus what would announce a body, another
 * protocol or a 100-continue. */
static void
init_request(rx_http_request_t *sr, rx_http_request_t *r, const rx_str_t *uri,
    const rx_str_t *args)
{
    rx_http_core_srv_conf_t *cscf = rx_http_get_module_srv_conf(r,
                                       rx_http_core_module);

    sr->hc = r->hc;
    sr->conn = r->conn;
    sr->op_tag = fresh_op_tag(r);     /* its completions are its own */
    sr->pool = r->pool;
    sr->main = r->main;
    sr->main_conf = cscf->ctx->main_conf;
    sr->srv_conf = cscf->ctx->srv_conf;
    sr->loc_conf = cscf->ctx->loc_conf;
    sr->method = RX_HTTP_GET;
    rx_str_set(&sr->method_name, "GET");
    sr->http_version = r->http_version;
    sr->http_protocol = r->http_protocol;
    sr->request_line = r->request_line;
    sr->unparsed_uri = r->unparsed_uri;
    sr->schema = r->schema;
    sr->host = r->host;
    sr->uri = *uri;
    if (args) {
        sr->args = *args;
    }
    rx_http_uri_exten(uri, &sr->exten);
    sr->headers_in = r->headers_in;
    sr->headers_in.content_length_n = -1;
    sr->headers_in.chunked = false;
    sr->headers_in.transfer_encoding = NULL;
    sr->headers_in.expect = NULL;
    sr->headers_in.upgrade = NULL;
    /* the body is the parent's, untouched: the subrequest has none */
    sr->body_read = 1;
    sr->headers_out.content_length_n = -1;
    sr->headers_out.last_modified_time = -1;
    sr->header_only = 1;
    sr->internal = 1;
    sr->uri_changes = RX_HTTP_MAX_URI_CHANGES + 1;
    sr->start_msec = rx_current_msec;
    sr->start_usec = rx_time_usec;
    sr->start_sec = rx_time_sec;
}

/* A subrequest of r, started at the end of this loop turn; whether r
 * waits for it is the caller's to say. */
rx_http_request_t *
rx_http_subrequest_make(rx_http_request_t *r, const rx_str_t *uri,
    const rx_str_t *args, rx_http_subrequest_done_pt done, void *data)
{
    rx_http_subrequest_t *sub;
    rx_http_request_t    *sr;
    rx_pool_cleanup_t    *cln;

    sub = rx_pcalloc(r->pool, sizeof(*sub));
    sr = rx_pcalloc(r->pool, sizeof(*sr));
    cln = rx_pool_cleanup_add(r->pool, 0);
    if (sub == NULL || sr == NULL || cln == NULL
        || rx_array_init(&sr->headers_out.headers, r->pool, 8,
                         sizeof(rx_table_elt_t)) != RX_OK) {
        return NULL;
    }
    init_request(sr, r, uri, args);
    sr->subrequest = sub;
    sub->sr = sr;
    sub->parent = r;
    sub->done = done;
    sub->data = data;
    sub->post.handler = start;
    sub->post.data = sub;
    sub->background = 1;
    cln->handler = cleanup;
    cln->data = sub;
    rx_post(&sub->post);
    return sr;
}

rx_http_request_t *
rx_http_subrequest(rx_http_request_t *r, const rx_str_t *uri,
    const rx_str_t *args, rx_http_subrequest_done_pt done, void *data)
{
    rx_http_subrequest_t *sub;
    rx_http_request_t    *sr;

    if (r->wait_sr) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "a second subrequest "
            "\"%.*s\" while one runs", (int) uri->len, uri->data);
        return NULL;
    }
    sr = rx_http_subrequest_make(r, uri, args, done, data);
    if (sr == NULL) {
        return NULL;
    }
    sub = sr->subrequest;
    sub->background = 0;
    sub->parent_abort = r->abort_handler;
    r->abort_handler = parent_abort;
    r->wait_sr = sub;
    return sr;
}

static void
start(rx_posted_t *p)
{
    rx_http_subrequest_t *sub = p->data;

    rx_http_run_phases(sub->sr);
}

/* The subrequest's response is complete, or it failed (500): the parent
 * hears of it at the end of this loop turn. */
static void
end(rx_http_subrequest_t *sub, bool failed)
{
    rx_http_request_t *sr = sub->sr;

    if (sub->ended) {
        return;
    }
    sub->ended = 1;
    sr->response_done = 1;
    if (failed || sr->headers_out.status == 0) {
        sr->headers_out.status = RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    sub->post.handler = finish;
    rx_post(&sub->post);
}

static void
finish(rx_posted_t *p)
{
    rx_http_subrequest_t *sub = p->data;
    rx_http_request_t    *r = sub->parent;

    if (sub->background) {
        sub->done(sub->sr, sub->data);
        return;
    }
    r->wait_sr = NULL;
    r->abort_handler = sub->parent_abort;
    rx_http_set_request_log(r);       /* the subrequest's location set it */
    sub->done(sub->sr, sub->data);
}

/* The client connection goes while the parent waits: the subrequest lets
 * go of what it holds (an upstream connection) and never ends; the
 * parent's own abort handler runs after. */
static void
parent_abort(rx_http_request_t *r)
{
    rx_http_subrequest_t *sub = r->wait_sr;
    rx_http_request_t    *sr = sub->sr;
    void                (*h)(rx_http_request_t *);

    r->wait_sr = NULL;
    r->abort_handler = sub->parent_abort;
    rx_post_cancel(&sub->post);
    sub->ended = 1;
    if ((h = sr->abort_handler) != NULL) {
        sr->abort_handler = NULL;
        h(sr);
    }
    if ((h = r->abort_handler) != NULL) {
        r->abort_handler = NULL;
        h(r);
    }
}

void
rx_http_subrequest_abort(rx_http_request_t *sr)
{
    rx_http_subrequest_t *sub = sr->subrequest;
    void                (*h)(rx_http_request_t *);

    rx_post_cancel(&sub->post);
    sub->ended = 1;
    if ((h = sr->abort_handler) != NULL) {
        sr->abort_handler = NULL;
        h(sr);
    }
}

rx_int_t
rx_http_subrequest_header(rx_http_request_t *sr)
{
    return RX_OK;          /* status and headers_out stay where they are */
}

rx_int_t
rx_http_subrequest_output(rx_http_request_t *sr, rx_chain_t *in)
{
    rx_chain_t *cl;
    bool        last = in == NULL;   /* output_filter's "nothing more" */

    for (cl = in; cl; cl = cl->next) {
        /* taken: a producer sees its buffer free again at once */
        cl->buf->pos = cl->buf->last;
        cl->buf->file_pos = cl->buf->file_last;
        last |= cl->buf->last_buf;
    }
    if (last) {
        end(sr->subrequest, false);
    }
    return RX_OK;
}

void
rx_http_subrequest_fail(rx_http_request_t *sr)
{
    void (*h)(rx_http_request_t *) = sr->abort_handler;

    if (h) {
        sr->abort_handler = NULL;
        h(sr);
    }
    end(sr->subrequest, true);
}

rx_http_request_t *
rx_http_op_target(rx_http_request_t *r)
{
    while (r && r->wait_sr) {
        r = r->wait_sr->sr;
    }
    return r;
}

/* The request that submitted an operation (rx_http_op_ud): r or one of the
 * subrequests it waits for, as both may have operations in flight (a
 * parent's proxied body goes on into its temporary file while an include
 * runs), or one of the main request's background subrequests (a mirror
 * that serves a file); NULL when that request is gone. */
rx_http_request_t *
rx_http_op_owner(rx_http_request_t *r, uint8_t tag)
{
    rx_http_request_t *m = r;

    while (r && r->op_tag != tag) {
        r = r->wait_sr ? r->wait_sr->sr : NULL;
    }
    if (r == NULL && m && m->background) {
        r = rx_http_background_owner(m, tag);
    }
    return r;
}
