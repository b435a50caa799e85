/*
 * regex.c: the pcre2 wrapper, the only file that includes pcre2.h. Owns
 * compiling (with JIT when available), matching into nginx-style capture
 * arrays, and the named-capture table.
 */
#include "core.h"
#include "regex.h"
#include <pcre2.h>

struct rx_regex_s {
    pcre2_code        *code;
    pcre2_match_data  *match;      /* sized for every group of code */
    rx_uint_t          captures;   /* groups, $0 not counted */
    rx_regex_name_t   *names;
    rx_uint_t          nnames;
    rx_str_t           pattern;
};

static void
regex_cleanup(void *data)
{
    rx_regex_t *re = data;

    pcre2_match_data_free(re->match);
    pcre2_code_free(re->code);
    re->match = NULL;
    re->code = NULL;
}

/* Copies pcre2's name table (entries of a 2-byte big-endian group number
 * followed by the NUL-terminated name) into the pool. */
static rx_int_t
load_names(rx_pool_t *pool, rx_regex_t *re)
{
    uint32_t          count, size;
    PCRE2_SPTR        table;
    const uint8_t    *entry;
    rx_uint_t         i;

    if (pcre2_pattern_info(re->code, PCRE2_INFO_NAMECOUNT, &count) < 0
        || count == 0) {
        return RX_OK;
    }
    if (pcre2_pattern_info(re->code, PCRE2_INFO_NAMEENTRYSIZE, &size) < 0
        || pcre2_pattern_info(re->code, PCRE2_INFO_NAMETABLE, &table) < 0) {
        return RX_ERROR;
    }
    re->names = rx_palloc(pool, count * sizeof(rx_regex_name_t));
    if (re->names == NULL) {
        return RX_ERROR;
    }
    for (i = 0; i < count; i++) {
        entry = (const uint8_t *) table + i * size;
        re->names[i].index = (rx_uint_t) (entry[0] << 8 | entry[1]);
        re->names[i].name.len = strlen((const char *) entry + 2);
        re->names[i].name.data = rx_pstrdup_c(pool, (const char *) entry + 2,
                                              re->names[i].name.len);
        if (re->names[i].name.data == NULL) {
            return RX_ERROR;
        }
    }
    re->nnames = count;
    return RX_OK;
}

rx_regex_t *
rx_regex_compile(rx_pool_t *pool, const rx_str_t *pattern, bool caseless,
    char *err, size_t errlen)
{
    rx_regex_t         *re;
    rx_pool_cleanup_t  *cln;
    PCRE2_UCHAR         msg[256];
    PCRE2_SIZE          erroff;
    uint32_t            captures;
    int                 errcode;

    re = rx_pcalloc(pool, sizeof(rx_regex_t));
    cln = rx_pool_cleanup_add(pool, 0);
    if (re == NULL || cln == NULL) {
        snprintf(err, errlen, "regex \"%.*s\" compilation failed: no memory",
                 (int) pattern->len, pattern->data);
        return NULL;
    }
    re->pattern.len = pattern->len;
    re->pattern.data = rx_pstrdup(pool, pattern);

    re->code = pcre2_compile((PCRE2_SPTR) pattern->data, pattern->len,
                             caseless ? PCRE2_CASELESS : 0, &errcode, &erroff,
                             NULL);
    if (re->code == NULL) {
        pcre2_get_error_message(errcode, msg, sizeof(msg));
        if (erroff >= pattern->len) {
            snprintf(err, errlen, "pcre2_compile() failed: %s in \"%.*s\"",
                     (char *) msg, (int) pattern->len, pattern->data);
        } else {
            /* nginx quotes the rest of the pattern from the error on */
            snprintf(err, errlen, "pcre2_compile() failed: %s in \"%.*s\" "
                     "at \"%.*s\"", (char *) msg, (int) pattern->len,
                     pattern->data, (int) (pattern->len - erroff),
                     pattern->data + erroff);
        }
        return NULL;
    }
    /* from here on the pool owns the code, whatever fails next */
    cln->handler = regex_cleanup;
    cln->data = re;

#if (RX_HAVE_PCRE2_JIT)
    /* no JIT (unsupported CPU, SELinux denying executable memory) only
     * costs speed: pcre2_match() falls back to the interpreter */
    (void) pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
#endif

    re->match = pcre2_match_data_create_from_pattern(re->code, NULL);
    if (re->match == NULL || re->pattern.data == NULL
        || pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &captures) < 0
        || load_names(pool, re) != RX_OK) {
        snprintf(err, errlen, "regex \"%.*s\" compilation failed: no memory",
                 (int) pattern->len, pattern->data);
        return NULL;
    }
    re->captures = captures;
    return re;
}

rx_int_t
rx_regex_exec(rx_regex_t *re, const char *s, size_t len, int *captures,
    rx_uint_t ncaptures)
{
    PCRE2_SIZE  *ov;
    rx_uint_t    i, n;
    int          rc;

    if (s == NULL) {
        s = "";             /* pcre2 10.42 rejects a NULL empty subject */
    }
    rc = pcre2_match(re->code, (PCRE2_SPTR) s, len, 0, 0, re->match, NULL);
    if (rc == PCRE2_ERROR_NOMATCH) {
        return RX_DECLINED;
    }
    if (rc <= 0) {
        /* 0 cannot happen: the match data fits every group */
        return RX_ERROR;
    }
    if (captures) {
        ov = pcre2_get_ovector_pointer(re->match);
        n = rx_min((rx_uint_t) rc, ncaptures);
        for (i = 0; i < 2 * n; i++) {
            captures[i] = ov[i] == PCRE2_UNSET ? -1 : (int) ov[i];
        }
    }
    return rc;
}

rx_uint_t
rx_regex_captures(const rx_regex_t *re)
{
    return re->captures;
}

const rx_str_t *
rx_regex_pattern(const rx_regex_t *re)
{
    return &re->pattern;
}

rx_int_t
rx_regex_named_index(const rx_regex_t *re, const rx_str_t *name)
{
    rx_uint_t i;

    for (i = 0; i < re->nnames; i++) {
        if (re->names[i].name.len == name->len
            && memcmp(re->names[i].name.data, name->data, name->len) == 0) {
            return (rx_int_t) re->names[i].index;
        }
    }
    return -1;
}

const rx_regex_name_t *
rx_regex_names(const rx_regex_t *re, rx_uint_t *n)
{
    *n = re->nnames;
    return re->names;
}
