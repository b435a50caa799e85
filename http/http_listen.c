/*
 * http_listen.c: the listen directive and its options, and the step that
 * groups listen lines by address into the cycle's listening sockets.
 */
#include "http_core.h"
#include "http_v2.h"

static bool
opt_num(rx_conf_t *cf, const rx_str_t *v, const char *name, int *out, bool size)
{
    size_t   n = strlen(name);
    rx_str_t num = { v->len - n, v->data + n };
    ssize_t  x = size ? rx_parse_size(&num) : rx_atoi(num.data, num.len);

    if (x < 0 || x > INT_MAX) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid %.*s \"%s\"",
                          (int) (n - 1), name, num.data);
        return false;
    }
    *out = (int) x;
    return true;
}

/* so_keepalive=on|off|[keepidle]:[keepintvl]:[keepcnt] */
static bool
opt_keepalive(rx_conf_t *cf, rx_http_listen_opt_t *lo, const rx_str_t *v)
{
    char *p = v->data + sizeof("so_keepalive=") - 1, *part;
    int  *fields[3] = { &lo->keepidle, &lo->keepintvl, &lo->keepcnt };
    int   i;

    if (strcmp(p, "on") == 0) {
        lo->so_keepalive = 1;
        return true;
    }
    if (strcmp(p, "off") == 0) {
        lo->so_keepalive = 2;
        return true;
    }
    for (i = 0; i < 3; i++) {
        part = strsep(&p, ":");
        if (part == NULL) {
            break;
        }
        if (*part) {
            rx_str_t t = { strlen(part), part };
            rx_int_t x = i == 2 ? rx_atoi(t.data, t.len) : rx_parse_time(&t, true);
            if (x <= 0 || x > INT_MAX) goto invalid;
            *fields[i] = (int) x;
        }
    }
    if (p != NULL) {
        goto invalid;
    }
    lo->so_keepalive = 1;
    return true;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid so_keepalive value: \"%s\"",
                      v->data + sizeof("so_keepalive=") - 1);
    return false;
}

static bool
parse_option(rx_conf_t *cf, rx_http_listen_opt_t *lo, rx_str_t *v)
{
    if (rx_str_eq(v, "default_server") || rx_str_eq(v, "default")) {
        lo->default_server = true;
        return true;
    }
#if (RX_HAVE_OPENSSL)
    if (rx_str_eq(v, "ssl")) {
        lo->ssl = true;             /* not a socket option: lo->set stays */
        return true;
    }
#endif
    if (rx_str_eq(v, "proxy_protocol")) {
        lo->proxy_protocol = true;  /* not a socket option either */
        return true;
    }
    if (rx_str_eq(v, "http2")) {
        lo->http2 = true;           /* nor this: the server speaks HTTP/2 */
        return true;
    }
    lo->set = true;
    if (rx_str_eq(v, "reuseport")) {
        lo->reuseport = true;
        lo->bind = true;
        return true;
    }
    if (rx_str_eq(v, "deferred")) {
        lo->deferred = true;
        return true;
    }
    if (rx_str_eq(v, "bind")) {
        lo->bind = true;
        return true;
    }
    if (strncmp(v->data, "backlog=", 8) == 0) {
        return opt_num(cf, v, "backlog=", &lo->backlog, false);
    }
    if (strncmp(v->data, "rcvbuf=", 7) == 0) {
        return opt_num(cf, v, "rcvbuf=", &lo->rcvbuf, true);
    }
    if (strncmp(v->data, "sndbuf=", 7) == 0) {
        return opt_num(cf, v, "sndbuf=", &lo->sndbuf, true);
    }
    if (strncmp(v->data, "ipv6only=", 9) == 0) {
        if (strcmp(v->data + 9, "on") == 0) lo->ipv6only = 1;
        else if (strcmp(v->data + 9, "off") == 0) lo->ipv6only = 0;
        else {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid ipv6only flags "
                              "\"%s\"", v->data + 9);
            return false;
        }
        lo->bind = true;
        return true;
    }
    if (strncmp(v->data, "so_keepalive=", 13) == 0) {
        return opt_keepalive(cf, lo, v);
    }
    if (rx_str_eq(v, "ssl") || rx_str_eq(v, "quic")) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "the \"%s\" parameter of "
            "\"listen\" is not supported by this ringx build yet", v->data);
        return false;
    }
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"", v->data);
    return false;
}

