/*
 * dav_copy.c: WebDAV's COPY and MOVE (modules/dav.c's methods): the
 * Destination header (same server, a safe path mapped through the same
 * root or alias), Overwrite and Depth with nginx's rules, then the work
 * on the ring: rename, or a copy of the file or of the tree (dav_tree.c),
 * and for MOVE the source's removal after a copy. A file answers 204, a
 * collection 201, as nginx.
 */
#include <fcntl.h>
#include "dav.h"
#include "http_uri.h"

static void cm_dir(rx_http_request_t *r, rx_http_dav_ctx_t *ctx);

static rx_int_t
invalid_destination(rx_http_request_t *r, const rx_table_elt_t *dest)
{
    rx_http_request_log_error(r, RX_LOG_ERR, 0, "client sent invalid "
        "\"Destination\" header: \"%.*s\"", (int) dest->value.len,
        dest->value.data);
    return RX_HTTP_BAD_REQUEST;
}

/* The Destination's path, decoded and checked as an X-Accel-Redirect URI
 * is (no "..", no NUL): an absolute URI must name this server. */
static rx_int_t
destination(rx_http_request_t *r, const rx_table_elt_t *dest, rx_str_t *duri)
{
    const char *p = dest->value.data, *last = p + dest->value.len, *host;
    rx_str_t    server = r->headers_in.server, uri, args;
    size_t      n;

    if (dest->value.len && p[0] != '/') {
        if (server.len == 0) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "client sent no "
                                      "\"Host\" header");
            return RX_HTTP_BAD_REQUEST;
        }
        n = rx_http_conn_is_tls(r->conn) ? 8 : 7;
        if ((size_t) (last - p) < n
            || strncmp(p, n == 8 ? "https://" : "http://", n) != 0) {
            return invalid_destination(r, dest);
        }
        host = p + n;
        if ((size_t) (last - host) < server.len
            || strncasecmp(host, server.data, server.len) != 0
            || (host + server.len < last && host[server.len] != '/'
                && host[server.len] != ':')) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"Destination\" URI "
                "\"%.*s\" is handled by different repository than the source "
                "URI", (int) dest->value.len, dest->value.data);
            return RX_HTTP_BAD_REQUEST;
        }
        for (p = host + server.len; p < last && *p != '/'; p++) {
            if (p > host + server.len && (*p < '0' || *p > '9')) {
                return invalid_destination(r, dest);     /* a bad port */
            }
        }
        if (p == last) {
            return invalid_destination(r, dest);
        }
    }
    uri.data = (char *) p;
    uri.len = (size_t) (last - p);
    if (uri.len == 0
        || rx_http_parse_unsafe_uri(r->pool, &uri, duri, &args) != RX_OK) {
        return invalid_destination(r, dest);
    }
    return RX_OK;
}

/* nginx's checks of the two paths (without trailing '/'): not the same,
 * and a collection not into itself nor onto one of its parents. */
static rx_int_t
validate_paths(rx_http_request_t *r, rx_http_dav_ctx_t *ctx,
    const rx_table_elt_t *dest)
{
    size_t sl = strlen(ctx->path), dl = strlen(ctx->dest), n = rx_min(sl, dl);

    if (sl == dl && strcmp(ctx->path, ctx->dest) == 0) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "both URI \"%.*s\" and "
            "\"Destination\" URI \"%.*s\" point to the same location",
            (int) r->uri.len, r->uri.data, (int) dest->value.len,
            dest->value.data);
        return RX_HTTP_FORBIDDEN;
    }
    if (ctx->slash && strncmp(ctx->path, ctx->dest, n) == 0
        && (sl < dl ? ctx->dest[sl] == '/' : ctx->path[dl] == '/')) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"%.*s\" could not be "
            "%.*sed to collection \"%.*s\"", (int) r->uri.len, r->uri.data,
            (int) r->method_name.len, r->method_name.data,
            (int) dest->value.len, dest->value.data);
        return RX_HTTP_FORBIDDEN;
    }
    return RX_OK;
}

/* ------------------------------------------------------------ the work */

