/*
 * test_proxy_protocol.c: the PROXY protocol parser (core/proxy_protocol.c):
 * v1 lines and v2 headers, each cut at every length (RX_AGAIN until the
 * whole header is there, never a read past what was given: each piece is
 * copied to a buffer of exactly its size, so ASan sees an overrun), bytes
 * after the header left alone, the refusals (malformed, wrong version,
 * too large, short address block), and the TLV lookup by nginx's names.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include "core.h"
#include "proxy_protocol.h"
#include "tap.h"

static rx_int_t
parse_exact(const char *data, size_t len, rx_proxy_protocol_t *pp,
    rx_pp_result_t *res)
{
    static rx_sockaddr_t  addrs[2];
    char                 *copy = malloc(len ? len : 1);
    rx_int_t              rc;

    memcpy(copy, data, len);
    rc = rx_proxy_protocol_parse(copy, len, pp, addrs, res);
    if (rc == RX_OK && pp->tlvs.len) {
        /* the TLVs point into the copy: keep them in a stable place */
        static char tlvs[RX_PROXY_PROTOCOL_MAX];
        memcpy(tlvs, pp->tlvs.data, pp->tlvs.len);
        pp->tlvs.data = tlvs;
    }
    free(copy);
    return rc;
}

/* Every proper prefix of a whole header asks for more. */
static void
prefixes_again(const char *hdr, size_t len, const char *name)
{
    rx_proxy_protocol_t pp;
    rx_pp_result_t      res;
    size_t              i, bad = 0;

    for (i = 0; i < len; i++) {
        if (parse_exact(hdr, i, &pp, &res) != RX_AGAIN) {
            bad++;
            diag("prefix of %zu bytes", i);
        }
    }
    ok(bad == 0, "%s: every prefix is RX_AGAIN", name);
}

static const char *
addr_text(const rx_sockaddr_t *a)
{
    static char buf[2][64];
    static int  k;

    k ^= 1;
    rx_sock_ntop(a, buf[k], sizeof(buf[k]), true);
    return buf[k];
}

static void
v1_ok(const char *line, const char *src, const char *dst)
{
    char                 data[256];
    size_t               len = strlen(line);
    rx_proxy_protocol_t  pp;
    rx_pp_result_t       res;
    rx_int_t             rc;

    snprintf(data, sizeof(data), "%sGET / HTTP/1.1\r\n", line);
    rc = parse_exact(data, strlen(data), &pp, &res);
    is_int(rc, RX_OK, "v1 %.*s: parsed", (int) (len - 2), line);
    is_int(res.len, len, "v1 %.*s: the header's length, the rest left",
           (int) (len - 2), line);
    is_int(pp.version, 1, "v1: version 1");
    if (src) {
        ok(pp.src && pp.dst, "v1: addresses");
        is_str(pp.src ? addr_text(pp.src) : NULL, src, "v1 src");
        is_str(pp.dst ? addr_text(pp.dst) : NULL, dst, "v1 dst");
    } else {
        ok(pp.src == NULL && pp.dst == NULL, "v1 %.*s: no address",
           (int) (len - 2), line);
    }
    prefixes_again(line, len, "v1");
}

static void
v1_broken(const char *data, size_t len, const char *why)
{
    rx_proxy_protocol_t pp;
    rx_pp_result_t      res;
    rx_int_t            rc = parse_exact(data, len, &pp, &res);

    ok(rc == RX_ERROR && res.error == RX_PP_BROKEN, "v1 refused: %s", why);
}

