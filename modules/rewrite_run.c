/*
 * rewrite_run.c: running a rewrite script for a request (rewrite.h): the
 * steps in order, `if` conditions (jumping past a false block, switching
 * to the block's confs on a true one in a location), regex matches that
 * set $1..$9 and named captures, the new URI and arguments of `rewrite`,
 * redirects, `set` and `return`. Log lines are nginx's: with rewrite_log
 * on, every match and its outcome at notice level.
 */
#include <sys/stat.h>
#include "rewrite.h"
#include "http_variables.h"
#include "http_uri.h"

/* What a step tells the loop to do next (besides a status). */
#define STEP_NEXT   RX_AGAIN     /* the next step */
#define STEP_STOP   RX_DECLINED  /* end the script, go on with the phases */

/* A variable's value, empty when absent (nginx's null value). */
static rx_str_t
var_value(rx_http_request_t *r, rx_uint_t index)
{
    rx_http_variable_value_t *v = rx_http_get_flushed_variable(r, index);
    rx_str_t                  s = { 0, (char *) "" };

    if (v && !v->not_found && v->data) {
        s.len = v->len;
        s.data = v->data;
    }
    return s;
}

/*
 * Matches subject against re (a rewrite or an if regex). On a match the
 * groups become $1..$9 (when re has any: a regex without groups leaves the
 * previous ones, as nginx) and the named groups their variables; a failed
 * match forgets $1..$9. RX_OK, RX_DECLINED or RX_ERROR (logged).
 */
static rx_int_t
match(rx_http_request_t *r, rx_regex_t *re, const rx_http_capture_vars_t *names,
    const rx_str_t *subject, bool log)
{
    const rx_str_t *pattern = rx_regex_pattern(re);
    bool            groups = rx_regex_captures(re) > 0;
    rx_int_t        rc;

    rc = rx_regex_exec(re, subject->data, subject->len,
                       groups ? r->captures : NULL, RX_HTTP_MAX_CAPTURES);
    if (rc == RX_ERROR) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "pcre2_match() failed "
            "on \"%.*s\" using \"%.*s\"", (int) subject->len, subject->data,
            (int) pattern->len, pattern->data);
        return RX_ERROR;
    }
    if (log) {
        rx_http_request_log_error(r, RX_LOG_NOTICE, 0, "\"%.*s\" %s \"%.*s\"",
            (int) pattern->len, pattern->data,
            rc == RX_DECLINED ? "does not match" : "matches",
            (int) subject->len, subject->data);
    }
    if (rc == RX_DECLINED) {
        r->ncaptures = 0;
        return RX_DECLINED;
    }
    if (groups) {
        /* pairs beyond the array were not copied: $10 and up do not exist */
        r->ncaptures = rx_min(rc, RX_HTTP_MAX_CAPTURES);
        r->captures_data = subject->data;
    }
    return rx_http_set_capture_vars(r, names, subject->data) == RX_OK
           ? RX_OK : RX_ERROR;
}

static rx_str_t
capture(const rx_http_request_t *r, rx_uint_t n)
{
    rx_str_t s = { 0, (char *) "" };

    if ((rx_int_t) n < r->ncaptures && r->captures_data
        && r->captures[2 * n] >= 0) {
        s.data = (char *) r->captures_data + r->captures[2 * n];
        s.len = (size_t) (r->captures[2 * n + 1] - r->captures[2 * n]);
    }
    return s;
}

/*
 * Evaluates a replacement into memory from r->pool, with room for extra
 * more bytes and a NUL. With escape, captures are written %-escaped as
 * query-argument text: nginx does so in redirects and in new arguments
 * when the client's URI had %XX or '+', because $1.. hold decoded bytes.
 */
