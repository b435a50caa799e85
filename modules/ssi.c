/*
 * ssi.c: nginx's SSI filter: its directives (ssi, ssi_types,
 * ssi_silent_errors, ssi_last_modified, ssi_min_file_chunk,
 * ssi_value_length), the header filter that picks a response, and the
 * body filter that runs the parser over it and the commands it finds
 * (ssi_cmd.c). An include stops the parse: the rest of the input is held
 * (the producer waits) until the subrequest's body is in the output
 * (http_postpone.c), so the document's order is kept; an included
 * response of ssi_types is parsed by its own filter (nested includes).
 */
#include "ssi.h"

#define SSI_CMD_CAP  4096          /* a command's text, values included */

static const rx_str_t ssi_errmsg =
    rx_string("[an error occurred while processing the directive]");

static rx_int_t preconfiguration(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static void init_filters(rx_http_filters_t *top);
static rx_int_t ssi_body_filter(rx_http_request_t *r, rx_chain_t *in);

#define SSI_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t ssi_commands[] = {
    { "ssi", SSI_CONF | RX_HTTP_LIF_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_ssi_conf_t, enable), NULL },
    { "ssi_silent_errors", SSI_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_ssi_conf_t, silent_errors), NULL },
    { "ssi_last_modified", SSI_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_ssi_conf_t, last_modified), NULL },
    { "ssi_min_file_chunk", SSI_CONF | RX_CONF_TAKE1, rx_conf_set_size_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_ssi_conf_t, min_file_chunk), NULL },
    { "ssi_value_length", SSI_CONF | RX_CONF_TAKE1, rx_conf_set_size_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_ssi_conf_t, value_len), NULL },
    { "ssi_types", SSI_CONF | RX_CONF_1MORE, rx_filter_types_set,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_ssi_conf_t, types), NULL },
    rx_null_command
};

static const rx_http_module_t ssi_module_ctx = {
    preconfiguration, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf,
    init_filters
};

rx_module_t rx_http_ssi_filter_module = {
    "rx_http_ssi_filter_module", 0, 0, RX_HTTP_MODULE, &ssi_module_ctx,
    ssi_commands, NULL, NULL, NULL, NULL
};

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

static rx_int_t
preconfiguration(rx_conf_t *cf)
{
    return rx_ssi_add_variables(cf);
}

static void *
create_conf(rx_conf_t *cf)
{
    rx_ssi_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->enable = RX_CONF_UNSET;
    c->silent_errors = RX_CONF_UNSET;
    c->last_modified = RX_CONF_UNSET;
    c->min_file_chunk = RX_CONF_UNSET_SIZE;
    c->value_len = RX_CONF_UNSET_SIZE;
    rx_filter_types_init(&c->types);
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *parent, void *child)
{
    rx_ssi_conf_t *p = parent, *c = child;

    rx_conf_merge_value(c->enable, p->enable, 0);
    rx_conf_merge_value(c->silent_errors, p->silent_errors, 0);
    rx_conf_merge_value(c->last_modified, p->last_modified, 0);
    rx_conf_merge_size(c->min_file_chunk, p->min_file_chunk, 1024);
    rx_conf_merge_size(c->value_len, p->value_len, 255);
    if (c->value_len == 0 || c->value_len > SSI_CMD_CAP / 2) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"ssi_value_length\" must be "
                          "between 1 and %d", SSI_CMD_CAP / 2);
        return RX_CONF_ERROR;
    }
    return rx_filter_types_merge(cf, &p->types, &c->types) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

/* ---- the header filter -------------------------------------------------- */

/* The response's state; the main request's SSI variables and blocks are
 * every include's too. */
static rx_ssi_ctx_t *
make_ctx(rx_http_request_t *r, rx_ssi_conf_t *conf)
{
    rx_ssi_ctx_t *ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    rx_ssi_ctx_t *mctx = r->main->ssi_ctx;
    char         *buf = rx_pnalloc(r->pool, SSI_CMD_CAP);

    if (ctx == NULL || buf == NULL) {
        return NULL;
    }
    rx_ssi_parser_init(&ctx->parser, buf, SSI_CMD_CAP);
    ctx->conf = conf;
    ctx->in_tail = &ctx->in;
    ctx->out_tail = &ctx->out;
    ctx->errmsg = ssi_errmsg;
    ctx->output = 1;
    if (r != r->main && mctx) {
        ctx->vars = mctx->vars;
        ctx->blocks = mctx->blocks;
        ctx->timefmt = mctx->timefmt;
        return ctx;
    }
    ctx->vars = rx_array_create(r->pool, 4, sizeof(rx_ssi_var_t));
    ctx->blocks = rx_array_create(r->pool, 2, sizeof(rx_ssi_block_t));
    return ctx->vars && ctx->blocks ? ctx : NULL;
}

static rx_int_t
ssi_header_filter(rx_http_request_t *r)
{
    rx_ssi_conf_t *conf = rx_http_get_module_loc_conf(r,
                             rx_http_ssi_filter_module);
    rx_ssi_ctx_t  *ctx;

    if (!conf->enable || r->header_only
        || r->headers_out.content_length_n == 0
        || !rx_filter_types_match(r, &conf->types)) {
        return next_header(r);
    }
    ctx = make_ctx(r, conf);
    if (ctx == NULL) {
        return RX_ERROR;
    }
    r->ssi_ctx = ctx;
    /* the input is read into memory and may be held while an include
     * runs: no splice of a file past the filter */
    r->filter_need_in_memory = 1;
    if (r == r->main && rx_filter_body_changes(r, conf->last_modified)
                        != RX_OK) {
        return RX_ERROR;
    }
    return next_header(r);
}

