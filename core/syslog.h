/*
 * syslog.h: syslog targets of error_log and access_log ("syslog:server=..."
 * as nginx writes them): the parameters, the RFC 3164 header nginx sends,
 * and one datagram per message over a lazily connected socket.
 */
#ifndef RX_SYSLOG_H
#define RX_SYSLOG_H

#include "inet.h"

/* Room for the header: "<PRI>Mmm dd hh:mm:ss host tag: " at its longest. */
#define RX_SYSLOG_HEADER_MAX  (sizeof("<255>Jan 01 00:00:00 ") - 1            \
                               + 255 + 1 + 32 + 2)

struct rx_syslog_peer_s {
    rx_uint_t        facility;    /* 0 (kern) .. 23 (local7) */
    rx_uint_t        severity;    /* 0 (emerg) .. 7 (debug); access_log's */
    rx_str_t         tag;         /* 1..32 of [A-Za-z0-9_] */
    bool             nohostname;  /* leave HOSTNAME out of the header */
    bool             busy;        /* sending: a failure logged meanwhile
                                     must not come back to this peer */
    int              fd;          /* -1: connect before the next send */
    rx_sockaddr_t    server;      /* resolved at load */
    rx_str_t         name;        /* "1.2.3.4:514" / "unix:/dev/log" */
    const rx_str_t  *hostname;    /* the cycle's */
    rx_log_t        *log;         /* the cycle's error log, for failures */
    rx_log_limit_t   limit;       /* failures are logged once a second */
};

/* Parses value ("syslog:server=...,facility=...,severity=...,tag=...,
 * nohostname") into a peer allocated from cf->pool whose socket is closed
 * with that pool. Returns NULL after logging nginx's message. The server's
 * name is resolved here, as nginx does. */
rx_syslog_peer_t *rx_syslog_process_conf(rx_conf_t *cf, const rx_str_t *value);

/* Writes the header for severity at buf (RX_SYSLOG_HEADER_MAX of room);
 * returns its length. The time is the cached one (core/clock.h). */
size_t rx_syslog_header(const rx_syslog_peer_t *peer, rx_uint_t severity,
    char *buf);

/* Sends len bytes as one datagram, connecting first when needed. Returns
 * the bytes sent, or -1: the peer is busy, the socket would block (the
 * message is dropped), or an error, which is logged (at most once a second)
 * and closes the socket so that the next message connects again. Never
 * blocks. */
ssize_t rx_syslog_send(rx_syslog_peer_t *peer, const char *buf, size_t len);

/* The error-log writer: line (without its '\n') at a level from log.h,
 * whose severity it takes. Failures are not reported to this peer. */
void rx_syslog_write_error(rx_syslog_peer_t *peer, unsigned level,
    const char *line, size_t len);

#endif /* RX_SYSLOG_H */
