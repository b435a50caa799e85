/*
 * browser.c: nginx's browser module: $modern_browser, $ancient_browser
 * and $msie from the User-Agent. `modern_browser msie|gecko|opera|safari|
 * konqueror VERSION` lists the oldest modern version of a browser (the
 * first listed browser found in the User-Agent decides, Opera first since
 * its User-Agent may say MSIE); `modern_browser unlisted` makes browsers
 * not listed modern; `ancient_browser STRING ... | netscape4` lists
 * substrings that make a browser ancient. The values of the variables are
 * `modern_browser_value` and `ancient_browser_value` ("1" by default).
 */
#include "http.h"
#include "http_variables.h"

/* Where each known browser writes its version: search from skip bytes
 * into the User-Agent for name, the version starts add bytes after it. */
typedef struct {
    const char  *browser;     /* as modern_browser names it */
    size_t       skip;
    size_t       add;
    const char  *name;
} browser_mask_t;

static const browser_mask_t masks[] = {
    { "opera", 0, sizeof("Opera ") - 1, "Opera" },     /* must be first */
    { "msie", sizeof("Mozilla/4.0 (compatible; ") - 1, sizeof("MSIE ") - 1,
      "MSIE " },
    { "gecko", sizeof("Mozilla/5.0 (") - 1, sizeof("rv:") - 1, "rv:" },
    { "safari", sizeof("Mozilla/5.0 (") - 1, sizeof("Safari/") - 1,
      "Safari/" },
    { "konqueror", sizeof("Mozilla/5.0 (compatible; ") - 1,
      sizeof("Konqueror/") - 1, "Konqueror/" },
};

typedef struct {
    rx_uint_t  mask;          /* index in masks */
    rx_uint_t  version;       /* a.b.c as a*10^6 + b*10^4 + c*10^2 ... */
} modern_browser_t;

typedef struct {
    rx_array_t  *modern;              /* modern_browser_t, by mask index */
    rx_int_t     modern_unlisted;
    rx_array_t  *ancient;             /* rx_str_t */
    rx_int_t     netscape4;
    rx_str_t    *modern_value;
    rx_str_t    *ancient_value;
} browser_conf_t;

#define BROWSER_MODERN   1
#define BROWSER_ANCIENT  2

