/*
 * http_upstream_variables.c: $upstream_addr, $upstream_status, the
 * $upstream_*_time family, $upstream_bytes_*,$upstream_response_length,
 * $upstream_http_NAME and $upstream_cookie_NAME.
 * Values of every try are joined with ", " as nginx does; times are
 * seconds with millisecond resolution, "-" for a try that never got there.
 */
#include <ctype.h>
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "http_variables.h"
#include "clock.h"

enum {
    UV_ADDR = 0, UV_STATUS, UV_CONNECT_TIME, UV_HEADER_TIME, UV_RESPONSE_TIME,
    UV_BYTES_RECEIVED, UV_BYTES_SENT, UV_RESPONSE_LENGTH
};

static size_t
format_one(char *p, const rx_http_upstream_state_t *st, uintptr_t what)
{
    rx_msec_t ms;

    switch (what) {
    case UV_ADDR:
        memcpy(p, st->peer.data, st->peer.len);
        return st->peer.len;
    case UV_STATUS:
        return st->status ? (size_t) sprintf(p, "%u", (unsigned) st->status)
                          : (size_t) sprintf(p, "-");
    case UV_BYTES_RECEIVED:
        return (size_t) sprintf(p, "%" PRId64, st->bytes_received);
    case UV_BYTES_SENT:
        return (size_t) sprintf(p, "%" PRId64, st->bytes_sent);
    case UV_RESPONSE_LENGTH:
        return (size_t) sprintf(p, "%" PRId64, st->response_length);
    default:
        ms = what == UV_CONNECT_TIME ? st->connect_time
             : what == UV_HEADER_TIME ? st->header_time : st->response_time;
        if (ms < 0) {
            return (size_t) sprintf(p, "-");
        }
        return (size_t) sprintf(p, "%" PRId64 ".%03d", (int64_t) (ms / 1000),
                                (int) (ms % 1000));
    }
}

static rx_int_t
var_state(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_http_upstream_t       *u = r->upstream;
    rx_http_upstream_state_t *st;
    rx_uint_t                 i;
    size_t                    len = 0;
    char                     *p;

    if (u == NULL || u->states->nelts == 0) {
        v->not_found = 1;
        return RX_OK;
    }
    st = u->states->elts;
    for (i = 0; i < u->states->nelts; i++) {
        len += (data == UV_ADDR ? st[i].peer.len : 24) + 2;
    }
    p = rx_pnalloc(r->pool, len);
    if (p == NULL) {
        return RX_ERROR;
    }
    v->data = p;
    for (i = 0; i < u->states->nelts; i++) {
        if (i) {
            *p++ = ',';
            *p++ = ' ';
        }
        p += format_one(p, &st[i], data);
    }
    v->len = (size_t) (p - v->data);
    return RX_OK;
}

/* $upstream_http_NAME: the last response's header, '_' matching '-'. */
static rx_int_t
var_upstream_http(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const rx_str_t     *full = (const rx_str_t *) data;
    rx_http_upstream_t *u = r->upstream;
    rx_table_elt_t     *h;
    const char         *name = full->data + sizeof("upstream_http_") - 1;
    size_t              nlen = full->len - (sizeof("upstream_http_") - 1), k;
    rx_uint_t           i;

    if (u == NULL || !u->header_done) {
        v->not_found = 1;
        return RX_OK;
    }
    h = u->headers_in.headers.elts;
    for (i = 0; i < u->headers_in.headers.nelts; i++) {
        if (h[i].key.len != nlen) {
            continue;
        }
        for (k = 0; k < nlen; k++) {
            char c = h[i].lowcase_key[k], want = name[k];
            if (c == '-') {
                c = '_';
            }
            if (c != (char) tolower((unsigned char) want)) {
                break;
            }
        }
        if (k == nlen) {
            v->data = h[i].value.data;
            v->len = h[i].value.len;
            return RX_OK;
        }
    }
    v->not_found = 1;
    return RX_OK;
}

/* The value of cookie name in one Set-Cookie value ("n=v; Path=/"),
 * the name compared without case as nginx; false when it is another. */
