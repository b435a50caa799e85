/*
 * test_server_name.c: virtual server selection (http/http_server.c)
 * through the real parser: a config is loaded as `ringx -t` would, the
 * per-address tables are built from the cycle's listening sockets, and
 * hosts are looked up. Expectations follow nginx's server_name docs
 * (exact, longest *-prefix, longest *-suffix, first regex, default) and
 * its warnings.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include "core.h"
#include "cycle.h"
#include "http_core.h"
#include "http_server.h"
#include "tap.h"
#include "fixture.h"

/* ---- loading a config as `ringx -t` does ---- */

/* Loads "events {} http { <http> }" and builds the server_name tables;
 * NULL when refused (the reason is in the log, see log_has()). */
static rx_cycle_t *
load_servers(const char *http)
{
    rx_cycle_t *c;
    rx_conf_t   cf;

    c = load_http(http);
    if (c == NULL) {
        return NULL;
    }
    /* what http_block does after rx_http_add_listening (a no-op when it
     * has done it already) */
    memset(&cf, 0, sizeof(cf));
    cf.cycle = c;
    cf.pool = c->pool;
    cf.log = c->log;
    if (rx_http_init_server_names(&cf) != RX_OK) {
        rx_free_cycle(c);
        return NULL;
    }
    return c;
}

static rx_http_core_srv_conf_t *
server(rx_cycle_t *cycle, rx_uint_t i)
{
    rx_http_conf_ctx_t       *ctx = cycle->conf_ctx[rx_http_module.index];
    rx_http_core_main_conf_t *cmcf = ctx->main_conf[rx_http_core_module.ctx_index];

    return i < cmcf->servers.nelts
           ? ((rx_http_core_srv_conf_t **) cmcf->servers.elts)[i] : NULL;
}

static long
server_index(rx_cycle_t *cycle, rx_http_core_srv_conf_t *cscf)
{
    rx_uint_t i;

    for (i = 0; server(cycle, i); i++) {
        if (server(cycle, i) == cscf) {
            return (long) i;
        }
    }
    return -1;
}

static rx_listening_t *
listening(rx_cycle_t *cycle, const char *addr_text)
{
    rx_listening_t *ls = cycle->listening.elts;
    rx_uint_t       i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (strcmp(ls[i].addr_text.data, addr_text) == 0) {
            return &ls[i];
        }
    }
    return NULL;
}

static rx_http_server_names_t *
names_of(rx_cycle_t *cycle, const char *addr_text)
{
    rx_listening_t *ls = listening(cycle, addr_text);

    return ls ? rx_http_listening_names(ls, NULL) : NULL;
}

/* The index of the server host selects (-1: none, -2: error). */
static long
pick(rx_cycle_t *cycle, rx_http_server_names_t *names, const char *host)
{
    rx_http_core_srv_conf_t *cscf;
    rx_str_t                 h;

    if (names == NULL) {
        return -1;
    }
    if (host) {
        h.len = strlen(host);
        h.data = (char *) host;
    }
    cscf = rx_http_find_server(names, host ? &h : NULL, NULL, 0, NULL, NULL);
    return cscf ? server_index(cycle, cscf) : -2;
}

static void
is_server(rx_cycle_t *cycle, rx_http_server_names_t *names, const char *host,
    long want, const char *why)
{
    long got = pick(cycle, names, host);

    if (!ok(got == want, "\"%s\" -> server %ld (%s)", host ? host : "(none)",
            want, why)) {
        diag("got server %ld", got);
    }
}

/* ---- cases ---- */

static const char *main_conf =
    "server { listen 127.0.0.1:8081; server_name first.test; }\n"              /* 0 */
    "server { listen 127.0.0.1:8081 default_server; server_name default.test; }\n"
    "server { listen 127.0.0.1:8081; server_name example.com www.example.com; }\n"
    "server { listen 127.0.0.1:8081; server_name *.example.com; }\n"
    "server { listen 127.0.0.1:8081; server_name *.b.example.com; }\n"
    "server { listen 127.0.0.1:8081; server_name .example.org; }\n"            /* 5 */
    "server { listen 127.0.0.1:8081; server_name www.example.*; }\n"
    "server { listen 127.0.0.1:8081; server_name www.*; }\n"
    "server { listen 127.0.0.1:8081;\n"
    "         server_name ~^(?<sub>\\w+)\\.regex\\.test$ ~^api\\.; }\n"
    "server { listen 127.0.0.1:8081; server_name ~^(\\w+)\\.regex\\.test$ \"\"; }\n"
    "server { listen 127.0.0.1:8081; server_name example.com; }\n"             /* 10 */
    "server { listen 127.0.0.1:8081; server_name .example.com; }\n"
    "server { listen 127.0.0.1:8081; server_name ~^UPPER\\.test$ $hostname; }\n"
    "server { listen 127.0.0.1:8082; server_name other.test example.com; }\n"
    "server { listen 8083; server_name wild.test; }\n"
    "server { listen 127.0.0.1:8083; server_name spec.test; }\n"               /* 15 */
    "server { listen 127.0.0.1:8084; server_name a.test; }\n"
    "server { listen 127.0.0.1:8084; server_name b.test; }\n";

