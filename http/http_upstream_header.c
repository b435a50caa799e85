/*
 * http_upstream_header.c: the upstream's response header on its way to
 * the client: hop-by-hop and *_hide_header fields dropped, Location,
 * Refresh and Set-Cookie rewritten by the protocol's hooks, the fields the
 * filters look at found; what a status means for *_next_upstream and
 * error_page; and X-Accel-Redirect, which ends the exchange and goes on at
 * another location. It decides nothing of the exchange's course: that is
 * http_upstream.c's process_header.
 */
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "http_uri.h"

/* A header name, lower case, against a literal: the length first (most
 * names are not the one asked for; this runs for every upstream header). */
static bool
lc_eq(const rx_table_elt_t *e, const char *lit, size_t len)
{
    return e->key.len == len && memcmp(e->lowcase_key, lit, len) == 0;
}

#define LC_IS(e, lit)  lc_eq(e, lit, sizeof(lit) - 1)

/* Hop-by-hop fields (RFC 9110 7.6.1), never passed on. */
static const rx_str_t hop[] = {
    rx_string("connection"), rx_string("keep-alive"),
    rx_string("transfer-encoding"), rx_string("te"),
    rx_string("trailer"), rx_string("upgrade"),
    rx_string("proxy-connection")
};

/* A name's bit in a mask of lengths: its length, or 63 for 63 and more. */
static uint64_t
len_bit(size_t len)
{
    return 1ULL << rx_min(len, 63);
}

uint64_t
rx_http_upstream_hidden_lens(const rx_array_t *hide_headers)
{
    const rx_str_t *s;
    uint64_t        lens = 0;
    rx_uint_t       i;

    for (i = 0; i < sizeof(hop) / sizeof(hop[0]); i++) {
        lens |= len_bit(hop[i].len);
    }
    if (hide_headers && hide_headers != RX_CONF_UNSET_PTR) {
        s = hide_headers->elts;
        for (i = 0; i < hide_headers->nelts; i++) {
            lens |= len_bit(s[i].len);
        }
    }
    return lens;
}

static bool
hidden(const rx_http_upstream_conf_t *conf, const rx_table_elt_t *e,
    bool upgrade)
{
    const rx_str_t *s;
    rx_uint_t       i;

    if (conf->hidden_lens && !(conf->hidden_lens & len_bit(e->key.len))) {
        return false;     /* no name of that length is hidden (most are not) */
    }
    if (upgrade && LC_IS(e, "upgrade")) {
        return false;        /* the protocol switched to */
    }
    for (i = 0; i < sizeof(hop) / sizeof(hop[0]); i++) {
        if (lc_eq(e, hop[i].data, hop[i].len)) {
            return true;
        }
    }
    if (conf->hide_headers) {
        s = conf->hide_headers->elts;
        for (i = 0; i < conf->hide_headers->nelts; i++) {
            if (lc_eq(e, s[i].data, s[i].len)) {
                return true;
            }
        }
    }
    return false;
}

/* The upstream's header becomes the client's. */
rx_int_t
rx_http_upstream_copy_headers(rx_http_upstream_t *u)
{
    rx_http_request_t *r = u->r;
    rx_http_upstream_headers_in_t *h = &u->headers_in;
    rx_table_elt_t    *in = h->headers.elts, *out;
    rx_uint_t          i;

    if ((h->status >= RX_HTTP_BAD_REQUEST
         && rx_http_cache_stale_allowed(r, (rx_int_t) h->status, true))
        || rx_http_cache_revalidated(u)) {
        /* an error status where the cache may answer with a stale copy,
         * or a 304 saying the stored response is still good */
        rx_http_upstream_finalize(u, (rx_int_t) h->status);
        return RX_DONE;
    }
    r->headers_out.status = h->status;
    r->headers_out.status_line = h->status_line;
    r->headers_out.content_length_n = h->content_length_n;
    for (i = 0; i < h->headers.nelts; i++) {
        const rx_table_elt_t *k = &in[i];

        if (hidden(u->conf, k, h->status == RX_HTTP_SWITCHING_PROTOCOLS)) {
            continue;
        }
        if (LC_IS(k, "content-length")) {
            continue;          /* content_length_n carries it */
        }
        if (LC_IS(k, "content-type")) {
            r->headers_out.content_type = in[i].value;
            continue;
        }
        out = rx_array_push(&r->headers_out.headers);
        if (out == NULL) {
            return RX_ERROR;
        }
        *out = in[i];
        if (LC_IS(k, "location") || LC_IS(k, "refresh")) {
            rx_int_t rc = u->rewrite_redirect ? u->rewrite_redirect(u, out)
                                              : RX_DECLINED;
            if (rc == RX_ERROR) {
                return RX_ERROR;
            }
            /* as nginx: the header filter makes a Location absolute when
             * proxy_redirect rewrote it; the upstream's own relative one
             * goes out as it came */
            if (LC_IS(k, "location")
                && (rc == RX_OK || out->value.len == 0
                    || out->value.data[0] != '/')) {
                r->headers_out.location = out;
            }
        } else if (LC_IS(k, "set-cookie")) {
            if (u->rewrite_cookie && u->rewrite_cookie(u, out) == RX_ERROR) {
                return RX_ERROR;
            }
        } else if (LC_IS(k, "server")) {
            r->headers_out.server = out;    /* passed: replaces ours */
        } else if (LC_IS(k, "etag")) {
            r->headers_out.etag = out;
        } else if (LC_IS(k, "content-encoding")) {
            r->headers_out.content_encoding = out;
        } else if (LC_IS(k, "expires")) {
            r->headers_out.expires = out;
        } else if (LC_IS(k, "accept-ranges")) {
            r->headers_out.accept_ranges = out;
        }
    }
    /* the header as the client gets it is what the cache keeps */
    rx_http_cache_store_start(u);
    return RX_OK;
}

