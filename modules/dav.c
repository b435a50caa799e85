/*
 * dav.c: nginx's ngx_http_dav_module: dav_methods, dav_access,
 * create_full_put_path, min_delete_depth, and the methods PUT, DELETE
 * and MKCOL (COPY and MOVE: dav_copy.c; the file and tree work through
 * the ring: dav_tree.c). A content handler that runs before index and
 * static for the methods a location allows; other methods pass on.
 *
 * PUT reads the body through the body owner into a temporary file in
 * client_body_temp_path (O_TMPFILE: no name), sets its mode (dav_access)
 * and time (Date), links it beside the target under a temporary name and
 * renames that over the target, all on the ring (across file systems it
 * is copied there instead).
 */
#include <fcntl.h>
#include "dav.h"
#include "clock.h"
#include "http_date.h"
#include "http_temp_file.h"
#include "http_uri.h"

#define DAV_OFF      (1U << 30)      /* never a method bit */
#define DAV_METHODS  (RX_HTTP_PUT | RX_HTTP_DELETE | RX_HTTP_MKCOL \
                      | RX_HTTP_COPY | RX_HTTP_MOVE)

static rx_int_t dav_postconfiguration(rx_conf_t *cf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);
static const char *set_access(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void put_link(rx_http_request_t *r, rx_http_dav_ctx_t *ctx);

static const rx_conf_enum_t dav_methods_mask[] = {
    { "off", DAV_OFF },
    { "put", RX_HTTP_PUT },
    { "delete", RX_HTTP_DELETE },
    { "mkcol", RX_HTTP_MKCOL },
    { "copy", RX_HTTP_COPY },
    { "move", RX_HTTP_MOVE },
    { NULL, 0 }
};

static const rx_command_t dav_commands[] = {
    { "dav_methods", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_1MORE, rx_conf_set_bitmask_slot, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_dav_conf_t, methods), dav_methods_mask },
    { "create_full_put_path", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_dav_conf_t, create_full_put_path), NULL },
    { "min_delete_depth", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF
      | RX_HTTP_LOC_CONF | RX_CONF_TAKE1, rx_conf_set_num_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_dav_conf_t, min_delete_depth),
      NULL },
    { "dav_access", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE123, set_access, RX_HTTP_LOC_CONF_OFFSET,
      offsetof(rx_http_dav_conf_t, access), NULL },
    rx_null_command
};

static const rx_http_module_t dav_ctx = {
    NULL, dav_postconfiguration, NULL, NULL, NULL, NULL, create_conf,
    merge_conf
};

rx_module_t rx_http_dav_module = {
    "rx_http_dav_module", 0, 0, RX_HTTP_MODULE, &dav_ctx, dav_commands,
    NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_dav_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->methods = 0;                   /* the bitmask setter's unset */
        c->access = RX_CONF_UNSET_UINT;
        c->min_delete_depth = RX_CONF_UNSET;
        c->create_full_put_path = RX_CONF_UNSET;
    }
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_dav_conf_t *p = prev, *c = conf;

    (void) cf;
    if (c->methods == 0) {
        c->methods = p->methods ? p->methods : DAV_OFF;
    }
    if (c->methods & DAV_OFF) {
        c->methods = DAV_OFF;             /* "off" wins, as in nginx */
    }
    rx_conf_merge_uint(c->access, p->access, 0600);
    rx_conf_merge_value(c->min_delete_depth, p->min_delete_depth, 0);
    rx_conf_merge_value(c->create_full_put_path, p->create_full_put_path, 0);
    return RX_CONF_OK;
}

/* dav_access [user:r|rw] [group:r|rw] [all:r|rw] (nginx's access slot:
 * the user has rw unless "user:" says otherwise). */
