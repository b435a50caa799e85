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

/* One range spec as written: "first-last", "first-" (open) or "-n"
 * (suffix: n is in last). */
typedef struct {
    int64_t  first;
    int64_t  last;
    bool     suffix;
    bool     open;
} range_spec_t;

/* Reads one spec and the white space around it, up to a ',' or the end;
 * false when it is not one (invalid: 416, as nginx answers). */
static bool
read_spec(const char **pp, const char *end, range_spec_t *s)
{
    const char *p = skip_ws(*pp, end);

    s->first = 0;
    s->last = 0;
    s->suffix = false;
    s->open = false;
    if (p < end && *p == '-') {
        s->suffix = true;
        p++;
        if (!read_num(&p, end, &s->last)) {
            return false;
        }
    } else {
        if (!read_num(&p, end, &s->first)) {
            return false;
        }
        p = skip_ws(p, end);
        if (p == end || *p++ != '-') {
            return false;
        }
        p = skip_ws(p, end);
        if (p == end || *p == ',') {
            s->open = true;
        } else if (!read_num(&p, end, &s->last)) {
            return false;
        }
    }
    p = skip_ws(p, end);
    if (p < end && *p != ',') {
        return false;
    }
    *pp = p;
    return true;
}

/* The bytes a spec selects of a body of size: false when none (it starts
 * past the end, "-0", or a suffix of an empty body, which *empty_suffix
 * notes: that answer is 200, not 416). */
static bool
spec_extent(const range_spec_t *s, int64_t size, rx_http_range_t *r,
    bool *empty_suffix)
{
    if (s->suffix) {
        if (s->last > 0 && size == 0) {
            *empty_suffix = true;   /* "the last n bytes" of nothing: 200 */
            return false;
        }
        if (s->last == 0) {
            return false;
        }
        r->start = size > s->last ? size - s->last : 0;
        r->end = size;
        return true;
    }
    if (s->first >= size || (!s->open && s->last < s->first)) {
        return false;      /* "5-1" selects nothing, as in nginx: 416 alone */
    }
    r->start = s->first;
    r->end = s->open || s->last >= size ? size : s->last + 1;
    return true;
}

/* Appends r; false when that makes more than max ranges, or more bytes
 * than size together: then the header is ignored. */
static bool
add_range(rx_http_range_t *ranges, rx_uint_t max, rx_uint_t *n,
    int64_t *total, int64_t size, const rx_http_range_t *r)
{
    if (*n == max) {
        return false;                   /* more than max_ranges */
    }
    ranges[*n].start = r->start;
    ranges[*n].end = r->end;
    (*n)++;
    /* more bytes than the whole (overlaps): the whole is cheaper,
     * and 64 times "0-" must not make a 64-fold response (nginx) */
    if (*total > size - (r->end - r->start)) {
        return false;
    }
    *total += r->end - r->start;
    return true;
}

rx_int_t
rx_http_parse_range(const rx_str_t *header, int64_t size,
    rx_http_range_t *ranges, rx_uint_t max, rx_uint_t *n)
{
    const char      *p = header->data, *end = header->data + header->len;
    bool             any_satisfiable = false, empty_suffix = false;
    int64_t          total = 0;
    range_spec_t     spec;
    rx_http_range_t  r;

    *n = 0;
    if (max == 0 || header->len < 6 || strncasecmp(p, "bytes=", 6) != 0) {
        return RX_HTTP_RANGE_IGNORE;
    }
    p += 6;
    if (skip_ws(p, end) == end) {
        return RX_HTTP_RANGE_IGNORE;               /* "bytes=": nothing asked */
    }
    for ( ;; ) {
        if (!read_spec(&p, end, &spec)) {
            /* RFC 9110 14.2 lets a server ignore or reject an invalid
             * ranges-specifier; nginx rejects it (416), and so do we */
            return RX_HTTP_RANGE_UNSATISFIABLE;
        }
        if (spec_extent(&spec, size, &r, &empty_suffix)) {
            any_satisfiable = true;
            if (!add_range(ranges, max, n, &total, size, &r)) {
                return RX_HTTP_RANGE_IGNORE;
            }
        }
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
