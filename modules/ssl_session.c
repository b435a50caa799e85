/*
 * ssl_session.c: session resumption across workers.
 *
 * ssl_session_cache shared:NAME:SIZE is a shared memory zone
 * (core/shm_zone.h) mapped by the master before it forks, so every worker
 * finds the sessions the others made, and kept across a reload when its
 * name and size are unchanged, so a reload costs no client a full
 * handshake. Sessions are stored serialized (i2d_SSL_SESSION) in a ring of
 * records; a small hash table of entries (session id -> record) finds
 * them. A new session is written at the ring's head; when the ring or the
 * entry table is full, the oldest records are dropped (with one timeout
 * for every session, the oldest expires first, so this is also expiry
 * order). The zone's lock guards it; a worker that dies holding it leaves
 * the zone to be emptied by the next one (shm_zone's rule).
 *
 * The zone also holds the session ticket keys made when no
 * ssl_session_ticket_key is given (ssl_ticket.c).
 *
 * Both are the default server's of the address (OpenSSL resumes against
 * the SSL_CTX the handshake started with, before SNI switches it).
 */
#include "ssl.h"

#if (RX_HAVE_OPENSSL)
#include <time.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include "shm_zone.h"

#define MAX_SESSION   4096      /* nginx's limit on one serialized session */
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

/* The zone's root: one block of the whole zone, laid out at its first
 * init (pointers stay valid: every process maps the zone at the address
 * the master did, and a reload keeps the mapping). */
typedef struct {
    uint32_t            nentries;
    uint32_t            free_list;  /* entry index + 1 */
    uint64_t            ring_size;
    uint64_t            head, tail; /* absolute offsets; tail <= head */
    entry_t            *entries;
    unsigned char      *ring;
    rx_ssl_zone_keys_t  keys;       /* ticket keys (ssl_ticket.c) */
    uint32_t            buckets[];  /* nentries of them: entry index + 1 */
} zone_t;

/* ---- the zone ---------------------------------------------------------------- */

static void
zone_reset(zone_t *z)
{
    uint32_t  i;

    memset(z->buckets, 0, z->nentries * sizeof(uint32_t));
    memset(z->entries, 0, z->nentries * sizeof(entry_t));
    for (i = 0; i < z->nentries; i++) {
        z->entries[i].next = i + 1 < z->nentries ? i + 2 : 0;
    }
    z->free_list = z->nentries ? 1 : 0;
    z->head = z->tail = 0;
}

/* shm_zone's init hook: a zone kept from the previous cycle keeps its
 * sessions and ticket keys; an empty one is laid out over all its pages. */
static rx_int_t
zone_init(rx_shm_zone_t *zone, void *old)
{
    zone_t  *z;
    size_t   size, n, fixed;

    if (old && rx_shm_zone_root(zone)) {
        return RX_OK;
    }
    size = rx_shm_pool_free_pages(zone->pool) * 4096;
    z = size ? rx_shm_zone_alloc_locked(zone, size) : NULL;
    if (z == NULL) {
        rx_log_error(RX_LOG_EMERG, zone->log, 0, "ssl_session_cache \"%s\" "
                     "could not be laid out", zone->name.data);
        return RX_ERROR;
    }
    /* about 256 bytes of zone per session (an entry, a bucket, a record
     * of a TLS 1.2 session): some 4000 a megabyte, as nginx says */
    n = size / 256;
    fixed = (sizeof(zone_t) + n * sizeof(uint32_t) + 15) & ~(size_t) 15;
    memset(z, 0, sizeof(*z));
    z->entries = (entry_t *) ((char *) z + fixed);
    fixed += n * sizeof(entry_t);
    z->ring = (unsigned char *) z + fixed;
    z->nentries = (uint32_t) n;
    z->ring_size = (size - fixed) & ~(uint64_t) 7;
    zone_reset(z);
    rx_shm_zone_set_root(zone, z);
    return RX_OK;
}

