/*
 * proxy_protocol.c: the PROXY protocol header, v1 and v2, parsed from
 * memory with every length checked against the bytes there are, and the
 * lookup of v2 TLVs by nginx's names. No I/O, no allocation: the reading
 * is event/conn_proxy_protocol.c's.
 *
 * Stricter than nginx where the specification is: a v1 address must be
 * an address of the family the line names (nginx keeps any run of hex
 * digits, dots and colons) and the line printable ASCII (nginx skips any
 * bytes after UNKNOWN); and a header may arrive in several pieces (nginx
 * parses only its first read).
 */
#include <arpa/inet.h>
#include "proxy_protocol.h"

static const char v2_signature[12] = "\r\n\r\n\0\r\nQUIT\n";

#define V1_PREFIX  "PROXY "

/* v2 TLV types (the specification's PP2_TYPE_*) */
#define TLV_ALPN         0x01
#define TLV_AUTHORITY    0x02
#define TLV_UNIQUE_ID    0x05
#define TLV_SSL          0x20
#define TLV_SSL_VERSION  0x21
#define TLV_SSL_CN       0x22
#define TLV_SSL_CIPHER   0x23
#define TLV_SSL_SIG_ALG  0x24
#define TLV_SSL_KEY_ALG  0x25
#define TLV_NETNS        0x30

/* The "ssl" TLV's value starts with client (1 byte) and verify (4). */
#define TLV_SSL_HEAD     5

static unsigned
be16(const char *p)
{
    return (unsigned) (unsigned char) p[0] << 8 | (unsigned char) p[1];
}

static void
set_ip(rx_sockaddr_t *a, int family, const void *addr, unsigned port)
{
    memset(a, 0, sizeof(*a));
    if (family == AF_INET) {
        a->u.sin.sin_family = AF_INET;
        memcpy(&a->u.sin.sin_addr, addr, 4);
        a->u.sin.sin_port = htons((uint16_t) port);
        a->len = sizeof(struct sockaddr_in);
    } else {
        a->u.sin6.sin6_family = AF_INET6;
        memcpy(&a->u.sin6.sin6_addr, addr, 16);
        a->u.sin6.sin6_port = htons((uint16_t) port);
        a->len = sizeof(struct sockaddr_in6);
    }
}

/* ---- v2 ------------------------------------------------------------------ */

static rx_int_t
parse_v2(const char *buf, size_t len, rx_proxy_protocol_t *pp,
    rx_sockaddr_t *addrs, rx_pp_result_t *res)
{
    size_t      total, need, body;
    unsigned    family;
    const char *p;

    if (memcmp(buf, v2_signature, rx_min(len, sizeof(v2_signature))) != 0) {
        res->error = RX_PP_BROKEN;
        return RX_ERROR;
    }
    if (len < 16) {
        return RX_AGAIN;
    }
    if ((unsigned char) buf[12] >> 4 != 2) {
        res->error = RX_PP_VERSION;
        res->v2_version = (unsigned char) buf[12] >> 4;
        return RX_ERROR;
    }
    total = 16 + (size_t) be16(buf + 14);
    if (total > RX_PROXY_PROTOCOL_MAX) {
        res->error = RX_PP_TOO_LARGE;
        return RX_ERROR;
    }
    if (len < total) {
        return RX_AGAIN;
    }
    res->len = total;
    pp->version = 2;
    /* as nginx: a LOCAL command (a balancer's own health check), a
     * datagram or a family other than IPv4/IPv6 carries nothing we use;
     * the connection goes on as the balancer's own */
    if (((unsigned char) buf[12] & 0x0f) != 1
        || ((unsigned char) buf[13] & 0x0f) != 1) {
        return RX_OK;
    }
    family = (unsigned char) buf[13] >> 4;
    if (family != 1 && family != 2) {
        return RX_OK;
    }
    need = family == 1 ? 12 : 36;
    body = total - 16;
    if (body < need) {
        res->error = RX_PP_V2_ADDRESS;
        return RX_ERROR;
    }
    p = buf + 16;
    if (family == 1) {
        set_ip(&addrs[0], AF_INET, p, be16(p + 8));
        set_ip(&addrs[1], AF_INET, p + 4, be16(p + 10));
    } else {
        set_ip(&addrs[0], AF_INET6, p, be16(p + 32));
        set_ip(&addrs[1], AF_INET6, p + 16, be16(p + 34));
    }
    pp->src = &addrs[0];
    pp->dst = &addrs[1];
    pp->tlvs.data = (char *) p + need;
    pp->tlvs.len = body - need;
    return RX_OK;
}

