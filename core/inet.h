/*
 * inet.h: socket addresses: parsing "host:port", "[v6]:port", "port",
 * "unix:/path" as listen, proxy_pass and server lines write them, and
 * printing them back.
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

#endif /* RX_INET_H */
