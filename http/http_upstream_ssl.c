/*
 * http_upstream_ssl.c: TLS to an upstream peer (proxy_pass https://): the
 * handshake started on a fresh connection (SNI, the name the certificate
 * must carry, a session offered for resumption), each peer's last session
 * kept per worker, and nginx's log lines when the handshake fails because
 * of the peer's certificate. The TLS itself is event/tls.c's; the SSL_CTX
 * comes from the protocol's directives (modules/proxy_ssl.c).
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"

#if (RX_HAVE_OPENSSL)
#include <arpa/inet.h>
#include <openssl/x509v3.h>
#include "tls.h"

/* A peer's last session, and what it was made with: it is offered again
 * only to the same SSL_CTX for the same name, so that a session verified
 * under one location's settings never skips another's verification. */
typedef struct {
    SSL_SESSION  *session;
    SSL_CTX      *ctx;
    char          name[];
} ssl_session_t;

/* A literal IPv4 or IPv6 address: RFC 6066 forbids it as SNI, and it is
 * matched against the certificate's IP addresses, not its DNS names. */
static bool
is_ip(const char *name)
{
    unsigned char buf[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, name, buf) == 1
           || inet_pton(AF_INET6, name, buf) == 1;
}

/*
 * The name to send and verify: proxy_ssl_name's value, else the host of
 * proxy_pass; as nginx, without a port, and an IPv6 literal without its
 * brackets. NUL-terminated, from the request's pool; NULL when empty.
 */
static char *
ssl_name(rx_http_upstream_t *u)
{
    rx_str_t  name = u->ssl_host;
    char     *end, *p;

    if (u->ssl->name
        && rx_http_complex_value(u->r, u->ssl->name, &name) != RX_OK) {
        return NULL;
    }
    if (name.len && name.data[0] == '[') {
        end = memchr(name.data, ']', name.len);
        if (end) {
            name.data++;
            name.len = (size_t) (end - name.data);
        }
    } else if ((p = memchr(name.data, ':', name.len)) != NULL
               && memchr(p + 1, ':', name.len - (size_t) (p + 1 - name.data))
                  == NULL) {
        name.len = (size_t) (p - name.data);    /* host:port, not an IPv6 */
    }
    if (name.len == 0) {
        return NULL;
    }
    return rx_pstrdup_c(u->r->pool, name.data, name.len);
}

rx_int_t
rx_http_upstream_ssl_start(rx_http_upstream_t *u)
{
    rx_conn_t          *c = u->uc->c;
    X509_VERIFY_PARAM  *param;
    SSL_SESSION        *session = NULL;
    const char         *sni = NULL;
    char               *name;
    bool                ip;

    rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_HANDSHAKING);
    name = ssl_name(u);
    ip = name && is_ip(name);
    if (u->ssl->server_name && name && !ip) {
        sni = name;
    }
    if (u->ssl->session_reuse && u->peer && u->peer->ssl_session) {
        ssl_session_t *s = u->peer->ssl_session;

        if (s->ctx == u->ssl->ctx && strcmp(s->name, name ? name : "") == 0) {
            session = s->session;
        }
    }
    u->uc->ssl_name = rx_pstrdup_c(c->pool, name ? name : "",
                                   name ? strlen(name) : 0);
    if (u->uc->ssl_name == NULL
        || rx_tls_client_start(c, u->ssl->ctx, sni, session) != RX_OK) {
        return RX_ERROR;
    }
    u->uc->tls = true;
    if (!u->ssl->verify) {
        return RX_OK;
    }
    /*
     * The name is checked during the handshake (the CTX verifies the peer,
     * so a bad certificate fails it before a byte of the request goes
     * out), whether or not it went as SNI; an IP address as an address.
     * Set here, after tls.c may have set the SNI as a host name: the
     * certificate is only examined once the server answers.
     */
    param = SSL_get0_param(rx_tls_ssl(c));
    if (name == NULL) {
        rx_http_upstream_log_error(u, RX_LOG_ERR, 0,
                                   "empty upstream SSL name to verify");
        return RX_ERROR;
    }
    X509_VERIFY_PARAM_set_hostflags(param,
                                    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (ip) {
        if (X509_VERIFY_PARAM_set1_host(param, NULL, 0) != 1
            || X509_VERIFY_PARAM_set1_ip_asc(param, name) != 1) {
            goto failed;
        }
    } else if (X509_VERIFY_PARAM_set1_host(param, name, 0) != 1) {
        goto failed;
    }
    return RX_OK;

failed:
    rx_tls_log_error(RX_LOG_ERR, &c->log, 0,
                     "X509_VERIFY_PARAM_set1_host(\"%s\") failed", name);
    return RX_ERROR;
}

