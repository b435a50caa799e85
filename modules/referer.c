/*
 * referer.c: nginx's referer module: `valid_referers` and
 * `$invalid_referer` ("1" when the request's Referer is not one of those
 * listed, empty when it is). Names are exact (`example.com`), wildcards
 * (`*.example.com`, `www.example.*`, `.example.com` for both the name and
 * its subdomains), optionally with a URI prefix (`example.com/pics/`), or
 * regexes (`~\.example\.`, caseless, against the Referer after its
 * scheme); `none` (no Referer), `blocked` (a Referer without http:// or
 * https://) and `server_names` (the server's names) as in nginx. An exact
 * name beats a `*.` wildcard, which beats a `.*` one; the longest wildcard
 * wins. The lists are small and searched in order at request time
 * (nginx's hashes are sized by referer_hash_*, accepted and unused here).
 */
#include <ctype.h>
#include "http.h"
#include "http_variables.h"
#include "regex.h"

typedef struct {
    rx_str_t  name;      /* lower case; a suffix ".x.y" or a prefix "x.y." */
    rx_str_t  uri;       /* len 0: any */
} referer_name_t;

typedef struct {
    bool                      set;          /* valid_referers at this level */
    rx_int_t                  no_referer;
    rx_int_t                  blocked_referer;
    bool                      server_names;
    rx_http_core_srv_conf_t  *server;       /* for server_names */
    rx_array_t               *exact;        /* referer_name_t */
    rx_array_t               *head;         /* "*.x.y": suffix ".x.y" */
    rx_array_t               *tail;         /* "x.y.*": prefix "x.y." */
    rx_array_t               *regex;        /* rx_regex_t *, whole referer */
    rx_array_t               *sn_regex;     /* rx_regex_t *, the host only */
    rx_uint_t                 hash_max_size;     /* accepted, unused */
    rx_uint_t                 hash_bucket_size;  /* accepted, unused */
} referer_conf_t;

