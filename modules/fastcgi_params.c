/*
 * fastcgi_params.c: the start of a FastCGI request: BEGIN_REQUEST
 * (responder, FCGI_KEEP_CONN with fastcgi_keep_conn) and the PARAMS
 * stream: fastcgi_param's lines, then the client's headers as HTTP_*, in
 * one record or framed in several.
 */
#include "fastcgi.h"

typedef struct {
    rx_str_t  name;
    rx_str_t  value;
} pair_t;

/* Request headers as HTTP_* params: upper case, '-' as '_', headers of the
 * same name joined (", "; "; " for Cookie) as nginx does, those that a
 * fastcgi_param HTTP_* line gives skipped. */
static rx_int_t
header_params(rx_http_request_t *r, rx_http_fastcgi_loc_conf_t *flcf,
    rx_array_t *out)
{
    rx_table_elt_t *h = r->headers_in.headers.elts;
    rx_str_t       *given = flcf->params.params_http ? flcf->params.params_http->elts : NULL;
    rx_uint_t       i, j, ngiven = flcf->params.params_http ? flcf->params.params_http->nelts : 0;

    for (i = 0; i < r->headers_in.headers.nelts; i++) {
        const char *key = h[i].lowcase_key;
        bool        seen = false, cookie;
        pair_t     *pr;
        size_t      k, vlen;
        char       *p;

        if (key == NULL) {
            continue;
        }
        for (j = 0; j < i && !seen; j++) {
            seen = h[j].lowcase_key && strcmp(h[j].lowcase_key, key) == 0;
        }
        if (seen) {
            continue;            /* joined to the first of its name */
        }
        p = rx_pnalloc(r->pool, 5 + h[i].key.len);
        if (p == NULL) {
            return RX_ERROR;
        }
        memcpy(p, "HTTP_", 5);
        for (k = 0; k < h[i].key.len; k++) {
            char ch = h[i].key.data[k];

            ch = (char) (ch >= 'a' && ch <= 'z' ? ch & ~0x20 : ch);
            p[5 + k] = ch == '-' ? '_' : ch;
        }
        for (j = 0; j < ngiven; j++) {
            if (given[j].len == h[i].key.len
                && strncasecmp(given[j].data, p + 5, given[j].len) == 0) {
                seen = true;
            }
        }
        if (seen) {
            continue;
        }
        pr = rx_array_push(out);
        if (pr == NULL) {
            return RX_ERROR;
        }
        pr->name.data = p;
        pr->name.len = 5 + h[i].key.len;
        pr->value = h[i].value;
        cookie = strcmp(key, "cookie") == 0;
        vlen = h[i].value.len;
        for (j = i + 1; j < r->headers_in.headers.nelts; j++) {
            if (h[j].lowcase_key && strcmp(h[j].lowcase_key, key) == 0) {
                vlen += 2 + h[j].value.len;
            }
        }
        if (vlen == h[i].value.len) {
            continue;
        }
        p = rx_pnalloc(r->pool, vlen);
        if (p == NULL) {
            return RX_ERROR;
        }
        pr->value.data = p;
        memcpy(p, h[i].value.data, h[i].value.len);
        p += h[i].value.len;
        for (j = i + 1; j < r->headers_in.headers.nelts; j++) {
            if (h[j].lowcase_key && strcmp(h[j].lowcase_key, key) == 0) {
                *p++ = cookie ? ';' : ',';
                *p++ = ' ';
                memcpy(p, h[j].value.data, h[j].value.len);
                p += h[j].value.len;
            }
        }
        pr->value.len = vlen;
    }
    return RX_OK;
}

/* *_cache_revalidate: the entry's validators, as the headers they are
 * (the client's own were hidden). */
static rx_int_t
add_conditions(rx_http_request_t *r, rx_array_t *pairs)
{
    rx_str_t  inm, ims;
    pair_t   *pr;

    if (!rx_http_cache_conditions(r, &inm, &ims)) {
        return RX_OK;
    }
    if (inm.len) {
        if ((pr = rx_array_push(pairs)) == NULL) return RX_ERROR;
        rx_str_set(&pr->name, "HTTP_IF_NONE_MATCH");
        pr->value = inm;
    }
    if (ims.len) {
        if ((pr = rx_array_push(pairs)) == NULL) return RX_ERROR;
        rx_str_set(&pr->name, "HTTP_IF_MODIFIED_SINCE");
        pr->value = ims;
    }
    return RX_OK;
}

/* The pairs sent as FCGI_PARAMS: fastcgi_param's (one whose value is
 * empty left out with if_not_empty), then the client's headers as HTTP_*
 * (fastcgi_pass_request_headers). NULL: no memory. */
