/*
 * autoindex.c: directory listings (autoindex, autoindex_format,
 * autoindex_exact_size, autoindex_localtime) in nginx's html, json, jsonp
 * and xml formats, for '/' URIs that the index module did not serve.
 *
 * The directory is read with opendir/readdir and each entry stat'ed with
 * fstatat: synchronous system calls, as io_uring has no getdents. A listing
 * therefore blocks the worker while the directory is read, which on a cold
 * cache means disk reads, exactly as nginx's listing does. The directory
 * is read whole into the request pool (bounded only by the directory's
 * size), sorted, and sent as one buffer with a Content-Length.
 */
#include <dirent.h>
#include <sys/stat.h>
#include "http.h"
#include "http_uri.h"
#include "http_variables.h"
#include "clock.h"

#define AUTOINDEX_NAME_LEN      50     /* html: name column, in bytes */
#define AUTOINDEX_CALLBACK_MAX  128    /* jsonp: longest callback name */

typedef enum {
    AUTOINDEX_HTML = 0,
    AUTOINDEX_JSON,
    AUTOINDEX_JSONP,
    AUTOINDEX_XML
} autoindex_format_t;

typedef struct {
    rx_int_t   enable;
    rx_uint_t  format;             /* autoindex_format_t */
    rx_int_t   localtime;
    rx_int_t   exact_size;
    rx_int_t   callback_index;     /* $arg_callback when jsonp, else unset */
} rx_http_autoindex_conf_t;

/* One listed name; name is NUL-terminated, from the request pool. */
typedef struct {
    rx_str_t   name;
    time_t     mtime;
    int64_t    size;
    unsigned   dir:1;
    unsigned   file:1;             /* a regular file (else "other") */
} autoindex_entry_t;

/* The response body being written: never past end; overflow means the
 * size estimate was wrong (a bug), and the request fails with 500. */
typedef struct {
    char  *pos;
    char  *end;
    bool   overflow;
} autoindex_out_t;

/* Escapers share rx_http_escape_uri's contract: dst NULL counts. */
typedef size_t (*autoindex_escape_pt)(char *dst, const char *src, size_t len);

static const char *set_format(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t autoindex_postconfiguration(rx_conf_t *cf);

static const rx_conf_enum_t autoindex_formats[] = {
    { "html", AUTOINDEX_HTML },
    { "json", AUTOINDEX_JSON },
    { "jsonp", AUTOINDEX_JSONP },
    { "xml", AUTOINDEX_XML },
    { NULL, 0 }
};

static const rx_command_t autoindex_commands[] = {
    { "autoindex", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_FLAG, rx_conf_set_flag_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_autoindex_conf_t, enable), NULL },
    { "autoindex_format", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE1, set_format, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_autoindex_conf_t, format), autoindex_formats },
    { "autoindex_exact_size", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_autoindex_conf_t, exact_size), NULL },
    { "autoindex_localtime", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_autoindex_conf_t, localtime), NULL },
    rx_null_command
};

static const rx_http_module_t autoindex_ctx = {
    NULL, autoindex_postconfiguration, NULL, NULL, NULL, NULL, create_conf,
    merge_conf
};

rx_module_t rx_http_autoindex_module = {
    "rx_http_autoindex_module", 0, 0, RX_HTTP_MODULE, &autoindex_ctx,
    autoindex_commands, NULL, NULL, NULL, NULL
};

static const char *months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_autoindex_conf_t *acf = rx_pcalloc(cf->pool, sizeof(*acf));

    if (acf) {
        acf->enable = RX_CONF_UNSET;
        acf->format = RX_CONF_UNSET_UINT;
        acf->localtime = RX_CONF_UNSET;
        acf->exact_size = RX_CONF_UNSET;
        acf->callback_index = RX_CONF_UNSET;
    }
    return acf;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_autoindex_conf_t *p = prev, *c = conf;

    rx_conf_merge_value(c->enable, p->enable, 0);
    rx_conf_merge_uint(c->format, p->format, AUTOINDEX_HTML);
    rx_conf_merge_value(c->localtime, p->localtime, 0);
    rx_conf_merge_value(c->exact_size, p->exact_size, 1);
    rx_conf_merge_value(c->callback_index, p->callback_index, RX_CONF_UNSET);
    return RX_CONF_OK;
}

