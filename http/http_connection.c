/*
 * http_connection.c: the HTTP connection state machine
 *
 *   WAIT --bytes--> HEADER --header parsed--> PROCESS --response sent-->
 *     keepalive: WAIT (or HEADER with pipelined bytes)
 *     close:     LINGER (drain the client) or closed
 *
 * Each waiting state has one timer on the connection: keepalive_timeout in
 * WAIT, client_header_timeout in HEADER, client_body_timeout or
 * send_timeout in PROCESS, lingering_timeout in LINGER. In WAIT the
 * connection holds no input buffer at all.
 */
#include <netinet/tcp.h>
#include "http.h"
#include "http_parse.h"
#include "http_server.h"
#include "http_stats.h"
#include "clock.h"
#include "tls.h"
#include "http_v2.h"
#include "http_connection_int.h"

/* Pipelined bytes held while a response goes out; beyond this the
 * connection stops reading until the response is done. */
#define PIPELINE_MAX  (64 * 1024)

static void on_read(rx_conn_t *c, const char *data, ssize_t len);
static void on_free(rx_conn_t *c);

static void on_op(rx_conn_t *c, const rx_cqe_t *cqe);

static void body_resume(rx_posted_t *p);
static bool v2_start(rx_http_connection_t *hc);

static const rx_conn_ops_t http_conn_ops = { on_read, rx_http_on_sent, on_free,
                                               on_op };

rx_http_tls_hooks_t rx_http_tls_hooks;


void
rx_http_conn_set_state(rx_http_connection_t *hc, rx_http_conn_state_t state)
{
    if (hc->state == RX_HC_HEADER) rx_http_stat_reading(-1);
    if (hc->state == RX_HC_PROCESS) rx_http_stat_writing(-1);
    hc->state = state;
    if (state == RX_HC_HEADER) rx_http_stat_reading(1);
    if (state == RX_HC_PROCESS) rx_http_stat_writing(1);
}

void
rx_http_init_connection(rx_conn_t *c)
{
    rx_http_connection_t    *hc;
    rx_http_core_loc_conf_t *clcf;
    int                      one = 1;

    hc = rx_pcalloc(c->pool, sizeof(rx_http_connection_t));
    if (hc == NULL) {
        rx_conn_close(c);
        return;
    }
    hc->conn = c;
    /* a wildcard socket may serve several addresses: then the local
     * address picks the server names */
    hc->names = rx_http_listening_names(c->listening,
                    rx_http_listening_naddrs(c->listening) > 1
                    ? rx_conn_local(c) : NULL);
    hc->default_server = rx_http_default_server(hc->names);
    hc->server = hc->default_server;
    hc->state = RX_HC_WAIT;
    rx_http_stat_accepted(1);
    c->data = hc;
    c->ops = &http_conn_ops;
    c->timer.handler = rx_http_conn_timer_handler;
    c->timer.data = c;

    clcf = rx_http_conn_loc_conf(hc);
    /* a listening socket with TCP_NODELAY gave it to this one already */
    if (clcf->tcp_nodelay && c->listening->addr.u.sa.sa_family != AF_UNIX
        && !c->listening->nodelay
        && setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1) {
        rx_log_error(RX_LOG_ALERT, &c->log, errno, "setsockopt(TCP_NODELAY) "
                     "failed");
    }
    if (rx_http_server_names_ssl(hc->names)
        && (rx_http_tls_hooks.init_connection == NULL
            || rx_http_tls_hooks.init_connection(c, hc->default_server)
               != RX_OK)) {
        rx_conn_close(c);
        return;
    }
    /* the balancer's header comes first, before TLS's ClientHello too:
     * it reads ahead of the transport just started */
    if (rx_http_server_names_proxy_protocol(hc->names)
        && rx_conn_proxy_protocol_start(c) != RX_OK) {
        rx_conn_close(c);
        return;
    }
    /* a new connection waits for its first byte as long as for a header
     * (over TLS: the handshake is bounded by it too) */
    rx_timer_add(&c->timer, rx_http_conn_srv_conf(hc)->client_header_timeout);
    c->transport->start_read(c);
    /* until its first byte it may be closed for a new connection when the
     * table is full, as nginx does (over TLS the handshake's first byte
     * ends that, and its end starts it again) */
    rx_conn_set_reusable(c, true);
}

