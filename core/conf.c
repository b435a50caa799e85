/*
 * conf.c: nginx's configuration grammar: the tokenizer, the block parser,
 * the dispatcher that checks each directive against the module tables, and
 * `include`. Setters live in conf_setters.c.
 */
#include <glob.h>
#include "core.h"
#include "cycle.h"

#define PARSE_FILE   0
#define PARSE_BLOCK  1
#define PARSE_PARAM  2

static const char *conf_handler(rx_conf_t *cf, rx_int_t last);
static const char *parse_buffer(rx_conf_t *cf, int type);

void
rx_conf_log_error(unsigned level, rx_conf_t *cf, int err, const char *fmt, ...)
{
    char    msg[RX_MAX_ERROR_STR];
    size_t  n;
    va_list args;

    va_start(args, fmt);
    n = (size_t) vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);
    if (n >= sizeof(msg)) {
        n = sizeof(msg) - 1;
    }
    if (err) {
        n += (size_t) snprintf(msg + n, sizeof(msg) - n, " (%d: %s)", err,
                               strerror(err));
        if (n >= sizeof(msg)) n = sizeof(msg) - 1;
    }
    if (cf->conf_file == NULL) {
        rx_log_error(level, cf->log, 0, "%s", msg);
    } else if (cf->conf_file->name.len == 0) {
        rx_log_error(level, cf->log, 0, "%s in command line", msg);
    } else {
        rx_log_error(level, cf->log, 0, "%s in %s:%lu", msg,
                     cf->conf_file->name.data,
                     (unsigned long) cf->conf_file->line);
    }
}

/* Copies a word, turning the escapes nginx knows into their characters. */
static rx_str_t *
push_word(rx_conf_t *cf, const char *start, const char *end)
{
    rx_str_t *w = rx_array_push(cf->args);
    char     *dst;

    if (w == NULL) {
        return NULL;
    }
    dst = rx_pnalloc(cf->pool, (size_t) (end - start) + 1);
    if (dst == NULL) {
        return NULL;
    }
    w->data = dst;
    while (start < end) {
        if (*start == '\\' && start + 1 < end) {
            switch (start[1]) {
            case '"': case '\'': case '\\':
                *dst++ = start[1]; start += 2; continue;
            case 't': *dst++ = '\t'; start += 2; continue;
            case 'r': *dst++ = '\r'; start += 2; continue;
            case 'n': *dst++ = '\n'; start += 2; continue;
            }
        }
        *dst++ = *start++;
    }
    *dst = '\0';
    w->len = (size_t) (dst - w->data);
    return w;
}

static bool
is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/*
 * The tokenizer's state between two characters. A word starts after white
 * space (last_space), may be quoted, and a closing quote must be followed
 * by white space, ';' or '{' (need_space), as in nginx.
 */
typedef struct {
    const char  *start;         /* the word being read */
    bool         last_space;    /* between words */
    bool         need_space;    /* a quoted word just ended */
    bool         comment;       /* up to the end of the line */
    bool         quoted;        /* the next character is escaped */
    bool         s_quoted;      /* inside '...' */
    bool         d_quoted;      /* inside "..." */
    bool         variable;      /* after '$': "${" is not a block */
} token_state_t;

/* A step's answers besides a token result: the character did not end the
 * token, read on (TOKEN_NEXT); the character starts a word (TOKEN_WORD). */
#define TOKEN_NEXT  (-2)
#define TOKEN_WORD  (-3)

/* After a closing quote: only white space, ';', '{' or `)` may follow.
 * TOKEN_NEXT, the token's end, an error, or TOKEN_WORD for the ')'. */