static void
cm_done(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, rx_int_t rc)
{
    rx_http_dav_finish(r, ctx, rc);
}

static void
cm_tree_copied(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, rx_int_t rc)
{
    if (rc != RX_OK || r->method != RX_HTTP_MOVE) {
        rx_http_dav_finish(r, ctx, rc);
        return;
    }
    rx_http_dav_walk(r, ctx, ctx->path, NULL, rx_http_dav_tree_walked);
}

static void
cm_dir_made(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_dav_finish(r, ctx, rx_http_dav_error(r, -res,
            RX_HTTP_NOT_FOUND, "mkdir()", ctx->dest));
        return;
    }
    rx_http_dav_walk(r, ctx, ctx->path, ctx->dest, cm_tree_copied);
}

static void
cm_dir_renamed(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res == 0) {
        rx_http_dav_finish(r, ctx, RX_OK);
        return;
    }
    /* another file system (or a rename refused): copied, then removed */
    ctx->next = cm_dir_made;
    rx_ring_mkdirat(AT_FDCWD, ctx->dest, ctx->stx.stx_mode & 0777,
                    rx_http_op_ud(r, RX_OP_FS));
}

static void
cm_dir(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    if (r->method == RX_HTTP_MOVE) {
        ctx->next = cm_dir_renamed;
        rx_ring_renameat(AT_FDCWD, ctx->path, AT_FDCWD, ctx->dest, 0,
                         rx_http_op_ud(r, RX_OP_FS));
        return;
    }
    cm_dir_renamed(r, ctx, -EXDEV);
}

/* Overwriting a collection: what is at the destination goes first. */
static void
cm_dest_removed(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_dav_finish(r, ctx, rx_http_dav_error(r, -res,
            RX_HTTP_NOT_FOUND, ctx->failed, ctx->dest));
        return;
    }
    cm_dir(r, ctx);
}

static void
cm_dest_walked(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, rx_int_t rc)
{
    if (rc != RX_OK) {
        rx_http_dav_finish(r, ctx, rc);
        return;
    }
    ctx->failed = "rmdir()";
    ctx->next = cm_dest_removed;
    rx_ring_unlinkat(AT_FDCWD, ctx->dest, AT_REMOVEDIR,
                     rx_http_op_ud(r, RX_OP_FS));
}

/* MOVE of a file that needed a copy: the copy takes the name, the
 * source goes. */
static void
mv_source_unlinked(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_request_log_error(r, RX_LOG_CRIT, -res, "unlink() \"%s\" "
                                  "failed", ctx->path);
        rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    rx_http_dav_finish(r, ctx, RX_OK);
}

static void
mv_copy_renamed(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_request_log_error(r, RX_LOG_CRIT, -res, "rename() \"%s\" to "
                                  "\"%s\" failed", ctx->temp, ctx->dest);
        (void) unlink(ctx->temp);         /* rare: a failure after a copy */
        rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    ctx->next = mv_source_unlinked;
    rx_ring_unlinkat(AT_FDCWD, ctx->path, 0, rx_http_op_ud(r, RX_OP_FS));
}

static void
mv_copied(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, rx_int_t rc)
{
    if (rc != RX_OK) {
        (void) unlink(ctx->temp);         /* rare: the copy failed */
        rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    ctx->next = mv_copy_renamed;
    rx_ring_renameat(AT_FDCWD, ctx->temp, AT_FDCWD, ctx->dest, 0,
                     rx_http_op_ud(r, RX_OP_FS));
}

static void mv_rename(rx_http_request_t *r, rx_http_dav_ctx_t *ctx);

static void
mv_renamed(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res == 0) {
        rx_http_dav_finish(r, ctx, RX_OK);
        return;
    }
    if (res == -ENOENT && !ctx->made_path) {
        /* nginx's MOVE creates the destination's path */
        ctx->made_path = true;
        rx_http_dav_mkpath(r, ctx, ctx->dest,
                           rx_http_dav_root_len(ctx->dest, ctx->dest_uri_len), mv_rename);
        return;
    }
    if (res == -EXDEV && rx_http_dav_temp_name(r, ctx, ctx->dest) == RX_OK) {
        ctx->copy.src = ctx->path;
        ctx->copy.src_fd = -1;
        ctx->copy.dst = ctx->temp;
        ctx->copy.dst_flags = O_EXCL;
        ctx->copy.mode = 0;
        ctx->copy.keep_time = true;
        ctx->copy.done = mv_copied;
        rx_http_dav_copy_file(r, ctx);
        return;
    }
    rx_http_request_log_error(r, RX_LOG_CRIT, -res, "rename() \"%s\" to "
                              "\"%s\" failed", ctx->path, ctx->dest);
    rx_http_dav_finish(r, ctx, RX_HTTP_INTERNAL_SERVER_ERROR);
}

