/*
 * http_v2_header.c: a response's header as HTTP/2 fields (the framing's
 * send_header): :status, the fields the request layer keeps apart (date,
 * server, content type and length, last-modified, etag, location), then
 * its list without HTTP/1.1's connection-specific fields, names in lower
 * case; http_v2_stream.c encodes them (HPACK) and submits them as
 * HEADERS, the body's DATA after them.
 */
#include "http_v2_int.h"
#include "clock.h"

/* Connection-specific fields have no place in HTTP/2 (RFC 9113 8.2.2). */
static bool
hop_by_hop(const rx_str_t *k)
{
    static const char *const names[] = { "connection", "keep-alive",
        "proxy-connection", "transfer-encoding", "upgrade" };
    rx_uint_t i;

    for (i = 0; i < rx_nelems(names); i++) {
        if (k->len == strlen(names[i]) && strncasecmp(k->data, names[i], k->len) == 0) {
            return true;
        }
    }
    return false;
}

static void
nv(rx_http_v2_nv_t *v, const char *name, const char *value, size_t vlen)
{
    v->name = name;
    v->namelen = strlen(name);
    v->value = value;
    v->valuelen = vlen;
}

/* n in decimal, at least min digits, at p; returns its length (the hot
 * path formats without printf: ~3 % of a worker's CPU went to it). */
static size_t
decimal(char *p, uint64_t n, size_t min)
{
    char    tmp[24], *t = tmp + sizeof(tmp);
    size_t  len;

    do {
        *--t = (char) ('0' + n % 10);
        n /= 10;
    } while (n || (size_t) (tmp + sizeof(tmp) - t) < min);
    len = (size_t) (tmp + sizeof(tmp) - t);
    memcpy(p, t, len);
    return len;
}

/* :status, server, date: the fields every response has. */
static rx_int_t
fixed_fields(rx_http_request_t *r, rx_http_v2_nv_t *nva, size_t *n)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_headers_out_t   *ho = &r->headers_out;
    char                    *status = rx_pnalloc(r->pool, 4);

    if (status == NULL) {
        return RX_ERROR;
    }
    nv(&nva[(*n)++], ":status", status,
       decimal(status, ho->status ? ho->status : RX_HTTP_OK, 3));
    if (!(ho->server && !ho->server->deleted)) {
        const char *sv = clcf->server_tokens ? RINGX_VER : RINGX_NAME;

        nv(&nva[(*n)++], "server", sv, strlen(sv));
    }
    nv(&nva[(*n)++], "date", rx_http_time, strlen(rx_http_time));
    return RX_OK;
}

/* content-type (with its charset), content-length, last-modified: the
 * fields the request layer keeps apart from the list. */
static rx_int_t
entity_fields(rx_http_request_t *r, rx_http_v2_nv_t *nva, size_t *n)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    char                  *p;

    if (ho->content_type.len) {
        size_t len = ho->content_type.len;

        p = rx_pnalloc(r->pool, len + ho->charset.len + 10);
        if (p == NULL) {
            return RX_ERROR;
        }
        memcpy(p, ho->content_type.data, len);
        if (ho->charset.len) {
            memcpy(p + len, "; charset=", 10);
            memcpy(p + len + 10, ho->charset.data, ho->charset.len);
            len += 10 + ho->charset.len;
        }
        nv(&nva[(*n)++], "content-type", p, len);
    }
    if (ho->content_length_n >= 0) {
        p = rx_pnalloc(r->pool, 24);
        if (p == NULL) {
            return RX_ERROR;
        }
        nv(&nva[(*n)++], "content-length", p,
           decimal(p, (uint64_t) ho->content_length_n, 1));
    }
    if (ho->last_modified_time != -1) {
        p = rx_pnalloc(r->pool, 64);
        if (p == NULL) {
            return RX_ERROR;
        }
        rx_http_date(p, ho->last_modified_time);
        nv(&nva[(*n)++], "last-modified", p, strlen(p));
    }
    return RX_OK;
}

/* The list's fields without the connection-specific ones; the encoder
 * writes their names in lower case (RFC 9113 8.2.2). */
static rx_int_t
list_fields(rx_http_request_t *r, rx_http_v2_nv_t *nva, size_t *n)
{
    rx_http_headers_out_t *ho = &r->headers_out;
    rx_table_elt_t        *h = ho->headers.elts;
    size_t                 i;

    for (i = 0; i < ho->headers.nelts; i++) {
        rx_http_v2_nv_t *v;

        if (h[i].deleted || h[i].key.len == 0 || hop_by_hop(&h[i].key)) {
            continue;
        }
        v = &nva[(*n)++];
        v->name = h[i].key.data;
        v->namelen = h[i].key.len;
        v->value = h[i].value.data;
        v->valuelen = h[i].value.len;
    }
    return RX_OK;
}

/* The framing's send_header: the response header as a HEADERS frame. */
rx_int_t
rx_http_v2_send_header(rx_http_request_t *r)
{
    rx_http_v2_nv_t *nva;
    size_t      n = 0;

    nva = rx_palloc(r->pool, (r->headers_out.headers.nelts + 6)
                             * sizeof(rx_http_v2_nv_t));
    if (nva == NULL
        || fixed_fields(r, nva, &n) != RX_OK
        || entity_fields(r, nva, &n) != RX_OK
        || list_fields(r, nva, &n) != RX_OK) {
        return RX_ERROR;
    }
    return rx_http_v2_stream_submit(r, nva, n);
}
