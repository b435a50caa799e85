/*
 * userid.c: nginx's userid filter: identifies clients by a cookie of 16
 * bytes (four 32-bit words: service or server address, time, a per-worker
 * start value, a sequence) in base64. `userid on|v1` sets the cookie on
 * responses to clients without a valid one, `log` only reads it;
 * userid_name/_domain/_path/_expires/_flags/_p3p/_mark/_service shape the
 * Set-Cookie; $uid_got, $uid_set, and $uid_reset (set it to renew a
 * client's cookie, "log" also logs that).
 */
#include <ctype.h>
#include <sys/time.h>
#include "http.h"
#include "http_variables.h"
#include "base64.h"
#include "clock.h"

#define USERID_OFF  0
#define USERID_LOG  1
#define USERID_V1   2
#define USERID_ON   3

/* userid_flags bits (0 is "not set" for the bitmask setter) */
#define USERID_FLAG_OFF       0x0002
#define USERID_FLAG_SECURE    0x0004
#define USERID_FLAG_HTTPONLY  0x0008
#define USERID_FLAG_STRICT    0x0010
#define USERID_FLAG_LAX       0x0020
#define USERID_FLAG_NONE      0x0040

/* userid_expires max: 31 Dec 2037 23:55:55 GMT, written as nginx does */
#define USERID_MAX_EXPIRES  2145916555
#define USERID_MAX_TEXT     "; expires=Thu, 31-Dec-37 23:55:55 GMT"

#define USERID_MARK_UNSET   -1

typedef struct {
    rx_uint_t  enable;        /* userid: USERID_* */
    rx_uint_t  flags;         /* userid_flags: USERID_FLAG_* */
    rx_int_t   service;       /* userid_service; UNSET: the address */
    rx_str_t   name;          /* userid_name */
    rx_str_t   domain;        /* "; domain=NAME" or empty */
    rx_str_t   path;          /* "; path=PATH" */
    rx_str_t   p3p;           /* the P3P header's value, or empty */
    rx_int_t   expires;       /* seconds, USERID_MAX_EXPIRES, 0: none */
    int        mark;          /* userid_mark: a character, 0: off */
} userid_conf_t;

/* A request's identifiers, made once (the filter and the variables share
 * them). A word 3 of 0 means "none": nginx's own rule. */
typedef struct {
    uint32_t   got[4];
    uint32_t   set[4];
    rx_str_t   cookie;        /* the client's cookie value */
    bool       reset;         /* $uid_reset asked for a new one */
    bool       made;          /* set[] decided */
} userid_ctx_t;

/* An attribute directive: its text is kept with this prefix; "none"
 * clears it when allowed. */
typedef struct {
    const char *prefix;
    bool        none;
} attr_post_t;

static const attr_post_t domain_post = { "; domain=", true };
static const attr_post_t path_post = { "; path=", false };
static const attr_post_t p3p_post = { "", true };

static const rx_conf_enum_t userid_states[] = {
    { "off", USERID_OFF },
    { "log", USERID_LOG },
    { "v1", USERID_V1 },
    { "on", USERID_ON },
    { NULL, 0 }
};

static const rx_conf_enum_t userid_flag_names[] = {
    { "off", USERID_FLAG_OFF },
    { "secure", USERID_FLAG_SECURE },
    { "httponly", USERID_FLAG_HTTPONLY },
    { "samesite=strict", USERID_FLAG_STRICT },
    { "samesite=lax", USERID_FLAG_LAX },
    { "samesite=none", USERID_FLAG_NONE },
    { NULL, 0 }
};