/* The enum, and for jsonp the index of $arg_callback, resolved here so
 * that the request path only reads it. */
static const char *
set_format(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    static const rx_str_t     name = rx_string("arg_callback");
    rx_http_autoindex_conf_t *acf = conf;
    const char               *rv = rx_conf_set_enum_slot(cf, cmd, conf);

    if (rv != RX_CONF_OK || acf->format != AUTOINDEX_JSONP) {
        return rv;
    }
    acf->callback_index = rx_http_get_variable_index(cf, &name);
    return acf->callback_index == RX_ERROR ? RX_CONF_ERROR : RX_CONF_OK;
}

/* ---- escaping and the output buffer ---- */

/* nginx's ngx_escape_html: < > & and the double quote. */
static size_t
html_escape(char *dst, const char *src, size_t len)
{
    size_t i, n = 0;

    for (i = 0; i < len; i++) {
        const char *rep;

        switch (src[i]) {
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '&': rep = "&amp;"; break;
        case '"': rep = "&quot;"; break;
        default:
            if (dst) dst[n] = src[i];
            n++;
            continue;
        }
        if (dst) memcpy(dst + n, rep, strlen(rep));
        n += strlen(rep);
    }
    return n;
}

/* A JSON string's content: quote and backslash escaped, control bytes as
 * \n \r \t \b \f or \u00XX; bytes >= 0x80 pass (nginx's ngx_escape_json). */
static size_t
json_escape(char *dst, const char *src, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t            i, n = 0;
    char              rep[7];
    size_t            rl;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char) src[i];

        rl = 2;
        rep[0] = '\\';
        switch (c) {
        case '"': case '\\': rep[1] = (char) c; break;
        case '\n': rep[1] = 'n'; break;
        case '\r': rep[1] = 'r'; break;
        case '\t': rep[1] = 't'; break;
        case '\b': rep[1] = 'b'; break;
        case '\f': rep[1] = 'f'; break;
        default:
            if (c >= 0x20) {
                rep[0] = (char) c;
                rl = 1;
                break;
            }
            memcpy(rep + 1, "u00", 3);
            rep[4] = hex[c >> 4];
            rep[5] = hex[c & 0xf];
            rl = 6;
        }
        if (dst) memcpy(dst + n, rep, rl);
        n += rl;
    }
    return n;
}

static size_t
href_escape(char *dst, const char *src, size_t len)
{
    return rx_http_escape_uri(dst, src, len, RX_ESCAPE_URI_COMPONENT);
}

static void
out_put(autoindex_out_t *o, const char *s, size_t n)
{
    if (o->overflow || n > (size_t) (o->end - o->pos)) {
        o->overflow = true;
        return;
    }
    memcpy(o->pos, s, n);
    o->pos += n;
}

#define OUT_LIT(o, lit)  out_put(o, lit, sizeof(lit) - 1)

static void
out_fill(autoindex_out_t *o, char c, size_t n)
{
    if (o->overflow || n > (size_t) (o->end - o->pos)) {
        o->overflow = true;
        return;
    }
    memset(o->pos, c, n);
    o->pos += n;
}

static void
out_escaped(autoindex_out_t *o, autoindex_escape_pt escape, const char *s,
    size_t n)
{
    size_t need = escape(NULL, s, n);

    if (o->overflow || need > (size_t) (o->end - o->pos)) {
        o->overflow = true;
        return;
    }
    o->pos += escape(o->pos, s, n);
}

