/*
 * http_location.c: the location tree: built once per server after parsing,
 * searched per request with nginx's rules (ngx_http_core_find_location).
 *
 * Structure, per level (a server or a location with nested locations):
 * - prefix (plain and ^~) and exact (=) locations sit in one array sorted
 *   bytewise by name, a name given by both "=" and a prefix location
 *   sharing an entry. Each entry links to the longest other entry that
 *   has a prefix location and whose name is a proper prefix of its own.
 *   A lookup binary-searches the last entry <= the URI, takes it when it
 *   equals the URI and is exact, else follows the links to the first
 *   prefix location the URI starts with: that is the longest one, since
 *   every name that is a prefix of the URI and sorts before it is also a
 *   prefix of every name between it and the URI. O(log n) compares plus
 *   one per name nested in the found one, instead of nginx's tree of
 *   tries; the choice made is the same.
 * - regex (~, ~*) locations in config order: regex_locations;
 * - named (@) locations, server level only, sorted by name.
 *
 * nginx's auto_redirect: a URI that is the name of a prefix or exact
 * location with proxy_pass or fastcgi_pass, minus its final '/', finds
 * that location (as nginx's NGX_DONE: before any regex, whatever shorter
 * prefix matches) unless the URI is a location's name itself; the caller
 * answers it with a 301 (rx_http_location_redirect()).
 */
#include "http_location.h"

typedef struct {
    rx_str_t                  name;
    rx_http_core_loc_conf_t  *exact;      /* "= name" */
    rx_http_core_loc_conf_t  *inclusive;  /* "name" or "^~ name" */
    rx_int_t                  parent;     /* see the header comment; -1 */
} loc_entry_t;

typedef struct {
    loc_entry_t  *entries;
    rx_uint_t     n;
} loc_table_t;

/* A static location before the table is built: order keeps nginx's
 * stable sort (config order among equals). */
typedef struct {
    rx_http_core_loc_conf_t  *clcf;
    rx_uint_t                 order;
} loc_item_t;

static int
name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int rc = memcmp(a, b, rx_min(alen, blen));

    if (rc != 0) {
        return rc;
    }
    return alen < blen ? -1 : alen > blen;
}

static bool
is_prefix(const rx_str_t *prefix, const rx_str_t *s)
{
    return prefix->len <= s->len
           && memcmp(prefix->data, s->data, prefix->len) == 0;
}

/* Name, then "=" before a prefix location of the same name, then config
 * order, as nginx's ngx_http_cmp_locations with its stable sort. */
static int
item_cmp(const void *one, const void *two)
{
    const loc_item_t *a = one, *b = two;
    int               rc;

    rc = name_cmp(a->clcf->name.data, a->clcf->name.len, b->clcf->name.data,
                  b->clcf->name.len);
    if (rc != 0) {
        return rc;
    }
    if ((a->clcf->match == RX_LOC_EXACT) != (b->clcf->match == RX_LOC_EXACT)) {
        return a->clcf->match == RX_LOC_EXACT ? -1 : 1;
    }
    return a->order < b->order ? -1 : a->order > b->order;
}

/* By name, then config order: with two of one name the first wins. */
static int
named_cmp(const void *one, const void *two)
{
    const loc_item_t *a = one, *b = two;
    int               rc;

    rc = name_cmp(a->clcf->name.data, a->clcf->name.len, b->clcf->name.data,
                  b->clcf->name.len);
    return rc ? rc : a->order < b->order ? -1 : a->order > b->order;
}

rx_int_t
rx_http_location_init_conf(rx_conf_t *cf, rx_http_core_loc_conf_t *clcf)
{
    char err[RX_MAX_ERROR_STR];

    if (cf->conf_file) {
        clcf->file = cf->conf_file->name;
        clcf->line = cf->conf_file->line;
    }
    if (clcf->match != RX_LOC_REGEX && clcf->match != RX_LOC_REGEX_CASELESS) {
        return RX_OK;
    }
    clcf->regex = rx_regex_compile(cf->pool, &clcf->name,
                                   clcf->match == RX_LOC_REGEX_CASELESS,
                                   err, sizeof(err));
    if (clcf->regex == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s", err);
        return RX_ERROR;
    }
    return RX_OK;
}

