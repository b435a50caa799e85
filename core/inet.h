/*
 * inet.h: socket addresses: parsing "host:port", "[v6]:port", "port",
 * "unix:/path" as listen, proxy_pass and server lines write them, and
 * printing them back; networks (CIDR) as allow, deny and set_real_ip_from
 * write them, and matching an address against them.
 */
#ifndef RX_INET_H
#define RX_INET_H

#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/un.h>

/* len first: a copy kept for an IP connection (its peer) may be cut
 * after the address it holds (RX_SOCKADDR_IP_SIZE), see event/conn.c */
typedef struct {
    socklen_t len;
    union {
        struct sockaddr      sa;
        struct sockaddr_in   sin;
        struct sockaddr_in6  sin6;
        struct sockaddr_un   sun;
    } u;
} rx_sockaddr_t;

#define RX_SOCKADDR_IP_SIZE  (offsetof(rx_sockaddr_t, u) \
                              + sizeof(struct sockaddr_in6))

/* Parses a listen-style address; default_port is used when none is given
 * and listen is true ("*:80" and "80" allowed). Returns NULL or an error
 * text ("invalid port", "host not found", ...). Hostnames are resolved;
 * every address found is pushed to addrs (rx_sockaddr_t). */
const char *rx_parse_addr(rx_pool_t *pool, const rx_str_t *text,
    in_port_t default_port, bool listen, rx_array_t *addrs);

/* Room for any address rx_sock_ntop writes (unix paths included). */
#define RX_SOCKADDR_STRLEN  (sizeof("unix:") + sizeof(((struct sockaddr_un *) 0)->sun_path))

/* Writes "1.2.3.4:80" / "[::1]:80" / "unix:/path"; returns length. */
size_t rx_sock_ntop(const rx_sockaddr_t *a, char *buf, size_t size, bool port);
bool rx_sockaddr_eq(const rx_sockaddr_t *a, const rx_sockaddr_t *b);

/*
 * An address written as text in a header (X-Forwarded-For, X-Real-IP):
 * "a.b.c.d", "v6", "[v6]", each optionally with ":port" ("[v6]:port"
 * for IPv6), as nginx's ngx_parse_addr_port; nothing is resolved. The
 * port is 0 when none is given (then $remote_port is empty). False when
 * the text is not one.
 */
bool rx_parse_addr_port(const char *text, size_t len, rx_sockaddr_t *a);

/* A network: IPv4 or IPv6 address and mask, or AF_UNIX for every
 * UNIX-domain peer (written "unix:"). */
typedef struct {
    sa_family_t  family;
    uint8_t      addr[16];    /* network order, host bits cleared */
    uint8_t      mask[16];
} rx_cidr_t;

/*
 * "a.b.c.d[/n]" or "v6[/n]" into cidr. RX_OK; RX_DONE when the address
 * had bits set beyond the prefix (they are cleared: nginx warns `low
 * address bits of X are meaningless`); RX_ERROR when it is not one.
 */
rx_int_t rx_ptocidr(const rx_str_t *text, rx_cidr_t *cidr);

/* Whether a is in one of the n networks. An IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) is matched as the IPv4 address it holds, as nginx. */
bool rx_cidr_match(const rx_sockaddr_t *a, const rx_cidr_t *cidrs,
    rx_uint_t n);

#endif /* RX_INET_H */
