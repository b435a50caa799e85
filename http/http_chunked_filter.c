/*
 * http_chunked_filter.c: chunked transfer coding for responses whose
 * length is unknown when the header goes out (HTTP/1.1 clients only; an
 * HTTP/1.0 client gets a close-delimited body instead), and the trailer
 * section add_trailer asked for after the last chunk.
 */
#include "http.h"

static rx_http_output_header_filter_pt next_header;
static rx_http_output_body_filter_pt   next_body;

static rx_int_t chunked_header_filter(rx_http_request_t *r);
static rx_int_t chunked_body_filter(rx_http_request_t *r, rx_chain_t *in);

/* The last filter before the serialiser and the writer (core/modules.c
 * lists it after every other filter). */
static void
init_filters(rx_http_filters_t *top)
{
    next_header = top->header;
    next_body = top->body;
    top->header = chunked_header_filter;
    top->body = chunked_body_filter;
}

static const rx_http_module_t chunked_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, init_filters
};

rx_module_t rx_http_chunked_filter_module = {
    "rx_http_chunked_filter_module", 0, 0, RX_HTTP_MODULE, &chunked_ctx,
    NULL, NULL, NULL, NULL, NULL
};

static bool
has_body(rx_http_request_t *r)
{
    rx_uint_t s = r->headers_out.status;
    return !r->header_only && s != RX_HTTP_NO_CONTENT
           && s != RX_HTTP_NOT_MODIFIED && s >= 200;
}

static rx_int_t
chunked_header_filter(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    if ((r->headers_out.content_length_n == -1 || r->expect_trailers)
        && has_body(r)) {
        if (r->hc->framing) {
            /* DATA frames delimit the body: nothing to chunk */
        } else if (r->http_version >= RX_HTTP_VERSION_11
            && clcf->chunked_transfer_encoding) {
            /* a trailer can only follow a chunked body: a known length
             * gives way to it, as in nginx */
            if (r->expect_trailers) {
                rx_http_clear_content_length(r);
            }
            r->chunked = 1;
        } else if (r->headers_out.content_length_n == -1) {
            r->keepalive = 0;     /* the end of the body is the close */
        }
    }
    return next_header(r);
}

/* Appends a link to a new chain; returns the link or NULL. */
static rx_chain_t *
append(rx_http_request_t *r, rx_chain_t ***ll, rx_buf_t *b, const char *text,
    size_t len)
{
    rx_chain_t *cl;

    if (b) {
        cl = rx_alloc_chain_link(r->pool);
        if (cl) cl->buf = b;
    } else {
        cl = rx_chain_from_text(r->pool, text, len, false);
    }
    if (cl) {
        **ll = cl;
        *ll = &cl->next;
    }
    return cl;
}

/* "%zx\r\n" without printf (once per chunk). */
static size_t
chunk_size_line(char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    char              tmp[2 * sizeof(size_t)], *t = tmp + sizeof(tmp);
    size_t            n;

    do {
        *--t = hex[size & 0xf];
        size >>= 4;
    } while (size);
    n = (size_t) (tmp + sizeof(tmp) - t);
    memcpy(out, t, n);
    out[n] = '\r';
    out[n + 1] = '\n';
    return n + 2;
}

/* The last chunk and the trailer section: "0\r\n", a "name: value\r\n"
 * line per trailer, "\r\n". Returns the link or NULL. */
static rx_chain_t *
last_chunk(rx_http_request_t *r)
{
    rx_array_t     *t = r->headers_out.trailers;
    rx_table_elt_t *h;
    rx_chain_t     *cl;
    rx_buf_t       *b;
    rx_uint_t       i;
    size_t          len = sizeof("0\r\n\r\n") - 1;

    if (t == NULL || t->nelts == 0) {
        return rx_chain_from_text(r->pool, "0\r\n\r\n", len, false);
    }
    h = t->elts;
    for (i = 0; i < t->nelts; i++) {
        len += h[i].key.len + sizeof(": \r\n") - 1 + h[i].value.len;
    }
    b = rx_create_temp_buf(r->pool, len);
    cl = b ? rx_alloc_chain_link(r->pool) : NULL;
    if (cl == NULL) {
        return NULL;
    }
    cl->buf = b;
    memcpy(b->last, "0\r\n", 3);
    b->last += 3;
    for (i = 0; i < t->nelts; i++) {
        memcpy(b->last, h[i].key.data, h[i].key.len);
        b->last += h[i].key.len;
        *b->last++ = ':';
        *b->last++ = ' ';
        memcpy(b->last, h[i].value.data, h[i].value.len);
        b->last += h[i].value.len;
        *b->last++ = '\r';
        *b->last++ = '\n';
    }
    *b->last++ = '\r';
    *b->last++ = '\n';
    return cl;
}

static rx_int_t
chunked_body_filter(rx_http_request_t *r, rx_chain_t *in)
{
    rx_chain_t *out = NULL, **ll = &out, *cl, *end;
    bool        last = false;
    char        hdr[24];

    if (!r->chunked || in == NULL) {
        return next_body(r, in);
    }
    for (cl = in; cl; cl = cl->next) {
        size_t size = rx_buf_size(cl->buf);

        if (cl->buf->last_buf) {
            last = true;
            cl->buf->last_buf = 0;
        }
        if (size == 0) {
            continue;
        }
        size_t n = chunk_size_line(hdr, size);
        if (append(r, &ll, NULL, hdr, n) == NULL
            || append(r, &ll, cl->buf, NULL, 0) == NULL
            || append(r, &ll, NULL, "\r\n", 2) == NULL) {
            return RX_ERROR;
        }
    }
    if (last) {
        end = last_chunk(r);
        if (end == NULL) {
            return RX_ERROR;
        }
        *ll = end;
        ll = &end->next;
        end->buf->last_buf = 1;
    }
    if (out == NULL) {
        return RX_OK;
    }
    return next_body(r, out);
}