static const char *
set_access(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_uint_t *access = rx_conf_field(conf, cmd, rx_uint_t);
    rx_str_t  *value = cf->args->elts;
    rx_uint_t  i, shift, user = 0600, right;
    char      *p;

    if (*access != RX_CONF_UNSET_UINT) {
        return "is duplicate";
    }
    *access = 0;
    for (i = 1; i < cf->args->nelts; i++) {
        p = value[i].data;
        if (strncmp(p, "user:", 5) == 0) {
            shift = 6;
            p += 5;
            user = 0;
        } else if (strncmp(p, "group:", 6) == 0) {
            shift = 3;
            p += 6;
        } else if (strncmp(p, "all:", 4) == 0) {
            shift = 0;
            p += 4;
        } else {
            goto invalid;
        }
        if (strcmp(p, "rw") == 0) {
            right = 6;
        } else if (strcmp(p, "r") == 0) {
            right = 4;
        } else {
            goto invalid;
        }
        *access |= right << shift;
    }
    *access |= user;
    return RX_CONF_OK;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\"",
                      value[i].data);
    return RX_CONF_ERROR;
}

/* ------------------------------------------------------ shared helpers */

rx_table_elt_t *
rx_http_dav_header(rx_http_request_t *r, const char *name)
{
    rx_table_elt_t *h = r->headers_in.headers.elts;
    size_t          len = strlen(name);
    rx_uint_t       i;

    for (i = 0; i < r->headers_in.headers.nelts; i++) {
        if (h[i].key.len == len && strncasecmp(h[i].key.data, name, len) == 0) {
            return &h[i];
        }
    }
    return NULL;
}

/* The Depth header: 0, 1, RX_HTTP_DAV_INFINITY, or dflt when absent;
 * RX_HTTP_DAV_INVALID (logged) for anything else. */
rx_int_t
rx_http_dav_depth(rx_http_request_t *r, rx_int_t dflt)
{
    rx_table_elt_t *depth = rx_http_dav_header(r, "Depth");

    if (depth == NULL) {
        return dflt;
    }
    if (depth->value.len == 1 && (depth->value.data[0] == '0'
                                  || depth->value.data[0] == '1')) {
        return depth->value.data[0] - '0';
    }
    if (depth->value.len == 8 && memcmp(depth->value.data, "infinity", 8) == 0) {
        return RX_HTTP_DAV_INFINITY;
    }
    rx_http_request_log_error(r, RX_LOG_ERR, 0, "client sent invalid "
        "\"Depth\" header: \"%.*s\"", (int) depth->value.len,
        depth->value.data);
    return RX_HTTP_DAV_INVALID;
}

/* The response of a method that went well: 201 with Location (the
 * escaped URI; the header filter makes it absolute), 204. */
