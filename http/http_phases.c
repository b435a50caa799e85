/*
 * http_phases.c: the phase engine: handlers registered per phase, the
 * runner (post read, server rewrite, find location, rewrite, preaccess,
 * access, precontent, content, log), location lookup, internal redirects and named locations,
 * and finalisation (a status becomes an error page).
 */
#include "http.h"
#include "http_location.h"
#include "http_uri.h"
#include "regex.h"
#include "http_captures.h"

rx_int_t
rx_http_add_phase_handler(rx_conf_t *cf, rx_http_phase_t phase,
    rx_http_handler_pt handler)
{
    rx_http_core_main_conf_t *cmcf = rx_http_conf_get_module_main_conf(cf,
                                        rx_http_core_module);
    rx_http_handler_pt       *h = rx_array_push(&cmcf->phases[phase]);

    if (h == NULL) {
        return RX_ERROR;
    }
    *h = handler;
    return RX_OK;
}

_Static_assert(RX_HTTP_PHASES == 9, "rx_http_core_main_conf_t.phases size");

static rx_array_t *
phase_handlers(rx_http_request_t *r, rx_http_phase_t phase)
{
    rx_http_core_main_conf_t *cmcf = rx_http_get_module_main_conf(r,
                                        rx_http_core_module);
    return &cmcf->phases[phase];
}

void
rx_http_run_log_phase(rx_http_request_t *r)
{
    rx_array_t         *a = phase_handlers(r, RX_HTTP_LOG_PHASE);
    rx_http_handler_pt *h = a->elts;
    rx_uint_t           i;

    for (i = 0; i < a->nelts; i++) {
        h[i](r);
    }
}

/* Points the request at the location matching its URI (find-config). */
/* The server block's own location-level confs (no location matched). */
static void **
server_loc_confs(rx_http_request_t *r)
{
    rx_http_core_srv_conf_t *cscf = rx_http_get_module_srv_conf(r,
                                       rx_http_core_module);
    return cscf->ctx->loc_conf;
}

/*
 * nginx's "off-by-slash": "location /files { alias /srv/files/; }" maps
 * /files../x to /srv/files/../x, out of the alias, although the URI
 * itself has no ".." segment (its segment is "files.."). The URI is
 * normalised, so only the junction of prefix and alias can make one:
 * refuse a remainder that starts with a ".." segment (with 404, as a
 * file that is not there). nginx serves it; see docs/reliability.md.
 */
static bool
alias_escapes(rx_http_request_t *r, rx_http_core_loc_conf_t *clcf)
{
    size_t      skip;
    const char *t;
    size_t      n;

    if (!clcf->alias || clcf->match == RX_LOC_REGEX
        || clcf->match == RX_LOC_REGEX_CASELESS) {
        return false;
    }
    skip = rx_min(clcf->name.len, r->uri.len);
    t = r->uri.data + skip;
    n = r->uri.len - skip;
    if (n >= 2 && t[0] == '.' && t[1] == '.' && (n == 2 || t[2] == '/')) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "URI \"%.*s\" would "
            "leave the alias of location \"%.*s\"", (int) r->uri.len,
            r->uri.data, (int) clcf->name.len, clcf->name.data);
        return true;
    }
    return false;
}

/* nginx's auto_redirect: "/app" for "location /app/ { proxy_pass ...; }"
 * is a 301 to the location's name (escaped), with the arguments. */