static void
mv_rename(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    ctx->next = mv_renamed;
    rx_ring_renameat(AT_FDCWD, ctx->path, AT_FDCWD, ctx->dest, 0,
                     rx_http_op_ud(r, RX_OP_FS));
}

static void
cm_src_stat(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    if (res < 0) {
        rx_http_dav_finish(r, ctx, rx_http_dav_error(r, -res,
            RX_HTTP_NOT_FOUND, "lstat()", ctx->path));
        return;
    }
    if (S_ISDIR(ctx->stx.stx_mode)) {
        if (r->uri.data[r->uri.len - 1] != '/') {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"%.*s\" is "
                "collection", (int) r->uri.len, r->uri.data);
            rx_http_dav_finish(r, ctx, RX_HTTP_BAD_REQUEST);
            return;
        }
        ctx->status = 201;
        if (!ctx->overwrite) {
            cm_dir(r, ctx);
        } else if (ctx->dest_dir) {
            rx_http_dav_walk(r, ctx, ctx->dest, NULL, cm_dest_walked);
        } else {
            ctx->failed = "unlink()";
            ctx->next = cm_dest_removed;
            rx_ring_unlinkat(AT_FDCWD, ctx->dest, 0,
                             rx_http_op_ud(r, RX_OP_FS));
        }
        return;
    }
    ctx->status = RX_HTTP_NO_CONTENT;
    if (r->method == RX_HTTP_MOVE) {
        mv_rename(r, ctx);
        return;
    }
    ctx->copy.src = ctx->path;
    ctx->copy.src_fd = -1;
    ctx->copy.dst = ctx->dest;
    ctx->copy.dst_flags = O_TRUNC;
    ctx->copy.mode = 0;
    ctx->copy.keep_time = true;
    ctx->copy.done = cm_done;
    rx_http_dav_copy_file(r, ctx);
}

static void
cm_dest_stat(rx_http_request_t *r, rx_http_dav_ctx_t *ctx, int res)
{
    rx_table_elt_t *dest = rx_http_dav_header(r, "Destination");

    if (res < 0) {
        if (res != -ENOENT) {
            rx_http_dav_finish(r, ctx, rx_http_dav_error(r, -res,
                RX_HTTP_NOT_FOUND, "lstat()", ctx->dest));
            return;
        }
        ctx->overwrite = false;           /* nothing there */
        ctx->dest_dir = false;
    } else {
        if (S_ISDIR(ctx->stx.stx_mode) && !ctx->slash) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"%.*s\" could not "
                "be %.*sed to collection \"%.*s\"", (int) r->uri.len,
                r->uri.data, (int) r->method_name.len, r->method_name.data,
                (int) dest->value.len, dest->value.data);
            rx_http_dav_finish(r, ctx, RX_HTTP_CONFLICT);
            return;
        }
        if (!ctx->overwrite) {
            rx_http_request_log_error(r, RX_LOG_ERR, EEXIST, "\"%s\" could "
                                      "not be created", ctx->dest);
            rx_http_dav_finish(r, ctx, RX_HTTP_PRECONDITION_FAILED);
            return;
        }
        ctx->dest_dir = S_ISDIR(ctx->stx.stx_mode);
    }
    ctx->next = cm_src_stat;
    rx_ring_statx(AT_FDCWD, ctx->path, AT_SYMLINK_NOFOLLOW,
                  STATX_TYPE | STATX_MODE, &ctx->stx,
                  rx_http_op_ud(r, RX_OP_STATX));
}