bool
rx_http_conn_is_tls(const rx_conn_t *c)
{
#if (RX_HAVE_OPENSSL)
    return rx_tls_ssl(c) != NULL;      /* NULL for plain HTTP on a TLS port */
#else
    (void) c;
    return false;
#endif
}

static void
on_free(rx_conn_t *c)
{
    rx_http_connection_t *hc = c->data;

    if (hc == NULL) {
        return;
    }
    if (hc->r) {
        rx_http_background_abort(hc->r);   /* mirrors let go first */
    }
    if (hc->r && hc->r->abort_handler) {
        hc->r->abort_handler(hc->r);
        hc->r->abort_handler = NULL;
    }
    if (hc->r && !hc->r->logged) {
        /* the request ends with its connection: log what happened */
        rx_http_request_t *r = hc->r;
        if (r->headers_out.status == 0) {
            r->headers_out.status = r->err_status ? r->err_status
                                    : RX_HTTP_CLIENT_CLOSED_REQUEST;
        }
        rx_http_request_done(r);
    }
    if (hc->r) {
        /* the kernel may still write into the request's memory (a file
         * read in flight): the request pool goes with the connection's,
         * which is freed only after its last completion */
        rx_pool_cleanup_t *cln = rx_pool_cleanup_add(c->pool, 0);
        if (cln) {
            cln->handler = (rx_pool_cleanup_pt) rx_http_request_free;
            cln->data = hc->r;
        } else {
            rx_http_request_free(hc->r);
        }
        hc->r = NULL;
    }
    rx_http_conn_set_state(hc, RX_HC_CLOSED);
    if (hc->framing) {
        hc->framing->closed(hc);       /* a stream: not an accepted one */
    } else {
        rx_http_stat_accepted(-1);
    }
    rx_http_conn_release_input(hc);
}

uint64_t
rx_http_op_ud(rx_http_request_t *r, rx_op_kind_t kind)
{
    r->conn->inflight++;
    return rx_conn_ud_tag(r->conn, kind, r->op_tag);
}

static void
on_op(rx_conn_t *c, const rx_cqe_t *cqe)
{
    rx_http_connection_t *hc = c->data;
    rx_http_request_t    *r = rx_http_op_owner(hc ? hc->r : NULL,
                                               rx_op_tag(cqe->user_data));

    if (c->state != RX_CONN_ACTIVE || r == NULL || r->op_handler == NULL) {
        if (rx_op_kind(cqe->user_data) == RX_OP_OPEN && cqe->res >= 0) {
            close(cqe->res);          /* opened for a request that is gone */
        }
        return;
    }
    r->op_handler(r, cqe);
}

/* The input buffer goes back to the spare blocks (core/pool.c) when it is
 * of the usual size, client_header_buffer_size, for the next request on
 * any connection: an idle connection holds none. */
void
rx_http_conn_release_input(rx_http_connection_t *hc)
{
    if (hc->in && hc->in_size == rx_http_conn_srv_conf(hc)->client_header_buffer_size) {
        rx_spare_block_put(hc->in, hc->in_size);
    } else {
        free(hc->in);
    }
    hc->in = NULL;
    hc->in_len = hc->in_size = hc->in_parsed = 0;
    if (hc->parser) {
        rx_http_parser_free(hc->parser);
        hc->parser = NULL;
    }
}

