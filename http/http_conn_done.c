/*
 * http_conn_done.c: a request's end on its HTTP/1 connection (logged,
 * then kept alive for the next one, drained by a lingering close, or
 * closed) and the connection's timeouts in each state.
 */
#include "http.h"
#include "http_parse.h"
#include "clock.h"
#include "tls.h"
#include "http_connection_int.h"

static bool
keepalive_allowed(rx_http_connection_t *hc, rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    /* r->keepalive is what the response said: one that promised
     * keep-alive before a graceful stop began is kept, and the stop
     * closes it once it is quiet (event/conn.c), as the client may
     * already be sending its next request on it */
    return r->keepalive && !hc->close_after && !hc->client_eof
           && clcf->keepalive_timeout > 0;
}

static void
start_lingering(rx_http_connection_t *hc, rx_http_core_loc_conf_t *clcf)
{
    rx_conn_t *c = hc->conn;

    rx_http_conn_set_state(hc, RX_HC_LINGER);
    rx_http_conn_release_input(hc);
    hc->linger_deadline = rx_current_msec + clcf->lingering_time;
    c->transport->shutdown_write(c);
    c->transport->start_read(c);
    rx_timer_add(&c->timer, clcf->lingering_timeout);
    rx_conn_set_reusable(c, true);       /* nothing is lost if it goes */
}

/* Keep-alive: what follows in the buffer is the next request, or the
 * connection waits for one without an input buffer. */
static void
keepalive_next(rx_http_connection_t *hc, rx_http_core_loc_conf_t *clcf)
{
    rx_conn_t *c = hc->conn;

    rx_http_parser_resume(hc->parser);
    if (hc->in_len > hc->in_parsed) {
        memmove(hc->in, hc->in + hc->in_parsed, hc->in_len - hc->in_parsed);
        hc->in_len -= hc->in_parsed;
        hc->in_parsed = 0;
        hc->pipelined |= !hc->pipe_known;   /* else settled at the last send */
        hc->pipe_known = 0;
        hc->action = "reading client request line";
        rx_http_conn_set_state(hc, RX_HC_HEADER);
        rx_timer_add(&c->timer, rx_http_conn_srv_conf(hc)->client_header_timeout);
        hc->held_stopped = 0;
        c->transport->start_read(c);      /* if pipelining had paused it */
        rx_http_conn_process_input(hc);
        return;
    }
    rx_http_conn_release_input(hc);
    hc->pipelined = 0;
    hc->pipe_known = 0;
    hc->held_stopped = 0;
    hc->server = hc->default_server;
    rx_http_conn_set_state(hc, RX_HC_WAIT);
    hc->keepalive_start = rx_current_msec;
    rx_timer_add(&c->timer, clcf->keepalive_timeout);
    rx_conn_set_idle(c, true);
    if (c->state != RX_CONN_ACTIVE) {
        return;              /* it gave its slot to a new connection */
    }
    if (hc->client_eof) {
        rx_http_conn_close(hc);
        return;
    }
    c->transport->start_read(c);
}

/* The rules of end_on_connection below, asked before the last send: true
 * when the request's end closes the connection at once. A body still to
 * read, or bytes of a next request, mean a lingering close: the client
 * may still be sending, and a close with unread data would send an RST
 * that can destroy the response in flight. */
bool
rx_http_conn_closes_at_end(rx_http_connection_t *hc, rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    if (keepalive_allowed(hc, r) || hc->framing || r->after_response
        || r->background || clcf->lingering_close == RX_HTTP_LINGERING_ALWAYS) {
        return false;
    }
    return clcf->lingering_close != RX_HTTP_LINGERING_ON
           || (r->body_read && hc->in_len <= hc->in_parsed);
}

/* The logged request leaves its connection: kept alive (after its unread
 * body is drained), lingering, or closed. */
static void
end_on_connection(rx_http_connection_t *hc, rx_http_request_t *r,
    rx_http_core_loc_conf_t *clcf)
{
    rx_conn_t *c = hc->conn;
    bool       keep, unread_body;

    keep = keepalive_allowed(hc, r);
    if (keep && !r->body_read) {
        /* read and drop the rest of the body, then keep the connection */
        if (rx_http_discard_request_body(r) != RX_OK
            || r->body_mode != RX_HTTP_BODY_DISCARD) {
            keep = false;             /* broken, or a reader still reads */
        } else if (!r->body_read) {
            rx_timer_add(&c->timer, clcf->lingering_timeout);
            return;
        }
    }
    /* what the rest needs from the request, before its memory goes */
    unread_body = !r->body_read;
    hc->r = NULL;
    rx_http_request_free(r);

    if (keep) {
        keepalive_next(hc, clcf);
        return;
    }
    if (clcf->lingering_close == RX_HTTP_LINGERING_ALWAYS
        || (clcf->lingering_close == RX_HTTP_LINGERING_ON
            && (unread_body || hc->in_len > hc->in_parsed))) {
        start_lingering(hc, clcf);
        return;
    }
#if (RX_HAVE_OPENSSL)
    rx_tls_close_notify(c);
#endif
    rx_http_conn_close(hc);
}

