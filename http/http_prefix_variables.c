/*
 * http_prefix_variables.c: the core variables named by a prefix, nginx's
 * $http_NAME (request headers), $sent_http_NAME (response headers),
 * $cookie_NAME and $arg_NAME: how the name's suffix finds its value.
 */
#include <ctype.h>
#include "http.h"
#include "http_variables.h"
#include "http_variables_int.h"
#include "clock.h"

/* The part of a prefix variable's name after the prefix. */
static rx_str_t
suffix(uintptr_t data, size_t prefix_len)
{
    const rx_str_t *name = (const rx_str_t *) data;
    rx_str_t        s = { name->len - prefix_len, name->data + prefix_len };

    return s;
}

/* A header name against a variable suffix: case-insensitive, '-' as '_'. */
static bool
header_matches(const rx_str_t *key, const rx_str_t *var)
{
    size_t i;

    if (key->len != var->len) {
        return false;
    }
    for (i = 0; i < key->len; i++) {
        char ch = (char) tolower((unsigned char) key->data[i]);
        if ((ch == '-' ? '_' : ch) != var->data[i]) {
            return false;
        }
    }
    return true;
}

/*
 * Every header of the array named like var, joined as nginx 1.23 does:
 * with "; " for Cookie, ", " for the others; one header is returned
 * without a copy.
 */
static rx_int_t
headers_value(rx_http_request_t *r, rx_http_variable_value_t *v,
    const rx_array_t *headers, const rx_str_t *var)
{
    rx_table_elt_t *h = headers->elts, *first = NULL;
    const char     *sep = rx_str_eq(var, "cookie") ? "; " : ", ";
    rx_uint_t       i, n = 0;
    size_t          len = 0;
    char           *p;

    for (i = 0; i < headers->nelts; i++) {
        if (!h[i].deleted && header_matches(&h[i].key, var)) {
            first = first ? first : &h[i];
            len += (n++ ? 2 : 0) + h[i].value.len;
        }
    }
    if (n <= 1) {
        if (first == NULL) {
            v->not_found = 1;
        } else {
            rx_http_var_str(v, first->value.data, first->value.len);
        }
        return RX_OK;
    }
    p = rx_pnalloc(r->pool, len);
    if (p == NULL) {
        return RX_ERROR;
    }
    rx_http_var_str(v, p, len);
    for (i = 0, n = 0; i < headers->nelts; i++) {
        if (!h[i].deleted && header_matches(&h[i].key, var)) {
            if (n++) {
                memcpy(p, sep, 2);
                p += 2;
            }
            memcpy(p, h[i].value.data, h[i].value.len);
            p += h[i].value.len;
        }
    }
    return RX_OK;
}

rx_int_t
rx_http_var_http(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_str_t var = suffix(data, sizeof("http_") - 1);

    return headers_value(r, v, &r->headers_in.headers, &var);
}

/* Response headers: those kept outside the array first, as nginx does. */
rx_int_t
rx_http_var_sent_http(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_str_t               var = suffix(data, sizeof("sent_http_") - 1);
    char                  *p;

    if (rx_str_eq(&var, "content_type") && ho->content_type.len) {
        if (ho->charset.len == 0
            || memmem(ho->content_type.data, ho->content_type.len,
                      "charset=", 8)) {
            rx_http_var_str(v, ho->content_type.data, ho->content_type.len);
            return RX_OK;
        }
        return rx_http_var_printf(r, v,
                                  ho->content_type.len + ho->charset.len + 11,
                                  "%.*s; charset=%.*s",
                                  (int) ho->content_type.len,
                                  ho->content_type.data,
                                  (int) ho->charset.len, ho->charset.data);
    }
    if (rx_str_eq(&var, "content_length") && ho->content_length_n >= 0) {
        return rx_http_var_uint(r, v, (uint64_t) ho->content_length_n);
    }
    if (rx_str_eq(&var, "location") && ho->location && !ho->location->deleted) {
        rx_http_var_str(v, ho->location->value.data, ho->location->value.len);
        return RX_OK;
    }
    if (rx_str_eq(&var, "last_modified") && ho->last_modified_time >= 0) {
        p = rx_pnalloc(r->pool, 64);
        if (p == NULL) {
            return RX_ERROR;
        }
        rx_http_var_str(v, p, rx_http_date(p, ho->last_modified_time));
        return RX_OK;
    }
    if (rx_str_eq(&var, "connection")) {
        const char *c = ho->status == RX_HTTP_SWITCHING_PROTOCOLS ? "upgrade"
                        : r->keepalive ? "keep-alive" : "close";
        rx_http_var_str(v, c, strlen(c));
        return RX_OK;
    }
    if (rx_str_eq(&var, "transfer_encoding")) {
        if (r->chunked) {
            rx_http_var_str(v, "chunked", 7);
        } else {
            v->not_found = 1;
        }
        return RX_OK;
    }
    return headers_value(r, v, &ho->headers, &var);
}

/* True when s[0..len) case-insensitively equals name. */
static bool
token_is(const char *s, size_t len, const rx_str_t *name)
{
    return len == name->len && strncasecmp(s, name->data, len) == 0;
}

/* $cookie_NAME: the first "NAME=value" of the Cookie headers, the name
 * compared case-insensitively (nginx's rule). */
rx_int_t
rx_http_var_cookie(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_str_t        name = suffix(data, sizeof("cookie_") - 1);
    rx_table_elt_t *h = r->headers_in.headers.elts;
    rx_uint_t       i;

    for (i = 0; i < r->headers_in.headers.nelts; i++) {
        const char *p, *end, *eq, *semi;

        if (h[i].deleted || !rx_str_caseeq(&h[i].key, "cookie")) {
            continue;
        }
        p = h[i].value.data;
        end = p + h[i].value.len;
        while (p < end) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == ';')) {
                p++;
            }
            semi = memchr(p, ';', (size_t) (end - p));
            semi = semi ? semi : end;
            eq = memchr(p, '=', (size_t) (semi - p));
            if (eq && token_is(p, (size_t) (eq - p), &name)) {
                rx_http_var_str(v, eq + 1, (size_t) (semi - eq - 1));
                return RX_OK;
            }
            p = semi;
        }
    }
    v->not_found = 1;
    return RX_OK;
}

/* $arg_NAME: the first "NAME=value" of the arguments, not decoded, the
 * name compared case-insensitively; "NAME" without '=' does not count. */
rx_int_t
rx_http_var_arg(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_str_t    name = suffix(data, sizeof("arg_") - 1);
    const char *p, *end, *amp, *eq;

    if (r->args.len == 0) {
        v->not_found = 1;
        return RX_OK;
    }
    p = r->args.data;
    end = p + r->args.len;
    while (p < end) {
        amp = memchr(p, '&', (size_t) (end - p));
        amp = amp ? amp : end;
        eq = memchr(p, '=', (size_t) (amp - p));
        if (eq && token_is(p, (size_t) (eq - p), &name)) {
            rx_http_var_str(v, eq + 1, (size_t) (amp - eq - 1));
            return RX_OK;
        }
        if (amp == end) {
            break;
        }
        p = amp + 1;
    }
    v->not_found = 1;
    return RX_OK;
}
