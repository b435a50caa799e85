/*
 * http_open_file_conf.c: the directives of how files are opened:
 * open_file_cache, open_file_cache_valid, open_file_cache_min_uses,
 * open_file_cache_errors and disable_symlinks (http, server, location,
 * as in nginx's core module), and ringx's small_file_cache, with their
 * merges.
 */
#include "http_open_file_int.h"

#define DEFAULT_INACTIVE  60
/* small_file_cache without the directive: per worker */
#define CONTENT_SIZE      (1024 * 1024)
#define CONTENT_FILE      (32 * 1024)
#define CONTENT_FILE_MAX  (128 * 1024)    /* static's read chunk */

static const char *set_open_file_cache(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_disable_symlinks(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static const char *set_small_file_cache(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);
static void *create_conf(rx_conf_t *cf);
static const char *merge_conf(rx_conf_t *cf, void *prev, void *conf);


static const rx_conf_bounds_t min_uses_bounds = { 1, 0 };

static const rx_command_t open_file_commands[] = {
    { "open_file_cache", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE12, set_open_file_cache,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "open_file_cache_valid", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, rx_conf_set_sec_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_open_file_conf_t, valid), NULL },
    { "open_file_cache_min_uses", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE1, rx_conf_set_num_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_open_file_conf_t, min_uses),
      &min_uses_bounds },
    { "open_file_cache_errors", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_FLAG, rx_conf_set_flag_slot,
      RX_HTTP_LOC_CONF_OFFSET, offsetof(rx_http_open_file_conf_t, errors), NULL },
    { "disable_symlinks", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE12, set_disable_symlinks,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "small_file_cache", RX_HTTP_MAIN_CONF | RX_HTTP_SRV_CONF | RX_HTTP_LOC_CONF
      | RX_CONF_TAKE12, set_small_file_cache,
      RX_HTTP_LOC_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t open_file_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, create_conf, merge_conf
};

rx_module_t rx_http_open_file_module = {
    "rx_http_open_file_module", 0, 0, RX_HTTP_MODULE, &open_file_ctx,
    open_file_commands, NULL, NULL, NULL, NULL
};

static void *
create_conf(rx_conf_t *cf)
{
    rx_http_open_file_conf_t *c = rx_pcalloc(cf->pool, sizeof(*c));

    if (c) {
        c->cache = RX_CONF_UNSET_PTR;
        c->valid = RX_CONF_UNSET_MSEC;
        c->min_uses = RX_CONF_UNSET;
        c->errors = RX_CONF_UNSET;
        c->symlinks = RX_CONF_UNSET_UINT;
        c->from = RX_CONF_UNSET_PTR;
        c->content = RX_CONF_UNSET_PTR;
    }
    return c;
}

static const char *
merge_conf(rx_conf_t *cf, void *prev, void *conf)
{
    rx_http_open_file_conf_t *p = prev, *c = conf;

    (void) cf;
    /* a location without its own open_file_cache shares its parent's:
     * one cache per directive, as in nginx */
    rx_conf_merge_ptr(c->cache, p->cache, NULL);
    /* small_file_cache: one store per directive, as open_file_cache; the
     * default one is made once per configuration, at the first merge */
    if (c->content == RX_CONF_UNSET_PTR) {
        if (p->content == RX_CONF_UNSET_PTR) {
            p->content = rx_http_file_content_create(cf->pool, CONTENT_SIZE,
                                                     CONTENT_FILE);
            if (p->content == NULL) {
                return RX_CONF_ERROR;
            }
        }
        c->content = p->content;
    }
    rx_conf_merge_msec(c->valid, p->valid, 60);
    rx_conf_merge_value(c->min_uses, p->min_uses, 1);
    rx_conf_merge_value(c->errors, p->errors, 0);
    if (c->symlinks == RX_CONF_UNSET_UINT) {
        c->symlinks = p->symlinks == RX_CONF_UNSET_UINT ? RX_SYMLINKS_OFF
                                                        : p->symlinks;
        c->from = p->from;
    }
    rx_conf_merge_ptr(c->from, p->from, NULL);
    return RX_CONF_OK;
}

/* open_file_cache off | max=N [inactive=time] */
static const char *
set_open_file_cache(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_open_file_conf_t *c = conf;
    rx_str_t                 *value = cf->args->elts, s;
    rx_int_t                  max = 0, inactive = DEFAULT_INACTIVE;
    rx_uint_t                 i;

    (void) cmd;
    if (c->cache != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    for (i = 1; i < cf->args->nelts; i++) {
        if (value[i].len > 4 && strncmp(value[i].data, "max=", 4) == 0) {
            max = rx_atoi(value[i].data + 4, value[i].len - 4);
            if (max <= 0) {
                goto invalid;
            }
        } else if (value[i].len > 9
                   && strncmp(value[i].data, "inactive=", 9) == 0) {
            s.data = value[i].data + 9;
            s.len = value[i].len - 9;
            inactive = rx_parse_time(&s, true);
            if (inactive < 0) {
                goto invalid;
            }
        } else if (rx_str_eq(&value[i], "off")) {
            c->cache = NULL;
        } else {
            goto invalid;
        }
    }
    if (c->cache == NULL) {
        return RX_CONF_OK;
    }
    if (max == 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                          "\"open_file_cache\" must have the \"max\" parameter");
        return RX_CONF_ERROR;
    }
    c->cache = rx_http_file_cache_create(cf->pool, (rx_uint_t) max,
                                         (time_t) inactive);
    /* each cache may keep max descriptors open (-t's budget) */
    cf->cycle->budget_cached_files += (rx_uint_t) max;
    return c->cache ? RX_CONF_OK : RX_CONF_ERROR;

invalid:
    rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                      "invalid \"open_file_cache\" parameter \"%s\"",
                      value[i].data);
    return RX_CONF_ERROR;
}

