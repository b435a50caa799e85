/*
 * http_body.c: the request body's one owner. Its rule: body bytes are
 * kept until the handler that answers decides what becomes of them.
 *
 *   UNCLAIMED --read (reader: kept)-------> KEEP    memory, then a temp file
 *             --read (reader: piece)------> STREAM  each piece to the handler
 *             --discard-------------------> DISCARD parsed and dropped
 *
 * While UNCLAIMED the connection does not parse the body at all: its bytes
 * wait in the input buffer (http_connection.c stops reading when too many
 * wait), through every asynchronous phase, internal redirect, try_files,
 * index and error_page hop. Only a handler that answers claims the body:
 * static once its file is open, the proxy and FastCGI when they start, the
 * special response once error_page has had its say, and the end of the
 * request for what nobody claimed. 100-continue goes out when a handler
 * claims a body the client has not sent yet. client_max_body_size is held
 * here for bodies that are read (a chunk that declares more is refused
 * before a byte of it is read); a discarded body is not held to it (nginx).
 * An HTTP/2 stream's body (body_raw) comes without framing, no parser:
 * rx_http_body_raw_bytes() hands its held bytes over.
 */
#include "http.h"
#include "http_parse.h"

bool
rx_http_body_claimed(const rx_http_request_t *r)
{
    return r->body_mode != RX_HTTP_BODY_UNCLAIMED || r->body_read
           || (r->headers_in.content_length_n <= 0 && !r->headers_in.chunked);
}

static rx_http_request_body_t *
body_state(rx_http_request_t *r)
{
    if (r->request_body == NULL) {
        r->request_body = rx_pcalloc(r->pool, sizeof(rx_http_request_body_t));
    }
    return r->request_body;
}

/* client_max_body_size for a body that is read: `more` bytes announced
 * (a chunk's size) or 0 when `received` bytes are in. */
static rx_int_t
too_large(rx_http_request_t *r, int64_t received, uint64_t more)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    int64_t                  max = clcf->client_max_body_size;

    if (max == 0 || r->err_status != 0
        || (r->body_mode != RX_HTTP_BODY_KEEP
            && r->body_mode != RX_HTTP_BODY_STREAM)
        || (received <= max && more <= (uint64_t) (max - received))) {
        return RX_OK;
    }
    if (more) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "client intended to send "
            "too large chunked body: %" PRId64 "+%" PRIu64 " bytes",
            received, more);
    } else {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "client intended to send "
            "too large chunked body: %" PRId64 " bytes", received);
    }
    return RX_HTTP_REQUEST_ENTITY_TOO_LARGE;
}

/* Parser callback: a chunk of `size` bytes follows. */
rx_int_t
rx_http_on_chunk_size(void *data, uint64_t size)
{
    rx_http_connection_t *hc = data;
    rx_http_request_t    *r = hc->r;

    return too_large(r, r->request_body ? r->request_body->received : 0, size);
}

