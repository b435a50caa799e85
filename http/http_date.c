/*
 * http_date.c: parsing HTTP dates (IMF-fixdate, obsolete RFC 850 and
 * asctime forms, RFC 9110 5.6.7) for conditional requests.
 */
#include "core.h"
#include "http_date.h"

static int
month_of(const char *m)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int i;

    for (i = 0; i < 12; i++) {
        if (strncmp(m, months + i * 3, 3) == 0) {
            return i;
        }
    }
    return -1;
}

static int
days_in_month(int mon, int year)
{
    static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

    return days[mon] + (mon == 1 && leap);
}

time_t
rx_http_parse_date(const char *s, size_t len)
{
    char      buf[64], mon[4] = { 0 };
    struct tm tm;
    int       day, year, h, m, sec, n = 0;
    time_t    t;

    if (len == 0 || len >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    memset(&tm, 0, sizeof(tm));
    /* "Sun, 06 Nov 1994 08:49:37 GMT" */
    if (sscanf(buf, "%*3s, %2d %3s %4d %2d:%2d:%2d GMT%n", &day, mon, &year,
               &h, &m, &sec, &n) == 6 && n == (int) len) {
        goto found;
    }
    /* "Sunday, 06-Nov-94 08:49:37 GMT" */
    n = 0;
    if (sscanf(buf, "%*[A-Za-z], %2d-%3s-%2d %2d:%2d:%2d GMT%n", &day, mon,
               &year, &h, &m, &sec, &n) == 6 && n == (int) len) {
        if (year < 0) {
            return -1;
        }
        year += year < 70 ? 2000 : 1900;
        goto found;
    }
    /* "Sun Nov  6 08:49:37 1994" */
    n = 0;
    if (sscanf(buf, "%*3s %3s %2d %2d:%2d:%2d %4d%n", mon, &day, &h, &m, &sec,
               &year, &n) == 6 && n == (int) len) {
        goto found;
    }
    return -1;

found:
    tm.tm_mon = month_of(mon);
    if (tm.tm_mon < 0 || day < 1 || h < 0 || h > 23 || m < 0 || m > 59
        || sec < 0 || sec > 60 || year < 1970 || year > 9999
        || day > days_in_month(tm.tm_mon, year)) {
        return -1;
    }
    tm.tm_mday = day;
    tm.tm_year = year - 1900;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    t = timegm(&tm);
    /* a leap second on the last day of 9999 would leave the 4-digit years
     * this server writes back */
    return t >= 253402300800LL ? -1 : t;
}