static const char *set_attr(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_expires(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_mark(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_int_t add_variables(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static void init_filters(rx_http_filters_t *top);
static rx_int_t init_process(rx_cycle_t *cycle);

#define USERID_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t userid_commands[] = {
    { "userid", USERID_CONF | RX_CONF_TAKE1, rx_conf_set_enum_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(userid_conf_t, enable),
      userid_states },
    { "userid_service", USERID_CONF | RX_CONF_TAKE1, rx_conf_set_num_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(userid_conf_t, service), NULL },
    { "userid_name", USERID_CONF | RX_CONF_TAKE1, rx_conf_set_str_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(userid_conf_t, name), NULL },
    { "userid_domain", USERID_CONF | RX_CONF_TAKE1, set_attr,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(userid_conf_t, domain), &domain_post },
    { "userid_path", USERID_CONF | RX_CONF_TAKE1, set_attr,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(userid_conf_t, path), &path_post },
    { "userid_expires", USERID_CONF | RX_CONF_TAKE1, set_expires,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "userid_flags", USERID_CONF | RX_CONF_TAKE123, rx_conf_set_bitmask_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(userid_conf_t, flags),
      userid_flag_names },
    { "userid_p3p", USERID_CONF | RX_CONF_TAKE1, set_attr,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(userid_conf_t, p3p), &p3p_post },
    { "userid_mark", USERID_CONF | RX_CONF_TAKE1, set_mark,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t userid_module_ctx = {
    add_variables, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf,
    init_filters
};

rx_module_t rx_http_userid_module = {
    "rx_http_userid_module", 0, 0, RX_HTTP_MODULE, &userid_module_ctx,
    userid_commands, NULL, init_process, NULL, NULL
};

static rx_http_output_header_filter_pt next_header;

/* Per worker, as nginx: the start value (microseconds and pid) and the
 * sequences of both formats. */
static uint32_t start_value;
static uint32_t sequencer_v1 = 1;
static uint32_t sequencer_v2 = 0x03030302;

static rx_int_t reset_index = RX_ERROR;     /* $uid_reset */

/* ---- configuration ------------------------------------------------------ */

static void *
create_conf(rx_conf_t *cf)
{
    userid_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c == NULL) {
        return NULL;
    }
    c->enable = RX_CONF_UNSET_UINT;
    c->service = RX_CONF_UNSET;
    c->expires = RX_CONF_UNSET;
    c->mark = USERID_MARK_UNSET;
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *parent, void *child)
{
    userid_conf_t *p = parent, *c = child;

    rx_unused(cf);
    rx_conf_merge_uint(c->enable, p->enable, USERID_OFF);
    if (c->flags == 0) {
        c->flags = p->flags ? p->flags : USERID_FLAG_OFF;
    }
    rx_conf_merge_str(c->name, p->name, "uid");
    rx_conf_merge_str(c->domain, p->domain, "");
    rx_conf_merge_str(c->path, p->path, "; path=/");
    rx_conf_merge_str(c->p3p, p->p3p, "");
    rx_conf_merge_value(c->service, p->service, RX_CONF_UNSET);
    rx_conf_merge_value(c->expires, p->expires, 0);
    if (c->mark == USERID_MARK_UNSET) {
        c->mark = p->mark == USERID_MARK_UNSET ? 0 : p->mark;
    }
    return RX_CONF_OK;
}

/* userid_domain, userid_path, userid_p3p: kept ready to append */
static const char *
set_attr(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    const attr_post_t *post = cmd->post;
    rx_str_t          *field = rx_conf_field(conf, cmd, rx_str_t);
    rx_str_t          *value = cf->args->elts;
    size_t             plen = strlen(post->prefix);

    if (field->data) {
        return "is duplicate";
    }
    if (post->none && rx_str_eq(&value[1], "none")) {
        field->data = "";
        field->len = 0;
        return RX_CONF_OK;
    }
    field->data = rx_pnalloc(cf->pool, plen + value[1].len + 1);
    if (field->data == NULL) {
        return RX_CONF_ERROR;
    }
    memcpy(field->data, post->prefix, plen);
    memcpy(field->data + plen, value[1].data, value[1].len + 1);
    field->len = plen + value[1].len;
    return RX_CONF_OK;
}

/* userid_expires time | max | off */
static const char *
set_expires(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    userid_conf_t *ucf = conf;
    rx_str_t      *value = cf->args->elts;

    rx_unused(cmd);
    if (ucf->expires != RX_CONF_UNSET) {
        return "is duplicate";
    }
    if (rx_str_eq(&value[1], "max")) {
        ucf->expires = USERID_MAX_EXPIRES;
    } else if (rx_str_eq(&value[1], "off")) {
        ucf->expires = 0;
    } else if ((ucf->expires = rx_parse_time(&value[1], true)) == -1) {
        ucf->expires = RX_CONF_UNSET;
        return "invalid value";
    }
    return RX_CONF_OK;
}

/* userid_mark letter | digit | = | off */
static const char *
set_mark(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    userid_conf_t *ucf = conf;
    rx_str_t      *value = cf->args->elts;
    int            ch = (unsigned char) value[1].data[0];

    rx_unused(cmd);
    if (ucf->mark != USERID_MARK_UNSET) {
        return "is duplicate";
    }
    if (rx_str_eq(&value[1], "off")) {
        ucf->mark = 0;
        return RX_CONF_OK;
    }
    if (value[1].len != 1 || !(isalnum(ch) || ch == '=')) {
        return "value must be \"off\" or a single letter, digit or \"=\"";
    }
    ucf->mark = ch;
    return RX_CONF_OK;
}

/* ---- the identifiers ---------------------------------------------------- */

/* The first "NAME=value" of the Cookie headers (the name compared without
 * case, as nginx); the header's whole value for log lines. */
static bool
find_cookie(rx_http_request_t *r, const rx_str_t *name, rx_str_t *value,
    rx_str_t *line)
{
    rx_table_elt_t *h = r->headers_in.headers.elts;
    const char     *p, *end, *eq, *semi;
    rx_uint_t       i;

    for (i = 0; i < r->headers_in.headers.nelts; i++) {
        if (h[i].deleted || !rx_str_caseeq(&h[i].key, "cookie")) {
            continue;
        }
        p = h[i].value.data;
        end = p + h[i].value.len;
        while (p < end) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == ';')) {
                p++;
            }
            semi = memchr(p, ';', (size_t) (end - p));
            semi = semi ? semi : end;
            eq = memchr(p, '=', (size_t) (semi - p));
            if (eq && (size_t) (eq - p) == name->len
                && strncasecmp(p, name->data, name->len) == 0) {
                value->data = (char *) eq + 1;
                value->len = (size_t) (semi - eq - 1);
                *line = h[i].value;
                return true;
            }
            p = semi;
        }
    }
    return false;
}

/* The request's identifiers, the client's cookie decoded on first use.
 * Only its first 22 characters count: a mark may follow, and many old
 * cookies carry garbage instead of "==" (nginx's reasoning). */
static userid_ctx_t *
get_uid(rx_http_request_t *r, userid_conf_t *conf)
{
    userid_ctx_t *ctx = r->userid_ctx;
    rx_str_t      line, src, dst;
    char          raw[rx_base64_decoded_length(22)];

    if (ctx) {
        return ctx;
    }
    ctx = rx_pcalloc(r->pool, sizeof(*ctx));
    if (ctx == NULL) {
        return NULL;
    }
    r->userid_ctx = ctx;
    if (!find_cookie(r, &conf->name, &ctx->cookie, &line)) {
        return ctx;
    }
    if (ctx->cookie.len < 22) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "client sent too short "
                                  "userid cookie \"%.*s\"", (int) line.len,
                                  line.data);
        return ctx;
    }
    src.data = ctx->cookie.data;
    src.len = 22;
    dst.data = raw;
    if (rx_decode_base64(&dst, &src) != RX_OK || dst.len < 16) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "client sent invalid "
                                  "userid cookie \"%.*s\"", (int) line.len,
                                  line.data);
        return ctx;
    }
    memcpy(ctx->got, raw, 16);
    return ctx;
}

