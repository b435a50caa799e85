/*
 * http_server.c: server_name: checking and compiling names at parse time,
 * building each listening address's lookup at load time, and choosing the
 * server of a request by its Host.
 *
 * Per address, instead of nginx's hashes: sorted arrays searched by
 * bisection. Exact names are keyed by the name; "*.example.com" and
 * ".example.com" by "example.com" (the latter also matching the bare name);
 * "www.example.*" by "www.example". The longest wildcard is found by trying
 * the host's suffixes from the longest down (resp. prefixes), one bisection
 * per label. Regexes stay in config order. Conflicts are decided in config
 * order exactly as ngx_hash_add_key decides them, with small hash sets
 * that live only while building.
 */
#include <ctype.h>
#include "http_server.h"

typedef struct {
    rx_str_t                  key;      /* lower-cased */
    rx_http_core_srv_conf_t  *server;
    bool                      self;     /* ".x": also matches "x" itself */
} sn_entry_t;

typedef struct {
    rx_regex_t               *re;
    rx_http_core_srv_conf_t  *server;
} sn_regex_t;

struct rx_http_server_names_s {
    rx_str_t                  addr_text;
    rx_http_core_srv_conf_t  *default_server;
    sn_entry_t               *exact, *head, *tail;
    rx_uint_t                 nexact, nhead, ntail;
    sn_regex_t               *regex;
    rx_uint_t                 nregex;
    bool                      ssl;     /* `ssl` on one of its listen lines */
    bool                      proxy_protocol;   /* ... `proxy_protocol` */
};

/* The addresses sharing one listening socket (stored in ls->names). */
typedef struct {
    rx_sockaddr_t            *addrs;
    rx_http_server_names_t  **names;
    rx_uint_t                 n;
    rx_uint_t                 own;     /* the entry of the socket's address */
} ls_names_t;

/* ---- parse time ---------------------------------------------------------- */

static rx_int_t
hostname(rx_conf_t *cf, rx_str_t *out)
{
    char    buf[256];
    size_t  i;

    if (cf->cycle && cf->cycle->hostname.len) {
        *out = cf->cycle->hostname;
        return RX_OK;
    }
    if (gethostname(buf, sizeof(buf) - 1) == -1) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "gethostname() failed");
        return RX_ERROR;
    }
    buf[sizeof(buf) - 1] = '\0';
    out->len = strlen(buf);
    for (i = 0; i < out->len; i++) {
        buf[i] = (char) tolower((unsigned char) buf[i]);
    }
    out->data = rx_pstrdup_c(cf->pool, buf, out->len);
    return out->data ? RX_OK : RX_ERROR;
}

rx_int_t
rx_http_server_name_init(rx_conf_t *cf, rx_http_server_name_t *sn)
{
    rx_str_t  pattern;
    char      err[RX_MAX_ERROR_STR];
    bool      caseless = false;
    char      ch = sn->name.len ? sn->name.data[0] : '\0';
    size_t    i;

    if ((ch == '*' && (sn->name.len < 3 || sn->name.data[1] != '.'))
        || (ch == '.' && sn->name.len < 2)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "server name \"%.*s\" is "
                          "invalid", (int) sn->name.len, sn->name.data);
        return RX_ERROR;
    }
    if (memchr(sn->name.data, '/', sn->name.len)) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "server name \"%.*s\" has "
            "suspicious symbols", (int) sn->name.len, sn->name.data);
    }
    if (sn->name.len == 9 && strncasecmp(sn->name.data, "$hostname", 9) == 0) {
        sn->regex = false;
        return hostname(cf, &sn->name);
    }
    if (ch != '~') {
        return RX_OK;
    }
    if (sn->name.len == 1) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "empty regex in server name "
                          "\"%.*s\"", (int) sn->name.len, sn->name.data);
        return RX_ERROR;
    }
    pattern.data = sn->name.data + 1;
    pattern.len = sn->name.len - 1;
    /* nginx: a host is lower-cased before matching, so a pattern with an
     * upper-case letter could never match unless made caseless */
    for (i = 0; i < pattern.len; i++) {
        if (pattern.data[i] >= 'A' && pattern.data[i] <= 'Z') {
            caseless = true;
            break;
        }
    }
    sn->regex = true;
    sn->re = rx_regex_compile(cf->pool, &pattern, caseless, err, sizeof(err));
    if (sn->re == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s", err);
        return RX_ERROR;
    }
    return RX_OK;
}