static rx_int_t
location_redirect(rx_http_request_t *r, rx_http_core_loc_conf_t *clcf)
{
    rx_str_t  loc;
    size_t    n = rx_http_escape_uri(NULL, clcf->name.data, clcf->name.len,
                                     RX_ESCAPE_URI);
    char     *p;

    loc.len = n + (r->args.len ? 1 + r->args.len : 0);
    p = loc.data = rx_pnalloc(r->pool, loc.len + 1);
    if (p == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    p += rx_http_escape_uri(p, clcf->name.data, clcf->name.len, RX_ESCAPE_URI);
    if (r->args.len) {
        *p++ = '?';
        memcpy(p, r->args.data, r->args.len);
        p += r->args.len;
    }
    *p = '\0';
    r->headers_out.location = rx_http_add_header_out(r, "Location", &loc);
    return r->headers_out.location ? RX_HTTP_MOVED_PERMANENTLY
                                   : RX_HTTP_INTERNAL_SERVER_ERROR;
}

static rx_int_t
find_config(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *server_clcf, *clcf;
    rx_int_t                 n = 0;
    rx_regex_t              *matched = NULL;

    r->uri_changed = 0;
    server_clcf = server_loc_confs(r)[rx_http_core_module.ctx_index];
    clcf = rx_http_find_location(server_clcf, &r->uri, r->captures,
                                 RX_HTTP_MAX_CAPTURES, &n, &matched);
    if (clcf == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;     /* a regex failed to run */
    }
    if (n > 0) {
        r->ncaptures = n;
        r->captures_data = r->uri.data;
    }
    if (matched && matched == clcf->regex && clcf->capture_vars
        && rx_http_set_capture_vars(r, clcf->capture_vars, r->uri.data) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    /* the server level itself has no loc_conf of its own recorded */
    r->loc_conf = clcf->loc_conf ? clcf->loc_conf : server_loc_confs(r);
    /* the location's own "internal", before a limit_except block's confs
     * (which do not inherit it) may replace its confs */
    if (clcf->internal && !r->internal) {
        return RX_HTTP_NOT_FOUND;
    }
    rx_http_update_location_config(r);
    clcf = rx_http_get_module_loc_conf(r, rx_http_core_module);
    if (alias_escapes(r, clcf)) {
        return RX_HTTP_NOT_FOUND;
    }
    if (clcf->client_max_body_size
        && r->headers_in.content_length_n > clcf->client_max_body_size) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "client intended to send "
            "too large body: %" PRId64 " bytes", r->headers_in.content_length_n);
        r->hc->close_after = 1;
        return RX_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    if (rx_http_location_redirects(clcf, &r->uri)) {
        return location_redirect(r, clcf);
    }
    return RX_OK;
}

void
rx_http_update_location_config(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf;

    rx_http_limit_except(r);
    clcf = rx_http_get_module_loc_conf(r, rx_http_core_module);
    r->content_handler = (rx_http_handler_pt) clcf->handler;
    rx_http_set_request_log(r);
}

/* The connection logs where the request's location says (error_log in
 * http/server/location), else to the main error log. */
void
rx_http_set_request_log(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    const rx_log_t          *src = clcf->error_log ? clcf->error_log
                                                   : rx_cycle->log;

    r->conn->log.file = src->file;
    r->conn->log.syslog = src->syslog;
    r->conn->log.level = src->level;
    r->conn->log.next = src->next;
}

static rx_int_t
run_handlers_from(rx_http_request_t *r, rx_http_phase_t phase, rx_uint_t from)
{
    rx_array_t         *a = phase_handlers(r, phase);
    rx_http_handler_pt *h = a->elts;
    rx_uint_t           i;
    rx_int_t            rc;

    for (i = from; i < a->nelts; i++) {
        if (phase == RX_HTTP_CONTENT_PHASE) {
            r->content_index = i;
        }
        rc = h[i](r);
        if (rc != RX_DECLINED) {
            return rc;
        }
    }
    return RX_DECLINED;
}

static rx_int_t
run_handlers(rx_http_request_t *r, rx_http_phase_t phase)
{
    return run_handlers_from(r, phase, 0);
}

/* What the content phase answers when no handler took the request. */
static rx_int_t
content_declined(rx_http_request_t *r)
{
    if (r->uri.len && r->uri.data[r->uri.len - 1] == '/') {
        rx_str_t path;
        if (rx_http_map_uri_to_path(r, &path, 0) == RX_OK) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "directory index of "
                                      "\"%s\" is forbidden", path.data);
        }
        return RX_HTTP_FORBIDDEN;
    }
    return RX_HTTP_NOT_FOUND;
}

void
rx_http_content_next(rx_http_request_t *r)
{
    rx_int_t rc;

    r->op_handler = NULL;
    r->ctx = NULL;
    rc = run_handlers_from(r, RX_HTTP_CONTENT_PHASE, r->content_index + 1);
    rx_http_finalize_request(r, rc == RX_DECLINED ? content_declined(r) : rc);
}

/* A challenge added by a handler that lost to another's RX_OK. */
static void
withdraw_challenge(rx_http_request_t *r)
{
    rx_table_elt_t *h = r->headers_out.headers.elts;
    rx_uint_t       i;

    for (i = 0; i < r->headers_out.headers.nelts; i++) {
        if (rx_str_caseeq(&h[i].key, "WWW-Authenticate")) {
            h[i].deleted = true;
        }
    }
}

/*
 * The access phase, combined as the location's `satisfy` says. A handler
 * answers RX_DECLINED (no opinion), RX_OK (allowed), 403 or 401 (refused),
 * or anything else (another status, RX_ERROR: the request fails at once).
 * "all": every handler with an opinion must allow; the first refusal ends
 * the phase. "any": the first RX_OK ends the phase (and withdraws a 401
 * challenge added before it); refusals are remembered, 401 over 403, and
 * the request fails with that code only when no handler allowed it.
 * A handler may answer RX_AGAIN (auth_request waits for its subrequest):
 * the phase stops there, and rx_http_access_resume() calls that handler
 * again later, with what was gathered so far. Subrequests skip the phase
 * (nginx): their parent passed it.
 */
