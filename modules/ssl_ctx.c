/*
 * ssl_ctx.c: one server block's SSL_CTX from its merged ssl_* settings:
 * certificates and keys (several: RSA and ECDSA side by side), protocols,
 * ciphers, curves, DH parameters, client verification (CAs, CRLs),
 * OCSP stapling from a file, and ssl_conf_command. Built in the master at
 * load time; errors are nginx's, with the directive's FILE:LINE.
 */
#include "ssl.h"

#if (RX_HAVE_OPENSSL)
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ocsp.h>
#include <openssl/x509v3.h>

/* ---- errors ----------------------------------------------------------------- */

static size_t
pos_handler(rx_log_t *log, char *buf, size_t len)
{
    const rx_ssl_pos_t *pos = log->data;
    int                 n;

    n = snprintf(buf, len, " in %s:%lu", pos->file.data,
                 (unsigned long) pos->line);
    return n < 0 ? 0 : rx_min((size_t) n, len);
}

void
rx_http_ssl_conf_error(rx_conf_t *cf, const rx_ssl_pos_t *pos,
    const char *fmt, ...)
{
    char     msg[RX_MAX_ERROR_STR];
    rx_log_t log = *cf->log;
    va_list  args;

    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);
    if (pos && pos->file.data) {
        log.handler = pos_handler;
        log.data = (void *) pos;
    }
    rx_tls_log_error(RX_LOG_EMERG, &log, 0, "%s", msg);
}

/* ---- certificates ------------------------------------------------------------- */

/* Never a prompt on the terminal: a key without its password fails. */
static int
password_cb(char *buf, int size, int rwflag, void *data)
{
    const rx_str_t *pw = data;

    (void) rwflag;
    if (pw == NULL || size <= 0) {
        return 0;
    }
    if (pw->len > (size_t) size) {
        return 0;
    }
    memcpy(buf, pw->data, pw->len);
    return (int) pw->len;
}

static rx_int_t
load_certificate(rx_conf_t *cf, SSL_CTX *ctx, const rx_ssl_file_t *f)
{
    BIO     *bio = BIO_new_file(f->path.data, "r");
    X509    *x509 = NULL;
    rx_int_t rc = RX_ERROR;

    if (bio == NULL) {
        rx_http_ssl_conf_error(cf, &f->pos, "cannot load certificate \"%s\": "
                               "BIO_new_file() failed", f->path.data);
        return RX_ERROR;
    }
    x509 = PEM_read_bio_X509_AUX(bio, NULL, password_cb, NULL);
    if (x509 == NULL) {
        rx_http_ssl_conf_error(cf, &f->pos, "cannot load certificate \"%s\": "
                               "PEM_read_bio_X509_AUX() failed", f->path.data);
        goto cleanup;
    }
    if (SSL_CTX_use_certificate(ctx, x509) != 1) {
        rx_http_ssl_conf_error(cf, &f->pos, "SSL_CTX_use_certificate(\"%s\") "
                               "failed", f->path.data);
        goto cleanup;
    }
    /* the chain: what follows the certificate in its file, attached to
     * the certificate just set (SSL_MODE_NO_AUTO_CHAIN: nothing else) */
    SSL_CTX_clear_chain_certs(ctx);
    for ( ;; ) {
        X509 *ca = PEM_read_bio_X509(bio, NULL, password_cb, NULL);
        if (ca == NULL) {
            unsigned long e = ERR_peek_last_error();
            if (ERR_GET_LIB(e) == ERR_LIB_PEM
                && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
                ERR_clear_error();
                break;
            }
            rx_http_ssl_conf_error(cf, &f->pos, "cannot load certificate "
                "\"%s\": PEM_read_bio_X509() failed", f->path.data);
            goto cleanup;
        }
        if (SSL_CTX_add0_chain_cert(ctx, ca) != 1) {
            X509_free(ca);
            rx_http_ssl_conf_error(cf, &f->pos, "SSL_CTX_add0_chain_cert(\"%s\")"
                                   " failed", f->path.data);
            goto cleanup;
        }
    }
    rc = RX_OK;

cleanup:
    X509_free(x509);
    BIO_free(bio);
    return rc;
}