static void
test_v1(void)
{
    char   long_line[200];
    size_t n;

    v1_ok("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n",
          "192.0.2.1:56324", "198.51.100.2:443");
    v1_ok("PROXY TCP6 2001:db8::1 ::1 1 65535\r\n",
          "[2001:db8::1]:1", "[::1]:65535");
    v1_ok("PROXY TCP4 10.0.0.1 10.0.0.2 0 0\r\n", "10.0.0.1:0", "10.0.0.2:0");
    v1_ok("PROXY UNKNOWN\r\n", NULL, NULL);
    v1_ok("PROXY UNKNOWN ffff::1 ::1 1 2\r\n", NULL, NULL);
    /* the longest line there is: 104 bytes */
    v1_ok("PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
          "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n",
          "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535",
          "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535");

#define BROKEN(s, why)  v1_broken(s, sizeof(s) - 1, why)
    BROKEN("GET / HTTP/1.1\r\n\r\n", "an HTTP request");
    BROKEN("G", "the first byte of an HTTP request");
    BROKEN("PROXX", "a wrong prefix, cut short");
    BROKEN("\x16\x03\x01\x02\x00", "a TLS ClientHello");
    BROKEN("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\n", "LF without CR");
    BROKEN("PROXY TCP4 192.0.2.1 198.51.100.2 56324\r\n", "a port missing");
    BROKEN("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443 1\r\n", "a fifth field");
    BROKEN("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443 \r\n", "a trailing space");
    BROKEN("PROXY TCP4 192.0.2.1  198.51.100.2 56324 443\r\n", "two spaces");
    BROKEN("PROXY TCP4 ::1 198.51.100.2 56324 443\r\n", "IPv6 in TCP4");
    BROKEN("PROXY TCP6 192.0.2.1 ::1 1 2\r\n", "IPv4 in TCP6");
    BROKEN("PROXY TCP4 192.0.2.256 198.51.100.2 1 2\r\n", "an octet over 255");
    BROKEN("PROXY TCP4 abc 198.51.100.2 1 2\r\n", "not an address (nginx keeps it)");
    BROKEN("PROXY TCP4 192.0.2.1 198.51.100.2 65536 443\r\n", "a port over 65535");
    BROKEN("PROXY TCP4 192.0.2.1 198.51.100.2 -1 443\r\n", "a negative port");
    BROKEN("PROXY TCP4 192.0.2.1 198.51.100.2 1x 443\r\n", "a port with a letter");
    BROKEN("PROXY TCP5 192.0.2.1 198.51.100.2 1 2\r\n", "TCP5");
    BROKEN("PROXY UDP4 192.0.2.1 198.51.100.2 1 2\r\n", "UDP4");
    BROKEN("PROXY \r\n", "nothing after PROXY");
    BROKEN("PROXY TCP4 1.2.3.4\x01", "a control byte before the CRLF");
    BROKEN("PROXY TCP4 1.2.3.4\r 5", "a CR inside the line");
    BROKEN("PROXY UNKNOWN:\xff\xff:1\r\n", "UNKNOWN and bytes that are not text "
           "(as its prefix is: fuzz_proxy_protocol)");
    BROKEN("PROXY UNKNOWN\r\r\n", "a CR before the CR");

    /* 107 bytes without a LF: nothing more can make it a header */
    memcpy(long_line, "PROXY UNKNOWN ", 14);
    memset(long_line + 14, 'a', sizeof(long_line) - 14);
    v1_broken(long_line, RX_PROXY_PROTOCOL_V1_MAX, "107 bytes without CRLF");
    v1_broken(long_line, sizeof(long_line), "200 bytes without CRLF");
    {
        rx_proxy_protocol_t pp;
        rx_pp_result_t      res;

        ok(parse_exact(long_line, RX_PROXY_PROTOCOL_V1_MAX - 1, &pp, &res)
           == RX_AGAIN, "106 bytes of an UNKNOWN line: more may come");
        /* a LF past 107 bytes is not looked for */
        n = RX_PROXY_PROTOCOL_V1_MAX + 10;
        long_line[n - 2] = '\r';
        long_line[n - 1] = '\n';
        v1_broken(long_line, n, "CRLF after 107 bytes");
    }
#undef BROKEN
}

/* ---- v2 ---- */

