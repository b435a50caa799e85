/*
 * http_response.c: how handlers answer: send_header and output_filter
 * enter the filter chains, which the filter modules build in the order of
 * core/modules.c (today: headers -> userid -> gunzip -> sub -> charset ->
 * gzip -> chunked, then the header serialiser and the writer), and small helpers
 * for whole responses and extra headers. A subrequest's output goes to http_subrequest.c
 * instead of the filters.
 */
#include "http.h"

rx_http_output_header_filter_pt rx_http_top_header_filter;
rx_http_output_body_filter_pt   rx_http_top_body_filter;

/* Called in each worker as it starts (the chains are the process's, and
 * a worker runs one cycle: a reload that fails half-way leaves the
 * master's running cycle and its future workers alone): the serialiser
 * and the writer end both chains, and every filter module active in the
 * cycle (core/modules.c's on-demand list) puts itself on top of them, from
 * the last in core/modules.c to the first. Returns how many did. */
rx_uint_t
rx_http_init_filters(const rx_cycle_t *cycle)
{
    rx_http_filters_t top = { rx_http_header_filter, rx_http_write_filter };
    rx_uint_t         i, n = 0;

    for (i = rx_modules_n; i-- > 0; ) {
        const rx_http_module_t *ctx = rx_modules[i]->ctx;

        if (rx_modules[i]->type == RX_HTTP_MODULE && ctx->init_filters
            && rx_module_active(cycle, rx_modules[i])) {
            ctx->init_filters(&top);
            n++;
        }
    }
    rx_http_top_header_filter = top.header;
    rx_http_top_body_filter = top.body;
    return n;
}

rx_int_t
rx_http_send_header(rx_http_request_t *r)
{
    if (r->header_sent) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "header already sent");
        return RX_ERROR;
    }
    if (r->err_status) {
        r->headers_out.status = r->err_status;
        r->headers_out.status_line.len = 0;
    }
    r->header_sent = 1;
    if (r->client_gone && !r->subrequest) {
        return RX_OK;            /* nobody to send it to: no filter runs */
    }
    if (r->in_body) {
        return rx_http_top_header_filter(r);  /* stops at http_postpone.c */
    }
    if (r->subrequest) {
        return rx_http_subrequest_header(r);    /* nothing reaches the client */
    }
    rx_http_limit_rate_start(r);
    return rx_http_top_header_filter(r);
}

rx_int_t
rx_http_output_filter(rx_http_request_t *r, rx_chain_t *in)
{
    if (r->subrequest && !r->in_body) {
        return rx_http_subrequest_output(r, in);
    }
    if (r->client_gone && !r->subrequest) {
        /* nobody to send it to: dropped, the end noted (http_send.c) */
        rx_chain_t *cl;

        for (cl = in; cl; cl = cl->next) {
            r->response_done |= cl->buf->last_buf;
        }
        r->response_done |= in == NULL;
        rx_http_connection_send(r->hc);
        return RX_OK;
    }
    if (in == NULL) {
        /* "nothing more": an empty last buffer ends the response */
        rx_buf_t *b = rx_calloc_buf(r->pool);
        in = rx_alloc_chain_link(r->pool);
        if (b == NULL || in == NULL) {
            return RX_ERROR;
        }
        b->last_buf = 1;
        b->sync = 1;
        in->buf = b;
    }
    return rx_http_top_body_filter(r, in);
}

rx_int_t
rx_http_send_response(rx_http_request_t *r, rx_uint_t status,
    const rx_str_t *content_type, const rx_str_t *body)
{
    rx_chain_t *cl = NULL;
    rx_int_t    rc;
    rx_uint_t   pre;

    if (status == RX_HTTP_OK && r->headers_out.last_modified_time != -1) {
        /* validators set (empty_gif): the preconditions apply, as in
         * nginx's not-modified filter */
        pre = rx_http_test_preconditions(r, &(rx_str_t) rx_null_string,
                                         r->headers_out.last_modified_time);
        if (pre == RX_HTTP_NOT_MODIFIED) {
            return rx_http_send_not_modified(r);
        }
        if (pre) {
            return (rx_int_t) pre;
        }
    }
    r->headers_out.status = status;
    if (content_type) {
        r->headers_out.content_type = *content_type;
    }
    r->headers_out.content_length_n = body ? (int64_t) body->len : 0;
    rc = rx_http_send_header(r);
    if (rc == RX_ERROR) {
        return rc;
    }
    if (body && body->len && !r->header_only) {
        cl = rx_chain_from_text(r->pool, body->data, body->len, true);
        if (cl == NULL) {
            return RX_ERROR;
        }
    }
    return rx_http_output_filter(r, cl);
}

rx_table_elt_t *
rx_http_add_header_out(rx_http_request_t *r, const char *key,
    const rx_str_t *value)
{
    rx_table_elt_t *h = rx_array_push(&r->headers_out.headers);

    if (h == NULL) {
        return NULL;
    }
    h->key.data = (char *) key;
    h->key.len = strlen(key);
    h->value = *value;
    h->lowcase_key = NULL;
    h->deleted = false;
    return h;
}

void
rx_http_clear_content_length(rx_http_request_t *r)
{
    r->headers_out.content_length_n = -1;
}

/* The content type of the URI's extension (types { } / mime.types). */
void
rx_http_set_content_type(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_type_t          *t = clcf->types ? clcf->types->elts : NULL;
    rx_uint_t                i;

    if (r->headers_out.content_type.len) {
        return;
    }
    if (r->exten.len && t) {
        for (i = 0; i < clcf->types->nelts; i++) {
            if (t[i].exten.len == r->exten.len
                && strncasecmp(t[i].exten.data, r->exten.data, r->exten.len) == 0) {
                r->headers_out.content_type = t[i].name;
                return;
            }
        }
    }
    r->headers_out.content_type = clcf->default_type;
}

