/*
 * test_location.c: location selection (http/http_location.c) through the
 * real parser: each case writes a config, loads it as `ringx -t` would,
 * and asks rx_http_find_location() what a URI gets. Locations are tagged
 * with `root /TAG;`. Expectations follow nginx's documentation and
 * ngx_http_core_find_location.
 */
#include "core.h"
#include "cycle.h"
#include "http_core.h"
#include "http_location.h"
#include "tap.h"
#include "fixture.h"

static rx_http_core_srv_conf_t *
server(rx_cycle_t *cycle, rx_uint_t i)
{
    rx_http_conf_ctx_t       *ctx = cycle->conf_ctx[rx_http_module.index];
    rx_http_core_main_conf_t *cmcf = ctx->main_conf[rx_http_core_module.ctx_index];

    return ((rx_http_core_srv_conf_t **) cmcf->servers.elts)[i];
}

static rx_http_core_loc_conf_t *
server_clcf(rx_cycle_t *cycle, rx_uint_t i)
{
    return server(cycle, i)->ctx->loc_conf[rx_http_core_module.ctx_index];
}

/* The tag of the location chosen for uri in server 0. */
static const char *
tag(rx_cycle_t *cycle, const char *uri)
{
    rx_http_core_loc_conf_t *clcf;
    rx_str_t                 u = { strlen(uri), (char *) uri };

    clcf = rx_http_find_location(server_clcf(cycle, 0), &u, NULL, 0, NULL, NULL);
    if (clcf == NULL) {
        return "(error)";
    }
    if (clcf == server_clcf(cycle, 0)) {
        return "(server)";
    }
    return clcf->root.data ? clcf->root.data + 1 : "(untagged)";
}

static void
is_tag(rx_cycle_t *cycle, const char *uri, const char *want)
{
    const char *got = tag(cycle, uri);

    if (!ok(strcmp(got, want) == 0, "%s -> %s", uri, want)) {
        diag("got %s", got);
    }
}

/* ---- cases ---- */

/* The example table of the location directive's documentation. */
static void
test_docs_example(void)
{
    rx_cycle_t *c = load_http(
        "server { listen 127.0.0.1:8080;\n"
        "  location = / { root /A; }\n"
        "  location / { root /B; }\n"
        "  location /documents/ { root /C; }\n"
        "  location ^~ /images/ { root /D; }\n"
        "  location ~* \\.(gif|jpg|jpeg)$ { root /E; }\n"
        "}");

    if (!ok(c != NULL, "docs example loads")) {
        return;
    }
    is_tag(c, "/", "A");
    is_tag(c, "/index.html", "B");
    is_tag(c, "/documents/document.html", "C");
    is_tag(c, "/images/1.gif", "D");
    is_tag(c, "/documents/1.jpg", "E");
    /* and around it */
    is_tag(c, "/documents/", "C");
    is_tag(c, "/documents", "B");
    is_tag(c, "/images/", "D");
    is_tag(c, "/x/1.JPG", "E");          /* ~* is caseless */
    is_tag(c, "/Documents/a.html", "B");  /* prefixes are case-sensitive */
    rx_free_cycle(c);
}

static void
test_exact_and_prefix(void)
{
    rx_cycle_t *c = load_http(
        "server { listen 127.0.0.1:8080;\n"
        "  location /x { root /PX; }\n"
        "  location = /x { root /X; }\n"
        "  location /x/y/ { root /XY; }\n"
        "  location = /x/y/z { root /XYZ; }\n"
        "}");

    if (!ok(c != NULL, "exact and prefix of one name load")) {
        return;
    }
    is_tag(c, "/x", "X");
    is_tag(c, "/xa", "PX");
    is_tag(c, "/x/", "PX");
    is_tag(c, "/x/y/", "XY");
    is_tag(c, "/x/y/z", "XYZ");
    is_tag(c, "/x/y/zz", "XY");
    is_tag(c, "/x/y", "PX");
    is_tag(c, "/", "(server)");
    is_tag(c, "/w", "(server)");
    is_tag(c, "", "(server)");
    rx_free_cycle(c);
}

static void
test_regex_order(void)
{
    rx_cycle_t *c = load_http(
        "server { listen 127.0.0.1:8080;\n"
        "  location / { root /ROOT; }\n"
        "  location ~ \\.php$ { root /PHP; }\n"
        "  location ~ ^/app/ { root /APP; }\n"
        "  location ~* \\.PHP$ { root /CASELESS; }\n"
        "  location /app/ { root /PAPP; }\n"
        "}");

    if (!ok(c != NULL, "regex config loads")) {
        return;
    }
    is_tag(c, "/app/x.php", "PHP");       /* first in config order wins */
    is_tag(c, "/app/x.PHP", "APP");       /* ~ is case-sensitive */
    is_tag(c, "/b/x.PHP", "CASELESS");
    is_tag(c, "/app/x", "APP");           /* regex beats the longer prefix */
    is_tag(c, "/b/x", "ROOT");
    rx_free_cycle(c);
}

