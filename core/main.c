/*
 * main.c: the command line (nginx's flags), then hand-off to the cycle and
 * the process model. Holds main(); unit tests link everything but this.
 */
#include "core.h"
#include "cycle.h"
#include "clock.h"
#include "process.h"
#include "proctitle.h"


static struct {
    bool        help, version, configure;
    const char *signal;
    const char *prefix;
    const char *conf_file;
    const char *error_log;
    const char *conf_params;
} opt;

/* ringx's own line, then the one tools parse: certbot's nginx plugin and
 * others read "nginx version: NAME/X.Y.Z" and refuse an unknown NAME or
 * an old X.Y.Z; it names the nginx release ringx follows, and says that
 * this is ringx (as Tengine prints its own line and nginx's). */
static void
show_version(void)
{
    rx_write_stderr(RINGX_NAME " version: " RINGX_VER "\n"
                    "nginx version: nginx/" RINGX_NGINX_COMPAT_VERSION
                    " (compatible; " RINGX_VER ")\n");
}

static void
show_help(void)
{
    rx_write_stderr(
        "Usage: " RINGX_NAME " [-?hvVtTq] [-s signal] [-p prefix]\n"
        "             [-e filename] [-c filename] [-g directives]\n\n"
        "Options:\n"
        "  -?,-h         : this help\n"
        "  -v            : show version and exit\n"
        "  -V            : show version and configure options then exit\n"
        "  -t            : test configuration and exit\n"
        "  -T            : test configuration, dump it and exit\n"
        "  -q            : suppress non-error messages during configuration testing\n"
        "  -s signal     : send signal to a master process: stop, quit, reopen, reload\n"
        "  -p prefix     : set prefix path (default: " RX_PREFIX "/)\n"
        "  -e filename   : set error log file (default: " RX_ERROR_LOG_PATH ")\n"
        "  -c filename   : set configuration file (default: " RX_CONF_PATH ")\n"
        "  -g directives : set global directives out of configuration file\n\n");
}

static void
show_configure(void)
{
    const rx_module_flag_t *f;
    char                    line[4096];
    size_t                  n;

    fprintf(stderr, "built by %s\n", RX_COMPILER);
    fprintf(stderr, "built with %s", rx_build_tls.built_with());
    if (strcmp(rx_build_tls.built_with(), rx_build_tls.running_with()) != 0) {
        fprintf(stderr, " (running with %s)", rx_build_tls.running_with());
    }
    fprintf(stderr, "\n");
#if (RX_HAVE_OPENSSL)
    /* nginx's words for a build whose TLS library has SNI (every one
     * ringx builds with); certbot refuses a build without them */
    fprintf(stderr, "TLS SNI support enabled\n");
#endif
#if (RX_HAVE_LIBDEFLATE)
    /* the gzip filter's whole-body path (t/gzip.t reads this line) */
    fprintf(stderr, "built with libdeflate %s\n",
            RX_LIBDEFLATE_VERSION[0] ? RX_LIBDEFLATE_VERSION : "(version unknown)");
#endif
    n = (size_t) snprintf(line, sizeof(line), "configure arguments:%s%s",
                          RX_CONFIGURE[0] ? " " : "", RX_CONFIGURE);
    for (f = rx_module_flags; f->configure_name && n < sizeof(line); f++) {
        char flag[96];

        snprintf(flag, sizeof(flag), "--with%s-%s", f->compiled ? "" : "out",
                 f->configure_name);
        /* said by the module table unless the configure arguments say it */
        if (f->compiled != f->standard && strstr(RX_CONFIGURE, flag) == NULL) {
            n += (size_t) snprintf(line + n, sizeof(line) - n, " %s", flag);
        }
    }
    fprintf(stderr, "%s\n", line);
}

/* nginx's option syntax: flags may be grouped ("-tq"); a value may follow
 * its letter directly ("-p/x") or as the next argument. */
static int
get_options(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i++) {
        char *p = argv[i];
        const char **target;
        const char *what;

        if (*p++ != '-' || *p == '\0') {
            rx_log_stderr(0, "invalid option: \"%s\"", argv[i]);
            return RX_ERROR;
        }
        while (*p) {
            switch (*p++) {
            case '?': case 'h': opt.version = opt.help = true; break;
            case 'v': opt.version = true; break;
            case 'V': opt.version = opt.configure = true; break;
            case 't': rx_test_config = true; break;
            case 'T': rx_test_config = rx_dump_config = true; break;
            case 'q': rx_quiet_mode = true; break;
            case 'p': target = &opt.prefix; what = "directory name"; goto value;
            case 'c': target = &opt.conf_file; what = "file name"; goto value;
            case 'e': target = &opt.error_log; what = "file name"; goto value;
            case 'g': target = &opt.conf_params; what = "parameter"; goto value;
            case 's': target = &opt.signal; what = "parameter"; goto value;
            default:
                rx_log_stderr(0, "invalid option: \"%c\"", *(p - 1));
                return RX_ERROR;
            }
            continue;

        value:
            if (*p) {
                *target = p;
            } else if (argv[++i]) {
                *target = argv[i];
            } else {
                rx_log_stderr(0, "option \"-%c\" requires %s", *(p - 1), what);
                return RX_ERROR;
            }
            if (target == &opt.signal && rx_signal_by_name(opt.signal) == 0) {
                rx_log_stderr(0, "invalid option: \"-s %s\"", opt.signal);
                return RX_ERROR;
            }
            if (target == &opt.signal) {
                rx_process = RX_PROCESS_SIGNALLER;
            }
            break;
        }
    }
    return RX_OK;
}

