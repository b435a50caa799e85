/*
 * tls_lib.c: OpenSSL outside the record path: its error queue in log lines
 * (nginx's " (SSL: error:...)"), a connection's failure logged or kept for
 * its upstream, SSL_CONF commands for ssl_conf_command, and the version
 * strings of -V.
 */
#include "event.h"
#include "tls_conn.h"

#if (RX_HAVE_OPENSSL)

#include <stdarg.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/opensslv.h>

/* Appends OpenSSL's error queue to msg (of len bytes) as nginx does,
 * " (SSL: error:... error:...)", and empties the queue. */
static void
append_ssl_errors(char *msg, size_t size, size_t len)
{
    char           ebuf[256];
    unsigned long  e;
    const char    *sep = " (SSL: ";

    while ((e = ERR_get_error()) != 0) {
        ERR_error_string_n(e, ebuf, sizeof(ebuf));
        if (len + strlen(sep) + strlen(ebuf) + 2 < size) {
            len += (size_t) snprintf(msg + len, size - len, "%s%s", sep, ebuf);
            sep = " ";
        }
    }
    if (strcmp(sep, " ") == 0 && len + 1 < size) {
        msg[len++] = ')';
        msg[len] = '\0';
    }
}

void
rx_tls_log_error(rx_uint_t level, rx_log_t *log, int err, const char *fmt, ...)
{
    char     msg[1024];
    va_list  args;

    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);
    append_ssl_errors(msg, sizeof(msg), strlen(msg));
    rx_log_error((unsigned) level, log, err, "%s", msg);
}

void
rx_tls_fail_log(rx_tls_conn_t *t, unsigned level, bool ssl_errors,
    const char *fmt, ...)
{
    rx_conn_t *c = t->c;
    char       msg[512];
    va_list    args;

    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);
    if (!t->server) {
        size_t len;

        if (ssl_errors) {
            append_ssl_errors(msg, sizeof(msg), strlen(msg));
        }
        ERR_clear_error();
        /* allocated only when it fails: a server-side connection (most
         * of them, held idle by thousands) carries no room for it */
        len = strlen(msg);
        t->error = rx_pnalloc(c->pool, len + 1);
        if (t->error != NULL) {
            memcpy(t->error, msg, len + 1);
        }
        return;
    }
    /* a server-side line names the client and the listening address, as
     * nginx's do; the HTTP layer adds its own context to its own lines,
     * so the handler is on the connection's log only for this call */
    c->log.handler = c->listening ? rx_conn_log_client_server : NULL;
    if (ssl_errors) {
        rx_tls_log_error(level, &c->log, 0, "%s", msg);
    } else {
        ERR_clear_error();
        rx_log_error(level, &c->log, 0, "%s", msg);
    }
    c->log.handler = NULL;
}

int
rx_tls_conf_commands(SSL_CTX *ctx, bool server, const rx_str_t *pairs,
    rx_uint_t npairs)
{
    SSL_CONF_CTX *cctx;
    rx_uint_t     i;
    int           rc = RX_TLS_CONF_OK;

    cctx = SSL_CONF_CTX_new();
    if (cctx == NULL) {
        return RX_TLS_CONF_NEW_FAILED;
    }
    SSL_CONF_CTX_set_flags(cctx, SSL_CONF_FLAG_FILE
                           | (server ? SSL_CONF_FLAG_SERVER : SSL_CONF_FLAG_CLIENT)
                           | SSL_CONF_FLAG_CERTIFICATE
                           | SSL_CONF_FLAG_SHOW_ERRORS);
    SSL_CONF_CTX_set_ssl_ctx(cctx, ctx);
    for (i = 0; i < npairs; i++) {
        if (SSL_CONF_cmd(cctx, pairs[2 * i].data, pairs[2 * i + 1].data) <= 0) {
            rc = (int) i;
            break;
        }
    }
    if (rc == RX_TLS_CONF_OK && SSL_CONF_CTX_finish(cctx) != 1) {
        rc = RX_TLS_CONF_FINISH_FAILED;
    }
    SSL_CONF_CTX_free(cctx);
    return rc;
}

const char *
rx_tls_version_text(void)
{
    return OPENSSL_VERSION_TEXT;
}

const char *
rx_tls_runtime_version_text(void)
{
    return OpenSSL_version(OPENSSL_VERSION);
}

#else /* !RX_HAVE_OPENSSL */

const char *
rx_tls_version_text(void)
{
    return "no TLS library";
}

const char *
rx_tls_runtime_version_text(void)
{
    return "no TLS library";
}

#endif /* RX_HAVE_OPENSSL */
