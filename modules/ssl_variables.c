/*
 * ssl_variables.c: the $ssl_* variables of nginx's ssl module, read from
 * the connection's SSL once the handshake is done. On a plain connection
 * they are not found (empty; "-" in the access log), as in nginx.
 */
#include "ssl.h"

#if (RX_HAVE_OPENSSL)
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include "http_variables.h"

typedef rx_int_t (*ssl_get_pt)(rx_http_request_t *r, SSL *ssl,
    rx_http_variable_value_t *v);

static rx_int_t
set_copy(rx_http_request_t *r, rx_http_variable_value_t *v, const char *s,
    size_t len)
{
    v->data = rx_pnalloc(r->pool, len ? len : 1);
    if (v->data == NULL) {
        return RX_ERROR;
    }
    memcpy(v->data, s, len);
    v->len = len;
    return RX_OK;
}

static rx_int_t
set_text(rx_http_request_t *r, rx_http_variable_value_t *v, const char *s)
{
    if (s == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    return set_copy(r, v, s, strlen(s));
}

static rx_int_t
set_hex(rx_http_request_t *r, rx_http_variable_value_t *v,
    const unsigned char *b, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t            i;

    v->data = rx_pnalloc(r->pool, 2 * n + 1);
    if (v->data == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < n; i++) {
        v->data[2 * i] = hex[b[i] >> 4];
        v->data[2 * i + 1] = hex[b[i] & 0xf];
    }
    v->len = 2 * n;
    return RX_OK;
}

/* What a BIO filled with, into the request's pool. */
static rx_int_t
set_bio(rx_http_request_t *r, rx_http_variable_value_t *v, BIO *bio)
{
    char    *p;
    long     n;
    rx_int_t rc;

    if (bio == NULL) {
        return RX_ERROR;
    }
    n = BIO_get_mem_data(bio, &p);
    rc = set_copy(r, v, p, n > 0 ? (size_t) n : 0);
    BIO_free(bio);
    return rc;
}

static rx_int_t
get_protocol(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    return set_text(r, v, SSL_get_version(ssl));
}

static rx_int_t
get_cipher(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    return set_text(r, v, SSL_get_cipher_name(ssl));
}

static rx_int_t
get_curve(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    int  nid = SSL_get_negotiated_group(ssl);
    char buf[16];

    if (nid == 0) {
        return set_text(r, v, "");
    }
    if (nid & TLSEXT_nid_unknown) {
        snprintf(buf, sizeof(buf), "0x%04x", nid & 0xffff);
        return set_text(r, v, buf);
    }
    return set_text(r, v, OBJ_nid2sn(nid));
}

/* Appends one name (or 0xNNNN for one OpenSSL does not know) and ':'. */
static char *
list_add(char *p, const char *name, unsigned code)
{
    if (name) {
        size_t n = strlen(name);
        memcpy(p, name, n);
        p += n;
    } else {
        p += sprintf(p, "0x%04x", code);
    }
    *p++ = ':';
    return p;
}

/* $ssl_ciphers: the ciphers the client offered, ':'-separated */
static rx_int_t
get_ciphers(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    const unsigned char *raw;
    size_t               n = SSL_get0_raw_cipherlist(ssl, &raw), i;
    char                *p;

    if (n == 0 || raw == NULL) {
        return set_text(r, v, "");
    }
    p = v->data = rx_pnalloc(r->pool, n / 2 * 64 + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i + 1 < n; i += 2) {
        const SSL_CIPHER *c = SSL_CIPHER_find(ssl, raw + i);
        p = list_add(p, c ? SSL_CIPHER_get_name(c) : NULL,
                     (unsigned) raw[i] << 8 | raw[i + 1]);
    }
    v->len = (size_t) (p - v->data) - 1;
    return RX_OK;
}

/* $ssl_curves: the groups the client offered, ':'-separated */
static rx_int_t
get_curves(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    int   n = SSL_get1_groups(ssl, NULL), i, *groups;
    char *p;

    if (n <= 0) {
        return set_text(r, v, "");
    }
    groups = rx_palloc(r->pool, (size_t) n * sizeof(int));
    p = v->data = rx_pnalloc(r->pool, (size_t) n * 64 + 1);
    if (groups == NULL || p == NULL) {
        return RX_ERROR;
    }
    n = SSL_get1_groups(ssl, groups);
    for (i = 0; i < n; i++) {
        int nid = groups[i];
        p = list_add(p, nid & TLSEXT_nid_unknown ? NULL : OBJ_nid2sn(nid),
                     (unsigned) nid & 0xffff);
    }
    v->len = p > v->data ? (size_t) (p - v->data) - 1 : 0;
    return RX_OK;
}

static rx_int_t
get_session_id(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    SSL_SESSION         *sess = SSL_get0_session(ssl);
    const unsigned char *id;
    unsigned int         len = 0;

    if (sess == NULL) {
        return set_text(r, v, "");
    }
    id = SSL_SESSION_get_id(sess, &len);
    return set_hex(r, v, id, len);
}

static rx_int_t
get_session_reused(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    return set_text(r, v, SSL_session_reused(ssl) ? "r" : ".");
}

static rx_int_t
get_server_name(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);

    return set_text(r, v, name ? name : "");
}

static rx_int_t
get_alpn(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    const unsigned char *p;
    unsigned int         len = 0;

    SSL_get0_alpn_selected(ssl, &p, &len);
    return set_copy(r, v, len ? (const char *) p : "", len);
}