/* ----------------------------------------------------------- the method */

static rx_int_t
overwrite(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    rx_table_elt_t *over = rx_http_dav_header(r, "Overwrite");
    char            ch;

    ctx->overwrite = true;
    if (over == NULL) {
        return RX_OK;
    }
    ch = over->value.len == 1 ? over->value.data[0] : '\0';
    if (ch == 'T' || ch == 't' || ch == 'F' || ch == 'f') {
        ctx->overwrite = (ch == 'T' || ch == 't');
        return RX_OK;
    }
    rx_http_request_log_error(r, RX_LOG_ERR, 0, "client sent invalid "
        "\"Overwrite\" header: \"%.*s\"", (int) over->value.len,
        over->value.data);
    return RX_HTTP_BAD_REQUEST;
}

rx_int_t
rx_http_dav_copy_move(rx_http_request_t *r, rx_http_dav_ctx_t *ctx)
{
    rx_http_core_loc_conf_t *clcf = rx_http_get_module_loc_conf(r,
                                       rx_http_core_module);
    rx_table_elt_t          *dest;
    rx_str_t                 duri, uri;
    rx_int_t                 rc, depth;

    if (r->headers_in.content_length_n > 0 || r->headers_in.chunked) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "COPY and MOVE with body "
                                  "are unsupported");
        return RX_HTTP_UNSUPPORTED_MEDIA_TYPE;
    }
    dest = rx_http_dav_header(r, "Destination");
    if (dest == NULL) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "client sent no "
                                  "\"Destination\" header");
        return RX_HTTP_BAD_REQUEST;
    }
    if ((rc = destination(r, dest, &duri)) != RX_OK) {
        return rc;
    }
    ctx->slash = r->uri.data[r->uri.len - 1] == '/';
    if (ctx->slash != (duri.data[duri.len - 1] == '/')) {
        rx_http_request_log_error(r, RX_LOG_ERR, 0, "both URI \"%.*s\" and "
            "\"Destination\" URI \"%.*s\" should be either collections or "
            "non-collections", (int) r->uri.len, r->uri.data,
            (int) dest->value.len, dest->value.data);
        return RX_HTTP_CONFLICT;
    }
    /* an alias replaces the location's prefix: a destination outside the
     * location would map to a wrong path (nginx checks the length only) */
    if (clcf->alias && clcf->match != RX_LOC_REGEX
        && clcf->match != RX_LOC_REGEX_CASELESS
        && (duri.len < clcf->name.len
            || memcmp(duri.data, clcf->name.data, clcf->name.len) != 0)) {
        return invalid_destination(r, dest);
    }
    depth = rx_http_dav_depth(r, RX_HTTP_DAV_INFINITY);
    if (depth != RX_HTTP_DAV_INFINITY) {
        if (r->method == RX_HTTP_COPY && depth != 0) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"Depth\" header "
                                      "must be 0 or infinity");
            return RX_HTTP_BAD_REQUEST;
        }
        if (r->method == RX_HTTP_MOVE) {
            rx_http_request_log_error(r, RX_LOG_ERR, 0, "\"Depth\" header "
                                      "must be infinity");
            return RX_HTTP_BAD_REQUEST;
        }
    }
    if ((rc = overwrite(r, ctx)) != RX_OK) {
        return rc;
    }
    if (rx_http_dav_map(r, &ctx->path) != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    ctx->dest_uri_len = duri.len;
    uri = r->uri;
    r->uri = duri;                        /* mapped through the same root */
    rc = rx_http_dav_map(r, &ctx->dest);
    r->uri = uri;
    if (rc != RX_OK) {
        return RX_HTTP_INTERNAL_SERVER_ERROR;
    }
    if ((rc = validate_paths(r, ctx, dest)) != RX_OK) {
        return rc;
    }
    ctx->next = cm_dest_stat;
    rx_ring_statx(AT_FDCWD, ctx->dest, AT_SYMLINK_NOFOLLOW, STATX_TYPE,
                  &ctx->stx, rx_http_op_ud(r, RX_OP_STATX));
    return RX_AGAIN;
}
