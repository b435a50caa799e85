/*
 * fuzz_date.c: rx_http_parse_date (http/http_date.c) on the input.
 *
 * Invariants: the result is -1 or a time at or after the epoch; a parsed
 * time t formatted by rx_http_date (core/clock.h, the Date and
 * Last-Modified header) parses again to t; and since http_date.c accepts
 * the obsolete forms too, t written as asctime ("Sun Nov  6 08:49:37
 * 1994") and, for the years a two-digit RFC 850 year can name
 * (1970-2069), as RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") parses to t
 * as well.
 *
 * Known finding that $RX_FUZZ_KNOWN can step over (t/fuzz/README.md):
 *   year-10000   a leap second on 9999-12-31 gives a time in year 10000
 */
#include "fuzz.h"
#include "clock.h"
#include "http_date.h"

static const char *const wdays[] = {
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"
};
static const char *const months[] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun",
    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

static void
again(const char *form, const char *in, size_t len, time_t t, const char *s)
{
    time_t t2 = rx_http_parse_date(s, strlen(s));

    FUZZ_CHECK(t2 == t, "%s does not round-trip: %s -> %lld -> \"%s\" -> %lld",
               form, fuzz_show(in, len), (long long) t, s, (long long) t2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char      *s = fuzz_dup(data, size), buf[128];
    time_t     t = rx_http_parse_date(s, size);
    struct tm  tm;

    FUZZ_CHECK(t >= -1, "%lld for %s", (long long) t, fuzz_show(s, size));
    if (t == -1) {
        free(s);
        return 0;
    }

    /* 9999-12-31T23:59:60 is 10000-01-01, which no HTTP date can say */
    if (t >= 253402300800 && fuzz_known("year-10000")) {
        free(s);
        return 0;
    }

    /* IMF-fixdate, as ringx writes it */
    FUZZ_CHECK(rx_http_date(buf, t) < 64, "rx_http_date overflowed");
    again("rx_http_date", s, size, t, buf);

    gmtime_r(&t, &tm);
    /* asctime */
    snprintf(buf, sizeof(buf), "%.3s %s %2d %02d:%02d:%02d %d",
             wdays[tm.tm_wday], months[tm.tm_mon], tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
    again("asctime", s, size, t, buf);
    /* RFC 850 */
    if (tm.tm_year + 1900 >= 1970 && tm.tm_year + 1900 <= 2069) {
        snprintf(buf, sizeof(buf), "%s, %02d-%s-%02d %02d:%02d:%02d GMT",
                 wdays[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
                 tm.tm_year % 100, tm.tm_hour, tm.tm_min, tm.tm_sec);
        again("RFC 850", s, size, t, buf);
    }
    free(s);
    return 0;
}
