/*
 * test_regex.c: the pcre2 wrapper (core/regex.c): nginx's compile error
 * text, match results and capture offsets, named groups, and that a pool
 * frees what it compiled (run under ASan for the last part).
 */
#include "core.h"
#include "regex.h"
#include "tap.h"

static rx_log_t test_log = { .level = RX_LOG_ALERT, .file = &rx_stderr_file };

static rx_regex_t *
compile(rx_pool_t *pool, const char *pattern, bool caseless, char *err,
    size_t errlen)
{
    rx_str_t p = { strlen(pattern), (char *) pattern };

    err[0] = '\0';
    return rx_regex_compile(pool, &p, caseless, err, errlen);
}

static rx_int_t
exec(rx_regex_t *re, const char *s, int *cap, rx_uint_t n)
{
    return rx_regex_exec(re, s, strlen(s), cap, n);
}

static void
test_errors(rx_pool_t *pool)
{
    char err[256];

    ok(compile(pool, "(abc", false, err, sizeof(err)) == NULL
       && strcmp(err, "pcre2_compile() failed: missing closing parenthesis "
                 "in \"(abc\"") == 0, "missing ) reported as nginx does");
    diag("%s", err);
    ok(compile(pool, "a)bc", false, err, sizeof(err)) == NULL
       && strcmp(err, "pcre2_compile() failed: unmatched closing parenthesis "
                 "in \"a)bc\" at \")bc\"") == 0,
       "an error inside the pattern quotes the rest at \"...\"");
    diag("%s", err);
    ok(compile(pool, "x{2,1}", false, err, sizeof(err)) == NULL
       && strncmp(err, "pcre2_compile() failed: ", 24) == 0
       && strstr(err, "in \"x{2,1}\"") != NULL, "bad quantifier refused");
    ok(compile(pool, "(abc", false, err, 16) == NULL && strlen(err) == 15,
       "the message is cut to the buffer");
    ok(compile(pool, "", false, err, sizeof(err)) != NULL && err[0] == '\0',
       "an empty pattern compiles");
}

static void
test_match(rx_pool_t *pool)
{
    char        err[256];
    int         cap[20];
    rx_regex_t *re;
    rx_uint_t   i;

    re = compile(pool, "\\.(gif|jpg|jpeg)$", false, err, sizeof(err));
    if (!ok(re != NULL, "compiles \\.(gif|jpg|jpeg)$")) {
        return;
    }
    ok(rx_regex_captures(re) == 1, "one group");
    ok(exec(re, "/a/1.jpg", NULL, 0) == 2, "matches: 2 pairs set");
    ok(exec(re, "/a/1.JPG", NULL, 0) == RX_DECLINED, "case-sensitive");
    ok(exec(re, "/a/1.png", NULL, 0) == RX_DECLINED, "no match: declined");
    for (i = 0; i < 20; i++) cap[i] = -7;
    ok(exec(re, "/a/1.png", cap, 10) == RX_DECLINED && cap[0] == -7,
       "no match writes no captures");
    ok(exec(re, "/a/1.jpeg", cap, 10) == 2 && cap[0] == 4 && cap[1] == 9
       && cap[2] == 5 && cap[3] == 9 && cap[4] == -7,
       "offsets of $0 and $1, nothing past them");
    ok(rx_regex_exec(re, "x.gif and more", 5, cap, 10) == 2 && cap[1] == 5,
       "the subject is counted, not NUL-terminated");

    re = compile(pool, "\\.(gif|jpg|jpeg)$", true, err, sizeof(err));
    ok(re && exec(re, "/a/1.JPG", NULL, 0) == 2, "caseless compiles and matches");

    re = compile(pool, "^/(a)?(b)(c)?(d)", false, err, sizeof(err));
    ok(re && rx_regex_captures(re) == 4, "four groups");
    for (i = 0; i < 20; i++) cap[i] = -7;
    ok(re && exec(re, "/bd", cap, 10) == 5 && cap[2] == -1 && cap[3] == -1
       && cap[4] == 1 && cap[5] == 2 && cap[6] == -1 && cap[8] == 2,
       "a group that did not take part is -1/-1");
    for (i = 0; i < 20; i++) cap[i] = -7;
    ok(re && exec(re, "/abcd", cap, 2) == 5 && cap[3] == 2 && cap[4] == -7,
       "pairs beyond the room given are not written");

    re = compile(pool, "^$", false, err, sizeof(err));
    ok(re && rx_regex_exec(re, NULL, 0, cap, 10) == 1
       && cap[0] == 0 && cap[1] == 0, "an empty (NULL) subject");
}