static const char *set_modern(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_ancient(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_value(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_int_t add_variables(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

#define BROWSER_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t browser_commands[] = {
    { "modern_browser", BROWSER_CONF | RX_CONF_TAKE12, set_modern,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "ancient_browser", BROWSER_CONF | RX_CONF_1MORE, set_ancient,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "modern_browser_value", BROWSER_CONF | RX_CONF_TAKE1, set_value,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(browser_conf_t, modern_value), NULL },
    { "ancient_browser_value", BROWSER_CONF | RX_CONF_TAKE1, set_value,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(browser_conf_t, ancient_value), NULL },
    rx_null_command
};

static const rx_http_module_t browser_ctx = {
    add_variables, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_browser_module = {
    "rx_http_browser_module", 0, 0, RX_HTTP_MODULE, &browser_ctx,
    browser_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    return rx_pcalloc(cf->pool, sizeof(browser_conf_t));
}

static int
by_mask(const void *a, const void *b)
{
    const modern_browser_t *x = a, *y = b;

    return (x->mask > y->mask) - (x->mask < y->mask);
}

/* A level's own list: Opera added (never modern) when not listed, since
 * its User-Agent may also say MSIE; then in mask order, Opera first. */
static rx_int_t
prepare_modern(browser_conf_t *c)
{
    modern_browser_t *b = c->modern->elts;
    rx_uint_t         i;

    for (i = 0; i < c->modern->nelts; i++) {
        if (b[i].mask == 0) {
            break;
        }
    }
    if (i == c->modern->nelts) {
        b = rx_array_push(c->modern);
        if (b == NULL) {
            return RX_ERROR;
        }
        b->mask = 0;
        b->version = 4001000000U;      /* above any version: ancient */
        b = c->modern->elts;
    }
    qsort(b, c->modern->nelts, sizeof(modern_browser_t), by_mask);
    return RX_OK;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    static rx_str_t  one = rx_string("1");
    browser_conf_t  *p = prev, *c = conf;

    (void) cf;
    if (c->modern == NULL && !c->modern_unlisted) {
        c->modern = p->modern;
        c->modern_unlisted = p->modern_unlisted;
    } else if (c->modern && prepare_modern(c) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (c->ancient == NULL && !c->netscape4) {
        c->ancient = p->ancient;
        c->netscape4 = p->netscape4;
    }
    if (c->modern_value == NULL) {
        c->modern_value = p->modern_value ? p->modern_value : &one;
    }
    if (c->ancient_value == NULL) {
        c->ancient_value = p->ancient_value ? p->ancient_value : &one;
    }
    return RX_CONF_OK;
}

/* "a.b.c" as a*10^6 + b*10^4 + c*10^2 (nginx's scale); -1 when not one */
static int64_t
parse_version(const rx_str_t *v)
{
    int64_t   version = 0, ver = 0, scale = 1000000;
    size_t    i;

    for (i = 0; i < v->len; i++) {
        if (v->data[i] >= '0' && v->data[i] <= '9') {
            ver = ver * 10 + (v->data[i] - '0');
            if (ver > 1000000000) {
                return -1;
            }
        } else if (v->data[i] == '.') {
            version += ver * scale;
            ver = 0;
            scale /= 100;
        } else {
            return -1;
        }
    }
    return version + ver * scale;
}

static const char *
set_modern(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    browser_conf_t   *c = conf;
    rx_str_t         *value = cf->args->elts;
    modern_browser_t *b;
    int64_t           version;
    rx_uint_t         n;

    (void) cmd;
    if (cf->args->nelts == 2) {
        if (rx_str_eq(&value[1], "unlisted")) {
            c->modern_unlisted = 1;
            return RX_CONF_OK;
        }
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    for (n = 0; n < rx_nelems(masks); n++) {
        if (strcasecmp(masks[n].browser, value[1].data) == 0) {
            break;
        }
    }
    if (n == rx_nelems(masks)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unknown browser name \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    version = parse_version(&value[2]);
    if (version < 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid browser version "
                          "\"%s\"", value[2].data);
        return RX_CONF_ERROR;
    }
    if (c->modern == NULL) {
        c->modern = rx_array_create(cf->pool, 5, sizeof(modern_browser_t));
    }
    b = c->modern ? rx_array_push(c->modern) : NULL;
    if (b == NULL) {
        return RX_CONF_ERROR;
    }
    b->mask = n;
    b->version = (rx_uint_t) version;
    return RX_CONF_OK;
}

static const char *
set_ancient(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    browser_conf_t *c = conf;
    rx_str_t       *value = cf->args->elts, *s;
    rx_uint_t       i;

    (void) cmd;
    for (i = 1; i < cf->args->nelts; i++) {
        if (rx_str_eq(&value[i], "netscape4")) {
            c->netscape4 = 1;
            continue;
        }
        if (c->ancient == NULL) {
            c->ancient = rx_array_create(cf->pool, 4, sizeof(rx_str_t));
        }
        s = c->ancient ? rx_array_push(c->ancient) : NULL;
        if (s == NULL) {
            return RX_CONF_ERROR;
        }
        *s = value[i];
    }
    return RX_CONF_OK;
}

static const char *
set_value(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t **field = (rx_str_t **) ((char *) conf + cmd->offset);
    rx_str_t  *value = cf->args->elts;

    if (*field) {
        return "is duplicate";
    }
    *field = rx_palloc(cf->pool, sizeof(rx_str_t));
    if (*field == NULL) {
        return RX_CONF_ERROR;
    }
    **field = value[1];
    return RX_CONF_OK;
}

/* The version at ua[0..n): modern when at least min. A component after a
 * dot that is already above min decides at once, as in nginx. */
static int
compare_version(const char *ua, size_t n, rx_uint_t min)
{
    rx_uint_t  version = 0, ver = 0, scale = 1000000;
    size_t     i;

    for (i = 0; i < n; i++) {
        if (ua[i] >= '0' && ua[i] <= '9') {
            ver = ver * 10 + (rx_uint_t) (ua[i] - '0');
            if (ver > 1000000000) {
                break;                      /* no sane version is longer */
            }
            continue;
        }
        if (ua[i] != '.') {
            break;
        }
        version += ver * scale;
        if (version > min) {
            return BROWSER_MODERN;
        }
        ver = 0;
        scale /= 100;
    }
    version += ver * scale;
    return version >= min ? BROWSER_MODERN : BROWSER_ANCIENT;
}

static int
classify(rx_http_request_t *r, const browser_conf_t *c)
{
    const modern_browser_t *b;
    const browser_mask_t   *m;
    const rx_str_t         *a;
    const char             *ua, *last, *name;
    size_t                  len;
    rx_uint_t               i;

    if (r->headers_in.user_agent == NULL) {
        return c->modern_unlisted ? BROWSER_MODERN : BROWSER_ANCIENT;
    }
    ua = r->headers_in.user_agent->value.data;
    len = r->headers_in.user_agent->value.len;
    last = ua + len;

    if (c->modern) {
        b = c->modern->elts;
        for (i = 0; i < c->modern->nelts; i++) {
            m = &masks[b[i].mask];
            if (m->skip >= len) {
                continue;
            }
            name = memmem(ua + m->skip, len - m->skip, m->name,
                          strlen(m->name));
            if (name == NULL || name + m->add >= last) {
                continue;
            }
            name += m->add;
            return compare_version(name, (size_t) (last - name), b[i].version);
        }
        if (!c->modern_unlisted) {
            return BROWSER_ANCIENT;
        }
    }
    if (c->netscape4 && len > sizeof("Mozilla/4.72 ") - 1
        && strncmp(ua, "Mozilla/", 8) == 0 && ua[8] > '0' && ua[8] < '5') {
        return BROWSER_ANCIENT;
    }
    a = c->ancient ? c->ancient->elts : NULL;
    for (i = 0; a && i < c->ancient->nelts; i++) {
        if (memmem(ua, len, a[i].data, a[i].len)) {
            return BROWSER_ANCIENT;
        }
    }
    return c->modern_unlisted ? BROWSER_MODERN : BROWSER_ANCIENT;
}

static rx_int_t
browser_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const browser_conf_t *c = rx_http_get_module_loc_conf(r,
                                  rx_http_browser_module);
    const rx_str_t       *value;

    v->len = 0;
    v->data = "";
    if (classify(r, c) != (int) data) {
        return RX_OK;
    }
    value = data == BROWSER_MODERN ? c->modern_value : c->ancient_value;
    v->len = value->len;
    v->data = value->data;
    return RX_OK;
}

static rx_int_t
msie_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    (void) data;
    v->data = r->headers_in.msie ? "1" : "";
    v->len = r->headers_in.msie ? 1 : 0;
    return RX_OK;
}

static rx_int_t
add_variables(rx_conf_t *cf)
{
    static const struct {
        const char               *name;
        rx_http_get_variable_pt   get;
        uintptr_t                 data;
    } vars[] = {
        { "msie", msie_variable, 0 },
        { "modern_browser", browser_variable, BROWSER_MODERN },
        { "ancient_browser", browser_variable, BROWSER_ANCIENT },
    };
    rx_uint_t i;

    for (i = 0; i < rx_nelems(vars); i++) {
        rx_str_t            name = { strlen(vars[i].name), (char *) vars[i].name };
        rx_http_variable_t *v = rx_http_add_variable(cf, &name,
                                                     RX_HTTP_VAR_CHANGEABLE);

        if (v == NULL) {
            return RX_ERROR;
        }
        v->get = vars[i].get;
        v->data = vars[i].data;
    }
    return RX_OK;
}
