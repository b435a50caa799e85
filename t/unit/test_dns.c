/*
 * test_dns.c: the DNS wire format (event/dns.c): queries as built, answers
 * read with CNAME chains followed, and hostile packets (short, looping or
 * forward compression pointers, bad record lengths, odd flags) refused
 * without reading past their end.
 */
#include "core.h"
#include "dns.h"
#include "tap.h"

static uint8_t pkt[4096];
static size_t  plen;

static void
put(const void *p, size_t n)
{
    memcpy(pkt + plen, p, n);
    plen += n;
}

static void
put16(unsigned v)
{
    uint8_t b[2] = { (uint8_t) (v >> 8), (uint8_t) v };
    put(b, 2);
}

static void
put32(uint32_t v)
{
    put16(v >> 16);
    put16(v & 0xffff);
}

static void
put_name(const char *name)
{
    const char *p = name, *dot;

    while (*p) {
        uint8_t l;

        dot = strchr(p, '.');
        l = (uint8_t) (dot ? (size_t) (dot - p) : strlen(p));
        put(&l, 1);
        put(p, l);
        p += l + (dot ? 1 : 0);
    }
    put("", 1);
}

/* header + question for name/qtype; ancount records follow */
static void
head(unsigned id, unsigned flags, unsigned ancount, const char *name,
    unsigned qtype)
{
    plen = 0;
    put16(id);
    put16(flags);
    put16(1);
    put16(ancount);
    put16(0);
    put16(0);
    put_name(name);
    put16(qtype);
    put16(1);
}

static void
rr_a(const char *owner, uint32_t ttl, uint8_t a, uint8_t b, uint8_t c,
    uint8_t d)
{
    uint8_t ip[4] = { a, b, c, d };

    put_name(owner);
    put16(RX_DNS_A);
    put16(1);
    put32(ttl);
    put16(4);
    put(ip, 4);
}

static void
rr_cname(const char *owner, uint32_t ttl, const char *target)
{
    size_t at;

    put_name(owner);
    put16(RX_DNS_CNAME);
    put16(1);
    put32(ttl);
    at = plen;
    put16(0);
    put_name(target);
    pkt[at] = (uint8_t) ((plen - at - 2) >> 8);
    pkt[at + 1] = (uint8_t) (plen - at - 2);
}

static const char *
parse(rx_dns_answer_t *a)
{
    size_t      end;
    const char *err = rx_dns_parse_question(pkt, plen, a, &end);

    return err ? err : rx_dns_parse_answers(pkt, plen, end, a);
}

static void
test_query(void)
{
    uint8_t q[RX_DNS_QUERY_MAX];
    size_t  n = rx_dns_query(q, 0x1234, "www.example.com", 15, RX_DNS_AAAA);
    char    long_label[80];

    is_int(n, 12 + 17 + 4, "query length");
    ok(q[0] == 0x12 && q[1] == 0x34 && q[2] == 0x01 && q[5] == 1,
       "id, RD, one question");
    ok(memcmp(q + 12, "\3www\7example\3com\0", 17) == 0, "labels");
    ok(q[29] == 0 && q[30] == 28 && q[32] == 1, "AAAA, IN");
    is_int(rx_dns_query(q, 1, "a..b", 4, RX_DNS_A), 0, "empty label refused");
    is_int(rx_dns_query(q, 1, "", 0, RX_DNS_A), 0, "empty name refused");
    memset(long_label, 'x', 64);
    is_int(rx_dns_query(q, 1, long_label, 64, RX_DNS_A), 0,
           "64-byte label refused");
}

