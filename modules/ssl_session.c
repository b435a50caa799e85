/*
 * ssl_session.c: session resumption across workers.
 *
 * ssl_session_cache shared:NAME:SIZE is a shared memory zone mapped by the
 * master before it forks, so every worker finds the sessions the others
 * made. Sessions are stored serialized (i2d_SSL_SESSION) in a ring of
 * records; a small hash table of entries (session id -> record) finds
 * them. A new session is written at the ring's head; when the ring or the
 * entry table is full, the oldest records are dropped (with one timeout
 * for every session, the oldest expires first, so this is also expiry
 * order). A process-shared robust mutex guards the zone; a worker that
 * dies holding it leaves the zone to be reset by the next one.
 *
 * Session tickets: without ssl_session_ticket_key, OpenSSL's own keys are
 * made when the SSL_CTX is created, in the master: every worker has the
 * same ones, so a ticket made by one worker resumes on another. With key
 * files, the first key encrypts and every key decrypts (rotation).
 *
 * Both are the default server's of the address (OpenSSL resumes against
 * the SSL_CTX the handshake started with, before SNI switches it).
 */
#include "ssl.h"

#if (RX_HAVE_OPENSSL)
#include <pthread.h>
#include <time.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "shm.h"

#define MAX_SESSION   4096      /* nginx's limit on one serialized session */
#define MIN_ZONE      (32 * 1024)
#define REC_HDR       8         /* entry index + 1 (0: padding), length */

typedef struct {
    uint32_t  next;             /* hash chain: entry index + 1, 0 ends */
    uint32_t  used;
    uint32_t  id_len;
    uint32_t  data_len;
    uint64_t  data_pos;         /* the record's absolute ring offset */
    int64_t   expire;           /* unix seconds */
    unsigned char id[SSL_MAX_SSL_SESSION_ID_LENGTH];
} entry_t;

typedef struct {
    pthread_mutex_t  mutex;
    uint32_t         nentries;
    uint32_t         free_list;  /* entry index + 1 */
    uint64_t         ring_size;
    uint64_t         head, tail; /* absolute offsets; tail <= head */
    uint32_t         buckets[];  /* nentries of them: entry index + 1 */
} zone_t;

struct rx_ssl_cache_s {
    rx_str_t   name;
    size_t     size;
    rx_shm_t   shm;
    zone_t    *zone;
    entry_t   *entries;
    unsigned char *ring;
};

static rx_array_t *caches;       /* rx_ssl_cache_t *, of the cycle loading */

/* ---- the zone ---------------------------------------------------------------- */

static void
zone_reset(rx_ssl_cache_t *c)
{
    zone_t   *z = c->zone;
    uint32_t  i;

    memset(z->buckets, 0, z->nentries * sizeof(uint32_t));
    memset(c->entries, 0, z->nentries * sizeof(entry_t));
    for (i = 0; i < z->nentries; i++) {
        c->entries[i].next = i + 1 < z->nentries ? i + 2 : 0;
    }
    z->free_list = z->nentries ? 1 : 0;
    z->head = z->tail = 0;
}

static rx_int_t
zone_init(rx_ssl_cache_t *c, rx_log_t *log)
{
    pthread_mutexattr_t attr;
    zone_t             *z;
    size_t              n, fixed;

    if (rx_shm_alloc(&c->shm, c->size, log) != RX_OK) {
        return RX_ERROR;
    }
    z = c->zone = c->shm.addr;
    /* about 256 bytes of zone per session (an entry, a bucket, a record
     * of a TLS 1.2 session): some 4000 a megabyte, as nginx says */
    n = c->size / 256;
    fixed = (sizeof(zone_t) + n * sizeof(uint32_t) + 7) & ~(size_t) 7;
    c->entries = (entry_t *) ((char *) z + fixed);
    fixed += n * sizeof(entry_t);
    c->ring = (unsigned char *) z + fixed;
    z->nentries = (uint32_t) n;
    z->ring_size = (c->size - fixed) & ~(uint64_t) 7;
    zone_reset(c);
    if (pthread_mutexattr_init(&attr) != 0
        || pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) != 0
        || pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) != 0
        || pthread_mutex_init(&z->mutex, &attr) != 0) {
        rx_log_error(RX_LOG_EMERG, log, 0, "pthread_mutex_init() failed for "
                     "ssl_session_cache \"%s\"", c->name.data);
        return RX_ERROR;
    }
    pthread_mutexattr_destroy(&attr);
    return RX_OK;
}

