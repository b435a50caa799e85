/*
 * clock.c: the time cache behind clock.h.
 */
#include "core.h"
#include "clock.h"

rx_msec_t rx_current_msec;
time_t    rx_time_sec = -1;
rx_msec_t rx_time_msec;
int64_t   rx_time_usec;
char      rx_log_time[64];
char      rx_http_time[64];
char      rx_log_local_time[64];
char      rx_iso8601_time[64];
char      rx_syslog_time[64];

static const char *week[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
static const char *months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* Two digits of n (0..99). */
static char *
put2(char *p, unsigned n)
{
    p[0] = (char) ('0' + n / 10);
    p[1] = (char) ('0' + n % 10);
    return p + 2;
}

/*
 * IMF-fixdate of t, without gmtime_r (glibc takes its time-zone lock) or
 * printf: every static response's Last-Modified goes through here. Days
 * to a civil date as in H. Hinnant's "days_from_civil" inverse; the
 * years that printf's %4d pads or widens (before 1000, after 9999) go
 * through gmtime_r and printf as before.
 */
size_t
rx_http_date(char *buf, time_t t)
{
    int64_t   days = t / 86400, secs = t % 86400, era, doe, yoe, doy, mp, y;
    unsigned  m, d;
    char     *p = buf;
    struct tm tm;

    if (secs < 0) {
        secs += 86400;
        days--;
    }
    days += 719468;                       /* from 0000-03-01 */
    era = (days >= 0 ? days : days - 146096) / 146097;
    doe = days - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    d = (unsigned) (doy - (153 * mp + 2) / 5 + 1);
    m = (unsigned) (mp < 10 ? mp + 3 : mp - 9);
    y = yoe + era * 400 + (m <= 2);
    if (y < 1000 || y > 9999) {
        gmtime_r(&t, &tm);
        return (size_t) snprintf(buf, 64, "%s, %02d %s %4d %02d:%02d:%02d GMT",
            week[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
            tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    }
    /* 1970-01-01 (day 719468 here) was a Thursday */
    memcpy(p, week[((days - 719468) % 7 + 11) % 7], 3);
    p[3] = ',';
    p[4] = ' ';
    p = put2(p + 5, d);
    *p++ = ' ';
    memcpy(p, months[m - 1], 3);
    p[3] = ' ';
    p = put2(p + 4, (unsigned) (y / 100));
    p = put2(p, (unsigned) (y % 100));
    *p++ = ' ';
    p = put2(p, (unsigned) (secs / 3600));
    *p++ = ':';
    p = put2(p, (unsigned) (secs / 60 % 60));
    *p++ = ':';
    p = put2(p, (unsigned) (secs % 60));
    memcpy(p, " GMT", 5);
    return (size_t) (p + 4 - buf);
}

void
rx_time_update(void)
{
    struct timespec mono, real;
    struct tm       tm;
    long            off;
    char            sign;

    clock_gettime(CLOCK_MONOTONIC, &mono);
    rx_current_msec = (rx_msec_t) mono.tv_sec * 1000 + mono.tv_nsec / 1000000;
    clock_gettime(CLOCK_REALTIME, &real);
    rx_time_msec = (rx_msec_t) real.tv_sec * 1000 + real.tv_nsec / 1000000;
    rx_time_usec = (int64_t) real.tv_sec * 1000000 + real.tv_nsec / 1000;
    if (real.tv_sec == rx_time_sec) {
        return;
    }
    rx_time_sec = real.tv_sec;
    rx_http_date(rx_http_time, real.tv_sec);

    localtime_r(&real.tv_sec, &tm);
    off = tm.tm_gmtoff / 60;
    sign = off < 0 ? '-' : '+';
    off = off < 0 ? -off : off;
    snprintf(rx_log_time, sizeof(rx_log_time), "%4d/%02d/%02d %02d:%02d:%02d",
        (tm.tm_year + 1900) % 10000, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
        tm.tm_min, tm.tm_sec);
    snprintf(rx_log_local_time, sizeof(rx_log_local_time),
        "%02d/%s/%4d:%02d:%02d:%02d %c%02ld%02ld", tm.tm_mday,
        months[tm.tm_mon], (tm.tm_year + 1900) % 10000, tm.tm_hour, tm.tm_min,
        tm.tm_sec, sign, (off / 60) % 100, off % 60);
    snprintf(rx_iso8601_time, sizeof(rx_iso8601_time),
        "%4d-%02d-%02dT%02d:%02d:%02d%c%02ld:%02ld",
        (tm.tm_year + 1900) % 10000, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
        tm.tm_min, tm.tm_sec, sign, (off / 60) % 100, off % 60);
    /* RFC 3164: the day of the month padded with a space */
    snprintf(rx_syslog_time, sizeof(rx_syslog_time), "%s %2d %02d:%02d:%02d",
        months[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}