/* The zone's root, locked; NULL (not locked) when the lock failed. */
static zone_t *
zone_lock(rx_shm_zone_t *zone)
{
    if (rx_shm_zone_lock(zone) != RX_OK) {
        return NULL;
    }
    return rx_shm_zone_root(zone);
}

rx_ssl_zone_keys_t *
rx_http_ssl_cache_lock_keys(rx_shm_zone_t *zone)
{
    zone_t *z = zone_lock(zone);

    if (z == NULL) {
        return NULL;
    }
    return &z->keys;
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
find(zone_t *z, const unsigned char *id, size_t len, uint32_t **link)
{
    uint32_t *l = &z->buckets[hash_id(id, len) % z->nentries];
    entry_t  *e;

    while (*l) {
        e = &z->entries[*l - 1];
        if (e->id_len == len && memcmp(e->id, id, len) == 0) {
            if (link) *link = l;
            return *l;
        }
        l = &e->next;
    }
    return 0;
}

static void
unlink_entry(zone_t *z, uint32_t *link)
{
    uint32_t idx = *link;
    entry_t *e = &z->entries[idx - 1];

    *link = e->next;
    memset(e, 0, sizeof(*e));
    e->next = z->free_list;
    z->free_list = idx;
}

static void
remove_id(zone_t *z, const unsigned char *id, size_t len)
{
    uint32_t *link;

    if (find(z, id, len, &link)) {
        unlink_entry(z, link);
    }
}

/* Drops the oldest record; its entry goes too unless a newer record of
 * the same session replaced it. */
static void
evict_one(zone_t *z)
{
    unsigned char *rec = z->ring + z->tail % z->ring_size;
    uint32_t       idx, len;
    entry_t       *e;

    memcpy(&idx, rec, 4);
    memcpy(&len, rec + 4, 4);
    if (idx) {
        e = &z->entries[idx - 1];
        if (e->used && e->data_pos == z->tail) {
            remove_id(z, e->id, e->id_len);
        }
    }
    z->tail += (REC_HDR + len + 7) & ~(uint64_t) 7;
}

/* Room for need bytes at the head, records never wrapping. */
static uint64_t
reserve(zone_t *z, uint64_t need)
{
    uint64_t at, rest;
    uint32_t zero = 0, len;

    at = z->head % z->ring_size;
    rest = z->ring_size - at;
    if (rest < need) {
        /* a padding record to the end of the ring */
        while (z->ring_size - (z->head - z->tail) < rest) {
            evict_one(z);
        }
        len = (uint32_t) (rest - REC_HDR);
        memcpy(z->ring + at, &zero, 4);
        memcpy(z->ring + at + 4, &len, 4);
        z->head += rest;
    }
    while (z->ring_size - (z->head - z->tail) < need) {
        evict_one(z);
    }
    return z->head;
}

static void
store(zone_t *z, const unsigned char *id, size_t id_len,
    const unsigned char *data, size_t len, int64_t expire)
{
    uint64_t  need = (REC_HDR + len + 7) & ~(uint64_t) 7, pos;
    uint32_t  idx, *bucket, len32 = (uint32_t) len;
    entry_t  *e;

    if (need > z->ring_size || id_len > SSL_MAX_SSL_SESSION_ID_LENGTH) {
        return;
    }
    remove_id(z, id, id_len);
    pos = reserve(z, need);
    while (z->free_list == 0 && z->tail < z->head) {
        evict_one(z);
    }
    if (z->free_list == 0) {
        return;
    }
    pos = z->head;                  /* evictions never move the head */
    idx = z->free_list;
    e = &z->entries[idx - 1];
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
    memcpy(z->ring + pos % z->ring_size, &idx, 4);
    memcpy(z->ring + pos % z->ring_size + 4, &len32, 4);
    memcpy(z->ring + pos % z->ring_size + REC_HDR, data, len);
    z->head += need;
}

/* ---- OpenSSL's cache callbacks ------------------------------------------------ */

/* The default server's conf of the connection's address: the SSL_CTX
 * OpenSSL keeps sessions and tickets for. */
rx_http_ssl_srv_conf_t *
rx_http_ssl_session_conf(const SSL *ssl)
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
    rx_http_ssl_srv_conf_t *sscf = rx_http_ssl_session_conf(ssl);
    rx_shm_zone_t          *zone = sscf ? sscf->shm_cache : NULL;
    unsigned char           buf[MAX_SESSION], *p = buf;
    const unsigned char    *id;
    unsigned int            id_len;
    int                     len;
    zone_t                 *z;

    if (zone == NULL) {
        return 0;
    }
    len = i2d_SSL_SESSION(sess, NULL);
    if (len <= 0 || len > MAX_SESSION) {
        return 0;                   /* too large to share: not kept */
    }
    i2d_SSL_SESSION(sess, &p);
    id = SSL_SESSION_get_id(sess, &id_len);
    z = zone_lock(zone);
    if (z) {
        store(z, id, id_len, buf, (size_t) len,
              (int64_t) SSL_SESSION_get_time(sess)
              + SSL_SESSION_get_timeout(sess));
        rx_shm_zone_unlock(zone);
    }
    return 0;                       /* we keep no reference */
}

