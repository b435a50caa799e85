/*
 * filter_types.c: the *_types lists of the body filters that rewrite a
 * response (sub_filter_types, ssi_types, addition_types) and the header changes such a
 * rewrite needs (see filter_types.h).
 */
#include <ctype.h>
#include "filter_types.h"

void
rx_filter_types_init(rx_filter_types_t *t)
{
    t->types = RX_CONF_UNSET_PTR;
    t->any = RX_CONF_UNSET;
}

static rx_int_t
push_type(rx_conf_t *cf, rx_array_t *types, const rx_str_t *name)
{
    rx_str_t *t = rx_array_push(types);
    size_t    k;

    if (t == NULL) {
        return RX_ERROR;
    }
    t->len = name->len;
    t->data = rx_pnalloc(cf->pool, name->len + 1);
    if (t->data == NULL) {
        return RX_ERROR;
    }
    for (k = 0; k < name->len; k++) {
        t->data[k] = (char) tolower((unsigned char) name->data[k]);
    }
    t->data[t->len] = '\0';
    return RX_OK;
}

const char *
rx_filter_types_set(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    static const rx_str_t text_html = rx_string("text/html");
    rx_filter_types_t    *ft = (rx_filter_types_t *) ((char *) conf
                                                      + cmd->offset);
    rx_str_t             *value = cf->args->elts;
    rx_uint_t             i;

    if (ft->types != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    ft->types = rx_array_create(cf->pool, 4, sizeof(rx_str_t));
    if (ft->types == NULL || push_type(cf, ft->types, &text_html) != RX_OK) {
        return RX_CONF_ERROR;
    }
    ft->any = 0;
    for (i = 1; i < cf->args->nelts; i++) {
        if (rx_str_eq(&value[i], "*")) {
            ft->any = 1;
        } else if (push_type(cf, ft->types, &value[i]) != RX_OK) {
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

rx_int_t
rx_filter_types_merge(rx_conf_t *cf, rx_filter_types_t *prev,
    rx_filter_types_t *conf)
{
    static const rx_str_t text_html = rx_string("text/html");

    if (conf->types == RX_CONF_UNSET_PTR) {
        conf->types = prev->types;
        conf->any = prev->any;
    }
    if (conf->types == RX_CONF_UNSET_PTR) {
        conf->types = rx_array_create(cf->pool, 1, sizeof(rx_str_t));
        if (conf->types == NULL
            || push_type(cf, conf->types, &text_html) != RX_OK) {
            return RX_ERROR;
        }
        conf->any = 0;
    }
    return RX_OK;
}

bool
rx_filter_types_match(rx_http_request_t *r, const rx_filter_types_t *ft)
{
    rx_str_t  *ct = &r->headers_out.content_type, *t = ft->types->elts;
    size_t     len = 0;
    rx_uint_t  i;

    if (ft->any) {
        return true;
    }
    while (len < ct->len && ct->data[len] != ';' && ct->data[len] != ' '
           && ct->data[len] != '\t') {
        len++;
    }
    for (i = 0; len && i < ft->types->nelts; i++) {
        if (t[i].len == len && strncasecmp(t[i].data, ct->data, len) == 0) {
            return true;
        }
    }
    return false;
}

/* Hides the named response headers (an upstream's Last-Modified). */
static void
delete_headers(rx_http_request_t *r, const char *name)
{
    rx_table_elt_t *h = r->headers_out.headers.elts;
    rx_uint_t       i;

    for (i = 0; i < r->headers_out.headers.nelts; i++) {
        if (rx_str_caseeq(&h[i].key, name)) {
            h[i].deleted = true;
        }
    }
}

rx_int_t
rx_filter_validators(rx_http_request_t *r, bool keep_validators)
{
    rx_table_elt_t *etag = r->headers_out.etag;
    char           *p;

    if (!keep_validators) {
        r->headers_out.last_modified_time = -1;
        delete_headers(r, "Last-Modified");
        delete_headers(r, "ETag");
        r->headers_out.etag = NULL;
        return RX_OK;
    }
    if (etag == NULL || etag->deleted
        || (etag->value.len > 2 && etag->value.data[0] == 'W'
            && etag->value.data[1] == '/')) {
        return RX_OK;
    }
    if (etag->value.len == 0 || etag->value.data[0] != '"') {
        etag->deleted = true;
        r->headers_out.etag = NULL;
        return RX_OK;
    }
    p = rx_pnalloc(r->pool, etag->value.len + 2);
    if (p == NULL) {
        return RX_ERROR;
    }
    p[0] = 'W';
    p[1] = '/';
    memcpy(p + 2, etag->value.data, etag->value.len);
    etag->value.data = p;
    etag->value.len += 2;
    return RX_OK;
}

rx_int_t
rx_filter_body_changes(rx_http_request_t *r, bool keep_validators)
{
    rx_http_clear_content_length(r);
    r->allow_ranges = 0;
    delete_headers(r, "Accept-Ranges");
    r->headers_out.accept_ranges = NULL;
    return rx_filter_validators(r, keep_validators);
}