static rx_int_t
token_after_quote(rx_conf_t *cf, token_state_t *st, char ch)
{
    if (is_space(ch)) {
        st->last_space = true;
        st->need_space = false;
        return TOKEN_NEXT;
    }
    if (ch == ';') {
        return RX_CONF_DIRECTIVE;
    }
    if (ch == '{') {
        return RX_CONF_BLOCK_START;
    }
    if (ch != ')') {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unexpected \"%c\"", ch);
        return RX_CONF_TOKEN_ERROR;
    }
    /* `if ($a = "b")`: the ')' after a quoted string is a word of
     * its own, as in nginx, for the `if` condition parser */
    st->last_space = true;
    st->need_space = false;
    return TOKEN_WORD;
}

/* Between words: white space, a comment, the end of a directive or a
 * block, or the first character of a word (maybe an opening quote). */
static rx_int_t
token_between_words(rx_conf_t *cf, token_state_t *st, char ch)
{
    st->start = cf->conf_file->pos - 1;
    if (is_space(ch)) {
        return TOKEN_NEXT;
    }
    switch (ch) {
    case ';':
    case '{':
        if (cf->args->nelts == 0) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unexpected \"%c\"", ch);
            return RX_CONF_TOKEN_ERROR;
        }
        return ch == '{' ? RX_CONF_BLOCK_START : RX_CONF_DIRECTIVE;
    case '}':
        if (cf->args->nelts != 0) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unexpected \"}\"");
            return RX_CONF_TOKEN_ERROR;
        }
        return RX_CONF_BLOCK_DONE;
    case '#':
        st->comment = true;
        return TOKEN_NEXT;
    case '\\':
        st->quoted = true;
        break;
    case '"':
        st->start++;
        st->d_quoted = true;
        break;
    case '\'':
        st->start++;
        st->s_quoted = true;
        break;
    case '$':
        st->variable = true;
        break;
    default:
        break;
    }
    st->last_space = false;
    return TOKEN_NEXT;
}

/* Inside a word: an escape, a variable, or the character that ends it
 * (the closing quote, white space, ';' or '{'), which pushes the word. */
static rx_int_t
token_in_word(rx_conf_t *cf, token_state_t *st, char ch)
{
    bool found = false;

    if (ch == '{' && st->variable) {
        return TOKEN_NEXT;          /* "${name}" */
    }
    st->variable = false;
    if (ch == '\\') {
        st->quoted = true;
        return TOKEN_NEXT;
    }
    if (ch == '$') {
        st->variable = true;
        return TOKEN_NEXT;
    }
    if (st->d_quoted) {
        if (ch == '"') {
            st->d_quoted = false;
            st->need_space = true;
            found = true;
        }
    } else if (st->s_quoted) {
        if (ch == '\'') {
            st->s_quoted = false;
            st->need_space = true;
            found = true;
        }
    } else if (is_space(ch) || ch == ';' || ch == '{') {
        st->last_space = true;
        found = true;
    }
    if (!found) {
        return TOKEN_NEXT;
    }
    if (cf->args->nelts >= 65536) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "too many arguments");
        return RX_CONF_TOKEN_ERROR;
    }
    if (push_word(cf, st->start, cf->conf_file->pos - 1) == NULL) {
        return RX_CONF_TOKEN_ERROR;
    }
    if (ch == ';') {
        return RX_CONF_DIRECTIVE;
    }
    if (ch == '{') {
        return RX_CONF_BLOCK_START;
    }
    return TOKEN_NEXT;
}

