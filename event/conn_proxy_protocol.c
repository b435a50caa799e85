/*
 * conn_proxy_protocol.c: reading a PROXY protocol header at the start of
 * a connection (listen ... proxy_protocol). It sits in the receive path
 * ahead of the transport: the connection's one multishot recv feeds it,
 * and what follows the header (HTTP, or a TLS ClientHello) goes on to
 * the transport as if it had arrived alone. A header cut into several
 * reads is gathered (nginx parses only its first read); the parser is
 * core/proxy_protocol.c.
 */
#include "event.h"

typedef struct {
    char        *buf;           /* a header that came in pieces (malloc,
                                   RX_PROXY_PROTOCOL_MAX), or NULL */
    size_t       len;
    const char  *saved_action;  /* the log action before ours */
} pp_read_t;

static void
pp_cleanup(void *data)
{
    pp_read_t *st = data;

    free(st->buf);
    st->buf = NULL;
}

rx_int_t
rx_conn_proxy_protocol_start(rx_conn_t *c)
{
    pp_read_t         *st = rx_pcalloc(c->pool, sizeof(pp_read_t));
    rx_pool_cleanup_t *cln = rx_pool_cleanup_add(c->pool, 0);

    if (st == NULL || cln == NULL) {
        rx_log_error(RX_LOG_ALERT, &c->log, 0, "cannot read the PROXY "
                     "protocol header: out of memory");
        return RX_ERROR;
    }
    cln->handler = pp_cleanup;
    cln->data = st;
    st->saved_action = c->log.action;
    c->log.action = "reading PROXY protocol";
    c->pp_read = st;
    return RX_OK;
}

bool
rx_conn_proxy_protocol_reading(const rx_conn_t *c)
{
    return c->pp_read != NULL;
}

/*
 * What nginx prints of a broken header: the text up to the first CR or
 * LF (all of it when the header is binary and starts with one), bytes
 * that are not printable as \xNN.
 */
static void
header_text(const char *data, size_t len, char *out, size_t size)
{
    size_t i, o = 0, n = rx_min(len, (size_t) RX_PROXY_PROTOCOL_V1_MAX);

    if (n > 0 && data[0] == '\r') {
        n = rx_min(n, (size_t) 16);            /* a v2 signature, or not */
    } else {
        for (i = 0; i < n && data[i] != '\r' && data[i] != '\n'; i++) {
            /* up to the end of the line */
        }
        n = i;
    }
    for (i = 0; i < n && o + 5 < size; i++) {
        unsigned char ch = (unsigned char) data[i];

        if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
            out[o++] = (char) ch;
        } else {
            o += (size_t) snprintf(out + o, size - o, "\\x%02X", ch);
        }
    }
    out[o] = '\0';
}

/* Logs why the header was refused, as nginx words it, and closes. */
static void
pp_fail(rx_conn_t *c, const char *data, size_t len, const rx_pp_result_t *res)
{
    char text[RX_PROXY_PROTOCOL_V1_MAX * 4 + 8];

    c->log.handler = rx_conn_log_client_server;
    switch (res->error) {
    case RX_PP_VERSION:
        rx_log_error(RX_LOG_ERR, &c->log, 0, "unknown PROXY protocol "
                     "version: %u", res->v2_version);
        break;
    case RX_PP_TOO_LARGE:
        rx_log_error(RX_LOG_ERR, &c->log, 0, "header is too large");
        break;
    case RX_PP_V2_ADDRESS:
        rx_log_error(RX_LOG_ERR, &c->log, 0, "broken header: the PROXY "
                     "protocol v2 address block is too short");
        break;
    default:
        header_text(data, len, text, sizeof(text));
        rx_log_error(RX_LOG_ERR, &c->log, 0, "broken header: \"%s\"", text);
        break;
    }
    c->log.handler = NULL;
    rx_conn_close(c);
}

/* The header is in: keep what it said (when it said where from), and
 * stop reading ahead. The addresses take RX_SOCKADDR_IP_SIZE each, not a
 * whole rx_sockaddr_t: a connection behind a balancer may idle long. */