static rx_int_t
push_ptr(rx_pool_t *pool, rx_array_t **a, void *p)
{
    void **slot;

    if (*a == NULL && (*a = rx_array_create(pool, 4, sizeof(void *))) == NULL) {
        return RX_ERROR;
    }
    slot = rx_array_push(*a);
    if (slot == NULL) {
        return RX_ERROR;
    }
    *slot = p;
    return RX_OK;
}

/* Turns the sorted items into entries, joining "=" and prefix locations
 * of one name; two of a kind are nginx's "duplicate location". */
static rx_int_t
join_items(rx_conf_t *cf, loc_item_t *items, rx_uint_t n, loc_table_t *t)
{
    rx_http_core_loc_conf_t  *c;
    loc_entry_t              *e = NULL;
    rx_uint_t                 i;

    for (i = 0; i < n; i++) {
        c = items[i].clcf;
        if (e == NULL || name_cmp(e->name.data, e->name.len, c->name.data,
                                  c->name.len) != 0) {
            e = &t->entries[t->n++];
            e->name = c->name;
            e->exact = e->inclusive = NULL;
        } else if ((c->match == RX_LOC_EXACT && e->exact)
                   || (c->match != RX_LOC_EXACT && e->inclusive)) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "duplicate location "
                         "\"%.*s\" in %s:%lu", (int) c->name.len, c->name.data,
                         c->file.data ? c->file.data : "", (unsigned long) c->line);
            return RX_ERROR;
        }
        if (c->match == RX_LOC_EXACT) {
            e->exact = c;
        } else {
            e->inclusive = c;
        }
    }
    return RX_OK;
}

/* Links each entry to its longest proper prefix that has a prefix
 * location. In sorted order such prefixes form a chain on a stack: an
 * entry that is a prefix of a later one is a prefix of all in between. */
static rx_int_t
link_parents(rx_pool_t *temp, loc_table_t *t)
{
    rx_uint_t  *stack, depth = 0, i;

    stack = rx_palloc(temp, (t->n + 1) * sizeof(rx_uint_t));
    if (stack == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < t->n; i++) {
        while (depth && !is_prefix(&t->entries[stack[depth - 1]].name,
                                   &t->entries[i].name)) {
            depth--;
        }
        t->entries[i].parent = depth ? (rx_int_t) stack[depth - 1] : -1;
        if (t->entries[i].inclusive) {
            stack[depth++] = i;
        }
    }
    return RX_OK;
}

static rx_int_t
build_table(rx_conf_t *cf, rx_pool_t *temp, rx_http_core_loc_conf_t *pclcf,
    loc_item_t *items, rx_uint_t n)
{
    loc_table_t *t;

    if (n == 0) {
        return RX_OK;
    }
    qsort(items, n, sizeof(loc_item_t), item_cmp);
    t = rx_palloc(cf->pool, sizeof(loc_table_t));
    if (t == NULL) {
        return RX_ERROR;
    }
    t->n = 0;
    t->entries = rx_palloc(cf->pool, n * sizeof(loc_entry_t));
    if (t->entries == NULL
        || join_items(cf, items, n, t) != RX_OK
        || link_parents(temp, t) != RX_OK) {
        return RX_ERROR;
    }
    pclcf->static_tree = t;
    return RX_OK;
}

/* One level, then (depth first, as nginx) every nested one. */
static rx_int_t
init_level(rx_conf_t *cf, rx_pool_t *temp, rx_http_core_loc_conf_t *pclcf,
    rx_http_core_loc_conf_t *server_clcf)
{
    rx_http_core_loc_conf_t **sub;
    loc_item_t               *items;
    rx_uint_t                 i, n = 0;

    if (pclcf->locations == NULL || pclcf->locations->nelts == 0) {
        return RX_OK;
    }
    sub = pclcf->locations->elts;
    items = rx_palloc(temp, pclcf->locations->nelts * sizeof(loc_item_t));
    if (items == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < pclcf->locations->nelts; i++) {
        if (init_level(cf, temp, sub[i], server_clcf) != RX_OK) {
            return RX_ERROR;
        }
        if (sub[i]->noname || sub[i]->name.data == NULL) {
            continue;       /* nameless blocks (if, limit_except) */
        }
        switch (sub[i]->match) {
        case RX_LOC_REGEX:
        case RX_LOC_REGEX_CASELESS:
            if (push_ptr(cf->pool, &pclcf->regex_locations, sub[i]) != RX_OK) {
                return RX_ERROR;
            }
            break;
        case RX_LOC_NAMED:
            if (push_ptr(cf->pool, &server_clcf->named_locations, sub[i])
                != RX_OK) {
                return RX_ERROR;
            }
            break;
        default:
            items[n].clcf = sub[i];
            items[n].order = i;
            n++;
        }
    }
    return build_table(cf, temp, pclcf, items, n);
}

