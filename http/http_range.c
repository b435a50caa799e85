/*
 * http_range.c: the Range header parser behind http_range.h.
 */
#include "core.h"
#include "http_range.h"

static const char *
skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* Reads digits; false when there are none or the number overflows. */
static bool
read_num(const char **pp, const char *end, int64_t *out)
{
    const char *p = *pp;
    int64_t     v = 0;

    if (p == end || *p < '0' || *p > '9') {
        return false;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        if (v > (INT64_MAX - 9) / 10) {
            return false;
        }
        v = v * 10 + (*p++ - '0');
    }
    *pp = p;
    *out = v;
    return true;
}

rx_int_t
rx_http_parse_range(const rx_str_t *header, int64_t size,
    rx_http_range_t *ranges, rx_uint_t max, rx_uint_t *n)
{
    const char *p = header->data, *end = header->data + header->len;
    bool        any_satisfiable = false, empty_suffix = false;
    int64_t     start, last, total = 0;

    *n = 0;
    if (max == 0 || header->len < 6 || strncasecmp(p, "bytes=", 6) != 0) {
        return RX_HTTP_RANGE_IGNORE;
    }
    p += 6;
    for ( ;; ) {
        bool suffix = false, open = false;

        p = skip_ws(p, end);
        start = 0;
        last = 0;
        if (p < end && *p == '-') {
            suffix = true;
            p++;
            if (!read_num(&p, end, &last)) {
                return RX_HTTP_RANGE_IGNORE;
            }
        } else {
            if (!read_num(&p, end, &start)) {
                return RX_HTTP_RANGE_IGNORE;
            }
            p = skip_ws(p, end);
            if (p == end || *p++ != '-') {
                return RX_HTTP_RANGE_IGNORE;
            }
            p = skip_ws(p, end);
            if (p == end || *p == ',') {
                open = true;
            } else if (!read_num(&p, end, &last)) {
                return RX_HTTP_RANGE_IGNORE;
            } else if (last < start) {
                return RX_HTTP_RANGE_IGNORE;     /* invalid: the header is ignored */
            }
        }
        p = skip_ws(p, end);
        if (p < end && *p != ',') {
            return RX_HTTP_RANGE_IGNORE;
        }

        if (suffix) {
            if (last > 0 && size == 0) {
                empty_suffix = true;   /* "the last n bytes" of nothing: 200 */
            } else if (last > 0) {
                start = size > last ? size - last : 0;
                last = size;
                if (size > 0) any_satisfiable = true;
                goto add;
            }
        } else if (start < size) {
            last = open || last >= size ? size : last + 1;
            any_satisfiable = true;
            goto add;
        }
        goto next;

    add:
        if (*n == max) {
            return RX_HTTP_RANGE_IGNORE;          /* more than max_ranges */
        }
        ranges[*n].start = start;
        ranges[*n].end = last;
        (*n)++;
        /* more bytes than the whole (overlaps): the whole is cheaper,
         * and 64 times "0-" must not make a 64-fold response (nginx) */
        if (total > size - (last - start)) {
            return RX_HTTP_RANGE_IGNORE;
        }
        total += last - start;

    next:
        if (p == end) {
            break;
        }
        p++;                                       /* the comma */
    }
    if (any_satisfiable) {
        return RX_HTTP_RANGE_OK;
    }
    return empty_suffix ? RX_HTTP_RANGE_IGNORE : RX_HTTP_RANGE_UNSATISFIABLE;
}
