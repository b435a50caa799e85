/*
 * realip.c: nginx's realip module. Behind a trusted proxy (set_real_ip_from)
 * the client's address is taken from a header (real_ip_header: X-Real-IP,
 * X-Forwarded-For walked from the right, any header) or from the PROXY
 * protocol header, and becomes the request's address (r->remote_addr):
 * $remote_addr, $remote_port, $binary_remote_addr, allow/deny, geo,
 * ip_hash, the logs and $proxy_add_x_forwarded_for see it. The
 * connection keeps its own ($realip_remote_addr, $realip_remote_port).
 *
 * As in nginx the handler runs twice: in the post-read phase with the
 * server's settings (before the server's rewrite script sees
 * $remote_addr), and in the preaccess phase with the location's; the
 * first that finds an address wins for the rest of the request.
 */
#include <ctype.h>
#include "http.h"
#include "http_variables.h"
#include "inet.h"

typedef enum {
    REALIP_XREALIP = 0,
    REALIP_XFWD,
    REALIP_HEADER,
    REALIP_PROXY
} realip_type_t;

typedef struct {
    rx_array_t  *from;        /* rx_cidr_t; NULL: realip is off here */
    rx_uint_t    type;        /* realip_type_t */
    rx_str_t     header;      /* REALIP_HEADER: the name, lower-cased */
    rx_int_t     recursive;
} rx_http_realip_conf_t;

static const char *set_from(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_header(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static rx_int_t realip_add_variables(rx_conf_t *cf);
static rx_int_t realip_init(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);

#define REALIP_CONF  (RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF)

static const rx_command_t realip_commands[] = {
    { "set_real_ip_from", REALIP_CONF | RX_CONF_TAKE1, set_from,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "real_ip_header", REALIP_CONF | RX_CONF_TAKE1, set_header,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "real_ip_recursive", REALIP_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_realip_conf_t, recursive),
      NULL },
    rx_null_command
};

static const rx_http_module_t realip_ctx = {
    realip_add_variables, realip_init, NULL, NULL, NULL, NULL, create_conf,
    merge_conf
};

rx_module_t rx_http_realip_module = {
    "rx_http_realip_module", 0, 0, RX_HTTP_MODULE, &realip_ctx,
    realip_commands, NULL, NULL, NULL, NULL
};

/* ---- configuration ------------------------------------------------------- */

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_realip_conf_t *conf = rx_pcalloc(cf->pool, sizeof(*conf));

    if (conf == NULL) {
        return NULL;
    }
    conf->type = RX_CONF_UNSET_UINT;
    conf->recursive = RX_CONF_UNSET;
    return conf;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_realip_conf_t *p = prev, *c = conf;

    if (c->from == NULL) {
        c->from = p->from;
    }
    rx_conf_merge_uint(c->type, p->type, REALIP_XREALIP);
    rx_conf_merge_value(c->recursive, p->recursive, 0);
    if (c->header.len == 0) {
        c->header = p->header;
    }
    return RX_CONF_OK;
}

/* A host name in set_real_ip_from: every address it has now (nginx
 * resolves it once too), each trusted as a /32 or /128. */
static const char *
push_resolved(rx_conf_t *cf, rx_array_t *from, const rx_str_t *name)
{
    rx_cidr_t     *cidr;
    rx_sockaddr_t *sa;
    rx_array_t     addrs;
    const char    *err;
    rx_uint_t      i;
    char           text[300];
    rx_str_t       host;

    if (memchr(name->data, '/', name->len) || name->len > 255
        || rx_array_init(&addrs, cf->temp_pool, 2, sizeof(rx_sockaddr_t))
           != RX_OK) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                          name->data);
        return RX_CONF_ERROR;
    }
    /* a port keeps rx_parse_addr from reading a name as a port */
    host.len = (size_t) snprintf(text, sizeof(text), "%s:1", name->data);
    host.data = text;
    err = rx_parse_addr(cf->temp_pool, &host, 0, false, &addrs);
    if (err) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in set_real_ip_from \"%s\"",
                          err, name->data);
        return RX_CONF_ERROR;
    }
    sa = addrs.elts;
    for (i = 0; i < addrs.nelts; i++) {
        cidr = rx_array_push(from);
        if (cidr == NULL) {
            return RX_CONF_ERROR;
        }
        memset(cidr, 0, sizeof(*cidr));
        cidr->family = sa[i].u.sa.sa_family;
        if (cidr->family == AF_INET) {
            memcpy(cidr->addr, &sa[i].u.sin.sin_addr, 4);
            memset(cidr->mask, 0xff, 4);
        } else {
            memcpy(cidr->addr, &sa[i].u.sin6.sin6_addr, 16);
            memset(cidr->mask, 0xff, 16);
        }
    }
    return RX_CONF_OK;
}

/* set_real_ip_from address | CIDR | unix: | hostname (resolved now, each
 * of its addresses trusted). Repeatable; a level with its own replaces
 * its parent's list, as nginx. */
