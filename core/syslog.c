/*
 * syslog.c: syslog targets ("syslog:server=..."): their parameters, the
 * header nginx writes, and sending one datagram per message.
 *
 * The socket is a non-blocking datagram socket (UDP or a unix datagram
 * socket), connected at the first message and again after an error, so a
 * syslog server that is down or restarted costs one failed send() and
 * never blocks a worker's loop. A message that would block is dropped.
 */
#include "core.h"
#include <ctype.h>
#include "conf.h"
#include "cycle.h"
#include "clock.h"
#include "syslog.h"

#define SYSLOG_PORT      514
#define SYSLOG_TAG_MAX   32           /* RFC 3164 */

static const char *facilities[] = {
    "kern", "user", "mail", "daemon", "auth", "intern", "lpr", "news", "uucp",
    "clock", "authpriv", "ftp", "ntp", "audit", "alert", "cron", "local0",
    "local1", "local2", "local3", "local4", "local5", "local6", "local7"
};

/* nginx's level names, not syslog's "err" and "warning" */
static const char *severities[] = {
    "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug"
};

/* ---- configuration ---- */

static rx_int_t
find_name(const char *const *names, size_t n, const char *p, size_t len)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], p, len) == 0) {
            return (rx_int_t) i;
        }
    }
    return RX_ERROR;
}

static void
close_peer(void *data)
{
    rx_syslog_peer_t *peer = data;

    peer->busy = true;              /* the cycle is going: no more sends */
    if (peer->fd != -1) {
        close(peer->fd);
        peer->fd = -1;
    }
}

/* server=ADDR[:PORT] | server=unix:PATH; a name is resolved now and its
 * first address kept. */
static rx_int_t
parse_server(rx_conf_t *cf, rx_syslog_peer_t *peer, const char *p, size_t len)
{
    rx_str_t       text = { len, (char *) p };
    rx_array_t     addrs;
    rx_sockaddr_t *a;
    const char    *err;
    char           name[RX_SOCKADDR_STRLEN];

    if (peer->server.len) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "duplicate syslog \"server\"");
        return RX_ERROR;
    }
    if (rx_array_init(&addrs, cf->temp_pool, 2, sizeof(rx_sockaddr_t))
        != RX_OK) {
        return RX_ERROR;
    }
    err = rx_parse_addr(cf->temp_pool, &text, SYSLOG_PORT, false, &addrs);
    if (err != NULL || addrs.nelts == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in syslog server \"%.*s\"",
                          err ? err : "host not found", (int) len, p);
        return RX_ERROR;
    }
    a = addrs.elts;
    peer->server = a[0];
    peer->name.len = rx_sock_ntop(&peer->server, name, sizeof(name), true);
    peer->name.data = rx_pstrdup_c(cf->pool, name, peer->name.len);
    return peer->name.data ? RX_OK : RX_ERROR;
}

/* tag=: at most 32 letters, digits and underscores, as nginx allows. */
static rx_int_t
parse_tag(rx_conf_t *cf, rx_syslog_peer_t *peer, const char *p, size_t len)
{
    size_t i;

    if (peer->tag.data) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "duplicate syslog \"tag\"");
        return RX_ERROR;
    }
    if (len > SYSLOG_TAG_MAX) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "syslog tag length exceeds 32");
        return RX_ERROR;
    }
    for (i = 0; i < len; i++) {
        if (!isalnum((unsigned char) p[i]) && p[i] != '_') {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "syslog \"tag\" only allows "
                              "alphanumeric characters and underscore");
            return RX_ERROR;
        }
    }
    peer->tag.data = rx_pstrdup_c(cf->pool, p, len);
    peer->tag.len = len;
    return peer->tag.data ? RX_OK : RX_ERROR;
}

/* facility= or severity=: one of names, once. */
static rx_int_t
parse_enum(rx_conf_t *cf, rx_uint_t *field, const char *what,
    const char *const *names, size_t n, const char *p, size_t len)
{
    rx_int_t i;

    if (*field != RX_CONF_UNSET_UINT) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "duplicate syslog \"%s\"", what);
        return RX_ERROR;
    }
    i = find_name(names, n, p, len);
    if (i == RX_ERROR) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unknown syslog %s \"%.*s\"",
                          what, (int) len, p);
        return RX_ERROR;
    }
    *field = (rx_uint_t) i;
    return RX_OK;
}

/* One comma-separated parameter p[0..len). */
static rx_int_t
parse_param(rx_conf_t *cf, rx_syslog_peer_t *peer, const char *p, size_t len)
{
    if (len >= 7 && strncmp(p, "server=", 7) == 0) {
        return parse_server(cf, peer, p + 7, len - 7);
    }
    if (len >= 9 && strncmp(p, "facility=", 9) == 0) {
        return parse_enum(cf, &peer->facility, "facility", facilities,
                          rx_nelems(facilities), p + 9, len - 9);
    }
    if (len >= 9 && strncmp(p, "severity=", 9) == 0) {
        return parse_enum(cf, &peer->severity, "severity", severities,
                          rx_nelems(severities), p + 9, len - 9);
    }
    if (len >= 4 && strncmp(p, "tag=", 4) == 0) {
        return parse_tag(cf, peer, p + 4, len - 4);
    }
    if (len == 10 && strncmp(p, "nohostname", 10) == 0) {
        peer->nohostname = true;
        return RX_OK;
    }
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unknown syslog parameter \"%.*s\"",
                      (int) len, p);
    return RX_ERROR;
}

