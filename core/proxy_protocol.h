/*
 * proxy_protocol.h: the PROXY protocol header (v1 text, v2 binary) that a
 * load balancer sends before a connection's first byte, parsed from
 * memory; no I/O. event/conn_proxy_protocol.c reads it from a connection,
 * http/http_proxy_protocol_vars.c gives it to $proxy_protocol_*.
 */
#ifndef RX_PROXY_PROTOCOL_H
#define RX_PROXY_PROTOCOL_H

#include "core.h"
#include "inet.h"

/* v1: "PROXY TCP6 <39> <39> 65535 65535\r\n", the longest line (spec). */
#define RX_PROXY_PROTOCOL_V1_MAX  107
/* v2: 16-byte header + addresses + TLVs, at most this in all (nginx's
 * NGX_PROXY_PROTOCOL_MAX_HEADER); the header may say up to 16 + 65535. */
#define RX_PROXY_PROTOCOL_MAX     4096

/* What a header said, kept for the connection's life (its pool). */
typedef struct rx_proxy_protocol_s {
    /* The client (src) and the address it reached (dst), with ports:
     * AF_INET or AF_INET6 (kept in RX_SOCKADDR_IP_SIZE bytes). Both NULL
     * when the header carries no address ("PROXY UNKNOWN", a v2 LOCAL
     * command, a v2 family other than TCP over IPv4/IPv6): the
     * connection is used as if it had come straight from the balancer. */
    const rx_sockaddr_t  *src;
    const rx_sockaddr_t  *dst;
    /* v2: the TLV bytes after the addresses, unchecked (looked up with
     * bounds by rx_proxy_protocol_tlv); empty for v1 */
    rx_str_t              tlvs;
    unsigned              version;        /* 1 or 2 */
} rx_proxy_protocol_t;

/* Why a header was refused (RX_ERROR from rx_proxy_protocol_parse). */
typedef enum {
    RX_PP_BROKEN = 1,       /* not a header, or a malformed v1 line (also
                               one without its CRLF in 107 bytes) */
    RX_PP_VERSION,          /* v2 signature with another version */
    RX_PP_TOO_LARGE,        /* v2 beyond RX_PROXY_PROTOCOL_MAX */
    RX_PP_V2_ADDRESS        /* v2: the address block is shorter than its
                               family needs */
} rx_pp_error_t;

typedef struct {
    size_t         len;         /* RX_OK: the header's bytes */
    rx_pp_error_t  error;       /* RX_ERROR: why */
    unsigned       v2_version;  /* RX_PP_VERSION: the version found */
} rx_pp_result_t;

/*
 * Parses a header at the start of buf[0 .. len). RX_OK: pp is filled (its
 * src and dst point into addrs, its tlvs into buf: copy them before
 * either goes) and res->len bytes are the header; what follows belongs to
 * the protocol after it. RX_AGAIN: every byte so far can start a header,
 * more are needed. RX_ERROR: res->error says why; no byte count makes it
 * right.
 */
rx_int_t rx_proxy_protocol_parse(const char *buf, size_t len,
    rx_proxy_protocol_t *pp, rx_sockaddr_t addrs[2], rx_pp_result_t *res);

/*
 * The value of a v2 TLV by the name nginx gives it: "alpn", "authority",
 * "unique_id", "ssl", "netns", "ssl_version", "ssl_cn", "ssl_cipher",
 * "ssl_sig_alg", "ssl_key_alg" (sub-TLVs of "ssl"), "ssl_verify" (the
 * verify field of "ssl", as a decimal in buf), "0xNN" (any type) and
 * "ssl_0xNN" (any sub-TLV). value points into pp->tlvs (or into buf, of
 * at least 16 bytes, for ssl_verify). RX_OK; RX_DECLINED: not present;
 * RX_ERROR with *why set: an unknown name ("unknown PROXY protocol TLV"),
 * or TLVs whose lengths run past their end ("broken PROXY protocol TLV").
 */
rx_int_t rx_proxy_protocol_tlv(const rx_proxy_protocol_t *pp,
    const rx_str_t *name, rx_str_t *value, char *buf, const char **why);

#endif /* RX_PROXY_PROTOCOL_H */
