/*
 * secure_link.c: nginx's secure_link module, both of its forms.
 * `secure_link "$arg_md5,$arg_expires"; secure_link_md5 "text";`: the
 * first part is the base64url MD5 of the secure_link_md5 text, the
 * optional second a Unix time after which the link is stale; $secure_link
 * is "1" (good), "0" (good but expired) or not found (wrong or
 * malformed), and $secure_link_expires the time given. The older
 * `secure_link_secret word;`: the URI is /prefix/HEX/link, HEX the MD5 of
 * link followed by word, and $secure_link is the link when it matches.
 * MD5 is core/md5.c's, so the module needs no OpenSSL.
 */
#include "http.h"
#include "http_script.h"
#include "http_variables.h"
#include "base64.h"
#include "clock.h"
#include "md5.h"

typedef struct {
    rx_http_complex_value_t  *variable;   /* secure_link */
    rx_http_complex_value_t  *md5;        /* secure_link_md5 */
    rx_str_t                  secret;     /* secure_link_secret */
} secure_link_conf_t;

static rx_int_t add_variables(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

#define SECURE_LINK_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF \
                           | RX_HTTP_LOC_CONF | RX_CONF_TAKE1)

static const rx_command_t secure_link_commands[] = {
    { "secure_link", SECURE_LINK_CONF, rx_http_set_complex_value_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(secure_link_conf_t, variable), NULL },
    { "secure_link_md5", SECURE_LINK_CONF, rx_http_set_complex_value_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(secure_link_conf_t, md5), NULL },
    { "secure_link_secret", SECURE_LINK_CONF, rx_conf_set_str_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(secure_link_conf_t, secret), NULL },
    rx_null_command
};

static const rx_http_module_t secure_link_ctx = {
    add_variables, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_secure_link_module = {
    "rx_http_secure_link_module", 0, 0, RX_HTTP_MODULE, &secure_link_ctx,
    secure_link_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    secure_link_conf_t *c = rx_pcalloc(cf->pool, sizeof(secure_link_conf_t));

    if (c == NULL) {
        return NULL;
    }
    c->variable = RX_CONF_UNSET_PTR;
    c->md5 = RX_CONF_UNSET_PTR;
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    secure_link_conf_t *p = prev, *c = conf;

    if (c->secret.data) {
        if (c->variable != RX_CONF_UNSET_PTR || c->md5 != RX_CONF_UNSET_PTR) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"secure_link_secret\" "
                "cannot be mixed with \"secure_link\" and \"secure_link_md5\"");
            return RX_CONF_ERROR;
        }
        c->variable = NULL;
        c->md5 = NULL;
        return RX_CONF_OK;
    }
    rx_conf_merge_ptr(c->variable, p->variable, NULL);
    rx_conf_merge_ptr(c->md5, p->md5, NULL);
    if (c->variable == NULL && c->md5 == NULL) {
        c->secret = p->secret;
    }
    return RX_CONF_OK;
}

/* The decimal time after the comma: > 0, else -1. */
static time_t
parse_expires(const char *p, size_t n)
{
    time_t  t = 0;
    size_t  i;

    if (n == 0) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9' || t > (INT64_MAX - 9) / 10) {
            return -1;
        }
        t = t * 10 + (p[i] - '0');
    }
    return t > 0 ? t : -1;
}

static bool
same_digest(const unsigned char *a, const unsigned char *b)
{
    unsigned char diff = 0;
    unsigned      i;

    for (i = 0; i < 16; i++) {
        diff |= a[i] ^ b[i];               /* in constant time, as nginx */
    }
    return diff == 0;
}

/* The `secure_link` value: its hash part and, after a comma, the expiry
 * (0: none). RX_DECLINED when the expiry is malformed. */
static rx_int_t
split_value(rx_http_request_t *r, const secure_link_conf_t *c, rx_str_t *hash,
    time_t *expires, rx_str_t *expires_text)
{
    const char *comma;

    if (rx_http_complex_value(r, c->variable, hash) != RX_OK) {
        return RX_ERROR;
    }
    *expires = 0;
    rx_str_null(expires_text);
    comma = memchr(hash->data, ',', hash->len);
    if (comma) {
        expires_text->data = (char *) comma + 1;
        expires_text->len = hash->len - (size_t) (comma + 1 - hash->data);
        hash->len = (size_t) (comma - hash->data);
        *expires = parse_expires(expires_text->data, expires_text->len);
        if (*expires < 0) {
            return RX_DECLINED;
        }
    }
    return RX_OK;
}