/* Each password of ssl_password_file in turn, as nginx. */
static rx_int_t
load_key(rx_conf_t *cf, SSL_CTX *ctx, const rx_ssl_file_t *f,
    const rx_array_t *passwords)
{
    const rx_str_t *pw = passwords ? passwords->elts : NULL;
    rx_uint_t       i, n = passwords ? passwords->nelts : 1;
    EVP_PKEY       *pkey = NULL;
    BIO            *bio;

    for (i = 0; i < n && pkey == NULL; i++) {
        bio = BIO_new_file(f->path.data, "r");
        if (bio == NULL) {
            rx_http_ssl_conf_error(cf, &f->pos, "cannot load certificate key "
                "\"%s\": BIO_new_file() failed", f->path.data);
            return RX_ERROR;
        }
        if (i + 1 < n) {
            ERR_set_mark();
        }
        pkey = PEM_read_bio_PrivateKey(bio, NULL, password_cb,
                                       pw ? (void *) &pw[i] : NULL);
        if (pkey == NULL && i + 1 < n) {
            ERR_pop_to_mark();      /* only the last try's error is told */
        } else if (i + 1 < n) {
            ERR_clear_last_mark();
        }
        BIO_free(bio);
    }
    if (pkey == NULL) {
        rx_http_ssl_conf_error(cf, &f->pos, "cannot load certificate key "
            "\"%s\": PEM_read_bio_PrivateKey() failed", f->path.data);
        return RX_ERROR;
    }
    if (SSL_CTX_use_PrivateKey(ctx, pkey) != 1) {
        EVP_PKEY_free(pkey);
        rx_http_ssl_conf_error(cf, &f->pos, "SSL_CTX_use_PrivateKey(\"%s\") "
                               "failed", f->path.data);
        return RX_ERROR;
    }
    EVP_PKEY_free(pkey);
    /* a key of another type than the certificate lands in a slot of its
     * own without complaint: check the pair */
    if (SSL_CTX_check_private_key(ctx) != 1) {
        rx_http_ssl_conf_error(cf, &f->pos, "SSL_CTX_check_private_key(\"%s\")"
                               " failed", f->path.data);
        return RX_ERROR;
    }
    return RX_OK;
}