static void
zone_lock(rx_ssl_cache_t *c)
{
    if (pthread_mutex_lock(&c->zone->mutex) == EOWNERDEAD) {
        /* its holder died mid-update: start again empty */
        zone_reset(c);
        pthread_mutex_consistent(&c->zone->mutex);
    }
}

static void
zone_unlock(rx_ssl_cache_t *c)
{
    pthread_mutex_unlock(&c->zone->mutex);
}

static uint32_t
hash_id(const unsigned char *id, size_t len)
{
    uint32_t h = 2166136261u;
    size_t   i;

    for (i = 0; i < len; i++) {
        h = (h ^ id[i]) * 16777619u;
    }
    return h;
}

/* The entry index + 1 for id, and where its link is, for unlinking. */
static uint32_t
find(rx_ssl_cache_t *c, const unsigned char *id, size_t len, uint32_t **link)
{
    zone_t   *z = c->zone;
    uint32_t *l = &z->buckets[hash_id(id, len) % z->nentries];
    entry_t  *e;

    while (*l) {
        e = &c->entries[*l - 1];
        if (e->id_len == len && memcmp(e->id, id, len) == 0) {
            if (link) *link = l;
            return *l;
        }
        l = &e->next;
    }
    return 0;
}

static void
unlink_entry(rx_ssl_cache_t *c, uint32_t *link)
{
    uint32_t idx = *link;
    entry_t *e = &c->entries[idx - 1];

    *link = e->next;
    memset(e, 0, sizeof(*e));
    e->next = c->zone->free_list;
    c->zone->free_list = idx;
}

static void
remove_id(rx_ssl_cache_t *c, const unsigned char *id, size_t len)
{
    uint32_t *link;

    if (find(c, id, len, &link)) {
        unlink_entry(c, link);
    }
}

/* Drops the oldest record; its entry goes too unless a newer record of
 * the same session replaced it. */
static void
evict_one(rx_ssl_cache_t *c)
{
    zone_t        *z = c->zone;
    unsigned char *rec = c->ring + z->tail % z->ring_size;
    uint32_t       idx, len;
    entry_t       *e;

    memcpy(&idx, rec, 4);
    memcpy(&len, rec + 4, 4);
    if (idx) {
        e = &c->entries[idx - 1];
        if (e->used && e->data_pos == z->tail) {
            remove_id(c, e->id, e->id_len);
        }
    }
    z->tail += (REC_HDR + len + 7) & ~(uint64_t) 7;
}

/* Room for need bytes at the head, records never wrapping. */
static uint64_t
reserve(rx_ssl_cache_t *c, uint64_t need)
{
    zone_t  *z = c->zone;
    uint64_t at, rest;
    uint32_t zero = 0, len;

    at = z->head % z->ring_size;
    rest = z->ring_size - at;
    if (rest < need) {
        /* a padding record to the end of the ring */
        while (z->ring_size - (z->head - z->tail) < rest) {
            evict_one(c);
        }
        len = (uint32_t) (rest - REC_HDR);
        memcpy(c->ring + at, &zero, 4);
        memcpy(c->ring + at + 4, &len, 4);
        z->head += rest;
    }
    while (z->ring_size - (z->head - z->tail) < need) {
        evict_one(c);
    }
    return z->head;
}