/*
 * A port range at the end of a listen address ("8000-8010",
 * "127.0.0.1:8000-8010", "[::1]:8000-8010"), as nginx: *host_len is the
 * length of what comes before the port (its ':' included), *first and
 * *last the ports. RX_DECLINED: no range (a single port, or none);
 * RX_ERROR: err says what is wrong, in nginx's words.
 */
static rx_int_t
port_range(const rx_str_t *v, size_t *host_len, rx_int_t *first,
    rx_int_t *last, const char **err)
{
    const char *p = v->data, *end = v->data + v->len, *colon, *dash;

    colon = memrchr(p, ':', v->len);
    if (colon && memchr(colon, ']', (size_t) (end - colon))) {
        return RX_DECLINED;                    /* "[::1]": no port */
    }
    p = colon ? colon + 1 : p;
    dash = memchr(p, '-', (size_t) (end - p));
    if (dash == NULL || (colon == NULL && v->data[0] == '[')) {
        return RX_DECLINED;
    }
    *first = rx_atoi(p, (size_t) (dash - p));
    *last = rx_atoi(dash + 1, (size_t) (end - dash - 1));
    if (*first == -1 || *last == -1) {
        return RX_DECLINED;   /* "host-name" or "18400-": a host to look up */
    }
    *host_len = (size_t) (p - v->data);
    if (*first < 1 || *first > 65535 || *last < 1 || *last > 65535) {
        *err = "invalid port";
        return RX_ERROR;
    }
    if (*last < *first) {
        *err = "invalid port range";
        return RX_ERROR;
    }
    return RX_OK;
}

/* The addresses of a listen argument: one port, or each of a range. */
static const char *
listen_addrs(rx_conf_t *cf, const rx_str_t *v, rx_array_t *list)
{
    rx_int_t    first, last, port;
    size_t      host_len;
    const char *err = NULL;
    char        text[320];
    rx_str_t    one;

    switch (port_range(v, &host_len, &first, &last, &err)) {
    case RX_DECLINED:
        return rx_parse_addr(cf->pool, v, 80, true, list);
    case RX_ERROR:
        return err;
    }
    if (host_len + 6 > sizeof(text)) {
        return "host name is too long";
    }
    memcpy(text, v->data, host_len);
    for (port = first; port <= last && err == NULL; port++) {
        one.len = host_len + (size_t) snprintf(text + host_len, 6, "%d",
                                               (int) port);
        one.data = text;
        err = rx_parse_addr(cf->pool, &one, 80, true, list);
    }
    return err;
}

