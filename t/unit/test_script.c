/*
 * test_script.c: complex values (http/http_script.c) and the variable
 * registry behind them (http/http_variables.c): compilation edge cases and
 * errors with their wording, name resolution (exact, prefix, unknown,
 * duplicates), then evaluation against a hand-built request: request,
 * header, cookie and argument variables, captures, caching and flushing.
 */
#include <ctype.h>
#include "core.h"
#include "http.h"
#include "http_variables.h"
#include "http_script.h"
#include "clock.h"
#include "tap.h"

/* ---- a configuration without a file: just what the registry reads ---- */

static rx_pool_t          *pool;
static rx_open_file_t      log_file;
static rx_log_t            log;
static rx_conf_file_t      conf_file;
static rx_conf_t           cf;

/* Everything logged since the last call (the log goes to a temp file). */
static const char *
logged(void)
{
    static char   buf[4096];
    static off_t  seen;
    ssize_t       n;

    n = pread(log_file.fd, buf, sizeof(buf) - 1, seen);
    n = n < 0 ? 0 : n;
    buf[n] = '\0';
    seen += n;
    return buf;
}

/* A fresh http main level: the variables module's main conf with the core
 * variables, as the http block's preconfiguration leaves it. */
static rx_http_conf_ctx_t *
new_http_ctx(void)
{
    const rx_http_module_t *m = rx_http_variables_module.ctx;
    rx_http_conf_ctx_t     *ctx = rx_pcalloc(pool, sizeof(*ctx));

    ctx->main_conf = rx_pcalloc(pool, rx_modules_count(RX_HTTP_MODULE)
                                      * sizeof(void *));
    cf.ctx = ctx;
    ctx->main_conf[rx_http_variables_module.ctx_index] = m->create_main_conf(&cf);
    if (ctx->main_conf[rx_http_variables_module.ctx_index] == NULL
        || rx_http_variables_add_core_vars(&cf) != RX_OK) {
        diag("cannot set up the variables main conf");
        exit(1);
    }
    return ctx;
}

static void
setup(void)
{
    FILE *tmp = tmpfile();

    rx_modules_preinit();
    rx_time_update();
    rx_use_stderr = false;
    log_file.fd = fileno(tmp);
    log.level = RX_LOG_DEBUG;
    log.file = &log_file;
    pool = rx_pool_create(RX_POOL_DEFAULT_SIZE, &log);
    cf.pool = pool;
    cf.temp_pool = pool;
    cf.log = &log;
    cf.args = rx_array_create(pool, 4, sizeof(rx_str_t));
    conf_file.name.data = (char *) "test.conf";
    conf_file.name.len = strlen("test.conf");
    conf_file.line = 1;
    cf.conf_file = &conf_file;
}

static rx_int_t
compile(const char *text, rx_http_complex_value_t *cv)
{
    rx_str_t s = { strlen(text), (char *) text };

    conf_file.line++;
    return rx_http_compile_complex_value(&cf, &s, cv);
}

/* ---- compilation ---- */

typedef struct {
    const char  *text;
    const char  *shape;   /* one letter a part: L literal, V variable, C capture;
                             "" for a constant */
} shape_case_t;

static const shape_case_t shapes[] = {
    { "plain text", "" },
    { "", "" },
    { "100% literal {}", "" },
    { "$uri", "V" },
    { "a $uri b", "LVL" },
    { "${uri}x", "VL" },
    { "${uri}", "V" },
    { "$uri$args", "VV" },              /* adjacent */
    { "${uri}${args}", "VV" },
    { "$uri.html", "VL" },              /* '.' ends a name */
    { "$uri-$args", "VLV" },
    { "$1", "C" },
    { "$1$2x", "CCL" },
    { "$12", "CL" },                    /* capture 1, then "2" */
    { "${1}0", "CL" },
    { "/$host$request_uri", "LVV" },
};

static void
test_shapes(void)
{
    rx_http_complex_value_t cv;
    rx_uint_t               i, k;
    char                    got[16];

    for (i = 0; i < rx_nelems(shapes); i++) {
        if (!ok(compile(shapes[i].text, &cv) == RX_OK, "compiles \"%s\"",
                shapes[i].text)) {
            diag("log: %s", logged());
            continue;
        }
        for (k = 0; k < cv.nparts && k < sizeof(got) - 1; k++) {
            got[k] = "LVC"[cv.parts[k].type];
        }
        got[k] = '\0';
        ok(strcmp(got, shapes[i].shape) == 0
           && (cv.parts == NULL) == (shapes[i].shape[0] == '\0')
           && cv.value.len == strlen(shapes[i].text)
           && memcmp(cv.value.data, shapes[i].text, cv.value.len) == 0,
           "\"%s\" has parts \"%s\" (got \"%s\")", shapes[i].text,
           shapes[i].shape, got);
    }
    compile("x${uri}y$12", &cv);
    ok(cv.nparts == 5 && cv.parts[1].text.len == 6
       && memcmp(cv.parts[1].text.data, "${uri}", 6) == 0
       && cv.parts[3].index == 1 && cv.captures == (1u << 1),
       "parts keep their source text and capture numbers");
}

