/*
 * fuzz_conf.c: the configuration language (core/conf.c, the setters in
 * core/conf_setters.c and every module's directives) on the input as a
 * config file.
 *
 * 1. The tokenizer: rx_conf_read_token on an in-memory rx_conf_file_t
 *    holding an exact heap copy of the input (no NUL after it), as
 *    t/unit/test_conf.c drives it. Invariants: every call consumes at
 *    least one byte or ends (no loop), pos stays within the buffer, the
 *    line count never exceeds 1 + the newlines read, a directive or a
 *    block start has at least one word, a '}' has none, and every word is
 *    NUL-terminated at its length.
 * 2. The whole parser: the input is written to <tmp>/conf/ringx.conf and
 *    loaded as `ringx -t` does (rx_init_cycle with rx_test_config and
 *    rx_quiet_mode, as t/unit/fixture.h), then the cycle is freed. -t
 *    opens no log and binds no socket. The error log goes to /dev/null at
 *    debug level. <tmp>/conf holds copies of conf/mime.types,
 *    conf/fastcgi_params and conf/fastcgi.conf, so that the default
 *    config's includes resolve. Invariant: only ASan/UBSan's.
 *
 * Known finding that $RX_FUZZ_KNOWN can step over (t/fuzz/README.md):
 *   include-loop   a config that includes itself overflows the stack:
 *                  inputs with "include" then get the tokenizer only
 *
 * <tmp> is made once per process under $RX_FUZZ_TMPDIR (t/fuzz/run sets
 * objs/fuzz/tmp/run.PID) or /tmp, and removed at exit. $RX_FUZZ_CONF_SRC names
 * the directory to copy the include files from (default: conf).
 */
#include "fuzz.h"
#include "cycle.h"

static char        tmpdir[256];
static char        confdir[300];
static char        confpath[320];
static rx_cycle_t  boot;
static rx_pool_t  *boot_pool;

static void
set_str(rx_str_t *s, const char *text)
{
    s->len = strlen(text);
    s->data = rx_pstrdup_c(boot_pool, text, s->len);
}

static void
copy_file(const char *from_dir, const char *name)
{
    char   from[512], to[512], buf[65536];
    int    in, out;
    ssize_t n;

    snprintf(from, sizeof(from), "%s/%s", from_dir, name);
    snprintf(to, sizeof(to), "%s/%s", confdir, name);
    in = open(from, O_RDONLY);
    if (in == -1) {
        return;
    }
    out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out != -1) {
        while ((n = read(in, buf, sizeof(buf))) > 0) {
            if (write(out, buf, (size_t) n) != n) {
                break;
            }
        }
        close(out);
    }
    close(in);
}

static void
remove_tmpdir(void)
{
    char cmd[400];

    if (tmpdir[0]) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0) {
            /* nothing to do about it at exit */
        }
    }
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *base = getenv("RX_FUZZ_TMPDIR");
    const char *src = getenv("RX_FUZZ_CONF_SRC");
    char        prefix[300], cprefix[320];

    (void) argc;
    (void) argv;
    rx_modules_preinit();
    rx_test_config = true;
    rx_quiet_mode = true;
    fuzz_null_log();

    if (base == NULL || base[0] == '\0') {
        base = "/tmp";
    }
    mkdir(base, 0755);
    snprintf(tmpdir, sizeof(tmpdir), "%s/rx_fuzz_conf.XXXXXX", base);
    if (mkdtemp(tmpdir) == NULL) {
        perror("fuzz_conf: mkdtemp");
        abort();
    }
    if (tmpdir[0] != '/') {
        /* the cycle wants absolute paths */
        char cwd[200], rel[256];

        if (getcwd(cwd, sizeof(cwd)) == NULL) {
            abort();
        }
        snprintf(rel, sizeof(rel), "%s", tmpdir);
        snprintf(tmpdir, sizeof(tmpdir), "%s/%s", cwd, rel);
    }
    atexit(remove_tmpdir);
    snprintf(confdir, sizeof(confdir), "%s/conf", tmpdir);
    mkdir(confdir, 0755);
    snprintf(confpath, sizeof(confpath), "%s/ringx.conf", confdir);
    if (src == NULL || src[0] == '\0') {
        src = "conf";
    }
    copy_file(src, "mime.types");
    copy_file(src, "fastcgi_params");
    copy_file(src, "fastcgi.conf");

    boot_pool = rx_pool_create(4096, fuzz_null_log());
    memset(&boot, 0, sizeof(boot));
    boot.log = fuzz_null_log();
    boot.pool = boot_pool;
    snprintf(prefix, sizeof(prefix), "%s/", tmpdir);
    snprintf(cprefix, sizeof(cprefix), "%s/", confdir);
    set_str(&boot.prefix, prefix);
    set_str(&boot.conf_prefix, cprefix);
    set_str(&boot.conf_file, confpath);
    set_str(&boot.error_log, "stderr");
    return 0;
}

