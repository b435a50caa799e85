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

/* Two digits of n at p. */
static char *
two(char *p, int n)
{
    *p++ = (char) ('0' + n / 10);
    *p++ = (char) ('0' + n % 10);
    return p;
}

/* Without printf: every response with a Last-Modified formats one (it
 * was ~1 % of a worker's CPU serving small files). */
size_t
rx_http_date(char *buf, time_t t)
{
    struct tm  tm;
    char      *p = buf;
    int        y;

    gmtime_r(&t, &tm);
    y = tm.tm_year + 1900;
    if (y < 1000 || y > 9999) {
        return (size_t) snprintf(buf, 64, "%s, %02d %s %4d %02d:%02d:%02d GMT",
            week[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], y,
            tm.tm_hour, tm.tm_min, tm.tm_sec);
    }
    memcpy(p, week[tm.tm_wday], 3);
    p[3] = ',';
    p[4] = ' ';
    p = two(p + 5, tm.tm_mday);
    *p++ = ' ';
    memcpy(p, months[tm.tm_mon], 3);
    p[3] = ' ';
    p = two(two(p + 4, y / 100), y % 100);
    *p++ = ' ';
    p = two(p, tm.tm_hour);
    *p++ = ':';
    p = two(p, tm.tm_min);
    *p++ = ':';
    p = two(p, tm.tm_sec);
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
