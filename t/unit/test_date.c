/*
 * test_date.c: HTTP date parsing (http/http_date.c) and formatting
 * (rx_http_date, core/clock.c). RFC 9110 5.6.7: IMF-fixdate, and the
 * obsolete RFC 850 and asctime forms a recipient must accept; anything
 * else is not a date (-1). Field ranges are checked as nginx's
 * ngx_parse_http_time does (no Feb 30, no hour 24, no negative fields).
 */
#include "core.h"
#include "clock.h"
#include "http_date.h"
#include "tap.h"

typedef struct {
    const char  *text;
    time_t       want;      /* -1: not a date */
} date_case_t;

static const date_case_t cases[] = {

    /* the examples of RFC 9110 5.6.7 */
    { "Sun, 06 Nov 1994 08:49:37 GMT", 784111777 },
    { "Sunday, 06-Nov-94 08:49:37 GMT", 784111777 },
    { "Sun Nov  6 08:49:37 1994", 784111777 },

    /* IMF-fixdate */
    { "Thu, 01 Jan 1970 00:00:00 GMT", 0 },
    { "Fri, 31 Dec 1999 23:59:59 GMT", 946684799 },
    { "Tue, 29 Feb 2000 12:00:00 GMT", 951825600 },     /* leap year */
    { "Mon, 29 Feb 2016 00:00:00 GMT", 1456704000 },
    { "Mon, 01 Jan 2024 00:00:00 GMT", 1704067200 },
    { "Tue, 19 Jan 2038 03:14:08 GMT", 2147483648LL },  /* past 32 bits */
    { "Fri, 01 Jan 2100 00:00:00 GMT", 4102444800LL },
    { "Fri, 31 Dec 9999 23:59:59 GMT", 253402300799LL },

    /* RFC 850: two-digit years, 70-99 in the 1900s, 00-69 in the 2000s */
    { "Thursday, 01-Jan-70 00:00:00 GMT", 0 },
    { "Friday, 31-Dec-99 23:59:59 GMT", 946684799 },
    { "Monday, 01-Jan-24 00:00:00 GMT", 1704067200 },
    { "Tuesday, 01-Jan-69 00:00:00 GMT", 3124224000LL },

    /* asctime: the day is space-padded */
    { "Wed Nov 16 08:49:37 1994", 784975777 },
    { "Thu Jan  1 00:00:00 1970", 0 },
    { "Tue Feb 29 12:00:00 2000", 951825600 },

    /* not dates */
    { "", -1 },
    { "Sun, 06 Nox 1994 08:49:37 GMT", -1 },             /* month */
    { "Sun, 06 nov 1994 08:49:37 GMT", -1 },             /* month is case-sensitive */
    { "Sun, 06 NOV 1994 08:49:37 GMT", -1 },
    { "Sun, 06 November 1994 08:49:37 GMT", -1 },
    { "Sunday, 06-Nox-94 08:49:37 GMT", -1 },
    { "Sun Nox  6 08:49:37 1994", -1 },
    { "Sun, 06 Nov 1994 08:49:37 GMT ", -1 },            /* trailing garbage */
    { "Sun, 06 Nov 1994 08:49:37 GMTx", -1 },
    { "Sun, 06 Nov 1994 08:49:37 GMT, x", -1 },
    { "Sunday, 06-Nov-94 08:49:37 GMT+1", -1 },
    { "Sun Nov  6 08:49:37 1994 GMT", -1 },
    { "Sun Nov  6 08:49:37 19945", -1 },
    { "Sun, 06 Nov 1994 08:49:37", -1 },                 /* no GMT */
    { "Sun, 06 Nov 1994 08:49:37 UTC", -1 },
    { "Sun, 06 Nov 1994 08:49:37 +0000", -1 },
    { "Sun, 06 Nov 1994 08:49:37 gmt", -1 },
    { "Sunday, 06-Nov-94 08:49:37", -1 },
    { "Sun, 06 Nov 1994 08:49 GMT", -1 },                /* no seconds */
    { "Sun, 06 Nov 1994 GMT", -1 },
    { "Sun, 06 Nov 94 08:49:37 GMT", -1 },               /* two-digit year */
    { "Sun 06 Nov 1994 08:49:37 GMT", -1 },              /* no comma */
    { "06 Nov 1994 08:49:37 GMT", -1 },
    { "Sun, 06 Nov 1994", -1 },
    { "1994-11-06T08:49:37Z", -1 },
    { "784111777", -1 },
    { "Sun, 32 Nov 1994 08:49:37 GMT", -1 },             /* field ranges */
    { "Sun, 00 Nov 1994 08:49:37 GMT", -1 },
    { "Sun, 06 Nov 1994 24:00:00 GMT", -1 },
    { "Sun, 06 Nov 1994 08:60:37 GMT", -1 },
    { "Sun, 06 Nov 1994 08:49:61 GMT", -1 },
    { "Sun, 06 Nov 1994 99:99:99 GMT", -1 },
    { "Wed, 31 Feb 1994 08:49:37 GMT", -1 },             /* no such day */
    { "Wed, 30 Feb 2000 08:49:37 GMT", -1 },
    { "Tue, 29 Feb 1994 08:49:37 GMT", -1 },             /* not a leap year */
    { "Thu, 29 Feb 1900 08:49:37 GMT", -1 },
    { "Sun, 31 Apr 1994 08:49:37 GMT", -1 },
    { "Sun, 31 Nov 1994 08:49:37 GMT", -1 },
    { "Sunday, 31-Jun-94 08:49:37 GMT", -1 },
    { "Sun Sep 31 08:49:37 1994", -1 },
    { "Sun, 06 Nov 1994 -1:49:37 GMT", -1 },             /* signs */
    { "Sun, 06 Nov 1994 08:-1:37 GMT", -1 },
    { "Sun, 06 Nov 1994 08:49:-1 GMT", -1 },
    { "Sun, -6 Nov 1994 08:49:37 GMT", -1 },
    { "Sunday, 06-Nov--4 08:49:37 GMT", -1 },
};

