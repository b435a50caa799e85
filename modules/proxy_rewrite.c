/*
 * proxy_rewrite.c: proxy_redirect, proxy_cookie_domain, proxy_cookie_path
 * and proxy_cookie_flags: their rules compiled at load, and the rewriting
 * of Location, Refresh and Set-Cookie headers of proxied responses, by
 * nginx's rules (the first rule that applies wins).
 */
#include "http.h"
#include "regex.h"
#include "http_script.h"
#include "http_captures.h"
#include "proxy_rewrite.h"

/* How a rule matches, and what its replacement replaces. */
typedef enum {
    RW_PREFIX = 1,   /* the value starts with the pattern (case-sensitive):
                        that start is replaced */
    RW_DOMAIN,       /* the value, a leading dot aside, equals the pattern
                        (case-insensitive): all but the dot is replaced */
    RW_REGEX         /* the regex matches: the whole value is replaced */
} rw_kind_t;

typedef struct {
    rw_kind_t                kind;
    rx_http_complex_value_t  pattern;      /* RW_PREFIX, RW_DOMAIN */
    rx_regex_t              *re;           /* RW_REGEX */
    rx_http_capture_vars_t  *names;        /* its named groups, or NULL */
    rx_http_complex_value_t  replacement;
} rx_http_proxy_rewrite_t;

/* proxy_cookie_flags cookie flag ...: the flags of the first rule whose
 * cookie name matches (case-insensitive, or a regex). */
typedef struct {
    rx_http_complex_value_t  cookie;
    rx_regex_t              *re;
    rx_http_capture_vars_t  *names;
    rx_http_complex_value_t  flags[3];
    rx_int_t                 ops[3];       /* flag_ops index; -1: has
                                              variables, looked up per
                                              request */
    rx_uint_t                nflags;
} rx_http_proxy_cookie_flags_t;

/* A flag: the attribute it adds (with value) or removes. */
static const struct {
    const char  *name;
    const char  *attr;
    const char  *value;      /* NULL: an attribute without "=value" */
    bool         remove;
} flag_ops[] = {
    { "secure", "Secure", NULL, false },
    { "nosecure", "Secure", NULL, true },
    { "httponly", "HttpOnly", NULL, false },
    { "nohttponly", "HttpOnly", NULL, true },
    { "samesite=strict", "SameSite", "Strict", false },
    { "samesite=lax", "SameSite", "Lax", false },
    { "samesite=none", "SameSite", "None", false },
    { "nosamesite", "SameSite", NULL, true },
};

/* One "key[=value]" part of a Set-Cookie value; the first is the cookie. */
typedef struct {
    rx_str_t  key;
    rx_str_t  value;
    bool      has_value;
    bool      removed;
} cookie_attr_t;

void
rx_http_proxy_rewrite_init_conf(rx_http_proxy_rewrite_conf_t *rc)
{
    rc->redirects = RX_CONF_UNSET_PTR;
    rc->cookie_domains = RX_CONF_UNSET_PTR;
    rc->cookie_paths = RX_CONF_UNSET_PTR;
    rc->cookie_flags = RX_CONF_UNSET_PTR;
}

static bool
has_rules(const rx_array_t *a)
{
    return a != NULL && a != RX_CONF_UNSET_PTR && a->nelts > 0;
}

bool
rx_http_proxy_rewrites_redirects(const rx_http_proxy_rewrite_conf_t *rc)
{
    return has_rules(rc->redirects);
}

bool
rx_http_proxy_rewrites_cookies(const rx_http_proxy_rewrite_conf_t *rc)
{
    return has_rules(rc->cookie_domains) || has_rules(rc->cookie_paths)
           || has_rules(rc->cookie_flags);
}

/* Load time. */

/* "~regex" (case-sensitive unless caseless), "~*regex" (case-insensitive)
 * or a text of kind plain; then the replacement. */
