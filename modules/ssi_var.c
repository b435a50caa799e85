/*
 * ssi_var.c: the SSI variables: those set by the set command or a regex's
 * named captures (kept in the main request's context), $name lookup, the
 * evaluation of a parameter's $variables as nginx does, and $date_local /
 * $date_gmt.
 */
#include <ctype.h>
#include <time.h>
#include "ssi.h"
#include "http_variables.h"
#include "clock.h"

/* ---- variables ---------------------------------------------------------- */

rx_ssi_var_t *
rx_ssi_var(rx_ssi_ctx_t *ctx, const rx_str_t *name)
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

rx_int_t
rx_ssi_var_set(rx_http_request_t *r, rx_ssi_ctx_t *ctx, const rx_str_t *name,
    const rx_str_t *value)
{
    rx_ssi_var_t *v = rx_ssi_var(ctx, name);
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
bool
rx_ssi_get_value(rx_http_request_t *r, rx_ssi_ctx_t *ctx, const rx_str_t *name,
    rx_str_t *out)
{
    rx_ssi_var_t             *sv = rx_ssi_var(ctx, name);
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

/* The variable name after a '$', which *pi points past: ${name}, or a run
 * of [A-Za-z0-9_]. *pi moves past the name; a name left open or empty is
 * nginx's error (RX_DECLINED, logged). */
static rx_int_t
var_name(rx_http_request_t *r, rx_str_t *text, size_t *pi, rx_str_t *name)
{
    size_t i = *pi;

    if (i < text->len && text->data[i] == '{') {
        name->data = text->data + ++i;
        while (i < text->len && text->data[i] != '}') {
            i++;
        }
        if (i == text->len) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "the closing "
                "bracket in \"%.*s\" variable is missing",
                (int) (text->data + i - name->data), name->data);
            return RX_DECLINED;
        }
        name->len = (size_t) (text->data + i++ - name->data);
    } else {
        name->data = text->data + i;
        while (i < text->len && (isalnum((unsigned char) text->data[i])
                                 || text->data[i] == '_')) {
            i++;
        }
        name->len = (size_t) (text->data + i - name->data);
    }
    *pi = i;
    if (name->len == 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "invalid variable "
            "name in \"%.*s\"", (int) text->len, text->data);
        return RX_DECLINED;
    }
    return RX_OK;
}

/* out[0..*n) made absolute: the directory of the request's URI in front
 * (nginx resolves a relative include against it). NULL: no memory. */
static char *
uri_dir_prefix(rx_http_request_t *r, char *out, size_t *n)
{
    size_t  pre;
    char   *p;

    for (pre = r->uri.len; pre && r->uri.data[pre - 1] != '/'; pre--) {
        /* the directory of the URI */
    }
    p = rx_pnalloc(r->pool, pre + *n + 1);
    if (p == NULL) {
        return NULL;
    }
    memcpy(p, r->uri.data, pre);
    memcpy(p + pre, out, *n);
    *n += pre;
    return p;
}

/* nginx's evaluation of a parameter: $name and ${name} replaced, "\x"
 * gives x for x in \ ' " $ (else stays "\x"); prefix: a relative result
 * gets the directory of the request's URI in front. */
rx_int_t
rx_ssi_evaluate(rx_http_request_t *r, rx_ssi_ctx_t *ctx, rx_str_t *text,
    bool prefix)
{
    size_t   i = 0, cap = text->len + 1, n = 0;
    char    *out = rx_pnalloc(r->pool, cap);
    rx_str_t name, val;
    rx_int_t rc;

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
        if ((rc = var_name(r, text, &i, &name)) != RX_OK) {
            return rc;
        }
        if (!rx_ssi_get_value(r, ctx, &name, &val) || val.len == 0) {
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
        out = uri_dir_prefix(r, out, &n);
        if (out == NULL) {
            return RX_ERROR;
        }
    }
    out[n] = '\0';
    text->data = out;
    text->len = n;
    return RX_OK;
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
