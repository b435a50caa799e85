/*
 * test_conf.c: the configuration language (core/conf.c,
 * core/conf_setters.c, core/str.c):
 *
 *   - the tokenizer rx_conf_read_token on in-memory buffers, table-driven:
 *     the token stream each input gives, the error and its line;
 *   - the parser end to end, as `ringx -t` loads a config (rx_init_cycle on
 *     files in a temporary directory): each error message with its exact
 *     FILE:LINE, include (missing files, globs relative to the config's
 *     directory, in sorted order, errors naming the included file), -g;
 *   - the value parsers rx_parse_size, rx_parse_offset, rx_parse_time,
 *     rx_atoi, and the generic setters' wording;
 *   - merging: values set at http level reach servers and locations,
 *     are overridden below, and defaults apply when nothing is set.
 *
 * Expectations follow nginx (ngx_conf_file.c, ngx_parse.c, the docs'
 * "Configuration file measurement units").
 */
#include "core.h"
#include "cycle.h"
#include "event.h"
#include "http_core.h"
#include "tap.h"
#include "fixture.h"


/* ---- the log (fixture.h), shared by both halves ---- */

/* The log has a line ending in exactly ": <msg> in <where>\n"; where is
 * "FILE:LINE" or "command line". */
static bool
log_has_at(const char *msg, const char *where)
{
    char        want[2048];
    const char *text = log_text();

    snprintf(want, sizeof(want), ": %s in %s\n", msg, where);
    if (strstr(text, want) == NULL) {
        want[strlen(want) - 1] = '\0';
        diag("the log has no line ending in \"%s\"", want + 2);
        diag("log: %s", text);
        return false;
    }
    return true;
}

/* A printable form of a word: controls as <TAB> <LF> <CR> <xHH>. */
static void
show_word(char *out, size_t size, const char *p, size_t n)
{
    size_t i, o = 0;

    for (i = 0; i < n && o + 8 < size; i++) {
        unsigned char c = (unsigned char) p[i];
        if (c == '\t') {
            o += (size_t) snprintf(out + o, size - o, "<TAB>");
        } else if (c == '\n') {
            o += (size_t) snprintf(out + o, size - o, "<LF>");
        } else if (c == '\r') {
            o += (size_t) snprintf(out + o, size - o, "<CR>");
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t) snprintf(out + o, size - o, "<x%02x>", c);
        } else {
            out[o++] = (char) c;
        }
    }
    out[o] = '\0';
}

/* ======================================================================
 * The tokenizer
 * ====================================================================== */

typedef struct {
    const char  *in;
    const char  *tokens;  /* the stream: "[w][w];" "[w]{" "}" and "$" at EOF */
    const char  *error;   /* NULL: none */
    rx_uint_t    line;    /* of the error; else the line at EOF (0: any) */
} tok_case_t;

#define EOF_SEMI  "unexpected end of file, expecting \";\" or \"}\""