/* Appends received bytes; the buffer exists only while there is input. */
static rx_int_t
append_input(rx_http_connection_t *hc, const char *data, size_t len)
{
    if (hc->in_len + len > hc->in_size) {
        size_t first = rx_http_conn_srv_conf(hc)->client_header_buffer_size;
        size_t size = rx_max(hc->in_size * 2, rx_max(hc->in_len + len, first));
        char  *grown = hc->in == NULL && size == first
                       ? rx_spare_block_get(size, NULL) : realloc(hc->in, size);

        if (grown == NULL) {
            rx_log_error(RX_LOG_ALERT, &hc->conn->log, errno,
                         "realloc(%zu) of the input buffer failed", size);
            return RX_ERROR;
        }
        hc->in = grown;
        hc->in_size = size;
    }
    memcpy(hc->in + hc->in_len, data, len);
    hc->in_len += len;
    return RX_OK;
}

static void
on_read(rx_conn_t *c, const char *data, ssize_t len)
{
    rx_http_connection_t *hc = c->data;

    if (hc->r && hc->r->tunnel_read) {
        /* an upgraded connection carries another protocol's bytes */
        if (len <= 0) {
            hc->client_eof = 1;
        }
        hc->r->tunnel_read(hc->r, data, len);
        return;
    }
    if (len <= 0) {
        hc->client_eof = 1;
        switch (hc->state) {
        case RX_HC_WAIT:
        case RX_HC_LINGER:
            rx_http_conn_close(hc);
            return;
        case RX_HC_HEADER:
            if (len < 0) {
                rx_http_log_error_action(hc, RX_LOG_INFO, (int) -len,
                                         hc->action, "recv() failed");
            } else if (hc->in_len > hc->in_parsed || !rx_http_parser_idle(hc->parser)) {
                rx_http_log_error_action(hc, RX_LOG_INFO, 0, hc->action,
                                         "client prematurely closed connection");
            }
            if (hc->r) {
                hc->r->headers_out.status = RX_HTTP_BAD_REQUEST;
            }
            rx_http_conn_close(hc);
            return;
        default:
            if (hc->r && hc->r->watch_client) {
                /* nothing will be answered to nobody: end it (nginx's
                 * ngx_http_test_reading) */
                rx_http_log_error_action(hc, RX_LOG_INFO,
                    len < 0 ? (int) -len : 0, NULL,
                    "client prematurely closed connection");
                rx_http_conn_close(hc);
                return;
            }
            if (hc->r && !hc->r->body_read) {
                rx_http_log_error_action(hc, RX_LOG_INFO, len < 0 ? (int) -len : 0,
                    "reading client request body",
                    "client prematurely closed connection");
                hc->r->err_status = RX_HTTP_BAD_REQUEST;
                rx_http_conn_close(hc);
                return;
            }
            /* the response may still go out; nothing more will come in */
            hc->close_after = 1;
            return;
        }
    }

    if (hc->state == RX_HC_LINGER) {
        /* drained and dropped, for at most lingering_time in all */
        if (rx_current_msec >= hc->linger_deadline) {
            rx_http_conn_close(hc);
            return;
        }
        rx_timer_add(&c->timer, rx_min(hc->linger_deadline - rx_current_msec,
            ((rx_http_core_loc_conf_t *) rx_http_conn_loc_conf(hc))->lingering_timeout));
        return;
    }
    if (append_input(hc, data, (size_t) len) != RX_OK) {
        rx_http_conn_close(hc);
        return;
    }
    if (hc->state == RX_HC_WAIT) {
        rx_conn_set_idle(c, false);
        hc->action = "reading client request line";
        rx_http_conn_set_state(hc, RX_HC_HEADER);
        rx_timer_add(&c->timer, rx_http_conn_srv_conf(hc)->client_header_timeout);
    }
    if (hc->requests == 0 && hc->r == NULL && hc->framing == NULL
        && v2_start(hc)) {
        return;
    }
    rx_http_conn_process_input(hc);
}