void
rx_http_dav_finish(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, rx_int_t rc)
{
    rx_str_t loc;
    size_t   n;

    (void) ctx;
    r->op_handler = NULL;
    if (rc != RX_OK) {
        rx_http_finalize_request(r, rc);
        return;
    }
    if (ctx->status == 201) {
        n = rx_http_escape_uri(NULL, r->uri.data, r->uri.len, RX_ESCAPE_URI);
        loc.data = rx_pnalloc(r->pool, n + 1);
        if (loc.data == NULL) {
            rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
        loc.len = rx_http_escape_uri(loc.data, r->uri.data, r->uri.len,
                                     RX_ESCAPE_URI);
        r->headers_out.location = rx_http_add_header_out(r, "Location", &loc);
        if (r->headers_out.location == NULL) {
            rx_http_finalize_request(r, RX_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
    }
    rx_http_finalize_request(r, rx_http_send_response(r, ctx->status, NULL,
                                                      NULL));
}

/* Creates the directories leading to ctx->mk_path (from its byte `from`
 * on, the part under root), then runs ctx->mk_then; nginx's
 * ngx_create_full_path: what exists, or cannot be looked at, is passed. */
static void
mkpath_done(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    ctx->mk_path[ctx->mkdir_at] = '/';
    if (res < 0 && res != -EEXIST && res != -EACCES) {
        ctx->mk_path[ctx->mkdir_at] = '\0';
        rx_http_request_log_error(r, RX_LOG_CRIT, -res, "mkdir() \"%s\" "
                                  "failed", ctx->mk_path);
        ctx->mk_path[ctx->mkdir_at] = '/';
        rx_http_dav_finish(r, ctx, res == -ENOSPC ? 507
                                   : RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    rx_http_dav_mkpath(r, ctx, ctx->mk_path, 0, ctx->mk_then);
}

void
rx_http_dav_mkpath(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, char *path,
    size_t from, void (*then)(rx_http_request_t *, rx_http_dav_ctx_t *))
{
    char *p;

    if (ctx->mk_path != path) {
        ctx->mk_path = path;
        ctx->mkdir_at = from;
        ctx->mk_then = then;
    }
    p = strchr(path + ctx->mkdir_at + 1, '/');
    if (p == NULL) {
        ctx->mk_path = NULL;
        then(r, ctx);
        return;
    }
    ctx->mkdir_at = (size_t) (p - path);
    *p = '\0';
    ctx->next = mkpath_done;
    rx_ring_mkdirat(AT_FDCWD, path,
                    rx_http_dav_dir_access(ctx->conf->access),
                    rx_http_op_ud(r, RX_OP_FS));
}

/* A name beside path for a file on its way: "PATH.NNNNNNNNNN". */
rx_int_t
rx_http_dav_temp_name(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    const char *path)
{
    static uint32_t seq;
    size_t          len = strlen(path);

    if (ctx->temp == NULL) {
        ctx->temp = rx_pnalloc(r->pool, len + 12);
        if (ctx->temp == NULL) {
            return RX_ERROR;
        }
    }
    seq = seq * 1103515245u + 12345u + (uint32_t) getpid() + (uint32_t) rx_time_usec;
    snprintf(ctx->temp, len + 12, "%s.%010u", path, (unsigned) seq);
    return RX_OK;
}

/* How far into path the URI's part starts (what is above it is root or
 * alias, never created). */
size_t
rx_http_dav_root_len(const char *path, size_t uri_len)
{
    size_t len = strlen(path);

    return len > uri_len ? len - uri_len : 0;
}

rx_http_dav_ctx_t *
rx_http_dav_ctx(rx_http_request_t *r)
{
    rx_http_dav_ctx_t *ctx = rx_pcalloc(r->pool, sizeof(*ctx));

    if (ctx == NULL) {
        return NULL;
    }
    ctx->conf = rx_http_get_module_loc_conf(r, rx_http_dav_module);
    ctx->fd = -1;
    ctx->copy.src_fd = -1;
    ctx->copy.dst_fd = -1;
    r->ctx = ctx;
    r->op_handler = rx_http_dav_op;
    return ctx;
}

/* A path mapped from the URI, without its trailing '/' (and with runs of
 * '/' merged, as nginx's dav does). */
rx_int_t
rx_http_dav_map(rx_http_request_t *r, char **out)
{
    rx_str_t path;
    char    *p, *q;

    if (rx_http_map_uri_to_path(r, &path, 0) != RX_OK) {
        return RX_ERROR;
    }
    for (p = q = path.data; *p; ) {
        *q++ = *p;
        if (*p++ == '/') {
            while (*p == '/') p++;
        }
    }
    if (q - path.data > 1 && q[-1] == '/') {
        q--;
    }
    *q = '\0';
    *out = path.data;
    return RX_OK;
}

/* ------------------------------------------------------------------ PUT */

static void
put_unlinked(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_request_log_error(r, RX_LOG_CRIT, -res, "unlink() \"%s\" "
                                  "failed", ctx->temp);
    }
    rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
}

/* The temporary name cannot become the file: it goes, and 500. */
static void
put_drop_temp(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    ctx->next = put_unlinked;
    rx_ring_unlinkat(AT_FDCWD, ctx->temp, 0, rx_http_op_ud(r, RX_OP_FS));
}

static void
put_renamed(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_request_log_error(r, RX_LOG_CRIT, -res, "rename() \"%s\" to "
                                  "\"%s\" failed", ctx->temp, ctx->path);
        put_drop_temp(r, ctx);
        return;
    }
    rx_http_dav_finish(r, ctx, RX_OK);
}

static void
put_rename(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    ctx->next = put_renamed;
    rx_ring_renameat(AT_FDCWD, ctx->temp, AT_FDCWD, ctx->path, 0,
                     rx_http_op_ud(r, RX_OP_FS));
}

static void
put_copied(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, rx_int_t rc)
{
    if (rc != RX_OK) {
        put_drop_temp(r, ctx);
        return;
    }
    put_rename(r, ctx);
}

static void
put_path_made(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    put_link(r, ctx);
}

static void
put_linked(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    switch (-res) {
    case 0:
        put_rename(r, ctx);
        return;
    case EEXIST:                          /* the temporary name is taken */
        if (++ctx->tries < 8) {
            put_link(r, ctx);
            return;
        }
        break;
    case ENOENT:
        if (ctx->conf->create_full_put_path && !ctx->made_path) {
            ctx->made_path = true;
            rx_http_dav_mkpath(r, ctx, ctx->path,
                rx_http_dav_root_len(ctx->path, r->uri.len), put_path_made);
            return;
        }
        /* RFC 4918 9.7.1: a missing parent collection is a conflict */
        rx_http_request_log_error(r, RX_LOG_ERR, ENOENT, "rename() of the "
            "request body in \"%s\" to \"%s\" failed",
            clcf->client_body_temp_path.data, ctx->path);
        rx_http_dav_finish(r, ctx, RX_HTTP_CONFLICT);
        return;
    case EXDEV:
        /* client_body_temp_path is on another file system: copied beside
         * the target, then renamed over it (nginx's ngx_ext_rename_file) */
        ctx->copy.src = NULL;
        ctx->copy.src_fd = ctx->fd;
        ctx->copy.dst = ctx->temp;
        ctx->copy.dst_flags = O_EXCL;
        ctx->copy.mode = (mode_t) ctx->conf->access;
        ctx->copy.keep_time = true;       /* the Date already set on it */
        ctx->copy.done = put_copied;
        rx_http_dav_copy_file(r, ctx);
        return;
    default:
        break;
    }
    rx_http_dav_finish(r, ctx, rx_http_dav_error(r, -res, RX_HTTP_CONFLICT,
                                                 "link()", ctx->temp));
}

static void
put_link(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    if (rx_http_dav_temp_name(r, ctx, ctx->path) != RX_OK) {
        rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    /* the O_TMPFILE file gets a name through its /proc link (linkat with
     * AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH) */
    snprintf(ctx->proc, sizeof(ctx->proc), "/proc/self/fd/%d", ctx->fd);
    ctx->next = put_linked;
    rx_ring_linkat(AT_FDCWD, ctx->proc, AT_FDCWD, ctx->temp, AT_SYMLINK_FOLLOW,
                   rx_http_op_ud(r, RX_OP_FS));
}

static void
put_stat(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        ctx->status = 201;
    } else if (S_ISDIR(ctx->stx.stx_mode)) {
        rx_http_request_log_error(r, RX_LOG_ERR, EISDIR, "\"%s\" could not be "
                                  "created", ctx->path);
        rx_http_dav_finish(r, ctx, RX_HTTP_CONFLICT);
        return;
    } else {
        ctx->status = RX_HTTP_NO_CONTENT;
    }
    put_link(r, ctx);
}

static void
put_have_file(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    rx_table_elt_t  *date = rx_http_dav_header(r, "Date");
    struct timespec  ts[2];
    time_t           t;

    /* metadata of an open file, no io_uring operation for either: the
     * mode exactly (no umask), and the client's Date as its time (nginx) */
    if (fchmod(ctx->fd, (mode_t) ctx->conf->access) == -1) {
        rx_http_request_log_error(r, RX_LOG_CRIT, errno, "chmod() of the "
                                  "request body for \"%s\" failed", ctx->path);
        rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    if (date && (t = rx_http_parse_date(date->value.data, date->value.len))
                != (time_t) -1) {
        ts[0].tv_sec = ts[1].tv_sec = t;
        ts[0].tv_nsec = ts[1].tv_nsec = 0;
        if (futimens(ctx->fd, ts) == -1) {
            rx_http_request_log_error(r, RX_LOG_CRIT, errno, "utimes() of the "
                "request body for \"%s\" failed", ctx->path);
            rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
    }
    ctx->next = put_stat;
    rx_ring_statx(AT_FDCWD, ctx->path, 0, STATX_TYPE, &ctx->stx,
                  rx_http_op_ud(r, RX_OP_STATX));
}

static void
put_opened(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);

    if (res < 0) {
        rx_http_request_log_error(r, RX_LOG_CRIT, -res, "creating a temporary "
            "file in \"%s\" for the PUT request body failed",
            clcf->client_body_temp_path.data);
        rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    ctx->empty->fd = res;                 /* its cleanup closes it */
    ctx->fd = res;
    put_have_file(r, ctx);
}

static void
temp_release(void *data)
{
    rx_http_temp_free(data);
}

/* The whole body is in its file (the body owner wrote it there). */
static void
put_body_done(rx_http_request_t *r)
{
    rx_http_dav_ctx_t       *ctx = r->ctx;
    rx_http_request_body_t  *rb = r->request_body;
    rx_http_core_loc_conf_t *clcf;
    rx_pool_cleanup_t       *cln;

    r->op_handler = rx_http_dav_op;
    if (rb && rb->file && rb->file->fd != -1) {
        ctx->fd = rb->file->fd;
        put_have_file(r, ctx);
        return;
    }
    /* an empty body: an empty file, made the same way */
    clcf = rx_http_get_module_loc_conf(r, rx_http_core_module);
    ctx->empty = rx_palloc(r->pool, sizeof(rx_http_temp_file_t));
    cln = rx_pool_cleanup_add(r->pool, 0);
    if (ctx->empty == NULL || cln == NULL) {
        rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    rx_http_temp_init(ctx->empty, clcf->client_body_temp_path.data);
    cln->handler = temp_release;
    cln->data = ctx->empty;
    ctx->next = put_opened;
    rx_http_temp_kick(r, ctx->empty);
}

static rx_int_t
dav_put(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    rx_http_body_reader_t reader = { 0 };
    rx_int_t              rc;

    if (r->uri.data[r->uri.len - 1] == '/') {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "cannot PUT to a "
                                  "collection");
        return RX_HTTP_CONFLICT;
    }
    if (rx_http_dav_header(r, "Content-Range")) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "PUT with range is "
                                  "unsupported");
        return RX_HTTP_NOT_IMPLEMENTED;
    }
    if (rx_http_dav_map(r, &ctx->path) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    r->op_handler = NULL;                 /* the body owner's, until done */
    reader.post_handler = put_body_done;
    reader.spill = true;
    reader.file_only = true;
    rc = rx_http_read_client_request_body(r, &reader);
    return rc == RX_OK ? RX_AGAIN : rc;
}

/* --------------------------------------------------------------- DELETE */

static void
delete_removed(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_dav_finish(r, ctx, rx_http_dav_error(r, -res,
            RX_HTTP_NOT_FOUND, ctx->failed, ctx->path));
        return;
    }
    rx_http_dav_finish(r, ctx, RX_OK);
}

/* A tree's contents are gone (DELETE, or MOVE's source after its copy):
 * now its directory, and the answer. */
void
rx_http_dav_tree_walked(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    rx_int_t rc)
{
    if (rc != RX_OK) {
        rx_http_dav_finish(r, ctx, rc);
        return;
    }
    ctx->failed = "rmdir()";
    ctx->next = delete_removed;
    rx_ring_unlinkat(AT_FDCWD, ctx->path, AT_REMOVEDIR,
                     rx_http_op_ud(r, RX_OP_FS));
}

static void
delete_stat(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_int_t depth;

    if (res < 0) {
        rx_http_dav_finish(r, ctx, rx_http_dav_error(r, -res,
            res == -ENOTDIR ? RX_HTTP_CONFLICT : RX_HTTP_NOT_FOUND, "lstat()",
            ctx->path));
        return;
    }
    ctx->status = RX_HTTP_NO_CONTENT;
    if (S_ISDIR(ctx->stx.stx_mode)) {
        if (r->uri.data[r->uri.len - 1] != '/') {
            rx_http_request_log_error(r, RX_LOG_ERR, EISDIR, "DELETE \"%s\" "
                                      "failed", ctx->path);
            rx_http_dav_finish(r, ctx, RX_HTTP_CONFLICT);
            return;
        }
        if (rx_http_dav_depth(r, RX_HTTP_DAV_INFINITY) != RX_HTTP_DAV_INFINITY) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"Depth\" header "
                                      "must be infinity");
            rx_http_dav_finish(r, ctx, RX_HTTP_BAD_REQUEST);
            return;
        }
        rx_http_dav_walk(r, ctx, ctx->path, NULL, rx_http_dav_tree_walked);
        return;
    }
    depth = rx_http_dav_depth(r, 0);
    if (depth != 0 && depth != RX_HTTP_DAV_INFINITY) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"Depth\" header must be "
                                  "0 or infinity");
        rx_http_dav_finish(r, ctx, RX_HTTP_BAD_REQUEST);
        return;
    }
    ctx->failed = "unlink()";
    ctx->next = delete_removed;
    rx_ring_unlinkat(AT_FDCWD, ctx->path, 0, rx_http_op_ud(r, RX_OP_FS));
}