rx_int_t
rx_conf_read_token(rx_conf_t *cf)
{
    rx_conf_file_t *f = cf->conf_file;
    token_state_t   st = { .start = f->pos, .last_space = true };
    rx_int_t        rc;
    char            ch;

    cf->args->nelts = 0;

    for ( ;; ) {
        if (f->pos >= f->end) {
            if (cf->args->nelts > 0 || !st.last_space) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                    "unexpected end of file, expecting \";\" or \"}\"");
                return RX_CONF_TOKEN_ERROR;
            }
            return RX_CONF_FILE_DONE;
        }
        ch = *f->pos++;
        if (ch == '\n') {
            f->line++;
            st.comment = false;     /* and the newline goes on as white space */
        }
        if (st.comment) {
            continue;
        }
        if (st.quoted) {
            st.quoted = false;
            continue;
        }
        if (st.need_space) {
            rc = token_after_quote(cf, &st, ch);
            if (rc == TOKEN_NEXT) {
                continue;
            }
            if (rc != TOKEN_WORD) {
                return rc;
            }
        }
        rc = st.last_space ? token_between_words(cf, &st, ch)
                           : token_in_word(cf, &st, ch);
        if (rc != TOKEN_NEXT) {
            return rc;
        }
    }
}

/* Reads a whole file into the cycle pool; logs open()/read() failures. */
static rx_int_t
read_file(rx_conf_t *cf, const char *path, rx_conf_file_t *f)
{
    struct stat st;
    int         fd;
    ssize_t     n;
    size_t      got = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "open() \"%s\" failed", path);
        return RX_ERROR;
    }
    if (fstat(fd, &st) == -1) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "fstat() \"%s\" failed", path);
        goto failed;
    }
    if (!S_ISREG(st.st_mode)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" is not a regular file",
                          path);
        goto failed;
    }
    f->start = rx_pnalloc(cf->pool, (size_t) st.st_size + 1);
    if (f->start == NULL) {
        goto failed;
    }
    while (got < (size_t) st.st_size) {
        n = read(fd, f->start + got, (size_t) st.st_size - got);
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n == -1) {
            rx_conf_log_error(RX_LOG_EMERG, cf, errno, "read() \"%s\" failed",
                              path);
            goto failed;
        }
        if (n == 0) {
            break;
        }
        got += (size_t) n;
    }
    close(fd);
    f->start[got] = '\0';
    f->pos = f->start;
    f->end = f->start + got;
    f->line = 1;
    f->name.len = strlen(path);
    f->name.data = rx_pstrdup_c(cf->pool, path, f->name.len);
    return f->name.data ? RX_OK : RX_ERROR;

failed:
    close(fd);
    return RX_ERROR;
}

static void
remember_for_dump(rx_conf_t *cf, rx_conf_file_t *f)
{
    rx_conf_dump_t *d;

    if (!cf->dump) {
        return;
    }
    d = rx_array_push(&cf->cycle->config_dump);
    if (d) {
        d->name = f->name;
        d->content.data = f->start;
        d->content.len = (size_t) (f->end - f->start);
    }
}

const char *
rx_conf_parse(rx_conf_t *cf, const rx_str_t *filename)
{
    rx_conf_file_t  file, *prev = NULL;
    const char     *rv;

    if (filename == NULL) {
        return parse_buffer(cf, PARSE_BLOCK);
    }
    prev = cf->conf_file;
    {
        /* a file that includes itself, directly or not, would recurse
         * until the stack ends: nginx stops at the open-file limit */
        rx_conf_file_t *f;
        rx_uint_t       depth = 0;

        for (f = prev; f; f = f->parent, depth++) {
            if (f->name.len == filename->len
                && memcmp(f->name.data, filename->data, filename->len) == 0) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" is included "
                    "while it is being read (an include loop)", filename->data);
                return RX_CONF_ERROR;
            }
        }
        if (depth >= 64) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "includes nested more than "
                              "64 deep");
            return RX_CONF_ERROR;
        }
    }
    if (read_file(cf, filename->data, &file) != RX_OK) {
        return RX_CONF_ERROR;
    }
    file.parent = prev;
    remember_for_dump(cf, &file);
    cf->conf_file = &file;
    rv = parse_buffer(cf, PARSE_FILE);
    cf->conf_file = prev;
    return rv;
}

