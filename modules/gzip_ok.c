/*
 * gzip_ok.c: may this request get a gzip-compressed response? Parses
 * Accept-Encoding (RFC 9110: codings, parameters, q-values) and applies
 * gzip_disable, gzip_http_version and gzip_proxied.
 */
#include <ctype.h>
#include "gzip.h"
#include "http_date.h"
#include "regex.h"
#include "clock.h"



static bool
is_tchar(char c)
{
    return isalnum((unsigned char) c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* RFC 9110 qvalue in thousandths; -1 when malformed. */
static rx_int_t
parse_qvalue(const char *p, const char *end)
{
    rx_int_t q, scale = 100;

    if (p == end || (*p != '0' && *p != '1')) {
        return -1;
    }
    q = (*p++ - '0') * 1000;
    if (p < end && *p == '.') {
        for (p++; p < end && scale && isdigit((unsigned char) *p); p++) {
            q += (*p - '0') * scale;
            scale /= 10;
        }
    }
    return p == end && q <= 1000 ? q : -1;
}

/*
 * Does Accept-Encoding accept gzip? Each element is a coding with optional
 * parameters; "gzip" (or its alias "x-gzip") with q > 0 accepts, and
 * without it "*" with q > 0 does. A malformed q counts as 0 and a
 * malformed element is skipped.
 */
bool
rx_http_gzip_accepts(const rx_str_t *ae)
{
    const char *p = ae->data, *end = p + ae->len, *name, *name_end, *pv;
    rx_int_t    gzip = -1, star = -1, q;
    bool        bad;

    while (p < end) {
        while (p < end && (RX_GZIP_OWS(*p) || *p == ',')) p++;
        name = p;
        while (p < end && is_tchar(*p)) p++;
        name_end = p;
        q = 1000;
        bad = name == name_end;
        while (p < end && RX_GZIP_OWS(*p)) p++;
        while (!bad && p < end && *p == ';') {
            const char *pn;
            size_t      pnl;

            for (p++; p < end && RX_GZIP_OWS(*p); p++) { }
            pn = p;
            while (p < end && is_tchar(*p)) p++;
            pnl = (size_t) (p - pn);
            while (p < end && RX_GZIP_OWS(*p)) p++;
            if (pnl == 0 || p == end || *p != '=') {
                bad = true;
                break;
            }
            for (p++; p < end && RX_GZIP_OWS(*p); p++) { }
            pv = p;
            if (p < end && *p == '"') {
                for (p++; p < end && *p != '"'; p++) {
                    if (*p == '\\' && p + 1 < end) p++;
                }
                p = p < end ? p + 1 : p;
            } else {
                while (p < end && is_tchar(*p)) p++;
            }
            if (pnl == 1 && (*pn == 'q' || *pn == 'Q')) {
                q = parse_qvalue(pv, p);
                if (q < 0) q = 0;
            }
            while (p < end && RX_GZIP_OWS(*p)) p++;
        }
        if (p < end && *p != ',') {
            bad = true;
        }
        while (p < end && *p != ',') p++;        /* to the next element */
        if (bad) {
            continue;
        }
        rx_str_t coding = { (size_t) (name_end - name), (char *) name };
        if (rx_str_caseeq(&coding, "gzip")
            || rx_str_caseeq(&coding, "x-gzip")) {
            gzip = rx_max(gzip, q);
        } else if (rx_str_eq(&coding, "*")) {
            star = rx_max(star, q);
        }
    }
    return gzip >= 0 ? gzip > 0 : star > 0;
}

rx_table_elt_t *
rx_http_gzip_find_header(rx_array_t *headers, const char *name)
{
    rx_table_elt_t *h = headers->elts;
    rx_uint_t       i;

    for (i = 0; i < headers->nelts; i++) {
        if (!h[i].deleted && rx_str_caseeq(&h[i].key, name)) {
            return &h[i];
        }
    }
    return NULL;
}

/* Is token one of the comma-separated directives of a Cache-Control? */
static bool
has_token(const rx_str_t *v, const char *token)
{
    size_t      n = strlen(token);
    const char *p = v->data, *end = v->data + v->len;

    while (p < end) {
        while (p < end && (RX_GZIP_OWS(*p) || *p == ',')) p++;
        if ((size_t) (end - p) >= n && strncasecmp(p, token, n) == 0
            && (p + n == end || p[n] == ',' || p[n] == '='
                || RX_GZIP_OWS(p[n]))) {
            return true;
        }
        while (p < end && *p != ',') p++;
    }
    return false;
}

/* gzip_proxied for a request that came through a proxy (Via), in nginx's
 * order: off, any, auth, then Expires, Cache-Control, and the validators;
 * a response that has none of those is compressed (as nginx does). */
static bool
proxied_ok(rx_http_request_t *r, rx_uint_t p)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_table_elt_t        *cc;

    if (p & RX_GZIP_PROXIED_OFF) {
        return false;
    }
    if ((p & RX_GZIP_PROXIED_ANY)
        || ((p & RX_GZIP_PROXIED_AUTH) && r->headers_in.authorization)) {
        return true;
    }
    if (ho->expires && !ho->expires->deleted) {
        time_t t = rx_http_parse_date(ho->expires->value.data,
                                      ho->expires->value.len);
        return (p & RX_GZIP_PROXIED_EXPIRED) && t != -1 && t < rx_time_sec;
    }
    cc = rx_http_gzip_find_header(&ho->headers, "Cache-Control");
    if (cc) {
        return ((p & RX_GZIP_PROXIED_NO_CACHE)
                && has_token(&cc->value, "no-cache"))
               || ((p & RX_GZIP_PROXIED_NO_STORE)
                   && has_token(&cc->value, "no-store"))
               || ((p & RX_GZIP_PROXIED_PRIVATE)
                   && has_token(&cc->value, "private"));
    }
    if ((p & RX_GZIP_PROXIED_NO_LM) && ho->last_modified_time != -1) {
        return false;
    }
    if ((p & RX_GZIP_PROXIED_NO_ETAG) && ho->etag && !ho->etag->deleted) {
        return false;
    }
    return true;
}

/* The client's side: Accept-Encoding, msie6, HTTP version, proxies,
 * gzip_disable (nginx's ngx_http_gzip_ok). */
bool
rx_http_gzip_ok(rx_http_request_t *r, rx_http_gzip_conf_t *conf)
{
    rx_table_elt_t *ua = r->headers_in.user_agent;
    rx_regex_t    **re;
    rx_uint_t       i;

    if (r->headers_in.accept_encoding == NULL
        || !rx_http_gzip_accepts(&r->headers_in.accept_encoding->value)) {
        return false;
    }
    if (conf->disable_msie6 && r->headers_in.msie6) {
        return false;
    }
    if (r->http_version < conf->http_version) {
        return false;
    }
    if (rx_http_gzip_find_header(&r->headers_in.headers, "Via")
        && !proxied_ok(r, conf->proxied)) {
        return false;
    }
    if (conf->disable && ua) {
        re = conf->disable->elts;
        for (i = 0; i < conf->disable->nelts; i++) {
            if (rx_regex_exec(re[i], ua->value.data, ua->value.len, NULL, 0)
                != RX_DECLINED) {
                return false;
            }
        }
    }
    return true;
}
