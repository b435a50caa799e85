/*
 * cgi_upstream.h: what the uwsgi, SCGI and memcached modules share on the
 * upstream engine (cgi_upstream.c), and with FastCGI: the directive table
 * of *_pass, *_param and the engine's settings, the location conf's set-up
 * and merge, *_param lines and the pairs they give
 * with the client's headers as HTTP_*, the *_pass address, the handler's
 * start (an upstream named at run time), the body sent as kept, and the
 * reading of a CGI-style response (an optional "HTTP/1.x NNN" line, then
 * header lines with Status: and Location:) whose body runs to the close.
 */
#ifndef RX_CGI_UPSTREAM_H
#define RX_CGI_UPSTREAM_H

#include "http.h"
#include "http_upstream.h"
#include "http_script.h"

/* A uwsgi_param / scgi_param line. */
typedef struct {
    rx_str_t                  name;
    rx_http_complex_value_t   value;
    bool                      if_not_empty;
} rx_http_cgi_param_t;

/* A level's params: nginx's rule, a level with lines of its own inherits
 * none. */
typedef struct {
    rx_array_t               *params;        /* rx_http_cgi_param_t */
    /* the request headers a param already gives: "HOST" for HTTP_HOST,
     * never passed a second time */
    rx_array_t               *params_http;   /* rx_str_t */
} rx_http_cgi_params_t;

/* One name and value sent upstream. */
typedef struct {
    rx_str_t  name;
    rx_str_t  value;
} rx_http_cgi_pair_t;

/* The response side's state (u->proto of uwsgi and SCGI). */
typedef struct {
    size_t                    parsed;        /* of u->header_buf */
    bool                      first_line;    /* the status line was looked at */
    bool                      has_status;
    int64_t                   length_left;   /* -1: up to the close */
} rx_http_cgi_ctx_t;

/*
 * The directives fastcgi, uwsgi and scgi share, written once as
 * RX_HTTP_UPSTREAM_COMMANDS is (http_upstream.h): a protocol's table takes
 *
 *     RX_HTTP_CGI_COMMANDS("scgi_", set_pass, rx_http_scgi_loc_conf_t),
 *
 * for scgi_pass (the protocol's own setter), scgi_param and the engine's
 * settings (scgi_pass_request_body ...). The location conf type lc has an
 * rx_http_upstream_conf_t `upstream` and an rx_http_cgi_params_t `params`.
 * The *_next_upstream conditions and the response headers hidden by
 * default are the same for the three protocols.
 */
#define RX_HTTP_CGI_COMMANDS(p, set_pass, lc)                                \
    { p "pass", RX_HTTP_LOC_CONF | RX_HTTP_LIF_CONF | RX_CONF_TAKE1,         \
      set_pass, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },                          \
    { p "param", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF     \
      | RX_CONF_TAKE23, rx_http_cgi_set_param, RX_HTTP_LOC_CONF_OFFSET,      \
      offsetof(lc, params), NULL },                                          \
    RX_HTTP_UPSTREAM_COMMANDS(p, offsetof(lc, upstream),                     \
        rx_http_cgi_next_upstream_masks)

extern const rx_conf_enum_t rx_http_cgi_next_upstream_masks[];

/* A protocol's location conf at creation (module: "scgi", for the logs)
 * and its merge: the engine's settings with the headers nginx hides for
 * these protocols, and the *_param lines. RX_CONF_OK or an error. */
void rx_http_cgi_init_conf(rx_http_upstream_conf_t *u,
    rx_http_cgi_params_t *params, const char *module);
const char *rx_http_cgi_merge_conf(rx_conf_t *cf, rx_http_upstream_conf_t *u,
    rx_http_upstream_conf_t *prev_u, rx_http_cgi_params_t *params,
    rx_http_cgi_params_t *prev_params);

/* Setter of *_param NAME VALUE [if_not_empty]: cmd->offset is the
 * rx_http_cgi_params_t of the location conf. */
const char *rx_http_cgi_set_param(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
void rx_http_cgi_init_params(rx_http_cgi_params_t *p);
rx_int_t rx_http_cgi_merge_params(rx_conf_t *cf, rx_http_cgi_params_t *conf,
    rx_http_cgi_params_t *prev);
/* The params' pairs (an empty if_not_empty one left out), then with
 * headers the client's headers as HTTP_* (same names joined with ", ",
 * "; " for Cookie). NULL: no memory. */
rx_array_t *rx_http_cgi_pairs(rx_http_request_t *r,
    const rx_http_cgi_params_t *p, bool headers);

/* A *_pass at load: "host:port", "[v6]:port", "unix:/path", an upstream
 * name, each after an optional scheme ("uwsgi://"). Sets the location's
 * handler (and auto_redirect for a name that ends in '/'); with variables
 * the url is compiled into conf->url. */
const char *rx_http_cgi_set_pass(rx_conf_t *cf, rx_http_upstream_conf_t *conf,
    const char *scheme, rx_int_t (*handler)(void *r));
/* For a *_pass with variables: finds or resolves the upstream of u.
 * RX_OK, or the status to answer with. */
rx_int_t rx_http_cgi_find_upstream(rx_http_upstream_t *u, const char *scheme);

/* A location's handler for a *_pass of scheme ("uwsgi://"): the exchange
 * created with conf, the response read as CGI, create_request building the
 * request; a body of known length streamed when *_request_buffering is off
 * (a chunked one is read whole: its CONTENT_LENGTH must be known, as
 * nginx). Returns as a content handler does. */
rx_int_t rx_http_cgi_start(rx_http_request_t *r, rx_http_upstream_conf_t *conf,
    const char *scheme, rx_int_t (*create_request)(rx_http_upstream_t *u));

/* The body as it was kept, after the head at *ll: memory buffers, then
 * the rest of a large one in its file. RX_OK or RX_ERROR. */
rx_int_t rx_http_cgi_chain_body(rx_http_request_t *r, rx_chain_t **ll);
/* *_request_buffering off: the body's bytes as they come, unframed. */
rx_int_t rx_http_cgi_frame_body(rx_http_upstream_t *u, const char *data,
    size_t len, bool last);
/* The response callbacks (u->proto is ctx). RX_OK or RX_ERROR. And the
 * length of the body the request carries upstream. */
rx_int_t rx_http_cgi_set_response(rx_http_upstream_t *u, rx_http_cgi_ctx_t *ctx);
int64_t rx_http_cgi_body_length(rx_http_request_t *r, bool pass_body);

/* rx_http_cgi_add_header's flags */
#define RX_HTTP_CGI_STATUS_ONCE           0x1  /* a Status after one given
                                                  (*has_status) is kept as a
                                                  header only */
#define RX_HTTP_CGI_NO_TRANSFER_ENCODING  0x2  /* refused: the body is not
                                                  framed by the protocol */
/* One line of a CGI-style response header (uwsgi, SCGI, FastCGI) added to
 * u->headers_in: Status sets the status (and *has_status), Location,
 * X-Accel-Redirect, X-Accel-Buffering and Content-Length are noted. RX_OK,
 * RX_ERROR, or RX_HTTP_UPSTREAM_INVALID_HEADER with u->error set. */
rx_int_t rx_http_cgi_add_header(rx_http_upstream_t *u, const rx_str_t *name,
    const rx_str_t *value, unsigned flags, bool *has_status);

#endif /* RX_CGI_UPSTREAM_H */
