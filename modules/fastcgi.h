/*
 * fastcgi.h: what the FastCGI module's two files share: the location
 * configuration (fastcgi.c owns the directives) and the per-request state
 * of the exchange (fastcgi_upstream.c owns the protocol callbacks).
 */
#ifndef RX_FASTCGI_H
#define RX_FASTCGI_H

#include "http.h"
#include "http_upstream.h"
#include "http_script.h"
#include "http_fastcgi_codec.h"
#include "regex.h"
#include "cgi_upstream.h"

typedef struct {
    rx_http_upstream_conf_t   upstream;
    rx_str_t                  pass;          /* fastcgi_pass as written */
    rx_http_cgi_params_t      params;        /* fastcgi_param (cgi_upstream.h) */
    rx_str_t                  index;
    rx_regex_t               *split;         /* fastcgi_split_path_info */
    rx_int_t                  keep_conn;
    rx_array_t               *catch_stderr;  /* rx_str_t */
} rx_http_fastcgi_loc_conf_t;

/* One request's side of the exchange. */
typedef struct {
    rx_fcgi_decoder_t         dec;
    char                     *hbuf;          /* the CGI header text */
    size_t                    hlen;
    size_t                    hparsed;       /* lines parsed so far */
    bool                      has_status;    /* "Status:" given */
    char                     *err;           /* a STDERR record's text */
    size_t                    err_len;
    size_t                    err_cap;
    int64_t                   length_left;   /* of Content-Length; -1 none */
    bool                      stdout_done;   /* the empty STDOUT came */
    bool                      header_done;
} rx_http_fastcgi_ctx_t;

extern rx_module_t rx_http_fastcgi_module;

#define RX_FCGI_ID  1          /* one request per connection at a time */

/* fastcgi_params.c: BEGIN_REQUEST and the PARAMS stream (with its empty
 * closing record); with end_stdin, the empty STDIN record too. NULL: no
 * memory. */
rx_buf_t *rx_http_fastcgi_begin_and_params(rx_http_request_t *r,
    rx_http_fastcgi_loc_conf_t *flcf, bool end_stdin);

/* fastcgi_upstream.c: the callbacks of the upstream engine */
rx_int_t rx_http_fastcgi_create_request(rx_http_upstream_t *u);
rx_int_t rx_http_fastcgi_frame_body(rx_http_upstream_t *u, const char *data,
    size_t len, bool last);
void rx_http_fastcgi_reinit_request(rx_http_upstream_t *u);
rx_int_t rx_http_fastcgi_process_header(rx_http_upstream_t *u,
    const char *data, size_t len, size_t *used);
rx_int_t rx_http_fastcgi_input_filter(rx_http_upstream_t *u,
    const char *data, size_t len);
rx_int_t rx_http_fastcgi_on_eof(rx_http_upstream_t *u);

/* fastcgi.c: $fastcgi_script_name and $fastcgi_path_info of a request */
rx_int_t rx_http_fastcgi_split(rx_http_request_t *r, rx_str_t *script_name,
    rx_str_t *path_info);

#endif /* RX_FASTCGI_H */