static void
test_table(void)
{
    rx_uint_t i;

    for (i = 0; i < rx_nelems(cases); i++) {
        const date_case_t *c = &cases[i];
        size_t             len = strlen(c->text);
        /* an exact-size copy without a NUL: a read past len shows in ASan */
        char              *copy = malloc(len ? len : 1);
        time_t             got;

        memcpy(copy, c->text, len);
        got = rx_http_parse_date(copy, len);
        if (c->want == -1) {
            is_int(got, -1, "'%s' is not a date", c->text);
        } else {
            is_int(got, c->want, "'%s' -> %lld", c->text, (long long) c->want);
        }
        free(copy);
    }
}

static void
test_limits(void)
{
    char   buf[200];
    size_t n;

    /* only len counts, not a NUL */
    strcpy(buf, "Sun, 06 Nov 1994 08:49:37 GMTjunk");
    is_int(rx_http_parse_date(buf, 29), 784111777, "len excludes what follows");
    is_int(rx_http_parse_date(buf, 30), -1, "len including junk: not a date");
    is_int(rx_http_parse_date(buf, 28), -1, "a cut date is not a date");
    memcpy(buf, "Sun, 06 Nov 1994 08:49:37 GMT\0xx", 32);
    is_int(rx_http_parse_date(buf, 32), -1, "an embedded NUL: not a date");
    is_int(rx_http_parse_date(buf, 0), -1, "len 0: not a date");

    /* too long for any form */
    n = (size_t) snprintf(buf, sizeof(buf), "Sun, 06 Nov 1994 08:49:37 GMT%*s",
                          100, "");
    is_int(rx_http_parse_date(buf, n), -1, "%zu bytes: not a date", n);
    memset(buf, 'x', sizeof(buf));
    is_int(rx_http_parse_date(buf, sizeof(buf)), -1, "200 bytes of x: not a date");
    n = (size_t) snprintf(buf, sizeof(buf), "Sunday,   06-Nov-94   08:49:37   GMT");
    ok(rx_http_parse_date(buf, n) == -1 || rx_http_parse_date(buf, n) == 784111777,
       "extra spaces: either refused or read right");
}