static void
test_answers(void)
{
    rx_dns_answer_t a;

    head(7, 0x8180, 2, "App.Test", RX_DNS_A);
    rr_a("app.test", 300, 10, 0, 0, 1);
    rr_a("APP.test", 60, 10, 0, 0, 2);
    ok(parse(&a) == NULL, "two A records");
    ok(a.id == 7 && a.rcode == 0 && !a.truncated, "header");
    is_str(a.qname, "app.test", "question lower-cased");
    is_int(a.naddrs, 2, "two addresses");
    is_int(a.ttl, 60, "the least TTL");
    ok(a.addrs[1][3] == 2, "second address");

    head(8, 0x8180, 4, "chain.test", RX_DNS_A);
    rr_cname("chain.test", 100, "mid.test");
    rr_a("other.test", 5, 9, 9, 9, 9);
    rr_cname("mid.test", 50, "end.test");
    rr_a("end.test", 200, 10, 0, 0, 3);
    ok(parse(&a) == NULL, "a CNAME chain");
    is_int(a.naddrs, 1, "only the chain's end counts (not other.test)");
    ok(a.addrs[0][3] == 3, "the end's address");
    is_int(a.ttl, 50, "TTL: the least along the chain");

    head(9, 0x8180, 1, "dangling.test", RX_DNS_A);
    rr_cname("dangling.test", 100, "nowhere.test");
    ok(parse(&a) == NULL && a.naddrs == 0, "a CNAME without its end: none");

    head(10, 0x8183, 0, "nx.test", RX_DNS_A);
    ok(parse(&a) == NULL && a.rcode == RX_DNS_NXDOMAIN, "NXDOMAIN");
    head(11, 0x8380, 0, "big.test", RX_DNS_A);
    ok(parse(&a) == NULL && a.truncated, "TC bit");

    /* compression: the answer's owner points at the question's name */
    head(12, 0x8180, 1, "ptr.test", RX_DNS_A);
    put16(0xc00c);
    put16(RX_DNS_A); put16(1); put32(30); put16(4); put("\x7f\0\0\1", 4);
    ok(parse(&a) == NULL && a.naddrs == 1 && a.addrs[0][0] == 127,
       "a compressed owner name");
}

static void
test_hostile(void)
{
    rx_dns_answer_t a;
    size_t          n, cut;

    head(1, 0x8180, 1, "x.test", RX_DNS_A);
    rr_a("x.test", 1, 1, 2, 3, 4);
    n = plen;
    for (cut = 0; cut < n; cut++) {
        plen = cut;
        if (parse(&a) == NULL) {
            break;
        }
    }
    is_int(cut, n, "every truncation of a valid answer is refused");

    head(1, 0x0180, 0, "x.test", RX_DNS_A);
    ok(parse(&a) != NULL, "a query (no QR) is not an answer");
    head(1, 0x8980, 0, "x.test", RX_DNS_A);
    ok(parse(&a) != NULL, "another opcode refused");

    /* a pointer to itself, and one pointing forward */
    head(1, 0x8180, 1, "x.test", RX_DNS_A);
    cut = plen;
    put16(0xc000 | (unsigned) cut);
    put16(RX_DNS_A); put16(1); put32(1); put16(4); put("\1\2\3\4", 4);
    ok(parse(&a) != NULL, "a pointer to itself is refused");
    head(1, 0x8180, 1, "x.test", RX_DNS_A);
    put16(0xc000 | (unsigned) (plen + 40));
    ok(parse(&a) != NULL, "a pointer forward is refused");

    /* a loop through two names: b -> a label then a pointer back */
    head(1, 0x8180, 1, "x.test", RX_DNS_A);
    cut = plen;
    put("\1y", 2);
    put16(0xc000 | (unsigned) cut);
    put16(RX_DNS_A); put16(1); put32(1); put16(4); put("\1\2\3\4", 4);
    ok(parse(&a) != NULL, "a label followed by a pointer to it is refused");

    head(1, 0x8180, 1, "x.test", RX_DNS_A);
    put_name("x.test");
    put16(RX_DNS_A); put16(1); put32(1); put16(5); put("\1\2\3\4\5", 5);
    ok(parse(&a) != NULL, "an A record of 5 bytes is refused");

    head(1, 0x8180, 1, "x.test", RX_DNS_A);
    put_name("x.test");
    put16(RX_DNS_A); put16(1); put32(1); put16(400); put("\1\2\3\4", 4);
    ok(parse(&a) != NULL, "a record longer than the packet is refused");

    head(1, 0x8180, 60000, "x.test", RX_DNS_A);
    rr_a("x.test", 1, 1, 2, 3, 4);
    ok(parse(&a) != NULL, "more records announced than sent is refused");

    plen = 0;
    put16(1); put16(0x8180); put16(2); put16(0); put16(0); put16(0);
    ok(parse(&a) != NULL, "two questions refused");

    head(1, 0x8180, 1, "x.test", RX_DNS_A);
    rr_a("x.test", 0x80000001u, 1, 2, 3, 4);
    ok(parse(&a) == NULL && a.ttl == 0, "a TTL with the top bit set is 0");
}

int
main(void)
{
    test_query();
    test_answers();
    test_hostile();
    is_str(rx_dns_strerror(3), "Host not found", "strerror 3");
    is_str(rx_dns_strerror(110), "Operation timed out", "strerror 110");
    return done();
}
