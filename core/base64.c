/*
 * base64.c: base64 decoding (RFC 4648, standard and URL-safe alphabets)
 * and encoding (standard alphabet).
 */
#include "core.h"
#include "base64.h"

/* 0..63 for the alphabet, 64 for anything else */
static unsigned char
b64_value(unsigned char c, bool url)
{
    if (c >= 'A' && c <= 'Z') {
        return (unsigned char) (c - 'A');
    }
    if (c >= 'a' && c <= 'z') {
        return (unsigned char) (c - 'a' + 26);
    }
    if (c >= '0' && c <= '9') {
        return (unsigned char) (c - '0' + 52);
    }
    if (c == (url ? '-' : '+')) {
        return 62;
    }
    if (c == (url ? '_' : '/')) {
        return 63;
    }
    return 64;
}

static rx_int_t
decode(rx_str_t *dst, const unsigned char *s, size_t len, bool url)
{
    unsigned char *d = (unsigned char *) dst->data;
    size_t         i;
    uint32_t       acc = 0;
    unsigned       bits = 0;

    if (len % 4 == 1) {
        return RX_ERROR;
    }
    for (i = 0; i < len; i++) {
        unsigned char v = b64_value(s[i], url);

        if (v == 64) {
            return RX_ERROR;
        }
        acc = (acc << 6) | v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *d++ = (unsigned char) (acc >> bits);
        }
    }
    dst->len = (size_t) (d - (unsigned char *) dst->data);
    return RX_OK;
}

rx_int_t
rx_decode_base64(rx_str_t *dst, const rx_str_t *src)
{
    const unsigned char *s = (const unsigned char *) src->data;
    size_t               len = src->len;

    /* at most two '=', only at the end, and then whole quanta */
    while (len && s[len - 1] == '=' && src->len - len < 2) {
        len--;
    }
    if (len != src->len && src->len % 4 != 0) {
        return RX_ERROR;
    }
    return decode(dst, s, len, false);
}

rx_int_t
rx_decode_base64url(rx_str_t *dst, const rx_str_t *src)
{
    const char *eq = memchr(src->data, '=', src->len);

    /* as nginx: the text ends at the first '=' */
    return decode(dst, (const unsigned char *) src->data,
                  eq ? (size_t) (eq - src->data) : src->len, true);
}

void
rx_encode_base64(rx_str_t *dst, const rx_str_t *src)
{
    static const char    alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "abcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = (const unsigned char *) src->data;
    char                *d = dst->data;
    size_t               n = src->len;
    uint32_t             q;

    for (; n >= 3; n -= 3, s += 3) {
        q = (uint32_t) s[0] << 16 | (uint32_t) s[1] << 8 | s[2];
        *d++ = alphabet[q >> 18];
        *d++ = alphabet[(q >> 12) & 0x3f];
        *d++ = alphabet[(q >> 6) & 0x3f];
        *d++ = alphabet[q & 0x3f];
    }
    if (n) {
        q = (uint32_t) s[0] << 16 | (n == 2 ? (uint32_t) s[1] << 8 : 0);
        *d++ = alphabet[q >> 18];
        *d++ = alphabet[(q >> 12) & 0x3f];
        *d++ = n == 2 ? alphabet[(q >> 6) & 0x3f] : '=';
        *d++ = '=';
    }
    dst->len = (size_t) (d - dst->data);
}
