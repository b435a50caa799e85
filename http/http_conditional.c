/*
 * http_conditional.c: a response's validators against the request's
 * preconditions (RFC 9110 13): If-Match, If-Unmodified-Since,
 * If-None-Match, If-Modified-Since (and if_modified_since off | exact |
 * before), and the 304 that answers them. static asks before it plans
 * ranges; rx_http_send_response asks for every response that carries a
 * Last-Modified (empty_gif), as nginx's not-modified filter does.
 */
#include "http.h"
#include "http_core.h"
#include "http_date.h"

/* Does tag appear in an If-Match / If-None-Match list? */
static bool
etag_listed(const rx_str_t *list, const rx_str_t *etag, bool weak)
{
    const char *p = list->data, *end = list->data + list->len;

    while (p < end) {
        const char *start;

        while (p < end && (*p == ' ' || *p == ',' || *p == '\t')) p++;
        if (p == end) break;
        if (*p == '*') {
            return true;
        }
        start = p;
        if (end - p > 2 && p[0] == 'W' && p[1] == '/') {
            if (!weak) {
                /* a weak tag never matches in a strong comparison */
                while (p < end && *p != ',') p++;
                continue;
            }
            start = p += 2;
        }
        while (p < end && *p != ',') p++;
        {
            const char *e = p;
            while (e > start && (e[-1] == ' ' || e[-1] == '\t')) e--;
            if ((size_t) (e - start) == etag->len
                && memcmp(start, etag->data, etag->len) == 0) {
                return true;
            }
        }
    }
    return false;
}

rx_uint_t
rx_http_test_preconditions(rx_http_request_t *r, const rx_str_t *etag,
    time_t mtime)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_headers_in_t    *hi = &r->headers_in;
    time_t                   t;

    if (hi->if_match) {
        if (!etag_listed(&hi->if_match->value, etag, false)) {
            return RX_HTTP_PRECONDITION_FAILED;
        }
    } else if (hi->if_unmodified_since) {
        t = rx_http_parse_date(hi->if_unmodified_since->value.data,
                               hi->if_unmodified_since->value.len);
        if (t != -1 && mtime > t) {
            return RX_HTTP_PRECONDITION_FAILED;
        }
    }
    if (hi->if_none_match) {
        if (etag_listed(&hi->if_none_match->value, etag, true)) {
            return (r->method & (RX_HTTP_GET | RX_HTTP_HEAD))
                   ? RX_HTTP_NOT_MODIFIED : RX_HTTP_PRECONDITION_FAILED;
        }
        return 0;
    }
    if (hi->if_modified_since && clcf->if_modified_since != RX_HTTP_IMS_OFF
        && (r->method & (RX_HTTP_GET | RX_HTTP_HEAD))) {
        t = rx_http_parse_date(hi->if_modified_since->value.data,
                               hi->if_modified_since->value.len);
        if (t != -1 && (clcf->if_modified_since == RX_HTTP_IMS_EXACT
                        ? t == mtime : mtime <= t)) {
            return RX_HTTP_NOT_MODIFIED;
        }
    }
    return 0;
}

rx_int_t
rx_http_send_not_modified(rx_http_request_t *r)
{
    r->headers_out.status = RX_HTTP_NOT_MODIFIED;
    r->headers_out.content_type.len = 0;
    r->headers_out.content_length_n = -1;
    if (rx_http_send_header(r) == RX_ERROR) {
        return RX_ERROR;
    }
    return rx_http_output_filter(r, NULL);
}