static void
out_printf(autoindex_out_t *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
out_printf(autoindex_out_t *o, const char *fmt, ...)
{
    size_t  room = (size_t) (o->end - o->pos);
    va_list args;
    int     n;

    if (o->overflow) {
        return;
    }
    va_start(args, fmt);
    n = vsnprintf(o->pos, room, fmt, args);
    va_end(args);
    if (n < 0 || (size_t) n >= room) {
        o->overflow = true;
        return;
    }
    o->pos += n;
}

/* gmtime_r, with the epoch for a time it cannot represent. */
static void
to_tm(time_t t, struct tm *tm)
{
    time_t zero = 0;

    if (gmtime_r(&t, tm) == NULL) {
        gmtime_r(&zero, tm);
    }
}

/* ---- the formats ---- */

/* The name column: names longer than the column are cut to leave room for
 * "..>", never inside a UTF-8 sequence; others get a '/' for directories
 * and are padded with spaces. Widths count bytes, as nginx does when the
 * response has no utf-8 charset (ringx has no charset directive). */
static void
html_name(autoindex_out_t *o, const autoindex_entry_t *e)
{
    size_t len = e->name.len, cut;

    if (len > AUTOINDEX_NAME_LEN) {
        cut = AUTOINDEX_NAME_LEN - 3;
        while (cut > 0 && ((unsigned char) e->name.data[cut] & 0xc0) == 0x80) {
            cut--;
        }
        out_escaped(o, html_escape, e->name.data, cut);
        OUT_LIT(o, "..&gt;</a>");
        return;
    }
    out_escaped(o, html_escape, e->name.data, len);
    if (e->dir && len < AUTOINDEX_NAME_LEN) {
        OUT_LIT(o, "/");
        len++;
    }
    OUT_LIT(o, "</a>");
    out_fill(o, ' ', AUTOINDEX_NAME_LEN - len);
}

/* 19 columns: exact bytes, or 7 (nginx's width) rounded to K, M, G. */
static void
html_size(autoindex_out_t *o, const autoindex_entry_t *e, bool exact)
{
    int64_t unit, n = e->size;
    char    scale;

    if (e->dir) {
        if (exact) {
            OUT_LIT(o, "                  -");
        } else {
            OUT_LIT(o, "      -");
        }
        return;
    }
    if (exact) {
        out_printf(o, "%19" PRId64, n);
        return;
    }
    if (n >= 1024 * 1024 * 1024) {
        unit = 1024 * 1024 * 1024; scale = 'G';
    } else if (n >= 1024 * 1024) {
        unit = 1024 * 1024; scale = 'M';
    } else if (n > 9999) {
        unit = 1024; scale = 'K';
    } else {
        out_printf(o, " %6" PRId64, n);
        return;
    }
    /* a remainder of half a unit or more rounds up */
    out_printf(o, "%6" PRId64 "%c", n / unit + (n % unit >= unit / 2), scale);
}

static void
format_html(rx_http_request_t *r, autoindex_out_t *o, rx_array_t *entries)
{
    rx_http_autoindex_conf_t *acf = rx_http_get_module_loc_conf(r,
                                        rx_http_autoindex_module);
    autoindex_entry_t        *e = entries->elts;
    long                      gmtoff = 0;
    struct tm                 tm;
    rx_uint_t                 i;

    if (acf->localtime) {
        /* nginx applies the current offset to every entry */
        time_t now = rx_time_sec;
        localtime_r(&now, &tm);
        gmtoff = tm.tm_gmtoff;
    }
    OUT_LIT(o, "<html>\r\n<head><title>Index of ");
    out_escaped(o, html_escape, r->uri.data, r->uri.len);
    OUT_LIT(o, "</title></head>\r\n<body>\r\n<h1>Index of ");
    out_escaped(o, html_escape, r->uri.data, r->uri.len);
    OUT_LIT(o, "</h1><hr><pre><a href=\"../\">../</a>\r\n");

    for (i = 0; i < entries->nelts; i++) {
        OUT_LIT(o, "<a href=\"");
        out_escaped(o, href_escape, e[i].name.data, e[i].name.len);
        if (e[i].dir) {
            OUT_LIT(o, "/");
        }
        OUT_LIT(o, "\">");
        html_name(o, &e[i]);
        to_tm(e[i].mtime + gmtoff, &tm);
        out_printf(o, " %02d-%s-%d %02d:%02d ", tm.tm_mday, months[tm.tm_mon],
                   tm.tm_year + 1900, tm.tm_hour, tm.tm_min);
        html_size(o, &e[i], acf->exact_size);
        OUT_LIT(o, "\r\n");
    }
    OUT_LIT(o, "</pre><hr></body>\r\n</html>\r\n");
}

static const char *
entry_type(const autoindex_entry_t *e)
{
    return e->dir ? "directory" : e->file ? "file" : "other";
}

/* callback NULL: json; else jsonp wrapped in callback( ... ); */
static void
format_json(autoindex_out_t *o, rx_array_t *entries, const rx_str_t *callback)
{
    autoindex_entry_t *e = entries->elts;
    char               date[64];
    rx_uint_t          i;

    if (callback) {
        OUT_LIT(o, "/* callback */\r\n");
        out_put(o, callback->data, callback->len);
        OUT_LIT(o, "(");
    }
    OUT_LIT(o, "[");
    for (i = 0; i < entries->nelts; i++) {
        OUT_LIT(o, "\r\n{ \"name\":\"");
        out_escaped(o, json_escape, e[i].name.data, e[i].name.len);
        rx_http_date(date, e[i].mtime);
        out_printf(o, "\", \"type\":\"%s\", \"mtime\":\"%s\"",
                   entry_type(&e[i]), date);
        if (e[i].file) {
            out_printf(o, ", \"size\":%" PRId64, e[i].size);
        }
        OUT_LIT(o, " }");
        if (i + 1 < entries->nelts) {
            OUT_LIT(o, ",");
        }
    }
    OUT_LIT(o, "\r\n]");
    if (callback) {
        OUT_LIT(o, ");");
    }
}

static void
format_xml(autoindex_out_t *o, rx_array_t *entries)
{
    autoindex_entry_t *e = entries->elts;
    struct tm          tm;
    rx_uint_t          i;

    OUT_LIT(o, "<?xml version=\"1.0\"?>\r\n<list>\r\n");
    for (i = 0; i < entries->nelts; i++) {
        to_tm(e[i].mtime, &tm);
        out_printf(o, "<%s mtime=\"%4d-%02d-%02dT%02d:%02d:%02dZ\"",
                   entry_type(&e[i]), tm.tm_year + 1900, tm.tm_mon + 1,
                   tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (e[i].file) {
            out_printf(o, " size=\"%" PRId64 "\"", e[i].size);
        }
        OUT_LIT(o, ">");
        out_escaped(o, html_escape, e[i].name.data, e[i].name.len);
        out_printf(o, "</%s>\r\n", entry_type(&e[i]));
    }
    OUT_LIT(o, "</list>\r\n");
}

/* ---- reading the directory ---- */

/* Directories first, then by name, byte by byte (nginx's order). */
static int
cmp_entries(const void *one, const void *two)
{
    const autoindex_entry_t *a = one, *b = two;

    if (a->dir != b->dir) {
        return a->dir ? -1 : 1;
    }
    return strcmp(a->name.data, b->name.data);
}

/* stat(), or lstat() for a dangling or looping symlink (listed as
 * "other"). Returns RX_OK, RX_DECLINED to leave the entry out (it is not
 * accessible, or vanished since readdir), or RX_ERROR (logged). */
static rx_int_t
stat_entry(rx_http_request_t *r, DIR *dir, const char *path,
    const char *name, struct stat *st)
{
    int err;

    if (fstatat(dirfd(dir), name, st, 0) == 0) {
        return RX_OK;
    }
    err = errno;
    if (err == ENOENT || err == ELOOP) {
        if (fstatat(dirfd(dir), name, st, AT_SYMLINK_NOFOLLOW) == 0) {
            return RX_OK;
        }
        err = errno;
        if (err == ENOENT) {
            return RX_DECLINED;
        }
        rx_http_request_log_error(r, RX_LOG_CRIT, err, "lstat() \"%s/%s\" "
                                  "failed", path, name);
        return RX_ERROR;
    }
    rx_http_request_log_error(r, RX_LOG_CRIT, err, "stat() \"%s/%s\" failed",
                              path, name);
    return err == EACCES ? RX_DECLINED : RX_ERROR;
}

static rx_int_t
add_entry(rx_http_request_t *r, rx_array_t *entries, const char *name,
    const struct stat *st)
{
    autoindex_entry_t *e = rx_array_push(entries);

    if (e == NULL) {
        return RX_ERROR;
    }
    e->name.len = strlen(name);
    e->name.data = rx_pstrdup_c(r->pool, name, e->name.len);
    if (e->name.data == NULL) {
        return RX_ERROR;
    }
    e->mtime = st->st_mtime;
    e->size = st->st_size;
    e->dir = S_ISDIR(st->st_mode);
    e->file = S_ISREG(st->st_mode);
    return RX_OK;
}

/* Fills entries with the visible names of path (names starting with '.'
 * are hidden). Returns RX_OK or the status to answer (logged). */
static rx_int_t
read_entries(rx_http_request_t *r, const char *path, rx_array_t *entries)
{
    DIR           *dir;
    struct dirent *de;
    struct stat    st;
    rx_int_t       rc = RX_OK;
    int            err;

    dir = opendir(path);
    if (dir == NULL) {
        err = errno;
        if (err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG) {
            rc = RX_HTTP_NOT_FOUND;
        } else if (err == EACCES) {
            rc = RX_HTTP_FORBIDDEN;
        } else {
            rc = RX_HTTP_INTERNAL_SERVER_ERROR;
        }
        rx_http_request_log_error(r, rc == RX_HTTP_INTERNAL_SERVER_ERROR
                                     ? RX_LOG_CRIT : RX_LOG_ERR, err,
                                  "opendir() \"%s\" failed", path);
        return rc;
    }
    for ( ;; ) {
        errno = 0;
        de = readdir(dir);
        if (de == NULL) {
            if (errno != 0) {
                rx_http_request_log_error(r, RX_LOG_CRIT, errno, "readdir() "
                                          "\"%s\" failed", path);
                rc = RX_HTTP_INTERNAL_SERVER_ERROR;
            }
            break;
        }
        if (de->d_name[0] == '.') {
            continue;
        }
        rc = stat_entry(r, dir, path, de->d_name, &st);
        if (rc == RX_DECLINED) {
            rc = RX_OK;
            continue;
        }
        if (rc != RX_OK || add_entry(r, entries, de->d_name, &st) != RX_OK) {
            rc = RX_HTTP_INTERNAL_SERVER_ERROR;
            break;
        }
    }
    if (closedir(dir) == -1) {
        rx_http_request_log_error(r, RX_LOG_ALERT, errno, "closedir() \"%s\" "
                                  "failed", path);
    }
    return rc;
}

/* ---- the handler ---- */

/* jsonp: the callback argument, checked as nginx does (letters, digits,
 * '_' and '.', at most 128). Empty cb: none given, answer json. Returns
 * RX_OK, 400 (logged at info) or RX_ERROR. */
static rx_int_t
jsonp_callback(rx_http_request_t *r, rx_http_autoindex_conf_t *acf,
    rx_str_t *cb)
{
    rx_http_variable_value_t *v;
    size_t                    i;

    rx_str_null(cb);
    v = rx_http_get_indexed_variable(r, (rx_uint_t) acf->callback_index);
    if (v == NULL) {
        return RX_ERROR;
    }
    if (v->not_found || v->len == 0) {
        return RX_OK;
    }
    if (v->len > AUTOINDEX_CALLBACK_MAX) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent too long "
            "callback name: \"%.*s\"", (int) v->len, v->data);
        return RX_HTTP_BAD_REQUEST;
    }
    for (i = 0; i < v->len; i++) {
        char c = v->data[i];

        if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z')
            && !(c >= '0' && c <= '9') && c != '_' && c != '.') {
            rx_http_request_log_error(r, RX_LOG_INFO, 0, "client sent invalid "
                "callback name: \"%.*s\"", (int) v->len, v->data);
            return RX_HTTP_BAD_REQUEST;
        }
    }
    cb->data = v->data;
    cb->len = v->len;
    return RX_OK;
}