typedef struct {
    const char  *text;
    const char  *error;
} error_case_t;

static const error_case_t errors[] = {
    { "$", "invalid variable name in \"$\"" },
    { "abc$", "invalid variable name in \"abc$\"" },
    { "$ x", "invalid variable name" },
    { "a$-b", "invalid variable name" },
    { "${}", "invalid variable name" },
    { "${", "invalid variable name" },
    { "x${uri", "the closing bracket in \"uri\" variable is missing" },
    { "${a-b}", "the closing bracket in \"a\" variable is missing" },
    { "${uri x}", "the closing bracket in \"uri\" variable is missing" },
};

static void
test_errors(void)
{
    rx_http_complex_value_t cv;
    rx_uint_t               i;
    const char             *msg;
    char                    where[64];

    logged();
    for (i = 0; i < rx_nelems(errors); i++) {
        rx_int_t rc = compile(errors[i].text, &cv);

        msg = logged();
        snprintf(where, sizeof(where), " in test.conf:%lu",
                 (unsigned long) conf_file.line);
        if (!ok(rc == RX_ERROR && strstr(msg, "[emerg]")
                && strstr(msg, errors[i].error) && strstr(msg, where),
                "\"%s\": %s", errors[i].text, errors[i].error)) {
            diag("logged: %s", msg);
        }
    }
}

/* ---- the registry ---- */

static void
test_registry(void)
{
    rx_http_variable_t *v, *w;
    rx_str_t            name;
    rx_int_t            a, b;
    const char         *msg;

    logged();
    rx_str_set(&name, "uri");
    ok(rx_http_add_variable(&cf, &name, 0) == NULL
       && strstr(logged(), "the duplicate \"uri\" variable in test.conf:"),
       "a second non-changeable $uri is refused");
    rx_str_set(&name, "args");
    v = rx_http_add_variable(&cf, &name, RX_HTTP_VAR_CHANGEABLE);
    rx_str_set(&name, "ARGS");
    w = rx_http_add_variable(&cf, &name, 0);
    ok(v != NULL && v == w, "changeable $args: adding it again returns it");
    rx_str_set(&name, "my_var");
    v = rx_http_add_variable(&cf, &name, 0);
    ok(v && rx_str_eq(&v->name, "my_var"), "a module adds $my_var");

    rx_str_set(&name, "uri");
    a = rx_http_get_variable_index(&cf, &name);
    rx_str_set(&name, "URI");
    b = rx_http_get_variable_index(&cf, &name);
    ok(a >= 0 && a == b, "names are case-insensitive: $URI is $uri");

    rx_str_set(&name, "");
    ok(rx_http_get_variable_index(&cf, &name) == RX_ERROR,
       "an empty name has no index");
    msg = logged();
    ok(strstr(msg, "invalid variable name") != NULL, "... and is reported");
}

/* An unknown name is reported where it was used, at the end of the block;
 * after that, new references are resolved (and refused) at once. */
static void
test_unknown(void)
{
    rx_http_conf_ctx_t     *saved = cf.ctx;
    rx_http_complex_value_t cv;
    rx_uint_t               line;
    rx_str_t                name;
    const char             *msg;
    char                    want[96];

    new_http_ctx();
    logged();
    ok(compile("a $nosuch b", &cv) == RX_OK, "an unknown name compiles");
    line = conf_file.line;
    compile("$uri $http_anything $arg_x $cookie_y $sent_http_z", &cv);
    ok(rx_http_variables_init_vars(&cf) == RX_ERROR, "init_vars fails");
    msg = logged();
    snprintf(want, sizeof(want), "unknown \"nosuch\" variable in test.conf:%lu",
             (unsigned long) line);
    if (!ok(strstr(msg, want) != NULL, "reported as: %s", want)) {
        diag("logged: %s", msg);
    }
    ok(strstr(msg, "http_anything") == NULL && strstr(msg, "arg_x") == NULL
       && strstr(msg, "sent_http_z") == NULL, "prefix variables resolve");

    rx_str_set(&name, "later_unknown");
    conf_file.line = 77;
    ok(rx_http_get_variable_index(&cf, &name) == RX_ERROR
       && strstr(logged(), "unknown \"later_unknown\" variable in test.conf:77"),
       "after init_vars a new unknown name fails at once");
    rx_str_set(&name, "http_late");
    ok(rx_http_get_variable_index(&cf, &name) >= 0,
       "after init_vars a new prefix name resolves at once");
    cf.ctx = saved;
}

