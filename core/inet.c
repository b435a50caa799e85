/*
 * inet.c: parsing and printing socket addresses for listen, proxy_pass and
 * upstream server lines.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include "core.h"
#include "inet.h"

static const char *
parse_port(const char *p, size_t n, in_port_t *port)
{
    rx_int_t v = rx_atoi(p, n);

    if (v < 1 || v > 65535) {
        return "invalid port";
    }
    *port = (in_port_t) v;
    return NULL;
}

static const char *
push_unix(rx_pool_t *pool, const rx_str_t *text, rx_array_t *addrs)
{
    rx_sockaddr_t *a;
    size_t         n = text->len - 5;

    if (n == 0) {
        return "no path in the unix domain socket";
    }
    a = rx_array_push(addrs);
    if (a == NULL) {
        return "out of memory";
    }
    memset(a, 0, sizeof(*a));
    if (n >= sizeof(a->u.sun.sun_path)) {
        addrs->nelts--;
        return "too long path in the unix domain socket";
    }
    a->u.sun.sun_family = AF_UNIX;
    memcpy(a->u.sun.sun_path, text->data + 5, n);
    a->len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1);
    return NULL;
}

static const char *
push_ip(rx_array_t *addrs, const struct sockaddr *sa, socklen_t len,
    in_port_t port)
{
    rx_sockaddr_t *a = rx_array_push(addrs);

    if (a == NULL) {
        return "out of memory";
    }
    memset(a, 0, sizeof(*a));
    memcpy(&a->u.sa, sa, len);
    a->len = len;
    if (sa->sa_family == AF_INET) {
        a->u.sin.sin_port = htons(port);
    } else {
        a->u.sin6.sin6_port = htons(port);
    }
    return NULL;
}

/* "[v6]" or "[v6]:port": the host between the brackets (cut to size),
 * and the port when one follows. */
static const char *
split_bracketed(const rx_str_t *text, char *host, size_t size,
    in_port_t *port)
{
    const char *p = text->data, *last = text->data + text->len;
    const char *close = memchr(p, ']', text->len);
    size_t      hlen;

    if (close == NULL) {
        return "invalid IPv6 address";
    }
    hlen = (size_t) (close - p - 1);
    memcpy(host, p + 1, rx_min(hlen, size - 1));
    host[rx_min(hlen, size - 1)] = '\0';
    if (close + 1 < last) {
        if (close[1] != ':') {
            return "invalid IPv6 address";
        }
        return parse_port(close + 2, (size_t) (last - close - 2), port);
    }
    return *port == 0 ? "no port" : NULL;
}

/*
 * "host", "host:port", "*:port", ":port", or (listen) a bare "port": the
 * host and the port. *every is set for an empty host or "*": every
 * address, without a lookup.
 */
static const char *
split_host_port(const rx_str_t *text, bool listen, char *host, size_t size,
    in_port_t *port, bool *every)
{
    const char *p = text->data, *last = text->data + text->len, *colon;
    const char *err;
    size_t      hlen;

    colon = memrchr(p, ':', text->len);
    if (colon) {
        if ((err = parse_port(colon + 1, (size_t) (last - colon - 1), port))) {
            return err;
        }
        hlen = (size_t) (colon - p);
    } else if (listen && rx_atoi(p, text->len) != -1) {
        /* "listen 8080": a bare port means every address */
        if ((err = parse_port(p, text->len, port))) {
            return err;
        }
        hlen = 0;
    } else {
        if (*port == 0) {
            return "no port";
        }
        hlen = text->len;
    }
    if (hlen >= size) {
        return "host name is too long";
    }
    memcpy(host, p, hlen);
    host[hlen] = '\0';
    *every = hlen == 0 || (hlen == 1 && host[0] == '*');
    return NULL;
}

/* Every address of host, each once, with port. The resolver is the
 * system's (getaddrinfo): this runs while the configuration loads. */
static const char *
resolve_host(const char *host, in_port_t port, rx_array_t *addrs)
{
    struct addrinfo hints, *res, *ai;
    const char     *err;
    int             rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc == EAI_NONAME || rc == EAI_AGAIN || rc == EAI_FAIL
        || rc == EAI_NODATA || rc == EAI_ADDRFAMILY) {
        /* loopback-only hosts lack AI_ADDRCONFIG families: retry without */
        hints.ai_flags = 0;
        rc = getaddrinfo(host, NULL, &hints, &res);
    }
    if (rc != 0) {
        return "host not found";
    }
    err = NULL;
    for (ai = res; ai && err == NULL; ai = ai->ai_next) {
        bool dup = false;
        rx_uint_t i;
        rx_sockaddr_t *seen = addrs->elts, tmp;

        memset(&tmp, 0, sizeof(tmp));
        memcpy(&tmp.u.sa, ai->ai_addr, ai->ai_addrlen);
        tmp.len = ai->ai_addrlen;
        if (ai->ai_family == AF_INET) tmp.u.sin.sin_port = htons(port);
        else tmp.u.sin6.sin6_port = htons(port);
        for (i = 0; i < addrs->nelts; i++) {
            if (rx_sockaddr_eq(&seen[i], &tmp)) dup = true;
        }
        if (!dup) {
            err = push_ip(addrs, ai->ai_addr, ai->ai_addrlen, port);
        }
    }
    freeaddrinfo(res);
    return err;
}