static void
store(rx_ssl_cache_t *c, const unsigned char *id, size_t id_len,
    const unsigned char *data, size_t len, int64_t expire)
{
    zone_t   *z = c->zone;
    uint64_t  need = (REC_HDR + len + 7) & ~(uint64_t) 7, pos;
    uint32_t  idx, *bucket, len32 = (uint32_t) len;
    entry_t  *e;

    if (need > z->ring_size || id_len > SSL_MAX_SSL_SESSION_ID_LENGTH) {
        return;
    }
    remove_id(c, id, id_len);
    pos = reserve(c, need);
    while (z->free_list == 0 && z->tail < z->head) {
        evict_one(c);
    }
    if (z->free_list == 0) {
        return;
    }
    pos = z->head;                  /* evictions never move the head */
    idx = z->free_list;
    e = &c->entries[idx - 1];
    z->free_list = e->next;
    memset(e, 0, sizeof(*e));
    e->used = 1;
    e->id_len = (uint32_t) id_len;
    memcpy(e->id, id, id_len);
    e->data_len = len32;
    e->data_pos = pos;
    e->expire = expire;
    bucket = &z->buckets[hash_id(id, id_len) % z->nentries];
    e->next = *bucket;
    *bucket = idx;
    memcpy(c->ring + pos % z->ring_size, &idx, 4);
    memcpy(c->ring + pos % z->ring_size + 4, &len32, 4);
    memcpy(c->ring + pos % z->ring_size + REC_HDR, data, len);
    z->head += need;
}

/* ---- OpenSSL's cache callbacks ------------------------------------------------ */

/* The default server's conf of the connection's address: the SSL_CTX
 * OpenSSL keeps sessions and tickets for. */
static rx_http_ssl_srv_conf_t *
session_conf(const SSL *ssl)
{
    rx_conn_t            *c = rx_tls_conn(ssl);
    rx_http_connection_t *hc = c ? c->data : NULL;

    if (hc && hc->default_server) {
        return rx_http_ssl_srv_conf(hc->default_server);
    }
    return rx_http_ssl_ctx_conf(SSL_get_SSL_CTX(ssl));
}

static int
new_session(SSL *ssl, SSL_SESSION *sess)
{
    rx_http_ssl_srv_conf_t *sscf = session_conf(ssl);
    rx_ssl_cache_t         *c = sscf ? sscf->shm_cache : NULL;
    unsigned char           buf[MAX_SESSION], *p = buf;
    const unsigned char    *id;
    unsigned int            id_len;
    int                     len;

    if (c == NULL) {
        return 0;
    }
    len = i2d_SSL_SESSION(sess, NULL);
    if (len <= 0 || len > MAX_SESSION) {
        return 0;                   /* too large to share: not kept */
    }
    i2d_SSL_SESSION(sess, &p);
    id = SSL_SESSION_get_id(sess, &id_len);
    zone_lock(c);
    store(c, id, id_len, buf, (size_t) len,
          (int64_t) SSL_SESSION_get_time(sess) + SSL_SESSION_get_timeout(sess));
    zone_unlock(c);
    return 0;                       /* we keep no reference */
}

static SSL_SESSION *
get_session(SSL *ssl, const unsigned char *id, int id_len, int *copy)
{
    rx_http_ssl_srv_conf_t *sscf = session_conf(ssl);
    rx_ssl_cache_t         *c = sscf ? sscf->shm_cache : NULL;
    unsigned char           buf[MAX_SESSION];
    const unsigned char    *p = buf;
    uint32_t                idx, *link;
    size_t                  len = 0;
    entry_t                *e;

    *copy = 0;
    if (c == NULL || id_len <= 0) {
        return NULL;
    }
    zone_lock(c);
    idx = find(c, id, (size_t) id_len, &link);
    if (idx) {
        e = &c->entries[idx - 1];
        if (e->expire <= (int64_t) time(NULL)) {
            unlink_entry(c, link);
        } else if (e->data_len <= sizeof(buf)) {
            len = e->data_len;
            memcpy(buf, c->ring + e->data_pos % c->zone->ring_size + REC_HDR,
                   len);
        }
    }
    zone_unlock(c);
    return len ? d2i_SSL_SESSION(NULL, &p, (long) len) : NULL;
}