static const char *set_valid_referers(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_int_t add_variables(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

static const rx_command_t referer_commands[] = {
    { "valid_referers", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF | RX_CONF_1MORE,
      set_valid_referers, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "referer_hash_max_size", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, rx_conf_set_num_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(referer_conf_t, hash_max_size), NULL },
    { "referer_hash_bucket_size", RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, rx_conf_set_num_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(referer_conf_t, hash_bucket_size), NULL },
    rx_null_command
};

static const rx_http_module_t referer_ctx = {
    add_variables, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_referer_module = {
    "rx_http_referer_module", 0, 0, RX_HTTP_MODULE, &referer_ctx,
    referer_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    referer_conf_t *c = rx_pcalloc(cf->pool, sizeof(referer_conf_t));

    if (c == NULL) {
        return NULL;
    }
    c->no_referer = RX_CONF_UNSET;
    c->blocked_referer = RX_CONF_UNSET;
    c->hash_max_size = RX_CONF_UNSET_UINT;
    c->hash_bucket_size = RX_CONF_UNSET_UINT;
    return c;
}

static rx_array_t *
list(rx_conf_t *cf, rx_array_t **a, size_t size)
{
    if (*a == NULL) {
        *a = rx_array_create(cf->pool, 4, size);
    }
    return *a;
}

static bool
same_name(rx_array_t *a, const rx_str_t *name)
{
    referer_name_t *n = a ? a->elts : NULL;
    rx_uint_t       i;

    for (i = 0; a && i < a->nelts; i++) {
        if (n[i].name.len == name->len
            && memcmp(n[i].name.data, name->data, name->len) == 0) {
            return true;
        }
    }
    return false;
}

static rx_int_t
push_name(rx_conf_t *cf, rx_array_t **a, const rx_str_t *name,
    const rx_str_t *uri, const rx_str_t *shown)
{
    referer_name_t *n;

    if (same_name(*a, name)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "conflicting parameter \"%.*s\"",
                          (int) shown->len, shown->data);
        return RX_ERROR;
    }
    n = list(cf, a, sizeof(referer_name_t)) ? rx_array_push(*a) : NULL;
    if (n == NULL) {
        return RX_ERROR;
    }
    n->name = *name;
    n->uri = *uri;
    return RX_OK;
}

/* A name as nginx's wildcard hash takes it: "x.y", "*.x.y", ".x.y" (both
 * "x.y" and "*.x.y") or "x.y.*"; any other '*' is refused. */
static rx_int_t
add_name(rx_conf_t *cf, referer_conf_t *c, const rx_str_t *value,
    const rx_str_t *uri)
{
    rx_str_t  lc, part;
    char     *star;
    size_t    i;

    lc.len = value->len;
    lc.data = rx_pnalloc(cf->pool, lc.len + 1);
    if (lc.data == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < lc.len; i++) {
        lc.data[i] = (char) tolower((unsigned char) value->data[i]);
    }
    lc.data[lc.len] = '\0';

    star = memchr(lc.data, '*', lc.len);
    if (lc.len > 2 && lc.data[0] == '*' && lc.data[1] == '.'
        && memchr(lc.data + 1, '*', lc.len - 1) == NULL) {
        part.data = lc.data + 1;                    /* ".x.y" */
        part.len = lc.len - 1;
        return push_name(cf, &c->head, &part, uri, value);
    }
    if (lc.len > 2 && lc.data[lc.len - 1] == '*' && lc.data[lc.len - 2] == '.'
        && star == lc.data + lc.len - 1) {
        part.data = lc.data;                        /* "x.y." */
        part.len = lc.len - 1;
        return push_name(cf, &c->tail, &part, uri, value);
    }
    if (star || lc.len == 0 || (lc.data[0] == '.' && lc.len == 1)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid hostname or wildcard "
                          "\"%.*s\"", (int) value->len, value->data);
        return RX_ERROR;
    }
    if (lc.data[0] == '.') {
        part.data = lc.data + 1;
        part.len = lc.len - 1;
        if (push_name(cf, &c->exact, &part, uri, value) != RX_OK) {
            return RX_ERROR;
        }
        return push_name(cf, &c->head, &lc, uri, value);
    }
    return push_name(cf, &c->exact, &lc, uri, value);
}

static rx_int_t
add_regex(rx_conf_t *cf, rx_array_t **a, const rx_str_t *pattern)
{
    char         err[256];
    rx_regex_t  *re, **slot;

    re = rx_regex_compile(cf->pool, pattern, true, err, sizeof(err));
    if (re == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s", err);
        return RX_ERROR;
    }
    slot = list(cf, a, sizeof(rx_regex_t *)) ? rx_array_push(*a) : NULL;
    if (slot == NULL) {
        return RX_ERROR;
    }
    *slot = re;
    return RX_OK;
}

static const char *
set_valid_referers(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    referer_conf_t *c = conf;
    rx_str_t       *value = cf->args->elts, name, uri, pattern;
    char           *slash;
    rx_uint_t       i;

    (void) cmd;
    c->set = true;
    for (i = 1; i < cf->args->nelts; i++) {
        if (value[i].len == 0) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid referer \"\"");
            return RX_CONF_ERROR;
        }
        if (rx_str_eq(&value[i], "none")) {
            c->no_referer = 1;
        } else if (rx_str_eq(&value[i], "blocked")) {
            c->blocked_referer = 1;
        } else if (rx_str_eq(&value[i], "server_names")) {
            c->server_names = true;
            c->server = rx_http_conf_get_module_srv_conf(cf,
                            rx_http_core_module);
        } else if (value[i].data[0] == '~') {
            if (value[i].len == 1) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "empty regex in \"%s\"",
                                  value[i].data);
                return RX_CONF_ERROR;
            }
            pattern.data = value[i].data + 1;
            pattern.len = value[i].len - 1;
            if (add_regex(cf, &c->regex, &pattern) != RX_OK) {
                return RX_CONF_ERROR;
            }
        } else {
            name = value[i];
            rx_str_null(&uri);
            slash = memchr(name.data, '/', name.len);
            if (slash) {
                uri.data = slash;
                uri.len = name.len - (size_t) (slash - name.data);
                name.len = (size_t) (slash - name.data);
            }
            if (add_name(cf, c, &name, &uri) != RX_OK) {
                return RX_CONF_ERROR;
            }
        }
    }
    return RX_CONF_OK;
}

/* server_names: the server's names join the list, its regexes match the
 * Referer's host. */
