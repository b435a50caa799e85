/*
 * proctitle.c: process titles ("ringx: master process ...") written over
 * argv, after moving the environment out of the way, as ps(1) reads them.
 */
#include <sys/prctl.h>
#include "core.h"
#include "proctitle.h"

extern char **environ;

static char  *title_start;
static size_t title_size;
/* The moved environment lives as long as the process; keeping it here
 * also tells leak checkers it is not lost when workers replace environ. */
char **rx_moved_environ;

rx_int_t
rx_init_setproctitle(int argc, char **argv)
{
    char  *end;
    size_t n = 0, i;
    char **env;

    if (argc == 0 || argv[0] == NULL) {
        return RX_OK;
    }
    end = argv[0] + strlen(argv[0]) + 1;
    for (i = 1; i < (size_t) argc; i++) {
        if (argv[i] == end) {
            end = argv[i] + strlen(argv[i]) + 1;
        }
    }
    for (n = 0; environ[n]; n++) { }
    env = malloc((n + 1) * sizeof(char *));
    if (env == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < n; i++) {
        if (environ[i] == end) {
            end = environ[i] + strlen(environ[i]) + 1;
        }
        env[i] = strdup(environ[i]);
        if (env[i] == NULL) {
            return RX_ERROR;
        }
    }
    env[n] = NULL;
    environ = env;
    rx_moved_environ = env;
    title_start = argv[0];
    title_size = (size_t) (end - argv[0]);
    return RX_OK;
}

/*
 * Removes NAME from the environment. unsetenv() would only drop the
 * pointer: the string was strdup()ed above, so while environ is still our
 * copy the string is freed here (it has no other reference). Once
 * something else replaced environ, our copy may still hold the string and
 * libc's unsetenv() is right.
 */
void
rx_env_unset(const char *name)
{
    size_t len = strlen(name), i, j;

    if (environ == NULL || environ != rx_moved_environ) {
        unsetenv(name);
        return;
    }
    for (i = j = 0; environ[i]; i++) {
        if (strncmp(environ[i], name, len) == 0 && environ[i][len] == '=') {
            free(environ[i]);
            continue;
        }
        environ[j++] = environ[i];
    }
    environ[j] = NULL;
}

void
rx_setproctitle(const char *title)
{
    if (title_start == NULL) {
        return;
    }
    size_t n = rx_min(strlen(title), title_size - 1);
    memcpy(title_start, title, n);
    memset(title_start + n, '\0', title_size - n);
    prctl(PR_SET_NAME, (unsigned long) (strncmp(title, RINGX_NAME ": ", 7) == 0
          ? title + 7 : title), 0, 0, 0);
}