const char *
rx_parse_addr(rx_pool_t *pool, const rx_str_t *text, in_port_t default_port,
    bool listen, rx_array_t *addrs)
{
    char        host[256];
    const char *err;
    in_port_t   port = default_port;
    bool        every = false;

    if (text->len >= 5 && strncasecmp(text->data, "unix:", 5) == 0) {
        return push_unix(pool, text, addrs);
    }
    if (text->len == 0) {
        return "empty address";
    }
    if (text->data[0] == '[') {
        err = split_bracketed(text, host, sizeof(host), &port);
    } else {
        err = split_host_port(text, listen, host, sizeof(host), &port, &every);
    }
    if (err != NULL) {
        return err;
    }
    if (every) {
        struct sockaddr_in any;

        memset(&any, 0, sizeof(any));
        any.sin_family = AF_INET;
        any.sin_addr.s_addr = htonl(INADDR_ANY);
        return push_ip(addrs, (struct sockaddr *) &any, sizeof(any), port);
    }
    return resolve_host(host, port, addrs);
}

/* A byte in decimal at p; returns the end. */
static inline char *
put_octet(char *p, unsigned v)
{
    if (v >= 100) {
        *p++ = (char) ('0' + v / 100);
        v %= 100;
        *p++ = (char) ('0' + v / 10);
    } else if (v >= 10) {
        *p++ = (char) ('0' + v / 10);
    }
    *p++ = (char) ('0' + v % 10);
    return p;
}

/* An IPv4 address (with ":port"), written by hand: $remote_addr and its
 * kin are printed on every request that logs or passes them, and
 * inet_ntop's and snprintf's machinery is most of their cost. */
static size_t
ntop4(const struct sockaddr_in *sin, char *buf, size_t size, bool port)
{
    const unsigned char *o = (const unsigned char *) &sin->sin_addr.s_addr;
    char                 text[sizeof("255.255.255.255:65535")], *p = text;
    size_t               n;
    int                  i;

    for (i = 0; i < 4; i++) {
        p = put_octet(p, o[i]);
        *p++ = '.';
    }
    p--;                                    /* the last '.' */
    if (port) {
        *p++ = ':';
        p = rx_put_uint(p, ntohs(sin->sin_port), 1);
    }
    n = (size_t) (p - text);
    if (size == 0) {
        return 0;
    }
    n = rx_min(n, size - 1);                /* as snprintf cuts it */
    memcpy(buf, text, n);
    buf[n] = '\0';
    return n;
}

size_t
rx_sock_ntop(const rx_sockaddr_t *a, char *buf, size_t size, bool port)
{
    char text[INET6_ADDRSTRLEN];
    int  n = 0;

    switch (a->u.sa.sa_family) {
    case AF_INET:
        return ntop4(&a->u.sin, buf, size, port);
    case AF_INET6:
        inet_ntop(AF_INET6, &a->u.sin6.sin6_addr, text, sizeof(text));
        n = port ? snprintf(buf, size, "[%s]:%u", text, ntohs(a->u.sin6.sin6_port))
                 : snprintf(buf, size, "%s", text);
        break;
    case AF_UNIX: {
        /* an unbound client socket has no path: the length says so */
        size_t path = a->len > offsetof(struct sockaddr_un, sun_path)
                      ? a->len - offsetof(struct sockaddr_un, sun_path) : 0;
        n = snprintf(buf, size, "unix:%.*s", (int) strnlen(a->u.sun.sun_path,
                     rx_min(path, sizeof(a->u.sun.sun_path))), a->u.sun.sun_path);
        break;
    }
    }
    if (n < 0) {
        return 0;
    }
    return rx_min((size_t) n, size ? size - 1 : 0);
}

bool
rx_sockaddr_eq(const rx_sockaddr_t *a, const rx_sockaddr_t *b)
{
    if (a->u.sa.sa_family != b->u.sa.sa_family) {
        return false;
    }
    switch (a->u.sa.sa_family) {
    case AF_INET:
        return a->u.sin.sin_port == b->u.sin.sin_port
               && a->u.sin.sin_addr.s_addr == b->u.sin.sin_addr.s_addr;
    case AF_INET6:
        return a->u.sin6.sin6_port == b->u.sin6.sin6_port
               && memcmp(&a->u.sin6.sin6_addr, &b->u.sin6.sin6_addr, 16) == 0;
    case AF_UNIX:
        return strcmp(a->u.sun.sun_path, b->u.sun.sun_path) == 0;
    }
    return false;
}

