/*
 * map.c: the map module: `map source $var { ... }` defines $var as a
 * function of a text with variables. Exact keys live in a hash table,
 * hostname wildcards in two more (suffixes and prefixes), then regexes
 * are tried in configuration order; the value may hold variables and the
 * captures of the regex that matched.
 */
#include "http.h"
#include "regex.h"
#include "http_script.h"
#include "http_captures.h"

/* One key of a table; key NULL marks a free slot. */
typedef struct {
    const char                     *key;     /* lower-case */
    size_t                          len;
    const rx_http_complex_value_t  *value;
} map_slot_t;

/* Open addressing with linear probing, at most half full. */
typedef struct {
    map_slot_t  *slots;                      /* NULL while empty */
    size_t       mask;                       /* capacity - 1 */
    size_t       n;
} map_table_t;

typedef struct {
    rx_regex_t                     *re;
    rx_http_capture_vars_t         *names;   /* named groups as variables */
    const rx_http_complex_value_t  *value;
} map_regex_t;

/* One map, the data of its variable. */
typedef struct {
    rx_http_complex_value_t         source;
    map_table_t                     exact;
    map_table_t                     head;    /* "*.a.b", ".a.b" as ".a.b" */
    map_table_t                     tail;    /* "a.b.*" as "a.b." */
    map_regex_t                    *regex;
    rx_uint_t                       nregex;
    const rx_http_complex_value_t  *deflt;   /* NULL: the empty string */
    bool                            hostnames;
} map_t;

/* While the block is parsed. */
typedef struct {
    map_t       *map;
    rx_array_t  *regex;                      /* map_regex_t */
    bool         volatile_;
} map_conf_ctx_t;

static const char *map_block(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

static const rx_command_t map_commands[] = {
    { "map", RX_HTTP_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_TAKE2, map_block,
      RX_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "map_hash_max_size", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, RX_HTTP_MAIN_CONF_OFFSET, 0,
      "map tables grow as needed" },
    { "map_hash_bucket_size", RX_HTTP_MAIN_CONF | RX_CONF_TAKE1,
      rx_conf_set_ignored, RX_HTTP_MAIN_CONF_OFFSET, 0,
      "map tables grow as needed" },
    rx_null_command
};

static const rx_http_module_t map_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

rx_module_t rx_http_map_module = {
    "rx_http_map_module", 0, 0, RX_HTTP_MODULE, &map_ctx, map_commands,
    NULL, NULL, NULL, NULL
};

/* ---- the hash tables ---- */

static inline unsigned char
lc(char c)
{
    return (unsigned char) ((c >= 'A' && c <= 'Z') ? (c | 0x20) : c);
}

/* FNV-1a over the lower-cased bytes. */
static uint32_t
hash_lc(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    size_t   i;

    for (i = 0; i < len; i++) {
        h = (h ^ lc(s[i])) * 16777619u;
    }
    return h;
}

/* The slot of s[0..len) (compared without case), or the free slot where it
 * would go. t->slots must not be NULL. */
static map_slot_t *
table_slot(const map_table_t *t, const char *s, size_t len)
{
    size_t      i = hash_lc(s, len) & t->mask, k;
    map_slot_t *slot;

    for ( ;; i = (i + 1) & t->mask) {
        slot = &t->slots[i];
        if (slot->key == NULL) {
            return slot;
        }
        if (slot->len != len) {
            continue;
        }
        for (k = 0; k < len && (unsigned char) slot->key[k] == lc(s[k]); k++) {
            /* compare */
        }
        if (k == len) {
            return slot;
        }
    }
}

static const rx_http_complex_value_t *
table_find(const map_table_t *t, const char *s, size_t len)
{
    return t->n ? table_slot(t, s, len)->value : NULL;
}

/* Doubles the table (16 slots at first); the old slots stay in the pool,
 * which at most doubles what the final table takes. */
static rx_int_t
table_grow(rx_pool_t *pool, map_table_t *t)
{
    map_table_t  bigger;
    size_t       i, size = t->slots ? 2 * (t->mask + 1) : 16;

    bigger.slots = rx_pcalloc(pool, size * sizeof(map_slot_t));
    if (bigger.slots == NULL) {
        return RX_ERROR;
    }
    bigger.mask = size - 1;
    bigger.n = t->n;
    for (i = 0; t->slots && i <= t->mask; i++) {
        if (t->slots[i].key) {
            *table_slot(&bigger, t->slots[i].key, t->slots[i].len) = t->slots[i];
        }
    }
    *t = bigger;
    return RX_OK;
}

/* Adds key (lower-case, from the configuration's pool). RX_DECLINED when
 * the key is there already. */
static rx_int_t
table_add(rx_pool_t *pool, map_table_t *t, const char *key, size_t len,
    const rx_http_complex_value_t *value)
{
    map_slot_t *slot;

    if ((t->n + 1) * 2 > (t->slots ? t->mask + 1 : 0)
        && table_grow(pool, t) != RX_OK) {
        return RX_ERROR;
    }
    slot = table_slot(t, key, len);
    if (slot->key) {
        return RX_DECLINED;
    }
    slot->key = key;
    slot->len = len;
    slot->value = value;
    t->n++;
    return RX_OK;
}

/* ---- request time ---- */

/* The longest "*.x"/".x" wildcard whose suffix ends s, then the longest
 * "x.*" whose prefix starts it (nginx's order). */
static const rx_http_complex_value_t *
find_wildcard(const map_t *map, const char *s, size_t len)
{
    const rx_http_complex_value_t *v;
    size_t                         i;

    for (i = 0; map->head.n && i < len; i++) {
        if (s[i] == '.' && (v = table_find(&map->head, s + i, len - i))) {
            return v;
        }
    }
    for (i = len; map->tail.n && i > 0; i--) {
        if (s[i - 1] == '.' && (v = table_find(&map->tail, s, i))) {
            return v;
        }
    }
    return NULL;
}

/*
 * The regexes in order. A regex with groups leaves its captures in
 * r->captures for the value (and later directives), as nginx's
 * ngx_http_regex_exec; its named groups become variables. A regex that
 * fails to run is logged and the search ends (the default applies).
 */
static const rx_http_complex_value_t *
find_regex(rx_http_request_t *r, const map_t *map, const rx_str_t *s)
{
    const map_regex_t *mr;
    rx_uint_t          i, groups;
    rx_int_t           rc;

    for (i = 0; i < map->nregex; i++) {
        mr = &map->regex[i];
        groups = rx_regex_captures(mr->re);
        rc = rx_regex_exec(mr->re, s->data, s->len,
                           groups ? r->captures : NULL,
                           groups ? RX_HTTP_MAX_CAPTURES : 0);
        if (rc == RX_DECLINED) {
            continue;
        }
        if (rc == RX_ERROR) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "pcre2_match() "
                "failed on \"%.*s\" using \"%s\"", (int) s->len, s->data,
                rx_regex_pattern(mr->re)->data);
            return NULL;
        }
        if (groups) {
            r->ncaptures = rx_min(rc, RX_HTTP_MAX_CAPTURES);
            r->captures_data = s->data;
        }
        if (mr->names && rx_http_set_capture_vars(r, mr->names, s->data)
                         != RX_OK) {
            return NULL;
        }
        return mr->value;
    }
    return NULL;
}

