/*
 * proctitle.h: process titles shown by ps.
 */
#ifndef RX_PROCTITLE_H
#define RX_PROCTITLE_H

/* Must run before anything reads environ; copies the environment. */
rx_int_t rx_init_setproctitle(int argc, char **argv);
void rx_setproctitle(const char *title);
/* unsetenv() that frees the copied string (no leak after the copy). */
void rx_env_unset(const char *name);
/* The environment as moved out of argv's way (see proctitle.c). */
extern char **rx_moved_environ;

#endif /* RX_PROCTITLE_H */