/* The first bytes: HTTP/2 after ALPN "h2", or the preface on a cleartext
 * address whose default server has http2 on (h2c with prior knowledge, as
 * nginx). True when they are (or may be: a partial preface) HTTP/2's. */
static bool
v2_start(rx_http_connection_t *hc)
{
    size_t n = rx_min(hc->in_len, RX_HTTP_V2_PREFACE_LEN);

    if (rx_http_conn_is_tls(hc->conn)) {
        if (rx_http_tls_hooks.alpn_h2 == NULL
            || !rx_http_tls_hooks.alpn_h2(hc->conn)) {
            return false;
        }
    } else if (!rx_http_v2_enabled(hc->default_server)
               || memcmp(hc->in, RX_HTTP_V2_PREFACE, n) != 0) {
        return false;
    } else if (n < RX_HTTP_V2_PREFACE_LEN) {
        return true;                     /* the rest of the preface */
    }
    rx_timer_del(&hc->conn->timer);
    rx_http_conn_set_state(hc, RX_HC_WAIT);
    rx_http_v2_init(hc, hc->in, hc->in_len);
    rx_http_conn_release_input(hc);
    return true;
}

rx_int_t
rx_http_init_framed_connection(rx_conn_t *c, rx_http_connection_t *parent,
    const rx_http_framing_t *fr, void *data)
{
    rx_http_connection_t *hc = rx_pcalloc(c->pool, sizeof(*hc));

    if (hc == NULL) {
        return RX_ERROR;
    }
    hc->conn = c;
    hc->names = parent->names;
    hc->default_server = parent->default_server;
    hc->server = parent->server;
    hc->ssl_server = parent->ssl_server;
    hc->state = RX_HC_WAIT;
    hc->framing = fr;
    hc->framing_data = data;
    c->data = hc;
    c->ops = &http_conn_ops;
    c->timer.handler = rx_http_conn_timer_handler;
    c->timer.data = c;
    return RX_OK;
}

/* Parser callbacks: http_request.c fills the request. */

static const rx_http_parse_handlers_t request_handlers = {
    rx_http_on_url, rx_http_on_request_line, rx_http_on_header,
    rx_http_on_headers_complete,
    rx_http_on_body, rx_http_on_chunk_size, rx_http_on_message_complete
};

static rx_int_t
ensure_parser(rx_http_connection_t *hc)
{
    rx_http_core_srv_conf_t *cscf = rx_http_conn_srv_conf(hc);

    if (hc->parser) {
        return RX_OK;
    }
    hc->parser = rx_http_parser_create_request(&hc->conn->log,
                     &request_handlers, hc, &hc->in,
                     cscf->client_header_buffer_size,
                     cscf->large_client_header_buffers_size,
                     (rx_uint_t) cscf->large_client_header_buffers_num);
    return hc->parser ? RX_OK : RX_ERROR;
}

static void
parse_error(rx_http_connection_t *hc)
{
    rx_http_request_t *r = hc->r;
    rx_uint_t          status = rx_http_parser_status(hc->parser);
    const char        *reason = rx_http_parser_reason(hc->parser);

    hc->close_after = 1;
    /* the parser stays in error: nothing more is parsed (the rest of the
     * input still counts as unread, for lingering close) */
    hc->parse_failed = 1;
    if (r == NULL) {
        r = rx_http_create_request(hc);
        if (r == NULL) {
            rx_http_conn_close(hc);
            return;
        }
    }
    r->keepalive = 0;
    if (hc->state == RX_HC_PROCESS && r->header_sent) {
        /* an error in the body of a request already answered */
        rx_http_log_error_action(hc, rx_http_parser_reason_level(hc->parser), 0,
                                 "reading client request body", "%s",
                                 reason ? reason : "client sent invalid body");
        rx_http_conn_close(hc);
        return;
    }
    if (reason) {
        rx_http_request_log_error(r, rx_http_parser_reason_level(hc->parser),
                                  0, "%s", reason);
    }
    rx_timer_del(&hc->conn->timer);
    rx_http_conn_set_state(hc, RX_HC_PROCESS);
    rx_http_finalize_request(r, (rx_int_t) status);
}