static rx_int_t
certificates(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    rx_ssl_file_t *cert, *key;
    rx_uint_t      i;

    if (sscf->certificates == NULL) {
        return RX_OK;               /* ssl_reject_handshake only */
    }
    cert = sscf->certificates->elts;
    key = sscf->certificate_keys ? sscf->certificate_keys->elts : NULL;
    for (i = 0; i < sscf->certificates->nelts; i++) {
        if (key == NULL || i >= sscf->certificate_keys->nelts) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "no \"ssl_certificate_key\""
                         " is defined for certificate \"%s\" in %s:%lu",
                         cert[i].path.data, cert[i].pos.file.data,
                         (unsigned long) cert[i].pos.line);
            return RX_ERROR;
        }
        if (load_certificate(cf, sscf->ctx, &cert[i]) != RX_OK
            || load_key(cf, sscf->ctx, &key[i], sscf->passwords) != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/* ---- protocol settings ------------------------------------------------------- */

static const rx_ssl_pos_t *
any_pos(const rx_http_ssl_srv_conf_t *sscf)
{
    return sscf->certificates
           ? &((rx_ssl_file_t *) sscf->certificates->elts)->pos : NULL;
}

static void
protocols(SSL_CTX *ctx, rx_uint_t p)
{
    static const struct { rx_uint_t bit; uint64_t op; } map[] = {
        { RX_SSL_SSLv3, SSL_OP_NO_SSLv3 }, { RX_SSL_TLSv1, SSL_OP_NO_TLSv1 },
        { RX_SSL_TLSv1_1, SSL_OP_NO_TLSv1_1 },
        { RX_SSL_TLSv1_2, SSL_OP_NO_TLSv1_2 },
        { RX_SSL_TLSv1_3, SSL_OP_NO_TLSv1_3 },
    };
    size_t i;

    /* the options decide, not OpenSSL's default minimum */
    SSL_CTX_set_min_proto_version(ctx, 0);
    SSL_CTX_set_max_proto_version(ctx, 0);
    for (i = 0; i < rx_nelems(map); i++) {
        if (!(p & map[i].bit)) {
            SSL_CTX_set_options(ctx, map[i].op);
        }
    }
}

static rx_int_t
dhparam(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    const rx_ssl_file_t *f = &sscf->dhparam;
    EVP_PKEY            *dh;
    BIO                 *bio;

    if (f->path.data == NULL) {
        return RX_OK;
    }
    bio = BIO_new_file(f->path.data, "r");
    if (bio == NULL) {
        rx_http_ssl_conf_error(cf, &f->pos, "BIO_new_file(\"%s\") failed",
                               f->path.data);
        return RX_ERROR;
    }
    dh = PEM_read_bio_Parameters(bio, NULL);
    BIO_free(bio);
    if (dh == NULL) {
        rx_http_ssl_conf_error(cf, &f->pos, "PEM_read_bio_Parameters(\"%s\") "
                               "failed", f->path.data);
        return RX_ERROR;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(sscf->ctx, dh) != 1) {
        EVP_PKEY_free(dh);
        rx_http_ssl_conf_error(cf, &f->pos, "SSL_CTX_set0_tmp_dh_pkey(\"%s\") "
                               "failed", f->path.data);
        return RX_ERROR;
    }
    return RX_OK;
}

static rx_int_t
conf_commands(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    rx_str_t *pair;
    int       rc;

    if (sscf->conf_commands == NULL) {
        return RX_OK;
    }
    pair = sscf->conf_commands->elts;
    rc = rx_tls_conf_commands(sscf->ctx, true, pair,
                              sscf->conf_commands->nelts / 2);
    if (rc == RX_TLS_CONF_OK) {
        return RX_OK;
    }
    if (rc >= 0) {
        rx_http_ssl_conf_error(cf, any_pos(sscf), "SSL_CONF_cmd(\"%s\", "
            "\"%s\") failed", pair[2 * rc].data, pair[2 * rc + 1].data);
    } else {
        rx_http_ssl_conf_error(cf, rc == RX_TLS_CONF_NEW_FAILED ? NULL
                               : any_pos(sscf), "%s failed",
                               rc == RX_TLS_CONF_NEW_FAILED
                               ? "SSL_CONF_CTX_new()" : "SSL_CONF_finish()");
    }
    return RX_ERROR;
}

/* ---- client certificates ------------------------------------------------------ */

/* The handshake always goes on: the verdict is the request's (495/496),
 * so that error_page can answer it, as nginx. */
static int
verify_cb(int ok, X509_STORE_CTX *store)
{
    (void) ok;
    (void) store;
    return 1;
}

static rx_int_t
verification(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    SSL_CTX             *ctx = sscf->ctx;
    const rx_ssl_file_t *f;
    STACK_OF(X509_NAME) *list;
    X509_LOOKUP         *lookup;

    if (sscf->verify != RX_SSL_VERIFY_OFF) {
        if (sscf->verify != RX_SSL_VERIFY_OPTIONAL_NO_CA
            && sscf->client_certificate.path.data == NULL
            && sscf->trusted_certificate.path.data == NULL) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "no ssl_client_certificate "
                "or ssl_trusted_certificate for ssl_verify_client in %s:%lu",
                sscf->verify_pos.file.data,
                (unsigned long) sscf->verify_pos.line);
            return RX_ERROR;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_cb);
        SSL_CTX_set_verify_depth(ctx, (int) sscf->verify_depth);
    }
    f = &sscf->client_certificate;
    if (f->path.data && sscf->verify != RX_SSL_VERIFY_OFF) {
        if (SSL_CTX_load_verify_locations(ctx, f->path.data, NULL) != 1) {
            rx_http_ssl_conf_error(cf, &f->pos, "SSL_CTX_load_verify_locations"
                                   "(\"%s\") failed", f->path.data);
            return RX_ERROR;
        }
        /* the CA names a client is told to choose its certificate by */
        list = SSL_load_client_CA_file(f->path.data);
        if (list == NULL) {
            rx_http_ssl_conf_error(cf, &f->pos, "SSL_load_client_CA_file(\"%s\")"
                                   " failed", f->path.data);
            return RX_ERROR;
        }
        SSL_CTX_set_client_CA_list(ctx, list);
    }
    f = &sscf->trusted_certificate;
    if (f->path.data
        && SSL_CTX_load_verify_locations(ctx, f->path.data, NULL) != 1) {
        rx_http_ssl_conf_error(cf, &f->pos, "SSL_CTX_load_verify_locations"
                               "(\"%s\") failed", f->path.data);
        return RX_ERROR;
    }
    f = &sscf->crl;
    if (f->path.data) {
        X509_STORE *store = SSL_CTX_get_cert_store(ctx);
        lookup = X509_STORE_add_lookup(store, X509_LOOKUP_file());
        if (lookup == NULL
            || X509_LOOKUP_load_file(lookup, f->path.data, X509_FILETYPE_PEM)
               != 1) {
            rx_http_ssl_conf_error(cf, &f->pos, "X509_LOOKUP_load_file(\"%s\") "
                                   "failed", f->path.data);
            return RX_ERROR;
        }
        X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK
                                    | X509_V_FLAG_CRL_CHECK_ALL);
    }
    return RX_OK;
}