static rx_int_t
build(rx_http_request_t *r, const rx_http_complex_value_t *cv, bool escape,
    size_t extra, rx_str_t *out)
{
    const rx_http_cv_part_t *part;
    rx_str_t                *vals = NULL;
    rx_uint_t                i;
    size_t                   len = cv->value.len;
    char                    *p;

    if (cv->parts) {
        vals = rx_palloc(r->pool, cv->nparts * sizeof(rx_str_t));
        if (vals == NULL) {
            return RX_ERROR;
        }
        len = 0;
        for (i = 0; i < cv->nparts; i++) {
            part = &cv->parts[i];
            switch (part->type) {
            case RX_HTTP_CV_LITERAL:
                vals[i] = part->text;
                break;
            case RX_HTTP_CV_CAPTURE:
                vals[i] = capture(r, part->index);
                break;
            case RX_HTTP_CV_VARIABLE:
                vals[i] = var_value(r, part->index);
                break;
            }
            len += escape && part->type == RX_HTTP_CV_CAPTURE
                   ? rx_http_escape_uri(NULL, vals[i].data, vals[i].len,
                                        RX_ESCAPE_ARGS)
                   : vals[i].len;
        }
    }
    p = rx_pnalloc(r->pool, len + extra + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    out->data = p;
    if (cv->parts == NULL) {
        memcpy(p, cv->value.data, len);
        p += len;
    }
    for (i = 0; cv->parts && i < cv->nparts; i++) {
        if (escape && cv->parts[i].type == RX_HTTP_CV_CAPTURE) {
            p += rx_http_escape_uri(p, vals[i].data, vals[i].len,
                                    RX_ESCAPE_ARGS);
        } else {
            memcpy(p, vals[i].data, vals[i].len);
            p += vals[i].len;
        }
    }
    *p = '\0';
    out->len = (size_t) (p - out->data);
    return RX_OK;
}

static int
hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = (char) (c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * nginx's unescaping of a redirect's URL, in place: before the query,
 * %XX of a printable character above '%' is decoded (so a config's
 * "%7Euser" becomes "~user") and the others (space, controls, 8-bit,
 * '%' itself) stay escaped; a decoded '?' starts the query. Unlike
 * nginx, a malformed escape is kept as written, not dropped.
 */
static size_t
unescape_redirect(char *p, size_t len)
{
    char *d = p, *s = p, *end = p + len;
    int   hi, lo, ch;

    while (s < end && *s != '?') {
        if (*s == '%' && end - s >= 3 && (hi = hex_value(s[1])) >= 0
            && (lo = hex_value(s[2])) >= 0) {
            ch = hi << 4 | lo;
            if (ch > '%' && ch < 0x7f) {
                *d++ = (char) ch;
                s += 3;
                if (ch == '?') {
                    break;
                }
                continue;
            }
            memmove(d, s, 3);
            d += 3;
            s += 3;
            continue;
        }
        *d++ = *s++;
    }
    memmove(d, s, (size_t) (end - s));
    return (size_t) (d - p) + (size_t) (end - s);
}

/* nginx's plus_in_uri: the client's path (not the query) had a '+'. */
static bool
plus_in_uri(const rx_http_request_t *r)
{
    const char *q;
    size_t      n;

    if (r->unparsed_uri.len == 0) {
        return false;
    }
    q = memchr(r->unparsed_uri.data, '?', r->unparsed_uri.len);
    n = q ? (size_t) (q - r->unparsed_uri.data) : r->unparsed_uri.len;
    return memchr(r->unparsed_uri.data, '+', n) != NULL;
}

static rx_int_t
discard_body(rx_http_request_t *r)
{
    return r->body_read ? RX_OK : rx_http_discard_request_body(r);
}

static rx_int_t
redirect(rx_http_request_t *r, const rx_http_rewrite_regex_t *rw, bool escape,
    bool log)
{
    rx_str_t loc;
    size_t   extra = rw->add_args && r->args.len ? r->args.len + 1 : 0;

    if (build(r, &rw->uri, escape, extra, &loc) != RX_OK) {
        return RX_ERROR;
    }
    loc.len = unescape_redirect(loc.data, loc.len);
    if (extra) {
        loc.data[loc.len++] = rw->has_args ? '&' : '?';
        memcpy(loc.data + loc.len, r->args.data, r->args.len);
        loc.len += r->args.len;
    }
    loc.data[loc.len] = '\0';
    if (log) {
        rx_http_request_log_error(r, RX_LOG_NOTICE, 0, "rewritten redirect: "
                                  "\"%s\"", loc.data);
    }
    /* the body is dropped by the special response that answers */
    r->headers_out.location = rx_http_add_header_out(r, "Location", &loc);
    return r->headers_out.location ? (rx_int_t) rw->status : RX_ERROR;
}

/*
 * A rewritten URI goes on to location matching and to root/alias as it
 * is (nginx does not normalise it either), so one that could leave the
 * root is refused: it must start with '/' and hold no ".." segment (a
 * replacement built from $arg_x could otherwise climb out). nginx has no
 * such check.
 */
static bool
safe_uri(const rx_str_t *uri)
{
    const char *p = uri->data, *end = uri->data + uri->len;

    if (uri->len == 0 || *p != '/' || memchr(p, '\0', uri->len)) {
        return false;
    }
    for ( ; p + 2 < end; p++) {
        if (p[0] == '/' && p[1] == '.' && p[2] == '.'
            && (p + 3 == end || p[3] == '/')) {
            return false;
        }
    }
    return true;
}

static rx_int_t
do_rewrite(rx_http_request_t *r, const rx_http_rewrite_regex_t *rw, bool log)
{
    rx_str_t subject = r->uri, uri, args;
    bool     escape;
    size_t   extra;
    rx_int_t rc;

    rc = match(r, rw->re, rw->names, &subject, log);
    if (rc != RX_OK) {
        return rc == RX_DECLINED ? STEP_NEXT : RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    escape = r->quoted_uri || plus_in_uri(r);
    if (rw->flag == RX_REWRITE_FLAG_REDIRECT) {
        return redirect(r, rw, escape, log);
    }
    if (build(r, &rw->uri, false, 0, &uri) != RX_OK) {
        return RX_ERROR;
    }
    if (rw->has_args) {
        extra = rw->add_args && r->args.len ? r->args.len + 1 : 0;
        if (build(r, &rw->args, escape, extra, &args) != RX_OK) {
            return RX_ERROR;
        }
        if (extra) {
            args.data[args.len++] = '&';
            memcpy(args.data + args.len, r->args.data, r->args.len);
            args.len += r->args.len;
            args.data[args.len] = '\0';
        }
        r->args = args;
    } else if (!rw->add_args) {
        r->args.len = 0;
    }
    if (log) {
        rx_http_request_log_error(r, RX_LOG_NOTICE, 0, "rewritten data: "
            "\"%s\", args: \"%.*s\"", uri.data, (int) r->args.len,
            r->args.data ? r->args.data : "");
    }
    if (uri.len == 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "the rewritten URI has a "
                                  "zero length");
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (!safe_uri(&uri)) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "the rewritten URI \"%s\" "
            "does not start with \"/\" or has a \"..\" segment", uri.data);
        return RX_HTTP_BAD_REQUEST;
    }
    /* a rewritten request may enter internal locations (nginx) */
    r->internal = 1;
    r->uri_changed = rw->flag != RX_REWRITE_FLAG_BREAK;
    r->uri_rewritten |= rw->flag == RX_REWRITE_FLAG_BREAK;
    r->uri = uri;
    rx_http_uri_exten(&r->uri, &r->exten);
    return rw->flag == RX_REWRITE_FLAG_NONE ? STEP_NEXT : STEP_STOP;
}

/*
 * -f -d -e -x: a synchronous stat() on the worker. It is the one blocking
 * call on this path: such paths are usually in the dentry and inode
 * caches (nginx checks them the same way, through open_file_cache when
 * configured), and the ring's statx would make the script asynchronous
 * for a rare directive. A relative path is taken from the prefix.
 */
static rx_int_t
file_test(rx_http_request_t *r, const rx_http_rewrite_if_t *cond)
{
    rx_str_t     value;
    struct stat  st;
    char        *path;
    bool         yes;
    int          err;

    if (rx_http_complex_value(r, &cond->value, &value) != RX_OK) {
        return RX_ERROR;
    }
    if (value.len && value.data[0] == '/') {
        path = rx_pstrdup_c(r->pool, value.data, value.len);
    } else {
        path = rx_pnalloc(r->pool, rx_cycle->prefix.len + value.len + 1);
        if (path) {
            memcpy(path, rx_cycle->prefix.data, rx_cycle->prefix.len);
            if (value.len) {
                memcpy(path + rx_cycle->prefix.len, value.data, value.len);
            }
            path[rx_cycle->prefix.len + value.len] = '\0';
        }
    }
    if (path == NULL) {
        return RX_ERROR;
    }
    if (stat(path, &st) == -1) {
        err = errno;
        if (err != ENOENT && err != ENOTDIR && err != ENAMETOOLONG) {
            rx_http_request_log_error(r, RX_LOG_CRIT, err, "stat() \"%s\" "
                                      "failed", path);
        }
        return cond->negative ? RX_OK : RX_DECLINED;
    }
    switch (cond->file_op) {
    case 'f':
        yes = S_ISREG(st.st_mode);
        break;
    case 'd':
        yes = S_ISDIR(st.st_mode);
        break;
    case 'e':
        yes = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode);
        break;
    default:    /* 'x': nginx's test, the owner's execute bit */
        yes = (st.st_mode & S_IXUSR) != 0;
        break;
    }
    return yes != cond->negative ? RX_OK : RX_DECLINED;
}

