/*
 * tls.h: TLS on a connection, behind the event layer's transport seam.
 * OpenSSL is used from event/tls*.c only in this layer (modules/ssl*.c
 * build SSL_CTXs).
 *
 * OpenSSL never touches the socket: it reads ciphertext from, and writes
 * ciphertext to, a BIO of ours. The BIO is fed by the ring's multishot
 * recv and drained by ring sends, so no call blocks. With kTLS (where the
 * kernel has it) the BIO hands the write keys to the kernel at the end of
 * the handshake, after sending what was already encrypted with a
 * non-blocking send; then plaintext goes to the ring as over TCP. Once started on a
 * connection, the TLS transport replaces c->transport and the protocol
 * (HTTP, an upstream) keeps calling start_read / send / stop_read and
 * getting on_read / on_sent with plaintext, as over plain TCP.
 *
 * Errors reach the protocol as they would over TCP: a failed handshake or
 * a TLS error is on_read(c, NULL, -EPROTO) (or on_sent(c, -EPROTO) when a
 * send is pending). On the server side tls.c has logged it at "info" (a
 * client's fault, as nginx) with ", client: ADDR, server: ADDR". On the
 * client (upstream) side nothing is logged: rx_tls_error(c) gives the
 * text in nginx's words ("upstream SSL certificate verify error: (20:...)",
 * "upstream SSL certificate does not match \"NAME\"", "SSL_do_handshake()
 * failed (SSL: ...)", "peer closed connection in SSL handshake") for the
 * upstream to log with its request's context and "while SSL handshaking
 * to upstream". A close_notify, or the peer closing the TCP connection, is
 * on_read(c, NULL, 0) (on_sent(c, -ECONNRESET) if a send waits for the
 * handshake).
 */
#ifndef RX_TLS_H
#define RX_TLS_H

#include "event.h"

#if (RX_HAVE_OPENSSL)
#include <openssl/ssl.h>

/* Once per process, before any SSL_CTX is used (idempotent). */
rx_int_t rx_tls_init(rx_log_t *log);

/*
 * Server side: the connection was accepted on a `listen ... ssl` socket.
 * ctx is the default server's; an SNI callback set on ctx by the ssl
 * module may switch it (SSL_set_SSL_CTX). With detect_plain, a first byte
 * that cannot start a TLS record turns the connection back to plain TCP
 * and rx_tls_plain_http(c) becomes true (nginx's 497). Call before the
 * protocol's first start_read. RX_ERROR when out of memory (logged).
 */
rx_int_t rx_tls_server_start(rx_conn_t *c, SSL_CTX *ctx, bool detect_plain);

/*
 * Client side (an upstream connection, after connect() completed): sni
 * (may be NULL) is sent as server_name and, when verification is on in
 * ctx, checked against the certificate (host name; an IP address is
 * checked as one). session, when not NULL, is offered for resumption.
 * The protocol may send at once: the plaintext waits for the handshake.
 */
rx_int_t rx_tls_client_start(rx_conn_t *c, SSL_CTX *ctx, const char *sni,
    SSL_SESSION *session);

/* Client side: why the connection failed, NULL if it did not. */
const char *rx_tls_error(const rx_conn_t *c);

/* The SSL of a TLS connection, NULL on plain TCP. */
SSL *rx_tls_ssl(const rx_conn_t *c);

/* The connection an SSL belongs to (in OpenSSL callbacks). */
rx_conn_t *rx_tls_conn(const SSL *ssl);

/* The handshake has finished (variables, verify results are known). */
bool rx_tls_handshake_done(const rx_conn_t *c);

/* Plaintext was read as TLS 1.3 early data and the handshake has not
 * finished yet: it may be a replay ($ssl_early_data). Early data is read
 * when the SSL_CTX allows it (SSL_CTX_set_max_early_data > 0). */
bool rx_tls_early_data(const rx_conn_t *c);

/* Plain HTTP arrived on a TLS port (detect_plain): answer 497/400. */
bool rx_tls_plain_http(const rx_conn_t *c);

/* The kernel encrypts what is written to the socket (kTLS TX is on):
 * file bodies may go by splice/sendfile. */
bool rx_tls_ktls_send(const rx_conn_t *c);

/* The connection closes after a finished exchange: close_notify goes
 * now if the socket takes it (nginx's close, not after an error or a
 * timeout, which close quietly). */
void rx_tls_close_notify(rx_conn_t *c);

/* Whether this kernel can do kTLS at all (the "tls" TCP ULP loads);
 * probed once. */
bool rx_tls_ktls_available(void);

/*
 * Logs msg with OpenSSL's error queue appended as nginx does
 * ("... (SSL: error:0A000086:SSL routines::certificate verify failed)")
 * and clears the queue. For configuration and runtime errors alike.
 */
void rx_tls_log_error(rx_uint_t level, rx_log_t *log, int err,
    const char *fmt, ...);

/*
 * ssl_conf_command and proxy_ssl_conf_command: npairs "name value" pairs
 * (pairs[2i], pairs[2i+1], NUL-terminated) through OpenSSL's SSL_CONF on
 * ctx, as nginx. RX_TLS_CONF_OK, the index of the pair that failed, or a
 * negative RX_TLS_CONF_*_FAILED; OpenSSL's errors stay queued for
 * rx_tls_log_error.
 */
#define RX_TLS_CONF_OK             (-1)
#define RX_TLS_CONF_NEW_FAILED     (-2)
#define RX_TLS_CONF_FINISH_FAILED  (-3)
int rx_tls_conf_commands(SSL_CTX *ctx, bool server, const rx_str_t *pairs,
    rx_uint_t npairs);

#endif /* RX_HAVE_OPENSSL */

/* Version strings for -V. */
const char *rx_tls_version_text(void);
const char *rx_tls_runtime_version_text(void);

#endif /* RX_TLS_H */