static void
test_named(rx_pool_t *pool)
{
    char                    err[256];
    rx_regex_t             *re;
    const rx_regex_name_t  *names;
    rx_uint_t               n;
    rx_str_t                name;
    int                     cap[20];

    re = compile(pool, "^(www\\.)?(?<domain>.+?)\\.(?<tld>[a-z]+)$", false,
                 err, sizeof(err));
    if (!ok(re != NULL, "compiles a pattern with named groups")) {
        return;
    }
    ok(rx_regex_captures(re) == 3, "named groups count as groups");
    rx_str_set(&name, "domain");
    ok(rx_regex_named_index(re, &name) == 2, "domain is $2");
    rx_str_set(&name, "tld");
    ok(rx_regex_named_index(re, &name) == 3, "tld is $3");
    rx_str_set(&name, "dom");
    ok(rx_regex_named_index(re, &name) == -1, "an unknown name is -1");
    names = rx_regex_names(re, &n);
    ok(n == 2 && names && strcmp(names[0].name.data, "domain") == 0
       && names[0].index == 2 && names[1].name.len == 3 && names[1].index == 3,
       "the named groups can be listed");
    ok(exec(re, "www.example.org", cap, 10) == 4 && cap[4] == 4
       && cap[5] == 11, "$domain's offsets");

    re = compile(pool, "^/x$", false, err, sizeof(err));
    names = rx_regex_names(re, &n);
    ok(re && n == 0 && names == NULL && rx_regex_captures(re) == 0,
       "a pattern without groups lists none");
}

/* Long subjects run the JIT (or the interpreter) on real work; a pool
 * destroyed with compiled regexes frees their code (ASan checks leaks). */
static void
test_long_and_cleanup(void)
{
    char        err[256], *big;
    rx_pool_t  *pool;
    rx_regex_t *re;
    rx_uint_t   i;
    int         cap[4];
    size_t      n = 1 << 20;
    rx_int_t    rc;

    pool = rx_pool_create(1024, &test_log);
    big = malloc(n + 8);
    if (!ok(pool && big, "a pool and a 1 MiB subject")) {
        free(big);
        rx_pool_destroy(pool);
        return;
    }
    memset(big, 'a', n);
    memcpy(big + n, "b.php", 6);
    for (i = 0; i < 200; i++) {
        re = compile(pool, "\\.php$", i % 2, err, sizeof(err));
        if (re == NULL) break;
    }
    ok(i == 200, "200 regexes compiled into one pool");
    ok(re && rx_regex_exec(re, big, n + 5, cap, 2) == 1 && cap[0] == (int) n + 1
       && cap[1] == (int) n + 5, "matches at the end of 1 MiB");
    re = compile(pool, "^(a|b)*c", false, err, sizeof(err));
    ok(re && rx_regex_exec(re, big, 10000, cap, 2) == RX_DECLINED,
       "no match over 10000 bytes of alternatives");
    /* past pcre2's stack or match limits a match fails (nginx: a 500);
     * what matters is an answer, not a crash */
    rc = re ? rx_regex_exec(re, big, n, cap, 2) : RX_OK;
    ok(rc == RX_ERROR || rc == RX_DECLINED,
       "1 MiB of backtracking ends in an error, not a crash");
    free(big);
    rx_pool_destroy(pool);
    ok(true, "the pool with its regexes is destroyed");
}

int
main(void)
{
    rx_pool_t *pool = rx_pool_create(4096, &test_log);

    if (pool == NULL) {
        skip_all("no memory");
        return 0;
    }
    test_errors(pool);
    test_match(pool);
    test_named(pool);
    test_long_and_cleanup();
    rx_pool_destroy(pool);
    return done();
}