/* ---- load time: conflicts --------------------------------------------------- */

/* An insert-only set of strings, open addressing; sized once. */
typedef struct {
    rx_str_t   *slots;     /* data NULL: empty */
    rx_uint_t   mask;
} str_set_t;

static rx_int_t
set_init(str_set_t *s, rx_pool_t *pool, rx_uint_t n)
{
    rx_uint_t size = 16;

    while (size < 2 * n + 2) {
        size <<= 1;
    }
    s->slots = rx_pcalloc(pool, size * sizeof(rx_str_t));
    s->mask = size - 1;
    return s->slots ? RX_OK : RX_ERROR;
}

/* Returns false when key was there already (nginx's NGX_BUSY). */
static bool
set_add(str_set_t *s, const char *data, size_t len)
{
    uint32_t   h = 2166136261u;         /* FNV-1a */
    rx_uint_t  i;
    size_t     k;

    for (k = 0; k < len; k++) {
        h = (h ^ (unsigned char) data[k]) * 16777619u;
    }
    for (i = h & s->mask; s->slots[i].data; i = (i + 1) & s->mask) {
        if (s->slots[i].len == len && memcmp(s->slots[i].data, data, len) == 0) {
            return false;
        }
    }
    s->slots[i].data = (char *) (data ? data : "");
    s->slots[i].len = len;
    return true;
}

typedef struct {
    rx_conf_t   *cf;
    const rx_str_t *addr_text;
    str_set_t    exact_keys, head_keys, tail_keys;
    rx_array_t   exact, head, tail;     /* sn_entry_t */
} builder_t;

enum { SN_EXACT, SN_HEAD, SN_TAIL, SN_INVALID };

/* nginx's classification (ngx_hash_add_key with NGX_HASH_WILDCARD_KEY). */
static int
classify(const rx_str_t *name, rx_str_t *key, bool *self)
{
    const char *d = name->data;
    size_t      i, len = name->len;
    rx_uint_t   stars = 0;

    for (i = 0; i < len; i++) {
        if (d[i] == '*' && ++stars > 1) {
            return SN_INVALID;
        }
        if ((d[i] == '.' && i + 1 < len && d[i + 1] == '.') || d[i] == '\0') {
            return SN_INVALID;
        }
    }
    *self = false;
    if (len > 1 && d[0] == '.') {
        key->data = (char *) d + 1;
        key->len = len - 1;
        *self = true;
        return SN_HEAD;
    }
    if (len > 2 && d[0] == '*' && d[1] == '.') {
        key->data = (char *) d + 2;
        key->len = len - 2;
        return SN_HEAD;
    }
    if (len > 2 && d[len - 2] == '.' && d[len - 1] == '*') {
        key->data = (char *) d;
        key->len = len - 2;
        return SN_TAIL;
    }
    key->data = (char *) d;
    key->len = len;
    return stars ? SN_INVALID : SN_EXACT;
}

static rx_int_t
push_entry(builder_t *b, rx_array_t *a, const rx_str_t *key,
    rx_http_core_srv_conf_t *server, bool self)
{
    sn_entry_t *e = rx_array_push(a);
    size_t      i;

    if (e == NULL) {
        return RX_ERROR;
    }
    e->key.len = key->len;
    e->key.data = rx_pnalloc(b->cf->pool, key->len + 1);
    if (e->key.data == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < key->len; i++) {
        e->key.data[i] = (char) tolower((unsigned char) key->data[i]);
    }
    e->key.data[key->len] = '\0';
    e->server = server;
    e->self = self;
    return RX_OK;
}

