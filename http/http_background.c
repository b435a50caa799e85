/*
 * http_background.c: subrequests that run alongside the main request
 * (mirror; nginx's background subrequests). Each is made as any
 * subrequest (http_subrequest.c: its response stops at its end of the
 * filters, nothing reaches the client), but the main request does not
 * wait: it goes on through its phases and sends its response meanwhile.
 * Its end does wait (nginx's r->main->count): the access log line and
 * the connection's next request or close come once the last one has
 * ended. A subrequest given the body reads the main request's, kept
 * whole (memory or temporary file) before it starts. The client
 * connection going aborts them all. See docs/ARCHITECTURE.md,
 * "Background subrequests".
 */
#include "http.h"

typedef struct rx_http_bg_sr_s  rx_http_bg_sr_t;

/* One background subrequest of the main request. */
struct rx_http_bg_sr_s {
    rx_http_request_t        *sr;
    rx_http_background_t     *bg;
    rx_http_bg_sr_t          *next;
    /* its reader's post_handler, run from body_post (the body is in) */
    rx_http_body_handler_pt   body_handler;
    rx_posted_t               body_post;
    bool                      running;       /* done has not run yet */
};

struct rx_http_background_s {
    rx_http_request_t        *r;             /* the main request */
    rx_http_bg_sr_t          *list;
    rx_uint_t                 running;
    /* rx_http_request_done came while some ran: it is called again from
     * end_post once the last has ended */
    bool                      end_waits;
    rx_posted_t               end_post;
};

/* The main request's pool goes: nothing of ours may stay posted. */
static void
cleanup(void *data)
{
    rx_http_background_t *bg = data;
    rx_http_bg_sr_t      *e;

    rx_post_cancel(&bg->end_post);
    for (e = bg->list; e; e = e->next) {
        rx_post_cancel(&e->body_post);
    }
}

static void
end_posted(rx_posted_t *p)
{
    rx_http_background_t *bg = p->data;

    rx_http_request_done(bg->r);
}

static rx_http_background_t *
background_of(rx_http_request_t *r)
{
    rx_http_background_t *bg = r->background;
    rx_pool_cleanup_t    *cln;

    if (bg) {
        return bg;
    }
    bg = rx_pcalloc(r->pool, sizeof(*bg));
    cln = rx_pool_cleanup_add(r->pool, 0);
    if (bg == NULL || cln == NULL) {
        return NULL;
    }
    bg->r = r;
    bg->end_post.handler = end_posted;
    bg->end_post.data = bg;
    cln->handler = cleanup;
    cln->data = bg;
    r->background = bg;
    return bg;
}

/* A background subrequest has ended (its response is dropped): the main
 * request's end goes on when it was the last and the end waited. */
static void
sr_done(rx_http_request_t *sr, void *data)
{
    rx_http_bg_sr_t      *e = data;
    rx_http_background_t *bg = e->bg;

    (void) sr;
    if (!e->running) {
        return;
    }
    e->running = false;
    bg->running--;
    /* the subrequest's location set the connection's error log */
    rx_http_set_request_log(rx_http_op_target(bg->r));
    if (bg->running == 0 && bg->end_waits) {
        bg->end_waits = false;
        rx_post(&bg->end_post);
    }
}

rx_http_request_t *
rx_http_subrequest_background(rx_http_request_t *r, const rx_str_t *uri,
    const rx_str_t *args, bool with_body)
{
    rx_http_background_t *bg;
    rx_http_bg_sr_t      *e;
    rx_http_request_t    *sr;

    if (r != r->main) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "a background "
            "subrequest \"%.*s\" of a subrequest", (int) uri->len, uri->data);
        return NULL;
    }
    bg = background_of(r);
    e = rx_pcalloc(r->pool, sizeof(*e));
    if (bg == NULL || e == NULL) {
        return NULL;
    }
    sr = rx_http_subrequest_make(r, uri, args, sr_done, e);
    if (sr == NULL) {
        return NULL;
    }
    e->sr = sr;
    e->bg = bg;
    e->running = true;
    e->next = bg->list;
    bg->list = e;
    bg->running++;
    if (with_body && r->body_read && r->request_body
        && !r->request_body->consumed) {
        /* the body kept once, read by each: nobody consumes its buffers
         * (the upstream engine sends from an offset of its own) */
        sr->request_body = r->request_body;
        sr->headers_in.content_length_n = r->request_body->received;
    }
    return sr;
}

bool
rx_http_background_wait(rx_http_request_t *r)
{
    rx_http_background_t *bg = r->background;

    if (bg == NULL || bg->running == 0) {
        return false;
    }
    bg->end_waits = true;
    return true;
}

void
rx_http_background_abort(rx_http_request_t *r)
{
    rx_http_background_t *bg = r ? r->background : NULL;
    rx_http_bg_sr_t      *e;

    if (bg == NULL) {
        return;
    }
    rx_post_cancel(&bg->end_post);
    bg->end_waits = false;
    for (e = bg->list; e; e = e->next) {
        rx_post_cancel(&e->body_post);
        if (e->running) {
            e->running = false;
            bg->running--;
            rx_http_subrequest_abort(e->sr);
        }
    }
}

rx_http_request_t *
rx_http_background_owner(rx_http_request_t *r, uint8_t tag)
{
    rx_http_bg_sr_t   *e;
    rx_http_request_t *o;

    for (e = r->background ? r->background->list : NULL; e; e = e->next) {
        if (e->running && (o = rx_http_op_owner(e->sr, tag)) != NULL) {
            return o;
        }
    }
    return NULL;
}

static void
body_posted(rx_posted_t *p)
{
    rx_http_bg_sr_t *e = p->data;

    if (e->running && e->body_handler) {
        e->body_handler(e->sr);
    }
}

rx_int_t
rx_http_background_read_body(rx_http_request_t *sr,
    const rx_http_body_reader_t *reader)
{
    rx_http_background_t *bg = sr->main->background;
    rx_http_bg_sr_t      *e;

    for (e = bg ? bg->list : NULL; e && e->sr != sr; e = e->next) {
        /* void */
    }
    if (e == NULL || reader->piece || sr->request_body == NULL) {
        rx_http_request_log_error(sr, RX_LOG_ALERT, 0, "a subrequest cannot "
                                  "read the request body");
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    e->body_handler = reader->post_handler;
    e->body_post.handler = body_posted;
    e->body_post.data = e;
    rx_post(&e->body_post);
    return RX_OK;
}