/* Writes the listing in format into a buffer sized from the entries. */
static rx_buf_t *
build_listing(rx_http_request_t *r, rx_array_t *entries, rx_uint_t format,
    const rx_str_t *callback)
{
    autoindex_entry_t *e = entries->elts;
    autoindex_out_t    o;
    rx_buf_t          *b;
    size_t             size;
    rx_uint_t          i;

    /* per name: 3x for the href, 6x for the text; the rest is bounded */
    size = 512 + 12 * r->uri.len + callback->len;
    for (i = 0; i < entries->nelts; i++) {
        size += 9 * e[i].name.len + 192;
    }
    b = rx_create_temp_buf(r->pool, size);
    if (b == NULL) {
        return NULL;
    }
    o.pos = b->last;
    o.end = b->end;
    o.overflow = false;
    switch (format) {
    case AUTOINDEX_JSON:
        format_json(&o, entries, NULL);
        break;
    case AUTOINDEX_JSONP:
        format_json(&o, entries, callback);
        break;
    case AUTOINDEX_XML:
        format_xml(&o, entries);
        break;
    default:
        format_html(r, &o, entries);
    }
    if (o.overflow) {
        rx_http_request_log_error(r, RX_LOG_ALERT, 0, "autoindex: listing "
                                  "larger than its estimate of %zu", size);
        return NULL;
    }
    b->last = o.pos;
    b->last_buf = 1;
    return b;
}