bool
rx_http_upstream_has_error_page(rx_http_request_t *r, rx_uint_t status)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_err_page_t      *ep;
    rx_uint_t                i;

    if (clcf->error_pages == NULL) {
        return false;
    }
    ep = clcf->error_pages->elts;
    for (i = 0; i < clcf->error_pages->nelts; i++) {
        if (ep[i].status == status) {
            return true;
        }
    }
    return false;
}

/* The *_next_upstream condition of a status (0: none). */
rx_uint_t
rx_http_upstream_status_ft(rx_uint_t status)
{
    switch (status) {
    case 500: return RX_HTTP_UPSTREAM_FT_HTTP_500;
    case 502: return RX_HTTP_UPSTREAM_FT_HTTP_502;
    case 503: return RX_HTTP_UPSTREAM_FT_HTTP_503;
    case 504: return RX_HTTP_UPSTREAM_FT_HTTP_504;
    case 403: return RX_HTTP_UPSTREAM_FT_HTTP_403;
    case 404: return RX_HTTP_UPSTREAM_FT_HTTP_404;
    case 429: return RX_HTTP_UPSTREAM_FT_HTTP_429;
    default:  return 0;
    }
}

/*
 * X-Accel-Redirect: the upstream is done with; the request goes on at a
 * named location as it is, or at a URI as a GET (HEAD stays HEAD), as in
 * nginx. The URI is the upstream's, which may carry what a client put in
 * it, so it is checked first: one that could climb out of the location it
 * names ("..", also escaped, or a NUL) gets 404, not the file.
 */
void
rx_http_upstream_accel_redirect(rx_http_upstream_t *u, const rx_str_t *value)
{
    rx_http_request_t *r = u->r;
    rx_str_t           path, args;
    rx_int_t           rc = RX_OK;
    bool               named = value->len && value->data[0] == '@';

    if (!named) {
        rc = rx_http_parse_unsafe_uri(r->pool, value, &path, &args);
    }
    if (rc == RX_DECLINED) {
        rx_http_request_log_error_action(r, RX_LOG_ERR, 0, u->action,
            "unsafe URI \"%.*s\" was detected", (int) value->len, value->data);
    }
    rx_http_upstream_end(u);
    r->write_handler = NULL;
    if (named) {
        rx_http_named_location(r, value);
        return;
    }
    if (rc != RX_OK) {
        rx_http_finalize_request(r, rc == RX_DECLINED ? RX_HTTP_NOT_FOUND
                                                      : RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    if (r->method != RX_HTTP_HEAD) {
        r->method = RX_HTTP_GET;
        rx_str_set(&r->method_name, "GET");
    }
    rx_http_internal_redirect(r, &path, args.data ? &args : NULL);
}

static void
rebase(rx_table_elt_t **field, rx_table_elt_t *from, rx_table_elt_t *to)
{
    if (*field) {
        *field = to + (*field - from);
    }
}

/* A new header of the upstream's response; when the array grows into new
 * memory, the pointers to headers found earlier move with it. */
rx_table_elt_t *
rx_http_upstream_header_push(rx_http_upstream_headers_in_t *h)
{
    rx_table_elt_t *old = h->headers.elts, *e = rx_array_push(&h->headers);

    if (e != NULL && h->headers.elts != old) {
        rebase(&h->location, old, h->headers.elts);
        rebase(&h->x_accel_redirect, old, h->headers.elts);
        rebase(&h->x_accel_buffering, old, h->headers.elts);
    }
    return e;
}