static const char *
set_from(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_realip_conf_t *rcf = conf;
    rx_str_t              *value = cf->args->elts;
    rx_cidr_t             *cidr, net;
    rx_int_t               rc;

    if (rcf->from == NULL) {
        rcf->from = rx_array_create(cf->pool, 2, sizeof(rx_cidr_t));
        if (rcf->from == NULL) {
            return RX_CONF_ERROR;
        }
    }
    if (rx_str_eq(&value[1], "unix:")) {
        cidr = rx_array_push(rcf->from);
        if (cidr == NULL) {
            return RX_CONF_ERROR;
        }
        memset(cidr, 0, sizeof(*cidr));
        cidr->family = AF_UNIX;
        return RX_CONF_OK;
    }
    rc = rx_ptocidr(&value[1], &net);
    if (rc != RX_ERROR) {
        if (rc == RX_DONE) {
            rx_conf_log_error(RX_LOG_WARN, cf, 0, "low address bits of %s "
                              "are meaningless", value[1].data);
        }
        cidr = rx_array_push(rcf->from);
        if (cidr == NULL) {
            return RX_CONF_ERROR;
        }
        *cidr = net;
        return RX_CONF_OK;
    }
    return push_resolved(cf, rcf->from, &value[1]);
}

/* real_ip_header X-Real-IP | X-Forwarded-For | proxy_protocol | name.
 * The three keywords are matched as nginx does, case-sensitively; any
 * other word is a header name (case-insensitive, as header names are). */
static const char *
set_header(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_realip_conf_t *rcf = conf;
    rx_str_t              *value = cf->args->elts;
    size_t                 i;

    if (rcf->type != RX_CONF_UNSET_UINT) {
        return "is duplicate";
    }
    if (strcmp(value[1].data, "X-Real-IP") == 0) {
        rcf->type = REALIP_XREALIP;
    } else if (strcmp(value[1].data, "X-Forwarded-For") == 0) {
        rcf->type = REALIP_XFWD;
    } else if (strcmp(value[1].data, "proxy_protocol") == 0) {
        rcf->type = REALIP_PROXY;
    } else {
        rcf->type = REALIP_HEADER;
        rcf->header.len = value[1].len;
        rcf->header.data = rx_pnalloc(cf->pool, value[1].len + 1);
        if (rcf->header.data == NULL) {
            return RX_CONF_ERROR;
        }
        for (i = 0; i <= value[1].len; i++) {
            rcf->header.data[i] = (char) tolower((unsigned char) value[1].data[i]);
        }
    }
    return RX_CONF_OK;
}

/* ---- request time -------------------------------------------------------- */

/* The first header named name (lower-cased), or NULL. */
static const rx_table_elt_t *
find_header(rx_http_request_t *r, const char *name, size_t len)
{
    const rx_table_elt_t *h = r->headers_in.headers.elts;
    rx_uint_t             i;

    for (i = 0; i < r->headers_in.headers.nelts; i++) {
        if (h[i].key.len == len && memcmp(h[i].lowcase_key, name, len) == 0) {
            return &h[i];
        }
    }
    return NULL;
}

/*
 * One header value, from its right end, as nginx's forwarded-address
 * walk: while the address so far is trusted, the last item not yet taken
 * replaces it (items are separated by commas and spaces; an item is
 * "addr", "addr:port", "[v6]" or "[v6]:port"); without recursion, one
 * step only. RX_OK: stepped as far as allowed; RX_DONE: stopped at an
 * untrusted address or an item that is not one, after a step;
 * RX_DECLINED: no step.
 */
static rx_int_t
walk_value(const rx_str_t *value, rx_sockaddr_t *addr,
    const rx_array_t *from, bool recursive)
{
    const char    *xff = value->data;
    size_t         len = value->len, start;
    bool           found = false;
    rx_sockaddr_t  next;

    do {
        if (!rx_cidr_match(addr, from->elts, from->nelts)) {
            return found ? RX_DONE : RX_DECLINED;
        }
        while (len > 0 && (xff[len - 1] == ' ' || xff[len - 1] == ',')) {
            len--;
        }
        for (start = len; start > 0 && xff[start - 1] != ' '
                          && xff[start - 1] != ','; start--) {
            /* back to the item's first byte */
        }
        if (!rx_parse_addr_port(xff + start, len - start, &next)) {
            return found ? RX_DONE : RX_DECLINED;
        }
        *addr = next;
        found = true;
        len = start;
    } while (recursive && start > 0);
    return RX_OK;
}

/* Every X-Forwarded-For header, the last first: the walk goes on into an
 * earlier header only while recursive and the later ones were walked to
 * their start. */