rx_syslog_peer_t *
rx_syslog_process_conf(rx_conf_t *cf, const rx_str_t *value)
{
    rx_syslog_peer_t  *peer = rx_pcalloc(cf->pool, sizeof(rx_syslog_peer_t));
    rx_pool_cleanup_t *cln;
    const char        *p, *end, *comma;

    if (peer == NULL) {
        return NULL;
    }
    peer->fd = -1;
    peer->facility = RX_CONF_UNSET_UINT;
    peer->severity = RX_CONF_UNSET_UINT;
    p = value->data + sizeof("syslog:") - 1;
    end = value->data + value->len;
    for ( ;; ) {
        comma = memchr(p, ',', (size_t) (end - p));
        if (parse_param(cf, peer, p, (size_t) ((comma ? comma : end) - p))
            != RX_OK) {
            return NULL;
        }
        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }
    if (peer->server.len == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "no syslog server specified");
        return NULL;
    }
    rx_conf_init_uint(peer->facility, 23);              /* local7 */
    rx_conf_init_uint(peer->severity, 6);               /* info */
    if (peer->tag.data == NULL) {
        rx_str_set(&peer->tag, RINGX_NAME);
    }
    peer->hostname = &cf->cycle->hostname;
    peer->log = &cf->cycle->new_log;

    cln = rx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        return NULL;
    }
    cln->handler = close_peer;
    cln->data = peer;
    return peer;
}

/* ---- sending ---- */

size_t
rx_syslog_header(const rx_syslog_peer_t *peer, rx_uint_t severity, char *buf)
{
    int n;

    if (peer->nohostname) {
        n = snprintf(buf, RX_SYSLOG_HEADER_MAX, "<%u>%s %.*s: ",
                     (unsigned) (peer->facility * 8 + severity), rx_syslog_time,
                     (int) peer->tag.len, peer->tag.data);
    } else {
        n = snprintf(buf, RX_SYSLOG_HEADER_MAX, "<%u>%s %.*s %.*s: ",
                     (unsigned) (peer->facility * 8 + severity), rx_syslog_time,
                     (int) rx_min(peer->hostname->len, 255),
                     peer->hostname->data, (int) peer->tag.len, peer->tag.data);
    }
    return n < 0 ? 0 : rx_min((size_t) n, RX_SYSLOG_HEADER_MAX - 1);
}

/* ", server: ADDR" after a failure's "while logging to syslog". */
static size_t
server_ctx(rx_log_t *log, char *buf, size_t len)
{
    rx_syslog_peer_t *peer = log->data;
    int               n;

    if (len == 0) {
        return 0;
    }
    n = snprintf(buf, len, ", server: %s", peer->name.data);
    return n < 0 ? 0 : rx_min((size_t) n, len - 1);
}

/* Logs a failure to the cycle's error log (this peer is busy and skips
 * it), at most once a second per peer and process. */
static void
report(rx_syslog_peer_t *peer, unsigned level, int err, const char *what)
{
    rx_log_t log;

    if (!rx_log_limit_allow(&peer->limit, 1000)) {
        return;
    }
    log = *peer->log;
    log.connection = 0;
    log.action = "logging to syslog";
    log.handler = server_ctx;
    log.data = peer;
    rx_log_error(level, &log, err, "%s", what);
}

static rx_int_t
connect_peer(rx_syslog_peer_t *peer)
{
    int fd, err;

    fd = socket(peer->server.u.sa.sa_family,
                SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        report(peer, RX_LOG_ALERT, errno, "socket() failed");
        return RX_ERROR;
    }
    if (connect(fd, &peer->server.u.sa, peer->server.len) == -1) {
        err = errno;
        close(fd);
        report(peer, RX_LOG_ALERT, err, "connect() failed");
        return RX_ERROR;
    }
    peer->fd = fd;
    return RX_OK;
}

/* The level nginx gives a failed send(): the peer is away (error), or
 * something is wrong here (alert). */
static unsigned
send_error_level(int err)
{
    switch (err) {
    case ECONNREFUSED: case ECONNRESET: case ENOTCONN: case ETIMEDOUT:
    case ENETDOWN: case ENETUNREACH: case EHOSTDOWN: case EHOSTUNREACH:
        return RX_LOG_ERR;
    default:
        return RX_LOG_ALERT;
    }
}

ssize_t
rx_syslog_send(rx_syslog_peer_t *peer, const char *buf, size_t len)
{
    ssize_t n = -1;
    int     err;

    if (peer->busy) {
        return -1;
    }
    peer->busy = true;
    if (peer->fd == -1 && connect_peer(peer) != RX_OK) {
        goto done;
    }
    do {
        n = send(peer->fd, buf, len, MSG_NOSIGNAL);
    } while (n == -1 && errno == EINTR);
    if (n == -1 && errno != EAGAIN) {
        /* a refused datagram reports the ICMP of an earlier one: connect
         * again next time, the server may be back */
        err = errno;
        close(peer->fd);
        peer->fd = -1;
        report(peer, send_error_level(err), err, "send() failed");
    }

done:
    peer->busy = false;
    return n;
}

void
rx_syslog_write_error(rx_syslog_peer_t *peer, unsigned level,
    const char *line, size_t len)
{
    char   msg[RX_SYSLOG_HEADER_MAX + RX_MAX_ERROR_STR];
    size_t head;

    if (peer->busy) {
        return;
    }
    head = rx_syslog_header(peer, level ? level - 1 : 0, msg);
    len = rx_min(len, sizeof(msg) - head);
    memcpy(msg + head, line, len);
    (void) rx_syslog_send(peer, msg, head + len);
}