static rx_int_t
map_variable(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const map_t                   *map = (const map_t *) data;
    const rx_http_complex_value_t *cv;
    rx_str_t                       src, out;

    if (rx_http_complex_value(r, &map->source, &src) != RX_OK) {
        return RX_ERROR;
    }
    if (map->hostnames && src.len && src.data[src.len - 1] == '.') {
        src.len--;
    }
    cv = table_find(&map->exact, src.data, src.len);
    if (cv == NULL && src.len) {
        cv = find_wildcard(map, src.data, src.len);
    }
    if (cv == NULL && src.len) {
        cv = find_regex(r, map, &src);   /* not for "": nginx's rule */
    }
    if (cv == NULL) {
        cv = map->deflt;
    }
    if (cv == NULL) {
        v->data = (char *) "";
        v->len = 0;
        return RX_OK;
    }
    if (rx_http_complex_value(r, cv, &out) != RX_OK) {
        return RX_ERROR;
    }
    v->data = out.data;
    v->len = out.len;
    return RX_OK;
}

/* ---- configuration ---- */

static bool
has_star(const char *s, size_t len)
{
    return memchr(s, '*', len) != NULL;
}

/* Adds one key to its table, with `hostnames` nginx's wildcard forms:
 * "*.a.b" and ".a.b" (which also adds "a.b"), "a.b.*". Logs
 * `conflicting parameter` or `invalid hostname or wildcard`. */
static rx_int_t
add_key(rx_conf_t *cf, map_t *map, const rx_str_t *key, bool hostnames,
    const rx_http_complex_value_t *value)
{
    char       *k = key->data;
    size_t      len = key->len, i;
    rx_int_t    rc;

    for (i = 0; i < len; i++) {
        k[i] = (char) lc(k[i]);     /* errors show it so, as in nginx */
    }
    if (!hostnames) {
        rc = table_add(cf->pool, &map->exact, k, len, value);
    } else if (len > 2 && k[0] == '*' && k[1] == '.' && !has_star(k + 1, len - 1)) {
        rc = table_add(cf->pool, &map->head, k + 1, len - 1, value);
    } else if (len > 1 && k[0] == '.' && !has_star(k, len)) {
        rc = table_find(&map->exact, k + 1, len - 1) ? RX_DECLINED
             : table_add(cf->pool, &map->head, k, len, value);
        if (rc == RX_OK) {
            rc = table_add(cf->pool, &map->exact, k + 1, len - 1, value);
        }
    } else if (len > 2 && k[len - 1] == '*' && k[len - 2] == '.'
               && !has_star(k, len - 1)) {
        rc = table_add(cf->pool, &map->tail, k, len - 1, value);
    } else if (!has_star(k, len)) {
        rc = table_add(cf->pool, &map->exact, k, len, value);
    } else {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid hostname or wildcard "
                          "\"%s\"", k);
        return RX_ERROR;
    }
    if (rc == RX_DECLINED) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "conflicting parameter \"%s\"",
                          k);
    }
    return rc == RX_OK ? RX_OK : RX_ERROR;
}

