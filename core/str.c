/*
 * str.c: counted-string helpers, the number, size and time parsers used
 * by configuration setters, the decimal writer (rx_put_uint) and the
 * ASCII lower-case fold (rx_strlow_ascii).
 */
#include "core.h"

/* Each byte of x with 0x20 added where it is 'A'..'Z' (SWAR: per byte,
 * b + (0x80 - 'A') has its top bit set when b >= 'A', b + (0x80 - 'Z' - 1)
 * when b > 'Z'; the low seven bits of each byte never carry into the
 * next, and bytes >= 0x80 are left out by ~x). */
static inline uint64_t
lower8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t       low7 = x & ~high;
    uint64_t       ge_a = low7 + ones * (0x80 - 'A');
    uint64_t       gt_z = low7 + ones * (0x80 - 'Z' - 1);

    return x | ((ge_a & ~gt_z & ~x & high) >> 2);
}

void
rx_strlow_ascii(char *dst, const char *src, size_t n)
{
    uint64_t x;
    size_t   i = 0;

    for (; i + 8 <= n; i += 8) {
        memcpy(&x, src + i, 8);            /* unaligned, one load */
        x = lower8(x);
        memcpy(dst + i, &x, 8);
    }
    for (; i < n; i++) {           /* the last 0..7: no memcpy of a variable length */
        unsigned char c = (unsigned char) src[i];

        dst[i] = (char) ((unsigned) (c - 'A') < 26 ? c | 0x20 : c);
    }
}

char *
rx_put_uint(char *p, uint64_t n, unsigned min)
{
    char     tmp[RX_UINT_LEN], *t = tmp + sizeof(tmp);
    uint32_t small = (uint32_t) n;
    size_t   len, i;

    if (n == small) {               /* 32-bit division is the cheaper */
        do {
            *--t = (char) ('0' + small % 10);
            small /= 10;
        } while (small);
    } else {
        do {
            *--t = (char) ('0' + n % 10);
            n /= 10;
        } while (n);
    }
    while (t > tmp && (size_t) (tmp + sizeof(tmp) - t) < min) {
        *--t = '0';
    }
    len = (size_t) (tmp + sizeof(tmp) - t);
    for (i = 0; i < len; i++) {     /* a few bytes: no call to memcpy */
        p[i] = t[i];
    }
    return p + len;
}

bool
rx_str_eq(const rx_str_t *s, const char *lit)
{
    size_t n = strlen(lit);
    return s->len == n && memcmp(s->data, lit, n) == 0;
}

bool
rx_str_caseeq(const rx_str_t *s, const char *lit)
{
    size_t n = strlen(lit);
    return s->len == n && strncasecmp(s->data, lit, n) == 0;
}

char *
rx_pstrdup_c(rx_pool_t *pool, const char *src, size_t len)
{
    char *dst = rx_pnalloc(pool, len + 1);
    if (dst == NULL) {
        return NULL;
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
    return dst;
}

char *
rx_pstrdup(rx_pool_t *pool, const rx_str_t *src)
{
    return rx_pstrdup_c(pool, src->data, src->len);
}

rx_int_t
rx_atoi(const char *p, size_t n)
{
    rx_int_t value = 0;

    if (n == 0) {
        return -1;
    }
    for (; n--; p++) {
        if (*p < '0' || *p > '9') {
            return -1;
        }
        if (value > (INTPTR_MAX - (*p - '0')) / 10) {
            return -1;
        }
        value = value * 10 + (*p - '0');
    }
    return value;
}

/* A number with an optional one-letter multiplier suffix. */
static int64_t
parse_scaled(const rx_str_t *s, bool allow_g)
{
    size_t   len = s->len;
    int64_t  scale = 1, value;

    if (len == 0) {
        return -1;
    }
    switch (s->data[len - 1]) {
    case 'K': case 'k': scale = 1024; len--; break;
    case 'M': case 'm': scale = 1024 * 1024; len--; break;
    case 'G': case 'g':
        if (!allow_g) {
            return -1;
        }
        scale = 1024 * 1024 * 1024; len--; break;
    }
    value = rx_atoi(s->data, len);
    if (value == -1 || value > INT64_MAX / scale) {
        return -1;
    }
    return value * scale;
}

ssize_t
rx_parse_size(const rx_str_t *s)
{
    int64_t v = parse_scaled(s, true);
    return (v < 0 || v > SSIZE_MAX) ? -1 : (ssize_t) v;
}

int64_t
rx_parse_offset(const rx_str_t *s)
{
    return parse_scaled(s, true);
}

/*
 * nginx's time syntax: units y M w d h m s ms, largest first, optionally
 * separated by spaces ("1h 30m", "1h30m"); a bare number means seconds.
 * Returns milliseconds, or seconds when `sec` (then "ms" is refused).
 */
rx_int_t
rx_parse_time(const rx_str_t *s, bool sec)
{
    static const struct { char unit; int64_t ms; } units[] = {
        { 'y', 365LL * 24 * 3600 * 1000 }, { 'M', 30LL * 24 * 3600 * 1000 },
        { 'w', 7LL * 24 * 3600 * 1000 },   { 'd', 24LL * 3600 * 1000 },
        { 'h', 3600LL * 1000 },            { 'm', 60LL * 1000 },
        { 's', 1000 },                     { 'L', 1 } /* "ms" */
    };
    const char *p = s->data, *last = s->data + s->len;
    int64_t     total = 0, value;
    size_t      next_unit = 0, i;
    bool        valid = false;

    while (p < last) {
        if (*p == ' ') {
            p++;
            continue;
        }
        if (*p < '0' || *p > '9') {
            return -1;
        }
        value = 0;
        while (p < last && *p >= '0' && *p <= '9') {
            if (value > (INT64_MAX / 10) - 9) {
                return -1;
            }
            value = value * 10 + (*p++ - '0');
        }
        if (p == last || *p == ' ') {
            /* bare number: the default unit, and it must be last */
            while (p < last && *p == ' ') p++;
            if (p != last) {
                return -1;
            }
            i = 6;              /* a bare number is seconds, as in nginx */
        } else {
            char unit = *p++;
            if (unit == 'm' && p < last && *p == 's') {
                if (sec) {
                    return -1;      /* milliseconds where seconds are kept */
                }
                unit = 'L';
                p++;
            }
            for (i = 0; i < rx_nelems(units); i++) {
                if (units[i].unit == unit) break;
            }
            if (i == rx_nelems(units)) {
                return -1;
            }
        }
        if (i < next_unit) {
            return -1;              /* units out of order or repeated */
        }
        next_unit = i + 1;
        if (value > INT64_MAX / units[i].ms || total > INT64_MAX - value * units[i].ms) {
            return -1;
        }
        total += value * units[i].ms;
        valid = true;
    }
    if (!valid) {
        return -1;
    }
    if (sec) {
        total /= 1000;
    }
    return total > INTPTR_MAX ? -1 : (rx_int_t) total;
}
