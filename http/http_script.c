/*
 * http_script.c: compiled complex values (http_script.h): the parser that
 * runs at load time and the two-pass evaluation that runs per request.
 */
#include "http.h"
#include "http_script.h"

static bool
is_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
           || (ch >= '0' && ch <= '9') || ch == '_';
}

static rx_int_t
add_part(rx_array_t *parts, rx_http_cv_part_type_t type, rx_uint_t index,
    const char *text, size_t len)
{
    rx_http_cv_part_t *part = rx_array_push(parts);

    if (part == NULL) {
        return RX_ERROR;
    }
    part->type = type;
    part->index = index;
    part->text.data = (char *) text;
    part->text.len = len;
    return RX_OK;
}

/*
 * One "$..." starting at *pos (on the '$'): adds its part and moves *pos
 * past it. Follows nginx's ngx_http_script_compile: a digit 1-9 right after
 * '$' is a capture; a name runs over [A-Za-z0-9_]; "${" needs its '}'.
 */
static rx_int_t
compile_dollar(rx_conf_t *cf, rx_http_complex_value_t *cv, rx_array_t *parts,
    const char **pos)
{
    const char *src = *pos, *p = src + 1, *end = cv->value.data + cv->value.len;
    const char *name;
    rx_str_t    n;
    rx_int_t    index;
    bool        bracket;

    if (p == end) {
        goto invalid;
    }
    if (*p >= '1' && *p <= '9') {
        cv->captures |= 1u << (*p - '0');
        *pos = p + 1;
        return add_part(parts, RX_HTTP_CV_CAPTURE, (rx_uint_t) (*p - '0'), src, 2);
    }
    bracket = *p == '{';
    if (bracket && ++p == end) {
        goto invalid;
    }
    for (name = p; p < end && is_name_char(*p); p++) {
        /* the name */
    }
    n.data = (char *) name;
    n.len = (size_t) (p - name);
    if (bracket) {
        if (p == end || *p != '}') {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "the closing bracket in "
                              "\"%.*s\" variable is missing", (int) n.len,
                              n.data);
            return RX_ERROR;
        }
        p++;
    }
    if (n.len == 0) {
        goto invalid;
    }
    *pos = p;
    if (bracket && n.len == 1 && *name >= '1' && *name <= '9') {
        /* "${1}x": a capture followed by text that could extend a name */
        cv->captures |= 1u << (*name - '0');
        return add_part(parts, RX_HTTP_CV_CAPTURE, (rx_uint_t) (*name - '0'),
                        src, (size_t) (p - src));
    }
    index = rx_http_get_variable_index(cf, &n);
    if (index == RX_ERROR) {
        return RX_ERROR;
    }
    return add_part(parts, RX_HTTP_CV_VARIABLE, (rx_uint_t) index, src,
                    (size_t) (p - src));

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid variable name in \"%s\"",
                      cv->value.data);
    return RX_ERROR;
}

rx_int_t
rx_http_compile_complex_value(rx_conf_t *cf, const rx_str_t *text,
    rx_http_complex_value_t *cv)
{
    rx_array_t  parts;
    const char *p, *end, *dollar;

    memset(cv, 0, sizeof(*cv));
    cv->value.len = text->len;
    cv->value.data = rx_pstrdup_c(cf->pool, text->data, text->len);
    if (cv->value.data == NULL) {
        return RX_ERROR;
    }
    if (memchr(cv->value.data, '$', cv->value.len) == NULL) {
        return RX_OK;                       /* a constant */
    }
    if (rx_array_init(&parts, cf->pool, 4, sizeof(rx_http_cv_part_t)) != RX_OK) {
        return RX_ERROR;
    }
    p = cv->value.data;
    end = p + cv->value.len;
    while (p < end) {
        if (*p == '$') {
            if (compile_dollar(cf, cv, &parts, &p) != RX_OK) {
                return RX_ERROR;
            }
            continue;
        }
        dollar = memchr(p, '$', (size_t) (end - p));
        dollar = dollar ? dollar : end;
        if (add_part(&parts, RX_HTTP_CV_LITERAL, 0, p, (size_t) (dollar - p))
            != RX_OK) {
            return RX_ERROR;
        }
        p = dollar;
    }
    cv->parts = parts.elts;
    cv->nparts = parts.nelts;
    return RX_OK;
}