static rx_int_t
run_access_phase(rx_http_request_t *r)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_array_t              *a = phase_handlers(r, RX_HTTP_ACCESS_PHASE);
    rx_http_handler_pt      *h = a->elts;
    rx_uint_t                i;
    rx_int_t                 rc;

    if (r->subrequest) {
        return RX_DECLINED;
    }
    if (!r->access_resume) {
        r->access_code = 0;
        r->access_index = 0;
    }
    r->access_resume = 0;
    for (i = r->access_index; i < a->nelts; i++) {
        r->access_index = i;
        rc = h[i](r);
        if (rc == RX_AGAIN) {
            return RX_AGAIN;
        }
        if (rc == RX_DECLINED) {
            continue;
        }
        if (clcf->satisfy == RX_HTTP_SATISFY_ALL) {
            if (rc == RX_OK) {
                continue;
            }
            return rc;
        }
        if (rc == RX_OK) {
            r->access_code = 0;
            withdraw_challenge(r);
            return RX_DECLINED;
        }
        if (rc != RX_HTTP_FORBIDDEN && rc != RX_HTTP_UNAUTHORIZED) {
            return rc;
        }
        if (r->access_code != RX_HTTP_UNAUTHORIZED) {
            r->access_code = (rx_uint_t) rc;
        }
    }
    if (r->access_code == 0) {
        return RX_DECLINED;
    }
    if (r->access_code == RX_HTTP_FORBIDDEN) {
        /* with "any" the access module leaves this line to us (nginx) */
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "access forbidden by rule");
    }
    return (rx_int_t) r->access_code;
}

static void run_from(rx_http_request_t *r);

/*
 * The phase runner: post read (once per request), server rewrite, find
 * location, rewrite (which may change the URI and send us back to find
 * location), preaccess (realip, limit_req, limit_conn), access, precontent (try_files), content.
 * A handler returns RX_DECLINED to pass, RX_OK/RX_DONE when it has taken
 * the request, RX_AGAIN when it continues asynchronously, or a status.
 * In post read and preaccess, RX_OK ends the phase, as nginx's generic
 * phase: the next one runs.
 */
void
rx_http_run_phases(rx_http_request_t *r)
{
    r->phase = RX_HTTP_POST_READ_PHASE;
    r->uri_rewritten = 0;
    run_from(r);
}

/* An internal redirect: the server's rewrite script runs for the new URI,
 * as in nginx; post read does not run again. */
static void
run_from_server_rewrite(rx_http_request_t *r)
{
    r->phase = RX_HTTP_SERVER_REWRITE_PHASE;
    r->uri_rewritten = 0;
    run_from(r);
}

/*
 * nginx's post-rewrite step: the location's script changed the URI
 * (rewrite without "break"), so the location is searched again, at most
 * RX_HTTP_MAX_URI_CHANGES times per request. RX_AGAIN: the runner goes
 * on at find config; or 500.
 */
static rx_int_t
post_rewrite(rx_http_request_t *r)
{
    if (--r->uri_changes == 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "rewrite or internal "
            "redirection cycle while processing \"%.*s\"", (int) r->uri.len,
            r->uri.data);
        r->error_page = 1;   /* the 500 page must not redirect again */
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    r->loc_conf = server_loc_confs(r);
    rx_http_update_location_config(r);
    r->phase = RX_HTTP_FIND_CONFIG_PHASE;
    return RX_AGAIN;
}

void
rx_http_access_resume(rx_http_request_t *r)
{
    if (r->phase != RX_HTTP_ACCESS_PHASE) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "access resumed in "
                                  "phase %d", (int) r->phase);
        rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    r->op_handler = NULL;
    r->access_resume = 1;
    run_from(r);
}

void
rx_http_phase_next(rx_http_request_t *r)
{
    r->op_handler = NULL;
    r->phase++;
    run_from(r);
}

void
rx_http_phase_again(rx_http_request_t *r)
{
    r->op_handler = NULL;
    run_from(r);
}