static rx_int_t
pp_done(rx_conn_t *c, pp_read_t *st, const rx_proxy_protocol_t *pp)
{
    rx_proxy_protocol_t *kept = NULL;
    char                *p;

    if (pp->src != NULL) {
        kept = rx_palloc(c->pool, sizeof(*kept) + 2 * RX_SOCKADDR_IP_SIZE
                                  + pp->tlvs.len);
        if (kept == NULL) {
            return RX_ERROR;
        }
        p = (char *) (kept + 1);
        memcpy(p, pp->src, RX_SOCKADDR_IP_SIZE);
        memcpy(p + RX_SOCKADDR_IP_SIZE, pp->dst, RX_SOCKADDR_IP_SIZE);
        kept->src = (const rx_sockaddr_t *) p;
        kept->dst = (const rx_sockaddr_t *) (p + RX_SOCKADDR_IP_SIZE);
        kept->version = pp->version;
        kept->tlvs.data = p + 2 * RX_SOCKADDR_IP_SIZE;
        kept->tlvs.len = pp->tlvs.len;
        if (pp->tlvs.len) {
            memcpy(kept->tlvs.data, pp->tlvs.data, pp->tlvs.len);
        }
    }
    c->proxy_protocol = kept;
    c->log.action = st->saved_action;
    c->pp_read = NULL;
    return RX_OK;
}

/* The first read was part of a header only: keep it for the next. RX_AGAIN
 * means fewer bytes than the most a header has. */
static rx_int_t
pp_hold(rx_conn_t *c, pp_read_t *st, const char *data, size_t n)
{
    st->buf = malloc(RX_PROXY_PROTOCOL_MAX);
    if (st->buf == NULL) {
        rx_log_error(RX_LOG_ALERT, &c->log, errno, "malloc(%d) failed",
                     RX_PROXY_PROTOCOL_MAX);
        return RX_ERROR;
    }
    memcpy(st->buf, data, n);
    st->len = n;
    return RX_OK;
}

void
rx_conn_proxy_protocol_recv(rx_conn_t *c, const char *data, ssize_t len)
{
    pp_read_t           *st = c->pp_read;
    rx_proxy_protocol_t  pp;
    rx_sockaddr_t        addrs[2];
    rx_pp_result_t       res;
    const char          *p = data;
    size_t               n = len > 0 ? (size_t) len : 0, took = n;
    rx_int_t             rc;

    if (len <= 0) {
        if (len == 0 && st->len > 0) {
            /* the peer closed in the middle of the header */
            memset(&res, 0, sizeof(res));
            res.error = RX_PP_BROKEN;
            pp_fail(c, st->buf, st->len, &res);
            return;
        }
        /* nothing yet, then the end or an error: the protocol's usual */
        c->log.action = st->saved_action;
        c->pp_read = NULL;
        rx_conn_deliver(c, data, len);
        return;
    }
    if (st->buf) {
        /* gathered: never more than a header can be; the rest of data
         * is past it in any case */
        took = rx_min(n, RX_PROXY_PROTOCOL_MAX - st->len);
        memcpy(st->buf + st->len, data, took);
        st->len += took;
        p = st->buf;
        n = st->len;
    }
    rc = rx_proxy_protocol_parse(p, n, &pp, addrs, &res);
    if (rc == RX_ERROR) {
        pp_fail(c, p, n, &res);
        return;
    }
    if (rc == RX_AGAIN) {
        if (st->buf == NULL && pp_hold(c, st, data, n) != RX_OK) {
            rx_conn_close(c);
        }
        return;
    }
    if (pp_done(c, st, &pp) != RX_OK) {
        rx_log_error(RX_LOG_ALERT, &c->log, 0, "cannot keep the PROXY "
                     "protocol header: out of memory");
        rx_conn_close(c);
        return;
    }
    /* the bytes after the header, in order: those gathered, then the
     * rest of this read */
    if (n > res.len) {
        rx_conn_deliver(c, p + res.len, (ssize_t) (n - res.len));
    }
    if (took < (size_t) len && c->state == RX_CONN_ACTIVE) {
        rx_conn_deliver(c, data + took, len - (ssize_t) took);
    }
    free(st->buf);
    st->buf = NULL;
    st->len = 0;
}
