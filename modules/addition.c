/*
 * addition.c: nginx's addition module: the body of a subrequest before
 * (add_before_body) and after (add_after_body) a response of
 * addition_types. The subrequests' bodies take their places through
 * http_postpone.c: the response's own bytes wait while the "before"
 * subrequest runs, and its last buffer waits for the "after" one.
 */
#include "http.h"
#include "filter_types.h"

typedef struct {
    rx_str_t           before;    /* add_before_body; len 0: none */
    rx_str_t           after;     /* add_after_body */
    rx_filter_types_t  types;     /* addition_types */
} addition_conf_t;

typedef enum {
    ADD_START = 0,         /* nothing passed yet */
    ADD_WAIT_BEFORE,       /* the "before" subrequest runs: input held */
    ADD_BODY,              /* the response's own bytes pass */
    ADD_WAIT_AFTER,        /* the "after" subrequest runs */
    ADD_DONE
} addition_state_t;

typedef struct {
    addition_state_t  state;
    rx_chain_t       *held;       /* input that came while waiting */
    rx_chain_t      **held_tail;
    rx_chain_t       *free;
    bool              last_sent;
} addition_ctx_t;

static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static void init_filters(rx_http_filters_t *top);
static rx_int_t addition_body_filter(rx_http_request_t *r, rx_chain_t *in);

#define ADD_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t addition_commands[] = {
    { "add_before_body", ADD_CONF | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(addition_conf_t, before), NULL },
    { "add_after_body", ADD_CONF | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(addition_conf_t, after), NULL },
    { "addition_types", ADD_CONF | RX_CONF_1MORE, rx_filter_types_set,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(addition_conf_t, types), NULL },
    rx_null_command
};

static const rx_http_module_t addition_module_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf, init_filters
};

rx_module_t rx_http_addition_filter_module = {
    "rx_http_addition_filter_module", 0, 0, RX_HTTP_MODULE,
    &addition_module_ctx, addition_commands, NULL, NULL, NULL, NULL
};

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

static void *
create_conf(rx_conf_t *cf)
{
    addition_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    rx_filter_types_init(&c->types);
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *parent, void *child)
{
    addition_conf_t *p = parent, *c = child;

    if (c->before.data == NULL) {
        c->before = p->before;
    }
    if (c->after.data == NULL) {
        c->after = p->after;
    }
    return rx_filter_types_merge(cf, &p->types, &c->types) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

/* As nginx: the main request's 200 responses of addition_types only. */
static rx_int_t
addition_header_filter(rx_http_request_t *r)
{
    addition_conf_t *conf = rx_http_get_module_loc_conf(r,
                               rx_http_addition_filter_module);
    addition_ctx_t  *ctx;

    if ((conf->before.len == 0 && conf->after.len == 0) || r != r->main
        || r->header_only || r->headers_out.status != RX_HTTP_OK
        || !rx_filter_types_match(r, &conf->types)) {
        return next_header(r);
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL || rx_filter_body_changes(r, true) != RX_OK) {
        return RX_ERROR;
    }
    ctx->held_tail = &ctx->held;
    /* the input is held by reference while a subrequest runs, and static
     * must not splice the file past the filters */
    r->filter_need_in_memory = 1;
    r->addition_ctx = ctx;
    return next_header(r);
}

/* A subrequest ended: its body is in the output; the held input goes. */
static void
sr_done(rx_http_request_t *sr, void *data)
{
    rx_http_request_t *r = data;
    addition_ctx_t    *ctx = r->addition_ctx;
    rx_int_t           rc;

    rx_unused(sr);
    if (ctx->state != ADD_WAIT_BEFORE) {
        /* the "after" one: the response's last buffer goes now, and its
         * send may end the request at once (an empty last buffer with
         * nothing in flight frees it inside the filter), so nothing is
         * held any more and r is not touched after it */
        ctx->state = ADD_DONE;
        r->filter_buffered = 0;
        rc = addition_body_filter(r, NULL);
        if (rc != RX_OK && rc != RX_AGAIN) {
            rx_http_close_request(r);
        }
        return;
    }
    ctx->state = ADD_BODY;
    rc = addition_body_filter(r, NULL);
    if (rc != RX_OK && rc != RX_AGAIN) {
        rx_http_close_request(r);
        return;
    }
    if (ctx->state == ADD_BODY || ctx->state == ADD_DONE) {
        rx_http_postpone_release(r);
    }
}

static rx_int_t
start(rx_http_request_t *r, addition_ctx_t *ctx, const rx_str_t *uri,
    addition_state_t state)
{
    if (rx_http_subrequest_in_body(r, uri, NULL, 0, sr_done, r) == NULL) {
        return RX_ERROR;
    }
    ctx->state = state;
    r->filter_buffered = 1;       /* the producer waits for the release */
    return RX_OK;
}

/* The response's own bytes until its last buffer, which waits for the
 * "after" subrequest and goes alone when it ends. */
static rx_int_t
pass_body(rx_http_request_t *r, addition_ctx_t *ctx, addition_conf_t *conf)
{
    rx_chain_t *out = ctx->held, *cl;
    bool        last = false;

    ctx->held = NULL;
    ctx->held_tail = &ctx->held;
    for (cl = out; cl; cl = cl->next) {
        if (cl->buf->last_buf && conf->after.len) {
            cl->buf->last_buf = 0;
            cl->buf->sync = 1;
            last = true;
        }
    }
    if (next_body(r, out) == RX_ERROR) {
        return RX_ERROR;
    }
    for (; out; out = cl) {
        cl = out->next;
        out->next = ctx->free;
        ctx->free = out;
    }
    return last ? start(r, ctx, &conf->after, ADD_WAIT_AFTER) : RX_OK;
}

/* The response's end, after the "after" subrequest's body. */
static rx_int_t
send_last(rx_http_request_t *r, addition_ctx_t *ctx)
{
    rx_buf_t   *b = rx_calloc_buf(r->pool);
    rx_chain_t *cl = rx_alloc_chain_link(r->pool);

    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    b->last_buf = 1;
    b->sync = 1;
    cl->buf = b;
    ctx->last_sent = true;
    return next_body(r, cl);
}

static rx_int_t
addition_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    addition_conf_t *conf = rx_http_get_module_loc_conf(r,
                               rx_http_addition_filter_module);
    addition_ctx_t  *ctx = r->addition_ctx;

    if (ctx == NULL || r != r->main) {
        return next_body(r, in);
    }
    if (ctx->state != ADD_DONE) {
        switch (rx_chain_take_links(r->pool, &ctx->free, in,
                                    &ctx->held_tail)) {
        case RX_OK:
            break;
        case RX_DECLINED:
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "addition filter "
                "got a file buffer: its producer ignored "
                "filter_need_in_memory");
            /* fall through */
        default:
            return RX_ERROR;
        }
    }
    switch (ctx->state) {
    case ADD_START:
        if (conf->before.len) {
            if (start(r, ctx, &conf->before, ADD_WAIT_BEFORE) != RX_OK) {
                return RX_ERROR;
            }
            return next_body(r, NULL);      /* the header may go now */
        }
        ctx->state = ADD_BODY;
        /* fall through */
    case ADD_BODY:
        return pass_body(r, ctx, conf);
    case ADD_WAIT_BEFORE:
    case ADD_WAIT_AFTER:
        return next_body(r, NULL);
    case ADD_DONE:
        if (!ctx->last_sent) {
            return send_last(r, ctx);
        }
        return next_body(r, in);
    }
    return RX_ERROR;
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = addition_header_filter;
    top->body = addition_body_filter;
}
