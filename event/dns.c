/*
 * dns.c: DNS messages (see dns.h). Every read is checked against the
 * packet's length; a compression pointer must point before the part of
 * the name that led to it, so names cannot loop, and their number is
 * bounded as well.
 */
#include <ctype.h>
#include "core.h"
#include "dns.h"

#define HDR  12

static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t) ((p[0] << 8) | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16)
           | ((uint32_t) p[2] << 8) | p[3];
}

size_t
rx_dns_query(uint8_t *buf, uint16_t id, const char *name, size_t len,
    uint16_t qtype)
{
    size_t i, start, p;

    if (len == 0 || len > 253) {
        return 0;
    }
    memset(buf, 0, HDR);
    buf[0] = (uint8_t) (id >> 8);
    buf[1] = (uint8_t) id;
    buf[2] = 0x01;                         /* RD: recursion desired */
    buf[5] = 1;                            /* one question */
    p = HDR;
    start = 0;
    for (i = 0; i <= len; i++) {
        if (i < len && name[i] != '.') {
            continue;
        }
        if (i == start || i - start > 63) {
            return 0;                      /* an empty or too long label */
        }
        buf[p++] = (uint8_t) (i - start);
        memcpy(buf + p, name + start, i - start);
        p += i - start;
        start = i + 1;
    }
    buf[p++] = 0;
    buf[p++] = (uint8_t) (qtype >> 8);
    buf[p++] = (uint8_t) qtype;
    buf[p++] = 0;
    buf[p++] = 1;                          /* class IN */
    return p;
}

/*
 * The name at *pos, lower-cased and dotted, into out (RX_DNS_NAME_MAX + 1
 * bytes). *pos moves past the name as it is written there (a pointer
 * ends it). Each pointer must point before the lowest offset read so far,
 * so the offsets read only go down from one pointer to the next.
 */
static const char *
read_name(const uint8_t *buf, size_t n, size_t *pos, char *out, size_t *olen)
{
    size_t   p = *pos, low = *pos, len = 0, end = 0, i;
    unsigned hops = 0;
    bool     jumped = false;

    for ( ;; ) {
        uint8_t l;

        if (p >= n) {
            return "short DNS response";
        }
        l = buf[p];
        if ((l & 0xc0) == 0xc0) {
            size_t target;

            if (p + 1 >= n) {
                return "short DNS response";
            }
            target = ((size_t) (l & 0x3f) << 8) | buf[p + 1];
            if (!jumped) {
                end = p + 2;
                jumped = true;
            }
            if (target >= low || ++hops > 64) {
                return "invalid compression pointer in DNS response";
            }
            p = low = target;
            continue;
        }
        if (l & 0xc0) {
            return "invalid label in DNS response";
        }
        if (l == 0) {
            if (!jumped) {
                end = p + 1;
            }
            break;
        }
        if (p + 1 + l > n) {
            return "short DNS response";
        }
        if (len + (len ? 1 : 0) + l > RX_DNS_NAME_MAX) {
            return "invalid name in DNS response";
        }
        if (len) {
            out[len++] = '.';
        }
        for (i = 0; i < l; i++) {
            out[len++] = (char) tolower(buf[p + 1 + i]);
        }
        p += 1 + (size_t) l;
    }
    out[len] = '\0';
    *olen = len;
    *pos = end;
    return NULL;
}

const char *
rx_dns_parse_question(const uint8_t *buf, size_t n, rx_dns_answer_t *a,
    size_t *end)
{
    size_t      p = HDR;
    uint16_t    flags;
    const char *err;

    memset(a, 0, offsetof(rx_dns_answer_t, qname));
    a->naddrs = 0;
    a->qname_len = 0;
    a->qname[0] = '\0';
    if (n < HDR) {
        return "short DNS response";
    }
    a->id = get16(buf);
    flags = get16(buf + 2);
    /* a response (QR) to a standard query, reserved bits clear */
    if ((flags & 0xf870) != 0x8000) {
        return "invalid DNS response";
    }
    a->truncated = (flags & 0x0200) != 0;
    a->rcode = flags & 0xf;
    if (get16(buf + 4) != 1) {
        return "invalid number of questions in DNS response";
    }
    err = read_name(buf, n, &p, a->qname, &a->qname_len);
    if (err) {
        return err;
    }
    if (a->qname_len == 0) {
        return "zero-length domain name in DNS response";
    }
    if (p + 4 > n) {
        return "short DNS response";
    }
    a->qtype = get16(buf + p);
    if (get16(buf + p + 2) != 1) {
        return "unknown query class in DNS response";
    }
    *end = p + 4;
    return NULL;
}

