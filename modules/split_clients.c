/*
 * split_clients.c: the split_clients module: `split_clients text $var {
 * 0.5% a; 2% b; * c; }` puts each request in a bucket by the MurmurHash2
 * of the text, with nginx's boundaries, so that the same text lands in the
 * same bucket as under nginx (A/B tests keep their groups on migration).
 */
#include "http.h"
#include "http_script.h"

typedef struct {
    uint32_t  bound;       /* the hash is below it (cumulative) */
    bool      rest;        /* "*": everything left */
    rx_str_t  value;
} split_part_t;

typedef struct {
    rx_http_complex_value_t  source;
    rx_array_t              *parts;   /* split_part_t, in config order */
} split_t;

static const char *split_block(rx_conf_t *cf, const rx_command_t *cmd,
    void *conf);

static const rx_command_t split_commands[] = {
    { "split_clients", RX_HTTP_MAIN_CONF | RX_CONF_BLOCK | RX_CONF_TAKE2,
      split_block, RX_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    rx_null_command
};

static const rx_http_module_t split_ctx = {
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

rx_module_t rx_http_split_clients_module = {
    "rx_http_split_clients_module", 0, 0, RX_HTTP_MODULE, &split_ctx,
    split_commands, NULL, NULL, NULL, NULL
};

/*
 * MurmurHash2 (Austin Appleby's public algorithm), 32 bits, seed 0, the
 * 4-byte blocks read little-endian whatever the machine: the hash nginx
 * documents for split_clients.
 */
static uint32_t
murmur_hash2(const unsigned char *data, size_t len)
{
    const uint32_t m = 0x5bd1e995;
    uint32_t       h = (uint32_t) len, k;

    while (len >= 4) {
        k = (uint32_t) data[0] | (uint32_t) data[1] << 8
            | (uint32_t) data[2] << 16 | (uint32_t) data[3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
        data += 4;
        len -= 4;
    }
    switch (len) {
    case 3:
        h ^= (uint32_t) data[2] << 16;
        /* fall through */
    case 2:
        h ^= (uint32_t) data[1] << 8;
        /* fall through */
    case 1:
        h ^= data[0];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

static rx_int_t
split_variable(rx_http_request_t *r, rx_http_variable_value_t *v,
    uintptr_t data)
{
    const split_t      *split = (const split_t *) data;
    const split_part_t *part = split->parts->elts;
    rx_str_t            src;
    uint32_t            hash;
    rx_uint_t           i;

    v->data = (char *) "";
    v->len = 0;
    if (rx_http_complex_value(r, &split->source, &src) != RX_OK) {
        return RX_ERROR;
    }
    hash = murmur_hash2((const unsigned char *) src.data, src.len);
    for (i = 0; i < split->parts->nelts; i++) {
        if (part[i].rest || hash < part[i].bound) {
            v->data = part[i].value.data;
            v->len = part[i].value.len;
            break;
        }
    }
    return RX_OK;
}

/* "12.34" as hundredths (1234), as nginx's ngx_atofp with two decimals:
 * digits with at most one '.' and two digits after it; -1 when invalid. */
static int64_t
parse_hundredths(const char *s, size_t len)
{
    int64_t  value = 0;
    int      decimals = -1;     /* digits seen after the point */
    bool     digits = false;
    size_t   i;

    for (i = 0; i < len; i++) {
        if (s[i] == '.' && decimals < 0) {
            decimals = 0;
            continue;
        }
        if (s[i] < '0' || s[i] > '9' || decimals == 2 || value > 1000000) {
            return -1;
        }
        value = value * 10 + (s[i] - '0');
        digits = true;
        if (decimals >= 0) {
            decimals++;
        }
    }
    if (!digits) {
        return -1;
    }
    for (decimals = decimals < 0 ? 0 : decimals; decimals < 2; decimals++) {
        value *= 10;
    }
    return value;
}

/* One line: "N% value;" or "* value;". The percentage stays in hundredths
 * in bound until the block ends. */
static const char *
split_line(rx_conf_t *cf, void *dummy, void *conf)
{
    split_t      *split = conf;
    rx_str_t     *value = cf->args->elts;
    split_part_t *part;
    int64_t       n;

    if (cf->args->nelts != 2) {
        return "invalid number of the split_clients parameters";
    }
    part = rx_array_push(split->parts);
    if (part == NULL) {
        return RX_CONF_ERROR;
    }
    memset(part, 0, sizeof(*part));
    part->value = value[1];
    if (value[0].len == 1 && value[0].data[0] == '*') {
        part->rest = true;
        return RX_CONF_OK;
    }
    n = value[0].len && value[0].data[value[0].len - 1] == '%'
        ? parse_hundredths(value[0].data, value[0].len - 1) : -1;
    if (n <= 0) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid percent value \"%s\"",
                          value[0].data);
        return RX_CONF_ERROR;
    }
    part->bound = (uint32_t) n;
    return RX_CONF_OK;
}

/*
 * nginx's boundaries: each part adds its share of 0xffffffff, truncated,
 * to the previous bound (0.5% then 2% give 21474836 and 107374181), so
 * that buckets match nginx's for the same text. "*" takes the rest and
 * counts as reaching 100%.
 */
static const char *
set_bounds(rx_conf_t *cf, split_t *split)
{
    split_part_t *part = split->parts->elts;
    uint64_t      sum = 0, last = 0;
    rx_uint_t     i;

    for (i = 0; i < split->parts->nelts; i++) {
        sum = part[i].rest ? 10000 : sum + part[i].bound;
        if (sum > 10000) {
            rx_conf_log_error(RX_LOG_EMERG, cf, 0,
                              "percent total is greater than 100%%");
            return RX_CONF_ERROR;
        }
        if (!part[i].rest) {
            last += (uint64_t) part[i].bound * 0xffffffffu / 10000;
            part[i].bound = (uint32_t) last;
        }
    }
    return RX_CONF_OK;
}

static const char *
split_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_str_t            *value = cf->args->elts, name = value[2];
    rx_http_variable_t  *var;
    split_t             *split;
    rx_conf_t            saved;
    const char          *rv;

    split = rx_pcalloc(cf->pool, sizeof(*split));
    if (split == NULL) {
        return RX_CONF_ERROR;
    }
    split->parts = rx_array_create(cf->pool, 4, sizeof(split_part_t));
    if (split->parts == NULL
        || rx_http_compile_complex_value(cf, &value[1], &split->source)
           != RX_OK) {
        return RX_CONF_ERROR;
    }
    if (name.len < 2 || name.data[0] != '$') {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid variable name \"%s\"",
                          name.data);
        return RX_CONF_ERROR;
    }
    name.len--;
    name.data++;
    var = rx_http_add_variable(cf, &name, RX_HTTP_VAR_CHANGEABLE);
    if (var == NULL) {
        return RX_CONF_ERROR;
    }

    saved = *cf;
    cf->handler = split_line;
    cf->handler_conf = split;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    if (rv != RX_CONF_OK) {
        return rv;
    }
    if (set_bounds(cf, split) != RX_CONF_OK) {
        return RX_CONF_ERROR;
    }
    var->get = split_variable;
    var->set = NULL;
    var->data = (uintptr_t) split;
    return RX_CONF_OK;
}
