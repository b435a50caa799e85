/*
 * http_core_variables.c: the core variables, nginx's "Embedded Variables"
 * plus $request_id and $request_start_us:
 * their getters, their table, and the per-worker state of $pid/$request_id.
 */
#include <ctype.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include "http.h"
#include "http_variables.h"
#include "http_variables_int.h"
#include "clock.h"


/* Per worker: $pid and the key of $request_id. */
static char     pid_text[24];
static size_t   pid_len;
static uint64_t request_id_key[2];
static bool     request_id_keyed;
static uint64_t request_id_serial;

/* ---- getters: helpers ---- */

static rx_http_core_loc_conf_t *
core_loc_conf(rx_http_request_t *r)
{
    return r->loc_conf ? rx_http_get_module_loc_conf(r, rx_http_core_module)
                       : NULL;
}

/* ---- getters: the request ---- */

/* data: offset of an rx_str_t in the request; absent when data is NULL. */
static rx_int_t
var_request_str(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_str_t *s = (rx_str_t *) ((char *) r + data);

    if (s->data == NULL) {
        v->not_found = 1;
    } else {
        rx_http_var_str(v, s->data, s->len);
    }
    return RX_OK;
}

static void
set_args(rx_http_request_t *r, const rx_http_variable_value_t *v,
    uintptr_t data)
{
    r->args.len = v->len;
    r->args.data = v->data;
}

/* data: offset of an int64_t in the request. */
static rx_int_t
var_request_int(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    int64_t n = *(int64_t *) ((char *) r + data);

    return rx_http_var_uint(r, v, n < 0 ? 0 : (uint64_t) n);
}

static rx_int_t
var_is_args(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_http_var_str(v, "?", r->args.len ? 1 : 0);
    return RX_OK;
}

/* data: offset of an rx_table_elt_t * in the request. */
static rx_int_t
var_header_elt(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_table_elt_t *h = *(rx_table_elt_t **) ((char *) r + data);

    if (h == NULL) {
        v->not_found = 1;
    } else {
        rx_http_var_str(v, h->value.data, h->value.len);
    }
    return RX_OK;
}

static rx_int_t
var_content_length(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    if (r->headers_in.content_length) {
        return var_header_elt(r, v,
            offsetof(rx_http_request_t, headers_in.content_length));
    }
    if (r->headers_in.content_length_n >= 0) {
        /* a chunked body once read */
        return rx_http_var_uint(r, v,
                                (uint64_t) r->headers_in.content_length_n);
    }
    v->not_found = 1;
    return RX_OK;
}

