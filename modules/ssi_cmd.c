/*
 * ssi_cmd.c: the SSI commands (include, echo, set, config, if, elif,
 * else, endif, block, endblock), their parameters checked against one
 * table, strings with $variables evaluated as nginx does, and the
 * $date_local / $date_gmt variables.
 */
#include <ctype.h>
#include <time.h>
#include "ssi.h"
#include "http_uri.h"
#include "http_variables.h"
#include "regex.h"
#include "clock.h"

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

/* ---- variables ---------------------------------------------------------- */

static rx_ssi_var_t *
ssi_var(rx_ssi_ctx_t *ctx, const rx_str_t *name)
{
    rx_ssi_var_t *v = ctx->vars->elts;
    rx_uint_t     i;

    for (i = 0; i < ctx->vars->nelts; i++) {
        if (v[i].name.len == name->len
            && strncasecmp(v[i].name.data, name->data, name->len) == 0) {
            return &v[i];
        }
    }
    return NULL;
}

static rx_int_t
ssi_var_set(rx_http_request_t *r, rx_ssi_ctx_t *ctx, const rx_str_t *name,
    const rx_str_t *value)
{
    rx_ssi_var_t *v = ssi_var(ctx, name);
    size_t        i;

    if (v == NULL) {
        v = rx_array_push(ctx->vars);
        if (v == NULL || (v->name.data = rx_pnalloc(r->pool, name->len))
                         == NULL) {
            return RX_ERROR;
        }
        for (i = 0; i < name->len; i++) {
            v->name.data[i] = (char) tolower((unsigned char) name->data[i]);
        }
        v->name.len = name->len;
    }
    v->value = *value;
    return RX_OK;
}

/* The value of $name: an SSI variable, a capture of the last if's regex
 * ($0..$9), else the request's variable. false: no value. */
static bool
get_value(rx_http_request_t *r, rx_ssi_ctx_t *ctx, const rx_str_t *name,
    rx_str_t *out)
{
    rx_ssi_var_t             *sv = ssi_var(ctx, name);
    rx_http_variable_value_t *vv;

    if (sv) {
        *out = sv->value;
        return true;
    }
    if (name->len == 1 && isdigit((unsigned char) name->data[0])) {
        rx_int_t n = name->data[0] - '0';

        if (n >= ctx->ncaptures || ctx->captures[2 * n] < 0) {
            return false;
        }
        out->data = ctx->captures_data.data + ctx->captures[2 * n];
        out->len = (size_t) (ctx->captures[2 * n + 1] - ctx->captures[2 * n]);
        return true;
    }
    vv = rx_http_get_variable(r, name);
    if (vv == NULL) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "unknown \"%.*s\" "
                                  "variable", (int) name->len, name->data);
        return false;
    }
    if (vv->not_found) {
        return false;
    }
    out->data = vv->data;
    out->len = vv->len;
    return true;
}

/* nginx's evaluation of a parameter: $name and ${name} replaced, "\x"
 * gives x for x in \ ' " $ (else stays "\x"); prefix: a relative result
 * gets the directory of the request's URI in front. */
static rx_int_t
evaluate(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t *text,
    bool prefix)
{
    size_t   i = 0, cap = text->len + 1, n = 0, pre = 0;
    char    *out = rx_pnalloc(r->pool, cap);
    rx_str_t name, val;

    while (out && i < text->len) {
        char c = text->data[i];

        if (c == '\\' && i + 1 < text->len) {
            c = text->data[++i];
            if (c != '\\' && c != '\'' && c != '"' && c != '$') {
                out[n++] = '\\';
            }
            out[n++] = c;
            i++;
            continue;
        }
        if (c != '$') {
            out[n++] = c;
            i++;
            continue;
        }
        i++;
        if (i < text->len && text->data[i] == '{') {
            name.data = text->data + ++i;
            while (i < text->len && text->data[i] != '}') {
                i++;
            }
            if (i == text->len) {
                rx_http_request_log_error(r, RX_LOG_ERR, 0, "the closing "
                    "bracket in \"%.*s\" variable is missing",
                    (int) (text->data + i - name.data), name.data);
                return RX_DECLINED;
            }
            name.len = (size_t) (text->data + i++ - name.data);
        } else {
            name.data = text->data + i;
            while (i < text->len && (isalnum((unsigned char) text->data[i])
                                     || text->data[i] == '_')) {
                i++;
            }
            name.len = (size_t) (text->data + i - name.data);
        }
        if (name.len == 0) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "invalid variable "
                "name in \"%.*s\"", (int) text->len, text->data);
            return RX_DECLINED;
        }
        if (!get_value(r, ctx, &name, &val) || val.len == 0) {
            continue;
        }
        if (n + val.len + (text->len - i) + 1 > cap) {
            char *p;

            cap = n + val.len + (text->len - i) + 1 + cap;
            p = rx_pnalloc(r->pool, cap);
            if (p == NULL) {
                return RX_ERROR;
            }
            memcpy(p, out, n);
            out = p;
        }
        memcpy(out + n, val.data, val.len);
        n += val.len;
    }
    if (out == NULL) {
        return RX_ERROR;
    }
    if (prefix && n && out[0] != '/') {
        char *p;

        for (pre = r->uri.len; pre && r->uri.data[pre - 1] != '/'; pre--) {
            /* the directory of the URI */
        }
        p = rx_pnalloc(r->pool, pre + n + 1);
        if (p == NULL) {
            return RX_ERROR;
        }
        memcpy(p, r->uri.data, pre);
        memcpy(p + pre, out, n);
        out = p;
        n += pre;
    }
    out[n] = '\0';
    text->data = out;
    text->len = n;
    return RX_OK;
}

