/*
 * process.h: the master and worker processes and the signals between them.
 */
#ifndef RX_PROCESS_H
#define RX_PROCESS_H

#define RX_MAX_WORKERS      1024
#define RX_EXIT_FATAL       2    /* a worker that exits so is not respawned */

/* Set by signal handlers in the master; read by its loop. */
extern volatile sig_atomic_t rx_quit, rx_terminate, rx_reconfigure,
    rx_reopen, rx_noaccept, rx_reap, rx_alarm, rx_change_binary;

rx_int_t rx_init_signals(rx_log_t *log);
rx_int_t rx_daemon(rx_log_t *log);
void rx_master_process_cycle(rx_cycle_t *cycle, int argc, char **argv);
void rx_single_process_cycle(rx_cycle_t *cycle);
int rx_signal_by_name(const char *name);

/* The binary upgrade (core/binary.c). */
extern pid_t rx_new_binary;
rx_int_t rx_save_argv(int argc, char *const *argv);
void rx_inherit_sockets(rx_log_t *log);
int rx_inherited_take(const rx_listening_t *ls);
void rx_inherited_close_unused(void);
bool rx_started_by_upgrade(void);
bool rx_listening_shared(void);
/* A new binary whose old master still runs (it ignores USR2, as nginx). */
bool rx_old_master_running(void);
pid_t rx_exec_new_binary(rx_cycle_t *cycle);
void rx_new_binary_exited(rx_cycle_t *cycle, int status);
void rx_delete_own_pidfile(rx_cycle_t *cycle);

/* This worker's number (0 .. worker_processes-1). */
extern rx_uint_t rx_worker_index;

/* Worker set-up after fork: limits, user, affinity, environment. */
rx_int_t rx_worker_init(rx_cycle_t *cycle, rx_uint_t worker, bool drop_user);
/* The worker's event loop (event/worker.c); returns when it should exit. */
rx_int_t rx_worker_loop(rx_cycle_t *cycle, rx_uint_t worker);

#endif /* RX_PROCESS_H */
