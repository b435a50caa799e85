/*
 * ssi_cmd.c: the SSI commands (include, echo, set, config, if, elif,
 * else, endif, block, endblock), their parameters checked against one
 * table, and the if command's expressions. Variables and the evaluation
 * of $variables in parameters: ssi_var.c.
 */
#include <ctype.h>
#include "ssi.h"
#include "http_uri.h"
#include "regex.h"

#define SSI_SET_CAPTURE  8192    /* set=: nginx's subrequest_output_buffer */

static const rx_str_t ssi_none = rx_string("(none)");

typedef rx_int_t (*cmd_pt)(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);

typedef struct {
    const char  *name;
    cmd_pt       handler;
    const char  *params[6];     /* the names it takes, NULL-ended */
    unsigned     mandatory;     /* bit i: params[i] must be given */
    bool         conditional;   /* runs where output is off */
} cmd_t;

static rx_int_t cmd_include(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);
static rx_int_t cmd_echo(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);
static rx_int_t cmd_set(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);
static rx_int_t cmd_config(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);
static rx_int_t cmd_if(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);
static rx_int_t cmd_else(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);
static rx_int_t cmd_endif(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);
static rx_int_t cmd_block(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);
static rx_int_t cmd_endblock(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t **p);

static const cmd_t commands[] = {
    { "include", cmd_include,
      { "virtual", "file", "stub", "wait", "set", NULL }, 0, false },
    { "echo", cmd_echo, { "var", "default", "encoding", NULL }, 1, false },
    { "set", cmd_set, { "var", "value", NULL }, 3, false },
    { "config", cmd_config, { "errmsg", "timefmt", NULL }, 0, false },
    { "if", cmd_if, { "expr", NULL }, 1, true },
    { "elif", cmd_if, { "expr", NULL }, 1, true },
    { "else", cmd_else, { NULL }, 0, true },
    { "endif", cmd_endif, { NULL }, 0, true },
    { "block", cmd_block, { "name", NULL }, 1, false },
    { "endblock", cmd_endblock, { NULL }, 0, true },
    { NULL, NULL, { NULL }, 0, false }
};

/* ---- output ------------------------------------------------------------ */

static rx_int_t
block_append(rx_http_request_t *r, rx_ssi_ctx_t *ctx, const char *data,
    size_t len)
{
    if (ctx->block_len + len > ctx->block_cap) {
        size_t cap = rx_max(2 * ctx->block_cap, ctx->block_len + len + 256);
        char  *p = rx_pnalloc(r->pool, cap);

        if (p == NULL) {
            return RX_ERROR;
        }
        if (ctx->block_len) {
            memcpy(p, ctx->block_text, ctx->block_len);
        }
        ctx->block_text = p;
        ctx->block_cap = cap;
    }
    memcpy(ctx->block_text + ctx->block_len, data, len);
    ctx->block_len += len;
    return RX_OK;
}

rx_int_t
rx_ssi_emit(rx_http_request_t *r, rx_ssi_ctx_t *ctx, const char *data,
    size_t len)
{
    rx_chain_t *cl;

    if (len == 0) {
        return RX_OK;
    }
    if (ctx->block) {
        return block_append(r, ctx, data, len);
    }
    if (!ctx->output) {
        return RX_OK;
    }
    /* a copy: the producer's buffer is free once the filter returns */
    cl = rx_chain_from_text(r->pool, data, len, false);
    if (cl == NULL) {
        return RX_ERROR;
    }
    *ctx->out_tail = cl;
    ctx->out_tail = &cl->next;
    return RX_OK;
}

/* ---- the commands ------------------------------------------------------- */

/* include's parameters that cannot go together, nginx's checks and
 * wording: RX_DECLINED (logged) or RX_OK. */
static rx_int_t
include_check(rx_http_request_t *r, rx_str_t *uri, rx_str_t *file,
    rx_str_t *stub, rx_str_t *wait, rx_str_t *set)
{
    if (uri && file) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "inclusion may be either "
            "virtual=\"%.*s\" or file=\"%.*s\"", (int) uri->len, uri->data,
            (int) file->len, file->data);
        return RX_DECLINED;
    }
    if (uri == NULL && file == NULL) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "no parameter in "
                                  "\"include\" SSI command");
        return RX_DECLINED;
    }
    if (set && stub) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"set\" and \"stub\" "
            "cannot be used together in \"include\" SSI command");
        return RX_DECLINED;
    }
    if (wait) {
        if (uri == NULL) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"wait\" cannot be "
                "used with file=\"%.*s\"", (int) file->len, file->data);
            return RX_DECLINED;
        }
        if (!rx_str_caseeq(wait, "yes") && !rx_str_caseeq(wait, "no")) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "invalid value "
                "\"%.*s\" in the \"wait\" parameter", (int) wait->len,
                wait->data);
            return RX_DECLINED;
        }
    }
    return RX_OK;
}

