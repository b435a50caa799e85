/*
 * conf.h: the configuration language. A tokenizer for nginx's grammar, a
 * dispatcher that checks every directive against the modules' tables
 * (context, arity, block-ness) before calling its setter, generic setters
 * with bounds, and the merge macros used by modules' merge hooks.
 */
#ifndef RX_CONF_H
#define RX_CONF_H

/* Argument counts, OR-able. */
#define RX_CONF_NOARGS   0x00000001
#define RX_CONF_TAKE1    0x00000002
#define RX_CONF_TAKE2    0x00000004
#define RX_CONF_TAKE3    0x00000008
#define RX_CONF_TAKE4    0x00000010
#define RX_CONF_TAKE5    0x00000020
#define RX_CONF_TAKE6    0x00000040
#define RX_CONF_TAKE7    0x00000080
#define RX_CONF_MAX_ARGS 8
#define RX_CONF_TAKE12   (RX_CONF_TAKE1 | RX_CONF_TAKE2)
#define RX_CONF_TAKE13   (RX_CONF_TAKE1 | RX_CONF_TAKE3)
#define RX_CONF_TAKE23   (RX_CONF_TAKE2 | RX_CONF_TAKE3)
#define RX_CONF_TAKE123  (RX_CONF_TAKE1 | RX_CONF_TAKE2 | RX_CONF_TAKE3)
#define RX_CONF_TAKE1234 (RX_CONF_TAKE123 | RX_CONF_TAKE4)
#define RX_CONF_ARGS_MASK 0x000000ff

#define RX_CONF_BLOCK    0x00000100   /* directive opens a { } block */
#define RX_CONF_FLAG     0x00000200   /* exactly one argument: on|off */
#define RX_CONF_ANY      0x00000400   /* any number of arguments */
#define RX_CONF_1MORE    0x00000800
#define RX_CONF_2MORE    0x00001000

/* Where the setter's conf pointer comes from (core modules). */
#define RX_DIRECT_CONF   0x00010000   /* the module's main conf itself */

/* Contexts a directive is allowed in. */
#define RX_MAIN_CONF      0x01000000
#define RX_EVENT_CONF     0x02000000
#define RX_HTTP_MAIN_CONF 0x04000000
#define RX_HTTP_SRV_CONF  0x08000000
#define RX_HTTP_LOC_CONF  0x10000000
#define RX_HTTP_UPS_CONF  0x20000000
#define RX_HTTP_SIF_CONF  0x40000000
#define RX_HTTP_LIF_CONF  0x80000000
#define RX_HTTP_LMT_CONF  0x00800000   /* inside limit_except { } */
#define RX_ANY_CONF       0xff000000

/* Setter results: NULL is success, RX_CONF_ERROR means "already logged",
 * any other string is appended to the directive name, as in
 * `"worker_processes" directive is duplicate`. */
#define RX_CONF_OK     NULL
#define RX_CONF_ERROR  ((const char *) -1)

/* Token results of rx_conf_read_token. */
#define RX_CONF_DIRECTIVE    0    /* args end with ';' */
#define RX_CONF_BLOCK_START  1    /* args end with '{' */
#define RX_CONF_BLOCK_DONE   2    /* '}' */
#define RX_CONF_FILE_DONE    3
#define RX_CONF_TOKEN_ERROR  (-1)

#define RX_CONF_UNSET       -1
#define RX_CONF_UNSET_UINT  ((rx_uint_t) -1)
#define RX_CONF_UNSET_PTR   ((void *) -1)
#define RX_CONF_UNSET_SIZE  ((size_t) -1)
#define RX_CONF_UNSET_MSEC  ((rx_msec_t) -1)