/* ---- OCSP stapling ---------------------------------------------------------------- */

static int ctx_conf_index = -1;

static rx_http_ssl_srv_conf_t *
conf_of_ctx(SSL_CTX *ctx)
{
    return ctx_conf_index < 0 ? NULL : SSL_CTX_get_ex_data(ctx, ctx_conf_index);
}

rx_http_ssl_srv_conf_t *
rx_http_ssl_ctx_conf(SSL_CTX *ctx)
{
    return conf_of_ctx(ctx);
}

static int
status_cb(SSL *ssl, void *arg)
{
    rx_http_ssl_srv_conf_t *sscf = conf_of_ctx(SSL_get_SSL_CTX(ssl));
    unsigned char          *copy;

    (void) arg;
    if (sscf == NULL || sscf->stapling_response.len == 0) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    copy = OPENSSL_malloc(sscf->stapling_response.len);
    if (copy == NULL) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    memcpy(copy, sscf->stapling_response.data, sscf->stapling_response.len);
    /* OpenSSL frees it with the connection */
    SSL_set_tlsext_status_ocsp_resp(ssl, copy,
                                    (long) sscf->stapling_response.len);
    return SSL_TLSEXT_ERR_OK;
}

static rx_int_t
read_file(rx_conf_t *cf, const rx_ssl_file_t *f, rx_str_t *out)
{
    FILE  *fp = fopen(f->path.data, "rb");
    long   size;

    if (fp == NULL) {
        rx_log_error(RX_LOG_EMERG, cf->log, errno, "open() \"%s\" failed in "
                     "%s:%lu", f->path.data, f->pos.file.data,
                     (unsigned long) f->pos.line);
        return RX_ERROR;
    }
    if (fseek(fp, 0, SEEK_END) != 0 || (size = ftell(fp)) < 0
        || fseek(fp, 0, SEEK_SET) != 0
        || (out->data = rx_palloc(cf->pool, (size_t) size + 1)) == NULL
        || fread(out->data, 1, (size_t) size, fp) != (size_t) size) {
        fclose(fp);
        rx_log_error(RX_LOG_EMERG, cf->log, errno, "read() \"%s\" failed",
                     f->path.data);
        return RX_ERROR;
    }
    fclose(fp);
    out->len = (size_t) size;
    return RX_OK;
}

