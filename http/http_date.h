/*
 * http_date.h: HTTP date parsing.
 */
#ifndef RX_HTTP_DATE_H
#define RX_HTTP_DATE_H

/* Seconds since the epoch, or -1 when s is not an HTTP date. */
time_t rx_http_parse_date(const char *s, size_t len);

#endif /* RX_HTTP_DATE_H */
