/*
 * headers.c: add_header and expires, as a header filter that runs before
 * the header is serialised, and add_trailer: the header filter marks the
 * response (expect_trailers, so http_chunked_filter.c chunks it) and a
 * body filter evaluates the values when the last buffer passes (so
 * $request_time and the like are final). A level that has add_header
 * (add_trailer) replaces its parent's list, as in nginx.
 */
#include "http.h"
#include "http_script.h"
#include "clock.h"

typedef struct {
    rx_str_t                 name;
    rx_http_complex_value_t  value;
    bool                     always;
} rx_http_add_header_t;

#define EXPIRES_UNSET     0
#define EXPIRES_OFF       1
#define EXPIRES_ACCESS    2     /* now + time */
#define EXPIRES_MODIFIED  3     /* Last-Modified + time */
#define EXPIRES_DAILY     4     /* "@15h30m" */
#define EXPIRES_EPOCH     5
#define EXPIRES_MAX       6

typedef struct {
    rx_array_t  *headers;       /* rx_http_add_header_t; NULL: none */
    bool         headers_set;
    rx_array_t  *trailers;      /* rx_http_add_header_t; NULL: none */
    bool         trailers_set;
    rx_uint_t    expires;
    int64_t      expires_time;  /* seconds (may be negative) */
    /* expires [modified] $var: the value is read for each request */
    rx_http_complex_value_t *expires_value;
} rx_http_headers_conf_t;

static const char *set_add_header(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static const char *set_expires(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

#define ANY_LOC (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF \
                 | RX_HTTP_LIF_CONF)

static const rx_command_t headers_commands[] = {
    { "add_header", ANY_LOC | RX_CONF_TAKE23, set_add_header,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "add_trailer", ANY_LOC | RX_CONF_TAKE23, set_add_header,
      RX_HTTP_LOC_CONF_OFFSET, 1, NULL },
    { "expires", ANY_LOC | RX_CONF_TAKE12, set_expires,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static void init_filters(rx_http_filters_t *top);

static const rx_http_module_t headers_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf, init_filters
};

rx_module_t rx_http_headers_module = {
    "rx_http_headers_module", 0, 0, RX_HTTP_MODULE, &headers_ctx,
    headers_commands, NULL, NULL, NULL, NULL
};

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_headers_conf_t *hcf = rx_pcalloc(cf->pool, sizeof(*hcf));

    if (hcf) {
        hcf->expires = EXPIRES_UNSET;
    }
    return hcf;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_headers_conf_t *p = prev, *c = conf;

    if (!c->headers_set) {
        c->headers = p->headers;
        c->headers_set = p->headers_set;
    }
    if (!c->trailers_set) {
        c->trailers = p->trailers;
        c->trailers_set = p->trailers_set;
    }
    if (c->expires == EXPIRES_UNSET) {
        c->expires = p->expires == EXPIRES_UNSET ? EXPIRES_OFF : p->expires;
        c->expires_time = p->expires_time;
        c->expires_value = p->expires_value;
    }
    return RX_CONF_OK;
}

/* add_header (cmd->offset 0) and add_trailer (1): the same syntax. */
static const char *
set_add_header(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_headers_conf_t *hcf = conf;
    rx_str_t               *value = cf->args->elts;
    rx_http_add_header_t   *h;
    rx_array_t            **list = cmd->offset ? &hcf->trailers : &hcf->headers;

    if (*list == NULL) {
        *list = rx_array_create(cf->pool, 4, sizeof(rx_http_add_header_t));
        if (*list == NULL) {
            return RX_CONF_ERROR;
        }
    }
    if (cmd->offset) {
        hcf->trailers_set = true;
    } else {
        hcf->headers_set = true;
    }
    h = rx_array_push(*list);
    if (h == NULL) {
        return RX_CONF_ERROR;
    }
    h->name = value[1];
    h->always = false;
    if (rx_http_compile_complex_value(cf, &value[2], &h->value) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (cf->args->nelts == 4) {
        if (!rx_str_eq(&value[3], "always")) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[3].data);
            return RX_CONF_ERROR;
        }
        h->always = true;
    }
    return RX_CONF_OK;
}

/*
 * An expires time: "epoch", "max", "off", "@15h30m" (daily), or
 * "[+|-]time"; *kind comes in as EXPIRES_ACCESS or EXPIRES_MODIFIED and
 * goes out as what t says. NULL, or what is wrong (nginx's words).
 */
