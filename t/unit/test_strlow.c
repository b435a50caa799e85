/*
 * test_strlow.c: rx_strlow_ascii (core/str.c), the lower-case fold of
 * header names (request and upstream response), eight bytes at a time,
 * against tolower() in the C locale: every byte value at every place of
 * strings of 0 to 24 bytes at every alignment, bytes >= 0x80 untouched,
 * in place, and nothing written past n.
 */
#include <ctype.h>
#include <locale.h>
#include "core.h"
#include "tap.h"

/* The byte rx_strlow_ascii must write for b: tolower() in the C locale
 * for ASCII, the byte itself above it. */
static unsigned char
want_byte(unsigned char b)
{
    return b < 0x80 ? (unsigned char) tolower(b) : b;
}

/* 1 when folding len bytes at offset off of a string whose byte at place
 * pos is b (the others cycle through 'A'..'z') writes anything other than
 * tolower's bytes, or writes past them. */
static int
differs(unsigned off, size_t len, size_t pos, unsigned char b, bool in_place)
{
    char   src[48], dst[48], *out;
    size_t i;

    for (i = 0; i < sizeof(src); i++) {
        src[i] = (char) ('A' + (i * 7) % 58);     /* 'A'..'z' and between */
    }
    if (pos < len) {
        src[off + pos] = (char) b;
    }
    memset(dst, '#', sizeof(dst));
    if (in_place) {
        memcpy(dst, src, sizeof(dst));
        dst[off + len] = '#';
    }
    out = dst + off;
    rx_strlow_ascii(out, in_place ? out : src + off, len);
    for (i = 0; i < len; i++) {
        if ((unsigned char) out[i] != want_byte((unsigned char) src[off + i])) {
            diag("off %u len %zu pos %zu byte 0x%02x: at %zu got 0x%02x",
                 off, len, pos, b, i, (unsigned char) out[i]);
            return 1;
        }
    }
    if (out[len] != '#') {
        diag("off %u len %zu: wrote past the end", off, len);
        return 1;
    }
    return 0;
}

int
main(void)
{
    unsigned off, bad = 0, bad_in_place = 0;
    size_t   len, pos;
    unsigned b;

    setlocale(LC_ALL, "C");
    plan(3);
    for (off = 0; off < 8; off++) {
        for (len = 0; len <= 24; len++) {
            for (pos = 0; pos < (len ? len : 1); pos++) {
                for (b = 0; b < 256; b++) {
                    bad += differs(off, len, pos, (unsigned char) b, false);
                    bad_in_place += differs(off, len, pos, (unsigned char) b,
                                            true);
                }
            }
        }
    }
    is_int(bad, 0, "every byte at every place of 0..24 bytes, 8 alignments: "
           "tolower() for ASCII, bytes >= 0x80 kept, nothing past n");
    is_int(bad_in_place, 0, "the same folded in place");
    {
        char s[] = "Content-TYPE: X-Accel-Redirect @[`{\xc3\x84Z";

        rx_strlow_ascii(s, s, sizeof(s) - 1);
        is_str(s, "content-type: x-accel-redirect @[`{\xc3\x84z",
               "'@', '[', '`', '{' (the neighbours of A-Z and a-z) and "
               "UTF-8 stay");
    }
    return done();
}
