/*
 * clock.h: cached time. Reading the clock costs a little; a worker does it
 * once per loop turn and every user reads the cache: monotonic milliseconds
 * for timers, wall-clock strings for logs and the Date header.
 */
#ifndef RX_CLOCK_H
#define RX_CLOCK_H

extern rx_msec_t rx_current_msec;      /* monotonic, for deadlines */
extern time_t    rx_time_sec;          /* wall clock, seconds */
extern rx_msec_t rx_time_msec;         /* wall clock, milliseconds */
extern int64_t   rx_time_usec;         /* wall clock, microseconds */
extern char      rx_log_time[64];
extern char      rx_http_time[64];
extern char      rx_log_local_time[64];
extern char      rx_iso8601_time[64];
extern char      rx_syslog_time[64];    /* "Jan  2 15:04:05", local */

/* Refreshes the cache; the strings are rebuilt only when the second changed. */
void rx_time_update(void);
/* Formats t as an HTTP date into buf (64 bytes of room). */
size_t rx_http_date(char *buf, time_t t);

#endif /* RX_CLOCK_H */