static const char *
parse_expires(rx_str_t t, rx_uint_t *kind, int64_t *time)
{
    bool     minus = false;
    rx_int_t secs;

    *time = 0;
    if (rx_str_eq(&t, "epoch")) {
        *kind = EXPIRES_EPOCH;
        return NULL;
    }
    if (rx_str_eq(&t, "max")) {
        *kind = EXPIRES_MAX;
        return NULL;
    }
    if (rx_str_eq(&t, "off")) {
        *kind = EXPIRES_OFF;
        return NULL;
    }
    if (t.len && t.data[0] == '@') {
        if (*kind == EXPIRES_MODIFIED) {
            return "daily time cannot be used with \"modified\" parameter";
        }
        *kind = EXPIRES_DAILY;
        t.data++;
        t.len--;
    } else if (t.len && (t.data[0] == '+' || t.data[0] == '-')) {
        minus = t.data[0] == '-';
        t.data++;
        t.len--;
    }
    secs = t.len ? rx_parse_time(&t, true) : -1;
    if (secs == -1 || (*kind == EXPIRES_DAILY && secs > 24 * 60 * 60)) {
        return "invalid value";
    }
    *time = minus ? -secs : secs;
    return NULL;
}

/* expires [modified] time | epoch | max | off; the time may be a
 * variable, parsed for each request by the same rules */
static const char *
set_expires(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_headers_conf_t *hcf = conf;
    rx_str_t               *value = cf->args->elts;
    rx_uint_t               i = 1;
    const char             *err;

    rx_unused(cmd);
    if (hcf->expires != EXPIRES_UNSET) {
        return "is duplicate";
    }
    hcf->expires = EXPIRES_ACCESS;
    if (cf->args->nelts == 3) {
        if (!rx_str_eq(&value[1], "modified")) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\"",
                              value[1].data);
            return RX_CONF_ERROR;
        }
        hcf->expires = EXPIRES_MODIFIED;
        i = 2;
    }
    if (memchr(value[i].data, '$', value[i].len)) {
        hcf->expires_value = rx_pcalloc(cf->pool, sizeof(*hcf->expires_value));
        if (hcf->expires_value == NULL
            || rx_http_compile_complex_value(cf, &value[i], hcf->expires_value)
               != RX_OK) {
            return RX_CONF_ERROR;
        }
        if (!rx_http_complex_value_is_const(hcf->expires_value)) {
            return RX_CONF_OK;
        }
        hcf->expires_value = NULL;            /* "$" with no variable */
    }
    err = parse_expires(value[i], &hcf->expires, &hcf->expires_time);
    if (err == NULL) {
        return RX_CONF_OK;
    }
    if (err[0] == 'd') {
        return err;
    }
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\" in "
        "\"expires\" directive", value[i].data);
    return RX_CONF_ERROR;
}

/* The statuses add_header (without always) and expires apply to. */
static bool
status_gets_headers(rx_uint_t status)
{
    switch (status) {
    case 200: case 201: case 204: case 206: case 301: case 302: case 303:
    case 304: case 307: case 308:
        return true;
    }
    return false;
}

static rx_int_t
add_expires(rx_http_request_t *r, rx_uint_t kind, int64_t expires_time)
{
    static rx_str_t max_age_max = rx_string("max-age=315360000");
    static rx_str_t no_cache = rx_string("no-cache");
    rx_str_t        exp, cc;
    time_t          when;
    int64_t         max_age;
    char           *buf;

    switch (kind) {
    case EXPIRES_EPOCH:
        rx_str_set(&exp, "Thu, 01 Jan 1970 00:00:01 GMT");
        cc = no_cache;
        goto add;
    case EXPIRES_MAX:
        rx_str_set(&exp, "Thu, 31 Dec 2037 23:55:55 GMT");
        cc = max_age_max;
        goto add;
    case EXPIRES_MODIFIED:
        if (r->headers_out.last_modified_time == -1) {
            return RX_OK;
        }
        when = r->headers_out.last_modified_time + (time_t) expires_time;
        break;
    case EXPIRES_DAILY: {
        struct tm tm;
        time_t    midnight;

        localtime_r(&rx_time_sec, &tm);
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        midnight = mktime(&tm);
        when = midnight + (time_t) expires_time;
        if (when <= rx_time_sec) {
            when += 24 * 60 * 60;
        }
        break;
    }
    default:
        when = rx_time_sec + (time_t) expires_time;
        break;
    }
    buf = rx_pnalloc(r->pool, 64 + 32);
    if (buf == NULL) {
        return RX_ERROR;
    }
    exp.data = buf;
    exp.len = rx_http_date(buf, when);
    max_age = (int64_t) (when - rx_time_sec);
    if (max_age < 0 || expires_time < 0) {
        cc = no_cache;
    } else {
        cc.data = buf + 64;
        cc.len = (size_t) snprintf(cc.data, 32, "max-age=%" PRId64, max_age);
    }

add:
    r->headers_out.expires = rx_http_add_header_out(r, "Expires", &exp);
    if (r->headers_out.expires == NULL
        || rx_http_add_header_out(r, "Cache-Control", &cc) == NULL) {
        return RX_ERROR;
    }
    return RX_OK;
}

