/*
 * conf_setters.c: generic directive setters (flag, number, size, time,
 * enum, bitmask, string, path) with bounds and nginx's error wording.
 */
#include "core.h"
#include "cycle.h"

static const char *
invalid(rx_conf_t *cf, const char *hint)
{
    rx_str_t *value = cf->args->elts;

    rx_conf_log_error(RX_LOG_EMERG, cf, 0,
        "invalid value \"%s\" in \"%s\" directive%s%s", value[1].data,
        value[0].data, hint ? ", " : "", hint ? hint : "");
    return RX_CONF_ERROR;
}

static const char *
check_bounds(rx_conf_t *cf, const rx_command_t *cmd, int64_t v)
{
    const rx_conf_bounds_t *b = cmd->post;
    char                    hint[96];

    if (b == NULL) {
        return RX_CONF_OK;
    }
    if (v < b->min || (b->max && v > b->max)) {
        if (b->max) {
            snprintf(hint, sizeof(hint), "it must be between %" PRId64
                     " and %" PRId64, b->min, b->max);
        } else {
            snprintf(hint, sizeof(hint), "it must be at least %" PRId64, b->min);
        }
        return invalid(cf, hint);
    }
    return RX_CONF_OK;
}

const char *
rx_conf_set_flag_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_int_t *field = rx_conf_field(conf, cmd, rx_int_t);
    rx_str_t *value = cf->args->elts;

    if (*field != RX_CONF_UNSET) {
        return "is duplicate";
    }
    if (rx_str_caseeq(&value[1], "on")) {
        *field = 1;
    } else if (rx_str_caseeq(&value[1], "off")) {
        *field = 0;
    } else {
        return invalid(cf, "it must be \"on\" or \"off\"");
    }
    return RX_CONF_OK;
}

const char *
rx_conf_set_str_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t *field = rx_conf_field(conf, cmd, rx_str_t);
    rx_str_t *value = cf->args->elts;

    if (field->data) {
        return "is duplicate";
    }
    *field = value[1];
    return RX_CONF_OK;
}

const char *
rx_conf_set_str_array_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_array_t **field = rx_conf_field(conf, cmd, rx_array_t *);
    rx_str_t    *value = cf->args->elts, *s;

    if (*field == RX_CONF_UNSET_PTR || *field == NULL) {
        *field = rx_array_create(cf->pool, 4, sizeof(rx_str_t));
        if (*field == NULL) {
            return RX_CONF_ERROR;
        }
    }
    s = rx_array_push(*field);
    if (s == NULL) {
        return RX_CONF_ERROR;
    }
    *s = value[1];
    return RX_CONF_OK;
}

const char *
rx_conf_set_num_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_int_t *field = rx_conf_field(conf, cmd, rx_int_t);
    rx_str_t *value = cf->args->elts;
    rx_int_t  v;

    if (*field != RX_CONF_UNSET) {
        return "is duplicate";
    }
    v = rx_atoi(value[1].data, value[1].len);
    if (v == -1) {
        return invalid(cf, "it must be a number");
    }
    if (check_bounds(cf, cmd, v) != RX_CONF_OK) {
        return RX_CONF_ERROR;
    }
    *field = v;
    return RX_CONF_OK;
}

const char *
rx_conf_set_size_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    size_t   *field = rx_conf_field(conf, cmd, size_t);
    rx_str_t *value = cf->args->elts;
    ssize_t   v;

    if (*field != RX_CONF_UNSET_SIZE) {
        return "is duplicate";
    }
    v = rx_parse_size(&value[1]);
    if (v == -1) {
        return invalid(cf, "it must be a size (e.g. 512, 16k, 1m)");
    }
    if (check_bounds(cf, cmd, v) != RX_CONF_OK) {
        return RX_CONF_ERROR;
    }
    *field = (size_t) v;
    return RX_CONF_OK;
}