/* ---- text addresses in headers ------------------------------------------ */

static bool
addr_only(const char *text, size_t len, rx_sockaddr_t *a)
{
    char buf[INET6_ADDRSTRLEN];

    if (len == 0 || len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    memset(a, 0, sizeof(*a));
    if (inet_pton(AF_INET, buf, &a->u.sin.sin_addr) == 1) {
        a->u.sin.sin_family = AF_INET;
        a->len = sizeof(struct sockaddr_in);
        return true;
    }
    if (inet_pton(AF_INET6, buf, &a->u.sin6.sin6_addr) == 1) {
        a->u.sin6.sin6_family = AF_INET6;
        a->len = sizeof(struct sockaddr_in6);
        return true;
    }
    return false;
}

bool
rx_parse_addr_port(const char *text, size_t len, rx_sockaddr_t *a)
{
    const char *last = text + len, *p;
    rx_int_t    port;

    if (addr_only(text, len, a)) {
        return true;                /* "v6" with its colons, or "v4" */
    }
    if (len && text[0] == '[') {
        p = memchr(text, ']', len);
        if (p == last - 1) {
            return addr_only(text + 1, len - 2, a)
                   && a->u.sa.sa_family == AF_INET6;
        }
        if (p == NULL || p[1] != ':') {
            return false;
        }
        if (!addr_only(text + 1, (size_t) (p - text - 1), a)
            || a->u.sa.sa_family != AF_INET6) {
            return false;
        }
        p++;
    } else {
        p = memchr(text, ':', len);
        if (p == NULL || !addr_only(text, (size_t) (p - text), a)
            || a->u.sa.sa_family != AF_INET) {
            return false;
        }
    }
    port = rx_atoi(p + 1, (size_t) (last - p - 1));
    if (port < 1 || port > 65535) {
        return false;
    }
    if (a->u.sa.sa_family == AF_INET) {
        a->u.sin.sin_port = htons((in_port_t) port);
    } else {
        a->u.sin6.sin6_port = htons((in_port_t) port);
    }
    return true;
}

/* ---- networks ------------------------------------------------------------ */

rx_int_t
rx_ptocidr(const rx_str_t *text, rx_cidr_t *cidr)
{
    char      buf[INET6_ADDRSTRLEN + 8], *slash;
    rx_int_t  prefix, bits, i, rc = RX_OK;

    if (text->len >= sizeof(buf)) {
        return RX_ERROR;
    }
    memcpy(buf, text->data, text->len);
    buf[text->len] = '\0';
    slash = strchr(buf, '/');
    if (slash) {
        *slash++ = '\0';
    }
    memset(cidr, 0, sizeof(*cidr));
    if (inet_pton(AF_INET, buf, cidr->addr) == 1) {
        cidr->family = AF_INET;
        bits = 32;
    } else if (inet_pton(AF_INET6, buf, cidr->addr) == 1) {
        cidr->family = AF_INET6;
        bits = 128;
    } else {
        return RX_ERROR;
    }
    prefix = bits;
    if (slash) {
        prefix = rx_atoi(slash, strlen(slash));
        if (prefix < 0 || prefix > bits) {
            return RX_ERROR;
        }
    }
    for (i = 0; i < bits / 8; i++) {
        rx_int_t left = prefix - i * 8;
        uint8_t  m = left >= 8 ? 0xff : left <= 0 ? 0
                     : (uint8_t) (0xff << (8 - left));

        cidr->mask[i] = m;
        if (cidr->addr[i] & ~m) {
            cidr->addr[i] &= m;
            rc = RX_DONE;
        }
    }
    return rc;
}

bool
rx_cidr_match(const rx_sockaddr_t *a, const rx_cidr_t *cidrs, rx_uint_t n)
{
    sa_family_t    family = a->u.sa.sa_family;
    const uint8_t *addr = NULL;
    rx_uint_t      i, k, bytes;

    if (family == AF_INET) {
        addr = (const uint8_t *) &a->u.sin.sin_addr;
    } else if (family == AF_INET6) {
        addr = a->u.sin6.sin6_addr.s6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&a->u.sin6.sin6_addr)) {
            family = AF_INET;
            addr += 12;
        }
    }
    bytes = family == AF_INET ? 4 : 16;
    for (i = 0; i < n; i++) {
        if (cidrs[i].family != family) {
            continue;
        }
        if (family == AF_UNIX) {
            return true;
        }
        for (k = 0; k < bytes; k++) {
            if ((addr[k] & cidrs[i].mask[k]) != cidrs[i].addr[k]) {
                break;
            }
        }
        if (k == bytes) {
            return true;
        }
    }
    return false;
}