/* Adds one non-regex name; conflicts follow ngx_hash_add_key step by step
 * (".x" takes "x" from the exact names before it checks the wildcards). */
static rx_int_t
add_name(builder_t *b, const rx_str_t *name, rx_http_core_srv_conf_t *server)
{
    rx_str_t  key;
    bool      self, busy;
    int       kind = classify(name, &key, &self);

    switch (kind) {
    case SN_INVALID:
        rx_log_error(RX_LOG_EMERG, b->cf->log, 0, "invalid server name or "
                     "wildcard \"%.*s\" on %.*s", (int) name->len, name->data,
                     (int) b->addr_text->len, b->addr_text->data);
        return RX_ERROR;
    case SN_EXACT:
        busy = !set_add(&b->exact_keys, key.data, key.len);
        if (!busy && push_entry(b, &b->exact, &key, server, false) != RX_OK) {
            return RX_ERROR;
        }
        break;
    case SN_HEAD:
        busy = (self && !set_add(&b->exact_keys, key.data, key.len))
               || !set_add(&b->head_keys, key.data, key.len);
        if (!busy && push_entry(b, &b->head, &key, server, self) != RX_OK) {
            return RX_ERROR;
        }
        break;
    default:
        busy = !set_add(&b->tail_keys, key.data, key.len);
        if (!busy && push_entry(b, &b->tail, &key, server, false) != RX_OK) {
            return RX_ERROR;
        }
    }
    if (busy) {
        rx_log_error(RX_LOG_WARN, b->cf->log, 0, "conflicting server name "
                     "\"%.*s\" on %.*s, ignored", (int) name->len, name->data,
                     (int) b->addr_text->len, b->addr_text->data);
    }
    return RX_OK;
}

/* ---- load time: tables -------------------------------------------------------- */

static int
key_cmp(const void *one, const void *two)
{
    const sn_entry_t *a = one, *b = two;
    int rc = memcmp(a->key.data, b->key.data, rx_min(a->key.len, b->key.len));

    return rc ? rc : a->key.len < b->key.len ? -1 : a->key.len > b->key.len;
}

static void
finish_table(rx_array_t *a, sn_entry_t **elts, rx_uint_t *n)
{
    /* keys are unique by now: no order among equals to keep */
    qsort(a->elts, a->nelts, sizeof(sn_entry_t), key_cmp);
    *elts = a->elts;
    *n = a->nelts;
}

/* The servers of the address, each once, in config order, and the
 * default one. */
static rx_int_t
collect_servers(rx_pool_t *temp, rx_array_t *listen_opts, rx_array_t *servers,
    rx_http_core_srv_conf_t **def)
{
    rx_http_listen_opt_t    **lo = listen_opts->elts;
    rx_http_core_srv_conf_t **s, **slot;
    rx_uint_t                 i, j;

    if (rx_array_init(servers, temp, listen_opts->nelts, sizeof(void *))
        != RX_OK) {
        return RX_ERROR;
    }
    *def = NULL;
    for (i = 0; i < listen_opts->nelts; i++) {
        if (lo[i]->default_server && *def == NULL) {
            *def = lo[i]->server;
        }
        s = servers->elts;
        for (j = 0; j < servers->nelts && s[j] != lo[i]->server; j++) {
            /* seen already? */
        }
        if (j < servers->nelts) {
            continue;
        }
        slot = rx_array_push(servers);
        if (slot == NULL) {
            return RX_ERROR;
        }
        *slot = lo[i]->server;
    }
    if (*def == NULL && servers->nelts) {
        *def = ((rx_http_core_srv_conf_t **) servers->elts)[0];
    }
    return RX_OK;
}

