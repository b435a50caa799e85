/*
 * proxy_ssl.c: the proxy_ssl_* directives and the client SSL_CTX each
 * location with proxy_pass https:// (or with variables) gets when the
 * configuration is merged: protocols, ciphers, the trusted CAs and CRL
 * used when proxy_ssl_verify is on, a client certificate, OpenSSL
 * configuration commands, and session reuse. What happens on a connection
 * is http/http_upstream_ssl.c's and event/tls.c's.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_script.h"
#include "proxy_ssl.h"

#if (RX_HAVE_OPENSSL)
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "tls.h"

/* proxy_ssl_protocols (bitmask) */
#define PROTO_SSLv2    0x0002
#define PROTO_SSLv3    0x0004
#define PROTO_TLSv1    0x0008
#define PROTO_TLSv1_1  0x0010
#define PROTO_TLSv1_2  0x0020
#define PROTO_TLSv1_3  0x0040

typedef struct {
    rx_http_upstream_ssl_t   ssl;            /* what the engine reads */
    bool                     needed;         /* this location's proxy_pass */
    rx_uint_t                protocols;
    rx_str_t                 ciphers;
    rx_uint_t                verify_depth;
    rx_str_t                 trusted_certificate;
    rx_str_t                 crl;
    rx_str_t                 certificate;
    rx_str_t                 certificate_key;
    rx_array_t              *passwords;      /* rx_str_t, NUL-terminated */
    rx_array_t              *conf_commands;  /* rx_str_t name, value pairs */
} rx_http_proxy_ssl_conf_t;

