/*
 * http_request_body_file.c: a request body larger than
 * client_body_buffer_size, read for a handler that allows it (the proxy
 * with proxy_request_buffering on): the first client_body_buffer_size
 * bytes stay in memory, the rest goes to a temporary file in
 * client_body_temp_path through the ring. The client's reading stops while
 * more than two chunks wait for the disk. The handler's post_handler runs
 * once the whole body is written.
 */
#include "http.h"
#include "http_temp_file.h"

static void
body_file_op(rx_http_request_t *r, const rx_cqe_t *cqe);

static void
release(void *data)
{
    rx_http_temp_free(data);
}

static void
fail(rx_http_request_t *r, const char *what, int err)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    char                     uid[24];

    rx_http_request_log_error(r, RX_LOG_CRIT, 0, "%s a temporary file in "
        "\"%s\" for the client request body failed (%d: %s); the workers run "
        "as user \"%s\", who must be able to write to client_body_temp_path",
        what, clcf->client_body_temp_path.data, err, strerror(err),
        rx_http_temp_worker_user(uid, sizeof(uid)));
    r->op_handler = NULL;
    r->request_body->reader.post_handler = NULL;
    r->keepalive = 0;
    rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
}

static void
check_pause(rx_http_request_t *r)
{
    rx_http_request_body_t *rb = r->request_body;
    size_t                  backlog = rx_http_temp_backlog(rb->file);

    if (!rb->paused && backlog > 2 * RX_HTTP_TEMP_CHUNK) {
        rb->paused = true;
        r->conn->transport->stop_read(r->conn);
    } else if (rb->paused && backlog <= RX_HTTP_TEMP_CHUNK) {
        rb->paused = false;
        r->conn->transport->start_read(r->conn);
    }
}

rx_int_t
rx_http_body_spill(rx_http_request_t *r, const char *data, size_t len)
{
    rx_http_request_body_t *rb = r->request_body;

    if (rb->file == NULL) {
        rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                           rx_http_core_module);
        rx_pool_cleanup_t       *cln = rx_pool_cleanup_add(r->pool, 0);

        rb->file = rx_palloc(r->pool, sizeof(rx_http_temp_file_t));
        if (rb->file == NULL || cln == NULL) {
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        rx_http_temp_init(rb->file, clcf->client_body_temp_path.data);
        if (clcf->client_body_in_file_only != RX_HTTP_BODY_FILE_OFF
            && rx_http_temp_set_named(rb->file, r->pool,
                                      clcf->client_body_in_file_only
                                      == RX_HTTP_BODY_FILE_ON) != RX_OK) {
            return RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        cln->handler = release;
        cln->data = rb->file;
        /* nginx's warning, once per request (not for a body that is
         * meant to be a file) */
        if (!rb->reader.file_only) {
            rx_http_request_log_error(r, RX_LOG_WARN, 0, "a client request "
                "body is buffered to a temporary file in %s",
                clcf->client_body_temp_path.data);
        }
        r->op_handler = body_file_op;
    }
    if (rx_http_temp_append(rb->file, data, len) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    rx_http_temp_kick(r, rb->file);
    check_pause(r);
    return RX_OK;
}

const char *
rx_http_request_body_file_name(rx_http_request_t *r)
{
    rx_http_request_body_t *rb = r->request_body;

    return rb && rb->file ? rb->file->name : NULL;
}

void
rx_http_request_body_complete(rx_http_request_t *r)
{
    rx_http_request_body_t *rb = r->request_body;

    if (rb->done || rb->reader.post_handler == NULL) {
        return;
    }
    if (rb->file && !rx_http_temp_settled(rb->file)) {
        rb->done_pending = true;     /* when the last write is done */
        rx_http_temp_kick(r, rb->file);
        return;
    }
    rb->done = true;
    rb->done_pending = false;
    if (r->headers_in.chunked && r->body_mode == RX_HTTP_BODY_KEEP) {
        /* as nginx: a chunked body read whole has a length now
         * ($content_length, FastCGI's CONTENT_LENGTH) */
        r->headers_in.content_length_n = rb->received;
    }
    if (rb->file) {
        r->op_handler = NULL;
    }
    rb->reader.post_handler(r);
}

static void
body_file_op(rx_http_request_t *r, const rx_cqe_t *cqe)
{
    rx_http_request_body_t *rb = r->request_body;
    const char             *what;
    int                     err;

    if (rb == NULL || rb->file == NULL) {
        if (rx_op_kind(cqe->user_data) == RX_OP_OPEN && cqe->res >= 0) {
            close(cqe->res);
        }
        return;
    }
    switch (rx_http_temp_handle(rb->file, cqe, &err, &what)) {
    case RX_ERROR:
        fail(r, what, err);
        return;
    case RX_DECLINED:
        return;
    default:
        break;
    }
    rx_http_temp_kick(r, rb->file);
    check_pause(r);
    if (rb->done_pending && rx_http_temp_settled(rb->file)) {
        rx_http_request_body_complete(r);
    }
}