/* ---- the body filter ---------------------------------------------------- */

/* What was made goes on. */
static rx_int_t
flush_out(rx_http_request_t *r, rx_ssi_ctx_t *ctx)
{
    rx_chain_t *cl = ctx->out;

    ctx->out = NULL;
    ctx->out_tail = &ctx->out;
    return next_body(r, cl);
}

/* An SSI error: its message (config errmsg) unless ssi_silent_errors. */
static rx_int_t
error_output(rx_http_request_t *r, rx_ssi_ctx_t *ctx)
{
    if (ctx->conf->silent_errors || ctx->block) {
        return RX_OK;
    }
    return rx_ssi_emit(r, ctx, ctx->errmsg.data, ctx->errmsg.len);
}

static rx_int_t
run_command(rx_http_request_t *r, rx_ssi_ctx_t *ctx)
{
    rx_ssi_command_t cmd;
    const char      *err;
    rx_int_t         rc;

    err = rx_ssi_split(&ctx->parser, ctx->conf->value_len, &cmd);
    if (err) {
        if (!ctx->output && !ctx->block) {
            return RX_OK;
        }
        rx_http_request_log_error(r, RX_LOG_ERR, 0, err,
                                  cmd.name.len ? cmd.name.data : "");
        return error_output(r, ctx);
    }
    rc = rx_ssi_command(r, ctx, &cmd);
    if (rc == RX_DECLINED) {
        return error_output(r, ctx);
    }
    return rc;
}

/* Parses the held input until it is used up or an include starts. */
static rx_int_t
parse(rx_http_request_t *r, rx_ssi_ctx_t *ctx)
{
    rx_str_t    text;
    rx_int_t    rc;

    while (ctx->in && !ctx->waiting) {
        rx_buf_t *b = ctx->in->buf;

        if (b->pos < b->last) {
            switch (rx_ssi_parse(&ctx->parser, &b->pos, b->last, &text)) {
            case RX_SSI_TEXT:
                rc = rx_ssi_emit(r, ctx, text.data, text.len);
                break;
            case RX_SSI_COMMAND:
                rc = run_command(r, ctx);
                break;
            default:
                rc = RX_OK;
            }
            if (rc == RX_AGAIN) {
                ctx->waiting = 1;
                /* what came before the include goes first */
                if (flush_out(r, ctx) == RX_ERROR) {
                    return RX_ERROR;
                }
                r->filter_buffered = 1;
                return RX_OK;
            }
            if (rc != RX_OK) {
                return RX_ERROR;
            }
            continue;
        }
        if (b->last_buf) {
            ctx->last_seen = 1;
        }
        ctx->in = ctx->in->next;
        if (ctx->in == NULL) {
            ctx->in_tail = &ctx->in;
        }
    }
    return RX_OK;
}

/* The input ended: a "<!--" held is text, an unfinished command is an
 * error (nginx drops it), and the last buffer goes. */
static rx_int_t
finish(rx_http_request_t *r, rx_ssi_ctx_t *ctx)
{
    rx_buf_t   *b;
    rx_chain_t *cl;
    rx_str_t    text;

    rx_ssi_parser_held(&ctx->parser, &text);
    if (rx_ssi_emit(r, ctx, text.data, text.len) != RX_OK) {
        return RX_ERROR;
    }
    b = rx_calloc_buf(r->pool);
    cl = rx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    b->last_buf = 1;
    b->sync = 1;
    cl->buf = b;
    *ctx->out_tail = cl;
    ctx->out_tail = &cl->next;
    ctx->last_sent = 1;
    return RX_OK;
}

static rx_int_t
ssi_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    rx_ssi_ctx_t *ctx = r->ssi_ctx;

    if (ctx == NULL || ctx->last_sent) {
        return next_body(r, in);
    }
    switch (rx_chain_take_links(r->pool, &ctx->free, in, &ctx->in_tail)) {
    case RX_OK:
        break;
    case RX_DECLINED:
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "ssi filter got a file "
            "buffer: its producer ignored filter_need_in_memory");
        /* fall through */
    default:
        return RX_ERROR;
    }
    if (ctx->waiting) {
        return next_body(r, NULL);        /* the include's bytes go first */
    }
    if (parse(r, ctx) != RX_OK) {
        return RX_ERROR;
    }
    if (ctx->waiting) {
        return RX_OK;
    }
    if (ctx->last_seen && finish(r, ctx) != RX_OK) {
        return RX_ERROR;
    }
    return flush_out(r, ctx);
}

void
rx_ssi_include_done(rx_http_request_t *sr, void *data)
{
    rx_http_request_t *r = data;
    rx_ssi_ctx_t      *ctx = r->ssi_ctx;
    rx_int_t           rc = RX_OK;

    ctx->waiting = 0;
    if (ctx->set_var) {
        rx_http_subrequest_captured(sr, &ctx->set_var->value);
        ctx->set_var = NULL;
    }
    if (ctx->stub) {
        if (rx_http_subrequest_output_empty(sr)) {
            rc = rx_ssi_emit(r, ctx, ctx->stub->text.data,
                             ctx->stub->text.len);
        }
        ctx->stub = NULL;
    }
    if (rc == RX_OK) {
        rc = ssi_body_filter(r, NULL);
    }
    if (rc != RX_OK) {
        rx_http_close_request(r);
        return;
    }
    if (!ctx->waiting) {
        rx_http_postpone_release(r);
    }
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = ssi_header_filter;
    top->body = ssi_body_filter;
}
