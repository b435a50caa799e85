/*
 * http_range.h: parsing a Range header against a representation's size
 * (RFC 9110 14): byte ranges, suffix ranges, open ranges, and what to
 * answer when none is satisfiable.
 */
#ifndef RX_HTTP_RANGE_H
#define RX_HTTP_RANGE_H

typedef struct {
    int64_t  start;    /* first byte */
    int64_t  end;      /* one past the last byte */
} rx_http_range_t;

#define RX_HTTP_RANGE_OK             0   /* ranges filled */
#define RX_HTTP_RANGE_IGNORE         1   /* not a bytes range we serve: send 200 */
#define RX_HTTP_RANGE_UNSATISFIABLE  2   /* 416 */

/*
 * Parses "bytes=a-b, c-, -n" into at most max ranges (max_ranges 0 means
 * ranges are disabled: IGNORE). Overlapping ranges are kept as given, as
 * nginx does, as long as together they are no longer than size; ranges
 * adding up to more than size (only possible with overlaps), or more
 * ranges than max → IGNORE (the whole body is sent, as nginx does).
 * A malformed specifier ("bytes=x", "bytes=5-3", a trailing comma, a
 * number that overflows) → UNSATISFIABLE, as nginx; "bytes=" → IGNORE.
 */
rx_int_t rx_http_parse_range(const rx_str_t *header, int64_t size,
    rx_http_range_t *ranges, rx_uint_t max, rx_uint_t *n);

#endif /* RX_HTTP_RANGE_H */
