/*
 * tls.c: TLS on a connection, behind the transport seam; the only file
 * that calls OpenSSL's record and handshake functions.
 *
 * OpenSSL reads and writes through a BIO of ours that never touches the
 * socket: ciphertext the ring received is lent to it for the length of a
 * call (what it does not take is kept), and what it writes goes to the
 * socket at once when nothing waits before it (tls_bio.c,
 * rx_tls_send_direct), else is appended to an output buffer that the ring
 * sends. Two output buffers take turns: one is with the kernel (the
 * "flight"), the other collects, so nothing moves under a send in flight. A protocol's send is gathered into
 * records of up to 16 KiB, encrypted a bounded amount at a time (memory
 * stays bounded whatever the protocol sends), and reported done once the
 * kernel took the last byte of its ciphertext.
 *
 * With kTLS (the kernel's TLS, when it has the "tls" ULP and OpenSSL was
 * asked for it), OpenSSL gives the write keys to the kernel at the end of
 * the handshake through this BIO: what it had encrypted goes out first,
 * the protocol's sends go to the socket as they are (the kernel
 * encrypts, so files may go by sendfile), and the few records OpenSSL
 * still writes itself (session tickets, alerts, close_notify) are sent
 * at once as control messages. Reading stays in user space.
 *
 * Plaintext is handed to the protocol with on_read as it is decrypted,
 * while the protocol wants to read; when it stops, what is still inside
 * (kept ciphertext, a decrypted record) waits, and is handed over from a
 * posted call when reading resumes, never from inside the protocol's own
 * start_read.
 *
 * The BIO and kTLS are in event/tls_bio.c, the error texts, SSL_CONF and
 * the version strings in event/tls_lib.c; the state all three share is
 * event/tls_conn.h.
 */
#include "event.h"
#include "tls.h"
#include "counters.h"
#include "tls_conn.h"

#if (RX_HAVE_OPENSSL)

#include <openssl/err.h>
#include <openssl/x509v3.h>

static int        conn_index = -1;
static char       plain_buf[RX_TLS_RECORD];  /* decrypted, lent to on_read */
static char       stage_buf[RX_TLS_RECORD];  /* gathered before SSL_write */

static void tls_drive(rx_tls_conn_t *t);
static void tls_flush(rx_tls_conn_t *t);

rx_int_t
rx_tls_init(rx_log_t *log)
{
    if (conn_index < 0) {
        conn_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    }
    if (conn_index < 0 || rx_tls_bio_init() != RX_OK) {
        rx_tls_log_error(RX_LOG_EMERG, log, 0, "cannot set up the TLS BIO");
        return RX_ERROR;
    }
    return RX_OK;
}

/* ---- life ------------------------------------------------------------ */

static void
tls_cleanup(void *data)
{
    rx_tls_conn_t *t = data;

    rx_post_cancel(&t->posted);
    rx_post_cancel(&t->sent_posted);
    if (t->handshaked) {
        /* closed without close_notify (keepalive timeout, Connection:
         * close): the session stays resumable, as after a clean shutdown.
         * A fatal alert already removed it from the cache. */
        SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
    }
    SSL_free(t->ssl);
    free(t->kept);
    rx_tls_out_put(&t->out, &t->out_cap);
    rx_tls_out_put(&t->flight, &t->flight_cap);
}

static void posted_handler(rx_posted_t *p);
static void sent_posted_handler(rx_posted_t *p);

static void
set_action(rx_tls_conn_t *t, bool handshaking)
{
    if (handshaking) {
        t->saved_action = t->c->log.action;
        t->c->log.action = t->server ? "SSL handshaking"
                                     : "SSL handshaking to upstream";
    } else {
        t->c->log.action = t->saved_action;
    }
}

static const rx_transport_t rx_tls_transport;