static rx_int_t
compile_rule(rx_conf_t *cf, rx_http_proxy_rewrite_t *rule, rx_str_t pattern,
    rx_str_t replacement, rw_kind_t plain, bool caseless)
{
    memset(rule, 0, sizeof(*rule));
    if (pattern.len && pattern.data[0] == '~') {
        pattern.data++;
        pattern.len--;
        if (pattern.len && pattern.data[0] == '*') {
            pattern.data++;
            pattern.len--;
            caseless = true;
        }
        rule->kind = RW_REGEX;
        if (rx_http_regex_compile(cf, &pattern, caseless, &rule->re,
                                  &rule->names) != RX_OK) {
            return RX_ERROR;
        }
    } else {
        rule->kind = plain;
        if (plain == RW_DOMAIN) {
            /* nginx ignores a leading dot of both strings */
            if (pattern.len && pattern.data[0] == '.') {
                pattern.data++;
                pattern.len--;
            }
            if (replacement.len && replacement.data[0] == '.') {
                replacement.data++;
                replacement.len--;
            }
        }
        if (rx_http_compile_complex_value(cf, &pattern, &rule->pattern) != RX_OK) {
            return RX_ERROR;
        }
    }
    return rx_http_compile_complex_value(cf, &replacement, &rule->replacement);
}

static rx_http_proxy_rewrite_t *
push_rule(rx_conf_t *cf, rx_array_t **rules)
{
    if (*rules == RX_CONF_UNSET_PTR) {
        *rules = rx_array_create(cf->pool, 2, sizeof(rx_http_proxy_rewrite_t));
        if (*rules == NULL) {
            return NULL;
        }
    }
    return rx_array_push(*rules);
}

/* proxy_redirect default: the proxy_pass URL becomes the location's name,
 * or, without a URI part, "URL/" becomes "/". Constants: a '$' in them is
 * literal. */
static rx_int_t
default_rule(rx_conf_t *cf, rx_http_proxy_rewrite_t *rule,
    const rx_http_proxy_target_t *t)
{
    memset(rule, 0, sizeof(*rule));
    rule->kind = RW_PREFIX;
    if (t->has_uri) {
        rule->pattern.value = t->url;
        rule->replacement.value = t->location;
        return RX_OK;
    }
    rule->pattern.value.len = t->url.len + 1;
    rule->pattern.value.data = rx_pnalloc(cf->pool, t->url.len + 1);
    if (rule->pattern.value.data == NULL) {
        return RX_ERROR;
    }
    memcpy(rule->pattern.value.data, t->url.data, t->url.len);
    rule->pattern.value.data[t->url.len] = '/';
    rx_str_set(&rule->replacement.value, "/");
    return RX_OK;
}

const char *
rx_http_proxy_set_redirect(rx_conf_t *cf, rx_http_proxy_rewrite_conf_t *rc,
    const rx_http_proxy_target_t *target)
{
    rx_str_t                *value = cf->args->elts;
    rx_http_proxy_rewrite_t *rule;

    if (rc->redirects == NULL) {
        return "is duplicate";             /* "off" and rules on one level */
    }
    if (cf->args->nelts == 2 && rx_str_eq(&value[1], "off")) {
        if (rc->redirects != RX_CONF_UNSET_PTR) {
            return "is duplicate";
        }
        rc->redirects = NULL;
        return RX_CONF_OK;
    }
    if (cf->args->nelts == 2 && !rx_str_eq(&value[1], "default")) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    rule = push_rule(cf, &rc->redirects);
    if (rule == NULL) {
        return RX_CONF_ERROR;
    }
    if (cf->args->nelts == 3) {
        return compile_rule(cf, rule, value[1], value[2], RW_PREFIX, false)
               == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
    }
    if (target->variables) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"proxy_redirect default\" "
                          "cannot be used with \"proxy_pass\" directive with "
                          "variables");
        return RX_CONF_ERROR;
    }
    if (target->url.len == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"proxy_redirect default\" "
                          "should be placed after the \"proxy_pass\" directive");
        return RX_CONF_ERROR;
    }
    return default_rule(cf, rule, target) == RX_OK ? RX_CONF_OK : RX_CONF_ERROR;
}

/* proxy_cookie_domain / proxy_cookie_path: "off", or a rule. */
static const char *
set_cookie_rule(rx_conf_t *cf, const rx_command_t *cmd, void *conf,
    rw_kind_t plain, bool caseless)
{
    rx_array_t             **rules = rx_conf_field(conf, cmd, rx_array_t *);
    rx_str_t                *value = cf->args->elts;
    rx_http_proxy_rewrite_t *rule;

    if (cf->args->nelts == 2) {
        if (!rx_str_eq(&value[1], "off")) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[1].data);
            return RX_CONF_ERROR;
        }
        if (*rules != RX_CONF_UNSET_PTR) {
            return "is duplicate";
        }
        *rules = NULL;
        return RX_CONF_OK;
    }
    if (*rules == NULL) {
        return "is duplicate";
    }
    rule = push_rule(cf, rules);
    if (rule == NULL) {
        return RX_CONF_ERROR;
    }
    return compile_rule(cf, rule, value[1], value[2], plain, caseless) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