static void
test_precedence(rx_cycle_t *c)
{
    rx_http_server_names_t *n = names_of(c, "127.0.0.1:8081");
    char                    host[256];

    if (!ok(n != NULL, "127.0.0.1:8081 has names")) {
        return;
    }
    ok(strcmp(rx_http_server_names_addr(n)->data, "127.0.0.1:8081") == 0,
       "the names know their address");
    ok(server_index(c, rx_http_default_server(n)) == 1,
       "the default_server is the default");

    is_server(c, n, "example.com", 2, "exact");
    is_server(c, n, "www.example.com", 2, "exact beats *.example.com and www.*");
    is_server(c, n, "first.test", 0, "exact");
    is_server(c, n, "a.example.com", 3, "*.example.com");
    is_server(c, n, "a.b.example.com", 4, "the longest leading wildcard");
    is_server(c, n, "x.y.b.example.com", 4, "*.b.example.com, two labels deep");
    is_server(c, n, "b.example.com", 3, "*.b.example.com needs one more label");
    is_server(c, n, "example.org", 5, ".example.org matches the bare name");
    is_server(c, n, "www.example.org", 5, ".example.org matches subdomains");
    is_server(c, n, "xexample.org", 1, "but not another name ending so");
    is_server(c, n, "www.example.net", 6, "www.example.*");
    is_server(c, n, "www.example.co.uk", 6, "www.example.* takes any rest");
    is_server(c, n, "www.foo.net", 7, "www.*");
    is_server(c, n, "www.example", 7, "www.example.* needs one more label");
    is_server(c, n, "www.a.example.com", 3, "leading wildcard before trailing");
    is_server(c, n, "www.regex.test", 7, "trailing wildcard before regex");
    is_server(c, n, "foo.regex.test", 8, "the first matching regex");
    is_server(c, n, "api.anything.net", 8, "a second regex of one server");
    is_server(c, n, "upper.test", 12, "a regex with upper case is caseless");
    is_server(c, n, "unknown.test", 1, "no match: the default server");
    is_server(c, n, "www", 1, "a bare www is no match for www.*");
    is_server(c, n, "", 9, "an empty Host: server_name \"\"");
    is_server(c, n, NULL, 9, "no Host: server_name \"\"");

    /* the form of the host */
    is_server(c, n, "EXAMPLE.Com", 2, "case-insensitive");
    is_server(c, n, "example.com.", 2, "a trailing dot is ignored");
    is_server(c, n, "example.com:8080", 2, "the port is ignored");
    is_server(c, n, "A.Example.COM.:80", 3, "all of it, with a wildcard");
    is_server(c, n, "[::1]:8081", 1, "an IPv6 literal");

    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        for (char *p = host; *p; p++) *p = (char) tolower((unsigned char) *p);
        is_server(c, n, host, 12, "$hostname is the machine's name");
    }

    ok(log_has("conflicting server name \"example.com\" on 127.0.0.1:8081, "
               "ignored"), "a repeated exact name is a warning");
    ok(log_has("conflicting server name \".example.com\" on 127.0.0.1:8081, "
               "ignored"), "\".x\" after an exact \"x\" is a warning");
}

static void
test_captures(rx_cycle_t *c)
{
    rx_http_server_names_t  *n = names_of(c, "127.0.0.1:8081");
    rx_http_core_srv_conf_t *cscf;
    rx_regex_t              *re;
    rx_int_t                 nc;
    int                      cap[20];
    rx_str_t                 host = rx_string("foo.regex.test"), sub = rx_string("sub");

    if (n == NULL) {
        return;
    }
    cscf = rx_http_find_server(n, &host, cap, 10, &nc, &re);
    ok(server_index(c, cscf) == 8 && nc == 2 && cap[2] == 0 && cap[3] == 3,
       "a regex name gives its captures");
    ok(re && rx_regex_named_index(re, &sub) == 1, "and its named group");
    rx_str_set(&host, "api.x");
    cscf = rx_http_find_server(n, &host, cap, 10, &nc, &re);
    ok(server_index(c, cscf) == 8 && nc == 0 && re == NULL,
       "a regex without groups gives none");
    rx_str_set(&host, "example.com");
    cscf = rx_http_find_server(n, &host, cap, 10, &nc, &re);
    ok(server_index(c, cscf) == 2 && nc == 0 && re == NULL,
       "an exact name gives none");
}