static rx_tls_conn_t *
tls_start(rx_conn_t *c, SSL_CTX *ctx, bool server)
{
    rx_tls_conn_t     *t;
    rx_pool_cleanup_t *cln;
    BIO               *bio;

    t = rx_pcalloc(c->pool, sizeof(*t));
    cln = rx_pool_cleanup_add(c->pool, 0);
    if (t == NULL || cln == NULL) {
        goto failed;
    }
    t->ssl = SSL_new(ctx);
    bio = rx_tls_bio_new(t);
    if (t->ssl == NULL || bio == NULL) {
        BIO_free(bio);
        SSL_free(t->ssl);
        t->ssl = NULL;
        goto failed;
    }
    SSL_set_bio(t->ssl, bio, bio);      /* the SSL owns it from here */
    SSL_set_ex_data(t->ssl, conn_index, c);
    SSL_set_options(t->ssl, SSL_OP_IGNORE_UNEXPECTED_EOF
                            | SSL_OP_NO_RENEGOTIATION);
    SSL_set_mode(t->ssl, SSL_MODE_RELEASE_BUFFERS);
    cln->handler = tls_cleanup;
    cln->data = t;
    t->c = c;
    t->server = server;
    t->posted.handler = posted_handler;
    t->posted.data = t;
    t->sent_posted.handler = sent_posted_handler;
    t->sent_posted.data = t;
    c->tls = t;
    c->transport = &rx_tls_transport;
    set_action(t, true);
    return t;

failed:
    rx_tls_log_error(RX_LOG_ALERT, &c->log, 0, "cannot start TLS on the "
                     "connection");
    return NULL;
}

rx_int_t
rx_tls_server_start(rx_conn_t *c, SSL_CTX *ctx, bool detect_plain)
{
    rx_tls_conn_t *t = tls_start(c, ctx, true);

    if (t == NULL) {
        return RX_ERROR;
    }
    t->detect_plain = detect_plain;
    t->early = SSL_get_max_early_data(t->ssl) > 0;
    SSL_set_accept_state(t->ssl);
    return RX_OK;
}