static void
tokenize(const uint8_t *data, size_t size)
{
    rx_pool_t      *pool = rx_pool_create(4096, fuzz_null_log());
    rx_conf_t       cf;
    rx_conf_file_t  file;
    char           *copy = fuzz_dup(data, size);
    rx_int_t        rc;
    size_t          calls = 0, newlines = 0, i;
    const char     *before;

    memset(&cf, 0, sizeof(cf));
    memset(&file, 0, sizeof(file));
    cf.args = rx_array_create(pool, 4, sizeof(rx_str_t));
    cf.pool = pool;
    cf.temp_pool = pool;
    cf.log = fuzz_null_log();
    cf.conf_file = &file;
    file.name.data = (char *) "fuzz.conf";
    file.name.len = sizeof("fuzz.conf") - 1;
    file.start = file.pos = copy;
    file.end = copy + size;
    file.line = 1;

    for (i = 0; i < size; i++) {
        newlines += data[i] == '\n';
    }

    for ( ;; ) {
        FUZZ_CHECK(++calls <= size + 2, "the tokenizer loops: %zu calls on "
                   "%zu bytes", calls, size);
        before = file.pos;
        rc = rx_conf_read_token(&cf);
        FUZZ_CHECK(file.pos >= file.start && file.pos <= file.end,
                   "pos %td outside [0, %zu]", file.pos - file.start, size);
        FUZZ_CHECK(file.line >= 1 && file.line <= 1 + newlines,
                   "line %lu with %zu newlines", (unsigned long) file.line,
                   newlines);
        if (rc == RX_CONF_TOKEN_ERROR || rc == RX_CONF_FILE_DONE) {
            FUZZ_CHECK(rc == RX_CONF_TOKEN_ERROR || file.pos == file.end,
                       "FILE_DONE with %td bytes left", file.end - file.pos);
            break;
        }
        FUZZ_CHECK(file.pos > before, "token %ld consumed nothing", (long) rc);
        switch (rc) {
        case RX_CONF_DIRECTIVE:
        case RX_CONF_BLOCK_START: {
            rx_str_t *w = cf.args->elts;

            FUZZ_CHECK(cf.args->nelts >= 1, "%s without a word",
                       rc == RX_CONF_DIRECTIVE ? "';'" : "'{'");
            for (i = 0; i < cf.args->nelts; i++) {
                FUZZ_CHECK(w[i].data != NULL && w[i].data[w[i].len] == '\0',
                           "word %zu not NUL-terminated", i);
                FUZZ_CHECK(w[i].len <= size, "word %zu of %zu bytes from %zu",
                           i, w[i].len, size);
            }
            break;
        }
        case RX_CONF_BLOCK_DONE:
            FUZZ_CHECK(cf.args->nelts == 0, "'}' with %lu words",
                       (unsigned long) cf.args->nelts);
            break;
        default:
            FUZZ_CHECK(0, "read_token returned %ld", (long) rc);
        }
    }
    free(copy);
    rx_pool_destroy(pool);
}

static void
parse(const uint8_t *data, size_t size)
{
    int         fd = open(confpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    rx_cycle_t *c;

    FUZZ_CHECK(fd != -1, "cannot write %s", confpath);
    FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t) size,
               "short write to %s", confpath);
    close(fd);

    boot.conf_param.len = 0;
    boot.conf_param.data = NULL;
    c = rx_init_cycle(&boot);
    if (fuzz_verbose()) {
        fprintf(stderr, "fuzz_conf: the configuration was %s\n",
                c ? "accepted" : "refused");
    }
    rx_free_cycle(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tokenize(data, size);
    /* a config that includes itself recurses until the stack is gone:
     * with that finding stepped over, no include reaches the parser */
    if (fuzz_known("include-loop") && memmem(data, size, "include", 7)) {
        return 0;
    }
    parse(data, size);
    return 0;
}