static rx_int_t
add_servers(builder_t *b, rx_http_server_names_t *sn, rx_array_t *servers)
{
    rx_http_core_srv_conf_t **s = servers->elts;
    rx_http_server_name_t    *name;
    rx_uint_t                 i, k, nregex = 0;

    for (i = 0; i < servers->nelts; i++) {
        name = s[i]->server_names.elts;
        for (k = 0; k < s[i]->server_names.nelts; k++) {
            if (name[k].regex) {
                nregex++;
            } else if (add_name(b, &name[k].name, s[i]) != RX_OK) {
                return RX_ERROR;
            }
        }
    }
    if (nregex == 0) {
        return RX_OK;
    }
    sn->regex = rx_palloc(b->cf->pool, nregex * sizeof(sn_regex_t));
    if (sn->regex == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < servers->nelts; i++) {
        name = s[i]->server_names.elts;
        for (k = 0; k < s[i]->server_names.nelts; k++) {
            if (name[k].regex && name[k].re) {
                sn->regex[sn->nregex].re = name[k].re;
                sn->regex[sn->nregex++].server = s[i];
            }
        }
    }
    return RX_OK;
}

rx_http_server_names_t *
rx_http_build_server_names(rx_conf_t *cf, rx_array_t *listen_opts)
{
    rx_http_server_names_t *sn = NULL;
    rx_http_listen_opt_t  **lo = listen_opts->elts;
    rx_pool_t              *temp;
    rx_array_t              servers;
    rx_http_core_srv_conf_t **s;
    builder_t               b;
    rx_uint_t               i, total = 0;

    if (listen_opts->nelts == 0) {
        return NULL;
    }
    temp = rx_pool_create(RX_POOL_DEFAULT_SIZE, cf->log);
    if (temp == NULL) {
        return NULL;
    }
    memset(&b, 0, sizeof(b));
    b.cf = cf;
    b.addr_text = &lo[0]->addr_text;
    sn = rx_pcalloc(cf->pool, sizeof(rx_http_server_names_t));
    if (sn == NULL
        || collect_servers(temp, listen_opts, &servers, &sn->default_server)
           != RX_OK) {
        goto failed;
    }
    sn->addr_text = lo[0]->addr_text;
    for (i = 0; i < listen_opts->nelts; i++) {
        sn->ssl = sn->ssl || lo[i]->ssl;
        sn->proxy_protocol = sn->proxy_protocol || lo[i]->proxy_protocol;
    }
    s = servers.elts;
    for (i = 0; i < servers.nelts; i++) {
        total += s[i]->server_names.nelts;
    }
    if (set_init(&b.exact_keys, temp, total) != RX_OK
        || set_init(&b.head_keys, temp, total) != RX_OK
        || set_init(&b.tail_keys, temp, total) != RX_OK
        || rx_array_init(&b.exact, cf->pool, total, sizeof(sn_entry_t)) != RX_OK
        || rx_array_init(&b.head, cf->pool, 1, sizeof(sn_entry_t)) != RX_OK
        || rx_array_init(&b.tail, cf->pool, 1, sizeof(sn_entry_t)) != RX_OK
        || add_servers(&b, sn, &servers) != RX_OK) {
        goto failed;
    }
    finish_table(&b.exact, &sn->exact, &sn->nexact);
    finish_table(&b.head, &sn->head, &sn->nhead);
    finish_table(&b.tail, &sn->tail, &sn->ntail);
    rx_pool_destroy(temp);
    return sn;

failed:
    rx_pool_destroy(temp);
    return NULL;
}

/* ---- load time: listening sockets ---------------------------------------------- */