/*
 * The TLS connection failed (res: -EPROTO) or closed during the handshake:
 * logs why, in nginx's words, with the request's context (tls.c keeps the
 * text: rx_tls_error). A name mismatch names the name verified, which is
 * not always the SNI. Returns false when there is nothing TLS to say.
 */
bool
rx_http_upstream_ssl_error(rx_http_upstream_t *u, ssize_t res)
{
    rx_conn_t  *c = u->uc->c;
    SSL        *ssl = rx_tls_ssl(c);
    const char *why = rx_tls_error(c);
    bool        handshaking = !rx_tls_handshake_done(c);
    long        rc;
    char        msg[512];

    if (handshaking) {
        rx_http_upstream_set_phase(u, RX_HTTP_UPSTREAM_HANDSHAKING);
    }
    if (handshaking && ssl && u->ssl->verify) {
        rc = SSL_get_verify_result(ssl);
        if (rc == X509_V_ERR_HOSTNAME_MISMATCH
            || rc == X509_V_ERR_IP_ADDRESS_MISMATCH) {
            snprintf(msg, sizeof(msg), "upstream SSL certificate does not "
                     "match \"%s\"", c->data
                     && ((rx_http_upstream_conn_t *) c->data)->ssl_name
                     ? ((rx_http_upstream_conn_t *) c->data)->ssl_name : "");
            rx_http_upstream_log_error(u, RX_LOG_ERR, 0, msg);
            return true;
        }
    }
    if (why) {
        rx_http_upstream_log_error(u, RX_LOG_ERR, 0, why);
        return true;
    }
    if (handshaking) {
        rx_http_upstream_log_error(u, RX_LOG_ERR, res < 0 ? (int) -res : 0,
                                   "peer closed connection in SSL handshake");
        return true;
    }
    return false;
}

/* The worker's cycle goes: the peers' sessions with it. */
static void
free_session(void *data)
{
    rx_http_upstream_peer_t *peer = data;
    ssl_session_t           *s = peer->ssl_session;

    if (s) {
        SSL_SESSION_free(s->session);
        free(s);
        peer->ssl_session = NULL;
    }
}

/*
 * OpenSSL has a session to keep (after a full handshake; in TLS 1.3 each
 * ticket): a copy becomes the peer's, replacing the one before. A copy,
 * because OpenSSL marks a connection's own session not resumable when the
 * SSL is freed without a shutdown (a connection closed after its
 * response). Returns 0: OpenSSL keeps its reference to the original.
 */
static int
new_session(SSL *ssl, SSL_SESSION *session)
{
    rx_conn_t               *c = rx_tls_conn(ssl);
    rx_http_upstream_conn_t *uc = c ? c->data : NULL;
    rx_http_upstream_peer_t *peer = uc ? uc->peer : NULL;
    ssl_session_t           *s, *old;
    size_t                   n;

    if (peer == NULL || peer->transient || uc->ssl_name == NULL) {
        return 0;                 /* a request's own peer: nothing kept */
    }
    if (peer->ssl_session == NULL) {
        /* the peer's first session in this worker */
        rx_pool_cleanup_t *cln = rx_pool_cleanup_add(rx_worker.cycle->pool, 0);

        if (cln == NULL) {
            return 0;
        }
        cln->handler = free_session;
        cln->data = peer;
    }
    n = strlen(uc->ssl_name) + 1;
    s = malloc(sizeof(*s) + n);
    if (s == NULL) {
        return 0;
    }
    s->session = SSL_SESSION_dup(session);
    if (s->session == NULL) {
        free(s);
        return 0;
    }
    s->ctx = SSL_get_SSL_CTX(ssl);
    memcpy(s->name, uc->ssl_name, n);
    old = peer->ssl_session;
    if (old) {
        SSL_SESSION_free(old->session);
        free(old);
    }
    peer->ssl_session = s;
    return 0;
}

void
rx_http_upstream_ssl_cache_sessions(void *ssl_ctx)
{
    SSL_CTX *ctx = ssl_ctx;

    /* the client side keeps sessions itself, outside OpenSSL's cache */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT
                                        | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(ctx, new_session);
}

#endif /* RX_HAVE_OPENSSL */