/* ---- v1 ------------------------------------------------------------------ */

/* One space-delimited field of a v1 line: [*p, end) up to the next space
 * (or the end); false when empty. */
static bool
v1_field(const char **p, const char *end, rx_str_t *f)
{
    const char *s = *p, *sp = memchr(s, ' ', (size_t) (end - s));

    f->data = (char *) s;
    f->len = (size_t) ((sp ? sp : end) - s);
    *p = sp ? sp + 1 : end;
    return f->len > 0;
}

static bool
v1_addr(const rx_str_t *f, int family, unsigned char *out)
{
    char text[INET6_ADDRSTRLEN];

    if (f->len >= sizeof(text)) {
        return false;
    }
    memcpy(text, f->data, f->len);
    text[f->len] = '\0';
    return inet_pton(family, text, out) == 1;
}

static bool
v1_port(const rx_str_t *f, unsigned *port)
{
    rx_int_t n;

    if (f->len > 5) {
        return false;
    }
    n = rx_atoi(f->data, f->len);
    if (n < 0 || n > 65535) {
        return false;
    }
    *port = (unsigned) n;
    return true;
}

/* The line between "PROXY " and "\r\n": [p, end). */
static bool
parse_v1_line(const char *p, const char *end, rx_proxy_protocol_t *pp,
    rx_sockaddr_t *addrs)
{
    unsigned char src[16], dst[16];
    unsigned      sport, dport;
    int           family;
    rx_str_t      f[4];
    int           i;

    pp->version = 1;
    if ((size_t) (end - p) >= 7 && memcmp(p, "UNKNOWN", 7) == 0) {
        return true;                /* whatever follows is ignored (spec) */
    }
    if ((size_t) (end - p) < 5 || memcmp(p, "TCP", 3) != 0
        || (p[3] != '4' && p[3] != '6') || p[4] != ' ') {
        return false;
    }
    family = p[3] == '4' ? AF_INET : AF_INET6;
    p += 5;
    for (i = 0; i < 4; i++) {
        if (p == end || !v1_field(&p, end, &f[i])) {
            return false;
        }
    }
    if (p != end || end[-1] == ' ') {
        return false;               /* a fifth field, or a trailing space */
    }
    if (!v1_addr(&f[0], family, src) || !v1_addr(&f[1], family, dst)
        || !v1_port(&f[2], &sport) || !v1_port(&f[3], &dport)) {
        return false;
    }
    set_ip(&addrs[0], family, src, sport);
    set_ip(&addrs[1], family, dst, dport);
    pp->src = &addrs[0];
    pp->dst = &addrs[1];
    return true;
}

static rx_int_t
parse_v1(const char *buf, size_t len, rx_proxy_protocol_t *pp,
    rx_sockaddr_t *addrs, rx_pp_result_t *res)
{
    size_t      n = rx_min(len, (size_t) RX_PROXY_PROTOCOL_V1_MAX), i, line;
    const char *lf;

    if (memcmp(buf, V1_PREFIX, rx_min(len, sizeof(V1_PREFIX) - 1)) != 0) {
        goto broken;
    }
    lf = memchr(buf, '\n', n);
    /* a line of printable text up to its CR (whatever follows UNKNOWN
     * too): a byte that cannot be in one ends it at once, not at the
     * timeout, and a header is the same whether it came whole or cut */
    line = lf ? (size_t) (lf - buf) : n;
    for (i = 0; i < line; i++) {
        unsigned char ch = (unsigned char) buf[i];
        if ((ch < 0x20 || ch > 0x7e) && !(ch == '\r' && i == line - 1)) {
            goto broken;
        }
    }
    if (lf == NULL) {
        if (len >= RX_PROXY_PROTOCOL_V1_MAX) {
            goto broken;            /* no CRLF where it must be */
        }
        return RX_AGAIN;
    }
    i = (size_t) (lf - buf);
    if (i < sizeof(V1_PREFIX) || buf[i - 1] != '\r'
        || !parse_v1_line(buf + sizeof(V1_PREFIX) - 1, lf - 1, pp, addrs)) {
        goto broken;
    }
    res->len = i + 1;
    return RX_OK;

broken:
    res->error = RX_PP_BROKEN;
    return RX_ERROR;
}