/* RX_OK when the condition holds, RX_DECLINED when not, RX_ERROR. */
static rx_int_t
test(rx_http_request_t *r, const rx_http_rewrite_if_t *cond, bool log)
{
    rx_str_t v, text;
    rx_int_t rc;
    bool     yes;

    if (cond->type == RX_REWRITE_COND_FILE) {
        return file_test(r, cond);
    }
    v = var_value(r, cond->index);
    switch (cond->type) {
    case RX_REWRITE_COND_VAR:
        yes = v.len && !(v.len == 1 && v.data[0] == '0');
        break;
    case RX_REWRITE_COND_EQ:
        if (rx_http_complex_value(r, &cond->value, &text) != RX_OK) {
            return RX_ERROR;
        }
        yes = v.len == text.len
              && (v.len == 0 || memcmp(v.data, text.data, v.len) == 0);
        break;
    default:
        rc = match(r, cond->re, cond->names, &v, log);
        if (rc == RX_ERROR) {
            return RX_ERROR;
        }
        yes = rc == RX_OK;
        break;
    }
    return yes != cond->negative ? RX_OK : RX_DECLINED;
}

static rx_int_t
do_set(rx_http_request_t *r, const rx_http_rewrite_set_t *set)
{
    rx_str_t value;

    if (rx_http_complex_value(r, &set->value, &value) != RX_OK) {
        return RX_ERROR;
    }
    if (value.data == NULL) {
        value.data = (char *) "";
    }
    return rx_http_set_indexed_variable(r, set->index, &value);
}