const char *
rx_conf_parse_param(rx_conf_t *cf, const rx_str_t *param)
{
    rx_conf_file_t  file, *prev = cf->conf_file;
    const char     *rv;

    memset(&file, 0, sizeof(file));
    file.parent = prev;
    file.start = rx_pstrdup(cf->pool, param);
    if (file.start == NULL) {
        return RX_CONF_ERROR;
    }
    file.pos = file.start;
    file.end = file.start + param->len;
    file.line = 1;
    cf->conf_file = &file;
    rv = parse_buffer(cf, PARSE_PARAM);
    cf->conf_file = prev;
    return rv;
}

static const char *
parse_buffer(rx_conf_t *cf, int type)
{
    rx_int_t    rc;
    const char *rv;

    for ( ;; ) {
        rc = rx_conf_read_token(cf);
        if (rc == RX_CONF_TOKEN_ERROR) {
            return RX_CONF_ERROR;
        }
        if (rc == RX_CONF_BLOCK_DONE) {
            if (type != PARSE_BLOCK) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unexpected \"}\"");
                return RX_CONF_ERROR;
            }
            return RX_CONF_OK;
        }
        if (rc == RX_CONF_FILE_DONE) {
            if (type == PARSE_BLOCK) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                                  "unexpected end of file, expecting \"}\"");
                return RX_CONF_ERROR;
            }
            return RX_CONF_OK;
        }
        if (cf->handler) {
            /* data blocks (types, map): the handler gets every line */
            if (rc == RX_CONF_BLOCK_START) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unexpected \"{\"");
                return RX_CONF_ERROR;
            }
            rv = cf->handler(cf, NULL, cf->handler_conf);
            if (rv == RX_CONF_OK) {
                continue;
            }
            if (rv != RX_CONF_ERROR) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "%s", rv);
            }
            return RX_CONF_ERROR;
        }
        if (type == PARSE_PARAM && rc == RX_CONF_BLOCK_START) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "block directives are not "
                              "supported in -g option");
            return RX_CONF_ERROR;
        }
        rv = conf_handler(cf, rc);
        if (rv != RX_CONF_OK) {
            return RX_CONF_ERROR;
        }
    }
}

static bool
arity_ok(const rx_command_t *cmd, rx_uint_t nargs)
{
    static const uint32_t takes[] = {
        RX_CONF_NOARGS, RX_CONF_TAKE1, RX_CONF_TAKE2, RX_CONF_TAKE3,
        RX_CONF_TAKE4, RX_CONF_TAKE5, RX_CONF_TAKE6, RX_CONF_TAKE7
    };

    if (cmd->type & RX_CONF_ANY) {
        return true;
    }
    if (cmd->type & RX_CONF_FLAG) {
        return nargs == 1;
    }
    if (cmd->type & RX_CONF_1MORE) {
        return nargs >= 1;
    }
    if (cmd->type & RX_CONF_2MORE) {
        return nargs >= 2;
    }
    return nargs < rx_nelems(takes) && (cmd->type & takes[nargs]);
}

/* Where a command's setter writes: see conf.h, RX_DIRECT_CONF. */
static void *
command_conf(rx_conf_t *cf, const rx_module_t *m, const rx_command_t *cmd)
{
    if (cmd->type & RX_DIRECT_CONF) {
        return ((void **) cf->ctx)[m->index];
    }
    if (cmd->type & RX_MAIN_CONF) {
        return &((void **) cf->ctx)[m->index];
    }
    if (cf->ctx == NULL) {
        return NULL;
    }
    void **confs = *(void ***) ((char *) cf->ctx + cmd->conf);
    return confs ? confs[m->ctx_index] : NULL;
}