/* The response went out and the request is over: log it, then keep the
 * connection alive, drain it, or close it. */
void
rx_http_request_done(rx_http_request_t *r)
{
    rx_http_connection_t    *hc = r->hc;
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_conn_t               *c = hc->conn;

    if (rx_http_background_wait(r)) {
        return;        /* called again once its mirrors have ended */
    }
    if (!r->logged) {
        r->logged = 1;
        rx_http_run_log_phase(r);
    }
    if (hc->state == RX_HC_CLOSED || c->state != RX_CONN_ACTIVE) {
        return;                          /* called while the connection goes */
    }
    if (r->after_response) {
        rx_int_t (*after)(rx_http_request_t *r) = r->after_response;

        r->after_response = NULL;
        if (after(r) == RX_AGAIN) {
            return;                      /* it goes on without the client */
        }
    }
    if (hc->framing) {
        hc->framing->request_done(r);    /* one request: the stream ends */
        return;
    }
    end_on_connection(hc, r, clcf);
}

/* reset_timedout_connection: a timed-out client gets an RST, so that the
 * kernel drops what is queued for it instead of keeping it in FIN_WAIT. */
static void
close_timedout(rx_http_connection_t *hc)
{
    rx_http_core_loc_conf_t *clcf = hc->r
        ? rx_http_get_module_loc_conf(hc->r, rx_http_core_module)
        : rx_http_conn_loc_conf(hc);
    struct linger            l = { 1, 0 };

    if (clcf->reset_timedout_connection && hc->conn->fd != -1
        && setsockopt(hc->conn->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)) == -1) {
        rx_log_error(RX_LOG_CRIT, &hc->conn->log, errno,
                     "setsockopt(SO_LINGER) failed");
    }
    rx_http_conn_close(hc);
}

void
rx_http_conn_timer_handler(rx_timer_t *t)
{
    rx_conn_t            *c = t->data;
    rx_http_connection_t *hc = c->data;
    rx_http_request_t    *r;

    if (hc == NULL || c->state != RX_CONN_ACTIVE) {
        return;
    }
    r = hc->r;
    switch (hc->state) {
    case RX_HC_WAIT:
        if (hc->requests == 0) {
            /* a new connection that never sent a request (nginx logs it;
             * a keepalive_timeout is not worth a line) */
            rx_http_log_error_action(hc, RX_LOG_INFO, ETIMEDOUT,
                rx_conn_proxy_protocol_reading(c) ? "reading PROXY protocol" :
#if (RX_HAVE_OPENSSL)
                rx_tls_ssl(c) && !rx_tls_handshake_done(c) ? "SSL handshaking" :
#endif
                "waiting for request", "client timed out");
        }
        rx_http_conn_close(hc);
        return;
    case RX_HC_HEADER:
        rx_http_log_error_action(hc, RX_LOG_INFO, ETIMEDOUT, hc->action,
                                 "client timed out");
        if (r) {
            r->headers_out.status = RX_HTTP_REQUEST_TIME_OUT;
        }
        close_timedout(hc);
        return;
    case RX_HC_LINGER:
        rx_http_conn_close(hc);
        return;
    case RX_HC_PROCESS:
        if (c->sending || (r && r->sending_file)
            || (r && r->response_done
                && r->body_mode != RX_HTTP_BODY_DISCARD)) {
            rx_http_log_error_action(hc, RX_LOG_INFO, ETIMEDOUT,
                                     "sending response to client",
                                     "client timed out");
            if (rx_http_send_timed_out(hc)) {
                return;          /* the request goes on without its client */
            }
            if (r && r->headers_out.status == 0) {
                r->headers_out.status = RX_HTTP_REQUEST_TIME_OUT;
            }
            close_timedout(hc);
            return;
        }
        if (r && r->body_mode == RX_HTTP_BODY_DISCARD) {
            rx_http_conn_close(hc);                /* lingering_timeout */
            return;
        }
        if (r && !r->body_read) {
            rx_http_log_error_action(hc, RX_LOG_INFO, ETIMEDOUT,
                                     "reading client request body",
                                     "client timed out");
            hc->close_after = 1;
            if (!r->header_sent) {
                rx_http_finalize_request(r, RX_HTTP_REQUEST_TIME_OUT);
            } else {
                close_timedout(hc);
            }
        }
        return;
    default:
        return;
    }
}