static const tok_case_t tok_cases[] = {

    /* words and terminators */
    { "a;", "[a];$", NULL, 1 },
    { "a b c;", "[a][b][c];$", NULL, 1 },
    { "  a\tb\r\n c ;\n", "[a][b][c];$", NULL, 3 },
    { "a { b; }", "[a]{[b];}$", NULL, 1 },
    { "a{b;}", "[a]{[b];}$", NULL, 1 },
    { "a;b;", "[a];[b];$", NULL, 1 },
    { "a\n{\nb\n;\n}\n", "[a]{[b];}$", NULL, 6 },
    { "", "$", NULL, 1 },
    { "\n\n\n", "$", NULL, 4 },
    { "}", "}$", NULL, 1 },                 /* the parser decides about it */
    { "a { } }", "[a]{}}$", NULL, 1 },
    { "a}b;", "[a}b];$", NULL, 1 },         /* '}' inside a word is a byte */

    /* comments */
    { "# comment\na;", "[a];$", NULL, 2 },
    { "a # comment ; {\n b;", "[a][b];$", NULL, 2 },
    { "a; # c\n", "[a];$", NULL, 2 },
    { "a;# c", "[a];$", NULL, 1 },
    { "# only a comment", "$", NULL, 1 },
    { "#a;\n#b{\n#}\n", "$", NULL, 4 },
    { "a b;# x\n}", "[a][b];}$", NULL, 2 },
    { "a#b;", "[a#b];$", NULL, 1 },         /* not a comment inside a word */
    { "a \"#b\";", "[a][#b];$", NULL, 1 },

    /* quotes and escapes */
    { "\"a b\" 'c d';", "[a b][c d];$", NULL, 1 },
    { "\"a\\\"b\" 'c\\'d' \"e\\\\f\";", "[a\"b][c'd][e\\f];$", NULL, 1 },
    { "\"\\t\\r\\n\";", "[<TAB><CR><LF>];$", NULL, 1 },
    { "'\\t\\r\\n\\\"';", "[<TAB><CR><LF>\"];$", NULL, 1 },
    { "a\\tb\\nc;", "[a<TAB>b<LF>c];$", NULL, 1 },   /* unquoted too */
    { "a\\x \"\\d\" '\\$';", "[a\\x][\\d][\\$];$", NULL, 1 },
    { "\"\\\\\\\\\";", "[\\\\];$", NULL, 1 },
    { "\\\"a b;", "[\"a][b];$", NULL, 1 },
    { "a\\ b;", "[a\\ b];$", NULL, 1 },    /* an escaped space joins */
    { "a\\;b;", "[a\\;b];$", NULL, 1 },
    { "a\\\nb;", "[a\\<LF>b];$", NULL, 2 },
    { "\"a;{}#b\";", "[a;{}#b];$", NULL, 1 },
    { "'a\"b' \"c'd\";", "[a\"b][c'd];$", NULL, 1 },
    { "a\"b\"c;", "[a\"b\"c];$", NULL, 1 },  /* quotes inside a word are bytes */

    /* empty strings */
    { "\"\";", "[];$", NULL, 1 },
    { "'' x;", "[][x];$", NULL, 1 },
    { "a \"\" b;", "[a][][b];$", NULL, 1 },
    { "a '';", "[a][];$", NULL, 1 },

    /* after a quoted string: a space, ';', '{' or ')' */
    { "a \"b\" \"c\"{ }", "[a][b][c]{}$", NULL, 1 },
    { "\"a\"\n;", "[a];$", NULL, 2 },
    { "x \"a\");", "[x][a][)];$", NULL, 1 },
    { "if ($a = \"b\") { }", "[if][($a][=][b][)]{}$", NULL, 1 },
    { "if ($a = 'b'){ }", "[if][($a][=][b][)]{}$", NULL, 1 },
    { "if ($a) { }", "[if][($a)]{}$", NULL, 1 },

    /* variables: "${" does not open a block */
    { "set $a ${b}c;", "[set][$a][${b}c];$", NULL, 1 },
    { "${x} { y; }", "[${x}]{[y];}$", NULL, 1 },
    { "a${b}{ c; }", "[a${b}]{[c];}$", NULL, 1 },
    { "\"${a}b\";", "[${a}b];$", NULL, 1 },
    { "a$ { }", "[a$]{}$", NULL, 1 },         /* "$ {" is no "${" */
    { "a ${b}", "", EOF_SEMI, 1 },

    /* lines across multi-line strings and comments */
    { "a \"x\ny\nz\";\nb;", "[a][x<LF>y<LF>z];[b];$", NULL, 4 },
    { "a 'x\n\ny';\n# c\n# d\nb;\n", "[a][x<LF><LF>y];[b];$", NULL, 7 },
    { "a \"x\ny\";\n\"q\"r;", "[a][x<LF>y];", "unexpected \"r\"", 3 },
    { "# a\n# b\n\nx }", "", "unexpected \"}\"", 4 },
    { "a # one\n# two\n b # three\n}", "", "unexpected \"}\"", 4 },

    /* errors */
    { "\"a\"b", "", "unexpected \"b\"", 1 },
    { "x 'a'b;", "", "unexpected \"b\"", 1 },
    { "\"a\"#", "", "unexpected \"#\"", 1 },
    { "\"a\"'b'", "", "unexpected \"'\"", 1 },
    { "a }", "", "unexpected \"}\"", 1 },
    { "a\n\n}", "", "unexpected \"}\"", 3 },
    { "a b", "", EOF_SEMI, 1 },
    { "a", "", EOF_SEMI, 1 },
    { "a\n", "", EOF_SEMI, 2 },
    { "a # c", "", EOF_SEMI, 1 },
    { "\"abc", "", EOF_SEMI, 1 },
    { "a \"b\nc", "", EOF_SEMI, 2 },
    { "a 'b", "", EOF_SEMI, 1 },
    { "a \"b\"", "", EOF_SEMI, 1 },
    { "a { b", "[a]{", EOF_SEMI, 1 },
    { ";", "", "unexpected \";\"", 1 },
    { "{", "", "unexpected \"{\"", 1 },
    { "a; ;", "[a];", "unexpected \";\"", 1 },
    { "\n\n {", "", "unexpected \"{\"", 3 },
    { "a { ; }", "[a]{", "unexpected \";\"", 1 },
};

static rx_pool_t *tok_pool;

/* Runs the tokenizer over text (an exact copy without a NUL, so that a
 * read past the end shows under ASan); returns the stream, sets *rc of
 * the last call and *line. */