static const char *set_password_file(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_conf_command(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_loc_conf(rx_conf_t *cf);
static const char *merge_loc_conf(rx_conf_t *cf, void *prev, void *conf);

static const rx_conf_enum_t protocols[] = {
    { "SSLv2", PROTO_SSLv2 },
    { "SSLv3", PROTO_SSLv3 },
    { "TLSv1", PROTO_TLSv1 },
    { "TLSv1.1", PROTO_TLSv1_1 },
    { "TLSv1.2", PROTO_TLSv1_2 },
    { "TLSv1.3", PROTO_TLSv1_3 },
    { NULL, 0 }
};

static const rx_conf_bounds_t depth_bounds = { 0, 100 };

#define RX_PROXY_SSL_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)
#define F(field)  offsetof(rx_http_proxy_ssl_conf_t, field)

static const rx_command_t proxy_ssl_commands[] = {
    { "proxy_ssl_verify", RX_PROXY_SSL_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(ssl.verify), NULL },
    { "proxy_ssl_verify_depth", RX_PROXY_SSL_CONF | RX_CONF_TAKE1, rx_conf_set_num_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(verify_depth), &depth_bounds },
    { "proxy_ssl_trusted_certificate", RX_PROXY_SSL_CONF | RX_CONF_TAKE1,
      rx_conf_set_str_slot, RX_HTTP_LOC_CONF_OFFSET, F(trusted_certificate),
      NULL },
    { "proxy_ssl_crl", RX_PROXY_SSL_CONF | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(crl), NULL },
    { "proxy_ssl_server_name", RX_PROXY_SSL_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(ssl.server_name), NULL },
    { "proxy_ssl_name", RX_PROXY_SSL_CONF | RX_CONF_TAKE1, rx_http_set_complex_value_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(ssl.name), NULL },
    { "proxy_ssl_protocols", RX_PROXY_SSL_CONF | RX_CONF_1MORE, rx_conf_set_bitmask_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(protocols), protocols },
    { "proxy_ssl_ciphers", RX_PROXY_SSL_CONF | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(ciphers), NULL },
    { "proxy_ssl_session_reuse", RX_PROXY_SSL_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(ssl.session_reuse), NULL },
    { "proxy_ssl_certificate", RX_PROXY_SSL_CONF | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(certificate), NULL },
    { "proxy_ssl_certificate_key", RX_PROXY_SSL_CONF | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_LOC_CONF_OFFSET, F(certificate_key), NULL },
    { "proxy_ssl_password_file", RX_PROXY_SSL_CONF | RX_CONF_TAKE1, set_password_file,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_ssl_conf_command", RX_PROXY_SSL_CONF | RX_CONF_TAKE2, set_conf_command,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t proxy_ssl_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_loc_conf, merge_loc_conf
};

rx_module_t rx_http_proxy_ssl_module = {
    "rx_http_proxy_ssl_module", 0, 0, RX_HTTP_MODULE, &proxy_ssl_ctx,
    proxy_ssl_commands, NULL, NULL, NULL, NULL
};

const rx_http_upstream_ssl_t *
rx_http_proxy_ssl_needed(rx_conf_t *cf)
{
    rx_http_proxy_ssl_conf_t *pscf = rx_http_conf_get_module_loc_conf(cf,
                                        rx_http_proxy_ssl_module);

    pscf->needed = true;
    return &pscf->ssl;
}

static void *
create_loc_conf(rx_conf_t *cf)
{
    rx_http_proxy_ssl_conf_t *pscf = rx_pcalloc(cf->pool, sizeof(*pscf));

    if (pscf == NULL) {
        return NULL;
    }
    pscf->ssl.name = RX_CONF_UNSET_PTR;
    pscf->ssl.server_name = RX_CONF_UNSET;
    pscf->ssl.verify = RX_CONF_UNSET;
    pscf->ssl.session_reuse = RX_CONF_UNSET;
    pscf->verify_depth = RX_CONF_UNSET_UINT;
    pscf->passwords = RX_CONF_UNSET_PTR;
    pscf->conf_commands = RX_CONF_UNSET_PTR;
    return pscf;
}

/*
 * proxy_ssl_password_file: the passphrases of the certificate key, one a
 * line, tried in turn; read now, as nginx does (the file may be readable
 * by root only).
 */
static const char *
set_password_file(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_proxy_ssl_conf_t *pscf = conf;
    rx_str_t                 *value = cf->args->elts, name = value[1];
    rx_str_t                 *pw;
    char                      line[1024];
    FILE                     *f;
    size_t                    n;

    if (pscf->passwords != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    if (rx_conf_full_name(cf->cycle, &name, true) != RX_OK) {
        return RX_CONF_ERROR;
    }
    pscf->passwords = rx_array_create(cf->pool, 2, sizeof(rx_str_t));
    if (pscf->passwords == NULL) {
        return RX_CONF_ERROR;
    }
    f = fopen(name.data, "re");
    if (f == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "open() \"%s\" failed",
                          name.data);
        return RX_CONF_ERROR;
    }
    while (fgets(line, sizeof(line), f)) {
        n = strcspn(line, "\r\n");
        line[n] = '\0';
        pw = rx_array_push(pscf->passwords);
        if (pw == NULL || (pw->data = rx_pstrdup_c(cf->pool, line, n)) == NULL) {
            fclose(f);
            return RX_CONF_ERROR;
        }
        pw->len = n;
        OPENSSL_cleanse(line, sizeof(line));
    }
    fclose(f);
    if (pscf->passwords->nelts == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "empty file \"%s\"", name.data);
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static const char *
set_conf_command(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_proxy_ssl_conf_t *pscf = conf;
    rx_str_t                 *value = cf->args->elts, *pair;

    if (pscf->conf_commands == RX_CONF_UNSET_PTR) {
        pscf->conf_commands = rx_array_create(cf->pool, 4, 2 * sizeof(rx_str_t));
        if (pscf->conf_commands == NULL) {
            return RX_CONF_ERROR;
        }
    }
    pair = rx_array_push(pscf->conf_commands);
    if (pair == NULL) {
        return RX_CONF_ERROR;
    }
    pair[0] = value[1];
    pair[1] = value[2];
    return RX_CONF_OK;
}

static void
free_ctx(void *data)
{
    SSL_CTX_free(data);
}

/* A path relative to the configuration's directory, as nginx. */
static rx_int_t
full_path(rx_conf_t *cf, rx_str_t *name)
{
    return name->len == 0 ? RX_OK : rx_conf_full_name(cf->cycle, name, true);
}

/* The certificate key, with each proxy_ssl_password_file passphrase in
 * turn (or none). */
static rx_int_t
load_key(rx_conf_t *cf, rx_http_proxy_ssl_conf_t *pscf, SSL_CTX *ctx)
{
    rx_str_t  *pw = pscf->passwords ? pscf->passwords->elts : NULL;
    rx_uint_t  i, n = pscf->passwords ? pscf->passwords->nelts : 1;
    int        ok = 0;

    for (i = 0; i < n && !ok; i++) {
        ERR_clear_error();
        SSL_CTX_set_default_passwd_cb_userdata(ctx, pw ? pw[i].data : "");
        ok = SSL_CTX_use_PrivateKey_file(ctx, pscf->certificate_key.data,
                                         SSL_FILETYPE_PEM);
    }
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    if (!ok) {
        rx_tls_log_error(RX_LOG_EMERG, cf->log, 0, "cannot load certificate "
                         "key \"%s\"", pscf->certificate_key.data);
        return RX_ERROR;
    }
    return RX_OK;
}

/* proxy_ssl_conf_command, through OpenSSL's SSL_CONF as nginx. */
static rx_int_t
conf_commands(rx_conf_t *cf, rx_http_proxy_ssl_conf_t *pscf, SSL_CTX *ctx)
{
    rx_str_t *pair;
    int       rc;

    if (pscf->conf_commands == NULL) {
        return RX_OK;
    }
    pair = pscf->conf_commands->elts;
    rc = rx_tls_conf_commands(ctx, false, pair, pscf->conf_commands->nelts);
    if (rc == RX_TLS_CONF_OK) {
        return RX_OK;
    }
    if (rc >= 0) {
        rx_tls_log_error(RX_LOG_EMERG, cf->log, 0, "SSL_CONF_cmd(\"%s\", "
                         "\"%s\") failed", pair[2 * rc].data,
                         pair[2 * rc + 1].data);
    } else {
        rx_tls_log_error(RX_LOG_EMERG, cf->log, 0, "%s failed",
                         rc == RX_TLS_CONF_NEW_FAILED ? "SSL_CONF_CTX_new()"
                                                      : "SSL_CONF_finish()");
    }
    return RX_ERROR;
}

/* What the peer must prove: trusted CAs, the CRL, the chain's depth. */
static rx_int_t
verify_setup(rx_conf_t *cf, rx_http_proxy_ssl_conf_t *pscf, SSL_CTX *ctx)
{
    X509_STORE  *store;
    X509_LOOKUP *lookup;

    if (pscf->ssl.verify) {
        if (pscf->trusted_certificate.len == 0) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "no "
                         "proxy_ssl_trusted_certificate for proxy_ssl_verify");
            return RX_ERROR;
        }
        /* the handshake itself fails on a bad certificate, so that no
         * byte of the request reaches a peer that did not prove itself */
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        SSL_CTX_set_verify_depth(ctx, (int) pscf->verify_depth);
    }
    if (pscf->trusted_certificate.len
        && SSL_CTX_load_verify_locations(ctx, pscf->trusted_certificate.data,
                                         NULL) != 1) {
        rx_tls_log_error(RX_LOG_EMERG, cf->log, 0,
                         "SSL_CTX_load_verify_locations(\"%s\") failed",
                         pscf->trusted_certificate.data);
        return RX_ERROR;
    }
    if (pscf->crl.len == 0) {
        return RX_OK;
    }
    store = SSL_CTX_get_cert_store(ctx);
    lookup = store ? X509_STORE_add_lookup(store, X509_LOOKUP_file()) : NULL;
    if (lookup == NULL
        || X509_LOOKUP_load_file(lookup, pscf->crl.data, X509_FILETYPE_PEM)
           != 1) {
        rx_tls_log_error(RX_LOG_EMERG, cf->log, 0,
                         "X509_LOOKUP_load_file(\"%s\") failed", pscf->crl.data);
        return RX_ERROR;
    }
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK
                                | X509_V_FLAG_CRL_CHECK_ALL);
    return RX_OK;
}

/* The location's SSL_CTX, freed with the cycle. */
static rx_int_t
build_ctx(rx_conf_t *cf, rx_http_proxy_ssl_conf_t *pscf)
{
    static const struct { rx_uint_t proto; uint64_t op; } no[] = {
        { PROTO_SSLv3, SSL_OP_NO_SSLv3 },
        { PROTO_TLSv1, SSL_OP_NO_TLSv1 },
        { PROTO_TLSv1_1, SSL_OP_NO_TLSv1_1 },
        { PROTO_TLSv1_2, SSL_OP_NO_TLSv1_2 },
        { PROTO_TLSv1_3, SSL_OP_NO_TLSv1_3 },
    };
    rx_pool_cleanup_t *cln;
    SSL_CTX           *ctx;
    size_t             i;

    if (rx_tls_init(cf->log) != RX_OK) {
        return RX_ERROR;
    }
    cln = rx_pool_cleanup_add(cf->pool, 0);
    ctx = SSL_CTX_new(TLS_client_method());
    if (cln == NULL || ctx == NULL) {
        rx_tls_log_error(RX_LOG_EMERG, cf->log, 0, "SSL_CTX_new() failed");
        return RX_ERROR;
    }
    cln->handler = free_ctx;
    cln->data = ctx;
    pscf->ssl.ctx = ctx;
    for (i = 0; i < rx_nelems(no); i++) {
        if (!(pscf->protocols & no[i].proto)) {
            SSL_CTX_set_options(ctx, no[i].op);
        }
    }
    if (SSL_CTX_set_cipher_list(ctx, pscf->ciphers.data) != 1) {
        rx_tls_log_error(RX_LOG_EMERG, cf->log, 0,
                         "SSL_CTX_set_cipher_list(\"%s\") failed",
                         pscf->ciphers.data);
        return RX_ERROR;
    }
    if (pscf->certificate.len) {
        if (pscf->certificate_key.len == 0) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "no "
                         "\"proxy_ssl_certificate_key\" is defined for "
                         "certificate \"%s\"", pscf->certificate.data);
            return RX_ERROR;
        }
        if (SSL_CTX_use_certificate_chain_file(ctx, pscf->certificate.data)
            != 1) {
            rx_tls_log_error(RX_LOG_EMERG, cf->log, 0, "cannot load "
                             "certificate \"%s\"", pscf->certificate.data);
            return RX_ERROR;
        }
        if (load_key(cf, pscf, ctx) != RX_OK) {
            return RX_ERROR;
        }
    }
    if (verify_setup(cf, pscf, ctx) != RX_OK) {
        return RX_ERROR;
    }
    if (pscf->ssl.session_reuse) {
        rx_http_upstream_ssl_cache_sessions(ctx);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    }
    return conf_commands(cf, pscf, ctx);
}

