/*
 * rewrite.h: the rewrite module's script, shared by its three files:
 * rewrite.c (the module, its directives and phase handlers), rewrite_if.c
 * (the `if` block and its conditions) and rewrite_run.c (running a script
 * for a request). Private to the module.
 *
 * A script is the list of steps of one server or location, in the order
 * written. An `if` block's steps sit inline in its parent's list, right
 * after the `if` step, which knows where its block ends (next): a false
 * condition jumps there, a true one runs on into the block, as nginx's
 * script codes do.
 */
#ifndef RX_REWRITE_H
#define RX_REWRITE_H

#include "http.h"
#include "regex.h"
#include "http_script.h"
#include "http_captures.h"

typedef enum {
    RX_REWRITE_RETURN = 1,
    RX_REWRITE_REWRITE,
    RX_REWRITE_SET,
    RX_REWRITE_BREAK,
    RX_REWRITE_IF
} rx_http_rewrite_step_type_t;

/* return code [text|URL] */
typedef struct {
    rx_uint_t                status;
    rx_http_complex_value_t  text;       /* body, or URL for redirects */
    bool                     has_text;
} rx_http_rewrite_return_t;

/* rewrite regex replacement [flag] */
typedef enum {
    RX_REWRITE_FLAG_NONE = 0,   /* go on with the script; search again later */
    RX_REWRITE_FLAG_LAST,       /* stop the script; search the location again */
    RX_REWRITE_FLAG_BREAK,      /* stop the script; stay in this location */
    RX_REWRITE_FLAG_REDIRECT    /* answer `status` with Location */
} rx_http_rewrite_flag_t;

typedef struct {
    rx_regex_t              *re;
    rx_http_capture_vars_t  *names;      /* named groups, NULL when none */
    rx_http_complex_value_t  uri;        /* up to the first '?' (all of it
                                            for a redirect) */
    rx_http_complex_value_t  args;       /* after that '?' */
    rx_http_rewrite_flag_t   flag;
    rx_uint_t                status;     /* 301 or 302 for a redirect */
    bool                     has_args;   /* the replacement had a '?' */
    bool                     add_args;   /* keep the request's arguments:
                                            no '?' at the end */
} rx_http_rewrite_regex_t;

/* set $name value */
typedef struct {
    rx_uint_t                index;      /* the variable */
    rx_http_complex_value_t  value;
} rx_http_rewrite_set_t;

/* if (condition) { ... } */
typedef enum {
    RX_REWRITE_COND_VAR = 1,   /* ($v): not empty and not "0" */
    RX_REWRITE_COND_EQ,        /* ($v = text), ($v != text) */
    RX_REWRITE_COND_REGEX,     /* ($v ~ re) ~* !~ !~* */
    RX_REWRITE_COND_FILE       /* (-f path) -d -e -x and their !forms */
} rx_http_rewrite_cond_type_t;

typedef struct {
    rx_http_rewrite_cond_type_t  type;
    rx_uint_t                    index;     /* the variable tested */
    rx_http_complex_value_t      value;     /* = and != text, file path */
    rx_regex_t                  *re;
    rx_http_capture_vars_t      *names;
    char                         file_op;   /* 'f', 'd', 'e' or 'x' */
    bool                         negative;  /* !=, !~, !-f ... */
    void                       **loc_conf;  /* the block's confs; NULL in
                                               server context */
    rx_uint_t                    next;      /* the step after the block */
} rx_http_rewrite_if_t;

typedef struct {
    rx_http_rewrite_step_type_t  type;
    union {
        rx_http_rewrite_return_t  ret;
        rx_http_rewrite_regex_t   rewrite;
        rx_http_rewrite_set_t     set;
        rx_http_rewrite_if_t      cond;
    } u;
} rx_http_rewrite_step_t;

typedef struct {
    /* rx_http_rewrite_step_t, in config order. An if block's conf points
     * at its parent's array while the block is parsed, then to NULL: a
     * level runs only its own script (steps are not inherited). */
    rx_array_t  *steps;
    rx_int_t     log;                          /* rewrite_log */
    rx_int_t     uninitialized_variable_warn;
} rx_http_rewrite_conf_t;

extern rx_module_t rx_http_rewrite_module;

/* A new zeroed step at the end of rcf's script (created on first use). */
rx_http_rewrite_step_t *rx_http_rewrite_add_step(rx_conf_t *cf,
    rx_http_rewrite_conf_t *rcf);

/* The `if` directive (rewrite_if.c). */
const char *rx_http_rewrite_if(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

/*
 * Runs rcf's script for r (rewrite_run.c). Returns RX_DECLINED when the
 * script ran to its end or stopped (break, rewrite last/break; r->uri and
 * r->args may have changed, r->uri_changed says whether the location must
 * be searched again), RX_DONE when `return` sent a response, or a status
 * to finalize with (return code, a redirect, 500).
 */
rx_int_t rx_http_rewrite_run(rx_http_request_t *r, rx_http_rewrite_conf_t *rcf);

#endif /* RX_REWRITE_H */