/* rx_http_date writes IMF-fixdate; parsing it gives back the time. */
static void
test_round_trip(void)
{
    static const time_t fixed[] = {
        0, 1, 59, 60, 3599, 86399, 86400, 784111777, 951782400, 951868799,
        951868800, 1456704000, 2147483647LL, 2147483648LL, 4102444800LL,
        4107542400LL, 253402300799LL
    };
    char       buf[64], alt[64];
    size_t     n;
    rx_uint_t  i, bad = 0, bad850 = 0, badasc = 0, tries = 0;
    time_t     t;
    struct tm  tm;
    uint64_t   seed = 88172645463325252ULL;

    n = rx_http_date(buf, 784111777);
    is_str(buf, "Sun, 06 Nov 1994 08:49:37 GMT", "rx_http_date(784111777)");
    is_int(n, 29, "rx_http_date returns the length");
    rx_http_date(buf, 0);
    is_str(buf, "Thu, 01 Jan 1970 00:00:00 GMT", "rx_http_date(0)");
    rx_http_date(buf, 253402300799LL);
    is_str(buf, "Fri, 31 Dec 9999 23:59:59 GMT", "rx_http_date(year 9999)");
    rx_http_date(buf, 951825600);
    is_str(buf, "Tue, 29 Feb 2000 12:00:00 GMT", "rx_http_date(leap day)");

    for (i = 0; i < rx_nelems(fixed); i++) {
        n = rx_http_date(buf, fixed[i]);
        is_int(rx_http_parse_date(buf, n), fixed[i], "round trip of %lld (%s)",
               (long long) fixed[i], buf);
    }

    /* random times up to 9999; the RFC 850 and asctime forms of those
     * that fit a two-digit year */
    for (i = 0; i < 20000; i++) {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        t = (time_t) (seed % 253402300800ULL);
        if (i % 2) {
            t %= 3155760000LL;          /* 1970..2069 */
        }
        n = rx_http_date(buf, t);
        if (rx_http_parse_date(buf, n) != t) {
            if (bad++ < 3) diag("IMF-fixdate %s does not give %lld", buf,
                                (long long) t);
        }
        gmtime_r(&t, &tm);
        if (tm.tm_year + 1900 < 2070) {
            tries++;
            n = strftime(alt, sizeof(alt), "%A, %d-%b-%y %H:%M:%S GMT", &tm);
            if (rx_http_parse_date(alt, n) != t) {
                if (bad850++ < 3) diag("RFC 850 %s does not give %lld", alt,
                                       (long long) t);
            }
        }
        n = strftime(alt, sizeof(alt), "%a %b %e %H:%M:%S %Y", &tm);
        if (rx_http_parse_date(alt, n) != t) {
            if (badasc++ < 3) diag("asctime %s does not give %lld", alt,
                                   (long long) t);
        }
    }
    ok(bad == 0, "20000 random times: IMF-fixdate round trip");
    ok(bad850 == 0 && tries > 10000, "%lu of them (1970-2069) in RFC 850 form",
       (unsigned long) tries);
    ok(badasc == 0, "20000 random times in asctime form");
}

/* rx_http_date's own arithmetic writes what gmtime_r and strftime would,
 * at the edges of days, months, leap years and centuries, and before
 * 1970 and past 9999 (where it gives way to gmtime_r). */
static void
test_format(void)
{
    static const time_t edges[] = {
        -62167219200LL, -62167219201LL, -2208988800LL, -86401, -86400, -1,
        0, 86399, 86400, 951782399, 951782400, 951868800, 4107542399LL,
        4107542400LL, 253402300799LL, 253402300800LL
    };
    char       got[64], want[64];
    size_t     n;
    rx_uint_t  i, bad = 0;
    time_t     t;
    struct tm  tm;
    uint64_t   seed = 2463534242ULL;

    for (i = 0; i < rx_nelems(edges) + 100000; i++) {
        if (i < rx_nelems(edges)) {
            t = edges[i];
        } else {
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
            t = (time_t) (seed % 263402300800ULL) - 10000000000LL;
        }
        n = rx_http_date(got, t);
        gmtime_r(&t, &tm);
        strftime(want, sizeof(want), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        if (tm.tm_year + 1900 >= 1000 && tm.tm_year + 1900 <= 9999
            && (n != strlen(want) || strcmp(got, want) != 0) && bad++ < 5) {
            diag("%lld: got \"%s\", want \"%s\"", (long long) t, got, want);
        }
    }
    ok(bad == 0, "100000 random times and the edges: as strftime writes them");
}

/* The cached Date string is today's date in IMF-fixdate. */
static void
test_cache(void)
{
    time_t now, got;

    rx_time_update();
    now = time(NULL);
    got = rx_http_parse_date(rx_http_time, strlen(rx_http_time));
    ok(got != -1 && got <= now && now - got <= 2, "rx_http_time is now: %s",
       rx_http_time);
    ok(rx_time_sec == got, "rx_time_sec matches rx_http_time");
}

int
main(void)
{
    setenv("TZ", "Asia/Kathmandu", 1);    /* +05:45: no help from local time */
    tzset();
    test_table();
    test_limits();
    test_round_trip();
    test_format();
    test_cache();
    return done();
}