/* Capture n of the last match, empty when there is none. */
static rx_str_t
capture(const rx_http_request_t *r, rx_uint_t n)
{
    rx_str_t s = { 0, (char *) "" };

    if ((rx_int_t) n < r->ncaptures && n < RX_HTTP_MAX_CAPTURES
        && r->captures_data && r->captures[2 * n] >= 0
        && r->captures[2 * n + 1] >= r->captures[2 * n]) {
        s.data = (char *) r->captures_data + r->captures[2 * n];
        s.len = (size_t) (r->captures[2 * n + 1] - r->captures[2 * n]);
    }
    return s;
}

/* The bytes of a part; a variable through get (flushed or cached). */
static rx_str_t
part_value(rx_http_request_t *r, const rx_http_cv_part_t *part, bool flush)
{
    rx_http_variable_value_t *v;
    rx_str_t                  s = { 0, (char *) "" };

    switch (part->type) {
    case RX_HTTP_CV_LITERAL:
        return part->text;
    case RX_HTTP_CV_CAPTURE:
        return capture(r, part->index);
    case RX_HTTP_CV_VARIABLE:
        v = flush ? rx_http_get_flushed_variable(r, part->index)
                  : rx_http_get_indexed_variable(r, part->index);
        if (v && !v->not_found) {
            s.data = v->data;
            s.len = v->len;
        }
        break;
    }
    return s;
}

rx_int_t
rx_http_complex_value(rx_http_request_t *r, const rx_http_complex_value_t *cv,
    rx_str_t *out)
{
    rx_str_t   s;
    rx_uint_t  i;
    size_t     len = 0;
    char      *p;

    if (cv->parts == NULL) {
        *out = cv->value;
        return RX_OK;
    }
    if (cv->nparts == 1) {
        *out = part_value(r, &cv->parts[0], true);   /* "$var": no copy */
        return RX_OK;
    }
    /* pass 1 recomputes non-cacheable variables; pass 2 reads the same
     * values from the cache, so the lengths agree */
    for (i = 0; i < cv->nparts; i++) {
        len += part_value(r, &cv->parts[i], true).len;
    }
    p = rx_pnalloc(r->pool, len + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    out->data = p;
    for (i = 0; i < cv->nparts; i++) {
        s = part_value(r, &cv->parts[i], false);
        /* a value repeated in one text and recomputed in between may have
         * changed length: never write past what was measured */
        s.len = rx_min(s.len, len - (size_t) (p - out->data));
        memcpy(p, s.data, s.len);
        p += s.len;
    }
    *p = '\0';
    out->len = (size_t) (p - out->data);
    return RX_OK;
}

const char *
rx_http_set_complex_value_slot(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    rx_http_complex_value_t **field = rx_conf_field(conf, cmd,
                                                    rx_http_complex_value_t *);
    rx_str_t                 *value = cf->args->elts;

    if (*field != NULL && *field != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    *field = rx_palloc(cf->pool, sizeof(rx_http_complex_value_t));
    if (*field == NULL) {
        return RX_CONF_ERROR;
    }
    if (rx_http_compile_complex_value(cf, &value[1], *field) != RX_OK) {
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

rx_int_t
rx_http_regex_compile(rx_conf_t *cf, const rx_str_t *pattern, bool caseless,
    rx_regex_t **re, rx_http_capture_vars_t **names)
{
    char err[RX_MAX_ERROR_STR];

    *re = rx_regex_compile(cf->pool, pattern, caseless, err, sizeof(err));
    if (*re == NULL) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s", err);
        return RX_ERROR;
    }
    return rx_http_regex_capture_vars(cf, *re, names);
}