/* Expires and Cache-Control, from the configuration or from the value
 * of its variable: a value that is not an expires time adds nothing, as
 * in nginx, and is logged. */
static rx_int_t
expires(rx_http_request_t *r, rx_http_headers_conf_t *hcf)
{
    rx_uint_t kind = hcf->expires;
    int64_t   time = hcf->expires_time;
    rx_str_t  v;

    if (hcf->expires_value) {
        if (rx_http_complex_value(r, hcf->expires_value, &v) != RX_OK) {
            return RX_ERROR;
        }
        if (v.len == 0) {
            return RX_OK;           /* empty (a map's default): none */
        }
        if (parse_expires(v, &kind, &time) != NULL) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "invalid \"expires\" "
                "value \"%.*s\"", (int) rx_min(v.len, 256), v.data);
            return RX_OK;
        }
        if (kind == EXPIRES_OFF) {
            return RX_OK;
        }
    }
    return add_expires(r, kind, time);
}

static rx_int_t
headers_filter(rx_http_request_t *r)
{
    rx_http_headers_conf_t *hcf = rx_http_get_module_loc_conf(r,
                                      rx_http_headers_module);
    rx_http_add_header_t   *h;
    rx_uint_t               status = r->headers_out.status, i;
    bool                    applies = status_gets_headers(status);
    rx_str_t                value;

    if (applies && hcf->expires != EXPIRES_OFF
        && expires(r, hcf) != RX_OK) {
        return RX_ERROR;
    }
    if (hcf->headers) {
        h = hcf->headers->elts;
        for (i = 0; i < hcf->headers->nelts; i++) {
            if (!applies && !h[i].always) {
                continue;
            }
            if (rx_http_complex_value(r, &h[i].value, &value) != RX_OK) {
                return RX_ERROR;
            }
            if (value.len == 0) {
                continue;            /* an empty value adds nothing (nginx) */
            }
            if (rx_http_add_header_out(r, h[i].name.data, &value) == NULL) {
                return RX_ERROR;
            }
        }
    }
    if (hcf->trailers && r == r->main) {
        h = hcf->trailers->elts;
        for (i = 0; i < hcf->trailers->nelts; i++) {
            if (applies || h[i].always) {
                r->expect_trailers = 1;
                break;
            }
        }
    }
    return next_header(r);
}

/* Evaluates add_trailer's values once, when the last buffer passes (the
 * chunked filter after this one writes them). */
static rx_int_t
trailers_filter(rx_http_request_t *r, rx_chain_t *in)
{
    rx_http_headers_conf_t *hcf;
    rx_http_add_header_t   *h;
    rx_table_elt_t         *t;
    rx_chain_t             *cl;
    rx_uint_t               i;
    rx_str_t                value;
    bool                    applies;

    if (!r->expect_trailers || r != r->main
        || r->headers_out.trailers != NULL) {
        return next_body(r, in);
    }
    for (cl = in; cl && !cl->buf->last_buf; cl = cl->next) {
        /* look for the last buffer */
    }
    if (cl == NULL) {
        return next_body(r, in);
    }
    hcf = rx_http_get_module_loc_conf(r, rx_http_headers_module);
    r->headers_out.trailers = rx_array_create(r->pool, 2,
                                              sizeof(rx_table_elt_t));
    if (r->headers_out.trailers == NULL || hcf->trailers == NULL) {
        return r->headers_out.trailers ? next_body(r, in) : RX_ERROR;
    }
    applies = status_gets_headers(r->headers_out.status);
    h = hcf->trailers->elts;
    for (i = 0; i < hcf->trailers->nelts; i++) {
        if (!applies && !h[i].always) {
            continue;
        }
        if (rx_http_complex_value(r, &h[i].value, &value) != RX_OK) {
            return RX_ERROR;
        }
        if (value.len == 0) {
            continue;                /* as add_header: nothing to add */
        }
        t = rx_array_push(r->headers_out.trailers);
        if (t == NULL) {
            return RX_ERROR;
        }
        t->key = h[i].name;
        t->value = value;
        t->lowcase_key = NULL;
        t->deleted = false;
    }
    return next_body(r, in);
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    top->header = headers_filter;
    next_body = top->body;
    top->body = trailers_filter;
}