static rx_array_t *
collect_params(rx_http_request_t *r, rx_http_fastcgi_loc_conf_t *flcf)
{
    rx_http_cgi_param_t     *prm = flcf->params.params ? flcf->params.params->elts : NULL;
    rx_array_t              *pairs;
    pair_t                  *pr;
    rx_uint_t                i, n = flcf->params.params ? flcf->params.params->nelts : 0;

    pairs = rx_array_create(r->pool, n + r->headers_in.headers.nelts + 1,
                            sizeof(pair_t));
    if (pairs == NULL) {
        return NULL;
    }
    for (i = 0; i < n; i++) {
        rx_str_t value;

        if (rx_http_complex_value(r, &prm[i].value, &value) != RX_OK) {
            return NULL;
        }
        if (value.len == 0 && prm[i].if_not_empty) {
            continue;
        }
        pr = rx_array_push(pairs);
        if (pr == NULL) {
            return NULL;
        }
        pr->name = prm[i].name;
        pr->value = value;
    }
    if (flcf->upstream.pass_request_headers
        && header_params(r, flcf, pairs) != RX_OK) {
        return NULL;
    }
    if (add_conditions(r, pairs) != RX_OK) {
        return NULL;
    }
    return pairs;
}

/* The pairs (len bytes encoded) in FCGI_PARAMS records at p: one record
 * written straight in (the usual case), else the whole stream framed in
 * records. Returns the end, NULL: no memory. */
static char *
write_params(rx_http_request_t *r, char *p, const rx_array_t *pairs,
    size_t len)
{
    const pair_t *pr = pairs->elts;
    rx_uint_t     i;

    if (len && len <= RX_FCGI_MAX_CONTENT) {
        size_t pad = rx_fcgi_padding(len);

        rx_fcgi_write_header(p, RX_FCGI_PARAMS, RX_FCGI_ID, len, pad);
        p += RX_FCGI_HEADER_LEN;
        for (i = 0; i < pairs->nelts; i++) {
            p = rx_fcgi_write_pair(p, pr[i].name.data, pr[i].name.len,
                                   pr[i].value.data, pr[i].value.len);
        }
        memset(p, 0, pad);
        p += pad;
    } else if (len) {
        /* split in records: written whole first, then framed */
        char *stream = rx_pnalloc(r->pool, len), *q;

        if (stream == NULL) {
            return NULL;
        }
        q = stream;
        for (i = 0; i < pairs->nelts; i++) {
            q = rx_fcgi_write_pair(q, pr[i].name.data, pr[i].name.len,
                                   pr[i].value.data, pr[i].value.len);
        }
        p = rx_fcgi_frame(p, RX_FCGI_PARAMS, RX_FCGI_ID, stream, len,
                          RX_FCGI_MAX_CONTENT);
    }
    return p;
}

/* BEGIN_REQUEST and the PARAMS stream (with its empty closing record);
 * with end_stdin, the empty STDIN record too (a request without a body
 * goes out as this one buffer). */
rx_buf_t *
rx_http_fastcgi_begin_and_params(rx_http_request_t *r, rx_http_fastcgi_loc_conf_t *flcf,
    bool end_stdin)
{
    rx_array_t *pairs = collect_params(r, flcf);
    pair_t     *pr;
    rx_buf_t   *b;
    rx_uint_t   i;
    size_t      len = 0;
    char       *p;

    if (pairs == NULL) {
        return NULL;
    }
    pr = pairs->elts;
    for (i = 0; i < pairs->nelts; i++) {
        len += rx_fcgi_pair_size(pr[i].name.len, pr[i].value.len);
    }
    b = rx_create_temp_buf(r->pool, 2 * RX_FCGI_HEADER_LEN
                           + rx_fcgi_framed_size(len, RX_FCGI_MAX_CONTENT)
                           + (end_stdin ? 2 : 1) * RX_FCGI_HEADER_LEN);
    if (b == NULL) {
        return NULL;
    }
    p = b->last;
    rx_fcgi_write_header(p, RX_FCGI_BEGIN_REQUEST, RX_FCGI_ID, 8, 0);
    p += RX_FCGI_HEADER_LEN;
    memset(p, 0, 8);
    p[1] = RX_FCGI_RESPONDER;
    p[2] = flcf->keep_conn ? RX_FCGI_KEEP_CONN : 0;
    p += 8;
    p = write_params(r, p, pairs, len);
    if (p == NULL) {
        return NULL;
    }
    rx_fcgi_write_header(p, RX_FCGI_PARAMS, RX_FCGI_ID, 0, 0);
    p += RX_FCGI_HEADER_LEN;
    if (end_stdin) {
        rx_fcgi_write_header(p, RX_FCGI_STDIN, RX_FCGI_ID, 0, 0);
        p += RX_FCGI_HEADER_LEN;
    }
    b->last = p;
    return b;
}