const char *
rx_http_core_listen(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_core_srv_conf_t  *cscf = conf;
    rx_http_core_main_conf_t *cmcf = rx_http_conf_get_module_main_conf(cf,
                                         rx_http_core_module);
    rx_str_t                 *value = cf->args->elts;
    rx_http_listen_opt_t      proto, *lo;
    rx_sockaddr_t            *addrs;
    rx_array_t                list;
    const char               *err;
    rx_uint_t                 i;

    memset(&proto, 0, sizeof(proto));
    proto.backlog = 511;
    proto.rcvbuf = proto.sndbuf = -1;
    proto.ipv6only = -1;
    proto.server = cscf;
    proto.file = cf->conf_file->name;
    proto.line = cf->conf_file->line;
    for (i = 2; i < cf->args->nelts; i++) {
        if (!parse_option(cf, &proto, &value[i])) {
            return RX_CONF_ERROR;
        }
    }
    if (proto.http2) {
        rx_http_v2_listen_enable(cf, cscf);
    }
    if (rx_array_init(&list, cf->temp_pool, 2, sizeof(rx_sockaddr_t)) != RX_OK) {
        return RX_CONF_ERROR;
    }
    err = listen_addrs(cf, &value[1], &list);
    if (err) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s in \"%s\" of the \"listen\" "
                          "directive", err, value[1].data);
        return RX_CONF_ERROR;
    }
    cscf->listen = true;
    addrs = list.elts;
    for (i = 0; i < list.nelts; i++) {
        char text[128];
        lo = rx_array_push(&cmcf->listens);
        if (lo == NULL) {
            return RX_CONF_ERROR;
        }
        *lo = proto;
        lo->addr = addrs[i];
        lo->addr_text.len = rx_sock_ntop(&addrs[i], text, sizeof(text), true);
        lo->addr_text.data = rx_pstrdup_c(cf->pool, text, lo->addr_text.len);
        if (lo->addr_text.data == NULL) {
            return RX_CONF_ERROR;
        }
    }
    return RX_CONF_OK;
}

static bool
is_wildcard(const rx_sockaddr_t *a)
{
    if (a->u.sa.sa_family == AF_INET) {
        return a->u.sin.sin_addr.s_addr == htonl(INADDR_ANY);
    }
    if (a->u.sa.sa_family == AF_INET6) {
        return memcmp(&a->u.sin6.sin6_addr, &in6addr_any, 16) == 0;
    }
    return false;
}

static in_port_t
port_of(const rx_sockaddr_t *a)
{
    return a->u.sa.sa_family == AF_INET ? a->u.sin.sin_port
         : a->u.sa.sa_family == AF_INET6 ? a->u.sin6.sin6_port : 0;
}

/* The listening socket an address binds through: its own, or a wildcard on
 * the same port and family when it did not ask for `bind` (nginx's rule). */
static rx_listening_t *
find_listening(rx_cycle_t *cycle, const rx_http_listen_opt_t *lo)
{
    rx_listening_t *ls = cycle->listening.elts;
    rx_uint_t       i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (rx_sockaddr_eq(&ls[i].addr, &lo->addr)) {
            return &ls[i];
        }
    }
    if (lo->bind || is_wildcard(&lo->addr) || lo->addr.u.sa.sa_family == AF_UNIX) {
        return NULL;
    }
    for (i = 0; i < cycle->listening.nelts; i++) {
        if (ls[i].addr.u.sa.sa_family == lo->addr.u.sa.sa_family
            && is_wildcard(&ls[i].addr)
            && port_of(&ls[i].addr) == port_of(&lo->addr)) {
            return &ls[i];
        }
    }
    return NULL;
}

/* tcp_nodelay of a server (its own level): the listening socket has
 * TCP_NODELAY when every server on it wants it (http_connection.c then
 * leaves the accepted sockets as they are). */
static bool
server_nodelay(rx_http_core_srv_conf_t *cscf)
{
    rx_http_core_loc_conf_t *clcf =
        cscf->ctx->loc_conf[rx_http_core_module.ctx_index];

    return clcf->tcp_nodelay;
}

