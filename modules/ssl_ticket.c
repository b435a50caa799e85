/*
 * ssl_ticket.c: the keys that encrypt session tickets.
 *
 * - ssl_session_ticket_key files: the first key encrypts, every key
 *   decrypts (rotation by listing a new key first, then dropping the old).
 * - No key file, ssl_session_cache shared: keys kept in the cache's zone
 *   (as nginx 1.23.2+), made by the first worker that needs one and shared
 *   by all; the zone outlives a reload, so tickets made before it still
 *   resume after it. A key encrypts for ssl_session_timeout and is then
 *   replaced; the one before it still decrypts for another timeout (the
 *   longest a ticket made under it lives), and such a ticket is renewed.
 * - Neither: OpenSSL's own keys, made when the SSL_CTX is created in the
 *   master (every worker has them; a reload makes new ones).
 */
#include "ssl.h"

#if (RX_HAVE_OPENSSL)
#include <time.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "shm_zone.h"

/* Sets up the MAC and the cipher for a ticket under key: 1, or -1. */
static int
apply_key(const rx_ssl_ticket_key_t *key, unsigned char *iv,
    EVP_CIPHER_CTX *ectx, EVP_MAC_CTX *hctx, int enc)
{
    const EVP_CIPHER *cipher = key->size == 16 ? EVP_aes_128_cbc()
                                               : EVP_aes_256_cbc();
    OSSL_PARAM        params[3];

    params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY,
                    (void *) key->hmac_key, key->size);
    params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                    (char *) "SHA256", 0);
    params[2] = OSSL_PARAM_construct_end();
    if (EVP_MAC_CTX_set_params(hctx, params) != 1) {
        return -1;
    }
    if (enc) {
        return EVP_EncryptInit_ex(ectx, cipher, NULL, key->aes_key, iv) == 1
               ? 1 : -1;
    }
    return EVP_DecryptInit_ex(ectx, cipher, NULL, key->aes_key, iv) == 1
           ? 1 : -1;
}

/* A fresh key in the zone's first slot, the old one kept in the second. */
static bool
rotate(rx_ssl_zone_keys_t *ks, int64_t now)
{
    rx_ssl_zone_key_t k;

    if (RAND_bytes(k.name, sizeof(k.name)) != 1
        || RAND_bytes(k.hmac_key, sizeof(k.hmac_key)) != 1
        || RAND_bytes(k.aes_key, sizeof(k.aes_key)) != 1) {
        return false;
    }
    k.made = now;
    if (ks->n > 0) {
        ks->key[1] = ks->key[0];
    }
    ks->key[0] = k;
    ks->n = ks->n > 0 ? 2 : 1;
    explicit_bzero(&k, sizeof(k));
    return true;
}

/* Finds (decrypting) or makes (encrypting) the zone key for a ticket and
 * copies it out, so the lock is not held over the crypto. 1 found (2: an
 * old key, renew the ticket), 0 none: a full handshake, -1 error. */
static int
zone_key(rx_http_ssl_srv_conf_t *sscf, unsigned char name[16],
    rx_ssl_ticket_key_t *out, int enc)
{
    int64_t             now = (int64_t) time(NULL);
    int64_t             ttl = rx_max((int64_t) sscf->session_timeout, 1);
    rx_ssl_zone_keys_t *ks = rx_http_ssl_cache_lock_keys(sscf->shm_cache);
    rx_uint_t           i;
    int                 rc = 1;

    if (ks == NULL) {
        return 0;
    }
    if (enc) {
        i = 0;
        if ((ks->n == 0 || now - ks->key[0].made >= ttl) && !rotate(ks, now)) {
            rc = -1;
        }
        memcpy(name, ks->key[0].name, 16);
    } else {
        for (i = 0; i < ks->n && memcmp(name, ks->key[i].name, 16) != 0; i++) {
            /* which key made it? */
        }
        if (i == ks->n || (i == 1 && now - ks->key[0].made > ttl)) {
            rc = 0;                 /* unknown, or older than any ticket */
        } else if (i == 1 || now - ks->key[0].made >= ttl) {
            rc = 2;                 /* made under a key that is going */
        }
    }
    if (rc > 0) {
        memcpy(out->name, ks->key[i].name, 16);
        memcpy(out->hmac_key, ks->key[i].hmac_key, 32);
        memcpy(out->aes_key, ks->key[i].aes_key, 32);
        out->size = 32;
    }
    rx_shm_zone_unlock(sscf->shm_cache);
    return rc;
}