static rx_int_t
secure_link_new(rx_http_request_t *r, const secure_link_conf_t *c,
    rx_http_variable_value_t *v)
{
    rx_str_t       value, text, hash;
    rx_md5_t       md5;
    time_t         expires;
    unsigned char  hash_buf[18], digest[16];
    rx_int_t       rc;

    rc = split_value(r, c, &value, &expires, &text);
    if (rc != RX_OK) {
        v->not_found = 1;
        return rc == RX_ERROR ? RX_ERROR : RX_OK;
    }
    hash.data = (char *) hash_buf;
    if (value.len > 24 || rx_decode_base64url(&hash, &value) != RX_OK
        || hash.len != 16) {
        v->not_found = 1;
        return RX_OK;
    }
    if (rx_http_complex_value(r, c->md5, &text) != RX_OK) {
        return RX_ERROR;
    }
    rx_md5_init(&md5);
    rx_md5_update(&md5, text.data, text.len);
    rx_md5_final(digest, &md5);
    if (!same_digest(hash_buf, digest)) {
        v->not_found = 1;
        return RX_OK;
    }
    v->data = expires && expires < rx_time_sec ? "0" : "1";
    v->len = 1;
    return RX_OK;
}

static int
hex_value(char ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    ch = (char) (ch | 0x20);
    return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* /prefix/HEX/link, on the URI as received (nginx's unparsed_uri). */
static rx_int_t
secure_link_old(rx_http_request_t *r, const secure_link_conf_t *c,
    rx_http_variable_value_t *v)
{
    const char    *p, *last, *hex, *link;
    rx_md5_t       md5;
    unsigned char  digest[16], given[16];
    int            hi, lo;
    unsigned       i;

    v->not_found = 1;
    if (r->unparsed_uri.len < 2) {
        return RX_OK;
    }
    last = r->unparsed_uri.data + r->unparsed_uri.len;
    hex = memchr(r->unparsed_uri.data + 1, '/', r->unparsed_uri.len - 1);
    if (hex == NULL) {
        return RX_OK;
    }
    hex++;
    p = memchr(hex, '/', (size_t) (last - hex));
    if (p == NULL || p - hex != 32 || p + 1 == last) {
        return RX_OK;
    }
    link = p + 1;
    for (i = 0; i < 16; i++) {
        hi = hex_value(hex[2 * i]);
        lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return RX_OK;
        }
        given[i] = (unsigned char) (hi << 4 | lo);
    }
    rx_md5_init(&md5);
    rx_md5_update(&md5, link, (size_t) (last - link));
    rx_md5_update(&md5, c->secret.data, c->secret.len);
    rx_md5_final(digest, &md5);
    if (same_digest(given, digest)) {
        v->not_found = 0;
        v->data = (char *) link;
        v->len = (size_t) (last - link);
    }
    return RX_OK;
}

static rx_int_t
secure_link_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const secure_link_conf_t *c = rx_http_get_module_loc_conf(r,
                                      rx_http_secure_link_module);

    (void) data;
    if (c->secret.data) {
        return secure_link_old(r, c, v);
    }
    if (c->variable == NULL || c->md5 == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    return secure_link_new(r, c, v);
}

/* The expiry the `secure_link` value gives, when it gives a valid one. */
static rx_int_t
secure_link_expires_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const secure_link_conf_t *c = rx_http_get_module_loc_conf(r,
                                      rx_http_secure_link_module);
    rx_str_t                  hash, text;
    time_t                    expires;
    rx_int_t                  rc;

    (void) data;
    v->not_found = 1;
    if (c->secret.data || c->variable == NULL || c->md5 == NULL) {
        return RX_OK;
    }
    rc = split_value(r, c, &hash, &expires, &text);
    if (rc == RX_ERROR) {
        return RX_ERROR;
    }
    if (rc == RX_OK && expires) {
        v->not_found = 0;
        v->data = text.data;
        v->len = text.len;
    }
    return RX_OK;
}

static rx_int_t
add_variables(rx_conf_t *cf)
{
    static const struct {
        const char               *name;
        rx_http_get_variable_pt   get;
    } vars[] = {
        { "secure_link", secure_link_variable },
        { "secure_link_expires", secure_link_expires_variable },
    };
    rx_uint_t i;

    for (i = 0; i < rx_nelems(vars); i++) {
        rx_str_t            name = { strlen(vars[i].name), (char *) vars[i].name };
        rx_http_variable_t *v = rx_http_add_variable(cf, &name, 0);

        if (v == NULL) {
            return RX_ERROR;
        }
        v->get = vars[i].get;
    }
    return RX_OK;
}
