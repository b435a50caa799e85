/*
 * http_proxy_protocol_vars.c: $proxy_protocol_addr, $proxy_protocol_port,
 * $proxy_protocol_server_addr, $proxy_protocol_server_port and
 * $proxy_protocol_tlv_NAME: what the balancer's PROXY protocol header said
 * (event/conn_proxy_protocol.c keeps it in c->proxy_protocol). Without a
 * header, or one that carried no address, they are not found ("-" in a
 * log), as nginx.
 */
#include "http.h"
#include "http_variables_int.h"

static const rx_proxy_protocol_t *
pp_of(rx_http_request_t *r)
{
    return r->conn ? r->conn->proxy_protocol : NULL;
}

/* data: 0 the client's address (src), 1 the server's (dst). */
static rx_int_t
var_pp_addr(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const rx_proxy_protocol_t *pp = pp_of(r);
    char                       text[RX_SOCKADDR_STRLEN];
    size_t                     n;

    if (pp == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    n = rx_sock_ntop(data ? pp->dst : pp->src, text, sizeof(text), false);
    return rx_http_var_copy(r, v, text, n);
}

static rx_int_t
var_pp_port(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const rx_proxy_protocol_t *pp = pp_of(r);
    const rx_sockaddr_t       *a;
    unsigned                   port;

    if (pp == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    a = data ? pp->dst : pp->src;
    port = ntohs(a->u.sa.sa_family == AF_INET ? a->u.sin.sin_port
                                              : a->u.sin6.sin6_port);
    if (port == 0) {
        rx_http_var_str(v, "", 0);          /* nginx: empty for port 0 */
        return RX_OK;
    }
    return rx_http_var_uint(r, v, port);
}

/* $proxy_protocol_tlv_NAME (data: the full name, an rx_str_t *). */
static rx_int_t
var_pp_tlv(rx_http_request_t *r, rx_http_variable_value_t *v, uintptr_t data)
{
    const rx_str_t            *full = (const rx_str_t *) data;
    const rx_proxy_protocol_t *pp = pp_of(r);
    size_t                     skip = sizeof("proxy_protocol_tlv_") - 1;
    rx_str_t                   name = { full->len - skip, full->data + skip };
    rx_str_t                   value;
    char                       num[16];
    const char                *why = NULL;
    rx_int_t                   rc;

    if (pp == NULL) {
        v->not_found = 1;
        return RX_OK;
    }
    rc = rx_proxy_protocol_tlv(pp, &name, &value, num, &why);
    if (rc == RX_ERROR) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "%s \"%.*s\"", why,
                                  (int) name.len, name.data);
    }
    if (rc != RX_OK) {
        v->not_found = 1;
        return RX_OK;
    }
    if (value.data == num) {
        return rx_http_var_copy(r, v, num, value.len);
    }
    rx_http_var_str(v, value.data, value.len);   /* the connection's pool */
    return RX_OK;
}

typedef struct {
    const char               *name;
    rx_http_get_variable_pt   get;
    uintptr_t                 data;
    unsigned                  flags;
} pp_var_t;

static const pp_var_t pp_vars[] = {
    { "proxy_protocol_addr", var_pp_addr, 0, 0 },
    { "proxy_protocol_port", var_pp_port, 0, 0 },
    { "proxy_protocol_server_addr", var_pp_addr, 1, 0 },
    { "proxy_protocol_server_port", var_pp_port, 1, 0 },
    { "proxy_protocol_tlv_", var_pp_tlv, 0, RX_HTTP_VAR_PREFIX },
};

rx_int_t
rx_http_proxy_protocol_add_variables(rx_conf_t *cf)
{
    rx_http_variable_t *v;
    rx_str_t            name;
    rx_uint_t           i;

    for (i = 0; i < rx_nelems(pp_vars); i++) {
        name.data = (char *) pp_vars[i].name;
        name.len = strlen(name.data);
        v = rx_http_add_variable(cf, &name, pp_vars[i].flags);
        if (v == NULL) {
            return RX_ERROR;
        }
        v->get = pp_vars[i].get;
        v->data = pp_vars[i].data;
    }
    return RX_OK;
}