/* "~regex" or "~*regex" (caseless). */
static rx_int_t
add_regex(rx_conf_t *cf, map_conf_ctx_t *ctx, const rx_str_t *key,
    const rx_http_complex_value_t *value)
{
    map_regex_t *mr = rx_array_push(ctx->regex);
    rx_str_t     pattern = { key->len - 1, key->data + 1 };
    bool         caseless = false;
    char         err[RX_MAX_ERROR_STR];

    if (mr == NULL) {
        return RX_ERROR;
    }
    if (pattern.len && pattern.data[0] == '*') {
        pattern.len--;
        pattern.data++;
        caseless = true;
    }
    mr->re = rx_regex_compile(cf->pool, &pattern, caseless, err, sizeof(err));
    if (mr->re == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s", err);
        return RX_ERROR;
    }
    mr->value = value;
    return rx_http_regex_capture_vars(cf, mr->re, &mr->names);
}

/* One line of the block: "key value;", default, include, hostnames,
 * volatile. */
static const char *
map_line(rx_conf_t *cf, void *dummy, void *conf)
{
    map_conf_ctx_t          *ctx = conf;
    rx_str_t                *value = cf->args->elts, key;
    rx_http_complex_value_t *cv;

    if (cf->args->nelts == 1 && rx_str_eq(&value[0], "hostnames")) {
        ctx->map->hostnames = true;
        return RX_CONF_OK;
    }
    if (cf->args->nelts == 1 && rx_str_eq(&value[0], "volatile")) {
        ctx->volatile_ = true;
        return RX_CONF_OK;
    }
    if (cf->args->nelts != 2) {
        return "invalid number of the map parameters";
    }
    if (rx_str_eq(&value[0], "include")) {
        return rx_conf_include(cf, NULL, conf);
    }
    cv = rx_palloc(cf->pool, sizeof(*cv));
    if (cv == NULL || rx_http_compile_complex_value(cf, &value[1], cv) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (rx_str_eq(&value[0], "default")) {
        if (ctx->map->deflt) {
            return "duplicate default map parameter";
        }
        ctx->map->deflt = cv;
        return RX_CONF_OK;
    }
    if (value[0].len && value[0].data[0] == '~') {
        return add_regex(cf, ctx, &value[0], cv) == RX_OK ? RX_CONF_OK
                                                           : RX_CONF_ERROR;
    }
    key = value[0];
    if (key.len && key.data[0] == '\\') {
        key.len--;                  /* "\default", "\~x": a literal key */
        key.data++;
    }
    return add_key(cf, ctx->map, &key, ctx->map->hostnames, cv) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

static const char *
map_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t            *value = cf->args->elts, name = value[2];
    rx_http_variable_t  *var;
    map_conf_ctx_t       ctx;
    rx_conf_t            saved;
    const char          *rv;

    memset(&ctx, 0, sizeof(ctx));
    ctx.map = rx_pcalloc(cf->pool, sizeof(map_t));
    ctx.regex = rx_array_create(cf->pool, 4, sizeof(map_regex_t));
    if (ctx.map == NULL || ctx.regex == NULL) {
        return RX_CONF_ERROR;
    }
    if (rx_http_compile_complex_value(cf, &value[1], &ctx.map->source)
        != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (name.len < 2 || name.data[0] != '$') {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid variable name \"%s\"",
                          name.data);
        return RX_CONF_ERROR;
    }
    name.len--;
    name.data++;
    /* changeable, as nginx: a later map of the same name replaces it */
    var = rx_http_add_variable(cf, &name, RX_HTTP_VAR_CHANGEABLE);
    if (var == NULL) {
        return RX_CONF_ERROR;
    }

    saved = *cf;
    cf->handler = map_line;
    cf->handler_conf = &ctx;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    if (rv != RX_CONF_OK) {
        return rv;
    }

    ctx.map->regex = ctx.regex->elts;
    ctx.map->nregex = ctx.regex->nelts;
    var->get = map_variable;
    var->set = NULL;
    var->data = (uintptr_t) ctx.map;
    var->flags &= ~RX_HTTP_VAR_NOCACHEABLE;
    if (ctx.volatile_) {
        var->flags |= RX_HTTP_VAR_NOCACHEABLE;
    }
    return RX_CONF_OK;
}