static void
set_content_type(rx_http_request_t *r, rx_uint_t format)
{
    switch (format) {
    case AUTOINDEX_JSON:
        rx_str_set(&r->headers_out.content_type, "application/json");
        break;
    case AUTOINDEX_JSONP:
        rx_str_set(&r->headers_out.content_type, "application/javascript");
        break;
    case AUTOINDEX_XML:
        rx_str_set(&r->headers_out.content_type, "text/xml");
        rx_str_set(&r->headers_out.charset, "utf-8");
        break;
    default:
        rx_str_set(&r->headers_out.content_type, "text/html");
    }
}

static rx_int_t
autoindex_handler(rx_http_request_t *r)
{
    rx_http_autoindex_conf_t *acf = rx_http_get_module_loc_conf(r,
                                        rx_http_autoindex_module);
    rx_uint_t                 format = acf->format;
    rx_str_t                  path, callback = rx_null_string;
    rx_array_t                entries;
    rx_chain_t               *cl;
    rx_buf_t                 *b;
    rx_int_t                  rc;

    if (r->uri.len == 0 || r->uri.data[r->uri.len - 1] != '/'
        || !(r->method & (RX_HTTP_GET | RX_HTTP_HEAD)) || !acf->enable) {
        return RX_DECLINED;
    }
    rc = rx_http_discard_request_body(r);
    if (rc != RX_OK) {
        return rc;
    }
    if (rx_http_map_uri_to_path(r, &path, 0) != RX_OK) {
        return RX_ERROR;
    }
    if (path.len > 1 && path.data[path.len - 1] == '/') {
        path.data[--path.len] = '\0';
    }
    if (format == AUTOINDEX_JSONP) {
        rc = jsonp_callback(r, acf, &callback);
        if (rc != RX_OK) {
            return rc;
        }
        format = callback.len ? AUTOINDEX_JSONP : AUTOINDEX_JSON;
    }
    if (rx_array_init(&entries, r->pool, 64, sizeof(autoindex_entry_t))
        != RX_OK) {
        return RX_ERROR;
    }
    rc = read_entries(r, path.data, &entries);
    if (rc != RX_OK) {
        return rc;
    }
    if (entries.nelts > 1) {
        qsort(entries.elts, entries.nelts, sizeof(autoindex_entry_t),
              cmp_entries);
    }
    b = build_listing(r, &entries, format, &callback);
    cl = rx_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return RX_ERROR;
    }
    cl->buf = b;
    cl->next = NULL;

    r->headers_out.status = RX_HTTP_OK;
    r->headers_out.content_length_n = (int64_t) (b->last - b->pos);
    set_content_type(r, format);
    if (rx_http_send_header(r) == RX_ERROR) {
        return RX_ERROR;
    }
    return rx_http_output_filter(r, r->header_only ? NULL : cl);
}

static rx_int_t
autoindex_postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_CONTENT_PHASE,
                                     autoindex_handler);
}