/* ---- evaluation ---- */

static rx_http_request_t  req;

static void
add_header(rx_array_t *a, const char *key, const char *value)
{
    rx_table_elt_t *h = rx_array_push(a);

    memset(h, 0, sizeof(*h));
    h->key.data = (char *) key;
    h->key.len = strlen(key);
    h->value.data = (char *) value;
    h->value.len = strlen(value);
}

static void
setup_request(rx_http_conf_ctx_t *ctx)
{
    static const int caps[] = { 0, 11, 0, 5, 6, 11, -1, -1 };
    static rx_conn_t            conn;
    static rx_http_connection_t hc;

    conn.number = 7;
    hc.requests = 2;
    req.conn = &conn;
    req.hc = &hc;
    req.pool = pool;
    req.main_conf = ctx->main_conf;
    rx_str_set(&req.uri, "/p/a");
    rx_str_set(&req.unparsed_uri, "/p/a?a=1&B=2&c");
    rx_str_set(&req.args, "a=1&B=2&c&e=");
    rx_str_set(&req.method_name, "GET");
    rx_str_set(&req.http_protocol, "HTTP/1.1");
    rx_array_init(&req.headers_in.headers, pool, 4, sizeof(rx_table_elt_t));
    rx_array_init(&req.headers_out.headers, pool, 4, sizeof(rx_table_elt_t));
    add_header(&req.headers_in.headers, "X-Foo", "v1");
    add_header(&req.headers_in.headers, "Cookie", "a=1; b=two;c=3");
    add_header(&req.headers_in.headers, "x-foo", "v2");
    add_header(&req.headers_in.headers, "Cookie", "D=4");
    add_header(&req.headers_in.headers, "User-Agent", "test/1");
    add_header(&req.headers_out.headers, "X-Out", "o1");
    req.headers_in.content_length_n = -1;
    req.headers_out.content_length_n = -1;
    req.headers_out.last_modified_time = -1;
    memcpy(req.captures, caps, sizeof(caps));
    req.ncaptures = 3;
    req.captures_data = "hello world";
}

typedef struct {
    const char  *text;
    const char  *want;
} eval_case_t;

static const eval_case_t evals[] = {
    { "plain", "plain" },
    { "a $uri b", "a /p/a b" },
    { "$uri$args", "/p/aa=1&B=2&c&e=" },
    { "${uri}x", "/p/ax" },
    { "$document_uri|$request_uri", "/p/a|/p/a?a=1&B=2&c" },
    { "$request_method $server_protocol", "GET HTTP/1.1" },
    { "[$arg_a][$arg_b][$arg_c][$arg_e][$arg_zz]", "[1][2][][][]" },
    { "$is_args", "?" },
    { "$http_x_foo", "v1, v2" },
    { "$HTTP_USER_AGENT", "test/1" },
    { "[$http_none]", "[]" },
    { "$http_cookie", "a=1; b=two;c=3; D=4" },
    { "[$cookie_a][$cookie_B][$cookie_c][$cookie_d][$cookie_e]",
      "[1][two][3][4][]" },
    { "$sent_http_x_out", "o1" },
    { "$2-$1", "world-hello" },
    { "$12|${1}0|[$3][$5]", "hello2|hello0|[][]" },
    { "[$remote_user]", "[]" },
    { "$status", "000" },
    { "$nginx_version", "1.22.1" },
    { "$ringx_version", RINGX_VERSION },
    { "$scheme", "http" },
};

static void
test_eval(void)
{
    rx_http_complex_value_t cv;
    rx_str_t                out;
    rx_uint_t               i;

    for (i = 0; i < rx_nelems(evals); i++) {
        if (compile(evals[i].text, &cv) != RX_OK) {
            ok(false, "compiles \"%s\"", evals[i].text);
            continue;
        }
        out.len = 0;
        /* compiling after init_vars added indexes: the cache, sized when
         * it was allocated, must be rebuilt (a server never does this) */
        req.variables = NULL;
        if (!ok(rx_http_complex_value(&req, &cv, &out) == RX_OK
                && out.len == strlen(evals[i].want)
                && memcmp(out.data, evals[i].want, out.len) == 0,
                "\"%s\" is \"%s\"", evals[i].text, evals[i].want)) {
            diag("got \"%.*s\"", (int) out.len, out.data);
        }
    }
}