static const char *
tokenize(const char *name, const char *text, size_t len, rx_int_t *last,
    rx_uint_t *line)
{
    static char      out[4096];
    char             word[512];
    rx_conf_t        cf;
    rx_conf_file_t   file;
    char            *copy = malloc(len ? len : 1);
    size_t           o = 0;
    rx_uint_t        i;
    rx_int_t         rc = RX_CONF_TOKEN_ERROR;
    int              calls;

    memcpy(copy, text, len);
    memset(&cf, 0, sizeof(cf));
    memset(&file, 0, sizeof(file));
    cf.args = rx_array_create(tok_pool, 4, sizeof(rx_str_t));
    cf.pool = tok_pool;
    cf.temp_pool = tok_pool;
    cf.log = &test_log;
    cf.conf_file = &file;
    file.name.data = (char *) name;
    file.name.len = strlen(name);
    file.start = file.pos = copy;
    file.end = copy + len;
    file.line = 1;

    out[0] = '\0';
    for (calls = 0; calls < 200; calls++) {
        rc = rx_conf_read_token(&cf);
        if (rc == RX_CONF_TOKEN_ERROR) {
            break;
        }
        if (rc == RX_CONF_DIRECTIVE || rc == RX_CONF_BLOCK_START) {
            rx_str_t *w = cf.args->elts;
            for (i = 0; i < cf.args->nelts; i++) {
                show_word(word, sizeof(word), w[i].data, w[i].len);
                if (w[i].data[w[i].len] != '\0') {
                    snprintf(word, sizeof(word), "(no NUL)");
                }
                o += (size_t) snprintf(out + o, sizeof(out) - o, "[%s]", word);
            }
            out[o++] = rc == RX_CONF_DIRECTIVE ? ';' : '{';
        } else if (rc == RX_CONF_BLOCK_DONE) {
            out[o++] = cf.args->nelts ? '?' : '}';
        } else if (rc == RX_CONF_FILE_DONE) {
            out[o++] = cf.args->nelts ? '?' : '$';
            out[o] = '\0';
            break;
        } else {
            out[o++] = '?';
        }
        out[o] = '\0';
        if (o > sizeof(out) - 600) {
            break;
        }
    }
    out[o] = '\0';
    *last = rc;
    *line = file.line;
    free(copy);
    return out;
}

static void
test_tokenizer(void)
{
    char       where[64], shown[512];
    const char *got;
    rx_int_t    rc;
    rx_uint_t   i, line;

    tok_pool = rx_pool_create(4096, &test_log);

    for (i = 0; i < rx_nelems(tok_cases); i++) {
        const tok_case_t *c = &tok_cases[i];
        bool              good;

        log_reset();
        got = tokenize("test.conf", c->in, strlen(c->in), &rc, &line);
        show_word(shown, sizeof(shown), c->in, strlen(c->in));
        good = strcmp(got, c->tokens) == 0;
        if (c->error) {
            snprintf(where, sizeof(where), "test.conf:%lu", (unsigned long) c->line);
            good = good && rc == RX_CONF_TOKEN_ERROR;
            if (!ok(good && log_has_at(c->error, where), "'%s' -> %s%s in %s",
                    shown, c->tokens, c->error, where)) {
                diag("got %s, rc %ld", got, (long) rc);
            }
        } else {
            good = good && rc == RX_CONF_FILE_DONE
                   && (c->line == 0 || line == c->line)
                   && log_text()[0] == '\0';
            if (!ok(good, "'%s' -> %s (line %lu)", shown, c->tokens,
                    (unsigned long) c->line)) {
                diag("got %s, rc %ld, line %lu, log: %s", got, (long) rc,
                     (unsigned long) line, log_text());
            }
        }
    }

    /* without a file name the place is the command line (-g) */
    log_reset();
    got = tokenize("", "\"a\"b", 4, &rc, &line);
    ok(rc == RX_CONF_TOKEN_ERROR && log_has_at("unexpected \"b\"", "command line"),
       "with no file name: 'unexpected \"b\" in command line'");

    /* many arguments */
    {
        char buf[64 * 4 + 8], *p = buf;
        int  n;

        for (n = 0; n < 64; n++) {
            p += sprintf(p, "w%d ", n);
        }
        strcpy(p, ";");
        log_reset();
        got = tokenize("test.conf", buf, strlen(buf), &rc, &line);
        ok(rc == RX_CONF_FILE_DONE && strncmp(got, "[w0][w1]", 8) == 0
           && strstr(got, "[w63];$") != NULL, "a directive of 64 words");
    }

    /* a long word and a long quoted string */
    {
        static char buf[20000];

        memset(buf, 'x', 9000);
        buf[0] = '"';
        buf[8999] = '"';
        strcpy(buf + 9000, " y;");
        log_reset();
        got = tokenize("test.conf", buf, strlen(buf), &rc, &line);
        ok(rc == RX_CONF_FILE_DONE && strncmp(got, "[xxxx", 5) == 0
           && strstr(got, "][y];$") != NULL, "a quoted string of 8998 bytes");
    }
    rx_pool_destroy(tok_pool);
}

/* ======================================================================
 * The parser, end to end
 * ====================================================================== */

static void
refused(const char *text, const char *param, const char *msg,
    const char *where, const char *name)
{
    rx_cycle_t *c = load(text, param);

    if (!ok(c == NULL && log_has_at(msg, where), "%s: %s", name, msg)) {
        if (c) diag("the config was accepted");
    }
    rx_free_cycle(c);
}

static rx_core_conf_t *
core_conf(rx_cycle_t *c)
{
    return c->conf_ctx[rx_core_module.index];
}