/* OpenSSL removes a session from the cache of the SSL_CTX itself when a
 * connection is freed without a close_notify sent (and when it finds one
 * expired); nginx never lets that happen, so there is no remove callback:
 * sessions leave the zone by expiry, by eviction, or here, when a client
 * certificate failed verification. */
void
rx_http_ssl_session_drop(SSL *ssl)
{
    rx_http_ssl_srv_conf_t *sscf = session_conf(ssl);
    SSL_SESSION            *sess = SSL_get0_session(ssl);
    const unsigned char    *id;
    unsigned int            id_len;

    if (sess == NULL || sscf == NULL) {
        return;
    }
    if (sscf->ctx) {
        SSL_CTX_remove_session(sscf->ctx, sess);
    }
    if (sscf->shm_cache) {
        id = SSL_SESSION_get_id(sess, &id_len);
        zone_lock(sscf->shm_cache);
        remove_id(sscf->shm_cache, id, id_len);
        zone_unlock(sscf->shm_cache);
    }
}

/* ---- ticket keys ---------------------------------------------------------------- */

static int
ticket_cb(SSL *ssl, unsigned char name[16], unsigned char *iv,
    EVP_CIPHER_CTX *ectx, EVP_MAC_CTX *hctx, int enc)
{
    rx_http_ssl_srv_conf_t *sscf = session_conf(ssl);
    rx_ssl_ticket_key_t    *key;
    OSSL_PARAM              params[3];
    rx_uint_t               i, n;

    if (sscf == NULL || sscf->ticket_keys == NULL) {
        return 0;
    }
    key = sscf->ticket_keys->elts;
    n = sscf->ticket_keys->nelts;
    if (enc) {
        i = 0;
        if (RAND_bytes(iv, 16) != 1) {
            return -1;
        }
        memcpy(name, key[0].name, 16);
    } else {
        for (i = 0; i < n && memcmp(name, key[i].name, 16) != 0; i++) {
            /* which key made it? */
        }
        if (i == n) {
            return 0;               /* unknown: a full handshake */
        }
    }
    params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY,
                    key[i].hmac_key, key[i].size);
    params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                    (char *) "SHA256", 0);
    params[2] = OSSL_PARAM_construct_end();
    if (EVP_MAC_CTX_set_params(hctx, params) != 1) {
        return -1;
    }
    if (enc) {
        return EVP_EncryptInit_ex(ectx, key[i].size == 16 ? EVP_aes_128_cbc()
                                  : EVP_aes_256_cbc(), NULL, key[i].aes_key,
                                  iv) == 1 ? 1 : -1;
    }
    if (EVP_DecryptInit_ex(ectx, key[i].size == 16 ? EVP_aes_128_cbc()
                           : EVP_aes_256_cbc(), NULL, key[i].aes_key, iv)
        != 1) {
        return -1;
    }
    return i == 0 ? 1 : 2;          /* 2: made by an old key, renew it */
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

/* ---- ssl_session_cache ------------------------------------------------------------- */

static void
free_cache(void *data)
{
    rx_ssl_cache_t *c = data;

    /* the mutex is not destroyed: workers of this configuration may still
     * hold it in their own mapping */
    rx_shm_free(&c->shm);
}

/* The list goes with its cycle (also one whose load failed). */
static void
forget_caches(void *data)
{
    if (caches == data) {
        caches = NULL;
    }
}

