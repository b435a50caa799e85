/*
 * ssi.h: what the SSI filter's files share: the streaming parser of
 * "<!--# command param="value" -->" (ssi_parse.c), the per-request state
 * and the commands (ssi_cmd.c), the variables (ssi_var.c), and the filter
 * itself (ssi.c).
 */
#ifndef RX_SSI_H
#define RX_SSI_H

#include "http.h"
#include "filter_types.h"

#define RX_SSI_COMMAND_LEN  32       /* nginx's limits */
#define RX_SSI_PARAM_LEN    32
#define RX_SSI_MAX_PARAMS   16

/* What rx_ssi_parse found. */
typedef enum {
    RX_SSI_MORE = 0,       /* input used up, nothing to report */
    RX_SSI_TEXT,           /* text to output */
    RX_SSI_COMMAND         /* a whole command in the parser's cmd */
} rx_ssi_token_t;

/* The parser's state across buffers: a command cut anywhere (inside
 * "<!--#", a value, "-->") is put together here. */
typedef struct {
    int        state;
    size_t     match;       /* bytes of "<!--#" matched so far */
    char       quote;       /* inside a quoted value: its quote */
    bool       escape;      /* the byte after a backslash */
    char       tail[3];     /* the last bytes of a command: "-->"? */
    char      *cmd;         /* the command's text, up to cap bytes */
    size_t     len;
    size_t     cap;
    bool       overflow;    /* longer than cap: an error when it ends */
} rx_ssi_parser_t;

typedef struct {
    rx_str_t   name;
    rx_str_t   value;
} rx_ssi_param_t;

/* One command, split: its name and parameters (values raw, as written). */
typedef struct {
    rx_str_t         name;
    rx_ssi_param_t   params[RX_SSI_MAX_PARAMS];
    rx_uint_t        nparams;
} rx_ssi_command_t;

typedef struct {
    rx_int_t           enable;           /* ssi */
    rx_int_t           silent_errors;    /* ssi_silent_errors */
    rx_int_t           last_modified;    /* ssi_last_modified */
    size_t             min_file_chunk;   /* ssi_min_file_chunk */
    size_t             value_len;        /* ssi_value_length */
    rx_filter_types_t  types;            /* ssi_types */
} rx_ssi_conf_t;

/* A variable set by the set command or a regex's named capture: the main
 * request's, seen by every include. */
typedef struct {
    rx_str_t   name;        /* lower-cased */
    rx_str_t   value;
} rx_ssi_var_t;

typedef struct {
    rx_str_t     name;
    rx_str_t     text;       /* what block ... endblock held */
} rx_ssi_block_t;

/* One response's state (r->ssi_ctx); vars, blocks and the captures live
 * in the main request's. */
typedef struct {
    rx_ssi_parser_t    parser;
    rx_ssi_conf_t     *conf;
    rx_chain_t        *in;           /* input not parsed yet */
    rx_chain_t       **in_tail;
    rx_chain_t        *free;
    rx_chain_t        *out;          /* made, not passed on yet */
    rx_chain_t       **out_tail;
    rx_str_t           errmsg;       /* config errmsg */
    rx_str_t           timefmt;      /* config timefmt */
    rx_array_t        *vars;         /* rx_ssi_var_t (main's) */
    rx_array_t        *blocks;       /* rx_ssi_block_t (main's) */
    rx_ssi_block_t    *block;        /* being recorded */
    char              *block_text;   /* its text so far (pool, grows) */
    size_t             block_len;
    size_t             block_cap;
    int                captures[RX_HTTP_MAX_CAPTURES * 2];
    rx_int_t           ncaptures;
    rx_str_t           captures_data;
    /* if/elif/else/endif: output is on; chosen: a branch was taken */
    unsigned           output:1;
    unsigned           chosen:1;
    unsigned           conditional:2;    /* 0, 1 in if/elif, 2 in else */
    unsigned           waiting:1;        /* an include runs */
    unsigned           last_seen:1;      /* the input's last buffer came */
    unsigned           last_sent:1;
    /* the include that runs: what its end does */
    rx_ssi_var_t      *set_var;
    rx_ssi_block_t    *stub;
} rx_ssi_ctx_t;

/* ssi_parse.c */
void rx_ssi_parser_init(rx_ssi_parser_t *p, char *buf, size_t cap);
/* Scans from *pos: text to output (in *text: a piece of the input, or of
 * a "<!--" that turned out to be text), a command, or nothing. */
rx_ssi_token_t rx_ssi_parse(rx_ssi_parser_t *p, char **pos, char *end,
    rx_str_t *text);
/* Splits the parser's command. NULL, or the error to log (nginx's words;
 * with "%s" the command name filled in by the caller). */
const char *rx_ssi_split(rx_ssi_parser_t *p, size_t value_len,
    rx_ssi_command_t *cmd);
/* The text of "<!--#" matched and held when the input ended. */
void rx_ssi_parser_held(rx_ssi_parser_t *p, rx_str_t *text);

/* ssi_cmd.c: runs one command. RX_OK, RX_AGAIN (an include runs: the
 * filter waits), RX_DECLINED (an SSI error: errmsg goes out) or
 * RX_ERROR. */
rx_int_t rx_ssi_command(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_ssi_command_t *cmd);
/* Adds bytes to the response (or to the block being recorded). */
rx_int_t rx_ssi_emit(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    const char *data, size_t len);

/* ssi_var.c: $date_local, $date_gmt. */
rx_int_t rx_ssi_add_variables(rx_conf_t *cf);
/* The SSI variable name (any case), or NULL. */
rx_ssi_var_t *rx_ssi_var(rx_ssi_ctx_t *ctx, const rx_str_t *name);
/* Sets (or adds, lower-cased) an SSI variable. RX_OK or RX_ERROR. */
rx_int_t rx_ssi_var_set(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    const rx_str_t *name, const rx_str_t *value);
/* The value of $name: an SSI variable, a capture of the last if's regex
 * ($0..$9), else the request's variable. false: no value. */
bool rx_ssi_get_value(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    const rx_str_t *name, rx_str_t *out);
/* A parameter with its $variables replaced (in place, pool memory);
 * prefix: a relative result gets the URI's directory in front. RX_OK,
 * RX_DECLINED (a bad variable name, logged) or RX_ERROR. */
rx_int_t rx_ssi_evaluate(rx_http_request_t *r, rx_ssi_ctx_t *ctx,
    rx_str_t *text, bool prefix);
/* ssi.c: the include's end goes here (its body is in the output). */
void rx_ssi_include_done(rx_http_request_t *sr, void *data);

extern rx_module_t rx_http_ssi_filter_module;

#endif /* RX_SSI_H */