static rx_int_t
dav_delete(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    rx_int_t  d = 0;
    size_t    i;

    if (r->headers_in.content_length_n > 0 || r->headers_in.chunked) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "DELETE with body is "
                                  "unsupported");
        return RX_HTTP_UNSUPPORTED_MEDIA_TYPE;
    }
    if (ctx->conf->min_delete_depth) {
        /* as many '/' as asked, with something after the last one */
        for (i = 0; i < r->uri.len; ) {
            if (r->uri.data[i++] == '/' && ++d >= ctx->conf->min_delete_depth
                && i < r->uri.len) {
                goto ok;
            }
        }
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "insufficient URI "
                                  "depth:%ld to DELETE", (long) d);
        return RX_HTTP_CONFLICT;
    }
ok:
    if (rx_http_dav_map(r, &ctx->path) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    ctx->next = delete_stat;
    rx_ring_statx(AT_FDCWD, ctx->path, AT_SYMLINK_NOFOLLOW, STATX_TYPE,
                  &ctx->stx, rx_http_op_ud(r, RX_OP_STATX));
    return RX_AGAIN;
}

/* ---------------------------------------------------------------- MKCOL */

static void
mkcol_done(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_dav_finish(r, ctx, rx_http_dav_error(r, -res, RX_HTTP_CONFLICT,
                                                     "mkdir()", ctx->path));
        return;
    }
    ctx->status = 201;
    rx_http_dav_finish(r, ctx, RX_OK);
}

