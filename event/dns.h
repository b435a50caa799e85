/*
 * dns.h: the DNS wire format the resolver speaks (RFC 1035): building an
 * A or AAAA question, and reading an answer with every offset checked.
 * Pure: no sockets, no state, so t/unit/test_dns.c feeds it packets.
 */
#ifndef RX_DNS_H
#define RX_DNS_H

#include "core.h"

#define RX_DNS_A           1
#define RX_DNS_CNAME       5
#define RX_DNS_AAAA       28

#define RX_DNS_NAME_MAX  255        /* a name as text, without the last dot */
#define RX_DNS_QUERY_MAX (12 + RX_DNS_NAME_MAX + 2 + 4)
#define RX_DNS_MAX_ADDRS  32        /* addresses kept from one answer */
#define RX_DNS_MAX_RRS    64        /* records of an answer looked at */
#define RX_DNS_MAX_CHAIN  16        /* CNAMEs followed within one answer */

/* rcodes as nginx names them in "could not be resolved (N: text)" */
#define RX_DNS_FORMERR     1
#define RX_DNS_SERVFAIL    2
#define RX_DNS_NXDOMAIN    3
#define RX_DNS_NOTIMP      4
#define RX_DNS_REFUSED     5
#define RX_DNS_TIMEDOUT  110        /* nginx's NGX_RESOLVE_TIMEDOUT */

/* What an answer says about its question. */
typedef struct {
    uint16_t  id;
    bool      truncated;             /* TC: ask again over TCP */
    unsigned  rcode;
    char      qname[RX_DNS_NAME_MAX + 1];  /* lower case, no last dot */
    size_t    qname_len;
    uint16_t  qtype;
    /* the addresses of qname (after the CNAMEs the answer gives for it):
     * 4 or 16 bytes each, per qtype */
    rx_uint_t naddrs;
    uint8_t   addrs[RX_DNS_MAX_ADDRS][16];
    uint32_t  ttl;                   /* the least TTL of the records used */
} rx_dns_answer_t;

/*
 * Writes a recursive query for name (text, without the last dot) into buf
 * (RX_DNS_QUERY_MAX bytes). Returns its length, or 0 when the name cannot
 * be asked (empty label, label over 63 bytes, name over 253 bytes).
 */
size_t rx_dns_query(uint8_t *buf, uint16_t id, const char *name, size_t len,
    uint16_t qtype);

/*
 * Reads the header and the question of an answer: NULL, or why it cannot
 * be one (nginx's wording where it has one). Enough to match it against
 * a query (id and question) before trusting the rest.
 */
const char *rx_dns_parse_question(const uint8_t *buf, size_t n,
    rx_dns_answer_t *a, size_t *end);

/*
 * Reads the answer records that follow the question (end, from
 * rx_dns_parse_question): the CNAME chain from the question's name is
 * followed, and the A or AAAA records of the last name of the chain are
 * kept. NULL, or why the answer is broken.
 */
const char *rx_dns_parse_answers(const uint8_t *buf, size_t n, size_t end,
    rx_dns_answer_t *a);

/* nginx's words for an rcode (or RX_DNS_TIMEDOUT). */
const char *rx_dns_strerror(unsigned code);

#endif /* RX_DNS_H */
