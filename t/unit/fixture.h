/*
 * fixture.h: loading a config as `ringx -t` does, for the unit tests in
 * t/unit/ (include "tap.h" first). Each test is one translation unit, so the
 * state and helpers here are static.
 *
 *   fixture_init(name, confsub) preinit the modules, -t and quiet mode, make
 *                        /tmp/rx_<name>.XXXXXX (tmpdir) and the config's
 *                        directory confdir (tmpdir/confsub, or tmpdir when
 *                        confsub is NULL), the error log tmpdir/error.log
 *                        (logpath) and the boot cycle (prefix tmpdir/,
 *                        conf prefix confdir/, conf file confdir/ringx.conf);
 *                        false (after skip_all) when mkdtemp fails
 *   fixture_done()       closes the log, removes tmpdir, frees the boot pool
 *   set_str(s, text)     s = a copy of text in the boot pool
 *   write_conf(rel, text) writes text to confdir/rel (making its directory)
 *   load(text, param)    writes confdir/ringx.conf, empties the log and runs
 *                        rx_init_cycle with -g param (NULL: none); NULL when
 *                        the config is refused (the reason is in the log)
 *   load_http(http)      load("events {}\nhttp {\n<http>\n}\n", NULL)
 *   log_reset()          empties the error log
 *   log_text()           the error log as it is now
 *   log_has(text)        the log holds text (else diags what it holds)
 *   at(rel, line)        "confdir/rel:line", as the log names a place
 */
#ifndef RX_FIXTURE_H
#define RX_FIXTURE_H

#include "core.h"
#include "cycle.h"
#include "tap.h"

#define RX_FIXTURE_FN  static __attribute__((unused))

static char           tmpdir[64];
static char           confdir[96];
static char           logpath[128];
static rx_open_file_t log_file = { -1, rx_null_string };
static rx_log_t       test_log = { .level = RX_LOG_DEBUG, .file = &log_file };
static rx_cycle_t     boot;

RX_FIXTURE_FN void
set_str(rx_str_t *s, const char *text)
{
    s->len = strlen(text);
    s->data = rx_pstrdup_c(boot.pool, text, s->len);
}

RX_FIXTURE_FN void
log_reset(void)
{
    if (log_file.fd != -1) {
        close(log_file.fd);
    }
    log_file.fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
}

RX_FIXTURE_FN const char *
log_text(void)
{
    static char buf[32768];
    ssize_t     n;
    int         fd = open(logpath, O_RDONLY);

    buf[0] = '\0';
    if (fd == -1) {
        return buf;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

RX_FIXTURE_FN bool
log_has(const char *text)
{
    const char *log = log_text();

    if (strstr(log, text) == NULL) {
        diag("log does not have: %s", text);
        diag("log: %s", log);
        return false;
    }
    return true;
}

RX_FIXTURE_FN const char *
at(const char *rel, rx_uint_t line)
{
    static char buf[4][256];
    static int  which;
    char       *b = buf[which++ % 4];

    snprintf(b, sizeof(buf[0]), "%s/%s:%lu", confdir, rel, (unsigned long) line);
    return b;
}

RX_FIXTURE_FN bool
write_conf(const char *rel, const char *text)
{
    char  path[256], dir[256], *slash;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", confdir, rel);
    snprintf(dir, sizeof(dir), "%s", path);
    slash = strrchr(dir, '/');
    *slash = '\0';
    mkdir(dir, 0755);
    f = fopen(path, "w");
    if (f == NULL) {
        diag("cannot write %s", path);
        return false;
    }
    fputs(text, f);
    fclose(f);
    return true;
}

RX_FIXTURE_FN rx_cycle_t *
load(const char *text, const char *param)
{
    if (!write_conf("ringx.conf", text)) {
        return NULL;
    }
    log_reset();
    if (param) {
        set_str(&boot.conf_param, param);
    } else {
        boot.conf_param.len = 0;
        boot.conf_param.data = NULL;
    }
    return rx_init_cycle(&boot);
}

RX_FIXTURE_FN rx_cycle_t *
load_http(const char *http)
{
    static const char  head[] = "events {}\nhttp {\n", tail[] = "\n}\n";
    size_t             len = strlen(http);
    char              *text = malloc(sizeof(head) + len + sizeof(tail));
    rx_cycle_t        *c;

    if (text == NULL) {
        return NULL;
    }
    memcpy(text, head, sizeof(head) - 1);
    memcpy(text + sizeof(head) - 1, http, len);
    memcpy(text + sizeof(head) - 1 + len, tail, sizeof(tail));
    c = load(text, NULL);
    free(text);
    return c;
}

RX_FIXTURE_FN bool
fixture_init(const char *name, const char *confsub)
{
    char prefix[80], cprefix[120], conf[160];

    rx_modules_preinit();
    rx_use_stderr = false;
    rx_test_config = true;
    rx_quiet_mode = true;

    snprintf(tmpdir, sizeof(tmpdir), "/tmp/rx_%s.XXXXXX", name);
    if (mkdtemp(tmpdir) == NULL) {
        skip_all("mkdtemp failed");
        return false;
    }
    if (confsub) {
        snprintf(confdir, sizeof(confdir), "%s/%s", tmpdir, confsub);
        mkdir(confdir, 0755);
    } else {
        snprintf(confdir, sizeof(confdir), "%s", tmpdir);
    }
    snprintf(logpath, sizeof(logpath), "%s/error.log", tmpdir);
    log_reset();

    memset(&boot, 0, sizeof(boot));
    boot.log = &test_log;
    boot.pool = rx_pool_create(4096, &test_log);
    snprintf(prefix, sizeof(prefix), "%s/", tmpdir);
    snprintf(cprefix, sizeof(cprefix), "%s/", confdir);
    snprintf(conf, sizeof(conf), "%s/ringx.conf", confdir);
    set_str(&boot.prefix, prefix);
    set_str(&boot.conf_prefix, cprefix);
    set_str(&boot.conf_file, conf);
    set_str(&boot.error_log, "stderr");
    return true;
}

RX_FIXTURE_FN void
fixture_done(void)
{
    char cmd[128];

    if (log_file.fd != -1) {
        close(log_file.fd);
        log_file.fd = -1;
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) {
        diag("could not remove %s", tmpdir);
    }
    rx_pool_destroy(boot.pool);
}

#endif /* RX_FIXTURE_H */
