/*
 * test_sock_ntop.c: rx_sock_ntop (core/inet.c) prints an IPv4 address by
 * hand: every byte value in every position, the ports at the edges, and
 * every buffer size that cuts the text, each against what inet_ntop and
 * snprintf write (the text and the length returned, as snprintf cuts it).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include "core.h"
#include "inet.h"
#include "tap.h"

static rx_sockaddr_t
v4(uint32_t host_order, in_port_t port)
{
    rx_sockaddr_t a;

    memset(&a, 0, sizeof(a));
    a.u.sin.sin_family = AF_INET;
    a.u.sin.sin_addr.s_addr = htonl(host_order);
    a.u.sin.sin_port = htons(port);
    a.len = sizeof(struct sockaddr_in);
    return a;
}

/* What the libc writes: the reference. */
static size_t
reference(const rx_sockaddr_t *a, char *buf, size_t size, bool port)
{
    char text[INET_ADDRSTRLEN];
    int  n;

    inet_ntop(AF_INET, &a->u.sin.sin_addr, text, sizeof(text));
    n = port ? snprintf(buf, size, "%s:%u", text, ntohs(a->u.sin.sin_port))
             : snprintf(buf, size, "%s", text);
    return rx_min((size_t) n, size ? size - 1 : 0);
}

/* 0 when rx_sock_ntop agrees with the reference at this size. */
static int
differs(const rx_sockaddr_t *a, size_t size, bool port)
{
    char   got[64], want[64];
    size_t g, w;

    memset(got, 'x', sizeof(got));
    memset(want, 'x', sizeof(want));
    g = rx_sock_ntop(a, got, size, port);
    w = reference(a, want, size, port);
    if (g != w || memcmp(got, want, sizeof(got)) != 0) {
        diag("size %zu port %d: got %zu \"%.*s\", want %zu \"%.*s\"", size,
             port, g, (int) g, got, w, (int) w, want);
        return 1;
    }
    return 0;
}

int
main(void)
{
    static const in_port_t ports[] = { 0, 1, 9, 10, 99, 100, 8080, 65535 };
    char          buf[64];
    rx_sockaddr_t a;
    unsigned      v, pos, bad = 0;
    size_t        i, size;

    /* every byte value at every position, with and without a port */
    for (pos = 0; pos < 4; pos++) {
        for (v = 0; v < 256; v++) {
            a = v4(0x0a000001u ^ ((uint32_t) v << (8 * pos)),
                   ports[v % rx_nelems(ports)]);
            bad += differs(&a, 64, false) + differs(&a, 64, true);
        }
    }
    is_int(bad, 0, "every byte in every position, as inet_ntop prints it");

    bad = 0;
    for (i = 0; i < rx_nelems(ports); i++) {
        a = v4(0xffffffffu, ports[i]);
        bad += differs(&a, 64, true);
        a = v4(0, ports[i]);
        bad += differs(&a, 64, true);
    }
    is_int(bad, 0, "ports 0 to 65535 on the widest and narrowest address");

    /* a buffer too small: cut as snprintf cuts, NUL-terminated */
    bad = 0;
    a = v4(0xc0a80a64u, 65535);                 /* 192.168.10.100:65535 */
    for (size = 0; size <= 24; size++) {
        bad += differs(&a, size, true) + differs(&a, size, false);
    }
    is_int(bad, 0, "every cut size, as snprintf cuts");

    a = v4(0x7f000001u, 80);
    is_int(rx_sock_ntop(&a, buf, sizeof(buf), true), 12, "length returned");
    is_str(buf, "127.0.0.1:80", "127.0.0.1:80");
    return done();
}
