/*
 * path_check.c: -t's look at the temporary-file directories (*_temp_path):
 * can the workers' user write each one once the master has made it at
 * start (cycle.c: mkdir 0700 when missing, then chown to `user` when it
 * runs as root)? A warning, not an error: ringx runs without them.
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <pwd.h>
#include "core.h"
#include "cycle.h"

/*
 * Why the calling process, as the workers will be, cannot use p once the
 * master made it: a reason in buf, or NULL when it can. chowned: the
 * master is root and makes the user the directory's owner, so the owner
 * bits of its mode are what counts, and root creates it wherever its
 * parent exists; otherwise the user creates it and needs to write the
 * parent. *missing: a directory on the way does not exist (the master
 * makes only the last one: it will not start).
 */
static const char *
why_not(const char *path, bool chowned, char *buf, size_t size, bool *missing)
{
    char         dir[PATH_MAX];
    char        *slash;
    struct stat  st;
    size_t       len = strlen(path);

    if (len >= sizeof(dir)) {
        return NULL;
    }
    memcpy(dir, path, len + 1);
    /* every directory on the way, the first one that stops the user */
    for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (access(dir, X_OK) == -1) {
            int err = errno;

            if (err == ENOENT) {
                *missing = true;
                snprintf(buf, size, "\"%s\" does not exist", dir);
            } else {
                snprintf(buf, size, "it cannot search \"%s\" (%d: %s)", dir,
                         err, strerror(err));
            }
            return buf;
        }
        *slash = '/';
    }
    if (stat(path, &st) == -1) {
        if (errno != ENOENT) {
            snprintf(buf, size, "stat() failed (%d: %s)", errno, strerror(errno));
            return buf;
        }
        slash = strrchr(dir, '/');
        if (chowned || slash == NULL) {
            return NULL;                 /* the master makes it */
        }
        slash[slash == dir] = '\0';      /* its parent ("/" stays) */
        if (access(dir, W_OK | X_OK) == -1) {
            snprintf(buf, size, "it cannot create it in \"%s\" (%d: %s)", dir,
                     errno, strerror(errno));
            return buf;
        }
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(buf, size, "it is not a directory");
        return buf;
    }
    if (chowned && (st.st_mode & (S_IWUSR | S_IXUSR)) != (S_IWUSR | S_IXUSR)) {
        snprintf(buf, size, "its mode %04o does not let its owner both write "
                 "and search it (the master makes the user its owner)", (unsigned) (st.st_mode & 07777));
        return buf;
    }
    if (!chowned && access(path, W_OK | X_OK) == -1) {
        snprintf(buf, size, "access() failed (%d: %s)", errno, strerror(errno));
        return buf;
    }
    return NULL;
}

static void
check_all(rx_cycle_t *cycle, const char *user, bool chowned)
{
    rx_path_t *p = cycle->paths.elts;
    rx_uint_t  i;
    char       buf[PATH_MAX + 128];

    for (i = 0; i < cycle->paths.nelts; i++) {
        bool        missing = false;
        const char *why = why_not(p[i].name.data, chowned, buf, sizeof(buf),
                                  &missing);

        if (why == NULL) {
            continue;
        }
        if (missing) {
            rx_log_error(RX_LOG_WARN, cycle->log, 0, "%s \"%s\" cannot be "
                "made at start: %s (create it, or choose another directory)",
                p[i].directive, p[i].name.data, why);
            continue;
        }
        rx_log_error(RX_LOG_WARN, cycle->log, 0, "%s \"%s\" is not writable by "
            "user \"%s\": %s; without a temporary file, responses larger than "
            "the buffers wait in memory for slow clients and request bodies "
            "larger than client_body_buffer_size get 500 (give \"%s\" access, "
            "or choose a directory it can write)", p[i].directive,
            p[i].name.data, user, why, user);
    }
}

void
rx_conf_check_paths(rx_cycle_t *cycle)
{
    rx_core_conf_t *ccf = rx_get_conf(cycle->conf_ctx, rx_core_module);
    struct passwd  *pw;
    pid_t           pid;
    int             status;

    if (cycle->paths.nelts == 0) {
        return;
    }
    if (geteuid() != 0 || ccf->user == (uid_t) RX_CONF_UNSET_UINT) {
        /* the workers stay this user */
        pw = getpwuid(geteuid());
        check_all(cycle, pw ? pw->pw_name : "?", false);
        return;
    }
    /* access() as the workers' user is the kernel's own answer (groups,
     * ACLs): a child becomes that user to ask it */
    pid = fork();
    if (pid == -1) {
        rx_log_error(RX_LOG_WARN, cycle->log, errno, "fork() failed: the "
                     "temporary-file directories were not checked");
        return;
    }
    if (pid == 0) {
        if (setgid(ccf->group) == -1
            || initgroups(ccf->username.data, ccf->group) == -1
            || setuid(ccf->user) == -1) {
            rx_log_error(RX_LOG_WARN, cycle->log, errno, "cannot become user "
                "\"%s\": the temporary-file directories were not checked",
                ccf->username.data);
            _exit(1);
        }
        check_all(cycle, ccf->username.data, true);
        _exit(0);
    }
    while (waitpid(pid, &status, 0) == -1 && errno == EINTR) {
        /* the child only checks a few paths */
    }
}