rx_int_t
rx_tls_client_start(rx_conn_t *c, SSL_CTX *ctx, const char *sni,
    SSL_SESSION *session)
{
    rx_tls_conn_t     *t = tls_start(c, ctx, false);
    X509_VERIFY_PARAM *param;

    if (t == NULL) {
        return RX_ERROR;
    }
    SSL_set_connect_state(t->ssl);
    if (sni && *sni && SSL_set_tlsext_host_name(t->ssl, sni) != 1) {
        goto failed;
    }
    if (sni && *sni && (SSL_CTX_get_verify_mode(ctx) & SSL_VERIFY_PEER)) {
        param = SSL_get0_param(t->ssl);
        X509_VERIFY_PARAM_set_hostflags(param,
            X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        /* an address is checked as one, a name as a name */
        if (X509_VERIFY_PARAM_set1_ip_asc(param, sni) != 1
            && X509_VERIFY_PARAM_set1_host(param, sni, 0) != 1) {
            goto failed;
        }
    }
    if (session && SSL_set_session(t->ssl, session) != 1) {
        ERR_clear_error();          /* a stale session: a full handshake */
    }
    rx_conn_arm_recv(c);
    tls_drive(t);                   /* the ClientHello leaves now */
    return RX_OK;

failed:
    rx_tls_log_error(RX_LOG_ALERT, &c->log, 0, "cannot set the TLS server "
                     "name \"%s\"", sni);
    return RX_ERROR;
}

/* ---- reporting to the protocol ---------------------------------------- */

/* An error (negative errno) or the end (0) reaches the protocol once:
 * through its pending send if it has one, else as a read. */
static void
report(rx_tls_conn_t *t, ssize_t res)
{
    rx_conn_t *c = t->c;

    if (t->reported || c->state != RX_CONN_ACTIVE) {
        return;
    }
    t->reported = true;
    if (t->app_pending && (res < 0 || !t->handshaked)) {
        t->app_pending = false;
        c->sending = false;
        c->ops->on_sent(c, res < 0 ? res : -ECONNRESET);
        return;
    }
    c->ops->on_read(c, NULL, res);
}

static void
handshake_failed(rx_tls_conn_t *t, int ret)
{
    int        err = SSL_get_error(t->ssl, ret);
    long       vr;

    if (t->server && t->eof && !t->received) {
        /* closed before its first byte (a port probe, a health check): no
         * handshake began, so none failed. nginx peeks at the first byte
         * before it starts one, and says this */
        rx_tls_fail_log(t, RX_LOG_INFO, false, "client closed connection");
        report(t, 0);
        return;
    }
    rx_counters_tls_failed(t->server);

    if (!t->server && (vr = SSL_get_verify_result(t->ssl)) != X509_V_OK) {
        if (vr == X509_V_ERR_HOSTNAME_MISMATCH
            || vr == X509_V_ERR_IP_ADDRESS_MISMATCH) {
            const char *name = SSL_get_servername(t->ssl,
                                                  TLSEXT_NAMETYPE_host_name);
            rx_tls_fail_log(t, RX_LOG_ERR, false, "upstream SSL certificate "
                         "does not match \"%s\"", name ? name : "");
        } else {
            rx_tls_fail_log(t, RX_LOG_ERR, false, "upstream SSL certificate "
                         "verify error: (%ld:%s)", vr,
                         X509_verify_cert_error_string(vr));
        }
    } else if (t->eof && (err == SSL_ERROR_SYSCALL || err == SSL_ERROR_SSL
                          || err == SSL_ERROR_ZERO_RETURN)) {
        rx_tls_fail_log(t, RX_LOG_INFO, false,
                     "peer closed connection in SSL handshake");
    } else {
        rx_tls_fail_log(t, RX_LOG_INFO, true, "SSL_do_handshake() failed");
    }
    /* the alert OpenSSL wrote goes out before the protocol closes */
    tls_flush(t);
    report(t, t->eof ? 0 : -EPROTO);
}

/* ---- writing ------------------------------------------------------------ */

/* Hands the collected ciphertext to the kernel unless a flight is out. */
static void
tls_flush(rx_tls_conn_t *t)
{
    rx_conn_t *c = t->c;
    char      *buf;
    size_t     cap;

    if (t->in_flight || c->state != RX_CONN_ACTIVE) {
        return;
    }
    if (t->out_len == 0) {
        if (t->shutdown) {
            t->shutdown = false;
            if (t->ktls_tx) {
                /* close_notify behind the last send, as a control record */
                ERR_clear_error();
                if (SSL_shutdown(t->ssl) < 0) {
                    ERR_clear_error();
                }
            }
            rx_ring_shutdown(c->fd, SHUT_WR, rx_conn_ud(c, RX_OP_CLOSE));
            c->inflight++;
        }
        return;
    }
    buf = t->flight;
    cap = t->flight_cap;
    t->flight = t->out;
    t->flight_cap = t->out_cap;
    t->flight_len = t->out_len;
    t->flight_sent = 0;
    t->out = buf;
    t->out_cap = cap;
    t->out_len = 0;
    t->in_flight = true;
    rx_ring_send(c->fd, t->flight, (unsigned) t->flight_len, MSG_NOSIGNAL,
                 rx_conn_ud(c, RX_OP_SEND));
    c->inflight++;
}

/* Encrypts the protocol's plaintext, up to RX_TLS_FLIGHT_MAX ahead, in
 * records gathered from its iovecs. false after a fatal error. */
static bool
tls_encrypt(rx_tls_conn_t *t)
{
    size_t len, take;
    int    rc;

    while (t->app_i < t->app_niov && t->out_len < RX_TLS_FLIGHT_MAX) {
        const struct iovec *v = &t->app_iov[t->app_i];
        const char         *src = stage_buf;

        len = 0;
        if (v->iov_len - t->app_off >= sizeof(stage_buf)
            || t->app_i + 1 == t->app_niov) {
            /* a whole record in one iovec, or the send's last bytes (an
             * HTTP/2 connection's frames are one iovec): encrypted from
             * where they are, not copied to stage_buf first */
            src = (char *) v->iov_base + t->app_off;
            len = rx_min(v->iov_len - t->app_off, sizeof(stage_buf));
            t->app_off += len;
            if (t->app_off == v->iov_len) {
                t->app_i++;
                t->app_off = 0;
            }
        }
        while (src == stage_buf && t->app_i < t->app_niov
               && len < sizeof(stage_buf)) {
            v = &t->app_iov[t->app_i];
            take = rx_min(v->iov_len - t->app_off, sizeof(stage_buf) - len);
            memcpy(stage_buf + len, (char *) v->iov_base + t->app_off, take);
            len += take;
            t->app_off += take;
            if (t->app_off == v->iov_len) {
                t->app_i++;
                t->app_off = 0;
            }
        }
        if (len == 0) {
            continue;
        }
        t->more = t->app_i < t->app_niov;
        ERR_clear_error();
        rc = SSL_write(t->ssl, src, (int) len);
        t->more = false;
        if (rc <= 0) {
            rx_tls_fail_log(t, RX_LOG_INFO, true, "SSL_write() failed");
            return false;
        }
        t->app_total += (size_t) rc;
    }
    return true;
}

/* Moves the protocol's send on: encrypt more, send, or report it done. */
static void
tls_write_step(rx_tls_conn_t *t)
{
    rx_conn_t *c = t->c;

    if (!t->app_pending || !t->handshaked) {
        tls_flush(t);
        if (!t->in_flight && t->out_len == 0) {
            /* the handshake's flights went out: a connection waiting for
             * its request holds no output buffers either */
            rx_tls_out_put(&t->out, &t->out_cap);
            rx_tls_out_put(&t->flight, &t->flight_cap);
        }
        return;
    }
    if (t->ktls_tx) {
        /* the protocol's plaintext goes to the socket as it is */
        if (!t->in_flight) {
            rx_conn_send_iov(c, t->app_iov, t->app_niov);
            t->in_flight = true;
        }
        return;
    }
    if (t->app_i < t->app_niov && t->out_len < RX_TLS_FLIGHT_MAX
        && !tls_encrypt(t)) {
        tls_flush(t);
        report(t, -EPROTO);
        return;
    }
    if (t->app_i == t->app_niov && t->out_len == 0 && !t->in_flight) {
        if (t->in_send) {
            /* it all went at once (rx_tls_send_direct): the protocol
             * hears it from the end of the turn, not inside its send */
            rx_post(&t->sent_posted);
            return;
        }
        /* an idle connection holds no output buffers (keepalive memory) */
        rx_tls_out_put(&t->out, &t->out_cap);
        rx_tls_out_put(&t->flight, &t->flight_cap);
        t->app_pending = false;
        c->sending = false;
        c->ops->on_sent(c, (ssize_t) t->app_total);
        return;
    }
    tls_flush(t);
}

static void
tls_send(rx_conn_t *c, const struct iovec *iov, int niov)
{
    rx_tls_conn_t *t = c->tls;

    t->app_iov = iov;
    t->app_niov = niov;
    t->app_i = 0;
    t->app_off = 0;
    t->app_total = 0;
    t->app_pending = true;
    c->sending = true;
    t->in_send = true;
    tls_write_step(t);
    t->in_send = false;
}

static void
sent_posted_handler(rx_posted_t *p)
{
    rx_tls_conn_t *t = p->data;

    if (t->c->state == RX_CONN_ACTIVE && t->c->tls == t && t->app_pending) {
        tls_write_step(t);
    }
}

static void
tls_send_done(rx_conn_t *c, ssize_t res)
{
    rx_tls_conn_t *t = c->tls;

    t->in_flight = false;
    if (t->ktls_tx && res > 0) {
        /* a send of the protocol's own (kTLS): reported as it went, a
         * short one too, as on a plain connection */
        t->app_pending = false;
        c->sending = false;
        c->ops->on_sent(c, res);
        if (c->state == RX_CONN_ACTIVE && c->tls == t && t->shutdown) {
            tls_flush(t);
        }
        return;
    }
    if (res <= 0) {
        if (res == 0) {
            res = -EPIPE;
        }
        t->flight_len = t->flight_sent = 0;
        t->out_len = 0;
        if (t->app_pending) {
            t->app_pending = false;
            c->sending = false;
            t->reported = true;
            c->ops->on_sent(c, res);
        } else {
            report(t, res);
        }
        return;
    }
    t->flight_sent += (size_t) res;
    if (t->flight_sent < t->flight_len) {
        /* a short send: the rest of this flight first */
        t->in_flight = true;
        rx_ring_send(c->fd, t->flight + t->flight_sent,
                     (unsigned) (t->flight_len - t->flight_sent), MSG_NOSIGNAL,
                     rx_conn_ud(c, RX_OP_SEND));
        c->inflight++;
        return;
    }
    t->flight_len = t->flight_sent = 0;
    tls_write_step(t);
}

/* ---- reading ------------------------------------------------------------ */

/* Hands decrypted bytes to the protocol while it wants them. */
static void
tls_deliver(rx_tls_conn_t *t)
{
    rx_conn_t *c = t->c;
    int        n, err;

    while (c->state == RX_CONN_ACTIVE && c->want_read && c->tls == t
           && !t->reported) {
        ERR_clear_error();
        n = SSL_read(t->ssl, plain_buf, sizeof(plain_buf));
        if (n > 0) {
            c->ops->on_read(c, plain_buf, n);
            continue;
        }
        err = SSL_get_error(t->ssl, n);
        if (err == SSL_ERROR_WANT_READ) {
            if (t->eof) {
                report(t, 0);
            }
            break;
        }
        if (err == SSL_ERROR_ZERO_RETURN) {
            report(t, 0);               /* close_notify, or TCP closed */
            break;
        }
        if (err == SSL_ERROR_WANT_WRITE) {
            break;
        }
        rx_tls_fail_log(t, RX_LOG_INFO, true, "SSL_read() failed");
        tls_flush(t);
        report(t, -EPROTO);
        break;
    }
}

static bool
looks_like_tls(const char *data, ssize_t len)
{
    /* a handshake record (0x16), or an SSLv2-style hello (high bit) */
    return len <= 0 || (unsigned char) data[0] == 0x16
           || ((unsigned char) data[0] & 0x80);
}

/*
 * TLS 1.3 early data (ssl_early_data on): what the client sent with its
 * ClientHello is handed over before the handshake ends, so a request can
 * be read and processed during the round trip; its response still waits
 * for the handshake (the write side starts once it is done). Returns
 * true once there is no more early data and the handshake may go on.
 */
static bool
tls_read_early(rx_tls_conn_t *t)
{
    rx_conn_t *c = t->c;
    size_t     n;
    int        rc;

    while (c->state == RX_CONN_ACTIVE && c->tls == t && !t->reported) {
        if (!c->want_read) {
            return false;           /* resumed by start_read */
        }
        ERR_clear_error();
        n = 0;
        rc = SSL_read_early_data(t->ssl, plain_buf, sizeof(plain_buf), &n);
        if (rc == SSL_READ_EARLY_DATA_SUCCESS) {
            if (n > 0) {
                t->early_used = true;
                c->ops->on_read(c, plain_buf, (ssize_t) n);
            }
            continue;
        }
        if (rc == SSL_READ_EARLY_DATA_FINISH) {
            t->early = false;
            return true;
        }
        if (SSL_get_error(t->ssl, (int) rc) == SSL_ERROR_WANT_READ && !t->eof) {
            tls_flush(t);
            rx_conn_arm_recv(c);
            return false;
        }
        handshake_failed(t, 0);
        return false;
    }
    return false;
}

static void
tls_drive(rx_tls_conn_t *t)
{
    rx_conn_t *c = t->c;
    int        rc;

    if (t->early && !tls_read_early(t)) {
        return;
    }
    if (!t->handshaked) {
        ERR_clear_error();
        rc = SSL_do_handshake(t->ssl);
        if (rc != 1) {
            if (SSL_get_error(t->ssl, rc) == SSL_ERROR_WANT_READ && !t->eof) {
                tls_flush(t);
                rx_conn_arm_recv(c);
                return;
            }
            handshake_failed(t, rc);
            return;
        }
        t->handshaked = true;
        rx_counters_tls_handshake(t->server, SSL_session_reused(t->ssl), SSL_version(t->ssl));
        set_action(t, false);
        if (t->server && !t->early_used) {
            /* its protocol has had nothing yet: it waits for a first byte
             * as a new connection does, and is as reusable */
            rx_conn_set_reusable(c, true);
        }
        if (!c->want_read && !t->app_pending && c->reading
            && t->kept_len == 0 && t->lent_len == 0) {
            /* nobody reads now: no recv stays armed for nothing */
            rx_ring_cancel(rx_conn_ud(c, RX_OP_RECV),
                           rx_conn_ud(c, RX_OP_CANCEL));
            c->inflight++;
            c->reading = false;
        }
    }
    if (c->want_read) {
        tls_deliver(t);
    }
    if (c->state == RX_CONN_ACTIVE && c->tls == t && !t->reported) {
        tls_write_step(t);
    }
}

static void
tls_recv_done(rx_conn_t *c, const char *data, ssize_t len)
{
    rx_tls_conn_t *t = c->tls;

    if (len < 0) {
        report(t, len);
        return;
    }
    if (t->detect_plain) {
        t->detect_plain = false;
        if (!looks_like_tls(data, len)) {
            /* plain HTTP on a TLS port: the protocol answers it (497) */
            t->plain_http = true;
            set_action(t, false);
            c->transport = &rx_plain_transport;
            c->ops->on_read(c, data, len);
            return;
        }
    }
    if (len == 0) {
        t->eof = true;
    } else {
        t->received = true;
        if (t->server && !t->handshaked) {
            /* a handshake under way is not dropped for a new connection
             * (as nginx: from its first byte until it ends) */
            rx_conn_set_reusable(c, false);
        }
    }
    t->lent = data;
    t->lent_len = (size_t) len;
    tls_drive(t);
    if (c->state == RX_CONN_ACTIVE && c->tls == t && !rx_tls_keep_lent(t)) {
        rx_log_error(RX_LOG_ALERT, &c->log, ENOMEM, "cannot keep TLS input");
        report(t, -ENOMEM);
    }
    t->lent = NULL;
    t->lent_len = 0;
    rx_tls_release_kept(t);
    if (c->state == RX_CONN_ACTIVE && !c->reading && !t->eof
        && (c->want_read || !t->handshaked || t->app_pending)) {
        rx_conn_arm_recv(c);
    }
}

static void
posted_handler(rx_posted_t *p)
{
    rx_tls_conn_t *t = p->data;

    if (t->c->state == RX_CONN_ACTIVE && t->c->tls == t && !t->reported) {
        tls_drive(t);
    }
}

static void
tls_start_read(rx_conn_t *c)
{
    rx_tls_conn_t *t = c->tls;

    c->want_read = true;
    rx_conn_arm_recv(c);
    if ((t->handshaked || t->early)
        && (t->kept_len > 0 || SSL_has_pending(t->ssl) || t->eof)) {
        rx_post(&t->posted);       /* what waits inside goes out next */
    }
}

static void
tls_stop_read(rx_conn_t *c)
{
    rx_tls_conn_t *t = c->tls;

    c->want_read = false;
    rx_post_cancel(&t->posted);
    if (!c->reading || !t->handshaked) {
        return;                     /* the handshake keeps reading */
    }
    rx_ring_cancel(rx_conn_ud(c, RX_OP_RECV), rx_conn_ud(c, RX_OP_CANCEL));
    c->inflight++;
    c->reading = false;
}

/* Lingering close: close_notify, then the TCP half-close after it. */
static void
tls_shutdown_write(rx_conn_t *c)
{
    rx_tls_conn_t *t = c->tls;

    if (t->handshaked && !t->ktls_tx) {
        ERR_clear_error();
        if (SSL_shutdown(t->ssl) < 0) {
            ERR_clear_error();
        }
    }
    t->shutdown = true;             /* with kTLS, close_notify goes then */
    tls_flush(t);
}

void
rx_tls_close_notify(rx_conn_t *c)
{
    rx_tls_conn_t *t = c->tls;

    if (t == NULL || t->plain_http || !t->handshaked || t->reported
        || t->in_flight || t->out_len > 0 || c->state != RX_CONN_ACTIVE) {
        return;
    }
    ERR_clear_error();
    if (SSL_shutdown(t->ssl) < 0) {     /* with kTLS it is sent here */
        ERR_clear_error();
    }
    if (!t->ktls_tx) {
        rx_tls_send_out_now(t);
    }
}

static const rx_transport_t rx_tls_transport = {
    "tls", tls_start_read, tls_stop_read, tls_send, tls_shutdown_write,
    tls_recv_done, tls_send_done
};

/* ---- queries -------------------------------------------------------------- */

SSL *
rx_tls_ssl(const rx_conn_t *c)
{
    return c->tls && !c->tls->plain_http ? c->tls->ssl : NULL;
}

rx_conn_t *
rx_tls_conn(const SSL *ssl)
{
    return conn_index < 0 ? NULL : SSL_get_ex_data(ssl, conn_index);
}

const char *
rx_tls_error(const rx_conn_t *c)
{
    return c->tls ? c->tls->error : NULL;
}

bool
rx_tls_handshake_done(const rx_conn_t *c)
{
    return c->tls && c->tls->handshaked;
}

bool
rx_tls_early_data(const rx_conn_t *c)
{
    return c->tls && c->tls->early_used && !c->tls->handshaked;
}

bool
rx_tls_plain_http(const rx_conn_t *c)
{
    return c->tls && c->tls->plain_http;
}

bool
rx_tls_ktls_send(const rx_conn_t *c)
{
    return c->tls && c->tls->ktls_tx && !c->tls->plain_http;
}

#endif /* RX_HAVE_OPENSSL */