static bool
eval_is(const rx_http_complex_value_t *cv, const char *want)
{
    rx_str_t out;

    if (rx_http_complex_value(&req, cv, &out) != RX_OK) {
        return false;
    }
    if (out.len != strlen(want) || memcmp(out.data, want, out.len) != 0) {
        diag("got \"%.*s\", want \"%s\"", (int) out.len, out.data, want);
        return false;
    }
    return true;
}

/* Non-cacheable values follow the request; cacheable ones keep their first
 * value until the cache is cleared (an internal redirect). */
static void
test_caching(void)
{
    rx_http_complex_value_t uri, ruri, status, id, args;
    rx_http_variable_value_t *v;
    rx_str_t                  s, first;
    rx_int_t                  index;
    size_t                    i;

    compile("$uri", &uri);
    compile("$request_uri", &ruri);
    compile("s=$status", &status);
    compile("$request_id", &id);
    compile("$args", &args);
    compile("$my_var", &uri);
    compile("$uri", &uri);
    req.variables = NULL;

    ok(eval_is(&uri, "/p/a") && eval_is(&ruri, "/p/a?a=1&B=2&c"),
       "first values");
    rx_str_set(&req.uri, "/other");
    rx_str_set(&req.unparsed_uri, "/changed");
    ok(eval_is(&uri, "/other"), "$uri (non-cacheable) follows the request");
    ok(eval_is(&ruri, "/p/a?a=1&B=2&c"), "$request_uri stays cached");
    req.variables = NULL;
    ok(eval_is(&ruri, "/changed"), "clearing r->variables resets the cache");

    req.headers_out.status = 200;
    ok(eval_is(&status, "s=200"), "$status is the response status");
    req.err_status = 404;
    ok(eval_is(&status, "s=404"), "... err_status first, recomputed");

    rx_http_complex_value(&req, &id, &first);
    for (i = 0; i < first.len && isxdigit((unsigned char) first.data[i]); i++) {
        /* count hex digits */
    }
    ok(first.len == 32 && i == 32, "$request_id is 32 hex digits");
    req.variables = NULL;
    rx_http_complex_value(&req, &id, &s);
    ok(s.len == 32 && memcmp(s.data, first.data, 32) == 0,
       "... and survives a cache reset (internal redirect)");

    rx_str_set(&s, "args");
    index = rx_http_get_variable_index(&cf, &s);
    rx_str_set(&s, "x=9");
    ok(index >= 0 && rx_http_set_indexed_variable(&req, (rx_uint_t) index, &s)
       == RX_OK && rx_str_eq(&req.args, "x=9") && eval_is(&args, "x=9"),
       "set $args goes through its set handler to r->args");
    rx_str_set(&s, "my_var");
    index = rx_http_get_variable_index(&cf, &s);
    rx_str_set(&s, "mine");
    v = index >= 0 && rx_http_set_indexed_variable(&req, (rx_uint_t) index, &s)
        == RX_OK ? rx_http_get_indexed_variable(&req, (rx_uint_t) index) : NULL;
    ok(v && v->valid && !v->not_found && v->len == 4
       && memcmp(v->data, "mine", 4) == 0, "set $my_var is stored in the cache");
    ok(rx_http_get_indexed_variable(&req, 100000) == NULL,
       "an index out of range gives NULL");
}

static void
test_slot(void)
{
    typedef struct { rx_http_complex_value_t *cv; } conf_t;
    rx_command_t cmd = { "x", 0, rx_http_set_complex_value_slot, 0,
                         offsetof(conf_t, cv), NULL };
    conf_t       conf = { RX_CONF_UNSET_PTR };
    rx_str_t    *arg;
    rx_str_t     out;

    cf.args->nelts = 0;
    arg = rx_array_push(cf.args);
    rx_str_set(arg, "x");
    arg = rx_array_push(cf.args);
    rx_str_set(arg, "<$uri>");
    ok(rx_http_set_complex_value_slot(&cf, &cmd, &conf) == RX_CONF_OK
       && conf.cv != RX_CONF_UNSET_PTR
       && rx_http_complex_value(&req, conf.cv, &out) == RX_OK
       && out.len == 8 && memcmp(out.data, "</other>", 8) == 0,
       "rx_http_set_complex_value_slot compiles its argument");
    ok(rx_http_set_complex_value_slot(&cf, &cmd, &conf) != RX_CONF_OK,
       "... and refuses a second occurrence");
}

int
main(void)
{
    rx_http_conf_ctx_t *ctx;

    setup();
    ctx = new_http_ctx();
    test_shapes();
    test_errors();
    test_registry();
    test_unknown();
    cf.ctx = ctx;
    if (!ok(rx_http_variables_init_vars(&cf) == RX_OK, "init_vars resolves "
            "every name used so far")) {
        diag("logged: %s", logged());
    }
    setup_request(ctx);
    test_eval();
    test_caching();
    test_slot();

    return done();
}