/* the block stub= names, the last one defined under that name (nginx's
 * order); NULL (logged) when there is none */
static rx_ssi_block_t *
include_stub(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t *stub)
{
    rx_ssi_block_t *bl = ctx->blocks->elts, *found = NULL;
    rx_uint_t       i;

    for (i = 0; i < ctx->blocks->nelts; i++) {
        if (bl[i].name.len == stub->len
            && memcmp(bl[i].name.data, stub->data, stub->len) == 0) {
            found = &bl[i];
        }
    }
    if (found == NULL) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"stub\"=\"%.*s\" "
            "for \"include\" not found", (int) stub->len, stub->data);
    }
    return found;
}

static rx_int_t
cmd_include(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_str_t       *uri = p[0], *file = p[1], *stub = p[2], *wait = p[3];
    rx_str_t       *set = p[4], path, args;
    rx_http_request_t *sr;
    rx_int_t        rc;

    if ((rc = include_check(r, uri, file, stub, wait, set)) != RX_OK) {
        return rc;
    }
    if (uri == NULL) {
        uri = file;
    }
    if ((rc = rx_ssi_evaluate(r, ctx, uri, true)) != RX_OK) {
        return rc;
    }
    rc = rx_http_parse_unsafe_uri(r->pool, uri, &path, &args);
    if (rc != RX_OK) {
        if (rc == RX_DECLINED) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "unsafe URI \"%.*s\" "
                "was detected", (int) uri->len, uri->data);
            return RX_DECLINED;
        }
        return RX_ERROR;
    }
    ctx->stub = NULL;
    ctx->set_var = NULL;
    if (stub && (ctx->stub = include_stub(r, ctx, stub)) == NULL) {
        return RX_DECLINED;
    }
    if (set) {
        static const rx_str_t empty = rx_string("");

        if (rx_ssi_var_set(r, ctx, set, &empty) != RX_OK) {
            return RX_ERROR;
        }
        ctx->set_var = rx_ssi_var(ctx, set);
    }
    sr = rx_http_subrequest_in_body(r, &path, args.data ? &args : NULL,
                                    set ? SSI_SET_CAPTURE : 0,
                                    rx_ssi_include_done, r);
    if (sr == NULL) {
        return RX_ERROR;
    }
    if (ctx->stub) {
        rx_http_subrequest_stub(sr);
    }
    return RX_AGAIN;
}

static rx_int_t
cmd_echo(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_str_t  *enc = p[2], value;
    char      *buf, *o;
    size_t     i, len;

    if (!rx_ssi_get_value(r, ctx, p[0], &value)) {
        value = p[1] ? *p[1] : ssi_none;
    }
    if (value.len == 0) {
        return RX_OK;
    }
    if (enc && rx_str_eq(enc, "none")) {
        return rx_ssi_emit(r, ctx, value.data, value.len);
    }
    if (enc && rx_str_eq(enc, "url")) {
        len = rx_http_escape_uri(NULL, value.data, value.len, RX_ESCAPE_HTML);
        buf = rx_pnalloc(r->pool, len + 1);
        if (buf == NULL) {
            return RX_ERROR;
        }
        len = rx_http_escape_uri(buf, value.data, value.len, RX_ESCAPE_HTML);
        return rx_ssi_emit(r, ctx, buf, len);
    }
    if (enc && !rx_str_eq(enc, "entity")) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "unknown encoding "
            "\"%.*s\" in the \"echo\" command", (int) enc->len, enc->data);
    }
    buf = rx_pnalloc(r->pool, value.len * 6 + 1);
    if (buf == NULL) {
        return RX_ERROR;
    }
    for (i = 0, o = buf; i < value.len; i++) {
        switch (value.data[i]) {
        case '<': memcpy(o, "&lt;", 4); o += 4; break;
        case '>': memcpy(o, "&gt;", 4); o += 4; break;
        case '&': memcpy(o, "&amp;", 5); o += 5; break;
        case '"': memcpy(o, "&quot;", 6); o += 6; break;
        default: *o++ = value.data[i];
        }
    }
    return rx_ssi_emit(r, ctx, buf, (size_t) (o - buf));
}

static rx_int_t
cmd_set(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_str_t value = *p[1];
    rx_int_t rc = rx_ssi_evaluate(r, ctx, &value, false);

    if (rc != RX_OK) {
        return rc;
    }
    return rx_ssi_var_set(r, ctx, p[0], &value);
}