/* A body refused with status (logged already) by its owner: as
 * parse_error() for a body, nothing more of it is read. */
void
rx_http_conn_body_failed(rx_http_connection_t *hc, rx_int_t status)
{
    rx_http_request_t *r = hc->r;

    hc->close_after = 1;
    hc->parse_failed = 1;
    r->keepalive = 0;
    if (r->header_sent) {
        rx_http_conn_close(hc);          /* already answered */
        return;
    }
    rx_timer_del(&hc->conn->timer);
    rx_http_finalize_request(r, status);
}

/* A request whose header was refused with status (logged already): it
 * is answered, and the connection ends after it, as after parse_error(). */
void
rx_http_conn_header_failed(rx_http_connection_t *hc, rx_int_t status)
{
    hc->close_after = 1;
    hc->parse_failed = 1;
    hc->r->keepalive = 0;
    rx_timer_del(&hc->conn->timer);
    rx_http_conn_set_state(hc, RX_HC_PROCESS);
    rx_http_finalize_request(hc->r, status);
}

/* The header is in: the request runs its phases. False when the
 * connection moved on (a response finished it) or closed meanwhile. */
bool
rx_http_conn_header_done(rx_http_connection_t *hc)
{
    rx_http_request_t *r = hc->r;

    rx_timer_del(&hc->conn->timer);
    rx_http_conn_set_state(hc, RX_HC_PROCESS);
    hc->action = NULL;
    if (hc->parser) {                    /* none for a request as fields */
        rx_http_parser_resume(hc->parser);
    }
    rx_http_stat_request();
    rx_http_run_phases(r);
    if (hc->r != r || hc->state != RX_HC_PROCESS) {
        return false;
    }
    if (!r->body_read && rx_http_body_claimed(r)
        && !rx_timer_is_set(&hc->conn->timer) && !hc->conn->sending) {
        rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                           rx_http_core_module);
        rx_timer_add(&hc->conn->timer, clcf->client_body_timeout);
    }
    return true;
}

/* The whole message is in: its reader gets the body, and a response
 * already sent ends the request. */
void
rx_http_conn_message_done(rx_http_connection_t *hc)
{
    rx_http_request_t *r = hc->r;

    r->body_read = 1;
    if (!hc->conn->sending && rx_timer_is_set(&hc->conn->timer)) {
        rx_timer_del(&hc->conn->timer);
    }
    if (r->request_body && r->request_body->reader.post_handler
        && !r->request_body->done) {
        rx_http_request_body_complete(r);
    }
    if (hc->r && hc->r->response_done && !hc->conn->sending
        && hc->r->out == NULL) {
        rx_http_request_done(hc->r);
    }
}

/* Whether the input must wait: pipelined bytes for the current response,
 * body bytes for the handler that claims them (http_body.c), both within
 * bounds (reading stops beyond PIPELINE_MAX). */
static bool
input_waits(rx_http_connection_t *hc)
{
    if (hc->state != RX_HC_PROCESS
        || (hc->r && !hc->r->body_read && rx_http_body_claimed(hc->r))) {
        return false;
    }
    if (hc->in_len - hc->in_parsed > PIPELINE_MAX) {
        hc->held_stopped = 1;
        hc->conn->transport->stop_read(hc->conn);
    }
    return true;
}

/* A body whose bytes come without framing (body_raw: a stream's DATA):
 * what is buffered goes to its owner once claimed; the framing's end of
 * it completes the message. */