/* Nesting, as ngx_http_core_find_location walks it: nested locations of
 * the chosen prefix first, its nested regexes before the outer ones; a
 * nested ^~ only silences its own level's regexes. */
static void
test_nesting(void)
{
    rx_cycle_t *c = load_http(
        "server { listen 127.0.0.1:8080;\n"
        "  location / { root /ROOT; }\n"
        "  location /a/ { root /A;\n"
        "    location /a/b/ { root /AB; }\n"
        "    location ~ \\.php$ { root /APHP; }\n"
        "    location ^~ /a/n/ { root /AN; }\n"
        "    location = /a/e { root /AE; }\n"
        "  }\n"
        "  location ^~ /s/ { root /S;\n"
        "    location ~ \\.php$ { root /SPHP; }\n"
        "  }\n"
        "  location ~ \\.(php|html)$ { root /SRVRE; }\n"
        "  location ~ ^/r/(\\w+)/ { root /R;\n"
        "    location ~ \\.txt$ { root /RTXT; }\n"
        "    location ~ ^/r/(\\w+)/(\\w+)\\.(\\w+)$ { root /RR; }\n"
        "  }\n"
        "}");

    if (!ok(c != NULL, "nested config loads")) {
        return;
    }
    is_tag(c, "/a/x", "A");
    is_tag(c, "/a/x.php", "APHP");
    is_tag(c, "/a/x.html", "SRVRE");
    is_tag(c, "/a/b/x", "AB");
    is_tag(c, "/a/b/x.php", "APHP");
    is_tag(c, "/a/n/x", "AN");
    is_tag(c, "/a/n/x.php", "SRVRE");
    is_tag(c, "/a/e", "AE");
    is_tag(c, "/a/e.php", "APHP");
    is_tag(c, "/s/x.php", "SPHP");
    is_tag(c, "/s/x.html", "S");
    is_tag(c, "/r/abc/y.txt", "RTXT");
    is_tag(c, "/r/abc/y.gz", "RR");
    is_tag(c, "/r/abc/y", "R");
    is_tag(c, "/r/abc/y.html", "SRVRE");
    is_tag(c, "/zzz", "ROOT");
    rx_free_cycle(c);
}

static void
test_captures(void)
{
    rx_cycle_t              *c;
    rx_http_core_loc_conf_t *clcf;
    rx_regex_t              *re;
    rx_int_t                 n;
    int                      cap[20];
    rx_str_t                 u, name = rx_string("first");

    c = load_http(
        "server { listen 127.0.0.1:8080;\n"
        "  location ~ ^/c/(?<first>\\w+)/(\\d+)$ { root /C; }\n"
        "  location ~ ^/r/(\\w+)/ { root /R;\n"
        "    location ~ \\.txt$ { root /RTXT; }\n"
        "    location ~ ^/r/\\w+/(\\w+)\\.gz$ { root /RGZ; }\n"
        "  }\n"
        "  location ~ ^/nocap/ { root /NOCAP; }\n"
        "}");
    if (!ok(c != NULL, "captures config loads")) {
        return;
    }
    rx_str_set(&u, "/c/abc/42");
    memset(cap, 0x55, sizeof(cap));
    clcf = rx_http_find_location(server_clcf(c, 0), &u, cap, 10, &n, &re);
    ok(clcf && strcmp(clcf->root.data, "/C") == 0 && n == 3,
       "captures: 3 pairs from ^/c/(?<first>\\w+)/(\\d+)$");
    ok(cap[0] == 0 && cap[1] == 9 && cap[2] == 3 && cap[3] == 6
       && cap[4] == 7 && cap[5] == 9, "captures: $0 $1 $2 offsets");
    ok(re && rx_regex_named_index(re, &name) == 1,
       "captures: the regex is returned with its named group");

    rx_str_set(&u, "/r/abc/y.txt");
    clcf = rx_http_find_location(server_clcf(c, 0), &u, cap, 10, &n, &re);
    ok(clcf && strcmp(clcf->root.data, "/RTXT") == 0 && n == 2
       && cap[2] == 3 && cap[3] == 6,
       "a nested regex without groups keeps the outer captures");

    rx_str_set(&u, "/r/abc/y.gz");
    clcf = rx_http_find_location(server_clcf(c, 0), &u, cap, 10, &n, &re);
    ok(clcf && strcmp(clcf->root.data, "/RGZ") == 0 && n == 2
       && cap[2] == 7 && cap[3] == 8,
       "a nested regex with groups replaces them");

    rx_str_set(&u, "/r/abc/y.gz");
    clcf = rx_http_find_location(server_clcf(c, 0), &u, cap, 1, &n, &re);
    ok(clcf && n == 1 && cap[0] == 0 && cap[1] == 11,
       "captures are cut to the room given");

    rx_str_set(&u, "/nocap/x");
    clcf = rx_http_find_location(server_clcf(c, 0), &u, cap, 10, &n, &re);
    ok(clcf && strcmp(clcf->root.data, "/NOCAP") == 0 && n == 0 && re == NULL,
       "a regex without groups reports no captures");

    rx_str_set(&u, "/c/abc/42");
    clcf = rx_http_find_location(server_clcf(c, 0), &u, NULL, 0, NULL, NULL);
    ok(clcf && strcmp(clcf->root.data, "/C") == 0, "captures are optional");
    rx_free_cycle(c);
}

