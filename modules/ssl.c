/*
 * ssl.c: the ssl module (nginx's ngx_http_ssl_module): the ssl_*
 * directives, one SSL_CTX per server block built at load time in the
 * master (workers inherit it across fork), the checks of `listen ... ssl`,
 * the start of TLS on an accepted connection, SNI and ALPN, and the
 * per-request verdicts nginx gives: 497 (plain HTTP to an HTTPS port),
 * 495/496 (client certificate), 421 (Host other than the verified SNI).
 * The CTX itself is filled by ssl_ctx.c; sessions by ssl_session.c.
 */
#include <ctype.h>
#include "ssl.h"

#if (RX_HAVE_OPENSSL)
#include "http_server.h"
#include "http_uri.h"
#include "http_v2.h"

static const char *set_file(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_file_list(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_password_file(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_conf_command(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_enable(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_verify(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_int_t preconfiguration(rx_conf_t *cf);
static rx_int_t postconfiguration(rx_conf_t *cf);
static rx_int_t init_connection(rx_conn_t *c, rx_http_core_srv_conf_t *def);
static bool alpn_h2(rx_conn_t *c);
static rx_int_t check_request(rx_http_request_t *r);
static void *create_srv_conf(rx_conf_t *cf);
static const char *merge_srv_conf(rx_conf_t *cf, void *prev, void *conf);

#define SRV  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF)
#define OFF(f)  offsetof(rx_http_ssl_srv_conf_t, f)

static const rx_conf_enum_t protocols[] = {
    { "SSLv2", RX_SSL_SSLv2 }, { "SSLv3", RX_SSL_SSLv3 },
    { "TLSv1", RX_SSL_TLSv1 }, { "TLSv1.1", RX_SSL_TLSv1_1 },
    { "TLSv1.2", RX_SSL_TLSv1_2 }, { "TLSv1.3", RX_SSL_TLSv1_3 },
    { NULL, 0 }
};

static const rx_conf_enum_t verify_modes[] = {
    { "off", RX_SSL_VERIFY_OFF }, { "on", RX_SSL_VERIFY_ON },
    { "optional", RX_SSL_VERIFY_OPTIONAL },
    { "optional_no_ca", RX_SSL_VERIFY_OPTIONAL_NO_CA },
    { NULL, 0 }
};

static const rx_conf_bounds_t depth_bounds = { 0, INT_MAX };

static const rx_command_t ssl_commands[] = {
    { "ssl", SRV | RX_CONF_FLAG, set_enable,
      RX_HTTP_SRV_CONF_OFFSET, OFF(enable), NULL },
    { "ssl_certificate", SRV | RX_CONF_TAKE1, set_file_list,
      RX_HTTP_SRV_CONF_OFFSET, OFF(certificates), NULL },
    { "ssl_certificate_key", SRV | RX_CONF_TAKE1, set_file_list,
      RX_HTTP_SRV_CONF_OFFSET, OFF(certificate_keys), NULL },
    { "ssl_password_file", SRV | RX_CONF_TAKE1, set_password_file,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "ssl_protocols", SRV | RX_CONF_1MORE, rx_conf_set_bitmask_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(protocols), protocols },
    { "ssl_ciphers", SRV | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(ciphers), NULL },
    { "ssl_conf_command", SRV | RX_CONF_TAKE2, set_conf_command,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "ssl_prefer_server_ciphers", SRV | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(prefer_server_ciphers), NULL },
    { "ssl_ecdh_curve", SRV | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(ecdh_curve), NULL },
    { "ssl_dhparam", SRV | RX_CONF_TAKE1, set_file,
      RX_HTTP_SRV_CONF_OFFSET, OFF(dhparam), NULL },
    { "ssl_session_cache", SRV | RX_CONF_TAKE12, rx_http_ssl_set_session_cache,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "ssl_session_timeout", SRV | RX_CONF_TAKE1, rx_conf_set_sec_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(session_timeout), NULL },
    { "ssl_session_tickets", SRV | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(session_tickets), NULL },
    { "ssl_session_ticket_key", SRV | RX_CONF_TAKE1, rx_http_ssl_set_ticket_key,
      RX_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "ssl_verify_client", SRV | RX_CONF_TAKE1, set_verify,
      RX_HTTP_SRV_CONF_OFFSET, OFF(verify), verify_modes },
    { "ssl_verify_depth", SRV | RX_CONF_TAKE1, rx_conf_set_num_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(verify_depth), &depth_bounds },
    { "ssl_client_certificate", SRV | RX_CONF_TAKE1, set_file,
      RX_HTTP_SRV_CONF_OFFSET, OFF(client_certificate), NULL },
    { "ssl_trusted_certificate", SRV | RX_CONF_TAKE1, set_file,
      RX_HTTP_SRV_CONF_OFFSET, OFF(trusted_certificate), NULL },
    { "ssl_crl", SRV | RX_CONF_TAKE1, set_file,
      RX_HTTP_SRV_CONF_OFFSET, OFF(crl), NULL },
    { "ssl_stapling", SRV | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(stapling), NULL },
    { "ssl_stapling_file", SRV | RX_CONF_TAKE1, set_file,
      RX_HTTP_SRV_CONF_OFFSET, OFF(stapling_file), NULL },
    { "ssl_stapling_verify", SRV | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(stapling_verify), NULL },
    { "ssl_early_data", SRV | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(early_data), NULL },
    { "ssl_reject_handshake", SRV | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(reject_handshake), NULL },
    { "ssl_buffer_size", SRV | RX_CONF_TAKE1, rx_conf_set_size_slot,
      RX_HTTP_SRV_CONF_OFFSET, OFF(buffer_size), NULL },
    rx_null_command
};

static const rx_http_module_t ssl_ctx_hooks = {
    preconfiguration, postconfiguration, NULL, NULL,
    create_srv_conf, merge_srv_conf, NULL, NULL
};

rx_module_t rx_http_ssl_module = {
    "rx_http_ssl_module", 0, 0, RX_HTTP_MODULE, &ssl_ctx_hooks,
    ssl_commands, NULL, NULL, NULL, NULL
};

rx_http_ssl_srv_conf_t *
rx_http_ssl_srv_conf(rx_http_core_srv_conf_t *cscf)
{
    return cscf->ctx->srv_conf[rx_http_ssl_module.ctx_index];
}

/* ---- directives ---------------------------------------------------------- */

static rx_int_t
file_of(rx_conf_t *cf, const rx_str_t *value, rx_ssl_file_t *f)
{
    f->path.len = value->len;
    f->path.data = value->data;
    f->pos.file = cf->conf_file->name;
    f->pos.line = cf->conf_file->line;
    return rx_conf_full_name(cf->cycle, &f->path, true);
}

/* A file relative to the configuration's directory, as nginx. */
static const char *
set_file(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_ssl_file_t *f = rx_conf_field(conf, cmd, rx_ssl_file_t);
    rx_str_t      *value = cf->args->elts;

    if (f->path.data) {
        return "is duplicate";
    }
    return file_of(cf, &value[1], f) == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

/* ssl_certificate and ssl_certificate_key may repeat (RSA and ECDSA). */
/* Does a path name a variable ("$name" or "${name}")? */
static bool
has_variable(const rx_str_t *v)
{
    size_t i;

    for (i = 0; i + 1 < v->len; i++) {
        if (v->data[i] == '$' && (v->data[i + 1] == '{' || v->data[i + 1] == '_'
                                  || isalnum((unsigned char) v->data[i + 1]))) {
            return true;
        }
    }
    return false;
}

static const char *
set_file_list(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_array_t   **list = rx_conf_field(conf, cmd, rx_array_t *);
    rx_str_t      *value = cf->args->elts;
    rx_ssl_file_t *f;

    if (*list == NULL) {
        *list = rx_array_create(cf->pool, 2, sizeof(rx_ssl_file_t));
        if (*list == NULL) {
            return RX_CONF_ERROR;
        }
    }
    if (has_variable(&value[1])) {
        /* nginx loads such a certificate at each handshake; ringx does
         * not yet: refused rather than read as a file named "$..." */
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "variables in \"%s\" are not "
                          "supported by ringx", cmd->name);
        return RX_CONF_ERROR;
    }
    f = rx_array_push(*list);
    if (f == NULL) {
        return RX_CONF_ERROR;
    }
    return file_of(cf, &value[1], f) == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

/* The passwords are read now: one per line, tried in turn on every key. */
static const char *
set_password_file(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_ssl_srv_conf_t *sscf = conf;
    rx_str_t               *value = cf->args->elts, *pw;
    rx_ssl_file_t           f;
    char                    line[1024];
    FILE                   *fp;
    size_t                  n;

    (void) cmd;
    if (sscf->passwords != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    if (file_of(cf, &value[1], &f) != RX_OK) {
        return RX_CONF_ERROR;
    }
    fp = fopen(f.path.data, "r");
    if (fp == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "open() \"%s\" failed",
                          f.path.data);
        return RX_CONF_ERROR;
    }
    sscf->passwords = rx_array_create(cf->pool, 2, sizeof(rx_str_t));
    while (sscf->passwords && fgets(line, sizeof(line), fp)) {
        n = strcspn(line, "\r\n");
        pw = rx_array_push(sscf->passwords);
        if (pw == NULL || (pw->data = rx_pstrdup_c(cf->pool, line, n)) == NULL) {
            sscf->passwords = NULL;
            break;
        }
        pw->len = n;
        explicit_bzero(line, sizeof(line));
    }
    fclose(fp);
    if (sscf->passwords == NULL) {
        return RX_CONF_ERROR;
    }
    if (sscf->passwords->nelts == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "empty password file \"%s\"",
                          f.path.data);
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

static const char *
set_conf_command(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_ssl_srv_conf_t *sscf = conf;
    rx_str_t               *value = cf->args->elts, *pair;

    (void) cmd;
    if (sscf->conf_commands == NULL) {
        sscf->conf_commands = rx_array_create(cf->pool, 4, sizeof(rx_str_t));
        if (sscf->conf_commands == NULL) {
            return RX_CONF_ERROR;
        }
    }
    pair = rx_array_push_n(sscf->conf_commands, 2);
    if (pair == NULL) {
        return RX_CONF_ERROR;
    }
    pair[0] = value[1];
    pair[1] = value[2];
    return RX_CONF_OK;
}

static const char *
set_verify(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_ssl_srv_conf_t *sscf = conf;
    const char             *rv = rx_conf_set_enum_slot(cf, cmd, conf);

    if (rv == RX_CONF_OK) {
        sscf->verify_pos.file = cf->conf_file->name;
        sscf->verify_pos.line = cf->conf_file->line;
    }
    return rv;
}

/* `ssl on;`: deprecated in nginx (a warning) but still honoured there, so
 * old configs keep speaking TLS: postconfiguration marks the server's
 * listen lines as `listen ... ssl`. */
static const char *
set_enable(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_ssl_srv_conf_t *sscf = conf;
    const char             *rv = rx_conf_set_flag_slot(cf, cmd, conf);

    if (rv != RX_CONF_OK) {
        return rv;
    }
    sscf->enable_pos.file = cf->conf_file->name;
    sscf->enable_pos.line = cf->conf_file->line;
    rx_conf_log_error(RX_LOG_WARN, cf, 0, "the \"ssl\" directive is "
        "deprecated, use the \"listen ... ssl\" directive instead");
    return RX_CONF_OK;
}

/* ---- confs --------------------------------------------------------------- */

static void *
create_srv_conf(rx_conf_t *cf)
{
    rx_http_ssl_srv_conf_t *sscf = rx_pcalloc(cf->pool, sizeof(*sscf));

    if (sscf == NULL) {
        return NULL;
    }
    sscf->enable = RX_CONF_UNSET;
    sscf->passwords = RX_CONF_UNSET_PTR;
    sscf->prefer_server_ciphers = RX_CONF_UNSET;
    sscf->builtin_session_cache = RX_SSL_SCACHE_UNSET;
    sscf->session_timeout = RX_CONF_UNSET_MSEC;
    sscf->session_tickets = RX_CONF_UNSET;
    sscf->ticket_keys = RX_CONF_UNSET_PTR;
    sscf->verify = RX_CONF_UNSET_UINT;
    sscf->verify_depth = RX_CONF_UNSET;
    sscf->stapling = RX_CONF_UNSET;
    sscf->stapling_verify = RX_CONF_UNSET;
    sscf->early_data = RX_CONF_UNSET;
    sscf->reject_handshake = RX_CONF_UNSET;
    sscf->buffer_size = RX_CONF_UNSET_SIZE;
    return sscf;
}

static void
merge_file(rx_ssl_file_t *conf, const rx_ssl_file_t *prev)
{
    if (conf->path.data == NULL) {
        *conf = *prev;
    }
}

static void
free_ctx(void *data)
{
    SSL_CTX_free(data);
}

static const char *
merge_srv_conf(rx_conf_t *cf, void *parent, void *child)
{
    rx_http_ssl_srv_conf_t *prev = parent, *conf = child;
    rx_pool_cleanup_t      *cln;

    if (conf->enable == RX_CONF_UNSET) {
        conf->enable = prev->enable == RX_CONF_UNSET ? 0 : prev->enable;
        conf->enable_pos = prev->enable_pos;
    }
    if (conf->certificates == NULL) {
        /* certificates and keys go down together, as nginx */
        conf->certificates = prev->certificates;
        conf->certificate_keys = prev->certificate_keys;
    }
    rx_conf_merge_ptr(conf->passwords, prev->passwords, NULL);
    if (conf->protocols == 0) {
        conf->protocols = prev->protocols ? prev->protocols
                          : RX_SSL_TLSv1_2 | RX_SSL_TLSv1_3;
    }
    rx_conf_merge_str(conf->ciphers, prev->ciphers, "HIGH:!aNULL:!MD5");
    if (conf->conf_commands == NULL) {
        conf->conf_commands = prev->conf_commands;
    }
    rx_conf_merge_value(conf->prefer_server_ciphers,
                        prev->prefer_server_ciphers, 0);
    rx_conf_merge_str(conf->ecdh_curve, prev->ecdh_curve, "auto");
    merge_file(&conf->dhparam, &prev->dhparam);
    if (conf->builtin_session_cache == RX_SSL_SCACHE_UNSET) {
        conf->builtin_session_cache = prev->builtin_session_cache
            == RX_SSL_SCACHE_UNSET ? RX_SSL_SCACHE_NONE
                                   : prev->builtin_session_cache;
        conf->shm_cache = prev->shm_cache;
    }
    rx_conf_merge_msec(conf->session_timeout, prev->session_timeout, 300);
    rx_conf_merge_value(conf->session_tickets, prev->session_tickets, 1);
    rx_conf_merge_ptr(conf->ticket_keys, prev->ticket_keys, NULL);
    rx_conf_merge_uint(conf->verify, prev->verify, RX_SSL_VERIFY_OFF);
    if (conf->verify_pos.file.data == NULL) {
        conf->verify_pos = prev->verify_pos;
    }
    rx_conf_merge_value(conf->verify_depth, prev->verify_depth, 1);
    merge_file(&conf->client_certificate, &prev->client_certificate);
    merge_file(&conf->trusted_certificate, &prev->trusted_certificate);
    merge_file(&conf->crl, &prev->crl);
    rx_conf_merge_value(conf->stapling, prev->stapling, 0);
    rx_conf_merge_value(conf->stapling_verify, prev->stapling_verify, 0);
    merge_file(&conf->stapling_file, &prev->stapling_file);
    rx_conf_merge_value(conf->early_data, prev->early_data, 0);
    rx_conf_merge_value(conf->reject_handshake, prev->reject_handshake, 0);
    rx_conf_merge_size(conf->buffer_size, prev->buffer_size, 16384);

    if (conf->certificates == NULL && !conf->reject_handshake) {
        if (conf->enable) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "no \"ssl_certificate\" "
                "is defined for the \"ssl\" directive in %s:%lu",
                conf->enable_pos.file.data,
                (unsigned long) conf->enable_pos.line);
            return RX_CONF_ERROR;
        }
        return RX_CONF_OK;          /* no TLS in this server */
    }
    if (rx_tls_init(cf->log) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (rx_http_ssl_build_ctx(cf, conf) != RX_OK) {
        SSL_CTX_free(conf->ctx);
        conf->ctx = NULL;
        return RX_CONF_ERROR;
    }
    cln = rx_pool_cleanup_add(cf->pool, 0);
    if (cln == NULL) {
        SSL_CTX_free(conf->ctx);
        conf->ctx = NULL;
        return RX_CONF_ERROR;
    }
    cln->handler = free_ctx;
    cln->data = conf->ctx;
    return rx_http_ssl_session_setup(cf, conf) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

static rx_int_t
preconfiguration(rx_conf_t *cf)
{
    return rx_http_ssl_add_variables(cf);
}

/* nginx's check: the default server of an address that has `ssl` on one
 * of its listen lines must be able to answer a handshake. */
static rx_int_t
postconfiguration(rx_conf_t *cf)
{
    rx_http_core_main_conf_t *cmcf = rx_http_conf_get_module_main_conf(cf,
                                         rx_http_core_module);
    rx_http_listen_opt_t     *lo = cmcf->listens.elts;
    rx_http_core_srv_conf_t  *def;
    rx_http_ssl_srv_conf_t   *sscf;
    rx_uint_t                 i, j;
    bool                      ssl;

    /* the HTTP core starts TLS and judges requests through these */
    rx_http_tls_hooks.init_connection = init_connection;
    rx_http_tls_hooks.check_request = check_request;
    rx_http_tls_hooks.alpn_h2 = alpn_h2;

    /* `ssl on;` in a server: its addresses speak TLS, as its listen lines
     * had said `ssl` */
    for (i = 0; lo && i < cmcf->listens.nelts; i++) {
        if (rx_http_ssl_srv_conf(lo[i].server)->enable == 1) {
            lo[i].ssl = true;
        }
    }
    for (i = 0; lo && i < cmcf->listens.nelts; i++) {
        for (j = 0; j < i && !rx_sockaddr_eq(&lo[j].addr, &lo[i].addr); j++) {
            /* the address's first listen line? */
        }
        if (j < i) {
            continue;               /* checked with that one */
        }
        ssl = false;
        def = NULL;
        for (j = i; j < cmcf->listens.nelts; j++) {
            if (!rx_sockaddr_eq(&lo[j].addr, &lo[i].addr)) {
                continue;
            }
            ssl = ssl || lo[j].ssl;
            if (lo[j].default_server && def == NULL) {
                def = lo[j].server;
            }
        }
        if (!ssl) {
            continue;
        }
        if (def == NULL) {
            def = lo[i].server;     /* the first server of the address */
        }
        sscf = rx_http_ssl_srv_conf(def);
        if (sscf->ctx == NULL) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "no \"ssl_certificate\" is "
                "defined for the \"listen ... ssl\" directive in %s:%lu",
                def->file.data, (unsigned long) def->line);
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/* ---- connections ----------------------------------------------------------- */

static rx_int_t
init_connection(rx_conn_t *c, rx_http_core_srv_conf_t *def)
{
    rx_http_ssl_srv_conf_t *sscf = rx_http_ssl_srv_conf(def);

    if (sscf->ctx == NULL) {
        return RX_ERROR;            /* refused at load time: cannot happen */
    }
    return rx_tls_server_start(c, sscf->ctx, true);
}

/* SNI: the server is chosen by the name as by Host; its CTX (certificate,
 * verification) replaces the default server's for this handshake. */
static int
servername(SSL *ssl, int *ad, void *arg)
{
    rx_conn_t               *c = rx_tls_conn(ssl);
    rx_http_connection_t    *hc = c ? c->data : NULL;
    const char              *name;
    rx_http_core_srv_conf_t *cscf;
    rx_http_ssl_srv_conf_t  *sscf;
    SSL_CTX                 *ctx;
    rx_str_t                 host;

    (void) arg;
    if (hc == NULL || hc->names == NULL) {
        return SSL_TLSEXT_ERR_OK;
    }
    cscf = hc->default_server;
    name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (name && *name) {
        host.data = (char *) name;
        host.len = strlen(name);
        if (!rx_http_validate_host(&host, c->pool, true)) {
            *ad = SSL_AD_UNRECOGNIZED_NAME;
            return SSL_TLSEXT_ERR_ALERT_FATAL;
        }
        cscf = rx_http_find_server(hc->names, &host, NULL, 0, NULL, NULL);
        if (cscf == NULL) {
            cscf = hc->default_server;
        }
        hc->ssl_server = cscf;
    }
    hc->server = cscf;
    sscf = rx_http_ssl_srv_conf(cscf);
    if (sscf->reject_handshake) {
        *ad = SSL_AD_UNRECOGNIZED_NAME;
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    ctx = sscf->ctx;
    if (ctx && ctx != SSL_get_SSL_CTX(ssl)) {
        /* SSL_set_SSL_CTX takes the certificates; verification and
         * options stay the first CTX's unless copied, as nginx does */
        SSL_set_SSL_CTX(ssl, ctx);
        SSL_set_verify(ssl, SSL_CTX_get_verify_mode(ctx),
                       SSL_CTX_get_verify_callback(ctx));
        SSL_set_verify_depth(ssl, SSL_CTX_get_verify_depth(ctx));
        SSL_clear_options(ssl, SSL_get_options(ssl)
                               & ~SSL_CTX_get_options(ctx));
        SSL_set_options(ssl, SSL_CTX_get_options(ctx));
    }
    return SSL_TLSEXT_ERR_OK;
}

/* ALPN: h2 first when the server (chosen by SNI) has http2 on, then
 * HTTP/1.x. A client that offers ALPN without any of these is refused
 * (no_application_protocol), as nginx >= 1.21.4 does against
 * cross-protocol attacks (RFC 7301 section 3.2). */
static int
alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char ours[] = "\x02h2\x08http/1.1\x08http/1.0";
    rx_conn_t                 *c = rx_tls_conn(ssl);
    rx_http_connection_t      *hc = c ? c->data : NULL;
    const unsigned char       *offer = ours + 3;
    unsigned int               offer_len = sizeof(ours) - 1 - 3;
    unsigned char             *sel;

    (void) arg;
    if (hc && hc->server && rx_http_v2_enabled(hc->server)) {
        offer = ours;
        offer_len = sizeof(ours) - 1;
    }
    if (SSL_select_next_proto(&sel, outlen, offer, offer_len, in, inlen)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

/* Whether the handshake chose h2 (http_connection.c then starts
 * HTTP/2). */
static bool
alpn_h2(rx_conn_t *c)
{
    SSL                 *ssl = rx_tls_ssl(c);
    const unsigned char *p = NULL;
    unsigned int         len = 0;

    if (ssl) {
        SSL_get0_alpn_selected(ssl, &p, &len);
    }
    return len == 2 && memcmp(p, "h2", 2) == 0;
}

void
rx_http_ssl_set_callbacks(SSL_CTX *ctx)
{
    SSL_CTX_set_tlsext_servername_callback(ctx, servername);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
}

/* ---- requests -------------------------------------------------------------- */

bool
rx_http_ssl_verify_error_optional(long rc)
{
    return rc == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
        || rc == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
        || rc == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
        || rc == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        || rc == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE;
}

static rx_int_t
check_request(rx_http_request_t *r)
{
    rx_http_connection_t   *hc = r->hc;
    rx_conn_t              *c = r->conn;
    rx_http_ssl_srv_conf_t *sscf;
    SSL                    *ssl;
    long                    rc;

    if (!rx_http_server_names_ssl(hc->names)) {
        return RX_OK;
    }
    if (rx_tls_plain_http(c)) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent plain HTTP "
                                  "request to HTTPS port");
        return RX_HTTP_TO_HTTPS;
    }
    ssl = rx_tls_ssl(c);
    if (ssl == NULL) {
        return RX_OK;
    }
    sscf = rx_http_ssl_srv_conf(hc->server);
    if (hc->ssl_server && hc->ssl_server != hc->server
        && sscf->verify != RX_SSL_VERIFY_OFF) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client attempted to "
            "request the server name different from the one that was "
            "negotiated");
        return RX_HTTP_MISDIRECTED_REQUEST;
    }
    if (sscf->verify == RX_SSL_VERIFY_OFF) {
        return RX_OK;
    }
    rc = SSL_get_verify_result(ssl);
    if (rc != X509_V_OK && (sscf->verify != RX_SSL_VERIFY_OPTIONAL_NO_CA
                            || !rx_http_ssl_verify_error_optional(rc))) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client SSL certificate "
            "verify error: (%ld:%s)", rc, X509_verify_cert_error_string(rc));
        rx_http_ssl_session_drop(ssl);
        return RX_HTTPS_CERT_ERROR;
    }
    if (sscf->verify == RX_SSL_VERIFY_ON
        && SSL_get0_peer_certificate(ssl) == NULL) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent no required "
                                  "SSL certificate");
        rx_http_ssl_session_drop(ssl);
        return RX_HTTPS_NO_CERT;
    }
    return RX_OK;
}

#endif /* RX_HAVE_OPENSSL */
