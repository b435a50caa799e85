/*
 * fuzz_range.c: rx_http_parse_range (http/http_range.c).
 *
 * Input: 8 bytes of representation size (little-endian, the sign bit
 * cleared: a size is never negative), 1 byte of max_ranges (0-31), then
 * the Range header value. The ranges array has exactly max elements on the
 * heap, so writing one more shows under ASan.
 *
 * Invariants (http_range.h): the result is OK, IGNORE or UNSATISFIABLE;
 * max 0 or a value not starting with "bytes=" (any case) is IGNORE; on OK
 * 1 <= n <= max and every range has 0 <= start < end <= size.
 */
#include "fuzz.h"
#include "http_range.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rx_http_range_t *ranges;
    rx_str_t         h;
    int64_t          len;
    uint64_t         u = 0;
    rx_uint_t        max, n = 12345, i;
    rx_int_t         rc;

    if (size < 9) {
        return 0;
    }
    for (i = 0; i < 8; i++) {
        u |= (uint64_t) data[i] << (8 * i);
    }
    len = (int64_t) (u & (uint64_t) INT64_MAX);
    max = data[8] % 32;
    h.len = size - 9;
    h.data = fuzz_dup(data + 9, h.len);
    ranges = malloc(max ? max * sizeof(rx_http_range_t) : 1);

    rc = rx_http_parse_range(&h, len, ranges, max, &n);

    FUZZ_CHECK(rc == RX_HTTP_RANGE_OK || rc == RX_HTTP_RANGE_IGNORE
               || rc == RX_HTTP_RANGE_UNSATISFIABLE, "rc %ld", (long) rc);
    if (max == 0 || h.len < 6 || strncasecmp(h.data, "bytes=", 6) != 0) {
        FUZZ_CHECK(rc == RX_HTTP_RANGE_IGNORE, "rc %ld for %s (max %lu)",
                   (long) rc, fuzz_show(h.data, h.len), (unsigned long) max);
    }
    if (rc == RX_HTTP_RANGE_OK) {
        FUZZ_CHECK(n >= 1 && n <= max, "n %lu, max %lu for %s",
                   (unsigned long) n, (unsigned long) max,
                   fuzz_show(h.data, h.len));
        for (i = 0; i < n; i++) {
            FUZZ_CHECK(ranges[i].start >= 0 && ranges[i].start < ranges[i].end
                       && ranges[i].end <= len,
                       "range %lu is [%" PRId64 ", %" PRId64 ") of size %"
                       PRId64 " for %s", (unsigned long) i, ranges[i].start,
                       ranges[i].end, len, fuzz_show(h.data, h.len));
        }
    }
    free(ranges);
    free(h.data);
    return 0;
}
