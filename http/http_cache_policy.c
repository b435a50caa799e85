/*
 * http_cache_policy.c: whether a response of the upstream engine may be
 * stored in the cache and for how long (X-Accel-Expires, Cache-Control
 * with stale-while-revalidate and stale-if-error, Expires, Set-Cookie,
 * Vary, *_cache_valid, as nginx), and the validators kept for a later
 * revalidation. No I/O: http_cache_store.c asks, then writes the file.
 * Also what of a request the cache keys on: the hash of its Vary headers,
 * and the test of a location's predicates (*_cache_bypass, *_no_cache,
 * *_cache_purge), which the lookup and the store both ask.
 */
#include <ctype.h>
#include "http.h"
#include "http_cache.h"
#include "http_upstream.h"
#include "http_date.h"
#include "clock.h"

static const rx_table_elt_t *
header(const rx_http_upstream_headers_in_t *h, const char *lc)
{
    const rx_table_elt_t *e = h->headers.elts;
    size_t                len = strlen(lc);
    rx_uint_t             i;

    for (i = 0; i < h->headers.nelts; i++) {
        if (e[i].key.len == len && strncasecmp(e[i].key.data, lc, len) == 0) {
            return &e[i];
        }
    }
    return NULL;
}

/* A number after "name=" in a Cache-Control value; -1: none. */
static int64_t
cc_number(const rx_str_t *v, const char *name)
{
    const char *p = v->data, *end = v->data + v->len;
    size_t      n = strlen(name);
    int64_t     x = 0;

    for ( ; p + n < end; p++) {
        if ((p == v->data || p[-1] == ' ' || p[-1] == ',')
            && strncasecmp(p, name, n) == 0 && p[n] == '=') {
            p += n + 1;
            if (p == end || *p < '0' || *p > '9') {
                return -1;
            }
            while (p < end && *p >= '0' && *p <= '9' && x < 1000000000) {
                x = x * 10 + (*p++ - '0');
            }
            return x;
        }
    }
    return -1;
}

static bool
cc_has(const rx_str_t *v, const char *token)
{
    const char *p = v->data, *end = v->data + v->len;
    size_t      n = strlen(token);

    for ( ; p + n <= end; p++) {
        if ((p == v->data || p[-1] == ' ' || p[-1] == ',')
            && strncasecmp(p, token, n) == 0
            && (p + n == end || p[n] == ',' || p[n] == ' ' || p[n] == '=')) {
            return true;
        }
    }
    return false;
}

/* nginx caches these statuses on the upstream's own word (headers). */
static bool
cacheable_status(rx_uint_t s)
{
    return s == 200 || s == 203 || s == 300 || s == 301 || s == 302
           || s == 303 || s == 307 || s == 308 || s == 404 || s == 410;
}

static time_t
valid_by_conf(const rx_http_cache_conf_t *conf, rx_uint_t status)
{
    const rx_http_cache_valid_t *v;
    rx_uint_t                    i;

    if (conf->valid == NULL) {
        return 0;
    }
    v = conf->valid->elts;
    for (i = 0; i < conf->valid->nelts; i++) {
        if (v[i].status == status) return v[i].valid;
    }
    for (i = 0; i < conf->valid->nelts; i++) {
        if (v[i].status == 0) return v[i].valid;
    }
    return 0;
}

/* How long the response may be served from the cache, in seconds from
 * now; 0: not stored. The first rule that speaks decides, in nginx's
 * order: X-Accel-Expires, Cache-Control, Expires, *_cache_valid. */
time_t
rx_http_cache_validity(rx_http_upstream_t *u, const rx_http_cache_conf_t *conf,
    rx_http_cache_head_t *head)
{
    const rx_http_upstream_headers_in_t *h = &u->headers_in;
    const rx_table_elt_t                *e;
    rx_uint_t                            ign = u->conf->ignore_headers;
    int64_t                              n;

    if (!(ign & RX_HTTP_UPSTREAM_IGN_CACHE_CONTROL)
        && (e = header(h, "cache-control")) != NULL) {
        /* how long after expiry a stale copy may still be served (RFC
         * 5861), whichever rule below sets the expiry */
        n = cc_number(&e->value, "stale-while-revalidate");
        head->swr = n > 0 ? (int32_t) n : 0;
        n = cc_number(&e->value, "stale-if-error");
        head->sie = n > 0 ? (int32_t) n : 0;
    }
    if (!(ign & RX_HTTP_UPSTREAM_IGN_XA_EXPIRES)
        && (e = header(h, "x-accel-expires")) != NULL) {
        bool at = e->value.len && e->value.data[0] == '@';

        n = rx_atoi(e->value.data + at, e->value.len - at);
        if (n <= 0) {
            return 0;
        }
        return at ? (n > rx_time_sec ? (time_t) n - rx_time_sec : 0)
                  : (time_t) n;
    }
    if (!(ign & RX_HTTP_UPSTREAM_IGN_CACHE_CONTROL)
        && (e = header(h, "cache-control")) != NULL) {
        if (cc_has(&e->value, "no-cache") || cc_has(&e->value, "no-store")
            || cc_has(&e->value, "private")) {
            return 0;
        }

        n = cc_number(&e->value, "s-maxage");
        if (n < 0) {
            n = cc_number(&e->value, "max-age");
        }
        if (n >= 0) {
            return cacheable_status(h->status) ? (time_t) n : 0;
        }
    }
    if (!(ign & RX_HTTP_UPSTREAM_IGN_EXPIRES)
        && (e = header(h, "expires")) != NULL) {
        time_t t = rx_http_parse_date(e->value.data, e->value.len);

        if (t == (time_t) -1 || t <= rx_time_sec
            || !cacheable_status(h->status)) {
            return 0;
        }
        return t - rx_time_sec;
    }
    return valid_by_conf(conf, h->status);
}