const char *
rx_conf_set_off_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    int64_t  *field = rx_conf_field(conf, cmd, int64_t);
    rx_str_t *value = cf->args->elts;
    int64_t   v;

    if (*field != RX_CONF_UNSET) {
        return "is duplicate";
    }
    v = rx_parse_offset(&value[1]);
    if (v == -1) {
        return invalid(cf, "it must be a size (e.g. 512, 16k, 1m, 2g)");
    }
    if (check_bounds(cf, cmd, v) != RX_CONF_OK) {
        return RX_CONF_ERROR;
    }
    *field = v;
    return RX_CONF_OK;
}

static const char *
set_time(rx_conf_t *cf, const rx_command_t *cmd, rx_msec_t *field, bool sec)
{
    rx_str_t *value = cf->args->elts;
    rx_int_t  v;

    if (*field != RX_CONF_UNSET_MSEC) {
        return "is duplicate";
    }
    v = rx_parse_time(&value[1], sec);
    if (v == -1) {
        return invalid(cf, "it must be a time (e.g. 500ms, 60s, 5m, 1h)");
    }
    if (check_bounds(cf, cmd, v) != RX_CONF_OK) {
        return RX_CONF_ERROR;
    }
    *field = v;
    return RX_CONF_OK;
}

const char *
rx_conf_set_msec_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    return set_time(cf, cmd, rx_conf_field(conf, cmd, rx_msec_t), false);
}

const char *
rx_conf_set_sec_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    return set_time(cf, cmd, rx_conf_field(conf, cmd, rx_msec_t), true);
}

/* `it must be "a", "b" or "c"` from an enum table. */
static const char *
enum_hint(const rx_conf_enum_t *e, char *buf, size_t size)
{
    size_t n = (size_t) snprintf(buf, size, "it must be ");

    for (; e->name && n < size; e++) {
        const char *sep = e[1].name == NULL ? "" : (e[2].name ? ", " : " or ");
        n += (size_t) snprintf(buf + n, size - n, "\"%s\"%s", e->name, sep);
    }
    return buf;
}

const char *
rx_conf_set_enum_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_uint_t            *field = rx_conf_field(conf, cmd, rx_uint_t);
    rx_str_t             *value = cf->args->elts;
    const rx_conf_enum_t *e;
    char                  hint[256];

    if (*field != RX_CONF_UNSET_UINT) {
        return "is duplicate";
    }
    for (e = cmd->post; e->name; e++) {
        if (rx_str_caseeq(&value[1], e->name)) {
            *field = e->value;
            return RX_CONF_OK;
        }
    }
    return invalid(cf, enum_hint(cmd->post, hint, sizeof(hint)));
}

const char *
rx_conf_set_bitmask_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_uint_t            *field = rx_conf_field(conf, cmd, rx_uint_t);
    rx_str_t             *value = cf->args->elts;
    const rx_conf_enum_t *e;
    rx_uint_t             i;
    char                  hint[256];

    if (*field != 0) {
        return "is duplicate";
    }
    for (i = 1; i < cf->args->nelts; i++) {
        for (e = cmd->post; e->name; e++) {
            if (rx_str_caseeq(&value[i], e->name)) {
                break;
            }
        }
        if (e->name == NULL) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                "invalid value \"%s\" in \"%s\" directive, %s", value[i].data,
                value[0].data, enum_hint(cmd->post, hint, sizeof(hint)));
            return RX_CONF_ERROR;
        }
        if (*field & e->value) {
            rx_conf_log_error(RX_LOG_WARN, cf, 0, "duplicate value \"%s\"",
                              value[i].data);
        }
        *field |= e->value;
    }
    return RX_CONF_OK;
}

const char *
rx_conf_set_path_slot(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t *field = rx_conf_field(conf, cmd, rx_str_t);
    rx_str_t *value = cf->args->elts;

    if (field->data) {
        return "is duplicate";
    }
    *field = value[1];
    return rx_conf_full_name(cf->cycle, field, false) == RX_OK
           ? RX_CONF_OK : RX_CONF_ERROR;
}

const char *
rx_conf_set_ignored(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_conf_log_error(RX_LOG_NOTICE, cf, 0, "\"%s\" directive is ignored: %s",
                      cmd->name, cmd->post ? (const char *) cmd->post
                      : "it has no effect in ringx");
    return RX_CONF_OK;
}