static void
test_addresses(rx_cycle_t *c)
{
    rx_http_server_names_t *n;
    rx_listening_t         *ls;
    rx_sockaddr_t           local;

    n = names_of(c, "127.0.0.1:8082");
    is_server(c, n, "example.com", 13, "each address has its own names");
    is_server(c, n, "default.test", 13, "the only server is the default");

    n = names_of(c, "127.0.0.1:8084");
    is_server(c, n, "zzz", 16, "without default_server the first one");
    is_server(c, n, "b.test", 17, "the second by name");

    ls = listening(c, "0.0.0.0:8083");
    if (!ok(ls != NULL && rx_http_listening_naddrs(ls) == 2,
            "*:8083 and 127.0.0.1:8083 share one socket, two addresses")) {
        return;
    }
    memset(&local, 0, sizeof(local));
    local.u.sin.sin_family = AF_INET;
    local.u.sin.sin_port = htons(8083);
    local.len = sizeof(struct sockaddr_in);
    inet_pton(AF_INET, "127.0.0.1", &local.u.sin.sin_addr);
    n = rx_http_listening_names(ls, &local);
    is_server(c, n, "wild.test", 15, "127.0.0.1:8083 sees only its servers");
    is_server(c, n, "spec.test", 15, "127.0.0.1:8083 by name");
    inet_pton(AF_INET, "10.1.2.3", &local.u.sin.sin_addr);
    n = rx_http_listening_names(ls, &local);
    is_server(c, n, "spec.test", 14, "another address gets the wildcard's");
    is_server(c, n, "wild.test", 14, "the wildcard's by name");
    n = rx_http_listening_names(ls, NULL);
    is_server(c, n, "x", 14, "no local address: the socket's own");
    ok(listening(c, "127.0.0.1:8081") && rx_http_listening_naddrs(
           listening(c, "127.0.0.1:8081")) == 1, "127.0.0.1:8081 is alone");
}

static void
test_errors(void)
{
    rx_cycle_t *c;
    char        where[200];

    c = load_servers("server { listen 127.0.0.1:8085; server_name www.*.com; }\n"
                     "server { listen 127.0.0.1:8085; server_name x; }");
    ok(c == NULL && log_has("invalid server name or wildcard \"www.*.com\" on "
                            "127.0.0.1:8085"), "a * in the middle is refused");
    rx_free_cycle(c);

    c = load_servers("server { listen 127.0.0.1:8085; server_name a..b; }\n"
                     "server { listen 127.0.0.1:8085; server_name x; }");
    ok(c == NULL && log_has("invalid server name or wildcard \"a..b\""),
       "two dots in a row are refused");
    rx_free_cycle(c);

    c = load_servers("server { listen 127.0.0.1:8085; server_name .; }");
    snprintf(where, sizeof(where), "server name \".\" is invalid in "
             "%s/ringx.conf:3", tmpdir);
    ok(c == NULL && log_has(where), "\".\" alone is invalid");
    rx_free_cycle(c);

    c = load_servers("server { listen 127.0.0.1:8085; server_name ~; }");
    ok(c == NULL && log_has("empty regex in server name \"~\""),
       "an empty regex is refused");
    rx_free_cycle(c);

    c = load_servers("server { listen 127.0.0.1:8085; server_name ~(abc; }");
    snprintf(where, sizeof(where), "pcre2_compile() failed: missing closing "
             "parenthesis in \"(abc\" in %s/ringx.conf:3", tmpdir);
    ok(c == NULL && log_has(where), "a bad regex is refused with file:line");
    rx_free_cycle(c);

    c = load_servers("server { listen 127.0.0.1:8085; server_name a/b; }");
    ok(c != NULL && log_has("[warn]") && log_has("server name \"a/b\" has "
       "suspicious symbols"), "a '/' is only a warning");
    rx_free_cycle(c);

    c = load_servers("server { listen 127.0.0.1:8086; }\n"
                     "server { listen 127.0.0.1:8086; }");
    ok(c != NULL && log_has("conflicting server name \"\" on 127.0.0.1:8086, "
       "ignored"), "two servers without names conflict on \"\", as in nginx");
    if (c) {
        rx_http_server_names_t *n = names_of(c, "127.0.0.1:8086");
        is_server(c, n, "", 0, "the first keeps \"\"");
    }
    rx_free_cycle(c);

    c = load_servers("server { listen 127.0.0.1:8087;"
                     " server_name *.a.test .a.test; }");
    ok(c != NULL && log_has("conflicting server name \".a.test\""),
       "\"*.x\" and \".x\" conflict");
    rx_free_cycle(c);
}

int
main(void)
{
    rx_cycle_t *c;

    if (!fixture_init("test_server_name", NULL)) {
        return 0;
    }

    c = load_servers(main_conf);
    if (ok(c != NULL, "the virtual servers load")) {
        test_precedence(c);
        test_captures(c);
        test_addresses(c);
        rx_free_cycle(c);
    }
    test_errors();

    fixture_done();
    return done();
}
