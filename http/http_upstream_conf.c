/*
 * http_upstream_conf.c: the engine's settings in a location, with nginx's
 * defaults, merged for each protocol (proxy_*, fastcgi_*).
 */
#include <ctype.h>
#include "http.h"
#include "http_upstream.h"
#include "http_upstream_int.h"
#include "clock.h"


void
rx_http_upstream_init_conf(rx_http_upstream_conf_t *conf)
{
    conf->connect_timeout = RX_CONF_UNSET_MSEC;
    conf->send_timeout = RX_CONF_UNSET_MSEC;
    conf->read_timeout = RX_CONF_UNSET_MSEC;
    conf->next_upstream_timeout = RX_CONF_UNSET_MSEC;
    conf->next_upstream_tries = RX_CONF_UNSET_UINT;
    conf->buffer_size = RX_CONF_UNSET_SIZE;
    conf->bufs_num = RX_CONF_UNSET;
    conf->bufs_size = RX_CONF_UNSET_SIZE;
    conf->buffering = RX_CONF_UNSET;
    conf->request_buffering = RX_CONF_UNSET;
    conf->pass_request_headers = RX_CONF_UNSET;
    conf->pass_request_body = RX_CONF_UNSET;
    conf->intercept_errors = RX_CONF_UNSET;
    conf->ignore_client_abort = RX_CONF_UNSET;
    conf->hide_headers = RX_CONF_UNSET_PTR;
    conf->pass_headers = RX_CONF_UNSET_PTR;
    conf->limit_rate = RX_CONF_UNSET_PTR;
    conf->max_temp_file_size = RX_CONF_UNSET;
    rx_http_cache_init_conf(&conf->cache);
}

/* *_temp_path: inherited, else nginx's default PREFIX/<module>_temp (set
 * on prev, so that the locations below share it); the directory is made
 * only for a level that proxies (an explicit *_temp_path always is, as in
 * nginx). */
static rx_int_t
merge_temp_path(rx_conf_t *cf, rx_http_upstream_conf_t *conf,
    const rx_http_upstream_conf_t *prev)
{
    char *directive;

    if (conf->temp_path.data == NULL) {
        if (prev->temp_path.data == NULL) {
            /* nginx's default: PREFIX/<module>_temp */
            char     name[32];
            rx_str_t path;

            path.len = (size_t) snprintf(name, sizeof(name), "%s_temp",
                                         conf->module);
            path.data = name;
            if (rx_conf_full_name(cf->cycle, &path, false) != RX_OK) {
                return RX_ERROR;
            }
            ((rx_http_upstream_conf_t *) prev)->temp_path = path;
        }
        conf->temp_path = prev->temp_path;
    }
    if ((conf->upstream == NULL && conf->url == NULL)
        || rx_cycle_path(cf->cycle, conf->temp_path.data) != NULL) {
        return RX_OK;
    }
    directive = rx_pnalloc(cf->cycle->pool, strlen(conf->module)
                           + sizeof("_temp_path"));
    if (directive == NULL) {
        return RX_ERROR;
    }
    sprintf(directive, "%s_temp_path", conf->module);
    return rx_conf_add_path(cf, &conf->temp_path, directive);
}

/*
 * *_hide_header: the list of this level plus the protocol's defaults that
 * no *_pass_header lets through. RX_DONE when it is the parent's list,
 * inherited whole (nothing given here, the same *_pass_header); RX_OK,
 * RX_ERROR.
 */
static rx_int_t
merge_hide_headers(rx_conf_t *cf, rx_http_upstream_conf_t *conf,
    const rx_http_upstream_conf_t *prev, const char *const *default_hide)
{
    rx_str_t  *s;
    rx_uint_t  i, j;

    if (conf->hide_headers == RX_CONF_UNSET_PTR) {
        if (prev->hide_headers != RX_CONF_UNSET_PTR
            && conf->pass_headers == prev->pass_headers) {
            conf->hide_headers = prev->hide_headers;
            return RX_DONE;
        }
        conf->hide_headers = rx_array_create(cf->pool, 8, sizeof(rx_str_t));
    } else {
        /* proxy_hide_header given here: add nginx's defaults to it */
    }
    if (conf->hide_headers == NULL) {
        return RX_ERROR;
    }
    for (i = 0; default_hide && default_hide[i]; i++) {
        bool passed = false;

        if (conf->pass_headers) {
            s = conf->pass_headers->elts;
            for (j = 0; j < conf->pass_headers->nelts; j++) {
                if (strcasecmp(s[j].data, default_hide[i]) == 0) {
                    passed = true;
                }
            }
        }
        if (!passed) {
            s = rx_array_push(conf->hide_headers);
            if (s == NULL) {
                return RX_ERROR;
            }
            s->data = (char *) default_hide[i];
            s->len = strlen(default_hide[i]);
        }
    }
    return RX_OK;
}