/* The server's part of an "on" identifier: its address (IPv4, the last
 * four bytes of IPv6, 0 for a UNIX socket), in network order. */
static uint32_t
server_word(rx_http_request_t *r)
{
    const rx_sockaddr_t *a = r->conn ? rx_conn_local(r->conn) : NULL;
    uint32_t             w = 0;

    if (a == NULL) {
        return 0;
    }
    if (a->u.sa.sa_family == AF_INET) {
        w = a->u.sin.sin_addr.s_addr;
    } else if (a->u.sa.sa_family == AF_INET6) {
        memcpy(&w, &a->u.sin6.sin6_addr.s6_addr[12], 4);
    }
    return w;
}

/* Whether the client's identifier stays: $uid_reset empty or "0" keeps
 * it (unless a mark is configured and the cookie lacks it: the same
 * identifier is sent again, marked). Otherwise a new one is made. */
static rx_int_t
keep_got(rx_http_request_t *r, userid_ctx_t *ctx, userid_conf_t *conf)
{
    rx_http_variable_value_t *vv = rx_http_get_indexed_variable(r,
                                       (rx_uint_t) reset_index);

    if (vv == NULL) {
        return RX_ERROR;
    }
    if (vv->not_found || vv->len == 0 || (vv->len == 1 && vv->data[0] == '0')) {
        if (conf->mark == 0
            || (ctx->cookie.len > 23 && ctx->cookie.data[22] == conf->mark
                && ctx->cookie.data[23] == '=')) {
            return RX_DONE;                   /* nothing to send */
        }
        memcpy(ctx->set, ctx->got, sizeof(ctx->set));
        return RX_DONE;
    }
    ctx->reset = true;
    if (vv->len == 3 && memcmp(vv->data, "log", 3) == 0) {
        rx_http_request_log_error(r, RX_LOG_NOTICE, 0, "userid cookie \"%.*s="
                                  "%08X%08X%08X%08X\" was reset",
                                  (int) conf->name.len, conf->name.data,
                                  ctx->got[0], ctx->got[1], ctx->got[2],
                                  ctx->got[3]);
    }
    return RX_OK;
}