static const char *
conf_handler(rx_conf_t *cf, rx_int_t last)
{
    rx_str_t           *name = cf->args->elts;
    const rx_command_t *cmd;
    const char         *rv;
    rx_uint_t           i;
    bool                found = false;

    for (i = 0; i < rx_modules_n; i++) {
        const rx_module_t *m = rx_modules[i];

        for (cmd = m->commands; cmd && cmd->name; cmd++) {
            if (!rx_str_eq(name, cmd->name)) {
                continue;
            }
            found = true;
            if (m->type != cf->module_type
                && (cmd->type & RX_ANY_CONF) != RX_ANY_CONF) {
                continue;
            }
            if (!(cmd->type & cf->cmd_type)) {
                continue;
            }
            if (!(cmd->type & RX_CONF_BLOCK) && last != RX_CONF_DIRECTIVE) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                    "directive \"%s\" is not terminated by \";\"", name->data);
                return RX_CONF_ERROR;
            }
            if ((cmd->type & RX_CONF_BLOCK) && last != RX_CONF_BLOCK_START) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                    "directive \"%s\" has no opening \"{\"", name->data);
                return RX_CONF_ERROR;
            }
            if (!arity_ok(cmd, cf->args->nelts - 1)) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                    "invalid number of arguments in \"%s\" directive",
                    name->data);
                return RX_CONF_ERROR;
            }
            if (cf->cycle && cf->cycle->modules_used) {
                cf->cycle->modules_used[i] = 1;     /* rx_module_active */
            }
            rv = cmd->set(cf, cmd, command_conf(cf, m, cmd));
            if (rv == RX_CONF_OK) {
                return RX_CONF_OK;
            }
            if (rv != RX_CONF_ERROR) {
                rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"%s\" directive %s",
                                  name->data, rv);
            }
            return RX_CONF_ERROR;
        }
    }

    if (found) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                          "\"%s\" directive is not allowed here", name->data);
    } else {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "unknown directive \"%s\"",
                          name->data);
    }
    return RX_CONF_ERROR;
}

rx_int_t
rx_conf_full_name(rx_cycle_t *cycle, rx_str_t *name, bool conf_prefix)
{
    const rx_str_t *prefix = conf_prefix ? &cycle->conf_prefix : &cycle->prefix;
    char           *p;

    if (name->len && name->data[0] == '/') {
        p = rx_pstrdup(cycle->pool, name);
        if (p == NULL) return RX_ERROR;
        name->data = p;
        return RX_OK;
    }
    p = rx_pnalloc(cycle->pool, prefix->len + name->len + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    memcpy(p, prefix->data, prefix->len);
    memcpy(p + prefix->len, name->data, name->len);
    p[prefix->len + name->len] = '\0';
    name->data = p;
    name->len += prefix->len;
    return RX_OK;
}

rx_int_t
rx_conf_add_path(rx_conf_t *cf, const rx_str_t *path, const char *directive)
{
    rx_path_t *p;

    if (rx_cycle_path(cf->cycle, path->data) != NULL) {
        return RX_OK;
    }
    p = rx_array_push(&cf->cycle->paths);
    if (p == NULL) {
        return RX_ERROR;
    }
    p->name = *path;
    p->directive = directive;
    p->reported = 0;
    return RX_OK;
}

const char *
rx_conf_include(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t    *value = cf->args->elts, file = value[1], one;
    glob_t       gl;
    const char  *rv = RX_CONF_OK;
    size_t       i;
    int          rc;

    if (rx_conf_full_name(cf->cycle, &file, true) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (strpbrk(file.data, "*?[") == NULL) {
        return rx_conf_parse(cf, &file);
    }
    rc = glob(file.data, 0, NULL, &gl);
    if (rc == GLOB_NOMATCH) {
        return RX_CONF_OK;              /* as nginx: an empty glob is fine */
    }
    if (rc != 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, errno, "glob() \"%s\" failed",
                          file.data);
        return RX_CONF_ERROR;
    }
    for (i = 0; i < gl.gl_pathc && rv == RX_CONF_OK; i++) {
        one.data = gl.gl_pathv[i];
        one.len = strlen(one.data);
        rv = rx_conf_parse(cf, &one);
    }
    globfree(&gl);
    return rv;
}