/* nginx's defaults; hide_headers gets the protocol's default list minus
 * what *_pass_header lets through. */
const char *
rx_http_upstream_merge_conf(rx_conf_t *cf, rx_http_upstream_conf_t *conf,
    const rx_http_upstream_conf_t *prev, const char *const *default_hide)
{
    rx_int_t  rc;

    if (conf->upstream == NULL && conf->url == NULL) {
        conf->upstream = prev->upstream;
        conf->url = prev->url;
    }
    rx_conf_merge_msec(conf->connect_timeout, prev->connect_timeout, 60000);
    rx_conf_merge_msec(conf->send_timeout, prev->send_timeout, 60000);
    rx_conf_merge_msec(conf->read_timeout, prev->read_timeout, 60000);
    rx_conf_merge_msec(conf->next_upstream_timeout, prev->next_upstream_timeout, 0);
    rx_conf_merge_uint(conf->next_upstream_tries, prev->next_upstream_tries, 0);
    rx_conf_merge_size(conf->buffer_size, prev->buffer_size, 4096);
    rx_conf_merge_value(conf->bufs_num, prev->bufs_num, 8);
    rx_conf_merge_size(conf->bufs_size, prev->bufs_size, 4096);
    rx_conf_merge_value(conf->buffering, prev->buffering, 1);
    rx_conf_merge_value(conf->request_buffering, prev->request_buffering, 1);
    rx_conf_merge_value(conf->pass_request_headers, prev->pass_request_headers, 1);
    rx_conf_merge_value(conf->pass_request_body, prev->pass_request_body, 1);
    rx_conf_merge_value(conf->intercept_errors, prev->intercept_errors, 0);
    rx_conf_merge_value(conf->ignore_client_abort, prev->ignore_client_abort, 0);
    rx_conf_merge_ptr(conf->limit_rate, prev->limit_rate, NULL);
    if (conf->ignore_headers == 0) {
        conf->ignore_headers = prev->ignore_headers;
    }
    if (conf->next_upstream == 0) {
        conf->next_upstream = prev->next_upstream
            ? prev->next_upstream
            : RX_HTTP_UPSTREAM_FT_ERROR | RX_HTTP_UPSTREAM_FT_TIMEOUT;
    }
    if (conf->next_upstream & RX_HTTP_UPSTREAM_FT_OFF) {
        conf->next_upstream = RX_HTTP_UPSTREAM_FT_OFF;
    }
    rx_conf_merge_value(conf->max_temp_file_size, prev->max_temp_file_size,
                        1024 * 1024 * 1024);
    if (merge_temp_path(cf, conf, prev) != RX_OK
        || rx_http_cache_merge_conf(cf, &conf->cache, &prev->cache,
                                    conf->module) != RX_CONF_OK) {
        return RX_CONF_ERROR;
    }
    rx_conf_merge_ptr(conf->pass_headers, prev->pass_headers, NULL);
    rc = merge_hide_headers(cf, conf, prev, default_hide);
    if (rc == RX_ERROR) {
        return RX_CONF_ERROR;
    }
    conf->hidden_lens = rx_http_upstream_hidden_lens(conf->hide_headers);
    if (rc == RX_DONE) {
        /* as it always did: an inherited list skips the check below */
        return RX_CONF_OK;
    }
    if (conf->bufs_num < 2) {
        rx_log_error(RX_LOG_EMERG, cf->log, 0, "there must be at least 2 "
                     "\"%s_buffers\"", conf->module);
        return RX_CONF_ERROR;
    }
    return RX_CONF_OK;
}

const char *
rx_http_upstream_set_accepted(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    (void) cf;
    (void) cmd;
    (void) conf;
    return RX_CONF_OK;
}