/* Joins a directory with a name unless the name is absolute. */
static char *
join_path(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    char  *p;

    if (name[0] == '/') {
        return strdup(name);
    }
    p = malloc(dl + nl + 2);
    if (p) {
        sprintf(p, "%s%s%s", dir, dl && dir[dl - 1] != '/' ? "/" : "", name);
    }
    return p;
}

/* Fills the bootstrap cycle's paths from the options and defaults. */
static rx_int_t
process_options(rx_cycle_t *cycle)
{
    char cwd[PATH_MAX], *prefix, *conf, *slash, *elog;

    if (opt.prefix) {
        if (opt.prefix[0] == '/') {
            prefix = join_path(opt.prefix, "");
        } else {
            if (getcwd(cwd, sizeof(cwd)) == NULL) {
                rx_log_stderr(errno, "[emerg] getcwd() failed");
                return RX_ERROR;
            }
            char *tmp = join_path(cwd, opt.prefix);
            prefix = tmp ? join_path(tmp, "") : NULL;
            free(tmp);
        }
    } else {
        prefix = join_path(RX_PREFIX, "");
    }
    conf = prefix ? join_path(prefix, opt.conf_file ? opt.conf_file : RX_CONF_PATH) : NULL;
    elog = opt.error_log ? strdup(opt.error_log) : strdup(RX_ERROR_LOG_PATH);
    if (prefix == NULL || conf == NULL || elog == NULL) {
        free(prefix); free(conf); free(elog);
        return RX_ERROR;
    }
    cycle->prefix.data = rx_pstrdup_c(cycle->pool, prefix, strlen(prefix));
    cycle->prefix.len = strlen(prefix);
    cycle->conf_file.data = rx_pstrdup_c(cycle->pool, conf, strlen(conf));
    cycle->conf_file.len = strlen(conf);
    slash = strrchr(conf, '/');
    cycle->conf_prefix.len = (size_t) (slash - conf) + 1;
    cycle->conf_prefix.data = rx_pstrdup_c(cycle->pool, conf, cycle->conf_prefix.len);
    cycle->error_log.data = rx_pstrdup_c(cycle->pool, elog, strlen(elog));
    cycle->error_log.len = strlen(elog);
    if (opt.conf_params) {
        cycle->conf_param.len = strlen(opt.conf_params);
        cycle->conf_param.data = rx_pstrdup_c(cycle->pool, opt.conf_params,
                                              cycle->conf_param.len);
    }
    free(prefix);
    free(conf);
    free(elog);
    return cycle->prefix.data && cycle->conf_file.data && cycle->conf_prefix.data
           && cycle->error_log.data ? RX_OK : RX_ERROR;
}

/* The log used before any configuration is read: the -e file (or the
 * compiled-in default) if it opens, else stderr, as nginx does. */
static rx_open_file_t boot_file = { -1, rx_null_string };
static rx_log_t       boot_log = { .level = RX_LOG_NOTICE,
                                   .file = &rx_stderr_file };