static rx_ssl_cache_t *
shared_zone(rx_conf_t *cf, const rx_str_t *name, size_t size)
{
    rx_ssl_cache_t **all, *c, **slot;
    rx_pool_cleanup_t *cln;
    rx_uint_t        i;

    if (caches == NULL || caches->pool != cf->cycle->pool) {
        cln = rx_pool_cleanup_add(cf->cycle->pool, 0);
        caches = rx_array_create(cf->cycle->pool, 2, sizeof(void *));
        if (caches == NULL || cln == NULL) {
            caches = NULL;
            return NULL;
        }
        cln->handler = forget_caches;
        cln->data = caches;
    }
    all = caches->elts;
    for (i = 0; i < caches->nelts; i++) {
        if (all[i]->name.len == name->len
            && memcmp(all[i]->name.data, name->data, name->len) == 0) {
            if (all[i]->size != size) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "the size %zu of shared "
                    "memory zone \"%s\" conflicts with already declared size "
                    "%zu", size, name->data, all[i]->size);
                return NULL;
            }
            return all[i];
        }
    }
    c = rx_pcalloc(cf->cycle->pool, sizeof(*c));
    slot = rx_array_push(caches);
    cln = rx_pool_cleanup_add(cf->cycle->pool, 0);
    if (c == NULL || slot == NULL || cln == NULL) {
        return NULL;
    }
    c->name = *name;
    c->size = size;
    if (zone_init(c, cf->log) != RX_OK) {
        return NULL;
    }
    cln->handler = free_cache;
    cln->data = c;
    *slot = c;
    return c;
}

static bool
parse_size(const char *s, size_t len, ssize_t *out)
{
    rx_str_t v = { len, (char *) s };

    *out = rx_parse_size(&v);
    return *out > 0;
}

/* off | none | [builtin[:size]] [shared:name:size] */
const char *
rx_http_ssl_set_session_cache(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    rx_http_ssl_srv_conf_t *sscf = conf;
    rx_str_t               *value = cf->args->elts, name;
    rx_int_t                builtin = RX_SSL_SCACHE_NO_BUILTIN;
    rx_ssl_cache_t         *shm = NULL;
    ssize_t                 n;
    char                   *colon;
    rx_uint_t               i;

    (void) cmd;
    if (sscf->builtin_session_cache != RX_SSL_SCACHE_UNSET) {
        return "is duplicate";
    }
    for (i = 1; i < cf->args->nelts; i++) {
        if (rx_str_eq(&value[i], "off") || rx_str_eq(&value[i], "none")) {
            if (cf->args->nelts > 2) {
                goto invalid;
            }
            builtin = value[i].data[0] == 'o' ? RX_SSL_SCACHE_OFF
                                              : RX_SSL_SCACHE_NONE;
        } else if (rx_str_eq(&value[i], "builtin")) {
            builtin = 20480;        /* OpenSSL's default size */
        } else if (strncmp(value[i].data, "builtin:", 8) == 0) {
            if (!parse_size(value[i].data + 8, value[i].len - 8, &n)
                || strspn(value[i].data + 8, "0123456789") != value[i].len - 8) {
                goto invalid;
            }
            builtin = (rx_int_t) n;
        } else if (strncmp(value[i].data, "shared:", 7) == 0) {
            name.data = value[i].data + 7;
            colon = strchr(name.data, ':');
            if (colon == NULL || colon == name.data || shm) {
                goto invalid;
            }
            name.len = (size_t) (colon - name.data);
            name.data = rx_pstrdup_c(cf->pool, name.data, name.len);
            if (name.data == NULL) {
                return RX_CONF_ERROR;
            }
            if (!parse_size(colon + 1, strlen(colon + 1), &n)) {
                goto invalid;
            }
            if (n < MIN_ZONE) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "zone \"%s\" is too "
                    "small", name.data);
                return RX_CONF_ERROR;
            }
            shm = shared_zone(cf, &name, (size_t) n);
            if (shm == NULL) {
                return RX_CONF_ERROR;
            }
        } else {
            goto invalid;
        }
    }
    sscf->builtin_session_cache = builtin;
    sscf->shm_cache = shm;
    return RX_CONF_OK;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid session cache \"%s\"",
                      value[i].data);
    return RX_CONF_ERROR;
}