static const char *
merge_loc_conf(rx_conf_t *cf, void *parent, void *child)
{
    rx_http_proxy_ssl_conf_t *prev = parent, *conf = child;

    rx_conf_merge_ptr(conf->ssl.name, prev->ssl.name, NULL);
    rx_conf_merge_value(conf->ssl.server_name, prev->ssl.server_name, 0);
    rx_conf_merge_value(conf->ssl.verify, prev->ssl.verify, 0);
    rx_conf_merge_value(conf->ssl.session_reuse, prev->ssl.session_reuse, 1);
    rx_conf_merge_uint(conf->verify_depth, prev->verify_depth, 1);
    if (conf->protocols == 0) {
        conf->protocols = prev->protocols ? prev->protocols
                                          : PROTO_TLSv1_2 | PROTO_TLSv1_3;
    }
    rx_conf_merge_str(conf->ciphers, prev->ciphers, "DEFAULT");
    rx_conf_merge_str(conf->trusted_certificate, prev->trusted_certificate, "");
    rx_conf_merge_str(conf->crl, prev->crl, "");
    rx_conf_merge_str(conf->certificate, prev->certificate, "");
    rx_conf_merge_str(conf->certificate_key, prev->certificate_key, "");
    rx_conf_merge_ptr(conf->passwords, prev->passwords, NULL);
    rx_conf_merge_ptr(conf->conf_commands, prev->conf_commands, NULL);
    if (full_path(cf, &conf->trusted_certificate) != RX_OK
        || full_path(cf, &conf->crl) != RX_OK
        || full_path(cf, &conf->certificate) != RX_OK
        || full_path(cf, &conf->certificate_key) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (conf->needed && build_ctx(cf, conf) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

#endif /* RX_HAVE_OPENSSL */