static void
open_boot_log(rx_cycle_t *cycle)
{
    rx_str_t name = cycle->error_log;

    if (rx_str_eq(&name, "stderr")) {
        return;
    }
    if (rx_conf_full_name(cycle, &name, false) != RX_OK) {
        return;
    }
    boot_file.fd = open(name.data, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (boot_file.fd == -1) {
        if (!rx_test_config && rx_process != RX_PROCESS_SIGNALLER) {
            rx_log_stderr(errno, "[alert] could not open error log file: "
                          "open() \"%s\" failed", name.data);
        }
        return;
    }
    boot_file.name = name;
    boot_log.file = &boot_file;
}

static void
dump_config(rx_cycle_t *cycle)
{
    rx_conf_dump_t *d = cycle->config_dump.elts;
    rx_uint_t       i;

    for (i = 0; i < cycle->config_dump.nelts; i++) {
        printf("# configuration file %s:\n", d[i].name.data);
        fwrite(d[i].content.data, 1, d[i].content.len, stdout);
        if (d[i].content.len && d[i].content.data[d[i].content.len - 1] != '\n') {
            putchar('\n');
        }
        putchar('\n');
    }
    fflush(stdout);
}

/* The boot cycle: a pool, the paths and -g from the command line, the
 * boot log, and room for process titles. The pool, or NULL (logged). */
static rx_pool_t *
boot_cycle(rx_cycle_t *boot, int argc, char **argv)
{
    rx_pool_t *pool;

    memset(boot, 0, sizeof(*boot));
    boot->log = &boot_log;
    pool = rx_pool_create(4096, &boot_log);
    if (pool == NULL) {
        return NULL;
    }
    boot->pool = pool;
    if (process_options(boot) != RX_OK) {
        rx_pool_destroy(pool);
        return NULL;
    }
    open_boot_log(boot);
    if (rx_init_setproctitle(argc, argv) != RX_OK) {
        rx_pool_destroy(pool);
        return NULL;
    }
    return pool;
}

/* -t and -T: the checks only -t makes, the verdict, -T's dump. The
 * cycle is freed; the exit code. */
static int
test_config(rx_cycle_t *cycle)
{
    rx_conf_check_limits(cycle, !rx_quiet_mode);
    rx_conf_check_paths(cycle);
    if (!rx_quiet_mode) {
        rx_log_stderr(0, "configuration file %s test is successful",
                      cycle->conf_file.data);
    }
    if (rx_dump_config) {
        dump_config(cycle);
    }
    rx_free_cycle(cycle);
    return 0;
}

/*
 * Starts for real: signals, daemon, pid file, the boot log and pool given
 * up, then the master's cycle (or the single process's), which returns
 * only when ringx leaves. 1 when a step failed (it logged why).
 */
static int
run(rx_cycle_t *cycle, rx_pool_t *boot_pool, int argc, char **argv)
{
    rx_core_conf_t *ccf;
    rx_log_t       *flog;

    rx_cycle = cycle;
    ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    rx_conf_check_limits(cycle, false);
    if (rx_init_signals(cycle->log) != RX_OK) {
        return 1;
    }
    /* a new binary started by USR2 stays the old master's child, as
     * nginx's does: it is daemonized already */
    if (ccf->daemon && !rx_started_by_upgrade()
        && rx_daemon(cycle->log) != RX_OK) {
        return 1;
    }
    if (rx_create_pidfile(&ccf->pid, cycle->log) != RX_OK) {
        return 1;
    }
    flog = rx_log_get_file_log(cycle->log);
    if (ccf->daemon && flog && flog->file->fd > STDERR_FILENO) {
        /* a daemon's stray stderr output lands in the error log */
        dup2(flog->file->fd, STDERR_FILENO);
    }
    rx_use_stderr = false;
    if (boot_file.fd != -1) {
        close(boot_file.fd);
        boot_file.fd = -1;
    }
    rx_pool_destroy(boot_pool);
    if (ccf->master) {
        rx_master_process_cycle(cycle, argc, argv);
    } else {
        rx_process = RX_PROCESS_SINGLE;
        rx_single_process_cycle(cycle);
    }
    return 0;
}

int
main(int argc, char **argv)
{
    rx_cycle_t  boot, *cycle;
    rx_pool_t  *pool;
    int         rc;

    rx_time_update();
    if (get_options(argc, argv) != RX_OK) {
        return 1;
    }
    if (opt.version) {
        show_version();
        if (opt.help) show_help();
        if (opt.configure) show_configure();
        if (!rx_test_config) return 0;
    }

    rx_modules_preinit();
    if (rx_save_argv(argc, argv) != RX_OK) {
        return 1;
    }
    pool = boot_cycle(&boot, argc, argv);
    if (pool == NULL) {
        return 1;
    }
    if (!rx_test_config && rx_process != RX_PROCESS_SIGNALLER) {
        rx_inherit_sockets(boot.log);
    }
    cycle = rx_init_cycle(&boot);
    rx_inherited_close_unused();
    if (cycle == NULL) {
        if (rx_test_config) {
            rx_log_stderr(0, "configuration file %s test failed",
                          boot.conf_file.data);
        }
        rc = 1;
        goto done;
    }
    if (rx_test_config) {
        rc = test_config(cycle);
        goto done;
    }
    if (rx_process == RX_PROCESS_SIGNALLER) {
        rc = (int) rx_signal_process(cycle, opt.signal);
        rx_free_cycle(cycle);
        goto done;
    }
    return run(cycle, pool, argc, argv);

done:
    if (boot_file.fd != -1) {
        close(boot_file.fd);
    }
    rx_pool_destroy(pool);
    return rc;
}