static void
test_named(void)
{
    rx_cycle_t              *c;
    rx_http_core_loc_conf_t *clcf;
    rx_str_t                 n;

    c = load_http(
        "server { listen 127.0.0.1:8080;\n"
        "  location @fallback { root /F; }\n"
        "  location / { root /ROOT; }\n"
        "  location @a { root /NA; }\n"
        "  location @z { root /NZ; }\n"
        "  location @a { root /NA2; }\n"
        "}");
    if (!ok(c != NULL, "named locations load")) {
        return;
    }
    rx_str_set(&n, "@fallback");
    clcf = rx_http_find_named_location(server_clcf(c, 0), &n);
    ok(clcf && strcmp(clcf->root.data, "/F") == 0, "@fallback is found by name");
    rx_str_set(&n, "@z");
    clcf = rx_http_find_named_location(server_clcf(c, 0), &n);
    ok(clcf && strcmp(clcf->root.data, "/NZ") == 0, "@z is found by name");
    rx_str_set(&n, "@a");
    clcf = rx_http_find_named_location(server_clcf(c, 0), &n);
    ok(clcf && strcmp(clcf->root.data, "/NA") == 0,
       "of two @a the first in the config wins");
    rx_str_set(&n, "@none");
    ok(rx_http_find_named_location(server_clcf(c, 0), &n) == NULL,
       "an unknown name finds nothing");
    is_tag(c, "@fallback", "(server)");     /* never matched by URI */
    is_tag(c, "/@fallback", "ROOT");
    rx_free_cycle(c);
}

/* Many prefix and exact locations, in shuffled config order: every
 * answer is checked against a brute-force longest-prefix search. */
#define NPREFIX 200

static void
test_many_prefixes(void)
{
    static char  names[NPREFIX][48];
    static bool  exact[NPREFIX];
    char        *conf, *p, uri[96];
    rx_cycle_t  *c;
    rx_uint_t    i, j, k, order[NPREFIX], bad = 0, checked = 0;
    const char  *want, *got;
    char         w[32];
    size_t       best;
    long         found, prefix = -1;

    srand(12345);
    for (i = 0; i < NPREFIX; i++) {
        /* a few families, so that names nest in one another */
        k = i % 7;
        snprintf(names[i], sizeof(names[i]), "/%c%s%lu%s", 'a' + (int) k,
                 i % 3 ? "/d" : "", (unsigned long) (i / 7) % 10,
                 i % 5 == 0 ? "/" : i % 5 == 1 ? "/sub" : "");
        exact[i] = i % 11 == 0;
        order[i] = i;
    }
    for (i = NPREFIX - 1; i > 0; i--) {
        j = (rx_uint_t) rand() % (i + 1);
        k = order[i]; order[i] = order[j]; order[j] = k;
    }
    conf = malloc(NPREFIX * 96 + 128);
    p = conf + sprintf(conf, "server { listen 127.0.0.1:8080;\n");
    for (i = 0; i < NPREFIX; i++) {
        k = order[i];
        /* skip names that repeat an earlier one of the same kind */
        for (j = 0; j < k; j++) {
            if (strcmp(names[j], names[k]) == 0 && exact[j] == exact[k]) break;
        }
        if (j < k) {
            names[k][0] = '\0';
            continue;
        }
        p += sprintf(p, "  location %s%s { root /L%lu; }\n",
                     exact[k] ? "= " : "", names[k], (unsigned long) k);
    }
    strcpy(p, "}");
    c = load_http(conf);
    free(conf);
    if (!ok(c != NULL, "%d shuffled prefix/exact locations load", NPREFIX)) {
        return;
    }
    for (i = 0; i < 4000; i++) {
        k = (rx_uint_t) rand() % NPREFIX;
        if (names[k][0] == '\0') continue;
        /* a known name, cut or extended at random */
        snprintf(uri, sizeof(uri), "%.*s%s", (int) (rand() % 12 + 1), names[k],
                 rand() % 2 ? "" : rand() % 2 ? "/x" : "sub/y");
        if (rand() % 3 == 0) {
            snprintf(uri, sizeof(uri), "%s", names[k]);
        }
        /* brute force: exact first, then the longest prefix */
        found = -1;
        for (j = 0; j < NPREFIX && found < 0; j++) {
            if (names[j][0] && exact[j] && strcmp(names[j], uri) == 0) {
                found = (long) j;
            }
        }
        for (j = 0, best = 0; j < NPREFIX && found < 0; j++) {
            size_t len = strlen(names[j]);
            if (names[j][0] && !exact[j] && len > best
                && strncmp(names[j], uri, len) == 0) {
                best = len;
                prefix = (long) j;
            }
        }
        if (found < 0 && best) {
            found = prefix;
        }
        if (found >= 0) {
            snprintf(w, sizeof(w), "L%ld", found);
        }
        want = found >= 0 ? w : "(server)";
        got = tag(c, uri);
        checked++;
        if (strcmp(got, want) != 0) {
            if (bad++ < 5) diag("%s: got %s, want %s", uri, got, want);
        }
    }
    ok(bad == 0 && checked > 1000, "%lu URIs match the brute-force longest "
       "prefix", (unsigned long) checked);
    rx_free_cycle(c);
}