typedef const char *(*rx_conf_set_pt)(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

struct rx_command_s {
    const char      *name;
    uint32_t         type;    /* contexts | arity | RX_CONF_BLOCK ... */
    rx_conf_set_pt   set;
    size_t           conf;    /* which conf of a context (HTTP: main/srv/loc) */
    size_t           offset;  /* field within that conf, for generic setters */
    const void      *post;    /* bounds, enum table or handler data */
};

#define rx_null_command  { NULL, 0, NULL, 0, 0, NULL }

/* One file being parsed: held in memory whole (configs are small). */
typedef struct rx_conf_file_s rx_conf_file_t;
struct rx_conf_file_s {
    rx_str_t         name;      /* NUL-terminated path as given/resolved */
    char            *start;
    char            *pos;
    char            *end;
    rx_uint_t        line;
    rx_conf_file_t  *parent;    /* the file that includes this one */
};

/* A custom handler replaces directive dispatch inside blocks whose content
 * is data, not directives (types { }, map { }). */
typedef const char *(*rx_conf_handler_pt)(rx_conf_t *cf, void *dummy,
    void *conf);

struct rx_conf_s {
    rx_array_t         *args;         /* rx_str_t of the current directive */
    rx_cycle_t         *cycle;
    rx_pool_t          *pool;         /* lives as long as the cycle */
    rx_pool_t          *temp_pool;    /* freed after parsing */
    rx_conf_file_t     *conf_file;
    rx_log_t           *log;
    void               *ctx;          /* the current block's confs */
    unsigned            module_type;  /* modules whose directives apply */
    uint32_t            cmd_type;     /* context bit of the current block */
    rx_conf_handler_pt  handler;
    void               *handler_conf;
    bool                dump;         /* keep file contents for -T */
};

/* Bounds for numeric setters (post); max 0 means no upper bound. */
typedef struct {
    int64_t  min;
    int64_t  max;
} rx_conf_bounds_t;

/* Table for enum/bitmask setters (post), ended by { NULL, 0 }. */
typedef struct {
    const char *name;
    rx_uint_t   value;
} rx_conf_enum_t;

/* Parses a file (filename non-NULL), the rest of the current block, or the
 * -g parameter string (rx_conf_parse_param). */
const char *rx_conf_parse(rx_conf_t *cf, const rx_str_t *filename);
const char *rx_conf_parse_param(rx_conf_t *cf, const rx_str_t *param);

/* Tokenizer on a file buffer; fills cf->args. Exposed for unit tests. */
rx_int_t rx_conf_read_token(rx_conf_t *cf);

/* "... in FILE:LINE" appended; during -g "in command line". */
void rx_conf_log_error(unsigned level, rx_conf_t *cf, int err,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Resolves name against the prefix (or conf prefix) into a NUL-terminated
 * absolute path allocated from the cycle pool. */
rx_int_t rx_conf_full_name(rx_cycle_t *cycle, rx_str_t *name, bool conf_prefix);
/* A directory the master creates at start (temporary files), owned by the
 * workers' user; path is absolute and NUL-terminated, directive (static
 * or from the cycle pool) names it in messages. Listed once: the first
 * directive stays. */
rx_int_t rx_conf_add_path(rx_conf_t *cf, const rx_str_t *path,
    const char *directive);

/* The include directive: globs relative to the main config's directory. */
const char *rx_conf_include(rx_conf_t *cf, const rx_command_t *cmd, void *conf);

/* Generic setters (practice 2). Each rejects a second occurrence as
 * "is duplicate" and an invalid value with nginx's wording. */
const char *rx_conf_set_flag_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_str_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_str_array_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_num_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_size_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_off_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_msec_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_sec_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_enum_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_bitmask_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
const char *rx_conf_set_path_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf);
/* Accepts the directive, logs once at notice that it has no effect. */
const char *rx_conf_set_ignored(rx_conf_t *cf, const rx_command_t *cmd, void *conf);

/* Field access for generic setters. */
#define rx_conf_field(conf, cmd, type)  ((type *) ((char *) (conf) + (cmd)->offset))

/* Merge macros: a child keeps its own value, else inherits, else default. */
#define rx_conf_init_value(v, def)     do { if ((v) == RX_CONF_UNSET) (v) = (def); } while (0)
#define rx_conf_init_uint(v, def)      do { if ((v) == RX_CONF_UNSET_UINT) (v) = (def); } while (0)
#define rx_conf_init_msec(v, def)      do { if ((v) == RX_CONF_UNSET_MSEC) (v) = (def); } while (0)
#define rx_conf_init_size(v, def)      do { if ((v) == RX_CONF_UNSET_SIZE) (v) = (def); } while (0)
#define rx_conf_merge_value(c, p, def) do { if ((c) == RX_CONF_UNSET) (c) = ((p) == RX_CONF_UNSET) ? (def) : (p); } while (0)
#define rx_conf_merge_uint(c, p, def)  do { if ((c) == RX_CONF_UNSET_UINT) (c) = ((p) == RX_CONF_UNSET_UINT) ? (def) : (p); } while (0)
#define rx_conf_merge_msec(c, p, def)  do { if ((c) == RX_CONF_UNSET_MSEC) (c) = ((p) == RX_CONF_UNSET_MSEC) ? (def) : (p); } while (0)
#define rx_conf_merge_size(c, p, def)  do { if ((c) == RX_CONF_UNSET_SIZE) (c) = ((p) == RX_CONF_UNSET_SIZE) ? (def) : (p); } while (0)
#define rx_conf_merge_ptr(c, p, def)   do { if ((c) == RX_CONF_UNSET_PTR) (c) = ((p) == RX_CONF_UNSET_PTR) ? (def) : (p); } while (0)
#define rx_conf_merge_str(c, p, def)                                          \
    do {                                                                      \
        if ((c).data == NULL) {                                               \
            if ((p).data) { (c) = (p); }                                      \
            else { (c).len = sizeof(def) - 1; (c).data = (char *) (def); }    \
        }                                                                     \
    } while (0)

#endif /* RX_CONF_H */