static rx_int_t
keep_in_memory(rx_http_request_t *r, const char *at, size_t len)
{
    rx_http_request_body_t *rb = r->request_body;
    rx_chain_t             *cl = rx_chain_from_text(r->pool, at, len, false);

    if (cl == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (rb->last) rb->last->next = cl; else rb->bufs = cl;
    rb->last = cl;
    rb->in_memory += len;
    return RX_OK;
}

/* Parser callback: decoded body bytes, to wherever the claim said. */
rx_int_t
rx_http_on_body(void *data, const char *at, size_t len)
{
    rx_http_connection_t    *hc = data;
    rx_http_request_t       *r = hc->r;
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_http_request_body_t  *rb = body_state(r);
    rx_int_t                 rc = RX_OK;

    if (rb == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (r->body_mode == RX_HTTP_BODY_DISCARD) {
        goto done;                    /* dropped, and not counted */
    }
    rb->received += (int64_t) len;
    if ((rc = too_large(r, rb->received, 0)) != RX_OK) {
        return rc;
    }
    switch (r->body_mode) {
    case RX_HTTP_BODY_DISCARD:
        break;
    case RX_HTTP_BODY_STREAM:
        rc = rb->reader.piece(r, at, len);
        break;
    case RX_HTTP_BODY_KEEP:
        if (rb->file || (rb->reader.spill
                         && (rb->reader.file_only || rb->in_memory + len
                                              > clcf->client_body_buffer_size))) {
            rc = rx_http_body_spill(r, at, len);
            break;
        }
        /* fall through */
    case RX_HTTP_BODY_UNCLAIMED:
        /* never parsed while unclaimed (http_connection.c holds it); were
         * it, it would be kept, not lost */
        rc = keep_in_memory(r, at, len);
        break;
    }
done:
    if (rc == RX_OK && !hc->conn->sending) {
        rx_timer_add(&hc->conn->timer, clcf->client_body_timeout);
    }
    return rc;
}

/* "Expect: 100-continue" from an HTTP/1.1 client that has sent nothing of
 * its body yet: tell it to go on, whether the body will be read or
 * dropped (nginx does the same before discarding), unless the answer is
 * already out. */
static rx_int_t
send_continue(rx_http_request_t *r)
{
    static const char     cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
    rx_http_connection_t *hc = r->hc;
    rx_chain_t           *cl;

    if (r->headers_in.expect == NULL || r->expect_sent || r->body_read
        || r->header_sent || r->http_version < RX_HTTP_VERSION_11
        || (r->request_body && r->request_body->received > 0)
        || hc->in_len > hc->in_parsed) {
        return RX_OK;
    }
    cl = rx_chain_from_text(r->pool, cont, sizeof(cont) - 1, false);
    if (cl == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    r->expect_sent = 1;
    r->out = cl;
    rx_http_connection_send(hc);
    return RX_OK;
}

rx_int_t
rx_http_read_client_request_body(rx_http_request_t *r,
    const rx_http_body_reader_t *reader)
{
    rx_http_request_body_t *rb;

    if (r->subrequest && r->request_body && r->main->background) {
        /* a background subrequest given the main request's kept body */
        return rx_http_background_read_body(r, reader);
    }
    if (r->subrequest) {
        /* it has no body, and the parent's is not its to take */
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "a subrequest cannot "
                                  "read the request body");
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    rb = body_state(r);
    if (rb == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (r->body_mode == RX_HTTP_BODY_STREAM
        || r->body_mode == RX_HTTP_BODY_DISCARD) {
        /* a second reader after an internal redirect (X-Accel-Redirect):
         * the bytes went to the first one, or were dropped; this one gets
         * an empty body, and what is still to come is dropped */
        rb->consumed = true;
        rb->bufs = rb->last = NULL;
        rb->received = 0;
        rb->in_memory = 0;
        r->body_mode = r->body_read ? RX_HTTP_BODY_KEEP : RX_HTTP_BODY_DISCARD;
    } else {
        r->body_mode = reader->piece && !r->body_read ? RX_HTTP_BODY_STREAM
                                                      : RX_HTTP_BODY_KEEP;
    }
    rb->reader = *reader;
    if (reader->spill) {
        rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                           rx_http_core_module);
        /* client_body_in_file_only: every byte to a named file */
        if (clcf->client_body_in_file_only != RX_HTTP_BODY_FILE_OFF) {
            rb->reader.file_only = true;
        }
    }
    rb->done = false;
    /* the held bytes are parsed, or post_handler runs, after the caller
     * returns: a handler sets up what the pieces need first */
    rx_http_connection_resume_input(r->hc);
    return send_continue(r);
}

rx_int_t
rx_http_discard_request_body(rx_http_request_t *r)
{
    rx_int_t rc;

    if (r->body_read || r->body_mode == RX_HTTP_BODY_DISCARD) {
        return RX_OK;
    }
    if (r->body_mode != RX_HTTP_BODY_UNCLAIMED) {
        /* a reader claimed it: what it has read stays its own */
        return RX_OK;
    }
    r->body_mode = RX_HTTP_BODY_DISCARD;
    if (r->hc->close_after) {
        return RX_OK;         /* the connection ends with the answer */
    }
    rc = rx_http_parse_buffered_body(r->hc);
    if (rc != RX_OK) {
        return rc;
    }
    if (!r->body_read) {
        rx_http_connection_resume_input(r->hc);
    }
    return send_continue(r);
}

rx_int_t
rx_http_body_raw_bytes(rx_http_connection_t *hc)
{
    rx_http_request_t *r = hc->r;
    size_t             n = hc->in_len - hc->in_parsed;
    rx_int_t           rc = RX_OK;

    if (n == 0) {
        return RX_OK;
    }
    /* a body of unknown length is held to client_max_body_size piece by
     * piece, as a chunked one chunk by chunk */
    if (r->headers_in.chunked) {
        rc = rx_http_on_chunk_size(hc, n);
    }
    if (rc == RX_OK) {
        rc = rx_http_on_body(hc, hc->in + hc->in_parsed, n);
    }
    r->request_length += (int64_t) n;
    hc->in_len = hc->in_parsed = 0;      /* handed over, or refused */
    return rc;
}

/* parse_buffered_body for a body that comes without framing (a stream's
 * DATA, body_raw): the bytes here go to the owner (a discard drops them),
 * and the body is read once the framing said it ended. */
static rx_int_t
parse_raw_body(rx_http_connection_t *hc)
{
    rx_http_request_t *r = hc->r;
    rx_int_t           rc;

    if (r == NULL || r->body_read) {
        return RX_OK;
    }
    if ((rc = rx_http_body_raw_bytes(hc)) != RX_OK) {
        hc->close_after = 1;
        hc->parse_failed = 1;
        r->keepalive = 0;
        r->body_read = 1;
        return rc;
    }
    if (hc->body_ended) {
        r->body_read = 1;
    }
    return RX_OK;
}

/*
 * Runs the parser over body bytes already received. Returns RX_OK, or the
 * status of a broken body (the connection is then closed after the
 * answer).
 */
rx_int_t
rx_http_parse_buffered_body(rx_http_connection_t *hc)
{
    rx_http_request_t *r = hc->r;
    size_t             n;

    if (hc->body_raw) {
        return parse_raw_body(hc);
    }
    while (r && !r->body_read
           && (hc->in_parsed < hc->in_len || !rx_http_parser_idle(hc->parser))) {
        switch (rx_http_parser_execute(hc->parser, hc->in_parsed,
                                       hc->in_len - hc->in_parsed, &n)) {
        case RX_HTTP_PARSE_AGAIN:
            hc->in_parsed += n;
            r->request_length += (int64_t) n;
            return RX_OK;
        case RX_HTTP_PARSE_MESSAGE_DONE:
            hc->in_parsed += n;
            r->request_length += (int64_t) n;
            r->body_read = 1;
            return RX_OK;
        case RX_HTTP_PARSE_ERROR: {
            const char *reason = rx_http_parser_reason(hc->parser);
            hc->in_parsed += n;
            hc->close_after = 1;
            r->keepalive = 0;
            if (reason) {
                rx_http_request_log_error(r,
                    rx_http_parser_reason_level(hc->parser), 0, "%s", reason);
            }
            /* the parser stays in error: nothing more is read */
            hc->in_parsed = hc->in_len;
            hc->parse_failed = 1;
            r->body_read = 1;
            return (rx_int_t) rx_http_parser_status(hc->parser);
        }
        default:
            hc->in_parsed += n;
            return RX_OK;
        }
    }
    return RX_OK;
}