static rx_int_t
stapling(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    const unsigned char *p;
    OCSP_RESPONSE       *resp;
    X509                *cert;
    STACK_OF(OPENSSL_STRING) *urls;

    if (!sscf->stapling || sscf->certificates == NULL) {
        return RX_OK;
    }
    if (sscf->stapling_file.path.data) {
        if (read_file(cf, &sscf->stapling_file, &sscf->stapling_response)
            != RX_OK) {
            return RX_ERROR;
        }
        p = (const unsigned char *) sscf->stapling_response.data;
        resp = d2i_OCSP_RESPONSE(NULL, &p, (long) sscf->stapling_response.len);
        if (resp == NULL) {
            rx_http_ssl_conf_error(cf, &sscf->stapling_file.pos,
                "d2i_OCSP_RESPONSE(\"%s\") failed",
                sscf->stapling_file.path.data);
            return RX_ERROR;
        }
        OCSP_RESPONSE_free(resp);
        SSL_CTX_set_tlsext_status_cb(sscf->ctx, status_cb);
        return RX_OK;
    }
    /* no file: the responder would be asked, and this build has no
     * resolver for it; say so as nginx does when it cannot staple */
    cert = SSL_CTX_get0_certificate(sscf->ctx);
    urls = cert ? X509_get1_ocsp(cert) : NULL;
    if (urls == NULL) {
        rx_log_error(RX_LOG_WARN, cf->log, 0, "\"ssl_stapling\" ignored, no "
            "OCSP responder URL in the certificate \"%s\"",
            ((rx_ssl_file_t *) sscf->certificates->elts)->path.data);
    } else {
        rx_log_error(RX_LOG_WARN, cf->log, 0, "\"ssl_stapling\" ignored, "
            "no \"ssl_stapling_file\" for the certificate \"%s\" (this build "
            "does not query OCSP responders)",
            ((rx_ssl_file_t *) sscf->certificates->elts)->path.data);
        X509_email_free(urls);
    }
    return RX_OK;
}

/* ---- the whole ------------------------------------------------------------------- */

rx_int_t
rx_http_ssl_build_ctx(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    SSL_CTX *ctx;

    if (ctx_conf_index < 0) {
        ctx_conf_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    }
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL || ctx_conf_index < 0) {
        rx_http_ssl_conf_error(cf, NULL, "SSL_CTX_new() failed");
        SSL_CTX_free(ctx);
        return RX_ERROR;
    }
    sscf->ctx = ctx;
    SSL_CTX_set_ex_data(ctx, ctx_conf_index, sscf);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION
                        | SSL_OP_IGNORE_UNEXPECTED_EOF
                        | SSL_OP_SINGLE_DH_USE | SSL_OP_SINGLE_ECDH_USE);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_NO_AUTO_CHAIN);
    if (rx_tls_ktls_available()) {
        /* on where the kernel has it (nginx waits for "ssl_conf_command
         * Options KTLS"): files go by sendfile over TLS too;
         * "ssl_conf_command Options -KTLS" turns it off */
        SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
    }
    protocols(ctx, sscf->protocols);
    if (sscf->prefer_server_ciphers) {
        SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    }
    if (sscf->early_data == 1) {
        /* one record of 0-RTT data, as nginx; tickets announce it */
        SSL_CTX_set_max_early_data(ctx, 16384);
        SSL_CTX_set_recv_max_early_data(ctx, 16384);
        /* OpenSSL's anti-replay needs single-use session ids from one
         * cache; tickets across workers cannot be: the application judges
         * replays by $ssl_early_data, as with nginx */
        SSL_CTX_set_options(ctx, SSL_OP_NO_ANTI_REPLAY);
    }
    if (certificates(cf, sscf) != RX_OK) {
        return RX_ERROR;
    }
    if (SSL_CTX_set_cipher_list(ctx, sscf->ciphers.data) != 1) {
        rx_http_ssl_conf_error(cf, any_pos(sscf), "SSL_CTX_set_cipher_list"
                               "(\"%s\") failed", sscf->ciphers.data);
        return RX_ERROR;
    }
    if (strcmp(sscf->ecdh_curve.data, "auto") != 0
        && SSL_CTX_set1_curves_list(ctx, sscf->ecdh_curve.data) != 1) {
        rx_http_ssl_conf_error(cf, any_pos(sscf), "SSL_CTX_set1_curves_list"
                               "(\"%s\") failed", sscf->ecdh_curve.data);
        return RX_ERROR;
    }
    if (dhparam(cf, sscf) != RX_OK || verification(cf, sscf) != RX_OK
        || stapling(cf, sscf) != RX_OK) {
        return RX_ERROR;
    }
    rx_http_ssl_set_callbacks(ctx);
    return conf_commands(cf, sscf);
}

#endif /* RX_HAVE_OPENSSL */