/* Splits ls->servers by exact address, keeping config order in each. */
static ls_names_t *
group_listening(rx_conf_t *cf, rx_pool_t *temp, rx_listening_t *ls)
{
    rx_array_t            *all = ls->servers, *groups;
    rx_http_listen_opt_t **lo = all->elts, **slot;
    ls_names_t            *ln;
    rx_uint_t              i, g;

    groups = rx_pcalloc(temp, all->nelts * sizeof(rx_array_t));
    ln = rx_pcalloc(cf->pool, sizeof(ls_names_t));
    if (groups == NULL || ln == NULL
        || (ln->addrs = rx_palloc(cf->pool, all->nelts * sizeof(rx_sockaddr_t)))
           == NULL
        || (ln->names = rx_pcalloc(cf->pool, all->nelts * sizeof(void *)))
           == NULL) {
        return NULL;
    }
    for (i = 0; i < all->nelts; i++) {
        for (g = 0; g < ln->n && !rx_sockaddr_eq(&ln->addrs[g], &lo[i]->addr);
             g++) {
            /* find its group */
        }
        if (g == ln->n) {
            ln->addrs[ln->n++] = lo[i]->addr;
            if (rx_array_init(&groups[g], temp, 2, sizeof(void *)) != RX_OK) {
                return NULL;
            }
        }
        slot = rx_array_push(&groups[g]);
        if (slot == NULL) {
            return NULL;
        }
        *slot = lo[i];
    }
    for (g = 0; g < ln->n; g++) {
        ln->names[g] = rx_http_build_server_names(cf, &groups[g]);
        if (ln->names[g] == NULL) {
            return NULL;
        }
        if (rx_sockaddr_eq(&ln->addrs[g], &ls->addr)) {
            ln->own = g;
        }
    }
    return ln;
}

rx_int_t
rx_http_init_server_names(rx_conf_t *cf)
{
    rx_listening_t *ls = cf->cycle->listening.elts;
    rx_pool_t      *temp;
    rx_uint_t       i;
    rx_int_t        rc = RX_OK;

    temp = rx_pool_create(RX_POOL_DEFAULT_SIZE, cf->log);
    if (temp == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < cf->cycle->listening.nelts; i++) {
        if (ls[i].names || ls[i].servers == NULL
            || ((rx_array_t *) ls[i].servers)->nelts == 0) {
            continue;
        }
        ls[i].names = group_listening(cf, temp, &ls[i]);
        if (ls[i].names == NULL) {
            rc = RX_ERROR;
            break;
        }
    }
    rx_pool_destroy(temp);
    return rc;
}

rx_uint_t
rx_http_listening_naddrs(const rx_listening_t *ls)
{
    const ls_names_t *ln = ls->names;

    return ln ? ln->n : 0;
}

rx_http_server_names_t *
rx_http_listening_names(const rx_listening_t *ls, const rx_sockaddr_t *local)
{
    const ls_names_t *ln = ls->names;
    rx_uint_t         i;

    if (ln == NULL) {
        return NULL;
    }
    if (local && ln->n > 1) {
        for (i = 0; i < ln->n; i++) {
            if (rx_sockaddr_eq(&ln->addrs[i], local)) {
                return ln->names[i];
            }
        }
    }
    return ln->names[ln->own];
}

/* ---- request time ------------------------------------------------------------- */

/* Compares a lower-case key with s, s folded to lower case. */
static int
lc_cmp(const rx_str_t *key, const char *s, size_t len)
{
    size_t i, n = rx_min(key->len, len);
    int    a, b;

    for (i = 0; i < n; i++) {
        a = (unsigned char) key->data[i];
        b = tolower((unsigned char) s[i]);
        if (a != b) {
            return a - b;
        }
    }
    return key->len < len ? -1 : key->len > len;
}

