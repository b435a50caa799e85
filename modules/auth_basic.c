/*
 * auth_basic.c: auth_basic and auth_basic_user_file, an access-phase
 * handler that checks "Authorization: Basic" credentials against an
 * htpasswd-style file and answers 401 with a WWW-Authenticate challenge.
 *
 * nginx opens and reads the user file on every request. ringx keeps the
 * file's contents per worker and per directive, and looks at the file
 * (stat) at most once a second: a changed file (inode, size or mtime) is
 * read again, so an edit is seen within a second. That stat, and the read
 * of a changed file, are synchronous system calls on the request path:
 * acceptable for a small local file, and far fewer than nginx's.
 */
#include <sys/stat.h>
#include "http.h"
#include "http_script.h"
#include "clock.h"
#include "auth_basic_crypt.h"

/* The user file as last read by this worker (contents malloc'd). */
typedef struct {
    char            *path;       /* the file the contents are from */
    char            *data;       /* NULL: nothing read */
    size_t           len;
    dev_t            dev;
    ino_t            ino;
    off_t            size;
    struct timespec  mtime;
    rx_msec_t        checked;    /* rx_current_msec of the last stat */
} rx_http_auth_basic_cache_t;

typedef struct {
    rx_http_complex_value_t     path;
    rx_http_auth_basic_cache_t *cache;
} rx_http_auth_basic_file_t;

typedef struct {
    rx_http_complex_value_t    *realm;       /* RX_CONF_UNSET_PTR, NULL */
    rx_http_auth_basic_file_t  *user_file;   /* RX_CONF_UNSET_PTR, NULL */
} rx_http_auth_basic_conf_t;