static rx_int_t
get_early_data(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    (void) ssl;
    /* "1" while the request came as 0-RTT data before the handshake ended */
    return set_text(r, v, rx_tls_early_data(r->conn) ? "1" : "");
}

/* nginx: FAILED:reason, then NONE without a certificate, else SUCCESS */
static rx_int_t
get_client_verify(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    long rc = SSL_get_verify_result(ssl);
    char buf[256];

    if (rc != X509_V_OK) {
        snprintf(buf, sizeof(buf), "FAILED:%s", X509_verify_cert_error_string(rc));
        return set_text(r, v, buf);
    }
    return set_text(r, v, SSL_get0_peer_certificate(ssl) ? "SUCCESS" : "NONE");
}

static rx_int_t
get_dn(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v, bool issuer)
{
    X509 *cert = SSL_get0_peer_certificate(ssl);
    BIO  *bio;

    if (cert == NULL) {
        return set_text(r, v, "");
    }
    bio = BIO_new(BIO_s_mem());
    if (bio && X509_NAME_print_ex(bio, issuer ? X509_get_issuer_name(cert)
                                  : X509_get_subject_name(cert), 0,
                                  XN_FLAG_RFC2253) < 0) {
        BIO_free(bio);
        return RX_ERROR;
    }
    return set_bio(r, v, bio);
}

static rx_int_t
get_s_dn(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    return get_dn(r, ssl, v, false);
}

static rx_int_t
get_i_dn(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    return get_dn(r, ssl, v, true);
}

static rx_int_t
get_serial(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    X509 *cert = SSL_get0_peer_certificate(ssl);
    BIO  *bio;

    if (cert == NULL) {
        return set_text(r, v, "");
    }
    bio = BIO_new(BIO_s_mem());
    if (bio && i2a_ASN1_INTEGER(bio, X509_get0_serialNumber(cert)) < 0) {
        BIO_free(bio);
        return RX_ERROR;
    }
    return set_bio(r, v, bio);
}

static rx_int_t
get_fingerprint(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    X509         *cert = SSL_get0_peer_certificate(ssl);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int  len;

    if (cert == NULL) {
        return set_text(r, v, "");
    }
    if (X509_digest(cert, EVP_sha1(), md, &len) != 1) {
        return RX_ERROR;
    }
    return set_hex(r, v, md, len);
}

static rx_int_t
get_raw_cert(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    X509 *cert = SSL_get0_peer_certificate(ssl);
    BIO  *bio;

    if (cert == NULL) {
        return set_text(r, v, "");
    }
    bio = BIO_new(BIO_s_mem());
    if (bio && PEM_write_bio_X509(bio, cert) != 1) {
        BIO_free(bio);
        return RX_ERROR;
    }
    return set_bio(r, v, bio);
}

/* $ssl_client_cert: the PEM with a tab before every line but the first
 * (for a header value, nginx's deprecated form) and no final newline. */
static rx_int_t
get_cert(rx_http_request_t *r, SSL *ssl, rx_http_variable_value_t *v)
{
    rx_http_variable_value_t raw = { 0 };
    size_t                   i, n = 0, len;
    char                    *p;

    if (get_raw_cert(r, ssl, &raw) != RX_OK) {
        return RX_ERROR;
    }
    len = raw.len;
    while (len && (raw.data[len - 1] == '\n' || raw.data[len - 1] == '\r')) {
        len--;
    }
    for (i = 0; i < len; i++) {
        n += raw.data[i] == '\n';
    }
    p = v->data = rx_pnalloc(r->pool, len + n + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < len; i++) {
        *p++ = raw.data[i];
        if (raw.data[i] == '\n') {
            *p++ = '\t';
        }
    }
    v->len = (size_t) (p - v->data);
    return RX_OK;
}

static rx_int_t
var_ssl(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    SSL *ssl = rx_tls_ssl(r->conn);

    if (ssl == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    return ((ssl_get_pt) data)(r, ssl, v);
}

rx_int_t
rx_http_ssl_add_variables(rx_conf_t *cf)
{
    static const struct { const char *name; ssl_get_pt get; } vars[] = {
        { "ssl_protocol", get_protocol },
        { "ssl_cipher", get_cipher },
        { "ssl_curve", get_curve },
        { "ssl_ciphers", get_ciphers },
        { "ssl_curves", get_curves },
        { "ssl_session_id", get_session_id },
        { "ssl_session_reused", get_session_reused },
        { "ssl_server_name", get_server_name },
        { "ssl_alpn_protocol", get_alpn },
        { "ssl_early_data", get_early_data },
        { "ssl_client_verify", get_client_verify },
        { "ssl_client_s_dn", get_s_dn },
        { "ssl_client_i_dn", get_i_dn },
        { "ssl_client_serial", get_serial },
        { "ssl_client_fingerprint", get_fingerprint },
        { "ssl_client_raw_cert", get_raw_cert },
        { "ssl_client_cert", get_cert },
    };
    rx_http_variable_t *var;
    rx_str_t            name;
    size_t              i;

    for (i = 0; i < rx_nelems(vars); i++) {
        name.data = (char *) vars[i].name;
        name.len = strlen(vars[i].name);
        var = rx_http_add_variable(cf, &name, 0);
        if (var == NULL) {
            return RX_ERROR;
        }
        var->get = var_ssl;
        var->data = (uintptr_t) vars[i].get;
    }
    return RX_OK;
}

#endif /* RX_HAVE_OPENSSL */