static void
test_errors(void)
{
    char msg[512];

    refused("events {}\nfoo bar;\n", NULL,
            "unknown directive \"foo\"", at("ringx.conf", 2), "unknown");
    refused("events {}\n\nlisten 80;\n", NULL,
            "\"listen\" directive is not allowed here", at("ringx.conf", 3),
            "listen at top level");
    refused("events {}\nhttp {\n  server {\n    worker_processes 2;\n  }\n}\n",
            NULL, "\"worker_processes\" directive is not allowed here",
            at("ringx.conf", 4), "worker_processes in server");
    refused("events {}\nhttp {\n  location / { }\n}\n", NULL,
            "\"location\" directive is not allowed here", at("ringx.conf", 3),
            "location in http");
    refused("events {\n  keepalive_timeout 5s;\n}\nhttp { }\n", NULL,
            "\"keepalive_timeout\" directive is not allowed here",
            at("ringx.conf", 2), "an http directive in events");
    refused("events {}\nworker_processes;\n", NULL,
            "invalid number of arguments in \"worker_processes\" directive",
            at("ringx.conf", 2), "no argument");
    refused("events {}\nworker_processes 1 2;\n", NULL,
            "invalid number of arguments in \"worker_processes\" directive",
            at("ringx.conf", 2), "two arguments");
    refused("events {}\nworker_processes\n  1\n  2;\n", NULL,
            "invalid number of arguments in \"worker_processes\" directive",
            at("ringx.conf", 4), "over lines: the line of the ';'");
    refused("events { } \ndaemon;\n", NULL,
            "invalid number of arguments in \"daemon\" directive",
            at("ringx.conf", 2), "a flag without value");
    refused("events x { }\n", NULL,
            "invalid number of arguments in \"events\" directive",
            at("ringx.conf", 1), "a block with an argument");
    refused("events {}\ninclude;\n", NULL,
            "invalid number of arguments in \"include\" directive",
            at("ringx.conf", 2), "include without a file");
    refused("worker_processes 1;\nevents {}\nworker_processes 2;\n", NULL,
            "\"worker_processes\" directive is duplicate", at("ringx.conf", 3),
            "duplicate");
    refused("events {}\n\nevents {}\n", NULL,
            "\"events\" directive is duplicate", at("ringx.conf", 3),
            "duplicate block");
    refused("daemon on;\ndaemon off;\nevents {}\n", NULL,
            "\"daemon\" directive is duplicate", at("ringx.conf", 2),
            "duplicate flag");
    refused("events {}\nhttp {\n  send_timeout 1s;\n  send_timeout 2s;\n}\n",
            NULL, "\"send_timeout\" directive is duplicate", at("ringx.conf", 4),
            "duplicate time");
    refused("events {}\n}\n", NULL, "unexpected \"}\"", at("ringx.conf", 2),
            "a '}' too many");
    refused("events {\n  worker_connections 10;\n", NULL,
            "unexpected end of file, expecting \"}\"", at("ringx.conf", 3),
            "an unclosed block");
    refused("events {}\nhttp {\n server {\n  listen 127.0.0.1:8080;\n }\n",
            NULL, "unexpected end of file, expecting \"}\"",
            at("ringx.conf", 6), "an unclosed nested block");
    refused("events {}\nworker_processes 1", NULL, EOF_SEMI,
            at("ringx.conf", 2), "no ';' at the end");
    refused("events;\n", NULL, "directive \"events\" has no opening \"{\"",
            at("ringx.conf", 1), "a block without '{'");
    refused("events {}\nhttp {\n  server;\n}\n", NULL,
            "directive \"server\" has no opening \"{\"", at("ringx.conf", 3),
            "server without '{'");
    refused("events {}\nworker_processes 1 {\n}\n", NULL,
            "directive \"worker_processes\" is not terminated by \";\"",
            at("ringx.conf", 2), "a directive with '{'");
    refused("events {}\nhttp {\n server {\n  listen 127.0.0.1:8080;\n"
            "  location / {\n   bogus on;\n  }\n }\n}\n", NULL,
            "unknown directive \"bogus\"", at("ringx.conf", 6),
            "unknown, deep in a location");
    refused("events {}\n\"a\"b;\n", NULL, "unexpected \"b\"", at("ringx.conf", 2),
            "a tokenizer error has its place");

    snprintf(msg, sizeof(msg), "open() \"%s/missing.conf\" failed "
             "(2: No such file or directory)", confdir);
    refused("events {}\n\ninclude missing.conf;\n", NULL, msg,
            at("ringx.conf", 3), "include of a missing file");
    refused("events {}\ninclude /nonexistent/x;\n", NULL,
            "open() \"/nonexistent/x\" failed (2: No such file or directory)",
            at("ringx.conf", 2), "include of a missing absolute path");
}