/* disable_symlinks off | on | if_not_owner [from=part] */
static const char *
set_disable_symlinks(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_open_file_conf_t *c = conf;
    rx_str_t                 *value = cf->args->elts, from;
    rx_uint_t                 i;

    (void) cmd;
    if (c->symlinks != RX_CONF_UNSET_UINT) {
        return "is duplicate";
    }
    c->from = NULL;
    for (i = 1; i < cf->args->nelts; i++) {
        if (c->symlinks != RX_CONF_UNSET_UINT
            && (rx_str_eq(&value[i], "off") || rx_str_eq(&value[i], "on")
                || rx_str_eq(&value[i], "if_not_owner"))) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[i].data);
            return RX_CONF_ERROR;
        }
        if (rx_str_eq(&value[i], "off")) {
            c->symlinks = RX_SYMLINKS_OFF;
        } else if (rx_str_eq(&value[i], "on")) {
            c->symlinks = RX_SYMLINKS_ON;
        } else if (rx_str_eq(&value[i], "if_not_owner")) {
            c->symlinks = RX_SYMLINKS_NOT_OWNER;
        } else if (value[i].len > 5 && strncmp(value[i].data, "from=", 5) == 0) {
            from.data = value[i].data + 5;
            from.len = value[i].len - 5;
            c->from = rx_pcalloc(cf->pool, sizeof(*c->from));
            if (c->from == NULL
                || rx_http_compile_complex_value(cf, &from, c->from) != RX_OK) {
                return RX_CONF_ERROR;
            }
        } else {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\"",
                              value[i].data);
            return RX_CONF_ERROR;
        }
    }
    if (c->symlinks == RX_CONF_UNSET_UINT) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"off\", \"on\" or "
                          "\"if_not_owner\" parameter expected");
        return RX_CONF_ERROR;
    }
    if (c->from && c->symlinks == RX_SYMLINKS_OFF) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"from=\" cannot be used "
                          "with \"off\" parameter");
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

/* small_file_cache off | [size=SIZE] [file=SIZE] */
static const char *
set_small_file_cache(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_open_file_conf_t *c = conf;
    rx_str_t                 *value = cf->args->elts, v;
    ssize_t                   size = CONTENT_SIZE, file = CONTENT_FILE, n;
    rx_uint_t                 i;

    (void) cmd;
    if (c->content != RX_CONF_UNSET_PTR) {
        return "is duplicate";
    }
    if (cf->args->nelts == 2 && rx_str_eq(&value[1], "off")) {
        c->content = NULL;
        return RX_CONF_OK;
    }
    for (i = 1; i < cf->args->nelts; i++) {
        bool is_size = value[i].len > 5
                       && strncmp(value[i].data, "size=", 5) == 0;
        bool is_file = value[i].len > 5
                       && strncmp(value[i].data, "file=", 5) == 0;

        if (!is_size && !is_file) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameter \"%s\": "
                              "\"off\", \"size=\" or \"file=\" expected",
                              value[i].data);
            return RX_CONF_ERROR;
        }
        v.data = value[i].data + 5;
        v.len = value[i].len - 5;
        n = rx_parse_size(&v);
        if (n <= 0 || (is_file && n > CONTENT_FILE_MAX)) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid %s \"%s\"%s",
                              is_size ? "size" : "file size", value[i].data,
                              is_file ? " (at most 128k)" : "");
            return RX_CONF_ERROR;
        }
        if (is_size) size = n; else file = n;
    }
    c->content = rx_http_file_content_create(cf->pool, (size_t) size,
                                             (size_t) file);
    return c->content ? RX_CONF_OK : RX_CONF_ERROR;
}