static const sn_entry_t *
lookup(const sn_entry_t *t, rx_uint_t n, const char *s, size_t len)
{
    rx_uint_t lo = 0, hi = n, mid;
    int       rc;

    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        rc = lc_cmp(&t[mid].key, s, len);
        if (rc == 0) {
            return &t[mid];
        }
        if (rc < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

/* "*.x"/".x": the longest suffix of host that starts a label. */
static const sn_entry_t *
find_head(const rx_http_server_names_t *sn, const rx_str_t *host)
{
    const sn_entry_t *e;
    size_t            p = 0;
    const char       *dot;

    for ( ;; ) {
        e = lookup(sn->head, sn->nhead, host->data + p, host->len - p);
        if (e && (p > 0 || e->self)) {
            return e;
        }
        dot = memchr(host->data + p, '.', host->len - p);
        if (dot == NULL) {
            return NULL;
        }
        p = (size_t) (dot - host->data) + 1;
    }
}

/* "x.*": the longest prefix of host that ends before a dot, with at
 * least one more label after it. */
static const sn_entry_t *
find_tail(const rx_http_server_names_t *sn, const rx_str_t *host)
{
    const sn_entry_t *e;
    size_t            d;

    for (d = host->len; d-- > 1; ) {
        if (host->data[d] != '.' || d + 1 == host->len) {
            continue;
        }
        e = lookup(sn->tail, sn->ntail, host->data, d);
        if (e) {
            return e;
        }
    }
    return NULL;
}

/* Drops a ":port" (after "]" for an IPv6 literal) and one trailing dot. */
static void
trim_host(const rx_str_t *in, rx_str_t *out)
{
    const char *end;

    out->data = in->data;
    out->len = in->len;
    if (out->len && out->data[0] == '[') {
        end = memchr(out->data, ']', out->len);
        if (end) {
            out->len = (size_t) (end - out->data) + 1;
        }
    } else if ((end = memchr(out->data, ':', out->len)) != NULL) {
        out->len = (size_t) (end - out->data);
    }
    if (out->len && out->data[out->len - 1] == '.') {
        out->len--;
    }
}

rx_http_core_srv_conf_t *
rx_http_find_server(rx_http_server_names_t *names, const rx_str_t *host,
    int *captures, rx_uint_t ncaptures, rx_int_t *ncaptured,
    rx_regex_t **matched)
{
    const sn_entry_t *e;
    rx_str_t          h = rx_null_string;
    rx_uint_t         i;
    rx_int_t          rc, dummy_n;
    rx_regex_t       *dummy_re;
    bool              keep;

    ncaptured = ncaptured ? ncaptured : &dummy_n;
    matched = matched ? matched : &dummy_re;
    *ncaptured = 0;
    *matched = NULL;
    if (host && host->len) {
        trim_host(host, &h);
    }
    e = lookup(names->exact, names->nexact, h.data ? h.data : "", h.len);
    if (e) {
        return e->server;
    }
    if (h.len == 0) {
        return names->default_server;
    }
    /* an address without wildcard names skips their searches, a bisection
     * per label of the host (eight for "127.0.0.1") */
    if ((names->nhead && (e = find_head(names, &h)))
        || (names->ntail && (e = find_tail(names, &h)))) {
        return e->server;
    }
    for (i = 0; i < names->nregex; i++) {
        keep = captures && rx_regex_captures(names->regex[i].re) > 0;
        rc = rx_regex_exec(names->regex[i].re, h.data, h.len,
                           keep ? captures : NULL, keep ? ncaptures : 0);
        if (rc == RX_DECLINED) {
            continue;
        }
        if (rc < 0) {
            return NULL;
        }
        if (rx_regex_captures(names->regex[i].re) > 0) {
            *ncaptured = keep ? rx_min(rc, (rx_int_t) ncaptures) : 0;
            *matched = names->regex[i].re;
        }
        return names->regex[i].server;
    }
    return names->default_server;
}

rx_http_core_srv_conf_t *
rx_http_default_server(const rx_http_server_names_t *names)
{
    return names->default_server;
}

bool
rx_http_server_names_ssl(const rx_http_server_names_t *names)
{
    return names && names->ssl;
}

bool
rx_http_server_names_proxy_protocol(const rx_http_server_names_t *names)
{
    return names && names->proxy_protocol;
}

const rx_str_t *
rx_http_server_names_addr(const rx_http_server_names_t *names)
{
    return &names->addr_text;
}