static rx_int_t
add_server_names(rx_conf_t *cf, referer_conf_t *c)
{
    rx_http_server_name_t *sn = c->server->server_names.elts;
    rx_str_t               none = { 0, NULL };
    rx_regex_t           **slot;
    rx_uint_t              i;

    for (i = 0; i < c->server->server_names.nelts; i++) {
        if (sn[i].regex) {
            slot = list(cf, &c->sn_regex, sizeof(rx_regex_t *))
                   ? rx_array_push(c->sn_regex) : NULL;
            if (slot == NULL) {
                return RX_ERROR;
            }
            *slot = sn[i].re;
            continue;
        }
        if (sn[i].name.len && add_name(cf, c, &sn[i].name, &none) != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    referer_conf_t *p = prev, *c = conf;

    rx_conf_merge_uint(c->hash_max_size, p->hash_max_size, 2048);
    rx_conf_merge_uint(c->hash_bucket_size, p->hash_bucket_size, 64);
    if (!c->set) {
        /* a level without valid_referers takes its parent's whole list */
        c->set = p->set;
        c->exact = p->exact;
        c->head = p->head;
        c->tail = p->tail;
        c->regex = p->regex;
        c->sn_regex = p->sn_regex;
        rx_conf_merge_value(c->no_referer, p->no_referer, 0);
        rx_conf_merge_value(c->blocked_referer, p->blocked_referer, 0);
        return RX_CONF_OK;
    }
    if (c->server_names && add_server_names(cf, c) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if ((c->no_referer == 1 || c->blocked_referer == 1)
        && c->exact == NULL && c->head == NULL && c->tail == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "the \"none\" or \"blocked\" "
            "referers are specified in the \"valid_referers\" directive "
            "without any valid referer");
        return RX_CONF_ERROR;
    }
    /* a list of this level: what it does not say is off */
    c->no_referer = c->no_referer == 1;
    c->blocked_referer = c->blocked_referer == 1;
    return RX_CONF_OK;
}

/* The entry for host: exact first, then the longest "*." wildcard, then
 * the longest ".*" one. NULL: none. */
static const referer_name_t *
find_name(const referer_conf_t *c, const char *host, size_t len)
{
    const referer_name_t *n, *best = NULL;
    rx_uint_t             i;

    n = c->exact ? c->exact->elts : NULL;
    for (i = 0; n && i < c->exact->nelts; i++) {
        if (n[i].name.len == len && memcmp(n[i].name.data, host, len) == 0) {
            return &n[i];
        }
    }
    n = c->head ? c->head->elts : NULL;
    for (i = 0; n && i < c->head->nelts; i++) {
        if (n[i].name.len < len && (best == NULL
                                    || n[i].name.len > best->name.len)
            && memcmp(n[i].name.data, host + len - n[i].name.len,
                      n[i].name.len) == 0) {
            best = &n[i];
        }
    }
    if (best) {
        return best;
    }
    n = c->tail ? c->tail->elts : NULL;
    for (i = 0; n && i < c->tail->nelts; i++) {
        if (n[i].name.len < len && (best == NULL
                                    || n[i].name.len > best->name.len)
            && memcmp(n[i].name.data, host, n[i].name.len) == 0) {
            best = &n[i];
        }
    }
    return best;
}

/* RX_OK: one of the regexes matches s; RX_DECLINED: none; RX_ERROR. */
static rx_int_t
match_regexes(rx_http_request_t *r, rx_array_t *a, const char *s, size_t len)
{
    rx_regex_t **re = a ? a->elts : NULL;
    rx_uint_t    i;
    rx_int_t     rc;

    for (i = 0; re && i < a->nelts; i++) {
        rc = rx_regex_exec(re[i], s, len, NULL, 0);
        if (rc == RX_ERROR) {
            rx_http_request_log_error(r, RX_LOG_ALERT, 0, "regex \"%s\" "
                "failed on the referer", rx_regex_pattern(re[i])->data);
            return RX_ERROR;
        }
        if (rc != RX_DECLINED) {
            return RX_OK;
        }
    }
    return RX_DECLINED;
}

/* Is the request's Referer valid for c? RX_OK, RX_DECLINED, RX_ERROR. */
static rx_int_t
check_referer(rx_http_request_t *r, const referer_conf_t *c)
{
    const referer_name_t *n;
    const char           *ref, *last, *p;
    char                  host[256];
    size_t                len, i;
    rx_int_t              rc;

    if (!c->set || (!c->exact && !c->head && !c->tail && !c->regex
                    && !c->sn_regex)) {
        return RX_OK;
    }
    if (r->headers_in.referer == NULL) {
        return c->no_referer ? RX_OK : RX_DECLINED;
    }
    ref = r->headers_in.referer->value.data;
    len = r->headers_in.referer->value.len;
    last = ref + len;
    if (len >= sizeof("http://i.ru") - 1 && strncasecmp(ref, "http://", 7) == 0) {
        ref += 7;
    } else if (len >= sizeof("http://i.ru") - 1
               && strncasecmp(ref, "https://", 8) == 0) {
        ref += 8;
    } else {
        return c->blocked_referer ? RX_OK : RX_DECLINED;
    }
    len = (size_t) (last - ref);

    for (p = ref, i = 0; p < last && *p != '/' && *p != ':'; p++, i++) {
        if (i == sizeof(host)) {
            return RX_DECLINED;
        }
        host[i] = (char) tolower((unsigned char) *p);
    }
    n = find_name(c, host, i);
    if (n) {
        while (p < last && *p != '/') {
            p++;                                  /* the port */
        }
        if (n->uri.len == 0) {
            return RX_OK;
        }
        return (size_t) (last - p) >= n->uri.len
               && memcmp(n->uri.data, p, n->uri.len) == 0 ? RX_OK : RX_DECLINED;
    }
    rc = match_regexes(r, c->sn_regex, host, i);
    if (rc != RX_DECLINED) {
        return rc;
    }
    return match_regexes(r, c->regex, ref, len);
}

static rx_int_t
invalid_referer_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const referer_conf_t *c = rx_http_get_module_loc_conf(r,
                                  rx_http_referer_module);
    rx_int_t              rc = check_referer(r, c);

    (void) data;
    if (rc == RX_ERROR) {
        return RX_ERROR;
    }
    v->data = rc == RX_OK ? "" : "1";
    v->len = rc == RX_OK ? 0 : 1;
    return RX_OK;
}

static rx_int_t
add_variables(rx_conf_t *cf)
{
    rx_str_t            name = rx_string("invalid_referer");
    rx_http_variable_t *v = rx_http_add_variable(cf, &name,
                                                 RX_HTTP_VAR_CHANGEABLE);

    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = invalid_referer_variable;
    return RX_OK;
}