static size_t
v2_build(char *out, unsigned ver_cmd, unsigned fam, const char *addrs,
    size_t alen, const char *tlvs, size_t tlen)
{
    memcpy(out, "\r\n\r\n\0\r\nQUIT\n", 12);
    out[12] = (char) ver_cmd;
    out[13] = (char) fam;
    out[14] = (char) ((alen + tlen) >> 8);
    out[15] = (char) ((alen + tlen) & 0xff);
    memcpy(out + 16, addrs, alen);
    memcpy(out + 16 + alen, tlvs, tlen);
    return 16 + alen + tlen;
}

static const char v4_addrs[12] = {
    (char) 203, 0, 113, 7,      (char) 192, 0, 2, 10,
    (char) 0xc3, 0x50,          0x01, (char) 0xbb   /* 50000, 443 */
};

/* alpn "h2", authority "example.com", unique_id "\x01\x02", an ssl TLV
 * (client 0x07, verify 0x00000000) with version "TLSv1.3", cn "client",
 * cipher "TLS_AES_128_GCM_SHA256"; then a NOOP (0x04) */
static size_t
tlvs_build(char *t)
{
    size_t n = 0, ssl_at, sub;

#define TLV(type, s, l)                                                       \
    do {                                                                      \
        t[n] = (char) (type); t[n + 1] = (char) ((l) >> 8);                   \
        t[n + 2] = (char) ((l) & 0xff); memcpy(t + n + 3, s, l); n += 3 + (l); \
    } while (0)
    TLV(0x01, "h2", 2);
    TLV(0x02, "example.com", 11);
    TLV(0x05, "\x01\x02", 2);
    ssl_at = n;
    n += 3;
    t[n++] = 0x07;
    memcpy(t + n, "\0\0\0\x2a", 4);                 /* verify = 42 */
    n += 4;
    TLV(0x21, "TLSv1.3", 7);
    TLV(0x22, "client", 6);
    TLV(0x23, "TLS_AES_128_GCM_SHA256", 22);
    sub = n - ssl_at - 3;
    t[ssl_at] = 0x20;
    t[ssl_at + 1] = (char) (sub >> 8);
    t[ssl_at + 2] = (char) (sub & 0xff);
    TLV(0x04, "\0\0\0", 3);
#undef TLV
    return n;
}

static void
tlv_is(const rx_proxy_protocol_t *pp, const char *name, rx_int_t want_rc,
    const char *want)
{
    rx_str_t    n = { strlen(name), (char *) name }, v = { 0, NULL };
    char        buf[16], got[256];
    const char *why = NULL;
    rx_int_t    rc = rx_proxy_protocol_tlv(pp, &n, &v, buf, &why);

    is_int(rc, want_rc, "tlv %s: rc", name);
    if (rc == RX_OK && want) {
        snprintf(got, sizeof(got), "%.*s", (int) v.len, v.data);
        is_str(got, want, "tlv %s: value", name);
    }
    if (rc == RX_ERROR) {
        is_str(why, want, "tlv %s: why", name);
    }
}