/* Decides ctx->set once: the client's kept, a new one, or none. */
static rx_int_t
create_uid(rx_http_request_t *r, userid_ctx_t *ctx, userid_conf_t *conf)
{
    rx_int_t rc;

    if (ctx->made) {
        return RX_OK;
    }
    if (ctx->got[3] != 0) {
        rc = keep_got(r, ctx, conf);
        if (rc == RX_ERROR) {
            return RX_ERROR;
        }
        if (rc == RX_DONE) {
            ctx->made = true;
            return RX_OK;
        }
    }
    if (conf->enable == USERID_V1) {
        /* host byte order, as nginx's first format */
        ctx->set[0] = conf->service == RX_CONF_UNSET ? 0
                                                     : (uint32_t) conf->service;
        ctx->set[1] = (uint32_t) rx_time_sec;
        ctx->set[2] = start_value;
        ctx->set[3] = sequencer_v1;
        sequencer_v1 += 0x100;
    } else {
        ctx->set[0] = conf->service == RX_CONF_UNSET
                      ? server_word(r) : htonl((uint32_t) conf->service);
        ctx->set[1] = htonl((uint32_t) rx_time_sec);
        ctx->set[2] = htonl(start_value);
        ctx->set[3] = htonl(sequencer_v2);
        sequencer_v2 += 0x100;
        if (sequencer_v2 < 0x03030302) {
            sequencer_v2 = 0x03030302;
        }
    }
    ctx->made = true;
    return RX_OK;
}

/* ---- the header filter -------------------------------------------------- */

/* "; expires=Thu, 31-Dec-37 23:55:55 GMT": two-digit years up to 2037,
 * as nginx writes cookie dates (Netscape 3 read no other). */
static size_t
cookie_time(char *buf, size_t size, time_t t)
{
    static const char *const week[] = { "Sun", "Mon", "Tue", "Wed", "Thu",
                                        "Fri", "Sat" };
    static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May",
                                          "Jun", "Jul", "Aug", "Sep", "Oct",
                                          "Nov", "Dec" };
    struct tm tm;
    int       year;

    if (gmtime_r(&t, &tm) == NULL) {
        return 0;
    }
    year = tm.tm_year + 1900;
    return (size_t) snprintf(buf, size, "; expires=%s, %02d-%s-%02d "
                             "%02d:%02d:%02d GMT", week[tm.tm_wday],
                             tm.tm_mday, months[tm.tm_mon],
                             year > 2037 ? year : year % 100, tm.tm_hour,
                             tm.tm_min, tm.tm_sec);
}

static char *
cpy(char *p, const char *src, size_t n)
{
    memcpy(p, src, n);
    return p + n;
}

static rx_int_t
add_set_cookie(rx_http_request_t *r, userid_ctx_t *ctx, userid_conf_t *conf)
{
    static const struct { rx_uint_t flag; const char *text; } attrs[] = {
        { USERID_FLAG_SECURE, "; secure" },
        { USERID_FLAG_HTTPONLY, "; httponly" },
        { USERID_FLAG_STRICT, "; samesite=strict" },
        { USERID_FLAG_LAX, "; samesite=lax" },
        { USERID_FLAG_NONE, "; samesite=none" },
    };
    size_t    size, i;
    rx_str_t  v, src, enc;
    char     *p;

    size = conf->name.len + 1 + rx_base64_encoded_length(16) + 64
           + conf->domain.len + conf->path.len + 64;
    v.data = p = rx_pnalloc(r->pool, size);
    if (p == NULL) {
        return RX_ERROR;
    }
    p = cpy(p, conf->name.data, conf->name.len);
    *p++ = '=';
    if (ctx->got[3] == 0 || ctx->reset) {
        src.data = (char *) ctx->set;
        src.len = 16;
        enc.data = p;
        rx_encode_base64(&enc, &src);
        p += enc.len;
        if (conf->mark) {
            p[-2] = (char) conf->mark;        /* "X=" instead of "==" */
        }
    } else {
        /* the client's identifier, marked now */
        p = cpy(p, ctx->cookie.data, 22);
        *p++ = (char) conf->mark;
        *p++ = '=';
    }
    if (conf->expires == USERID_MAX_EXPIRES) {
        p = cpy(p, USERID_MAX_TEXT, sizeof(USERID_MAX_TEXT) - 1);
    } else if (conf->expires) {
        p += cookie_time(p, 64, rx_time_sec + conf->expires);
    }
    p = cpy(p, conf->domain.data, conf->domain.len);
    p = cpy(p, conf->path.data, conf->path.len);
    for (i = 0; i < rx_nelems(attrs); i++) {
        if (conf->flags & attrs[i].flag) {
            size_t n = strlen(attrs[i].text);

            p = cpy(p, attrs[i].text, n);
        }
    }
    v.len = (size_t) (p - v.data);
    if (rx_http_add_header_out(r, "Set-Cookie", &v) == NULL) {
        return RX_ERROR;
    }
    if (conf->p3p.len && rx_http_add_header_out(r, "P3P", &conf->p3p) == NULL) {
        return RX_ERROR;
    }
    return RX_OK;
}