static void
run_from(rx_http_request_t *r)
{
    rx_int_t rc;

    for ( ;; ) {
        switch (r->phase) {
        case RX_HTTP_REWRITE_PHASE:
            rc = run_handlers(r, r->phase);
            if (rc == RX_DECLINED && r->uri_changed) {
                rc = post_rewrite(r);
                if (rc == RX_AGAIN) {
                    continue;
                }
            }
            break;
        case RX_HTTP_SERVER_REWRITE_PHASE:
        case RX_HTTP_PRECONTENT_PHASE:
            rc = run_handlers(r, r->phase);
            break;
        case RX_HTTP_POST_READ_PHASE:
        case RX_HTTP_PREACCESS_PHASE:
            rc = run_handlers(r, r->phase);
            rc = rc == RX_OK ? RX_DECLINED : rc;
            break;
        case RX_HTTP_ACCESS_PHASE:
            rc = run_access_phase(r);
            break;
        case RX_HTTP_FIND_CONFIG_PHASE:
            if (r->uri.len == 1 && r->uri.data[0] == '*') {
                rc = RX_HTTP_BAD_REQUEST;
                break;
            }
            rc = find_config(r);
            rc = rc == RX_OK ? RX_DECLINED : rc;
            break;
        case RX_HTTP_CONTENT_PHASE:
            if (r->content_handler) {
                rc = r->content_handler(r);
            } else {
                rc = run_handlers(r, RX_HTTP_CONTENT_PHASE);
            }
            if (rc == RX_DECLINED) {
                rc = content_declined(r);
            }
            rx_http_finalize_request(r, rc);
            return;
        default:
            return;
        }
        if (rc == RX_DECLINED) {
            r->phase++;
            continue;
        }
        rx_http_finalize_request(r, rc);
        return;
    }
}

rx_int_t
rx_http_internal_redirect(rx_http_request_t *r, const rx_str_t *uri,
    const rx_str_t *args)
{
    if (--r->uri_changes == 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "rewrite or internal "
            "redirection cycle while internally redirecting to \"%.*s\"",
            (int) uri->len, uri->data);
        r->error_page = 1;   /* the 500 page must not redirect again */
        rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
        return RX_DONE;
    }
    r->uri = *uri;
    if (args) {
        r->args = *args;
    } else {
        rx_str_null(&r->args);
    }
    rx_http_uri_exten(uri, &r->exten);
    r->internal = 1;
    r->content_handler = NULL;
    r->auth_request_ctx = NULL;      /* a new location asks again (nginx) */
    r->loc_conf = server_loc_confs(r);
    run_from_server_rewrite(r);
    return RX_DONE;
}

rx_int_t
rx_http_named_location(rx_http_request_t *r, const rx_str_t *name)
{
    rx_http_core_loc_conf_t *server_clcf, *clcf;

    if (--r->uri_changes == 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "rewrite or internal "
            "redirection cycle while redirect to named location \"%.*s\"",
            (int) name->len, name->data);
        r->error_page = 1;
        rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
        return RX_DONE;
    }
    server_clcf = server_loc_confs(r)[rx_http_core_module.ctx_index];
    clcf = rx_http_find_named_location(server_clcf, name);
    if (clcf == NULL) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "could not find named "
                                  "location \"%.*s\"", (int) name->len, name->data);
        r->error_page = 1;
        rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
        return RX_DONE;
    }
    r->internal = 1;
    r->auth_request_ctx = NULL;
    r->loc_conf = clcf->loc_conf;
    rx_http_update_location_config(r);
    r->phase = RX_HTTP_REWRITE_PHASE;
    run_from(r);
    return RX_DONE;
}

/*
 * Ends the handler's part: RX_OK/RX_DONE/RX_AGAIN mean the response is on
 * its way (the write path finishes the request); a status sends an error
 * page (or error_page); RX_ERROR sends 500 or, once headers are out,
 * closes the connection; 444 closes without a response.
 */
void
rx_http_finalize_request(rx_http_request_t *r, rx_int_t rc)
{
    if (rc == RX_OK || rc == RX_DONE || rc == RX_AGAIN) {
        return;
    }
    if (rc == RX_ERROR) {
        rc = RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (rc == RX_HTTP_CLOSE) {
        r->headers_out.status = RX_HTTP_CLOSE;
        r->hc->close_after = 1;
        rx_conn_close(r->conn);
        return;
    }
    if (r->header_sent) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "status %ld after the "
                                  "response header was sent", (long) rc);
        if (r->subrequest) {
            rx_http_subrequest_fail(r);
            return;
        }
        r->hc->close_after = 1;
        if (!r->conn->sending) {
            rx_conn_close(r->conn);
        }
        return;
    }
    rc = rx_http_special_response_handler(r, rc);
    if (rc != RX_OK && rc != RX_DONE) {
        rx_http_close_request(r);
    }
}

void
rx_http_close_request(rx_http_request_t *r)
{
    if (r->subrequest) {
        rx_http_subrequest_fail(r);
        return;
    }
    r->hc->close_after = 1;
    rx_conn_close(r->conn);
}