/* Domains match case-insensitively, regexes included (nginx compiles them
 * caseless; "~*" is accepted as the same). */
const char *
rx_http_proxy_set_cookie_domain(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    return set_cookie_rule(cf, cmd, conf, RW_DOMAIN, true);
}

const char *
rx_http_proxy_set_cookie_path(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    return set_cookie_rule(cf, cmd, conf, RW_PREFIX, false);
}

static rx_int_t
find_flag(const rx_str_t *s)
{
    size_t i;

    for (i = 0; i < rx_nelems(flag_ops); i++) {
        if (rx_str_caseeq(s, flag_ops[i].name)) {
            return (rx_int_t) i;
        }
    }
    return -1;
}

const char *
rx_http_proxy_set_cookie_flags(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    rx_array_t                  **rules = rx_conf_field(conf, cmd, rx_array_t *);
    rx_str_t                     *value = cf->args->elts, name;
    rx_http_proxy_cookie_flags_t *rule;
    rx_uint_t                     i;

    if (cf->args->nelts == 2) {
        if (!rx_str_eq(&value[1], "off")) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[1].data);
            return RX_CONF_ERROR;
        }
        if (*rules != RX_CONF_UNSET_PTR) {
            return "is duplicate";
        }
        *rules = NULL;
        return RX_CONF_OK;
    }
    if (*rules == NULL) {
        return "is duplicate";
    }
    if (*rules == RX_CONF_UNSET_PTR) {
        *rules = rx_array_create(cf->pool, 2, sizeof(*rule));
        if (*rules == NULL) {
            return RX_CONF_ERROR;
        }
    }
    rule = rx_array_push(*rules);
    if (rule == NULL) {
        return RX_CONF_ERROR;
    }
    memset(rule, 0, sizeof(*rule));
    name = value[1];
    if (name.len && name.data[0] == '~') {
        name.data++;
        name.len--;
        if (name.len && name.data[0] == '*') {
            name.data++;
            name.len--;
        }
        if (rx_http_regex_compile(cf, &name, true, &rule->re, &rule->names)
            != RX_OK) {
            return RX_CONF_ERROR;
        }
    } else if (rx_http_compile_complex_value(cf, &name, &rule->cookie) != RX_OK) {
        return RX_CONF_ERROR;
    }
    for (i = 2; i < cf->args->nelts; i++) {
        rx_http_complex_value_t *cv = &rule->flags[rule->nflags];

        if (rx_http_compile_complex_value(cf, &value[i], cv) != RX_OK) {
            return RX_CONF_ERROR;
        }
        rule->ops[rule->nflags] = -1;
        if (rx_http_complex_value_is_const(cv)) {
            rule->ops[rule->nflags] = find_flag(&value[i]);
            if (rule->ops[rule->nflags] < 0) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter "
                                  "\"%s\"", value[i].data);
                return RX_CONF_ERROR;
            }
        }
        rule->nflags++;
    }
    return RX_CONF_OK;
}