/* Sorts the server's named locations for a binary search. */
static rx_int_t
sort_named(rx_pool_t *temp, rx_array_t *named)
{
    rx_http_core_loc_conf_t **l = named->elts;
    loc_item_t               *items;
    rx_uint_t                 i;

    items = rx_palloc(temp, named->nelts * sizeof(loc_item_t));
    if (items == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < named->nelts; i++) {
        items[i].clcf = l[i];
        items[i].order = i;
    }
    qsort(items, named->nelts, sizeof(loc_item_t), named_cmp);
    for (i = 0; i < named->nelts; i++) {
        l[i] = items[i].clcf;
    }
    return RX_OK;
}

rx_int_t
rx_http_init_locations(rx_conf_t *cf, rx_http_core_srv_conf_t *cscf,
    rx_http_core_loc_conf_t *server_clcf)
{
    rx_pool_t  *temp;
    rx_int_t    rc;

    temp = rx_pool_create(RX_POOL_DEFAULT_SIZE, cf->log);
    if (temp == NULL) {
        return RX_ERROR;
    }
    rc = init_level(cf, temp, server_clcf, server_clcf);
    if (rc == RX_OK && server_clcf->named_locations) {
        rc = sort_named(temp, server_clcf->named_locations);
    }
    rx_pool_destroy(temp);
    return rc;
}

/* name_cmp(name, uri + "/") without building that string. */
static int
cmp_slashed(const rx_str_t *name, const rx_str_t *uri)
{
    int rc = memcmp(name->data, uri->data, rx_min(name->len, uri->len));

    if (rc != 0) {
        return rc;
    }
    if (name->len <= uri->len) {
        return -1;
    }
    rc = (unsigned char) name->data[uri->len] - '/';
    return rc != 0 ? rc : name->len > uri->len + 1;
}