static rx_int_t
userid_header_filter(rx_http_request_t *r)
{
    userid_conf_t *conf = rx_http_get_module_loc_conf(r, rx_http_userid_module);
    userid_ctx_t  *ctx;

    if (r != r->main || conf->enable < USERID_V1) {
        return next_header(r);
    }
    ctx = get_uid(r, conf);
    if (ctx == NULL || create_uid(r, ctx, conf) != RX_OK) {
        return RX_ERROR;
    }
    if (ctx->set[3] != 0 && add_set_cookie(r, ctx, conf) != RX_OK) {
        return RX_ERROR;
    }
    return next_header(r);
}

static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    top->header = userid_header_filter;
}

/* ---- the variables ------------------------------------------------------ */

/* "NAME=" and the four words in hexadecimal, as nginx prints them. */
static rx_int_t
uid_value(rx_http_request_t *r, rx_http_variable_value_t *v,
    const rx_str_t *name, const uint32_t *uid)
{
    size_t size = name->len + sizeof("=00001111222233334444555566667777");

    v->data = rx_pnalloc(r->pool, size);
    if (v->data == NULL) {
        return RX_ERROR;
    }
    v->len = (size_t) snprintf(v->data, size, "%.*s=%08X%08X%08X%08X",
                               (int) name->len, name->data, uid[0], uid[1],
                               uid[2], uid[3]);
    return RX_OK;
}

static rx_int_t
uid_got_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_request_t *m = r->main;
    userid_conf_t     *conf = rx_http_get_module_loc_conf(m,
                                  rx_http_userid_module);
    userid_ctx_t      *ctx;

    rx_unused(data);
    if (conf->enable == USERID_OFF) {
        v->not_found = 1;
        return RX_OK;
    }
    ctx = get_uid(m, conf);
    if (ctx == NULL) {
        return RX_ERROR;
    }
    if (ctx->got[3] == 0) {
        v->not_found = 1;
        return RX_OK;
    }
    return uid_value(m, v, &conf->name, ctx->got);
}

static rx_int_t
uid_set_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_request_t *m = r->main;
    userid_conf_t     *conf = rx_http_get_module_loc_conf(m,
                                  rx_http_userid_module);
    userid_ctx_t      *ctx;

    rx_unused(data);
    if (conf->enable < USERID_V1) {
        v->not_found = 1;
        return RX_OK;
    }
    ctx = get_uid(m, conf);
    if (ctx == NULL || create_uid(m, ctx, conf) != RX_OK) {
        return RX_ERROR;
    }
    if (ctx->set[3] == 0) {
        v->not_found = 1;
        return RX_OK;
    }
    return uid_value(m, v, &conf->name, ctx->set);
}

/* $uid_reset is empty until `set` gives it a value. */
static rx_int_t
uid_reset_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_unused(r);
    rx_unused(data);
    v->data = "";
    v->len = 0;
    return RX_OK;
}

static rx_int_t
add_variables(rx_conf_t *cf)
{
    static rx_str_t     got = rx_string("uid_got");
    static rx_str_t     set = rx_string("uid_set");
    static rx_str_t     reset = rx_string("uid_reset");
    rx_http_variable_t *v;

    v = rx_http_add_variable(cf, &got, 0);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = uid_got_variable;
    v = rx_http_add_variable(cf, &set, 0);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = uid_set_variable;
    v = rx_http_add_variable(cf, &reset, RX_HTTP_VAR_CHANGEABLE);
    if (v == NULL) {
        return RX_ERROR;
    }
    v->get = uid_reset_variable;
    reset_index = rx_http_get_variable_index(cf, &reset);
    return reset_index == RX_ERROR ? RX_ERROR : RX_OK;
}

/* nginx's start value: the high part of the microseconds and the pid. */
static rx_int_t
init_process(rx_cycle_t *cycle)
{
    struct timeval tv;

    rx_unused(cycle);
    gettimeofday(&tv, NULL);
    start_value = (((uint32_t) tv.tv_usec / 20) << 16) | (uint32_t) getpid();
    return RX_OK;
}
