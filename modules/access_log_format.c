/*
 * access_log_format.c: an access log line made from its log_format: the
 * variables' values escaped as the format says (default, json, none), its
 * length first, then the line.
 */
#include "access_log.h"

static size_t
escaped_len(log_escape_t escape, const char *s, size_t n)
{
    size_t len = n, i;

    if (escape == ESC_NONE) {
        return n;
    }
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char) s[i];

        if (escape == ESC_DEFAULT) {
            len += (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f) ? 3 : 0;
        } else if (c == '"' || c == '\\' || c == '\n' || c == '\r'
                   || c == '\t' || c == '\b' || c == '\f') {
            len += 1;
        } else if (c < 0x20) {
            len += 5;                       /* \u00XX */
        }
    }
    return len;
}

static char *
escape_copy(log_escape_t escape, char *d, const char *s, size_t n)
{
    static const char HEX[] = "0123456789ABCDEF", hex[] = "0123456789abcdef";
    size_t            i;

    if (escape == ESC_NONE) {
        memcpy(d, s, n);
        return d + n;
    }
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char) s[i];
        const char   *two = NULL;

        if (escape == ESC_DEFAULT) {
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f) {
                *d++ = '\\'; *d++ = 'x'; *d++ = HEX[c >> 4]; *d++ = HEX[c & 15];
            } else {
                *d++ = (char) c;
            }
            continue;
        }
        switch (c) {
        case '"':  two = "\\\""; break;
        case '\\': two = "\\\\"; break;
        case '\n': two = "\\n"; break;
        case '\r': two = "\\r"; break;
        case '\t': two = "\\t"; break;
        case '\b': two = "\\b"; break;
        case '\f': two = "\\f"; break;
        }
        if (two) {
            *d++ = two[0]; *d++ = two[1];
        } else if (c < 0x20) {
            memcpy(d, "\\u00", 4);
            d += 4;
            *d++ = hex[c >> 4]; *d++ = hex[c & 15];
        } else {
            *d++ = (char) c;
        }
    }
    return d;
}

/* The raw value of a non-literal part; NULL data when it has none. */
static rx_str_t
part_value(rx_http_request_t *r, const rx_http_cv_part_t *part)
{
    rx_http_variable_value_t *v;
    rx_str_t                  s = rx_null_string;
    int                       n = (int) part->index;

    if (part->type == RX_HTTP_CV_CAPTURE) {
        if (n < r->ncaptures && r->captures_data && r->captures[2 * n] >= 0
            && r->captures[2 * n + 1] >= r->captures[2 * n]) {
            s.data = (char *) r->captures_data + r->captures[2 * n];
            s.len = (size_t) (r->captures[2 * n + 1] - r->captures[2 * n]);
        }
        return s;
    }
    v = rx_http_get_indexed_variable(r, part->index);
    if (v && !v->not_found) {
        s.data = v->data;
        s.len = v->len;
    }
    return s;
}

/*
 * The length of the line (with its '\n'). Non-cacheable variables are
 * recomputed first, so that this pass and rx_http_log_render() read the
 * same cached values and agree on every byte.
 */
size_t
rx_http_log_line_len(rx_http_request_t *r, const log_fmt_t *fmt)
{
    const rx_http_complex_value_t *cv = &fmt->cv;
    rx_str_t                       s;
    rx_uint_t                      i;
    size_t                         len = 1;

    if (cv->parts == NULL) {
        return cv->value.len + 1;
    }
    for (i = 0; i < cv->nparts; i++) {
        if (cv->parts[i].type == RX_HTTP_CV_VARIABLE) {
            rx_http_get_flushed_variable(r, cv->parts[i].index);
        }
    }
    for (i = 0; i < cv->nparts; i++) {
        if (cv->parts[i].type == RX_HTTP_CV_LITERAL) {
            len += cv->parts[i].text.len;
            continue;
        }
        s = part_value(r, &cv->parts[i]);
        len += s.data ? escaped_len(fmt->escape, s.data, s.len)
                      : fmt->escape == ESC_DEFAULT;
    }
    return len;
}

/* Writes the line measured by rx_http_log_line_len() at d; returns its end. */
char *
rx_http_log_render(rx_http_request_t *r, const log_fmt_t *fmt, char *d)
{
    const rx_http_complex_value_t *cv = &fmt->cv;
    rx_str_t                       s;
    rx_uint_t                      i;

    if (cv->parts == NULL) {
        memcpy(d, cv->value.data, cv->value.len);
        d += cv->value.len;
    }
    for (i = 0; cv->parts && i < cv->nparts; i++) {
        if (cv->parts[i].type == RX_HTTP_CV_LITERAL) {
            memcpy(d, cv->parts[i].text.data, cv->parts[i].text.len);
            d += cv->parts[i].text.len;
            continue;
        }
        s = part_value(r, &cv->parts[i]);
        if (s.data) {
            d = escape_copy(fmt->escape, d, s.data, s.len);
        } else if (fmt->escape == ESC_DEFAULT) {
            *d++ = '-';
        }
    }
    *d++ = '\n';
    return d;
}
