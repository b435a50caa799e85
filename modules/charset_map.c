/*
 * charset_map.c: the charset_map blocks of the charset module: each line
 * maps a byte of the first charset to a byte of the second, or to the
 * UTF-8 bytes of its character when the second is utf-8. A table is
 * built once at load time for both ways; lookups are by index, or (utf-8
 * back to a byte) a binary search of 256 code points at most.
 */
#include <ctype.h>
#include "charset.h"

extern rx_module_t rx_http_charset_module;

bool
rx_http_charset_is_utf8(const rx_str_t *name)
{
    return rx_str_caseeq(name, "utf-8");
}

/* len hex digits (even) into bytes; -1 when it is not that */
static int
hex_bytes(const rx_str_t *v, uint8_t *out, size_t max)
{
    size_t i;
    int    hi, lo;

    if (v->len == 0 || v->len % 2 || v->len / 2 > max) {
        return -1;
    }
    for (i = 0; i < v->len; i += 2) {
        if (!isxdigit((unsigned char) v->data[i])
            || !isxdigit((unsigned char) v->data[i + 1])) {
            return -1;
        }
        hi = isdigit((unsigned char) v->data[i]) ? v->data[i] - '0'
             : (tolower((unsigned char) v->data[i]) - 'a' + 10);
        lo = isdigit((unsigned char) v->data[i + 1]) ? v->data[i + 1] - '0'
             : (tolower((unsigned char) v->data[i + 1]) - 'a' + 10);
        out[i / 2] = (uint8_t) (hi << 4 | lo);
    }
    return (int) (v->len / 2);
}

/* The code point of one whole UTF-8 sequence of n bytes, or -1. */
static int32_t
utf8_cp(const uint8_t *s, int n)
{
    static const uint8_t lead_mask[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
    int32_t              cp;
    int                  i;

    if (n < 1 || n > 4 || (n == 1 && s[0] >= 0x80)
        || (n > 1 && (s[0] & (0xff << (7 - n)) & 0xff)
                     != (uint8_t) (0xff << (8 - n)))) {
        return -1;
    }
    cp = s[0] & lead_mask[n];
    for (i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return -1;
        }
        cp = cp << 6 | (s[i] & 0x3f);
    }
    return cp;
}

/* One line of the block: "C0 FE;" or (to utf-8) "C0 D18E;". */
static const char *
map_line(rx_conf_t *cf, void *dummy, void *conf)
{
    rx_charset_map_t *m = conf;
    rx_str_t         *value = cf->args->elts;
    uint8_t           b, v[4];
    int               n;

    (void) dummy;
    if (cf->args->nelts != 2) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid parameters number");
        return RX_CONF_ERROR;
    }
    if (hex_bytes(&value[0], &b, 1) != 1) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\"",
                          value[0].data);
        return RX_CONF_ERROR;
    }
    n = hex_bytes(&value[1], v, m->utf8 ? 4 : 1);
    if (n < 1 || (m->utf8 && utf8_cp(v, n) < 0)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "invalid value \"%s\"",
                          value[1].data);
        return RX_CONF_ERROR;
    }
    if (m->utf8) {
        memcpy(m->utf[b], v, (size_t) n);
        m->ulen[b] = (uint8_t) n;
    } else {
        m->to[b] = v[0];
        m->back[v[0]] = b;
    }
    return RX_CONF_OK;
}

static int
cmp_cp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

    return x < y ? -1 : x > y;
}

/* The way back from utf-8: each mapped character's code point with its
 * byte, sorted. ASCII maps to itself unless a line says otherwise. */
static void
build_back(rx_charset_map_t *m)
{
    rx_uint_t i;

    m->ncps = 0;
    for (i = 0; i < 256; i++) {
        if (m->ulen[i]) {
            m->cps[m->ncps++] = (uint32_t) utf8_cp(m->utf[i], m->ulen[i]) << 8
                                | (uint32_t) i;
        }
    }
    qsort(m->cps, m->ncps, sizeof(uint32_t), cmp_cp);
}

static rx_str_t
lower_dup(rx_conf_t *cf, const rx_str_t *s)
{
    rx_str_t d = { 0, rx_pnalloc(cf->pool, s->len + 1) };
    size_t   i;

    if (d.data) {
        for (i = 0; i < s->len; i++) {
            d.data[i] = (char) tolower((unsigned char) s->data[i]);
        }
        d.data[s->len] = '\0';
        d.len = s->len;
    }
    return d;
}

const char *
rx_http_charset_map_block(rx_conf_t *cf, const rx_command_t *cmd, void *conf)
{
    rx_http_charset_main_conf_t *mcf = conf;
    rx_str_t                    *value = cf->args->elts;
    rx_charset_map_t            *m;
    rx_conf_t                    saved;
    const char                  *rv;
    bool                         rev;
    rx_uint_t                    i;

    (void) cmd;
    if (rx_http_charset_is_utf8(&value[1])) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "\"charset_map\" from utf-8 is "
                          "not supported: write it as \"charset_map %s utf-8\"",
                          value[2].data);
        return RX_CONF_ERROR;
    }
    if (rx_http_charset_find_map(mcf, &value[1], &value[2], &rev)
        || rx_str_caseeq(&value[1], value[2].data)) {
        rx_conf_log_error(RX_LOG_EMERG, cf, 0, "duplicate \"charset_map\" "
                          "between \"%s\" and \"%s\"", value[1].data,
                          value[2].data);
        return RX_CONF_ERROR;
    }
    m = rx_array_push(&mcf->maps);
    if (m == NULL) {
        return RX_CONF_ERROR;
    }
    memset(m, 0, sizeof(*m));
    m->src = lower_dup(cf, &value[1]);
    m->dst = lower_dup(cf, &value[2]);
    if (m->src.data == NULL || m->dst.data == NULL) {
        return RX_CONF_ERROR;
    }
    m->utf8 = rx_http_charset_is_utf8(&value[2]);
    for (i = 0; i < 256; i++) {
        m->to[i] = m->back[i] = (uint8_t) i;     /* unlisted: unchanged */
        if (i < 0x80) {
            m->utf[i][0] = (uint8_t) i;
            m->ulen[i] = 1;
        }
    }
    saved = *cf;
    cf->handler = map_line;
    cf->handler_conf = m;
    rv = rx_conf_parse(cf, NULL);
    *cf = saved;
    if (rv != RX_CONF_OK) {
        return rv;
    }
    if (m->utf8) {
        build_back(m);
    }
    return RX_CONF_OK;
}

const rx_charset_map_t *
rx_http_charset_find_map(const rx_http_charset_main_conf_t *mcf,
    const rx_str_t *from, const rx_str_t *to, bool *reverse)
{
    const rx_charset_map_t *m = mcf->maps.elts;
    rx_uint_t               i;

    for (i = 0; i < mcf->maps.nelts; i++) {
        if (rx_str_caseeq(from, m[i].src.data)
            && rx_str_caseeq(to, m[i].dst.data)) {
            *reverse = false;
            return &m[i];
        }
        if (rx_str_caseeq(from, m[i].dst.data)
            && rx_str_caseeq(to, m[i].src.data)) {
            *reverse = true;
            return &m[i];
        }
    }
    return NULL;
}