/* The client's method, also in a subrequest (a GET of its own), as nginx. */
static rx_int_t
var_request_method(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_request_t *m = r->main ? r->main : r;

    if (m->method_name.data == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    rx_http_var_str(v, m->method_name.data, m->method_name.len);
    return RX_OK;
}

static rx_int_t
var_server_name(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_core_srv_conf_t *cscf;
    rx_http_server_name_t   *sn;

    cscf = r->srv_conf ? rx_http_get_module_srv_conf(r, rx_http_core_module)
                       : NULL;
    if (cscf == NULL || cscf->server_names.nelts == 0) {
        rx_http_var_str(v, "", 0);
        return RX_OK;
    }
    sn = cscf->server_names.elts;
    rx_http_var_str(v, sn[0].name.data, sn[0].name.len);
    return RX_OK;
}

/* Host from the request line, else the Host header, else the server's
 * name; the first two were validated and lower-cased by the parser. */
static rx_int_t
var_host(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    if (r->host.len) {
        rx_http_var_str(v, r->host.data, r->host.len);
    } else if (r->headers_in.server.len) {
        rx_http_var_str(v, r->headers_in.server.data, r->headers_in.server.len);
    } else {
        return var_server_name(r, v, data);
    }
    return RX_OK;
}

/* The port of an authority ("host:8080", "[::1]:8080"): its digits, or
 * len 0. */
static rx_str_t
authority_port(const char *p, size_t len)
{
    const char *end = p + len, *colon = NULL;
    rx_str_t    port = { 0, NULL };

    if (len && *p == '[') {
        p = memchr(p, ']', len);
        if (p == NULL) {
            return port;
        }
    }
    colon = memchr(p, ':', (size_t) (end - p));
    if (colon == NULL) {
        return port;
    }
    port.data = (char *) colon + 1;
    while (port.data + port.len < end
           && port.data[port.len] >= '0' && port.data[port.len] <= '9') {
        port.len++;
    }
    return port;
}

/* $request_port (nginx 1.29.3): the port of the request line's authority
 * (absolute-form), else of the Host header, else empty; data 1 makes
 * $is_request_port (":" when there is one). */
static rx_int_t
var_request_port(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_str_t    port = { 0, NULL };
    char       *buf;

    if (r->host_port) {
        buf = rx_pnalloc(r->pool, 8);
        if (buf == NULL) {
            return RX_ERROR;
        }
        port.data = buf;
        port.len = (size_t) snprintf(buf, 8, "%u", (unsigned) r->host_port);
    }
    if (port.len == 0 && r->headers_in.host) {
        port = authority_port(r->headers_in.host->value.data,
                              r->headers_in.host->value.len);
    }
    if (data) {
        rx_http_var_str(v, port.len ? ":" : "", port.len ? 1 : 0);
    } else {
        rx_http_var_str(v, port.data ? port.data : "", port.len);
    }
    return RX_OK;
}

static rx_int_t
var_status(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_uint_t  status = r->err_status ? r->err_status : r->headers_out.status;
    char      *p = rx_pnalloc(r->pool, RX_UINT_LEN);

    if (p == NULL) {
        return RX_ERROR;
    }
    rx_http_var_str(v, p, (size_t) (rx_put_uint(p, status, 3) - p));
    return RX_OK;
}

static rx_int_t
var_body_bytes_sent(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    int64_t sent = r->bytes_sent - r->header_size;

    return rx_http_var_uint(r, v, sent < 0 ? 0 : (uint64_t) sent);
}

static rx_int_t
var_request_time(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_msec_t ms = rx_current_msec - r->start_msec;

    ms = ms < 0 ? 0 : ms;
    return rx_http_var_msec(r, v, (uint64_t) ms);
}

static rx_int_t
var_request_completion(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_var_str(v, "OK", r->response_done ? 2 : 0);
    return RX_OK;
}

/* The body when it is wholly in memory, as nginx gives it to proxies. */
static rx_int_t
var_request_body(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_chain_t *cl;
    size_t      len = 0;
    char       *p;

    if (r->request_body == NULL || r->request_body->bufs == NULL
        || r->request_body->file) {
        /* none, or a part (or all) of it is in a file: as nginx */
        v->not_found = 1;
        return RX_OK;
    }
    for (cl = r->request_body->bufs; cl; cl = cl->next) {
        if (!cl->buf->memory) {
            v->not_found = 1;       /* (part of) the body is in a file */
            return RX_OK;
        }
        len += (size_t) (cl->buf->last - cl->buf->pos);
    }
    cl = r->request_body->bufs;
    if (cl->next == NULL) {
        rx_http_var_str(v, cl->buf->pos, len);
        return RX_OK;
    }
    p = rx_pnalloc(r->pool, len ? len : 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    rx_http_var_str(v, p, len);
    for (; cl; cl = cl->next) {
        memcpy(p, cl->buf->pos, (size_t) (cl->buf->last - cl->buf->pos));
        p += cl->buf->last - cl->buf->pos;
    }
    return RX_OK;
}

/* The user of Basic credentials, whether auth_basic checked them or not. */
static rx_int_t
var_remote_user(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_int_t rc = rx_http_auth_basic_user(r);

    if (rc == RX_DECLINED) {
        v->not_found = 1;
        return RX_OK;
    }
    if (rc != RX_OK) {
        return RX_ERROR;
    }
    rx_http_var_str(v, r->headers_in.user.data, r->headers_in.user.len);
    return RX_OK;
}

/* ---- getters: paths ---- */

/* The root or alias of the location, evaluated when it holds variables. */
static rx_int_t
var_document_root(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_core_loc_conf_t *clcf = core_loc_conf(r);
    rx_str_t                 root;

    if (clcf == NULL || clcf->root.data == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    if (rx_http_document_root(r, &root) != RX_OK) {
        return RX_ERROR;
    }
    rx_http_var_str(v, root.data, root.len);
    return RX_OK;
}

static rx_int_t
var_realpath_root(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_core_loc_conf_t *clcf = core_loc_conf(r);
    char                    *path, *real;
    rx_int_t                 rc;

    if (clcf == NULL || clcf->root.data == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    {
        rx_str_t root;
        if (rx_http_document_root(r, &root) != RX_OK) {
            return RX_ERROR;
        }
        path = rx_pstrdup(r->pool, &root);
    }
    if (path == NULL) {
        return RX_ERROR;
    }
    real = realpath(path, NULL);
    if (real == NULL) {
        rx_http_request_log_error(r, RX_LOG_CRIT, errno,
                                  "realpath() \"%s\" failed", path);
        return RX_ERROR;
    }
    rc = rx_http_var_copy(r, v, real, strlen(real));
    free(real);
    return rc;
}

/* The file a request maps to (http_path.c: root or alias + URI). */
static rx_int_t
var_request_filename(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_http_core_loc_conf_t *clcf = core_loc_conf(r);
    rx_str_t                 path;

    if (clcf == NULL || clcf->root.data == NULL || r->uri.data == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    if (rx_http_map_uri_to_path(r, &path, 0) != RX_OK) {
        return RX_ERROR;
    }
    rx_http_var_str(v, path.data, path.len);
    return RX_OK;
}

/* ---- getters: the connection ---- */

/* data: 0 for the client's address (realip's when it found one), 1 for
 * the server's. */
static const rx_sockaddr_t *
conn_addr(rx_http_request_t *r, uintptr_t data)
{
    if (data == 0) {
        return rx_http_remote_addr(r);
    }
    return r->conn ? rx_conn_local(r->conn) : NULL;
}

static rx_int_t
var_addr(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const rx_sockaddr_t *a = conn_addr(r, data);
    char                 text[RX_SOCKADDR_STRLEN];

    if (a == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    /* written aside and copied: the pool keeps the address's length, not
     * the room of a unix path (two of these in every FastCGI request) */
    return rx_http_var_copy(r, v, text,
                            rx_sock_ntop(a, text, sizeof(text), false));
}

static rx_int_t
var_port(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const rx_sockaddr_t *a = conn_addr(r, data);
    unsigned             port = 0;

    if (a == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    if (a->u.sa.sa_family == AF_INET) {
        port = ntohs(a->u.sin.sin_port);
    } else if (a->u.sa.sa_family == AF_INET6) {
        port = ntohs(a->u.sin6.sin6_port);
    }
    if (port == 0) {
        rx_http_var_str(v, "", 0);  /* a UNIX-domain socket has none */
        return RX_OK;
    }
    return rx_http_var_uint(r, v, port);
}

static rx_int_t
var_binary_remote_addr(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const rx_sockaddr_t *a = conn_addr(r, 0);

    if (a == NULL) {
        v->not_found = 1;
    } else if (a->u.sa.sa_family == AF_INET) {
        rx_http_var_str(v, (const char *) &a->u.sin.sin_addr, 4);
    } else if (a->u.sa.sa_family == AF_INET6) {
        rx_http_var_str(v, (const char *) &a->u.sin6.sin6_addr, 16);
    } else {
        return var_addr(r, v, 0);   /* nginx: the text, "unix:" */
    }
    return RX_OK;
}

static rx_int_t
var_connection(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    if (r->conn == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    return rx_http_var_uint(r, v, r->conn->number);
}

static rx_int_t
var_connection_requests(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    if (r->hc == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    return rx_http_var_uint(r, v, r->hc->requests);
}

/* ---- getters: time and process ---- */

static rx_int_t
var_msec(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    return rx_http_var_msec(r, v, (uint64_t) rx_time_msec);
}

/* data: one of clock.h's cached strings, rewritten every second. */
static rx_int_t
var_time(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const char *s = (const char *) data;

    return rx_http_var_copy(r, v, s, strlen(s));
}

/* data: a NUL-terminated constant. */
static rx_int_t
var_const(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const char *s = (const char *) data;

    rx_http_var_str(v, s, strlen(s));
    return RX_OK;
}

/* $scheme and $https: data is { plain, tls } */
static rx_int_t
var_tls(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const char *const *pair = (const char *const *) data;
    const char        *s = pair[rx_http_conn_is_tls(r->conn)];

    rx_http_var_str(v, s, strlen(s));
    return RX_OK;
}

static const char *const scheme_values[] = { "http", "https" };
static const char *const https_values[] = { "", "on" };

static rx_int_t
var_hostname(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const rx_str_t *host = rx_http_var_hostname(r);

    rx_http_var_str(v, host->data, host->len);
    return RX_OK;
}

static rx_int_t
var_pid(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    if (pid_len == 0) {
        pid_len = (size_t) snprintf(pid_text, sizeof(pid_text), "%ld",
                                    (long) getpid());
    }
    rx_http_var_str(v, pid_text, pid_len);
    return RX_OK;
}

/* splitmix64's finaliser: a bijection on 64 bits that spreads every bit. */
static uint64_t
mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void
key_request_id(void)
{
    if (getrandom(request_id_key, sizeof(request_id_key), 0)
        != (ssize_t) sizeof(request_id_key)) {
        /* no entropy pool yet: unique, if guessable */
        request_id_key[0] = (uint64_t) rx_time_msec ^ ((uint64_t) getpid() << 32);
        request_id_key[1] = mix64(request_id_key[0] ^ (uintptr_t) &pid_len);
    }
    request_id_keyed = true;
}

/*
 * 32 hex digits. Derived from the worker's random key and the request's
 * place (connection number, request on it) rather than drawn anew, so that
 * the value survives an internal redirect (which clears the cache): both
 * halves are bijections of those numbers, hence unique within a worker,
 * and the per-worker key keeps workers apart. Not a secret.
 */
static rx_int_t
var_request_id(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const uint64_t golden = 0x9e3779b97f4a7c15ULL;
    uint64_t       conn, req, hi, lo;

    if (!request_id_keyed) {
        key_request_id();
    }
    if (r->conn && r->hc) {
        conn = r->conn->number;
        req = r->hc->requests;
    } else {
        conn = 0;
        req = ++request_id_serial;
    }
    hi = mix64(request_id_key[0] + conn * golden);
    lo = mix64(request_id_key[1] + req * golden) ^ hi;
    return rx_http_var_printf(r, v, 33, "%016" PRIx64 "%016" PRIx64, hi, lo);
}

rx_int_t
rx_http_var_init_process(rx_cycle_t *cycle)
{
    pid_len = (size_t) snprintf(pid_text, sizeof(pid_text), "%ld",
                                (long) getpid());
    key_request_id();
    return RX_OK;
}

/* $request_body_file: the body's file when it has a name
 * (client_body_in_file_only); a body spilled to an unnamed file has none */
static rx_int_t
var_request_body_file(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const char *name = rx_http_request_body_file_name(r);

    if (name == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    rx_http_var_str(v, name, strlen(name));
    return RX_OK;
}

/* $connection_time: seconds since the connection was accepted, with
 * milliseconds */
static rx_int_t
var_connection_time(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    rx_msec_t ms = r->conn ? rx_current_msec - r->conn->start_msec : 0;

    return rx_http_var_msec(r, v, ms < 0 ? 0 : (uint64_t) ms);
}

static rx_int_t
var_pipe(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    rx_http_var_str(v, r->main->pipeline ? "p" : ".", 1);
    return RX_OK;
}

/* ---- the table ---- */

typedef struct {
    const char               *name;
    rx_http_get_variable_pt   get;
    rx_http_set_variable_pt   set;
    uintptr_t                 data;
    unsigned                  flags;
} core_var_t;

#define RQ(f)  offsetof(rx_http_request_t, f)
#define NC     RX_HTTP_VAR_NOCACHEABLE
#define PFX    RX_HTTP_VAR_PREFIX

/* Flags follow nginx: what can change during a request is not cached. */
static const core_var_t core_vars[] = {
    { "uri",                 var_request_str, NULL, RQ(uri), NC },
    { "document_uri",        var_request_str, NULL, RQ(uri), NC },
    { "request_uri",         var_request_str, NULL, RQ(unparsed_uri), 0 },
    { "args",                var_request_str, set_args, RQ(args),
      RX_HTTP_VAR_CHANGEABLE | NC },
    { "query_string",        var_request_str, NULL, RQ(args), NC },
    { "is_args",             var_is_args, NULL, 0, NC },
    { "request",             var_request_str, NULL, RQ(request_line), 0 },
    { "request_method",      var_request_method, NULL, 0, NC },
    { "server_protocol",     var_request_str, NULL, RQ(http_protocol), 0 },
    { "host",                var_host, NULL, 0, 0 },
    { "request_port",        var_request_port, NULL, 0, 0 },
    { "is_request_port",     var_request_port, NULL, 1, 0 },
    { "content_type",        var_header_elt, NULL,
      RQ(headers_in.content_type), 0 },
    { "content_length",      var_content_length, NULL, 0, NC },
    { "request_body",        var_request_body, NULL, 0, NC },
    { "request_body_file",   var_request_body_file, NULL, 0, NC },
    /* realip may set them as late as the preaccess phase */
    { "remote_addr",         var_addr, NULL, 0, NC },
    { "binary_remote_addr",  var_binary_remote_addr, NULL, 0, NC },
    { "remote_port",         var_port, NULL, 0, NC },
    { "server_addr",         var_addr, NULL, 1, 0 },
    { "server_port",         var_port, NULL, 1, 0 },
    { "server_name",         var_server_name, NULL, 0, 0 },
    { "scheme",              var_tls, NULL, (uintptr_t) scheme_values, 0 },
    { "https",               var_tls, NULL, (uintptr_t) https_values, 0 },
    /* set by auth_basic when it exists; until then always absent ("-") */
    { "remote_user",         var_remote_user, NULL, 0, 0 },
    { "status",              var_status, NULL, 0, NC },
    { "body_bytes_sent",     var_body_bytes_sent, NULL, 0, NC },
    { "bytes_sent",          var_request_int, NULL, RQ(bytes_sent), NC },
    { "request_length",      var_request_int, NULL, RQ(request_length), NC },
    { "request_time",        var_request_time, NULL, 0, NC },
    { "request_start_us",    var_request_int, NULL, RQ(start_usec), 0 },
    { "request_completion",  var_request_completion, NULL, 0, NC },
    { "request_id",          var_request_id, NULL, 0, 0 },
    { "msec",                var_msec, NULL, 0, NC },
    { "time_local",          var_time, NULL, (uintptr_t) rx_log_local_time, NC },
    { "time_iso8601",        var_time, NULL, (uintptr_t) rx_iso8601_time, NC },
    { "connection",          var_connection, NULL, 0, 0 },
    { "connection_requests", var_connection_requests, NULL, 0, NC },
    { "connection_time",     var_connection_time, NULL, 0, NC },
    { "pipe",                var_pipe, NULL, 0, 0 },
    { "pid",                 var_pid, NULL, 0, 0 },
    { "hostname",            var_hostname, NULL, 0, 0 },
    { "nginx_version",       var_const, NULL,
      (uintptr_t) RINGX_NGINX_COMPAT_VERSION, 0 },
    { "ringx_version",       var_const, NULL, (uintptr_t) RINGX_VERSION, 0 },
    { "document_root",       var_document_root, NULL, 0, NC },
    { "realpath_root",       var_realpath_root, NULL, 0, NC },
    { "request_filename",    var_request_filename, NULL, 0, NC },
    { "http_",               rx_http_var_http, NULL, 0, PFX },
    { "sent_http_",          rx_http_var_sent_http, NULL, 0, PFX | NC },
    { "cookie_",             rx_http_var_cookie, NULL, 0, PFX },
    { "arg_",                rx_http_var_arg, NULL, 0, PFX | NC },
};

rx_int_t
rx_http_variables_add_core_vars(rx_conf_t *cf)
{
    rx_http_variable_t *v;
    rx_str_t            name;
    rx_uint_t           i;

    for (i = 0; i < rx_nelems(core_vars); i++) {
        name.data = (char *) core_vars[i].name;
        name.len = strlen(name.data);
        v = rx_http_add_variable(cf, &name, core_vars[i].flags);
        if (v == NULL) {
            return RX_ERROR;
        }
        v->get = core_vars[i].get;
        v->set = core_vars[i].set;
        v->data = core_vars[i].data;
    }
    if (rx_http_limit_rate_add_variables(cf) != RX_OK) {
        return RX_ERROR;
    }
    return rx_http_proxy_protocol_add_variables(cf);
}