static bool
set_cookie_value(const rx_str_t *line, const char *name, size_t nlen,
    rx_str_t *out)
{
    const char *p = line->data, *end = line->data + line->len, *v;

    while (p < end && (*p == ' ' || *p == '\t')) {
        p++;
    }
    if ((size_t) (end - p) <= nlen || strncasecmp(p, name, nlen) != 0
        || p[nlen] != '=') {
        return false;
    }
    v = p + nlen + 1;
    p = v;
    while (p < end && *p != ';') {
        p++;
    }
    while (p > v && (p[-1] == ' ' || p[-1] == '\t')) {
        p--;
    }
    out->data = (char *) v;
    out->len = (size_t) (p - v);
    return true;
}

/* $upstream_cookie_NAME: cookie NAME of the last response's Set-Cookie
 * headers (the first that sets it). */
static rx_int_t
var_upstream_cookie(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const rx_str_t     *full = (const rx_str_t *) data;
    rx_http_upstream_t *u = r->upstream;
    rx_table_elt_t     *h;
    const char         *name = full->data + sizeof("upstream_cookie_") - 1;
    size_t              nlen = full->len - (sizeof("upstream_cookie_") - 1);
    rx_str_t            val;
    rx_uint_t           i;

    if (u == NULL || !u->header_done || nlen == 0) {
        v->not_found = 1;
        return RX_OK;
    }
    h = u->headers_in.headers.elts;
    for (i = 0; i < u->headers_in.headers.nelts; i++) {
        if (h[i].key.len == 10
            && strncasecmp(h[i].key.data, "set-cookie", 10) == 0
            && set_cookie_value(&h[i].value, name, nlen, &val)) {
            v->data = val.data;
            v->len = val.len;
            return RX_OK;
        }
    }
    v->not_found = 1;
    return RX_OK;
}

/* $upstream_queue_time: how long the request waited for a connection in
 * the upstream queue, known before the request is sent. */
static rx_int_t
var_queue_time(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_upstream_t *u = r->upstream;
    rx_msec_t           ms;
    char               *p;

    if (u == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    ms = u->queue_time + (u->phase == RX_HTTP_UPSTREAM_QUEUED ? rx_current_msec - u->queue_start : 0);
    p = rx_pnalloc(r->pool, 24);
    if (p == NULL) {
        return RX_ERROR;
    }
    v->len = (size_t) sprintf(p, "%" PRId64 ".%03d", (int64_t) (ms / 1000),
                              (int) (ms % 1000));
    v->data = p;
    return RX_OK;
}

rx_int_t
rx_http_upstream_add_variables(rx_conf_t *cf)
{
    static const struct { const char *name; uintptr_t what; } vars[] = {
        { "upstream_addr", UV_ADDR },
        { "upstream_status", UV_STATUS },
        { "upstream_connect_time", UV_CONNECT_TIME },
        { "upstream_header_time", UV_HEADER_TIME },
        { "upstream_response_time", UV_RESPONSE_TIME },
        { "upstream_bytes_received", UV_BYTES_RECEIVED },
        { "upstream_bytes_sent", UV_BYTES_SENT },
        { "upstream_response_length", UV_RESPONSE_LENGTH },
    };
    rx_str_t            name;
    rx_http_variable_t *v;
    size_t              i;

    for (i = 0; i < rx_nelems(vars); i++) {
        name.data = (char *) vars[i].name;
        name.len = strlen(vars[i].name);
        v = rx_http_add_variable(cf, &name, RX_HTTP_VAR_NOCACHEABLE);
        if (v == NULL) {
            return RX_ERROR;
        }
        v->get = var_state;
        v->data = vars[i].what;
    }
    rx_str_set(&name, "upstream_queue_time");
    v = rx_http_add_variable(cf, &name, RX_HTTP_VAR_NOCACHEABLE);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = var_queue_time;
    rx_str_set(&name, "upstream_http_");
    v = rx_http_add_variable(cf, &name, RX_HTTP_VAR_PREFIX | RX_HTTP_VAR_NOCACHEABLE);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = var_upstream_http;
    rx_str_set(&name, "upstream_cookie_");
    v = rx_http_add_variable(cf, &name, RX_HTTP_VAR_PREFIX | RX_HTTP_VAR_NOCACHEABLE);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = var_upstream_cookie;
    return rx_http_cache_add_variables(cf);
}