rx_int_t
rx_proxy_protocol_parse(const char *buf, size_t len, rx_proxy_protocol_t *pp,
    rx_sockaddr_t addrs[2], rx_pp_result_t *res)
{
    memset(pp, 0, sizeof(*pp));
    memset(res, 0, sizeof(*res));
    if (len == 0) {
        return RX_AGAIN;
    }
    return buf[0] == v2_signature[0] ? parse_v2(buf, len, pp, addrs, res)
                                     : parse_v1(buf, len, pp, addrs, res);
}

/* ---- TLVs ---------------------------------------------------------------- */

typedef struct {
    const char *name;
    unsigned    type;
} tlv_name_t;

static const tlv_name_t tlv_names[] = {
    { "alpn", TLV_ALPN }, { "authority", TLV_AUTHORITY },
    { "unique_id", TLV_UNIQUE_ID }, { "ssl", TLV_SSL },
    { "netns", TLV_NETNS }, { NULL, 0 }
};

static const tlv_name_t tlv_ssl_names[] = {
    { "version", TLV_SSL_VERSION }, { "cn", TLV_SSL_CN },
    { "cipher", TLV_SSL_CIPHER }, { "sig_alg", TLV_SSL_SIG_ALG },
    { "key_alg", TLV_SSL_KEY_ALG }, { NULL, 0 }
};

/* The first TLV of type in [p, p + n). */
static rx_int_t
tlv_find(const char *p, size_t n, unsigned type, rx_str_t *value,
    const char **why)
{
    size_t len;

    while (n > 0) {
        if (n < 3) {
            goto broken;
        }
        len = be16(p + 1);
        if (n - 3 < len) {
            goto broken;
        }
        if ((unsigned char) p[0] == type) {
            value->data = (char *) p + 3;
            value->len = len;
            return RX_OK;
        }
        p += 3 + len;
        n -= 3 + len;
    }
    return RX_DECLINED;

broken:
    *why = "broken PROXY protocol TLV";
    return RX_ERROR;
}

/* "0xNN": one or two hex digits; -1 otherwise. */
static int
hex_type(const char *p, size_t n)
{
    int    v = 0;
    size_t i;

    if (n < 3 || n > 4 || p[0] != '0' || p[1] != 'x') {
        return -1;
    }
    for (i = 2; i < n; i++) {
        char c = p[i];
        int  d = c >= '0' && c <= '9' ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

rx_int_t
rx_proxy_protocol_tlv(const rx_proxy_protocol_t *pp, const rx_str_t *name,
    rx_str_t *value, char *buf, const char **why)
{
    const tlv_name_t *t = tlv_names;
    const char       *p = name->data, *tlvs = pp->tlvs.data;
    size_t            n = name->len, tlvs_len = pp->tlvs.len;
    rx_str_t          ssl;
    rx_int_t          rc;
    int               type;

    if (n > 4 && memcmp(p, "ssl_", 4) == 0) {
        rc = tlv_find(tlvs, tlvs_len, TLV_SSL, &ssl, why);
        if (rc != RX_OK) {
            return rc;
        }
        if (ssl.len < TLV_SSL_HEAD) {
            *why = "broken PROXY protocol TLV";
            return RX_ERROR;
        }
        p += 4;
        n -= 4;
        if (n == 6 && memcmp(p, "verify", 6) == 0) {
            const unsigned char *v = (const unsigned char *) ssl.data + 1;
            uint32_t verify = (uint32_t) v[0] << 24 | (uint32_t) v[1] << 16
                              | (uint32_t) v[2] << 8 | v[3];

            value->data = buf;
            value->len = (size_t) snprintf(buf, 16, "%u", verify);
            return RX_OK;
        }
        t = tlv_ssl_names;
        tlvs = ssl.data + TLV_SSL_HEAD;
        tlvs_len = ssl.len - TLV_SSL_HEAD;
    }
    if (n >= 2 && p[0] == '0' && p[1] == 'x') {
        type = hex_type(p, n);
        if (type < 0) {
            *why = "invalid PROXY protocol TLV";
            return RX_ERROR;
        }
        return tlv_find(tlvs, tlvs_len, (unsigned) type, value, why);
    }
    for ( /* void */ ; t->name; t++) {
        if (strlen(t->name) == n && memcmp(t->name, p, n) == 0) {
            return tlv_find(tlvs, tlvs_len, t->type, value, why);
        }
    }
    *why = "unknown PROXY protocol TLV";
    return RX_ERROR;
}