static rx_int_t
add_one(rx_conf_t *cf, rx_http_listen_opt_t *lo)
{
    rx_cycle_t     *cycle = cf->cycle;
    rx_listening_t *ls = find_listening(cycle, lo);
    rx_http_listen_opt_t **slot, **others;
    rx_uint_t       i;

    if (ls == NULL) {
        ls = rx_array_push(&cycle->listening);
        if (ls == NULL) {
            return RX_ERROR;
        }
        memset(ls, 0, sizeof(*ls));
        ls->addr = lo->addr;
        ls->addr_text = lo->addr_text;
        ls->fd = -1;
        ls->backlog = lo->backlog;
        ls->rcvbuf = lo->rcvbuf;
        ls->sndbuf = lo->sndbuf;
        ls->ipv6only = lo->ipv6only;
        ls->so_keepalive = lo->so_keepalive;
        ls->keepidle = lo->keepidle;
        ls->keepintvl = lo->keepintvl;
        ls->keepcnt = lo->keepcnt;
        ls->reuseport = lo->reuseport;
        ls->deferred = lo->deferred;
        ls->nodelay = lo->addr.u.sa.sa_family != AF_UNIX;
        ls->servers = rx_array_create(cf->pool, 2, sizeof(void *));
        if (ls->servers == NULL) {
            return RX_ERROR;
        }
    } else {
        /* the same address twice in one server: nginx's first complaint,
         * ahead of the options and default_server clashes it implies */
        others = ((rx_array_t *) ls->servers)->elts;
        for (i = 0; i < ((rx_array_t *) ls->servers)->nelts; i++) {
            if (others[i]->server == lo->server
                && rx_sockaddr_eq(&others[i]->addr, &lo->addr)) {
                rx_log_error(RX_LOG_EMERG, cf->log, 0, "a duplicate listen "
                    "%s in %s:%lu", lo->addr_text.data, lo->file.data,
                    (unsigned long) lo->line);
                return RX_ERROR;
            }
        }
    }
    ls->nodelay = ls->nodelay && server_nodelay(lo->server);
    if (lo->set && rx_sockaddr_eq(&ls->addr, &lo->addr)) {
        others = ((rx_array_t *) ls->servers)->elts;
        for (i = 0; i < ((rx_array_t *) ls->servers)->nelts; i++) {
            if (others[i]->set && rx_sockaddr_eq(&others[i]->addr, &lo->addr)) {
                rx_log_error(RX_LOG_EMERG, cf->log, 0, "duplicate listen "
                    "options for %s in %s:%lu", lo->addr_text.data,
                    lo->file.data, (unsigned long) lo->line);
                return RX_ERROR;
            }
        }
    }
    others = ((rx_array_t *) ls->servers)->elts;
    for (i = 0; i < ((rx_array_t *) ls->servers)->nelts; i++) {
        if (lo->default_server && others[i]->default_server
            && rx_sockaddr_eq(&others[i]->addr, &lo->addr)) {
            rx_log_error(RX_LOG_EMERG, cf->log, 0, "a duplicate default server "
                "for %s in %s:%lu", lo->addr_text.data, lo->file.data,
                (unsigned long) lo->line);
            return RX_ERROR;
        }
    }
    slot = rx_array_push(ls->servers);
    if (slot == NULL) {
        return RX_ERROR;
    }
    *slot = lo;
    return RX_OK;
}

rx_int_t
rx_http_add_listening(rx_conf_t *cf, rx_http_core_main_conf_t *cmcf)
{
    rx_http_listen_opt_t *lo = cmcf->listens.elts;
    rx_uint_t             i, pass;

    if (lo == NULL) {
        return RX_OK;
    }
    /* wildcards first, so specific addresses can attach to them */
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < cmcf->listens.nelts; i++) {
            bool first = is_wildcard(&lo[i].addr) || lo[i].bind
                         || lo[i].addr.u.sa.sa_family == AF_UNIX;
            if ((pass == 0) != first) {
                continue;
            }
            if (lo[i].addr_text.data == NULL) {
                char text[128];
                lo[i].addr_text.len = rx_sock_ntop(&lo[i].addr, text,
                                                   sizeof(text), true);
                lo[i].addr_text.data = rx_pstrdup_c(cf->pool, text,
                                                    lo[i].addr_text.len);
                if (lo[i].addr_text.data == NULL) return RX_ERROR;
            }
            if (add_one(cf, &lo[i]) != RX_OK) {
                return RX_ERROR;
            }
        }
    }
    return RX_OK;
}