/* the generic setters' wording */
static void
test_setter_errors(void)
{
    refused("daemon yes;\nevents {}\n", NULL, "invalid value \"yes\" in "
            "\"daemon\" directive, it must be \"on\" or \"off\"",
            at("ringx.conf", 1), "flag");
    refused("events {}\nhttp {\n  sendfile 1;\n}\n", NULL, "invalid value \"1\" "
            "in \"sendfile\" directive, it must be \"on\" or \"off\"",
            at("ringx.conf", 3), "flag in http");
    refused("events {\n  worker_connections 0;\n}\n", NULL, "invalid value "
            "\"0\" in \"worker_connections\" directive, it must be between 1 "
            "and 16777216", at("ringx.conf", 2), "number below its bounds");
    refused("events {\n  worker_connections 16777217;\n}\n", NULL,
            "invalid value \"16777217\" in \"worker_connections\" directive, it "
            "must be between 1 and 16777216", at("ringx.conf", 2),
            "number above its bounds");
    refused("events {\n  worker_connections many;\n}\n", NULL,
            "invalid value \"many\" in \"worker_connections\" directive, it "
            "must be a number", at("ringx.conf", 2), "not a number");
    refused("events {\n  worker_connections -1;\n}\n", NULL,
            "invalid value \"-1\" in \"worker_connections\" directive, it "
            "must be a number", at("ringx.conf", 2), "a negative number");
    refused("events {}\nhttp {\n  server_tokens maybe;\n}\n", NULL,
            "invalid value \"maybe\" in \"server_tokens\" directive, it must "
            "be \"off\", \"on\" or \"build\"", at("ringx.conf", 3), "enum");
    refused("events {}\nhttp {\n  lingering_close sometimes;\n}\n", NULL,
            "invalid value \"sometimes\" in \"lingering_close\" directive, it "
            "must be \"off\", \"on\" or \"always\"", at("ringx.conf", 3),
            "enum of lingering_close");
    refused("events {}\nhttp {\n  client_body_buffer_size 1x;\n}\n", NULL,
            "invalid value \"1x\" in \"client_body_buffer_size\" directive, it "
            "must be a size (e.g. 512, 16k, 1m)", at("ringx.conf", 3), "size");
    refused("events {}\nhttp {\n  client_body_buffer_size 0;\n}\n", NULL,
            "invalid value \"0\" in \"client_body_buffer_size\" directive, it "
            "must be at least 1", at("ringx.conf", 3), "size below its minimum");
    refused("events {}\nhttp {\n  send_timeout 10x;\n}\n", NULL,
            "invalid value \"10x\" in \"send_timeout\" directive, it must be a "
            "time (e.g. 500ms, 60s, 5m, 1h)", at("ringx.conf", 3), "time");
    refused("events {}\nhttp {\n  client_max_body_size lots;\n}\n", NULL,
            "invalid value \"lots\" in \"client_max_body_size\" directive, it "
            "must be a size (e.g. 512, 16k, 1m, 2g)", at("ringx.conf", 3),
            "offset");
}