/* The records of the answer section that matter here. */
typedef struct {
    char      owner[RX_DNS_NAME_MAX + 1];
    char      target[RX_DNS_NAME_MAX + 1];   /* CNAME */
    uint16_t  type;
    uint32_t  ttl;
    size_t    rdata;                          /* A, AAAA: offset */
} rr_t;

typedef struct {
    rr_t       rr[RX_DNS_MAX_RRS];
    rx_uint_t  n;
} rrs_t;

static const char *
read_records(const uint8_t *buf, size_t n, size_t p, unsigned count,
    uint16_t qtype, rrs_t *rrs)
{
    char        owner[RX_DNS_NAME_MAX + 1];
    size_t      olen, tlen, rdlen, q;
    uint16_t    type, class;
    uint32_t    ttl;
    const char *err;
    unsigned    i;

    for (i = 0; i < count; i++) {
        rr_t *rr;

        err = read_name(buf, n, &p, owner, &olen);
        if (err) {
            return err;
        }
        if (p + 10 > n) {
            return "short DNS response";
        }
        type = get16(buf + p);
        class = get16(buf + p + 2);
        ttl = get32(buf + p + 4);
        if (ttl > 0x7fffffff) {
            ttl = 0;                        /* RFC 2181: the top bit is 0 */
        }
        rdlen = get16(buf + p + 8);
        q = p + 10;
        if (q + rdlen > n) {
            return "short DNS response";
        }
        p = q + rdlen;
        if (class != 1 || (type != qtype && type != RX_DNS_CNAME)
            || rrs->n == RX_DNS_MAX_RRS) {
            continue;                      /* DNAME, RRSIG ... : not ours */
        }
        if (type == RX_DNS_A && rdlen != 4) {
            return "invalid A record in DNS response";
        }
        if (type == RX_DNS_AAAA && rdlen != 16) {
            return "invalid AAAA record in DNS response";
        }
        rr = &rrs->rr[rrs->n];
        memcpy(rr->owner, owner, olen + 1);
        rr->type = type;
        rr->ttl = ttl;
        rr->rdata = q;
        if (type == RX_DNS_CNAME) {
            size_t t = q;

            err = read_name(buf, n, &t, rr->target, &tlen);
            if (err) {
                return err;
            }
            if (t != q + rdlen) {
                return "invalid CNAME record in DNS response";
            }
        }
        rrs->n++;
    }
    return NULL;
}

const char *
rx_dns_parse_answers(const uint8_t *buf, size_t n, size_t end,
    rx_dns_answer_t *a)
{
    static rrs_t  rrs;                     /* 33 KiB: not on the stack */
    const char   *cur = a->qname, *err;
    size_t        alen = a->qtype == RX_DNS_A ? 4 : 16;
    rx_uint_t     i, hop;

    a->naddrs = 0;
    a->ttl = UINT32_MAX;
    rrs.n = 0;
    err = read_records(buf, n, end, get16(buf + 6), a->qtype, &rrs);
    if (err) {
        return err;
    }
    for (hop = 0; hop <= RX_DNS_MAX_CHAIN; hop++) {
        const rr_t *cname = NULL;

        for (i = 0; i < rrs.n; i++) {
            const rr_t *rr = &rrs.rr[i];

            if (strcmp(rr->owner, cur) != 0) {
                continue;
            }
            if (rr->type == RX_DNS_CNAME) {
                cname = cname ? cname : rr;
            } else if (a->naddrs < RX_DNS_MAX_ADDRS) {
                memcpy(a->addrs[a->naddrs++], buf + rr->rdata, alen);
                a->ttl = rx_min(a->ttl, rr->ttl);
            }
        }
        if (a->naddrs || cname == NULL) {
            break;
        }
        a->ttl = rx_min(a->ttl, cname->ttl);
        cur = cname->target;
    }
    if (a->ttl == UINT32_MAX) {
        a->ttl = 0;
    }
    return NULL;
}

const char *
rx_dns_strerror(unsigned code)
{
    static const char *const errors[] = {
        "Format error", "Server failure", "Host not found", "Unimplemented",
        "Operation refused"
    };

    if (code >= 1 && code <= 5) {
        return errors[code - 1];
    }
    if (code == RX_DNS_TIMEDOUT) {
        return "Operation timed out";
    }
    return "Unknown error";
}