/* *_hide_header / *_pass_header: a list of names (cmd->offset: an
 * rx_array_t * of rx_str_t), lower-cased. */
const char *
rx_http_upstream_set_header_list(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    rx_array_t **list = rx_conf_field(conf, cmd, rx_array_t *);
    rx_str_t    *value = cf->args->elts, *s;
    size_t       i;

    if (*list == RX_CONF_UNSET_PTR || *list == NULL) {
        *list = rx_array_create(cf->pool, 4, sizeof(rx_str_t));
        if (*list == NULL) {
            return RX_CONF_ERROR;
        }
    }
    s = rx_array_push(*list);
    if (s == NULL || (s->data = rx_pstrdup(cf->pool, &value[1])) == NULL) {
        return RX_CONF_ERROR;
    }
    s->len = value[1].len;
    for (i = 0; i < s->len; i++) {
        s->data[i] = (char) tolower((unsigned char) s->data[i]);
    }
    return RX_CONF_OK;
}

/* *_buffers number size (cmd->offset: the conf's bufs_num; bufs_size
 * follows it in rx_http_upstream_conf_t). */
const char *
rx_http_upstream_set_buffers(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf)
{
    rx_int_t *num = rx_conf_field(conf, cmd, rx_int_t);
    size_t   *size_field = (size_t *) ((char *) num
                           + offsetof(rx_http_upstream_conf_t, bufs_size)
                           - offsetof(rx_http_upstream_conf_t, bufs_num));
    rx_str_t *value = cf->args->elts;
    rx_int_t  n;
    ssize_t   size;

    if (*num != RX_CONF_UNSET) {
        return "is duplicate";
    }
    n = rx_atoi(value[1].data, value[1].len);
    size = rx_parse_size(&value[2]);
    if (n <= 0 || size <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s %s\" in "
                          "\"%s\" directive", value[1].data, value[2].data,
                          value[0].data);
        return RX_CONF_ERROR;
    }
    *num = n;
    *size_field = (size_t) size;
    return RX_CONF_OK;
}

/* The "host[:port]" or "[v6][:port]" of a *_pass address: host without
 * the port; port 0 and *no_port when none is written. NULL or an error. */
const char *
rx_http_upstream_parse_host(const rx_str_t *text, rx_str_t *host,
    in_port_t *port, bool *no_port)
{
    const char *colon = NULL;
    rx_int_t    n;

    *host = *text;
    *port = 0;
    *no_port = true;
    if (text->len && text->data[0] == '[') {
        const char *close = memchr(text->data, ']', text->len);

        if (close == NULL) {
            return "invalid host";
        }
        if (close + 1 < text->data + text->len) {
            if (close[1] != ':') {
                return "invalid host";
            }
            colon = close + 1;
        }
    } else {
        colon = memchr(text->data, ':', text->len);
    }
    if (colon) {
        n = rx_atoi(colon + 1, (size_t) (text->data + text->len - colon - 1));
        if (n < 1 || n > 65535) {
            return "invalid port";
        }
        *port = (in_port_t) n;
        *no_port = false;
        host->len = (size_t) (colon - text->data);
    }
    return host->len ? NULL : "no host";
}

/* *_ignore_headers: the same names for every protocol. */
const rx_conf_enum_t rx_http_upstream_ignore_headers_masks[] = {
    { "X-Accel-Redirect", RX_HTTP_UPSTREAM_IGN_XA_REDIRECT },
    { "X-Accel-Expires", RX_HTTP_UPSTREAM_IGN_XA_EXPIRES },
    { "X-Accel-Limit-Rate", RX_HTTP_UPSTREAM_IGN_XA_LIMIT_RATE },
    { "X-Accel-Buffering", RX_HTTP_UPSTREAM_IGN_XA_BUFFERING },
    { "X-Accel-Charset", RX_HTTP_UPSTREAM_IGN_XA_CHARSET },
    { "Expires", RX_HTTP_UPSTREAM_IGN_EXPIRES },
    { "Cache-Control", RX_HTTP_UPSTREAM_IGN_CACHE_CONTROL },
    { "Set-Cookie", RX_HTTP_UPSTREAM_IGN_SET_COOKIE },
    { "Vary", RX_HTTP_UPSTREAM_IGN_VARY },
    { NULL, 0 }
};
