/*
 * access.c: allow and deny, an access-phase handler. The rules of a level
 * are checked in the order written and the first one that matches the
 * client's address decides; a level with rules of its own replaces its
 * parent's list, as in nginx. IPv4-mapped IPv6 clients (::ffff:a.b.c.d)
 * are matched by the IPv4 rules.
 */
#include <arpa/inet.h>
#include "http.h"
#include "inet.h"

typedef struct {
    sa_family_t  family;      /* AF_INET, AF_INET6, AF_UNIX; AF_UNSPEC: all */
    uint8_t      addr[16];    /* network order, host bits cleared */
    uint8_t      mask[16];
    bool         deny;
} rx_http_access_rule_t;

typedef struct {
    rx_array_t  *rules;       /* rx_http_access_rule_t; NULL: none here */
} rx_http_access_conf_t;

static const char *set_rule(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t access_init(rx_conf_t *cf);

/* nginx also allows them in limit_except, which ringx does not have yet */
static const rx_command_t access_commands[] = {
    { "allow", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, set_rule, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "deny", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, set_rule, RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
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

/*
 * "a.b.c.d[/n]" or "v6[/n]" into rule. Returns RX_OK, RX_DONE when the
 * address had bits set beyond the prefix (cleared: nginx warns), or
 * RX_ERROR.
 */
static rx_int_t
parse_cidr(const rx_str_t *text, rx_http_access_rule_t *rule)
{
    char      buf[INET6_ADDRSTRLEN + 8], *slash;
    rx_int_t  prefix, bits, i, rc = RX_OK;

    if (text->len >= sizeof(buf)) {
        return RX_ERROR;
    }
    memcpy(buf, text->data, text->len);
    buf[text->len] = '\0';
    slash = strchr(buf, '/');
    if (slash) {
        *slash++ = '\0';
    }
    if (inet_pton(AF_INET, buf, rule->addr) == 1) {
        rule->family = AF_INET;
        bits = 32;
    } else if (inet_pton(AF_INET6, buf, rule->addr) == 1) {
        rule->family = AF_INET6;
        bits = 128;
    } else {
        return RX_ERROR;
    }
    prefix = bits;
    if (slash) {
        prefix = rx_atoi(slash, strlen(slash));
        if (prefix < 0 || prefix > bits) {
            return RX_ERROR;
        }
    }
    memset(rule->mask, 0, sizeof(rule->mask));
    for (i = 0; i < bits / 8; i++) {
        rx_int_t left = prefix - i * 8;
        uint8_t  m = left >= 8 ? 0xff : left <= 0 ? 0
                     : (uint8_t) (0xff << (8 - left));

        rule->mask[i] = m;
        if (rule->addr[i] & ~m) {
            rule->addr[i] &= m;
            rc = RX_DONE;
        }
    }
    return rc;
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
        rule->family = AF_UNSPEC;
        return RX_CONF_OK;
    }
    if (rx_str_eq(&value[1], "unix:")) {
        rule->family = AF_UNIX;
        return RX_CONF_OK;
    }
    rc = parse_cidr(&value[1], rule);
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

static bool
rule_matches(const rx_http_access_rule_t *rule, sa_family_t family,
    const uint8_t *addr)
{
    size_t i, n;

    if (rule->family == AF_UNSPEC) {
        return true;
    }
    if (rule->family != family) {
        return false;
    }
    if (family == AF_UNIX) {
        return true;
    }
    n = family == AF_INET ? 4 : 16;
    for (i = 0; i < n; i++) {
        if ((addr[i] & rule->mask[i]) != rule->addr[i]) {
            return false;
        }
    }
    return true;
}

static rx_int_t
access_handler(rx_http_request_t *r)
{
    rx_http_access_conf_t   *acf = rx_http_get_module_loc_conf(r,
                                      rx_http_access_module);
    rx_http_core_loc_conf_t *clcf;
    rx_http_access_rule_t   *rule;
    const rx_sockaddr_t     *peer;
    const uint8_t           *addr = NULL;
    sa_family_t              family;
    rx_uint_t                i;

    if (acf->rules == NULL) {
        return RX_DECLINED;
    }
    peer = rx_conn_peer(r->conn);
    family = peer->u.sa.sa_family;
    if (family == AF_INET) {
        addr = (const uint8_t *) &peer->u.sin.sin_addr;
    } else if (family == AF_INET6) {
        addr = peer->u.sin6.sin6_addr.s6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&peer->u.sin6.sin6_addr)) {
            family = AF_INET;
            addr += 12;
        }
    }
    rule = acf->rules->elts;
    for (i = 0; i < acf->rules->nelts; i++) {
        if (!rule_matches(&rule[i], family, addr)) {
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