static rx_int_t
cmd_config(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    if (p[1]) {
        ctx->timefmt.data = rx_pstrdup_c(r->pool, p[1]->data, p[1]->len);
        if (ctx->timefmt.data == NULL) {
            return RX_ERROR;
        }
        ctx->timefmt.len = p[1]->len;
    }
    if (p[0]) {
        ctx->errmsg = *p[0];
    }
    return RX_OK;
}

/* The named groups of a match (rc: its capture count) become SSI
 * variables; a group that did not take part gives an empty value. */
static rx_int_t
set_named_captures(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_regex_t *re,
    rx_str_t *left, rx_int_t rc)
{
    rx_uint_t               n, k;
    const rx_regex_name_t  *names = rx_regex_names(re, &n);

    for (k = 0; k < n; k++) {
        rx_str_t v = { 0, NULL };
        int      c = (int) names[k].index;

        if (c < rc && ctx->captures[2 * c] >= 0) {
            v.data = left->data + ctx->captures[2 * c];
            v.len = (size_t) (ctx->captures[2 * c + 1]
                              - ctx->captures[2 * c]);
        }
        if (rx_ssi_var_set(r, ctx, &names[k].name, &v) != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/* left = /right/: right (the text between the slashes) is evaluated and
 * compiled; a match keeps its captures for $1.. and the named ones. A
 * pattern that does not compile or a failed match: RX_DECLINED. */
static rx_int_t
compare_regex(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t *left,
    rx_str_t *right, bool *matched)
{
    char        err[256];
    rx_regex_t *re;
    rx_int_t    rc;

    if ((rc = rx_ssi_evaluate(r, ctx, right, false)) != RX_OK) {
        return rc;
    }
    re = rx_regex_compile(r->pool, right, false, err, sizeof(err));
    if (re == NULL) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "%s", err);
        return RX_DECLINED;
    }
    rc = rx_regex_exec(re, left->data, left->len, ctx->captures,
                       RX_HTTP_MAX_CAPTURES);
    if (rc == RX_ERROR) {
        return RX_DECLINED;
    }
    *matched = (rc != RX_DECLINED);
    if (!*matched) {
        return RX_OK;
    }
    ctx->ncaptures = rc;
    ctx->captures_data = *left;
    return set_named_captures(r, ctx, re, left, rc);
}

/* left = right, left != right, left = /regex/ (captures $1.. and named
 * ones become SSI variables), or left alone (true when not empty). */
static rx_int_t
compare(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t *expr,
    bool *result)
{
    char     *s = expr->data, *last = s + expr->len;
    rx_str_t  left, right;
    bool      negative = false;
    rx_int_t  rc;

    for (left.data = s; s < last; s++) {
        if (!isalnum((unsigned char) *s) && *s != '$' && *s != '{'
            && *s != '}' && *s != '_' && *s != '"' && *s != '\'') {
            break;
        }
    }
    left.len = (size_t) (s - left.data);
    while (s < last && *s == ' ') {
        s++;
    }
    if ((rc = rx_ssi_evaluate(r, ctx, &left, false)) != RX_OK) {
        return rc;
    }
    if (s == last) {
        *result = left.len > 0;
        return RX_OK;
    }
    if (*s == '=') {
        s++;
    } else if (s + 1 < last && s[0] == '!' && s[1] == '=') {
        negative = true;
        s += 2;
    } else {
        goto invalid;
    }
    while (s < last && *s == ' ') {
        s++;
    }
    if (s < last - 1 && *s == '/') {
        bool matched;

        if (last[-1] != '/') {
            goto invalid;
        }
        right.data = s + 1;
        right.len = (size_t) (last - 1 - right.data);
        rc = compare_regex(r, ctx, &left, &right, &matched);
        if (rc == RX_OK) {
            *result = matched != negative;
        }
        return rc;
    }
    if (s < last - 1 && s[0] == '\\' && s[1] == '/') {
        s++;
    }
    right.data = s;
    right.len = (size_t) (last - s);
    if ((rc = rx_ssi_evaluate(r, ctx, &right, false)) != RX_OK) {
        return rc;
    }
    *result = (left.len == right.len
               && memcmp(left.data, right.data, left.len) == 0) != negative;
    return RX_OK;

invalid:
    rx_http_request_log_error(r, RX_LOG_ERR, 0, "invalid expression in "
                              "\"%.*s\"", (int) expr->len, expr->data);
    return RX_DECLINED;
}

static rx_int_t
cmd_if(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_str_t expr = *p[0];
    bool     yes = false;
    rx_int_t rc;

    /* a copy: evaluation lower-cases nothing, but the capture data must
     * outlive the command's text */
    expr.data = rx_pstrdup_c(r->pool, p[0]->data, p[0]->len);
    if (expr.data == NULL) {
        return RX_ERROR;
    }
    if (ctx->chosen) {
        ctx->output = 0;
        ctx->conditional = 1;
        return RX_OK;
    }
    if ((rc = compare(r, ctx, &expr, &yes)) != RX_OK) {
        return rc;
    }
    ctx->output = yes;
    ctx->chosen = yes;
    ctx->conditional = 1;
    return RX_OK;
}

static rx_int_t
cmd_else(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_unused(r);
    rx_unused(p);
    ctx->output = !ctx->chosen;
    ctx->conditional = 2;
    return RX_OK;
}

static rx_int_t
cmd_endif(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_unused(r);
    rx_unused(p);
    ctx->output = 1;
    ctx->chosen = 0;
    ctx->conditional = 0;
    return RX_OK;
}

static rx_int_t
cmd_block(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_ssi_block_t *bl = rx_array_push(ctx->blocks);

    if (bl == NULL) {
        return RX_ERROR;
    }
    bl->name.data = rx_pstrdup_c(r->pool, p[0]->data, p[0]->len);
    bl->name.len = p[0]->len;
    bl->text.len = 0;
    bl->text.data = NULL;
    ctx->block = bl;
    ctx->block_text = NULL;
    ctx->block_len = ctx->block_cap = 0;
    return bl->name.data ? RX_OK : RX_ERROR;
}

static rx_int_t
cmd_endblock(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_unused(r);
    rx_unused(p);
    if (ctx->block) {
        ctx->block->text.data = ctx->block_text;
        ctx->block->text.len = ctx->block_len;
        ctx->block = NULL;
    }
    return RX_OK;
}

/* ---- dispatch ----------------------------------------------------------- */

static const char *
check_params(const cmd_t *c, rx_ssi_command_t *cmd, rx_str_t **p)
{
    rx_uint_t i, k;

    memset(p, 0, 6 * sizeof(*p));
    for (i = 0; i < cmd->nparams; i++) {
        for (k = 0; c->params[k]; k++) {
            if (rx_str_eq(&cmd->params[i].name, c->params[k])) {
                break;
            }
        }
        if (c->params[k] == NULL) {
            return "invalid parameter name: \"%.*s\" of the SSI \"%.*s\" "
                   "command";
        }
        if (p[k]) {
            return "duplicate \"%.*s\" parameter in \"%.*s\" SSI command";
        }
        p[k] = &cmd->params[i].value;
    }
    for (k = 0; c->params[k]; k++) {
        if ((c->mandatory & (1u << k)) && p[k] == NULL) {
            cmd->params[0].name.data = (char *) c->params[k];
            cmd->params[0].name.len = strlen(c->params[k]);
            cmd->nparams = 1;
            return "mandatory \"%.*s\" parameter is absent in \"%.*s\" SSI "
                   "command";
        }
    }
    return NULL;
}

rx_int_t
rx_ssi_command(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_ssi_command_t *cmd)
{
    const cmd_t *c;
    const char  *err;
    rx_str_t    *p[6];
    rx_uint_t    bad = 0;

    for (c = commands; c->name; c++) {
        if (rx_str_eq(&cmd->name, c->name)) {
            break;
        }
    }
    if (c->name == NULL) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "invalid SSI command: "
            "\"%.*s\"", (int) cmd->name.len, cmd->name.data);
        return ctx->output ? RX_DECLINED : RX_OK;
    }
    if (ctx->block && c->handler != cmd_endblock) {
        return RX_OK;       /* commands inside a block are not recorded */
    }
    if (!ctx->output && !c->conditional) {
        return RX_OK;
    }
    if ((c->handler == cmd_else || (c->handler == cmd_if && c->name[0] == 'e')
         || c->handler == cmd_endif) && ctx->conditional == 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "the \"%s\" command "
                                  "without \"if\"", c->name);
        return RX_DECLINED;
    }
    if (c->handler == cmd_if && c->name[0] == 'i' && ctx->conditional) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "the \"if\" command "
                                  "inside the \"if\" command");
        return RX_DECLINED;
    }
    err = check_params(c, cmd, p);
    if (err) {
        for (bad = 0; bad < cmd->nparams; bad++) {
            if (bad + 1 == cmd->nparams || strstr(err, "mandatory")) {
                break;
            }
        }
        rx_http_request_log_error(r, RX_LOG_ERR, 0, err,
            (int) cmd->params[bad].name.len, cmd->params[bad].name.data,
            (int) cmd->name.len, cmd->name.data);
        return RX_DECLINED;
    }
    return c->handler(r, ctx, p);
}