static void
process_raw_body(rx_http_connection_t *hc)
{
    rx_http_request_t *r = hc->r;
    rx_int_t           rc;

    if (r == NULL || r->body_read || input_waits(hc)
        || hc->state != RX_HC_PROCESS) {
        return;
    }
    if ((rc = rx_http_body_raw_bytes(hc)) != RX_OK) {
        rx_http_conn_body_failed(hc, rc);
        return;
    }
    if (hc->body_ended && hc->r == r) {
        rx_http_conn_message_done(hc);
    }
}

void
rx_http_conn_process_input(rx_http_connection_t *hc)
{
    rx_http_parse_rc_t rc;
    size_t             n;

    if (hc->parse_failed) {
        return;
    }
    if (hc->body_raw) {
        process_raw_body(hc);
        return;
    }
    if (ensure_parser(hc) != RX_OK) {
        rx_http_conn_close(hc);
        return;
    }
    /* a message without a body completes without another byte: the parser
     * is called once more with nothing left to finish it */
    while (hc->in_parsed < hc->in_len
           || (hc->state == RX_HC_PROCESS && hc->r && !hc->r->body_read
               && !rx_http_parser_idle(hc->parser))) {
        if (input_waits(hc)) {
            break;
        }
        if (hc->state == RX_HC_CLOSED || hc->state == RX_HC_LINGER) {
            return;
        }
        if (hc->r == NULL && (hc->r = rx_http_create_request(hc)) == NULL) {
            rx_http_conn_close(hc);
            return;
        }
        rc = rx_http_parser_execute(hc->parser, hc->in_parsed,
                                    hc->in_len - hc->in_parsed, &n);
        hc->in_parsed += n;
        hc->r->request_length += (int64_t) n;
        if (hc->state == RX_HC_PROCESS && hc->in_parsed == hc->in_len) {
            /* past the header nothing parsed is needed again: body bytes
             * were handed over, so the buffer starts afresh */
            hc->in_len = hc->in_parsed = 0;
        }
        switch (rc) {
        case RX_HTTP_PARSE_AGAIN:
            return;
        case RX_HTTP_PARSE_HEADER_DONE:
            if (!rx_http_conn_header_done(hc)) {
                return;
            }
            break;
        case RX_HTTP_PARSE_MESSAGE_DONE:
            rx_http_conn_message_done(hc);
            return;
        case RX_HTTP_PARSE_ERROR:
            parse_error(hc);
            return;
        }
    }
}

/* http_body.c claimed the body of the current request from inside a
 * handler: its held bytes are parsed once the handler has returned. */
void
rx_http_connection_resume_input(rx_http_connection_t *hc)
{
    if (hc->r) {
        hc->r->body_resume.handler = body_resume;
        hc->r->body_resume.data = hc->r;
        rx_post(&hc->r->body_resume);
    }
}

static void
body_resume(rx_posted_t *p)
{
    rx_http_request_t      *r = p->data;
    rx_http_connection_t   *hc = r->hc;
    rx_http_request_body_t *rb;

    if (hc->r != r || hc->state != RX_HC_PROCESS
        || hc->conn->state != RX_CONN_ACTIVE) {
        return;
    }
    rb = r->request_body;
    if (hc->held_stopped && !(rb && rb->paused) && !hc->client_eof) {
        hc->held_stopped = 0;
        hc->conn->transport->start_read(hc->conn);
    }
    if (r->body_read) {
        /* a reader that came after the whole body (or a body-less
         * request): its post_handler, from here as always */
        if (rb && rb->reader.post_handler && !rb->done) {
            rx_http_request_body_complete(r);
        }
        return;
    }
    if (!rx_timer_is_set(&hc->conn->timer) && !hc->conn->sending) {
        rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                           rx_http_core_module);
        rx_timer_add(&hc->conn->timer,
                     r->body_mode == RX_HTTP_BODY_DISCARD && r->response_done
                     ? clcf->lingering_timeout : clcf->client_body_timeout);
    }
    rx_http_conn_process_input(hc);
}