/* Set-Cookie and Vary, as nginx: a response with a cookie is not stored;
 * Vary: * is not; other Vary names are kept with the entry. */
bool
rx_http_cache_storable(rx_http_upstream_t *u, rx_http_cache_head_t *head)
{
    const rx_table_elt_t *e;
    rx_uint_t             ign = u->conf->ignore_headers;
    size_t                i;

    if (!(ign & RX_HTTP_UPSTREAM_IGN_SET_COOKIE)
        && header(&u->headers_in, "set-cookie") != NULL) {
        return false;
    }
    if (!(ign & RX_HTTP_UPSTREAM_IGN_VARY)
        && (e = header(&u->headers_in, "vary")) != NULL) {
        if (e->value.len >= sizeof(head->vary)
            || memchr(e->value.data, '*', e->value.len)) {
            return false;
        }
        for (i = 0; i < e->value.len; i++) {
            head->vary[i] = (char) tolower((unsigned char) e->value.data[i]);
        }
        head->vary[i] = '\0';
        head->vary_hash = rx_http_cache_vary_hash(u->r, head->vary);
    }
    return true;
}

/* ETag and Last-Modified, for a later revalidation. */
void
rx_http_cache_validators(rx_http_upstream_t *u, rx_http_cache_head_t *head)
{
    const rx_table_elt_t *e;

    head->last_modified = -1;
    if ((e = header(&u->headers_in, "last-modified")) != NULL) {
        head->last_modified = rx_http_parse_date(e->value.data, e->value.len);
    }
    if ((e = header(&u->headers_in, "etag")) != NULL
        && e->value.len < sizeof(head->etag)) {
        memcpy(head->etag, e->value.data, e->value.len);
        head->etag[e->value.len] = '\0';
    }
}

/* FNV-1a of each named request header's name and values. */
uint32_t
rx_http_cache_vary_hash(rx_http_request_t *r, const char *vary)
{
    uint32_t        h = 2166136261u;
    const char     *p = vary, *end;
    rx_table_elt_t *e = r->headers_in.headers.elts;
    rx_uint_t       i;
    size_t          len, k;

    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        for (end = p; *end && *end != ',' && *end != ' '; end++) { }
        len = (size_t) (end - p);
        for (i = 0; len && i < r->headers_in.headers.nelts; i++) {
            if (e[i].key.len != len || strncasecmp(e[i].key.data, p, len)) {
                continue;
            }
            for (k = 0; k < e[i].value.len; k++) {
                h = (h ^ (unsigned char) e[i].value.data[k]) * 16777619u;
            }
            h = (h ^ ',') * 16777619u;
        }
        h = (h ^ ';') * 16777619u;
        p = end;
    }
    return h;
}

/* The predicates of *_cache_bypass, *_no_cache and *_cache_purge (the
 * lookup in http_cache_conf.c and the store in http_cache_store.c ask;
 * here, below both, so that neither calls the other for it). */
bool
rx_http_cache_test_predicates(rx_http_request_t *r, const rx_array_t *list)
{
    const rx_http_complex_value_t *cv;
    rx_str_t                       v;
    rx_uint_t                      i;

    if (list == NULL) {
        return false;
    }
    cv = list->elts;
    for (i = 0; i < list->nelts; i++) {
        if (rx_http_complex_value(r, &cv[i], &v) != RX_OK) {
            return true;         /* as nginx: an error counts as set */
        }
        if (v.len && !(v.len == 1 && v.data[0] == '0')) {
            return true;
        }
    }
    return false;
}
