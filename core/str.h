/*
 * str.h: counted strings (rx_str_t), the number/size/time parsers that
 * the configuration setters and the HTTP code share, the decimal
 * writer of numbers and the ASCII lower-case fold on the request path.
 */
#ifndef RX_STR_H
#define RX_STR_H

/* A counted string; data is not NUL-terminated unless said so. */
typedef struct {
    size_t  len;
    char   *data;
} rx_str_t;

#define rx_string(lit)      { sizeof(lit) - 1, (char *) (lit) }
#define rx_null_string      { 0, NULL }
#define rx_str_set(s, lit)  ((s)->len = sizeof(lit) - 1, (s)->data = (char *) (lit))
#define rx_str_null(s)      ((s)->len = 0, (s)->data = NULL)

bool rx_str_eq(const rx_str_t *s, const char *lit);
bool rx_str_caseeq(const rx_str_t *s, const char *lit);
char *rx_pstrdup(rx_pool_t *pool, const rx_str_t *src);   /* NUL-terminated */
char *rx_pstrdup_c(rx_pool_t *pool, const char *src, size_t len);

/*
 * Parsers: each returns the value, or -1 when the text is not a valid
 * non-negative value or overflows. Sizes take k/K, m/M, g/G suffixes;
 * times take ms, s, m, h, d, w, M, y and may combine ("1h 30m"); a bare
 * number is seconds, as in nginx; rx_parse_time returns milliseconds, or
 * seconds when sec is true (and then refuses "ms").
 */
rx_int_t  rx_atoi(const char *p, size_t n);
ssize_t   rx_parse_size(const rx_str_t *s);
int64_t   rx_parse_offset(const rx_str_t *s);
rx_int_t  rx_parse_time(const rx_str_t *s, bool sec);

/* n in decimal at p, at least min digits (zero-padded); returns the end.
 * At most RX_UINT_LEN bytes, no NUL. By hand: snprintf costs about a
 * thousand instructions a call, and numbers are written on every request
 * (ports, lengths, the status line). */
#define RX_UINT_LEN  20
char     *rx_put_uint(char *p, uint64_t n, unsigned min);

/* n bytes of src to dst in ASCII lower case (as tolower() in the C locale;
 * bytes >= 0x80 are kept), eight at a time: every header name of every
 * request and upstream response is folded; dst may be src. No NUL. */
void      rx_strlow_ascii(char *dst, const char *src, size_t n);

#endif /* RX_STR_H */