/* The location named uri + "/" that redirects to itself, or NULL. */
static rx_http_core_loc_conf_t *
find_slashed(const loc_table_t *t, const rx_str_t *uri)
{
    const loc_entry_t *e;
    rx_uint_t          lo = 0, hi = t->n, mid;
    int                rc;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        e = &t->entries[mid];
        rc = cmp_slashed(&e->name, uri);
        if (rc == 0) {
            if (e->exact && e->exact->auto_redirect) {
                return e->exact;
            }
            return e->inclusive && e->inclusive->auto_redirect
                   ? e->inclusive : NULL;
        }
        if (rc < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

/* RX_OK: exact match, RX_AGAIN: longest prefix, RX_DONE: auto_redirect
 * (see the top), RX_DECLINED: none. */
static rx_int_t
find_static(const loc_table_t *t, const rx_str_t *uri,
    rx_http_core_loc_conf_t **found)
{
    const loc_entry_t *e;
    rx_http_core_loc_conf_t *slashed;
    rx_uint_t          lo = 0, hi = t->n, mid;
    rx_int_t           i;

    /* the last entry whose name sorts <= uri */
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        e = &t->entries[mid];
        if (name_cmp(e->name.data, e->name.len, uri->data, uri->len) <= 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    e = lo ? &t->entries[lo - 1] : NULL;
    if (e && e->name.len == uri->len && is_prefix(&e->name, uri)) {
        if (e->exact) {
            *found = e->exact;
            return RX_OK;
        }
    } else if ((slashed = find_slashed(t, uri)) != NULL) {
        *found = slashed;
        return RX_DONE;
    }
    if (lo == 0) {
        return RX_DECLINED;
    }
    for (i = (rx_int_t) (lo - 1); i >= 0; i = t->entries[i].parent) {
        e = &t->entries[i];
        if (e->inclusive && is_prefix(&e->name, uri)) {
            *found = e->inclusive;
            return RX_AGAIN;
        }
    }
    return RX_DECLINED;
}

typedef struct {
    const rx_str_t  *uri;
    int             *captures;
    rx_uint_t        ncaptures;
    rx_int_t         ncaptured;
    rx_regex_t      *matched;
} find_ctx_t;

/* A regex with groups stores its captures, one without leaves the earlier
 * ones alone (nginx's ngx_http_regex_exec). */
static rx_int_t
exec_regex(find_ctx_t *fc, rx_regex_t *re)
{
    bool      keep = rx_regex_captures(re) > 0 && fc->captures;
    rx_int_t  rc;

    rc = rx_regex_exec(re, fc->uri->data, fc->uri->len,
                       keep ? fc->captures : NULL, keep ? fc->ncaptures : 0);
    if (rc > 0 && rx_regex_captures(re) > 0) {
        fc->ncaptured = keep ? rx_min(rc, (rx_int_t) fc->ncaptures) : 0;
        fc->matched = re;
    }
    return rc;
}

/*
 * nginx's ngx_http_core_find_location, with *found as r->loc_conf:
 * RX_OK exact or regex match, RX_AGAIN prefix match, RX_DECLINED none,
 * RX_ERROR a regex failed.
 */
static rx_int_t
find_location(find_ctx_t *fc, rx_http_core_loc_conf_t *pclcf,
    rx_http_core_loc_conf_t **found)
{
    rx_http_core_loc_conf_t **re;
    rx_uint_t                 i;
    rx_int_t                  rc = RX_DECLINED, n;
    bool                      noregex = false;

    if (pclcf->static_tree) {
        rc = find_static(pclcf->static_tree, fc->uri, found);
    }
    if (rc == RX_AGAIN) {
        noregex = (*found)->match == RX_LOC_NOREGEX;
        rc = find_location(fc, *found, found);     /* nested ones */
    }
    if (rc == RX_OK || rc == RX_DONE) {
        return rc;
    }
    /* declined, a prefix match, or an error below: as nginx, this level's
     * regexes still get their turn */
    if (noregex || pclcf->regex_locations == NULL) {
        return rc;
    }
    re = pclcf->regex_locations->elts;
    for (i = 0; i < pclcf->regex_locations->nelts; i++) {
        n = exec_regex(fc, re[i]->regex);
        if (n == RX_DECLINED) {
            continue;
        }
        if (n < 0) {
            return RX_ERROR;
        }
        *found = re[i];
        rc = find_location(fc, re[i], found);
        return rc == RX_ERROR || rc == RX_DONE ? rc : RX_OK;
    }
    return rc;
}

rx_http_core_loc_conf_t *
rx_http_find_location(rx_http_core_loc_conf_t *server_clcf, const rx_str_t *uri,
    int *captures, rx_uint_t ncaptures, rx_int_t *ncaptured,
    rx_regex_t **matched)
{
    rx_http_core_loc_conf_t *found = server_clcf;
    find_ctx_t               fc = { uri, captures, ncaptures, 0, NULL };

    if (find_location(&fc, server_clcf, &found) == RX_ERROR) {
        found = NULL;
    }
    if (ncaptured) {
        *ncaptured = fc.ncaptured;
    }
    if (matched) {
        *matched = fc.matched;
    }
    return found;
}

bool
rx_http_location_redirects(const rx_http_core_loc_conf_t *clcf,
    const rx_str_t *uri)
{
    /* no other match has a name longer than the URI */
    return clcf->auto_redirect && clcf->regex == NULL
           && clcf->name.len == uri->len + 1
           && clcf->name.data[uri->len] == '/'
           && memcmp(clcf->name.data, uri->data, uri->len) == 0;
}

rx_http_core_loc_conf_t *
rx_http_find_named_location(rx_http_core_loc_conf_t *server_clcf,
    const rx_str_t *name)
{
    rx_array_t               *named = server_clcf->named_locations;
    rx_http_core_loc_conf_t **l;
    rx_uint_t                 lo = 0, hi, mid;
    int                       rc;

    if (named == NULL) {
        return NULL;
    }
    l = named->elts;
    hi = named->nelts;
    /* the first entry >= name: with duplicates, the first in the config */
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        rc = name_cmp(l[mid]->name.data, l[mid]->name.len, name->data,
                      name->len);
        if (rc < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < named->nelts && l[lo]->name.len == name->len
        && memcmp(l[lo]->name.data, name->data, name->len) == 0) {
        return l[lo];
    }
    return NULL;
}