static void
test_errors(void)
{
    char        where[200];
    rx_cycle_t *c;

    c = load_http("server { listen 127.0.0.1:8080;\n"
                  "  location /x { }\n"
                  "  location /y { }\n"
                  "  location ^~ /x { }\n"
                  "}");
    snprintf(where, sizeof(where), "duplicate location \"/x\" in %s/ringx.conf:6",
             tmpdir);
    ok(c == NULL && log_has(where), "prefix and ^~ of one name: duplicate");
    rx_free_cycle(c);

    c = load_http("server { listen 127.0.0.1:8080;\n"
                  "  location = /x { }\n"
                  "  location /x { }\n"
                  "  location = /x { }\n"
                  "}");
    snprintf(where, sizeof(where), "duplicate location \"/x\" in %s/ringx.conf:6",
             tmpdir);
    ok(c == NULL && log_has(where), "two = of one name: duplicate");
    rx_free_cycle(c);

    c = load_http("server { listen 127.0.0.1:8080;\n"
                  "  location /a/ { location /a/x { } location /a/x { } }\n"
                  "}");
    ok(c == NULL && log_has("duplicate location \"/a/x\""),
       "duplicates are found in nested levels too");
    rx_free_cycle(c);

    c = load_http("server { listen 127.0.0.1:8080;\n"
                  "  location ~ (abc { }\n"
                  "}");
    snprintf(where, sizeof(where), "pcre2_compile() failed: missing closing "
             "parenthesis in \"(abc\" in %s/ringx.conf:4", tmpdir);
    ok(c == NULL && log_has(where), "a bad regex is refused with file:line");
    rx_free_cycle(c);

    c = load_http("server { listen 127.0.0.1:8080;\n"
                  "  location ~ ^/a { }\n  location ~ ^/a { }\n"
                  "}");
    ok(c != NULL, "two equal regexes are no duplicate");
    rx_free_cycle(c);
}

static void
test_no_locations(void)
{
    rx_cycle_t *c = load_http("server { listen 127.0.0.1:8080; }\n"
                              "server { listen 127.0.0.1:8081;\n"
                              "  location / { root /S1; } }");

    if (!ok(c != NULL, "servers without locations load")) {
        return;
    }
    is_tag(c, "/anything", "(server)");
    {
        rx_str_t u = rx_string("/x");
        rx_http_core_loc_conf_t *clcf = rx_http_find_location(server_clcf(c, 1),
                                            &u, NULL, 0, NULL, NULL);
        ok(clcf && strcmp(clcf->root.data, "/S1") == 0,
           "each server has its own tree");
    }
    rx_free_cycle(c);
}

int
main(void)
{
    if (!fixture_init("test_location", NULL)) {
        return 0;
    }

    test_docs_example();
    test_exact_and_prefix();
    test_regex_order();
    test_nesting();
    test_captures();
    test_named();
    test_many_prefixes();
    test_errors();
    test_no_locations();

    fixture_done();
    return done();
}