static void
test_v2(void)
{
    char                 hdr[RX_PROXY_PROTOCOL_MAX + 64], tlvs[512], addrs6[36];
    size_t               len, tlen;
    rx_proxy_protocol_t  pp;
    rx_pp_result_t       res;
    rx_int_t             rc;

    tlen = tlvs_build(tlvs);
    len = v2_build(hdr, 0x21, 0x11, v4_addrs, 12, tlvs, tlen);
    memcpy(hdr + len, "\x16\x03\x01", 3);           /* a ClientHello follows */
    rc = parse_exact(hdr, len + 3, &pp, &res);
    is_int(rc, RX_OK, "v2 TCP4 with TLVs: parsed");
    is_int(res.len, len, "v2: the header's length, the ClientHello left");
    is_int(pp.version, 2, "v2: version 2");
    is_str(pp.src ? addr_text(pp.src) : NULL, "203.0.113.7:50000", "v2 src");
    is_str(pp.dst ? addr_text(pp.dst) : NULL, "192.0.2.10:443", "v2 dst");
    is_int(pp.tlvs.len, tlen, "v2: the TLV bytes kept");
    prefixes_again(hdr, len, "v2 TCP4");

    tlv_is(&pp, "alpn", RX_OK, "h2");
    tlv_is(&pp, "authority", RX_OK, "example.com");
    tlv_is(&pp, "unique_id", RX_OK, "\x01\x02");
    tlv_is(&pp, "0x02", RX_OK, "example.com");
    tlv_is(&pp, "0x2", RX_OK, "example.com");
    tlv_is(&pp, "ssl_version", RX_OK, "TLSv1.3");
    tlv_is(&pp, "ssl_cn", RX_OK, "client");
    tlv_is(&pp, "ssl_cipher", RX_OK, "TLS_AES_128_GCM_SHA256");
    tlv_is(&pp, "ssl_0x22", RX_OK, "client");
    tlv_is(&pp, "ssl_verify", RX_OK, "42");
    tlv_is(&pp, "ssl_sig_alg", RX_DECLINED, NULL);
    tlv_is(&pp, "netns", RX_DECLINED, NULL);
    tlv_is(&pp, "0x30", RX_DECLINED, NULL);
    tlv_is(&pp, "0x04", RX_OK, "");                 /* NOOP: 3 NULs */
    tlv_is(&pp, "nosuch", RX_ERROR, "unknown PROXY protocol TLV");
    tlv_is(&pp, "ssl_nosuch", RX_ERROR, "unknown PROXY protocol TLV");
    tlv_is(&pp, "0xzz", RX_ERROR, "invalid PROXY protocol TLV");
    tlv_is(&pp, "0x123", RX_ERROR, "invalid PROXY protocol TLV");

    /* a TLV whose length runs past the end: found as broken when walked
     * to, never read beyond */
    tlvs[1] = 0x7f;                                 /* alpn claims 32 KiB */
    len = v2_build(hdr, 0x21, 0x11, v4_addrs, 12, tlvs, tlen);
    rc = parse_exact(hdr, len, &pp, &res);
    is_int(rc, RX_OK, "v2 with a broken TLV: the header itself is whole");
    tlv_is(&pp, "authority", RX_ERROR, "broken PROXY protocol TLV");
    tlvs[1] = 0;
    len = v2_build(hdr, 0x21, 0x11, v4_addrs, 12, "\x01\x00", 2);
    parse_exact(hdr, len, &pp, &res);
    tlv_is(&pp, "alpn", RX_ERROR, "broken PROXY protocol TLV");
    len = v2_build(hdr, 0x21, 0x11, v4_addrs, 12, "\x20\x00\x02\x01\x00", 5);
    parse_exact(hdr, len, &pp, &res);
    tlv_is(&pp, "ssl_verify", RX_ERROR, "broken PROXY protocol TLV");
    len = v2_build(hdr, 0x21, 0x11, v4_addrs, 12, "", 0);
    parse_exact(hdr, len, &pp, &res);
    tlv_is(&pp, "alpn", RX_DECLINED, NULL);
    tlv_is(&pp, "ssl_cn", RX_DECLINED, NULL);

    /* IPv6 */
    memset(addrs6, 0, sizeof(addrs6));
    addrs6[0] = 0x20; addrs6[1] = 0x01; addrs6[2] = 0x0d; addrs6[3] = (char) 0xb8;
    addrs6[15] = 5;
    addrs6[31] = 1;
    addrs6[32] = 0x30; addrs6[33] = 0x39;           /* 12345 */
    addrs6[34] = 0; addrs6[35] = 80;
    len = v2_build(hdr, 0x21, 0x21, addrs6, 36, "", 0);
    rc = parse_exact(hdr, len, &pp, &res);
    is_int(rc, RX_OK, "v2 TCP6: parsed");
    is_str(pp.src ? addr_text(pp.src) : NULL, "[2001:db8::5]:12345", "v2 TCP6 src");
    is_str(pp.dst ? addr_text(pp.dst) : NULL, "[::1]:80", "v2 TCP6 dst");
    prefixes_again(hdr, len, "v2 TCP6");

    /* LOCAL, UDP, AF_UNIX, AF_UNSPEC: skipped whole, no address */
    {
        static const unsigned vc[] = { 0x20, 0x21, 0x21, 0x21 };
        static const unsigned fam[] = { 0x11, 0x12, 0x31, 0x00 };
        static const char *what[] = { "LOCAL", "UDP over IPv4", "AF_UNIX",
                                      "AF_UNSPEC" };
        char   blob[216];
        size_t i;

        memset(blob, 'x', sizeof(blob));
        for (i = 0; i < 4; i++) {
            len = v2_build(hdr, vc[i], fam[i], blob, sizeof(blob), "", 0);
            rc = parse_exact(hdr, len + 1, &pp, &res);
            ok(rc == RX_OK && res.len == len && pp.src == NULL,
               "v2 %s: skipped, no address", what[i]);
        }
    }

    /* refusals */
    len = v2_build(hdr, 0x11, 0x11, v4_addrs, 12, "", 0);
    rc = parse_exact(hdr, len, &pp, &res);
    ok(rc == RX_ERROR && res.error == RX_PP_VERSION && res.v2_version == 1,
       "v2 signature with version 1: refused");
    len = v2_build(hdr, 0x21, 0x11, v4_addrs, 8, "", 0);
    rc = parse_exact(hdr, len, &pp, &res);
    ok(rc == RX_ERROR && res.error == RX_PP_V2_ADDRESS,
       "v2 TCP4 with 8 address bytes: refused");
    len = v2_build(hdr, 0x21, 0x21, addrs6, 20, "", 0);
    rc = parse_exact(hdr, len, &pp, &res);
    ok(rc == RX_ERROR && res.error == RX_PP_V2_ADDRESS,
       "v2 TCP6 with 20 address bytes: refused");
    {
        static char big[RX_PROXY_PROTOCOL_MAX];

        memset(big, 0, sizeof(big));
        len = v2_build(hdr, 0x21, 0x11, v4_addrs, 12, big,
                       RX_PROXY_PROTOCOL_MAX - 16 - 12);
        rc = parse_exact(hdr, len, &pp, &res);
        ok(rc == RX_OK && res.len == RX_PROXY_PROTOCOL_MAX,
           "v2 of exactly 4096 bytes: accepted");
        v2_build(hdr, 0x21, 0x11, v4_addrs, 12, big,
                 RX_PROXY_PROTOCOL_MAX - 16 - 12 + 1);
        rc = parse_exact(hdr, 16, &pp, &res);
        ok(rc == RX_ERROR && res.error == RX_PP_TOO_LARGE,
           "v2 announcing 4097 bytes: refused at its 16th byte");
        hdr[14] = (char) 0xff;
        hdr[15] = (char) 0xff;
        rc = parse_exact(hdr, 16, &pp, &res);
        ok(rc == RX_ERROR && res.error == RX_PP_TOO_LARGE,
           "v2 announcing 65551 bytes: refused");
    }
    rc = parse_exact("\r\n\r\n\0\r\nQUIX\n", 12, &pp, &res);
    ok(rc == RX_ERROR && res.error == RX_PP_BROKEN, "a wrong v2 signature");
    rc = parse_exact("\r\n\r\nX", 5, &pp, &res);
    ok(rc == RX_ERROR && res.error == RX_PP_BROKEN,
       "a wrong v2 signature, cut short");
    rc = parse_exact("\r\n\r\n", 4, &pp, &res);
    ok(rc == RX_AGAIN, "4 bytes of the v2 signature: more may come");
}

int
main(void)
{
    test_v1();
    test_v2();
    return done();
}
