/*
 * access.c: allow and deny, an access-phase handler. The rules of a level
 * are checked in the order written and the first one that matches the
 * client's address decides; a level with rules of its own replaces its
 * parent's list, as in nginx. IPv4-mapped IPv6 clients (::ffff:a.b.c.d)
 * are matched by the IPv4 rules. The client is the request's: the one
 * realip found behind a trusted proxy, else the connection's peer.
 */
#include <arpa/inet.h>
#include "http.h"
#include "inet.h"

typedef struct {
    rx_cidr_t    net;         /* family AF_UNSPEC: all */
    bool         deny;
} rx_http_access_rule_t;

typedef struct {
    rx_array_t  *rules;       /* rx_http_access_rule_t; NULL: none here */
} rx_http_access_conf_t;

static const char *set_rule(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t access_init(rx_conf_t *cf);

static const rx_command_t access_commands[] = {
    { "allow", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_HTTP_LMT_CONF | RX_CONF_TAKE1, set_rule, RX_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    { "deny", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_HTTP_LMT_CONF | RX_CONF_TAKE1, set_rule, RX_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    rx_null_command
};

static const rx_http_module_t access_ctx = {
    NULL, access_init, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_access_module = {
    "rx_http_access_module", 0, 0, RX_HTTP_MODULE, &access_ctx,
    access_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    return rx_pcalloc(cf->pool, sizeof(rx_http_access_conf_t));
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_access_conf_t *p = prev, *c = conf;

    if (c->rules == NULL) {
        c->rules = p->rules;
    }
    return RX_CONF_OK;
}

static const char *
set_rule(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_access_conf_t *acf = conf;
    rx_str_t              *value = cf->args->elts;
    rx_http_access_rule_t *rule;
    rx_int_t               rc;

    if (acf->rules == NULL) {
        acf->rules = rx_array_create(cf->pool, 4, sizeof(rx_http_access_rule_t));
        if (acf->rules == NULL) {
            return RX_CONF_ERROR;
        }
    }
    rule = rx_array_push(acf->rules);
    if (rule == NULL) {
        return RX_CONF_ERROR;
    }
    memset(rule, 0, sizeof(*rule));
    rule->deny = cmd->name[0] == 'd';

    if (rx_str_eq(&value[1], "all")) {
        rule->net.family = AF_UNSPEC;
        return RX_CONF_OK;
    }
    if (rx_str_eq(&value[1], "unix:")) {
        rule->net.family = AF_UNIX;
        return RX_CONF_OK;
    }
    rc = rx_ptocidr(&value[1], &rule->net);
    if (rc == RX_ERROR) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    if (rc == RX_DONE) {
        rx_conf_log_error(RX_LOG_WARN, cf, 0, "low address bits of %s are "
                          "meaningless", value[1].data);
    }
    return RX_CONF_OK;
}

static rx_int_t
access_handler(rx_http_request_t *r)
{
    rx_http_access_conf_t   *acf = rx_http_get_module_loc_conf(r,
                                      rx_http_access_module);
    rx_http_core_loc_conf_t *clcf;
    rx_http_access_rule_t   *rule;
    const rx_sockaddr_t     *client;
    rx_uint_t                i;

    if (acf->rules == NULL) {
        return RX_DECLINED;
    }
    /* the client as realip found it, if it did */
    client = rx_http_remote_addr(r);
    rule = acf->rules->elts;
    for (i = 0; i < acf->rules->nelts; i++) {
        if (rule[i].net.family != AF_UNSPEC
            && !rx_cidr_match(client, &rule[i].net, 1)) {
            continue;
        }
        if (!rule[i].deny) {
            return RX_OK;
        }
        /* with "satisfy any" the phase logs it, if nothing else allows */
        clcf = rx_http_get_module_loc_conf(r, rx_http_core_module);
        if (clcf->satisfy == RX_HTTP_SATISFY_ALL) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0,
                                      "access forbidden by rule");
        }
        return RX_HTTP_FORBIDDEN;
    }
    return RX_DECLINED;
}

static rx_int_t
access_init(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_ACCESS_PHASE, access_handler);
}
