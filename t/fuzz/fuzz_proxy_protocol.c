/*
 * fuzz_proxy_protocol.c: rx_proxy_protocol_parse and rx_proxy_protocol_tlv
 * (core/proxy_protocol.c), the header a balancer sends before anything
 * else on a `listen ... proxy_protocol` address.
 *
 * Input: the bytes a connection starts with, copied to exactly-sized heap
 * memory (a read past them shows under ASan).
 *
 * Invariants (proxy_protocol.h): the result is OK, AGAIN or ERROR; AGAIN
 * only below 107 bytes for v1 (first byte not CR) and 4096 for v2; on OK
 * the header's length is within the input, at least 15 bytes ("PROXY
 * UNKNOWN\r\n") or 16 (v2), the same header alone parses to the same
 * length, src and dst are both set or both NULL with the same IP family,
 * the TLVs lie inside the header; every prefix of a whole header is
 * AGAIN; every TLV name looks up within the TLVs.
 */
#include "fuzz.h"
#include "proxy_protocol.h"

static const char *names[] = {
    "alpn", "authority", "unique_id", "ssl", "netns", "ssl_version", "ssl_cn",
    "ssl_cipher", "ssl_sig_alg", "ssl_key_alg", "ssl_verify", "0x01", "0x20",
    "0xff", "ssl_0x21", "0x", "0xg", "nosuch"
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char                *buf = fuzz_dup(data, size), *one, num[16];
    rx_proxy_protocol_t  pp, again;
    rx_sockaddr_t        addrs[2], addrs2[2];
    rx_pp_result_t       res, res2;
    rx_str_t             name, value;
    const char          *why;
    rx_int_t             rc, rc2;
    size_t               i, cut;

    rc = rx_proxy_protocol_parse(buf, size, &pp, addrs, &res);
    FUZZ_CHECK(rc == RX_OK || rc == RX_AGAIN || rc == RX_ERROR, "rc %ld",
               (long) rc);
    if (rc == RX_AGAIN) {
        FUZZ_CHECK(size < (size && buf[0] == '\r' ? RX_PROXY_PROTOCOL_MAX
                                                  : RX_PROXY_PROTOCOL_V1_MAX),
                   "AGAIN after %zu bytes: %s", size, fuzz_show(buf, size));
    }
    if (rc == RX_OK) {
        FUZZ_CHECK(res.len <= size && res.len >= (buf[0] == '\r' ? 16u : 15u),
                   "length %zu of %zu", res.len, size);
        FUZZ_CHECK((pp.src == NULL) == (pp.dst == NULL)
                   && (pp.src == NULL || pp.src->u.sa.sa_family
                                         == pp.dst->u.sa.sa_family),
                   "addresses for %s", fuzz_show(buf, size));
        FUZZ_CHECK(pp.tlvs.len == 0 || (pp.tlvs.data >= buf
                   && pp.tlvs.data + pp.tlvs.len <= buf + res.len),
                   "TLVs outside the header");
        one = fuzz_dup((const uint8_t *) buf, res.len);
        rc2 = rx_proxy_protocol_parse(one, res.len, &again, addrs2, &res2);
        FUZZ_CHECK(rc2 == RX_OK && res2.len == res.len,
                   "the header alone: rc %ld, length %zu of %zu", (long) rc2,
                   res2.len, res.len);
        for (cut = 0; cut < res.len; cut++) {
            rc2 = rx_proxy_protocol_parse(one, cut, &again, addrs2, &res2);
            FUZZ_CHECK(rc2 == RX_AGAIN, "prefix of %zu bytes: rc %ld", cut,
                       (long) rc2);
        }
        free(one);
        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            name.data = (char *) names[i];
            name.len = strlen(names[i]);
            why = NULL;
            rc2 = rx_proxy_protocol_tlv(&pp, &name, &value, num, &why);
            FUZZ_CHECK(rc2 == RX_OK || rc2 == RX_DECLINED
                       || (rc2 == RX_ERROR && why != NULL), "tlv %s: rc %ld",
                       names[i], (long) rc2);
            if (rc2 == RX_OK) {
                FUZZ_CHECK(value.data == num || (value.data >= pp.tlvs.data
                           && value.data + value.len
                              <= pp.tlvs.data + pp.tlvs.len),
                           "tlv %s outside the TLVs", names[i]);
            }
        }
    }
    free(buf);
    return 0;
}