const char *
rx_http_proxy_rewrite_merge(rx_conf_t *cf, rx_http_proxy_rewrite_conf_t *conf,
    const rx_http_proxy_rewrite_conf_t *prev, const rx_http_proxy_target_t *target)
{
    rx_http_proxy_rewrite_t *rule;

    if (conf->redirects == RX_CONF_UNSET_PTR) {
        conf->redirects = prev->redirects;
    }
    /* nothing said at any level: proxy_redirect default, where a
     * proxy_pass without variables is (levels above stay unset) */
    if (conf->redirects == RX_CONF_UNSET_PTR && target->url.len
        && !target->variables) {
        rule = push_rule(cf, &conf->redirects);
        if (rule == NULL || default_rule(cf, rule, target) != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    rx_conf_merge_ptr(conf->cookie_domains, prev->cookie_domains, NULL);
    rx_conf_merge_ptr(conf->cookie_paths, prev->cookie_paths, NULL);
    rx_conf_merge_ptr(conf->cookie_flags, prev->cookie_flags, NULL);
    return RX_CONF_OK;
}

/* Request time. */

/* A regex rule's match: on success its groups are $1..$9 and its named
 * groups their variables until the next match. RX_OK, RX_DECLINED or
 * RX_ERROR (logged). */
static rx_int_t
match(rx_http_request_t *r, rx_regex_t *re, const rx_http_capture_vars_t *names,
    const rx_str_t *subject)
{
    const rx_str_t *pattern;
    rx_int_t        rc;

    rc = rx_regex_exec(re, subject->data, subject->len, r->captures,
                       RX_HTTP_MAX_CAPTURES);
    if (rc == RX_ERROR) {
        pattern = rx_regex_pattern(re);
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "pcre2_match() failed "
            "on \"%.*s\" using \"%.*s\"", (int) subject->len, subject->data,
            (int) pattern->len, pattern->data);
        return RX_ERROR;
    }
    if (rc == RX_DECLINED) {
        return RX_DECLINED;
    }
    r->ncaptures = rx_min(rc, RX_HTTP_MAX_CAPTURES);
    r->captures_data = subject->data;
    return rx_http_set_capture_vars(r, names, subject->data) == RX_OK
           ? RX_OK : RX_ERROR;
}

/* value[prefix, prefix + len) becomes rep, in a new string. */
static rx_int_t
replace_part(rx_pool_t *pool, rx_str_t *value, size_t prefix, size_t len,
    const rx_str_t *rep)
{
    size_t  tail = value->len - prefix - len;
    char   *p = rx_pnalloc(pool, prefix + rep->len + tail + 1);

    if (p == NULL) {
        return RX_ERROR;
    }
    memcpy(p, value->data, prefix);
    if (rep->len) {
        memcpy(p + prefix, rep->data, rep->len);
    }
    memcpy(p + prefix + rep->len, value->data + prefix + len, tail);
    p[prefix + rep->len + tail] = '\0';
    value->data = p;
    value->len = prefix + rep->len + tail;
    return RX_OK;
}

/* One rule on value[prefix..]: RX_OK (rewritten), RX_DECLINED, RX_ERROR. */
static rx_int_t
apply_rule(rx_http_request_t *r, const rx_http_proxy_rewrite_t *rule,
    rx_str_t *value, size_t prefix)
{
    rx_str_t  subject = { value->len - prefix, value->data + prefix };
    rx_str_t  pattern, rep;
    size_t    len = subject.len;
    rx_int_t  rc;

    if (rule->kind == RW_REGEX) {
        rc = match(r, rule->re, rule->names, &subject);
        if (rc != RX_OK) {
            return rc;
        }
    } else {
        if (rx_http_complex_value(r, &rule->pattern, &pattern) != RX_OK) {
            return RX_ERROR;
        }
        if (rule->kind == RW_PREFIX) {
            if (pattern.len > subject.len
                || memcmp(subject.data, pattern.data, pattern.len) != 0) {
                return RX_DECLINED;
            }
            len = pattern.len;
        } else {
            if (subject.len && subject.data[0] == '.') {
                prefix++;                  /* the dot stays */
                len--;
                subject.data++;
            }
            if (pattern.len != len
                || strncasecmp(subject.data, pattern.data, len) != 0) {
                return RX_DECLINED;
            }
        }
    }
    if (rx_http_complex_value(r, &rule->replacement, &rep) != RX_OK) {
        return RX_ERROR;
    }
    return replace_part(r->pool, value, prefix, len, &rep);
}

static rx_int_t
apply_rules(rx_http_request_t *r, const rx_array_t *rules, rx_str_t *value,
    size_t prefix)
{
    const rx_http_proxy_rewrite_t *rule = rules->elts;
    rx_uint_t                      i;
    rx_int_t                       rc;

    for (i = 0; i < rules->nelts; i++) {
        rc = apply_rule(r, &rule[i], value, prefix);
        if (rc != RX_DECLINED) {
            return rc;
        }
    }
    return RX_DECLINED;
}

rx_int_t
rx_http_proxy_rewrite_redirect(rx_http_request_t *r,
    const rx_http_proxy_rewrite_conf_t *rc, rx_table_elt_t *h)
{
    size_t prefix = 0, i;

    if (!has_rules(rc->redirects)) {
        return RX_DECLINED;
    }
    if (strcmp(h->lowcase_key, "refresh") == 0) {
        /* "5; url=http://..." : only the URL, found as nginx does */
        for (i = 0; i + 4 <= h->value.len; i++) {
            if (strncasecmp(h->value.data + i, "url=", 4) == 0) {
                break;
            }
        }
        if (i + 4 > h->value.len) {
            return RX_DECLINED;
        }
        prefix = i + 4;
    }
    return apply_rules(r, rc->redirects, &h->value, prefix);
}

/* Splits "name=value; Path=/; Secure" at ';', blanks around parts, keys
 * and values trimmed. */
static rx_int_t
parse_cookie(const rx_str_t *v, rx_array_t *attrs)
{
    const char    *p = v->data, *end = v->data + v->len, *semi, *eq;
    cookie_attr_t *a;

    for ( ;; ) {
        semi = memchr(p, ';', (size_t) (end - p));
        if (semi == NULL) {
            semi = end;
        }
        while (p < semi && (*p == ' ' || *p == '\t')) {
            p++;
        }
        a = rx_array_push(attrs);
        if (a == NULL) {
            return RX_ERROR;
        }
        memset(a, 0, sizeof(*a));
        eq = memchr(p, '=', (size_t) (semi - p));
        a->key.data = (char *) p;
        a->key.len = (size_t) ((eq ? eq : semi) - p);
        while (a->key.len && (p[a->key.len - 1] == ' ' || p[a->key.len - 1] == '\t')) {
            a->key.len--;
        }
        if (eq) {
            a->has_value = true;
            p = eq + 1;
            while (p < semi && (*p == ' ' || *p == '\t')) {
                p++;
            }
            a->value.data = (char *) p;
            a->value.len = (size_t) (semi - p);
            while (a->value.len && (p[a->value.len - 1] == ' '
                                    || p[a->value.len - 1] == '\t')) {
                a->value.len--;
            }
        }
        if (semi == end) {
            return RX_OK;
        }
        p = semi + 1;
    }
}

/* Applies flag_ops[op] to the cookie's attributes. */
static rx_int_t
apply_flag(rx_array_t *attrs, rx_int_t op)
{
    cookie_attr_t *a = attrs->elts;
    rx_uint_t      i;
    bool           found = false;

    for (i = 1; i < attrs->nelts; i++) {
        if (a[i].removed || !rx_str_caseeq(&a[i].key, flag_ops[op].attr)) {
            continue;
        }
        if (flag_ops[op].remove) {
            a[i].removed = true;
            continue;
        }
        if (!found && flag_ops[op].value) {
            a[i].value.data = (char *) flag_ops[op].value;
            a[i].value.len = strlen(flag_ops[op].value);
            a[i].has_value = true;
        }
        found = true;
    }
    if (found || flag_ops[op].remove) {
        return RX_OK;
    }
    a = rx_array_push(attrs);
    if (a == NULL) {
        return RX_ERROR;
    }
    memset(a, 0, sizeof(*a));
    a->key.data = (char *) flag_ops[op].attr;
    a->key.len = strlen(flag_ops[op].attr);
    if (flag_ops[op].value) {
        a->has_value = true;
        a->value.data = (char *) flag_ops[op].value;
        a->value.len = strlen(flag_ops[op].value);
    }
    return RX_OK;
}

/* The first rule naming the cookie sets its flags: RX_OK, RX_DECLINED (no
 * rule names it) or RX_ERROR. */
static rx_int_t
apply_flags(rx_http_request_t *r, const rx_array_t *rules, rx_array_t *attrs)
{
    const rx_http_proxy_cookie_flags_t *rule = rules->elts;
    rx_str_t                            name, s;
    rx_uint_t                           i, j;
    rx_int_t                            rc, op;

    name = ((cookie_attr_t *) attrs->elts)[0].key;
    for (i = 0; i < rules->nelts; i++, rule++) {
        if (rule->re) {
            rc = match(r, rule->re, rule->names, &name);
            if (rc == RX_ERROR) {
                return RX_ERROR;
            }
            if (rc == RX_OK) {
                break;
            }
            continue;
        }
        if (rx_http_complex_value(r, &rule->cookie, &s) != RX_OK) {
            return RX_ERROR;
        }
        if (s.len == name.len && strncasecmp(s.data, name.data, s.len) == 0) {
            break;
        }
    }
    if (i == rules->nelts) {
        return RX_DECLINED;
    }
    for (j = 0; j < rule->nflags; j++) {
        op = rule->ops[j];
        if (op < 0) {
            if (rx_http_complex_value(r, &rule->flags[j], &s) != RX_OK) {
                return RX_ERROR;
            }
            op = find_flag(&s);
            if (op < 0) {
                rx_http_request_log_error(r, RX_LOG_ERR, 0, "invalid "
                    "\"proxy_cookie_flags\" flag \"%.*s\"", (int) s.len, s.data);
                continue;
            }
        }
        if (apply_flag(attrs, op) != RX_OK) {
            return RX_ERROR;
        }
    }
    return RX_OK;
}

/* The attributes joined again with "; ", as nginx writes a rewritten
 * cookie. */
static rx_int_t
join_cookie(rx_pool_t *pool, const rx_array_t *attrs, rx_str_t *out)
{
    const cookie_attr_t *a = attrs->elts;
    rx_uint_t            i;
    size_t               len = 0;
    char                *p;

    for (i = 0; i < attrs->nelts; i++) {
        if (!a[i].removed && (a[i].key.len || a[i].has_value)) {
            len += a[i].key.len + (a[i].has_value ? 1 + a[i].value.len : 0) + 2;
        }
    }
    p = rx_pnalloc(pool, len + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    out->data = p;
    for (i = 0; i < attrs->nelts; i++) {
        if (a[i].removed || (a[i].key.len == 0 && !a[i].has_value)) {
            continue;
        }
        if (p != out->data) {
            *p++ = ';';
            *p++ = ' ';
        }
        memcpy(p, a[i].key.data, a[i].key.len);
        p += a[i].key.len;
        if (a[i].has_value) {
            *p++ = '=';
            memcpy(p, a[i].value.data, a[i].value.len);
            p += a[i].value.len;
        }
    }
    *p = '\0';
    out->len = (size_t) (p - out->data);
    return RX_OK;
}

/* Rewrites the domain or path attributes through rules (when there are). */
static rx_int_t
rewrite_attrs(rx_http_request_t *r, const rx_array_t *rules, const char *key,
    rx_array_t *attrs, bool *changed)
{
    cookie_attr_t *a = attrs->elts;
    rx_uint_t      i;
    rx_int_t       rc;

    if (!has_rules(rules)) {
        return RX_OK;
    }
    for (i = 1; i < attrs->nelts; i++) {
        if (!a[i].has_value || !rx_str_caseeq(&a[i].key, key)) {
            continue;
        }
        rc = apply_rules(r, rules, &a[i].value, 0);
        if (rc == RX_ERROR) {
            return RX_ERROR;
        }
        if (rc == RX_OK) {
            *changed = true;
        }
    }
    return RX_OK;
}

rx_int_t
rx_http_proxy_rewrite_cookie(rx_http_request_t *r,
    const rx_http_proxy_rewrite_conf_t *rc, rx_table_elt_t *h)
{
    rx_array_t  attrs;
    bool        changed = false;
    rx_int_t    rv;

    if (rx_array_init(&attrs, r->pool, 8, sizeof(cookie_attr_t)) != RX_OK
        || parse_cookie(&h->value, &attrs) != RX_OK) {
        return RX_ERROR;
    }
    if (!((cookie_attr_t *) attrs.elts)[0].has_value) {
        return RX_DECLINED;                /* not "name=value": left alone */
    }
    if (rewrite_attrs(r, rc->cookie_domains, "domain", &attrs, &changed) != RX_OK
        || rewrite_attrs(r, rc->cookie_paths, "path", &attrs, &changed) != RX_OK) {
        return RX_ERROR;
    }
    if (has_rules(rc->cookie_flags)) {
        rv = apply_flags(r, rc->cookie_flags, &attrs);
        if (rv == RX_ERROR) {
            return RX_ERROR;
        }
        changed = changed || rv == RX_OK;
    }
    if (!changed) {
        return RX_DECLINED;
    }
    return join_cookie(r->pool, &attrs, &h->value);
}