static rx_int_t
dav_mkcol(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    if (r->headers_in.content_length_n > 0 || r->headers_in.chunked) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "MKCOL with body is "
                                  "unsupported");
        return RX_HTTP_UNSUPPORTED_MEDIA_TYPE;
    }
    if (r->uri.data[r->uri.len - 1] != '/') {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "MKCOL can create a "
                                  "collection only");
        return RX_HTTP_CONFLICT;
    }
    if (rx_http_dav_map(r, &ctx->path) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    ctx->next = mkcol_done;
    rx_ring_mkdirat(AT_FDCWD, ctx->path,
                    rx_http_dav_dir_access(ctx->conf->access),
                    rx_http_op_ud(r, RX_OP_FS));
    return RX_AGAIN;
}

/* -------------------------------------------------------------- handler */

static rx_int_t
dav_handler(rx_http_request_t *r)
{
    rx_http_dav_conf_t *conf = rx_http_get_module_loc_conf(r,
                                  rx_http_dav_module);
    rx_http_dav_ctx_t  *ctx;
    rx_int_t            rc;

    if (!(r->method & conf->methods & DAV_METHODS) || r->uri.len == 0) {
        return RX_DECLINED;
    }
    ctx = rx_http_dav_ctx(r);
    if (ctx == NULL) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    switch (r->method) {
    case RX_HTTP_PUT:
        rc = dav_put(r, ctx);
        break;
    case RX_HTTP_DELETE:
        rc = dav_delete(r, ctx);
        break;
    case RX_HTTP_MKCOL:
        rc = dav_mkcol(r, ctx);
        break;
    default:
        rc = rx_http_dav_copy_move(r, ctx);
        break;
    }
    if (rc != RX_AGAIN) {
        r->op_handler = NULL;             /* nothing of ours in flight */
    }
    return rc;
}

static rx_int_t
dav_postconfiguration(rx_conf_t *cf)
{
    return rx_http_add_phase_handler(cf, RX_HTTP_CONTENT_PHASE, dav_handler);
}