static bool
is_redirect(rx_uint_t status)
{
    return status == 301 || status == 302 || status == 303 || status == 307
           || status == 308;
}

static rx_int_t
do_return(rx_http_request_t *r, const rx_http_rewrite_return_t *ret)
{
    rx_str_t text;
    rx_int_t rc;

    /* a status alone goes to the special response, which lets error_page
     * have the body first; what is answered here drops it here */
    if (!ret->has_text) {
        if (ret->status >= 300 || ret->status == RX_HTTP_NO_CONTENT) {
            return (rx_int_t) ret->status;
        }
        if ((rc = discard_body(r)) != RX_OK) {
            return rc;
        }
        rc = rx_http_send_response(r, ret->status, NULL, NULL);
        return rc == RX_OK ? RX_DONE : rc;
    }
    if (rx_http_complex_value(r, &ret->text, &text) != RX_OK) {
        return RX_ERROR;
    }
    if (is_redirect(ret->status)) {
        r->headers_out.location = rx_http_add_header_out(r, "Location", &text);
        if (r->headers_out.location == NULL) {
            return RX_ERROR;
        }
        return (rx_int_t) ret->status;
    }
    if ((rc = discard_body(r)) != RX_OK) {
        return rc;
    }
    rx_http_set_content_type(r);       /* by extension, as nginx */
    rc = rx_http_send_response(r, ret->status, NULL, &text);
    return rc == RX_OK ? RX_DONE : rc;
}

rx_int_t
rx_http_rewrite_run(rx_http_request_t *r, rx_http_rewrite_conf_t *rcf)
{
    const rx_http_rewrite_step_t *steps = rcf->steps->elts, *s;
    rx_uint_t                     i = 0;
    rx_int_t                      rc;
    bool                          log = rcf->log;  /* the level's, as nginx */

    while (i < rcf->steps->nelts) {
        s = &steps[i];
        switch (s->type) {
        case RX_REWRITE_RETURN:
            return do_return(r, &s->u.ret);
        case RX_REWRITE_BREAK:
            r->uri_rewritten |= r->uri_changed;
            r->uri_changed = 0;
            return RX_DECLINED;
        case RX_REWRITE_SET:
            if (do_set(r, &s->u.set) != RX_OK) {
                return RX_HTTP_INTERNAL_SERVER_ERROR;
            }
            i++;
            break;
        case RX_REWRITE_IF:
            rc = test(r, &s->u.cond, log);
            if (rc == RX_ERROR) {
                return RX_HTTP_INTERNAL_SERVER_ERROR;
            }
            if (rc == RX_DECLINED) {
                i = s->u.cond.next;
                break;
            }
            if (s->u.cond.loc_conf) {
                r->loc_conf = s->u.cond.loc_conf;
                rx_http_update_location_config(r);
            }
            i++;
            break;
        case RX_REWRITE_REWRITE:
            rc = do_rewrite(r, &s->u.rewrite, log);
            if (rc != STEP_NEXT) {
                return rc;      /* STEP_STOP is RX_DECLINED, or a status */
            }
            i++;
            break;
        }
    }
    return RX_DECLINED;
}
