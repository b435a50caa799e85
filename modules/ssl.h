/*
 * ssl.h: the HTTPS server side shared by the ssl module's files: the
 * per-server conf (ssl.c), the SSL_CTX it builds (ssl_ctx.c), the session
 * cache and ticket keys (ssl_session.c) and the $ssl_* variables
 * (ssl_variables.c). The TLS transport itself is event/tls.c.
 */
#ifndef RX_MODULES_SSL_H
#define RX_MODULES_SSL_H

#include "http.h"
#include "tls.h"

#if (RX_HAVE_OPENSSL)

/* ssl_verify_client */
#define RX_SSL_VERIFY_OFF             0
#define RX_SSL_VERIFY_ON              1
#define RX_SSL_VERIFY_OPTIONAL        2
#define RX_SSL_VERIFY_OPTIONAL_NO_CA  3

/* ssl_session_cache: off (no cache, no ids), none (ids, nothing kept),
 * builtin (OpenSSL's per-worker cache, of a size), shared (across
 * workers, a shared memory zone). builtin_session_cache holds one of these or
 * the builtin size. */
#define RX_SSL_SCACHE_UNSET    (-1)
#define RX_SSL_SCACHE_OFF      (-2)
#define RX_SSL_SCACHE_NONE     (-3)
#define RX_SSL_SCACHE_NO_BUILTIN (-4)   /* shared only */

/* ssl_protocols bits */
#define RX_SSL_SSLv2    0x0002
#define RX_SSL_SSLv3    0x0004
#define RX_SSL_TLSv1    0x0008
#define RX_SSL_TLSv1_1  0x0010
#define RX_SSL_TLSv1_2  0x0020
#define RX_SSL_TLSv1_3  0x0040

/* A session ticket key made by ringx and kept in the shared session
 * cache's zone (no ssl_session_ticket_key given), and the zone's keys:
 * [0] encrypts, [1] (the one before) still decrypts. */
typedef struct {
    unsigned char  name[16];
    unsigned char  hmac_key[32];
    unsigned char  aes_key[32];
    int64_t        made;          /* unix seconds */
} rx_ssl_zone_key_t;

typedef struct {
    uint32_t           n;
    rx_ssl_zone_key_t  key[2];
} rx_ssl_zone_keys_t;

struct rx_shm_zone_s;

/* One ssl_session_ticket_key file: 48 bytes (AES-128) or 80 (AES-256). */
typedef struct {
    unsigned char  name[16];
    unsigned char  hmac_key[32];
    unsigned char  aes_key[32];
    size_t         size;          /* 16 or 32: the key lengths */
} rx_ssl_ticket_key_t;

/* Where a directive was written, for errors found when the CTX is built. */
typedef struct {
    rx_str_t   file;
    rx_uint_t  line;
} rx_ssl_pos_t;

/* A file a directive names: its resolved path and where it was named. */
typedef struct {
    rx_str_t      path;          /* absolute, NUL-terminated */
    rx_ssl_pos_t  pos;
} rx_ssl_file_t;

typedef struct {
    SSL_CTX         *ctx;               /* NULL: this server has no TLS */
    rx_int_t         enable;            /* the deprecated `ssl on|off` */
    rx_ssl_pos_t     enable_pos;        /* where it was written */
    rx_http_core_srv_conf_t *server;    /* back pointer (SNI, checks) */

    rx_array_t      *certificates;      /* rx_ssl_file_t; NULL unset */
    rx_array_t      *certificate_keys;  /* rx_ssl_file_t; NULL unset */
    rx_array_t      *passwords;         /* rx_str_t, from ssl_password_file */
    rx_uint_t        protocols;         /* RX_SSL_* bits; 0 unset */
    rx_str_t         ciphers;
    rx_array_t      *conf_commands;     /* rx_str_t name, value pairs */
    rx_int_t         prefer_server_ciphers;
    rx_str_t         ecdh_curve;
    rx_ssl_file_t    dhparam;           /* path.data NULL: none */

    rx_int_t         builtin_session_cache;  /* RX_SSL_SCACHE_* or a size */
    struct rx_shm_zone_s *shm_cache;         /* NULL: none */
    rx_msec_t        session_timeout;        /* seconds */
    rx_int_t         session_tickets;
    rx_array_t      *ticket_keys;            /* rx_ssl_ticket_key_t; NULL */

    rx_uint_t        verify;                 /* RX_SSL_VERIFY_* */
    rx_int_t         verify_depth;
    rx_ssl_file_t    client_certificate;
    rx_ssl_file_t    trusted_certificate;
    rx_ssl_file_t    crl;
    rx_ssl_pos_t     verify_pos;        /* of ssl_verify_client */

    rx_int_t         stapling;
    rx_int_t         stapling_verify;
    rx_ssl_file_t    stapling_file;
    rx_str_t         stapling_response;      /* the DER bytes, loaded */

    rx_int_t         early_data;
    rx_int_t         reject_handshake;
    size_t           buffer_size;
} rx_http_ssl_srv_conf_t;

extern rx_module_t rx_http_ssl_module;

/* The ssl conf of a server block. */
rx_http_ssl_srv_conf_t *rx_http_ssl_srv_conf(rx_http_core_srv_conf_t *cscf);

/* ssl_ctx.c: builds sscf->ctx from a merged conf; cf->log with the
 * directive's FILE:LINE appended for errors. RX_OK or RX_ERROR (logged). */
rx_int_t rx_http_ssl_build_ctx(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf);

/* The conf an SSL_CTX was built for (NULL: not one of ours). */
rx_http_ssl_srv_conf_t *rx_http_ssl_ctx_conf(SSL_CTX *ctx);

/* ssl.c: the SNI and ALPN callbacks of a server's CTX. */
void rx_http_ssl_set_callbacks(SSL_CTX *ctx);

/* Logs msg (+ OpenSSL's queue) "in FILE:LINE" of pos, as config errors. */
void rx_http_ssl_conf_error(rx_conf_t *cf, const rx_ssl_pos_t *pos,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ssl_session.c */
const char *rx_http_ssl_set_session_cache(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
rx_int_t rx_http_ssl_session_setup(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf);
/* A failed client verification must not resume into a later success. */
void rx_http_ssl_session_drop(SSL *ssl);
/* The conf whose CTX keeps a connection's sessions and tickets: the
 * default server's of its address. */
rx_http_ssl_srv_conf_t *rx_http_ssl_session_conf(const SSL *ssl);
/* The ticket keys in a shared cache's zone, with its lock held (release
 * with rx_shm_zone_unlock); NULL when the lock failed (not held). */
rx_ssl_zone_keys_t *rx_http_ssl_cache_lock_keys(struct rx_shm_zone_s *zone);

/* ssl_ticket.c */
const char *rx_http_ssl_set_ticket_key(rx_conf_t *cf,
    const rx_command_t *cmd, void *conf);
/* The ticket key callback, when keys are ours (files or the zone). */
rx_int_t rx_http_ssl_tickets_setup(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf);

/* ssl_variables.c */
rx_int_t rx_http_ssl_add_variables(rx_conf_t *cf);

/* The verify result nginx's optional_no_ca lets through (no CA known). */
bool rx_http_ssl_verify_error_optional(long rc);

#endif /* RX_HAVE_OPENSSL */

#endif /* RX_MODULES_SSL_H */