/* ---- the commands ------------------------------------------------------- */

static rx_int_t
cmd_include(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t **p)
{
    rx_str_t       *uri = p[0], *file = p[1], *stub = p[2], *wait = p[3];
    rx_str_t       *set = p[4], path, args;
    rx_ssi_block_t *bl = ctx->blocks->elts;
    rx_http_request_t *sr;
    rx_uint_t       i;
    rx_int_t        rc;

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
    if (uri == NULL) {
        uri = file;
    }
    if ((rc = evaluate(r, ctx, uri, true)) != RX_OK) {
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
    if (stub) {
        for (i = 0; i < ctx->blocks->nelts; i++) {
            if (bl[i].name.len == stub->len
                && memcmp(bl[i].name.data, stub->data, stub->len) == 0) {
                ctx->stub = &bl[i];
            }
        }
        if (ctx->stub == NULL) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"stub\"=\"%.*s\" "
                "for \"include\" not found", (int) stub->len, stub->data);
            return RX_DECLINED;
        }
    }
    if (set) {
        static const rx_str_t empty = rx_string("");

        if (ssi_var_set(r, ctx, set, &empty) != RX_OK) {
            return RX_ERROR;
        }
        ctx->set_var = ssi_var(ctx, set);
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

    if (!get_value(r, ctx, p[0], &value)) {
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
    rx_int_t rc = evaluate(r, ctx, &value, false);

    if (rc != RX_OK) {
        return rc;
    }
    return ssi_var_set(r, ctx, p[0], &value);
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

/* left = right, left != right, left = /regex/ (captures $1.. and named
 * ones become SSI variables), or left alone (true when not empty). */
static rx_int_t
compare(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t *expr,
    bool *result)
{
    char     *s = expr->data, *last = s + expr->len, err[256];
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
    if ((rc = evaluate(r, ctx, &left, false)) != RX_OK) {
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
        rx_regex_t *re;

        if (last[-1] != '/') {
            goto invalid;
        }
        right.data = s + 1;
        right.len = (size_t) (last - 1 - right.data);
        if ((rc = evaluate(r, ctx, &right, false)) != RX_OK) {
            return rc;
        }
        re = rx_regex_compile(r->pool, &right, false, err, sizeof(err));
        if (re == NULL) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "%s", err);
            return RX_DECLINED;
        }
        rc = rx_regex_exec(re, left.data, left.len, ctx->captures,
                           RX_HTTP_MAX_CAPTURES);
        if (rc == RX_ERROR) {
            return RX_DECLINED;
        }
        if (rc != RX_DECLINED) {
            rx_uint_t                n, k;
            const rx_regex_name_t   *names = rx_regex_names(re, &n);

            ctx->ncaptures = rc;
            ctx->captures_data = left;
            for (k = 0; k < n; k++) {
                rx_str_t v = { 0, NULL };
                int      c = (int) names[k].index;

                if (c < rc && ctx->captures[2 * c] >= 0) {
                    v.data = left.data + ctx->captures[2 * c];
                    v.len = (size_t) (ctx->captures[2 * c + 1]
                                      - ctx->captures[2 * c]);
                }
                if (ssi_var_set(r, ctx, &names[k].name, &v) != RX_OK) {
                    return RX_ERROR;
                }
            }
        }
        *result = (rc != RX_DECLINED) != negative;
        return RX_OK;
    }
    if (s < last - 1 && s[0] == '\\' && s[1] == '/') {
        s++;
    }
    right.data = s;
    right.len = (size_t) (last - s);
    if ((rc = evaluate(r, ctx, &right, false)) != RX_OK) {
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

/* ---- $date_local, $date_gmt -------------------------------------------- */

static rx_int_t
date_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t gmt)
{
    rx_ssi_ctx_t *ctx = r->ssi_ctx;
    const char   *fmt = ctx && ctx->timefmt.data ? ctx->timefmt.data
                                                 : "%A, %d-%b-%Y %H:%M:%S %Z";
    time_t        now = rx_time_sec;
    struct tm     tm;
    char          buf[2048];
    size_t        n;

    if (strcmp(fmt, "%s") == 0) {
        n = (size_t) snprintf(buf, sizeof(buf), "%lld", (long long) now);
    } else {
        if (gmt) {
            gmtime_r(&now, &tm);
        } else {
            localtime_r(&now, &tm);
        }
        n = strftime(buf, sizeof(buf), fmt, &tm);
    }
    v->data = rx_pnalloc(r->pool, n + 1);
    if (v->data == NULL) {
        return RX_ERROR;
    }
    memcpy(v->data, buf, n);
    v->len = n;
    v->no_cacheable = 1;
    return RX_OK;
}

rx_int_t
rx_ssi_add_variables(rx_conf_t *cf)
{
    static const rx_str_t local = rx_string("date_local");
    static const rx_str_t gmt = rx_string("date_gmt");
    rx_http_variable_t   *v;

    v = rx_http_add_variable(cf, &local, RX_HTTP_VAR_NOCACHEABLE);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = date_variable;
    v->data = 0;
    v = rx_http_add_variable(cf, &gmt, RX_HTTP_VAR_NOCACHEABLE);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = date_variable;
    v->data = 1;
    return RX_OK;
}