static SSL_SESSION *
get_session(SSL *ssl, const unsigned char *id, int id_len, int *copy)
{
    rx_http_ssl_srv_conf_t *sscf = rx_http_ssl_session_conf(ssl);
    rx_shm_zone_t          *zone = sscf ? sscf->shm_cache : NULL;
    unsigned char           buf[MAX_SESSION];
    const unsigned char    *p = buf;
    uint32_t                idx, *link;
    size_t                  len = 0;
    entry_t                *e;
    zone_t                 *z;

    *copy = 0;
    if (zone == NULL || id_len <= 0 || (z = zone_lock(zone)) == NULL) {
        return NULL;
    }
    idx = find(z, id, (size_t) id_len, &link);
    if (idx) {
        e = &z->entries[idx - 1];
        if (e->expire <= (int64_t) time(NULL)) {
            unlink_entry(z, link);
        } else if (e->data_len <= sizeof(buf)) {
            len = e->data_len;
            memcpy(buf, z->ring + e->data_pos % z->ring_size + REC_HDR,
                   len);
        }
    }
    rx_shm_zone_unlock(zone);
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
    rx_http_ssl_srv_conf_t *sscf = rx_http_ssl_session_conf(ssl);
    SSL_SESSION            *sess = SSL_get0_session(ssl);
    const unsigned char    *id;
    unsigned int            id_len;
    zone_t                 *z;

    if (sess == NULL || sscf == NULL) {
        return;
    }
    if (sscf->ctx) {
        SSL_CTX_remove_session(sscf->ctx, sess);
    }
    if (sscf->shm_cache && (z = zone_lock(sscf->shm_cache)) != NULL) {
        id = SSL_SESSION_get_id(sess, &id_len);
        remove_id(z, id, id_len);
        rx_shm_zone_unlock(sscf->shm_cache);
    }
}

/* ---- ssl_session_cache ------------------------------------------------------------- */

/* shared:NAME:SIZE: the zone, declared for this cycle (servers naming
 * the same NAME share it; shm_zone says when the size or the owner
 * conflicts). */
static rx_shm_zone_t *
shared_zone(rx_conf_t *cf, const rx_str_t *name, size_t size)
{
    rx_shm_zone_t *zone;

    zone = rx_shm_zone_add(cf, name, size, &rx_http_ssl_module);
    if (zone == NULL) {
        return NULL;
    }
    zone->init = zone_init;
    zone->data = zone;          /* not NULL: a kept zone is told so */
    return zone;
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
    rx_shm_zone_t          *shm = NULL;
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
            if (n < RX_SHM_ZONE_MIN) {
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
    } else if (rx_http_ssl_tickets_setup(cf, sscf) != RX_OK) {
        return RX_ERROR;
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