static void
test_include(void)
{
    rx_cycle_t *c;
    char        path[256];

    /* a decoy where a glob relative to the prefix (not the config's
     * directory) would look */
    snprintf(path, sizeof(path), "%s/inc", tmpdir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/inc/a.conf", tmpdir);
    {
        FILE *f = fopen(path, "w");
        if (f) {
            fputs("decoy_directive;\n", f);
            fclose(f);
        }
    }

    /* b first, so that the directory order is not the sorted one */
    write_conf("inc/b.conf", "worker_processes 4;\n");
    write_conf("inc/a.conf", "worker_processes 3;\n");
    write_conf("inc/c.txt", "not_a_conf;\n");
    refused("include inc/*.conf;\nevents {}\n", NULL,
            "\"worker_processes\" directive is duplicate", at("inc/b.conf", 1),
            "include inc/*.conf: a.conf, then b.conf");

    write_conf("inc/b.conf", "\n# b\ndaemon off;\n");
    c = load("include inc/*.conf;\nevents {}\n", NULL);
    ok(c != NULL, "include inc/*.conf: loads");
    if (c) {
        is_int(core_conf(c)->worker_processes, 3, "worker_processes from a.conf");
        is_int(core_conf(c)->daemon, 0, "daemon from b.conf");
    }
    rx_free_cycle(c);

    snprintf(path, sizeof(path), "include %s/inc/*.conf;\nevents {}\n", confdir);
    c = load(path, NULL);
    ok(c != NULL && core_conf(c)->worker_processes == 3,
       "include of an absolute glob");
    rx_free_cycle(c);

    write_conf("inc2/x.conf", "\n\n  bogus_directive 1;\n");
    refused("events {}\ninclude inc2/x.conf;\n", NULL,
            "unknown directive \"bogus_directive\"", at("inc2/x.conf", 3),
            "an error in an included file names that file and line");
    refused("events {}\ninclude inc2/*.conf;\n", NULL,
            "unknown directive \"bogus_directive\"", at("inc2/x.conf", 3),
            "... also through a glob");

    write_conf("inc3/ok.conf", "# one\n# two\n\nworker_processes 2;\n\n");
    refused("events {}\ninclude inc3/ok.conf;\n\nbogus;\n", NULL,
            "unknown directive \"bogus\"", at("ringx.conf", 4),
            "after an include, lines count on in the including file");
    refused("events {}\ninclude inc3/ok.conf;\ninclude inc3/ok.conf;\n", NULL,
            "\"worker_processes\" directive is duplicate", at("inc3/ok.conf", 4),
            "a file included twice");

    write_conf("inc4/h.conf", "keepalive_requests 7;\n");
    c = load("events {}\nhttp {\n  include inc4/h.conf;\n"
             "  server { listen 127.0.0.1:8080; }\n}\n", NULL);
    ok(c != NULL, "include inside http { }");
    if (c) {
        rx_http_conf_ctx_t       *ctx = c->conf_ctx[rx_http_module.index];
        rx_http_core_main_conf_t *cmcf = ctx->main_conf[rx_http_core_module.ctx_index];
        rx_http_core_srv_conf_t  *cscf = ((rx_http_core_srv_conf_t **)
                                          cmcf->servers.elts)[0];
        rx_http_core_loc_conf_t  *clcf = cscf->ctx->loc_conf[
                                             rx_http_core_module.ctx_index];
        is_int(clcf->keepalive_requests, 7, "its directive applies to the block");
    }
    rx_free_cycle(c);

    write_conf("inc5/close.conf", "}\n");
    refused("events {}\nhttp {\n  include inc5/close.conf;\n}\n", NULL,
            "unexpected \"}\"", at("inc5/close.conf", 1),
            "an included file cannot close the block around it");
    write_conf("inc5/listen.conf", "\nlisten 80;\n");
    refused("events {}\ninclude inc5/listen.conf;\n", NULL,
            "\"listen\" directive is not allowed here", at("inc5/listen.conf", 2),
            "an included directive is checked against the including context");

    c = load("events {}\ninclude nothing/*.conf;\n", NULL);
    ok(c != NULL, "a glob that matches nothing is fine");
    rx_free_cycle(c);

    snprintf(path, sizeof(path), "\"%s/inc\" is not a regular file", confdir);
    refused("events {}\ninclude inc;\n", NULL, path, at("ringx.conf", 2),
            "include of a directory");
}

static void
test_param(void)
{
    rx_cycle_t *c;

    c = load("events {}\n", "worker_processes 2;");
    ok(c != NULL && core_conf(c)->worker_processes == 2,
       "-g 'worker_processes 2;' applies");
    rx_free_cycle(c);

    c = load("events {}\n", "worker_processes 2; daemon off;");
    ok(c != NULL && core_conf(c)->worker_processes == 2
       && core_conf(c)->daemon == 0, "-g with two directives");
    rx_free_cycle(c);

    refused("events {}\n", "bogus 1;", "unknown directive \"bogus\"",
            "command line", "-g unknown");
    refused("events {}\n", "daemon maybe;", "invalid value \"maybe\" in "
            "\"daemon\" directive, it must be \"on\" or \"off\"",
            "command line", "-g invalid value");
    refused("events {}\n", "listen 80;",
            "\"listen\" directive is not allowed here", "command line",
            "-g not allowed here");
    refused("events {}\n", "worker_processes 2", EOF_SEMI, "command line",
            "-g without ';'");
    refused("events {}\n", "worker_processes 1; worker_processes 2;",
            "\"worker_processes\" directive is duplicate", "command line",
            "-g duplicate within -g");
    refused("events {}\nworker_processes 3;\n", "worker_processes 2;",
            "\"worker_processes\" directive is duplicate", at("ringx.conf", 2),
            "the file repeating a -g directive: the file's place");
    refused("events {}\n", "}", "unexpected \"}\"", "command line", "-g '}'");
}

/* ---- merging ---- */

static rx_http_core_srv_conf_t *
server(rx_cycle_t *c, rx_uint_t i)
{
    rx_http_conf_ctx_t       *ctx = c->conf_ctx[rx_http_module.index];
    rx_http_core_main_conf_t *cmcf = ctx->main_conf[rx_http_core_module.ctx_index];

    if (i >= cmcf->servers.nelts) {
        return NULL;
    }
    return ((rx_http_core_srv_conf_t **) cmcf->servers.elts)[i];
}

static rx_http_core_loc_conf_t *
server_clcf(rx_cycle_t *c, rx_uint_t i)
{
    rx_http_core_srv_conf_t *cscf = server(c, i);

    return cscf ? cscf->ctx->loc_conf[rx_http_core_module.ctx_index] : NULL;
}

/* the nested location of parent named name */
static rx_http_core_loc_conf_t *
location(rx_http_core_loc_conf_t *parent, const char *name)
{
    rx_http_core_loc_conf_t **l;
    rx_uint_t                 i;

    if (parent == NULL || parent->locations == NULL) {
        return NULL;
    }
    l = parent->locations->elts;
    for (i = 0; i < parent->locations->nelts; i++) {
        if (rx_str_eq(&l[i]->name, name)) {
            return l[i];
        }
    }
    return NULL;
}

static void
test_merge(void)
{
    rx_cycle_t              *c;
    rx_http_core_loc_conf_t *s0, *a, *b, *bc, *s1, *d;

    c = load("events {}\n"
             "http {\n"
             "  keepalive_timeout 10s;\n"
             "  client_max_body_size 5m;\n"
             "  send_timeout 7s;\n"
             "  server {\n"
             "    listen 127.0.0.1:8080;\n"
             "    location /a { }\n"
             "    location /b {\n"
             "      keepalive_timeout 20s;\n"
             "      client_max_body_size 0;\n"
             "      location /b/c { send_timeout 1m; }\n"
             "    }\n"
             "  }\n"
             "  server {\n"
             "    listen 127.0.0.1:8081;\n"
             "    keepalive_timeout 30s;\n"
             "    keepalive_requests 50;\n"
             "    location /d { }\n"
             "  }\n"
             "}\n", NULL);
    if (!ok(c != NULL, "the merge config loads")) {
        diag("log: %s", log_text());
        return;
    }
    s0 = server_clcf(c, 0);
    a = location(s0, "/a");
    b = location(s0, "/b");
    bc = location(b, "/b/c");
    s1 = server_clcf(c, 1);
    d = location(s1, "/d");
    if (!ok(s0 && a && b && bc && s1 && d, "servers and locations found")) {
        rx_free_cycle(c);
        return;
    }
    is_int(s0->keepalive_timeout, 10000, "server 1 inherits keepalive_timeout 10s");
    is_int(a->keepalive_timeout, 10000, "location /a inherits it");
    is_int(b->keepalive_timeout, 20000, "location /b overrides it: 20s");
    is_int(bc->keepalive_timeout, 20000, "location /b/c inherits /b's 20s");
    is_int(s1->keepalive_timeout, 30000, "server 2 overrides it: 30s");
    is_int(d->keepalive_timeout, 30000, "its location /d inherits 30s");

    is_int(s0->client_max_body_size, 5 * 1024 * 1024,
           "server 1 inherits client_max_body_size 5m");
    is_int(a->client_max_body_size, 5 * 1024 * 1024, "location /a inherits 5m");
    is_int(b->client_max_body_size, 0, "location /b: 0 (no limit) is kept");
    is_int(bc->client_max_body_size, 0, "location /b/c inherits 0");
    is_int(d->client_max_body_size, 5 * 1024 * 1024, "location /d inherits 5m");

    is_int(a->send_timeout, 7000, "send_timeout 7s reaches /a");
    is_int(bc->send_timeout, 60000, "/b/c sets send_timeout 1m");
    is_int(b->send_timeout, 7000, "a nested location does not change its parent");

    is_int(s0->keepalive_requests, 1000, "keepalive_requests default in server 1");
    is_int(s1->keepalive_requests, 50, "server 2 sets keepalive_requests 50");
    is_int(d->keepalive_requests, 50, "its location inherits 50");
    rx_free_cycle(c);

    /* defaults when nothing is set */
    c = load("events {}\nhttp {\n  server {\n    listen 127.0.0.1:8080;\n"
             "    location / { }\n  }\n}\n", NULL);
    if (!ok(c != NULL, "a config without values loads")) {
        return;
    }
    s0 = server_clcf(c, 0);
    a = location(s0, "/");
    if (ok(s0 && a, "its server and location found")) {
        is_int(s0->client_max_body_size, 1048576, "client_max_body_size: 1m");
        is_int(a->client_max_body_size, 1048576, "client_max_body_size in /: 1m");
        is_int(a->keepalive_timeout, 75000, "keepalive_timeout: 75s");
        is_int(a->keepalive_requests, 1000, "keepalive_requests: 1000");
        is_int(a->send_timeout, 60000, "send_timeout: 60s");
        is_int(a->server_tokens, 1, "server_tokens: on");
    }
    is_int(rx_event_get_conf(c)->connections, 512, "worker_connections: 512");
    is_int(core_conf(c)->worker_processes, 1, "worker_processes: 1");
    is_int(core_conf(c)->daemon, 1, "daemon: on");
    rx_free_cycle(c);

    /* values set with the case-insensitive keywords, and the units */
    c = load("events { worker_connections 100; }\ndaemon OFF;\n"
             "http {\n  server_tokens BUILD;\n  keepalive_timeout 1m 30s;\n"
             "  send_timeout 1500ms;\n  client_max_body_size 2g;\n"
             "  server { listen 127.0.0.1:8080; }\n}\n", NULL);
    if (!ok(c != NULL, "a config with keywords and units loads")) {
        diag("log: %s", log_text());
        return;
    }
    s0 = server_clcf(c, 0);
    is_int(rx_event_get_conf(c)->connections, 100, "worker_connections 100");
    is_int(core_conf(c)->daemon, 0, "daemon OFF");
    is_int(s0->server_tokens, 2, "server_tokens BUILD");
    is_int(s0->keepalive_timeout, 60000, "keepalive_timeout 1m ...");
    is_int(s0->keepalive_header, 30000, "... 30s: the header timeout");
    is_int(s0->send_timeout, 1500, "send_timeout 1500ms");
    is_int(s0->client_max_body_size, 2147483648LL, "client_max_body_size 2g");
    rx_free_cycle(c);

    /* nginx: "A value without a suffix means seconds" (keepalive_timeout 65
     * is in nginx's own default nginx.conf) */
    c = load("events {}\nhttp {\n  keepalive_timeout 65;\n  send_timeout 30;\n"
             "  server { listen 127.0.0.1:8080; }\n}\n", NULL);
    if (ok(c != NULL, "bare-number times load")) {
        s0 = server_clcf(c, 0);
        is_int(s0->keepalive_timeout, 65000, "keepalive_timeout 65 is 65 seconds");
        is_int(s0->send_timeout, 30000, "send_timeout 30 is 30 seconds");
    }
    rx_free_cycle(c);
}

/* ======================================================================
 * Value parsers
 * ====================================================================== */

typedef struct {
    const char *in;
    int64_t     want;
} num_case_t;

static const num_case_t size_cases[] = {
    { "0", 0 }, { "512", 512 }, { "16k", 16384 }, { "16K", 16384 },
    { "1m", 1048576 }, { "1M", 1048576 }, { "2g", 2147483648LL },
    { "2G", 2147483648LL }, { "0k", 0 }, { "007", 7 },
    { "8589934591g", 9223372035781033984LL },       /* (2^33 - 1) GB */
    { "9223372036854775807", INT64_MAX },
    { "", -1 }, { "k", -1 }, { "m", -1 }, { "1x", -1 }, { "1kb", -1 },
    { "1 k", -1 }, { " 1", -1 }, { "1 ", -1 }, { "-1", -1 }, { "+1", -1 },
    { "1.5m", -1 }, { "1t", -1 }, { "1kk", -1 }, { "0x10", -1 },
    { "99999999999999999999g", -1 }, { "99999999999999999999", -1 },
    { "8589934592g", -1 }, { "9007199254740992k", -1 },
    { "9223372036854775808", -1 },
};

static const num_case_t atoi_cases[] = {
    { "0", 0 }, { "1", 1 }, { "007", 7 }, { "123456789", 123456789 },
    { "9223372036854775807", INT64_MAX },
    { "", -1 }, { "a", -1 }, { "12a", -1 }, { "a12", -1 }, { "-1", -1 },
    { "+1", -1 }, { " 1", -1 }, { "1 ", -1 }, { "1.0", -1 },
    { "9223372036854775808", -1 }, { "99999999999999999999", -1 },
};

/* in milliseconds (sec false) and in seconds (sec true); -1: invalid */
typedef struct {
    const char *in;
    int64_t     ms;
    int64_t     sec;
} time_case_t;

static const time_case_t time_cases[] = {
    { "500ms", 500, -1 },              /* nginx: "ms" is refused in seconds */
    { "1500ms", 1500, -1 },
    { "0ms", 0, -1 },
    { "60s", 60000, 60 },
    { "5m", 300000, 300 },
    { "1h", 3600000, 3600 },
    { "1d", 86400000, 86400 },
    { "1w", 604800000, 604800 },
    { "1M", 2592000000LL, 2592000 },
    { "1y", 31536000000LL, 31536000 },
    { "1h 30m", 5400000, 5400 },
    { "1h30m", 5400000, 5400 },
    { "1h  30m", 5400000, 5400 },
    { "1y 1M 1w 1d 1h 1m 1s", 34822861000LL, 34822861 },
    { "1d2h3m4s5ms", 93784005, -1 },
    { "1s 500ms", 1500, -1 },
    { "90m", 5400000, 5400 },
    { "0s", 0, 0 },
    { "0", 0, 0 },
    /* a bare number is seconds in both modes, as in nginx */
    { "60", 60000, 60 },
    { "1", 1000, 1 },
    { "1h 30", 3630000, 3630 },
    { "1m 2", 62000, 62 },
    /* invalid */
    { "30m 1h", -1, -1 },              /* units largest first */
    { "1s 1m", -1, -1 },
    { "1h 1h", -1, -1 },               /* each unit once */
    { "1ms 1ms", -1, -1 },
    { "1x", -1, -1 },
    { "1S", -1, -1 },
    { "1H", -1, -1 },
    { "", -1, -1 },
    { " ", -1, -1 },
    { "s", -1, -1 },
    { "ms", -1, -1 },
    { "h1", -1, -1 },
    { "-1s", -1, -1 },
    { "1.5s", -1, -1 },
    { "99999999999999999999", -1, -1 },
    { "99999999999999999999ms", -1, -1 },
    { "9999999999999999y", -1, -1 },
    { "300000000y", -1, -1 },
    { "9223372036854775807s", -1, -1 },
};

static void
test_parsers(void)
{
    rx_uint_t i;
    rx_str_t  s;

    for (i = 0; i < rx_nelems(size_cases); i++) {
        const num_case_t *c = &size_cases[i];
        int64_t           want = c->want > SSIZE_MAX ? -1 : c->want;

        s.data = (char *) c->in;
        s.len = strlen(c->in);
        is_int(rx_parse_size(&s), want, "rx_parse_size('%s') = %" PRId64,
               c->in, want);
    }
    for (i = 0; i < rx_nelems(size_cases); i++) {
        const num_case_t *c = &size_cases[i];

        s.data = (char *) c->in;
        s.len = strlen(c->in);
        is_int(rx_parse_offset(&s), c->want, "rx_parse_offset('%s') = %" PRId64,
               c->in, c->want);
    }
    for (i = 0; i < rx_nelems(atoi_cases); i++) {
        const num_case_t *c = &atoi_cases[i];

        is_int(rx_atoi(c->in, strlen(c->in)), c->want, "rx_atoi('%s') = %" PRId64,
               c->in, c->want);
    }
    is_int(rx_atoi("12345", 3), 123, "rx_atoi reads only n bytes");
    is_int(rx_atoi("9", 0), -1, "rx_atoi of 0 bytes");

    for (i = 0; i < rx_nelems(time_cases); i++) {
        const time_case_t *c = &time_cases[i];

        s.data = (char *) c->in;
        s.len = strlen(c->in);
        is_int(rx_parse_time(&s, false), c->ms,
               "rx_parse_time('%s', ms) = %" PRId64, c->in, c->ms);
        is_int(rx_parse_time(&s, true), c->sec,
               "rx_parse_time('%s', sec) = %" PRId64, c->in, c->sec);
    }
}

int
main(void)
{
    if (!fixture_init("test_conf", "conf")) {
        return 0;
    }

    test_tokenizer();
    test_parsers();
    test_errors();
    test_setter_errors();
    test_include();
    test_param();
    test_merge();

    fixture_done();
    return done();
}