/* A key of the ssl_session_ticket_key files, as zone_key answers. */
static int
file_key(rx_http_ssl_srv_conf_t *sscf, unsigned char name[16],
    rx_ssl_ticket_key_t *out, int enc)
{
    rx_ssl_ticket_key_t *key = sscf->ticket_keys->elts;
    rx_uint_t            i, n = sscf->ticket_keys->nelts;

    if (enc) {
        memcpy(name, key[0].name, 16);
        *out = key[0];
        return 1;
    }
    for (i = 0; i < n && memcmp(name, key[i].name, 16) != 0; i++) {
        /* which key made it? */
    }
    if (i == n) {
        return 0;                   /* unknown: a full handshake */
    }
    *out = key[i];
    return i == 0 ? 1 : 2;          /* 2: made by an old key, renew it */
}

static int
ticket_cb(SSL *ssl, unsigned char name[16], unsigned char *iv,
    EVP_CIPHER_CTX *ectx, EVP_MAC_CTX *hctx, int enc)
{
    rx_http_ssl_srv_conf_t *sscf = rx_http_ssl_session_conf(ssl);
    rx_ssl_ticket_key_t     key;
    int                     rc;

    if (sscf == NULL) {
        return 0;
    }
    if (sscf->ticket_keys) {
        rc = file_key(sscf, name, &key, enc);
    } else if (sscf->shm_cache) {
        rc = zone_key(sscf, name, &key, enc);
    } else {
        return 0;
    }
    if (rc > 0 && enc && RAND_bytes(iv, 16) != 1) {
        rc = -1;
    }
    if (rc > 0 && apply_key(&key, iv, ectx, hctx, enc) != 1) {
        rc = -1;
    }
    explicit_bzero(&key, sizeof(key));
    return rc;
}

rx_int_t
rx_http_ssl_tickets_setup(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    if (!sscf->session_tickets
        || (sscf->ticket_keys == NULL && sscf->shm_cache == NULL)) {
        return RX_OK;
    }
    if (SSL_CTX_set_tlsext_ticket_key_evp_cb(sscf->ctx, ticket_cb) != 1) {
        rx_http_ssl_conf_error(cf, NULL, "SSL_CTX_set_tlsext_ticket_key_"
                               "evp_cb() failed");
        return RX_ERROR;
    }
    return RX_OK;
}

const char *
rx_http_ssl_set_ticket_key(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_ssl_srv_conf_t *sscf = conf;
    rx_str_t               *value = cf->args->elts, path = value[1];
    unsigned char           buf[81];
    rx_ssl_ticket_key_t    *key;
    size_t                  n;
    FILE                   *fp;

    (void) cmd;
    if (rx_conf_full_name(cf->cycle, &path, true) != RX_OK) {
        return RX_CONF_ERROR;
    }
    fp = fopen(path.data, "rb");
    if (fp == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "open() \"%s\" failed",
                          path.data);
        return RX_CONF_ERROR;
    }
    n = fread(buf, 1, sizeof(buf), fp);
    fclose(fp);
    if (n != 48 && n != 80) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" must be 48 or 80 bytes",
                          path.data);
        return RX_CONF_ERROR;
    }
    if (sscf->ticket_keys == RX_CONF_UNSET_PTR) {
        sscf->ticket_keys = rx_array_create(cf->pool, 2, sizeof(*key));
        if (sscf->ticket_keys == NULL) {
            return RX_CONF_ERROR;
        }
    }
    key = rx_array_push(sscf->ticket_keys);
    if (key == NULL) {
        return RX_CONF_ERROR;
    }
    /* nginx's layout: name, then the HMAC key, then the AES key */
    key->size = n == 48 ? 16 : 32;
    memcpy(key->name, buf, 16);
    memcpy(key->hmac_key, buf + 16, key->size);
    memcpy(key->aes_key, buf + 16 + key->size, key->size);
    explicit_bzero(buf, sizeof(buf));
    return RX_CONF_OK;
}

#endif /* RX_HAVE_OPENSSL */