static const char *set_user_file(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static rx_int_t auth_basic_init(rx_conf_t *cf);

static const rx_command_t auth_basic_commands[] = {
    { "auth_basic", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_HTTP_LMT_CONF | RX_CONF_TAKE1, rx_http_set_complex_value_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_auth_basic_conf_t, realm), NULL },
    { "auth_basic_user_file", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_HTTP_LMT_CONF | RX_CONF_TAKE1, set_user_file,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t auth_basic_ctx = {
    NULL, auth_basic_init, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_auth_basic_module = {
    "rx_http_auth_basic_module", 0, 0, RX_HTTP_MODULE, &auth_basic_ctx,
    auth_basic_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_auth_basic_conf_t *abcf = rx_pcalloc(cf->pool, sizeof(*abcf));

    if (abcf) {
        abcf->realm = RX_CONF_UNSET_PTR;
        abcf->user_file = RX_CONF_UNSET_PTR;
    }
    return abcf;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_auth_basic_conf_t *p = prev, *c = conf;

    rx_conf_merge_ptr(c->realm, p->realm, NULL);
    rx_conf_merge_ptr(c->user_file, p->user_file, NULL);
    return RX_CONF_OK;
}

/* A worker's copy of the contents dies with the configuration. */
static void
free_cache(void *data)
{
    rx_http_auth_basic_cache_t *cache = data;

    free(cache->path);
    free(cache->data);
    cache->path = NULL;
    cache->data = NULL;
}

/* The path, relative to the configuration's directory as in nginx. */
static const char *
set_user_file(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_auth_basic_conf_t *abcf = conf;
    rx_str_t                  *value = cf->args->elts, path = value[1];
    rx_http_auth_basic_file_t *uf;
    rx_pool_cleanup_t         *cln;

    if (abcf->user_file != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    uf = rx_pcalloc(cf->pool, sizeof(*uf));
    cln = rx_pool_cleanup_add(cf->pool, sizeof(rx_http_auth_basic_cache_t));
    if (uf == NULL || cln == NULL) {
        return RX_CONF_ERROR;
    }
    uf->cache = cln->data;
    memset(uf->cache, 0, sizeof(*uf->cache));
    cln->handler = free_cache;
    if (memchr(path.data, '$', path.len) == NULL
        && rx_conf_full_name(cf->cycle, &path, true) != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (rx_http_compile_complex_value(cf, &path, &uf->path) != RX_OK) {
        return RX_CONF_ERROR;
    }
    abcf->user_file = uf;
    return RX_CONF_OK;
}

/* The evaluated path, NUL-terminated, prefixed when relative. */
static rx_int_t
user_file_path(rx_http_request_t *r, rx_http_auth_basic_file_t *uf,
    rx_str_t *path)
{
    const rx_str_t *prefix = &rx_cycle->conf_prefix;
    rx_str_t        v;
    char           *p;

    if (rx_http_complex_value(r, &uf->path, &v) != RX_OK) {
        return RX_ERROR;
    }
    if (v.len && v.data[0] == '/') {
        prefix = NULL;
    }
    path->len = (prefix ? prefix->len : 0) + v.len;
    path->data = p = rx_pnalloc(r->pool, path->len + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    if (prefix) {
        memcpy(p, prefix->data, prefix->len);
        p += prefix->len;
    }
    memcpy(p, v.data, v.len);
    p[v.len] = '\0';
    return RX_OK;
}

static bool
cache_same_file(const rx_http_auth_basic_cache_t *c, const struct stat *st)
{
    return c->data && c->dev == st->st_dev && c->ino == st->st_ino
           && c->size == st->st_size
           && c->mtime.tv_sec == st->st_mtim.tv_sec
           && c->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Reads the whole file into the cache. Sets errno and logs like nginx on
 * failure; returns RX_OK or the status to answer. */
static rx_int_t
cache_read(rx_http_request_t *r, rx_http_auth_basic_cache_t *c,
    const rx_str_t *path)
{
    struct stat  st;
    char        *data = NULL, *name = NULL;
    size_t       got = 0;
    ssize_t      n;
    int          fd, err;
    rx_int_t     rc = RX_HTTP_INTERNAL_SERVER_ERROR;

    fd = open(path->data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        err = errno;
        rc = err == ENOENT ? RX_HTTP_FORBIDDEN : RX_HTTP_INTERNAL_SERVER_ERROR;
        rx_http_request_log_error(r, err == ENOENT ? RX_LOG_ERR : RX_LOG_CRIT,
                                  err, "open() \"%s\" failed", path->data);
        return rc;
    }
    if (fstat(fd, &st) == -1) {
        rx_http_request_log_error(r, RX_LOG_CRIT, errno, "fstat() \"%s\" "
                                  "failed", path->data);
        goto cleanup;
    }
    data = malloc((size_t) st.st_size + 1);
    name = strdup(path->data);
    if (data == NULL || name == NULL) {
        rx_http_request_log_error(r, RX_LOG_CRIT, errno, "malloc() failed");
        goto cleanup;
    }
    while (got < (size_t) st.st_size) {
        n = read(fd, data + got, (size_t) st.st_size - got);
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n == -1) {
            rx_http_request_log_error(r, RX_LOG_CRIT, errno, "read() \"%s\" "
                                      "failed", path->data);
            goto cleanup;
        }
        if (n == 0) {
            break;               /* shrank under us: what is there */
        }
        got += (size_t) n;
    }
    data[got] = '\0';
    free_cache(c);
    c->path = name;
    c->data = data;
    c->len = got;
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    c->size = st.st_size;
    c->mtime = st.st_mtim;
    c->checked = rx_current_msec;
    name = data = NULL;
    rc = RX_OK;

cleanup:
    free(name);
    free(data);
    close(fd);
    return rc;
}

/* Makes c hold the contents of path, as fresh as one second. */
static rx_int_t
cache_get(rx_http_request_t *r, rx_http_auth_basic_cache_t *c,
    const rx_str_t *path)
{
    struct stat st;

    if (c->data && c->path && strcmp(c->path, path->data) == 0) {
        if (rx_current_msec - c->checked < 1000) {
            return RX_OK;
        }
        if (stat(path->data, &st) == 0 && cache_same_file(c, &st)) {
            c->checked = rx_current_msec;
            return RX_OK;
        }
    }
    return cache_read(r, c, path);
}

/*
 * The hash of user in the file's text, NUL-terminated in r->pool, or
 * NULL (*found false) when no line names the user. Lines are
 * "user:hash[:comment]"; those starting with '#' are comments; CRLF is
 * accepted. The first line of a user counts.
 */
static char *
find_user(rx_http_request_t *r, const char *p, const char *end,
    const rx_str_t *user, bool *found)
{
    const char *eol, *colon, *h;

    *found = false;
    for ( ; p < end; p = eol + 1) {
        eol = memchr(p, '\n', (size_t) (end - p));
        if (eol == NULL) {
            eol = end;
        }
        if (p[0] == '#') {
            continue;
        }
        colon = memchr(p, ':', (size_t) (eol - p));
        if (colon == NULL || (size_t) (colon - p) != user->len
            || memcmp(p, user->data, user->len) != 0) {
            continue;
        }
        h = colon + 1;
        colon = memchr(h, ':', (size_t) (eol - h));
        if (colon) {
            eol = colon;
        }
        if (eol > h && eol[-1] == '\r') {
            eol--;
        }
        *found = true;
        return rx_pstrdup_c(r->pool, h, (size_t) (eol - h));
    }
    return NULL;
}

/* 401 with the challenge; the realm is quoted (nginx does not escape it).
 * A challenge from an earlier pass (an error_page redirect into another
 * protected location) is replaced, not repeated. */
static rx_int_t
challenge(rx_http_request_t *r, const rx_str_t *realm)
{
    rx_table_elt_t *h = r->headers_out.headers.elts;
    rx_str_t        v;
    char           *p;
    size_t          i;

    v.data = p = rx_pnalloc(r->pool, sizeof("Basic realm=\"\"") - 1
                                     + 2 * realm->len);
    if (p == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    p += sprintf(p, "Basic realm=\"");
    for (i = 0; i < realm->len; i++) {
        if (realm->data[i] == '"' || realm->data[i] == '\\') {
            *p++ = '\\';
        }
        *p++ = realm->data[i];
    }
    *p++ = '"';
    v.len = (size_t) (p - v.data);
    for (i = 0; i < r->headers_out.headers.nelts; i++) {
        if (!h[i].deleted && rx_str_caseeq(&h[i].key, "WWW-Authenticate")) {
            h[i].value = v;
            return RX_HTTP_UNAUTHORIZED;
        }
    }
    if (rx_http_add_header_out(r, "WWW-Authenticate", &v) == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    return RX_HTTP_UNAUTHORIZED;
}

static rx_int_t
auth_basic_handler(rx_http_request_t *r)
{
    rx_http_auth_basic_conf_t *abcf = rx_http_get_module_loc_conf(r,
                                         rx_http_auth_basic_module);
    rx_http_headers_in_t      *in = &r->headers_in;
    rx_str_t                   realm, path;
    rx_int_t                   rc;
    char                      *hash;
    bool                       found;

    if (abcf->realm == NULL || abcf->user_file == NULL) {
        return RX_DECLINED;
    }
    if (rx_http_complex_value(r, abcf->realm, &realm) != RX_OK) {
        return RX_ERROR;
    }
    if (rx_str_eq(&realm, "off")) {
        return RX_DECLINED;      /* also when a variable says so, as nginx */
    }
    rc = rx_http_auth_basic_user(r);
    if (rc == RX_DECLINED) {
        rx_http_request_log_error(r, RX_LOG_INFO, 0, "no user/password was "
                                  "provided for basic authentication");
        return challenge(r, &realm);
    }
    if (rc != RX_OK) {
        return RX_ERROR;
    }
    if (user_file_path(r, abcf->user_file, &path) != RX_OK) {
        return RX_ERROR;
    }
    rc = cache_get(r, abcf->user_file->cache, &path);
    if (rc != RX_OK) {
        return rc;
    }
    hash = find_user(r, abcf->user_file->cache->data,
                     abcf->user_file->cache->data + abcf->user_file->cache->len,
                     &in->user, &found);
    if (!found) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "user \"%.*s\" was not "
            "found in \"%s\"", (int) in->user.len, in->user.data, path.data);
        return challenge(r, &realm);
    }
    if (hash == NULL) {
        return RX_ERROR;
    }
    rc = rx_auth_basic_check(&in->passwd, hash);
    if (rc == RX_OK) {
        return RX_OK;
    }
    if (rc == RX_ERROR) {
        rx_http_request_log_error(r, RX_LOG_CRIT, errno, "crypt() failed");
        return RX_ERROR;
    }
    rx_http_request_log_error(r, RX_LOG_ERR, 0, "user \"%.*s\": password "
        "mismatch", (int) in->user.len, in->user.data);
    return challenge(r, &realm);
}

static rx_int_t
auth_basic_init(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_ACCESS_PHASE,
                                     auth_basic_handler);
}