static rx_int_t
walk_xff(rx_http_request_t *r, rx_sockaddr_t *addr, const rx_array_t *from,
    bool recursive)
{
    const rx_table_elt_t *h = r->headers_in.headers.elts;
    rx_uint_t             i = r->headers_in.headers.nelts;
    rx_int_t              rc = RX_DECLINED;
    bool                  found = false;

    while (i--) {
        if (h[i].key.len != sizeof("x-forwarded-for") - 1
            || memcmp(h[i].lowcase_key, "x-forwarded-for", h[i].key.len) != 0) {
            continue;
        }
        rc = walk_value(&h[i].value, addr, from, recursive);
        if (!recursive) {
            break;
        }
        if (rc == RX_DECLINED && found) {
            rc = RX_DONE;
            break;
        }
        if (rc != RX_OK) {
            break;
        }
        found = true;
    }
    return rc;
}

static rx_int_t
realip_handler(rx_http_request_t *r)
{
    rx_http_realip_conf_t *rcf = rx_http_get_module_loc_conf(r,
                                    rx_http_realip_module);
    const rx_table_elt_t  *h = NULL;
    const rx_sockaddr_t   *peer;
    rx_sockaddr_t          addr, *kept;
    rx_int_t               rc;

    if (rcf->from == NULL || r->remote_addr != NULL || r->conn == NULL) {
        return RX_DECLINED;         /* off here, or found already */
    }
    peer = rx_conn_peer(r->conn);
    memset(&addr, 0, sizeof(addr));
    memcpy(&addr, peer, peer->u.sa.sa_family == AF_INET
                        || peer->u.sa.sa_family == AF_INET6
                        ? RX_SOCKADDR_IP_SIZE : sizeof(addr));
    switch (rcf->type) {
    case REALIP_PROXY:
        if (r->conn->proxy_protocol == NULL
            || !rx_cidr_match(&addr, rcf->from->elts, rcf->from->nelts)) {
            return RX_DECLINED;
        }
        /* with its port; an IP address fills RX_SOCKADDR_IP_SIZE */
        memset(&addr, 0, sizeof(addr));
        memcpy(&addr, r->conn->proxy_protocol->src, RX_SOCKADDR_IP_SIZE);
        rc = RX_OK;
        break;
    case REALIP_XFWD:
        if (r->headers_in.x_forwarded_for == NULL) {
            return RX_DECLINED;
        }
        rc = walk_xff(r, &addr, rcf->from, rcf->recursive);
        break;
    default:
        h = rcf->type == REALIP_XREALIP
            ? find_header(r, "x-real-ip", sizeof("x-real-ip") - 1)
            : find_header(r, rcf->header.data, rcf->header.len);
        if (h == NULL) {
            return RX_DECLINED;
        }
        rc = walk_value(&h->value, &addr, rcf->from, rcf->recursive);
        break;
    }
    if (rc == RX_DECLINED) {
        return RX_DECLINED;
    }
    kept = rx_palloc(r->pool, sizeof(*kept));
    if (kept == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    *kept = addr;
    r->remote_addr = kept;
    return RX_DECLINED;
}

static rx_int_t
realip_init(rx_conf_t *cf)
{
    if (rx_http_add_phase_handler(cf, RX_HTTP_POST_READ_PHASE, realip_handler)
        != RX_OK) {
        return RX_ERROR;
    }
    return rx_http_add_phase_handler(cf, RX_HTTP_PREACCESS_PHASE,
                                     realip_handler);
}

/* ---- variables ----------------------------------------------------------- */

/* $realip_remote_addr (data 0) and $realip_remote_port (1): the
 * connection's own peer, whatever realip found. */
static rx_int_t
var_realip(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const rx_sockaddr_t *a;
    char                *p;
    unsigned             port = 0;
    size_t               size = RX_SOCKADDR_STRLEN;

    if (r->conn == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    a = rx_conn_peer(r->conn);
    if (data == 1) {
        if (a->u.sa.sa_family == AF_INET) {
            port = ntohs(a->u.sin.sin_port);
        } else if (a->u.sa.sa_family == AF_INET6) {
            port = ntohs(a->u.sin6.sin6_port);
        }
        v->data = (char *) "";
        v->len = 0;
        if (port == 0) {
            return RX_OK;           /* a UNIX-domain socket has none */
        }
        size = 8;
    }
    p = rx_pnalloc(r->pool, size);
    if (p == NULL) {
        return RX_ERROR;
    }
    v->data = p;
    v->len = data == 1 ? (size_t) snprintf(p, size, "%u", port)
                       : rx_sock_ntop(a, p, size, false);
    return RX_OK;
}

static rx_int_t
realip_add_variables(rx_conf_t *cf)
{
    static const char *names[] = { "realip_remote_addr", "realip_remote_port" };
    rx_uint_t          i;

    for (i = 0; i < rx_nelems(names); i++) {
        rx_str_t            name = { strlen(names[i]), (char *) names[i] };
        rx_http_variable_t *v = rx_http_add_variable(cf, &name, 0);

        if (v == NULL) {
            return RX_ERROR;
        }
        v->get = var_realip;
        v->data = i;
    }
    return RX_OK;
}