/* ---- a server's CTX ------------------------------------------------------------- */

/* Sessions resume only into the server (certificates, verification)
 * that made them. Paths are stable across reloads and the same in every
 * worker. */
static rx_int_t
session_id_context(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    unsigned char  md[EVP_MAX_MD_SIZE];
    unsigned int   len = 0;
    EVP_MD_CTX    *md_ctx = EVP_MD_CTX_new();
    rx_ssl_file_t *f;
    rx_uint_t      i;
    int            ok;

    ok = md_ctx && EVP_DigestInit_ex(md_ctx, EVP_sha256(), NULL);
    for (i = 0; ok && sscf->certificates && i < sscf->certificates->nelts;
         i++) {
        f = (rx_ssl_file_t *) sscf->certificates->elts + i;
        ok = EVP_DigestUpdate(md_ctx, f->path.data, f->path.len + 1);
    }
    f = &sscf->client_certificate;
    ok = ok && (f->path.data == NULL
                || EVP_DigestUpdate(md_ctx, f->path.data, f->path.len));
    ok = ok && EVP_DigestUpdate(md_ctx, &sscf->verify, sizeof(sscf->verify))
         && EVP_DigestFinal_ex(md_ctx, md, &len);
    EVP_MD_CTX_free(md_ctx);
    if (!ok || SSL_CTX_set_session_id_context(sscf->ctx, md,
                   rx_min(len, (unsigned int) SSL_MAX_SID_CTX_LENGTH)) != 1) {
        rx_http_ssl_conf_error(cf, NULL, "SSL_CTX_set_session_id_context() "
                               "failed");
        return RX_ERROR;
    }
    return RX_OK;
}

rx_int_t
rx_http_ssl_session_setup(rx_conf_t *cf, rx_http_ssl_srv_conf_t *sscf)
{
    SSL_CTX *ctx = sscf->ctx;
    long     mode;
    bool     no_cache = sscf->builtin_session_cache == RX_SSL_SCACHE_OFF
                        || sscf->builtin_session_cache == RX_SSL_SCACHE_NONE;

    if (session_id_context(cf, sscf) != RX_OK) {
        return RX_ERROR;
    }
    SSL_CTX_set_timeout(ctx, (long) sscf->session_timeout);
    if (!sscf->session_tickets) {
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        if (no_cache) {
            SSL_CTX_set_num_tickets(ctx, 0);    /* nothing to resume by */
        }
    } else if (sscf->ticket_keys) {
        if (SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_cb) != 1) {
            rx_http_ssl_conf_error(cf, NULL, "SSL_CTX_set_tlsext_ticket_key_"
                                   "evp_cb() failed");
            return RX_ERROR;
        }
    }
    if (sscf->builtin_session_cache == RX_SSL_SCACHE_OFF) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        return RX_OK;
    }
    if (sscf->builtin_session_cache == RX_SSL_SCACHE_NONE) {
        /* ids are given (some clients want them) but nothing is kept */
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER
                                       | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_cache_size(ctx, 1);
        return RX_OK;
    }
    mode = SSL_SESS_CACHE_SERVER;
    if (sscf->builtin_session_cache == RX_SSL_SCACHE_NO_BUILTIN) {
        mode |= SSL_SESS_CACHE_NO_INTERNAL;
    } else {
        SSL_CTX_sess_set_cache_size(ctx, sscf->builtin_session_cache);
    }
    SSL_CTX_set_session_cache_mode(ctx, mode);
    if (sscf->shm_cache) {
        SSL_CTX_sess_set_new_cb(ctx, new_session);
        SSL_CTX_sess_set_get_cb(ctx, get_session);
    }
    return RX_OK;
}

#endif /* RX_HAVE_OPENSSL */
