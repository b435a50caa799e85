/*
 * http_uri.c: the request-target: origin- and absolute-form splitting,
 * path decoding and dot-segment resolution (nginx's $uri), the safety
 * check of a URI an upstream redirects to, Host validation, and URI
 * escaping. Pure functions over a pool; see
 * http_uri.h for the contracts.
 */
#include "core.h"
#include "http_uri.h"

/* the only status decided here; http.h may define it too */
#ifndef RX_HTTP_BAD_REQUEST
#define RX_HTTP_BAD_REQUEST  400
#endif

static int
hex_value(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c |= 0x20;
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

static bool
is_alpha(unsigned char c)
{
    c |= 0x20;
    return c >= 'a' && c <= 'z';
}

static bool
is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* RFC 9112 has no room for them in a request-target, and nginx answers
 * 400 since 1.21.1: a space would also make the request line ambiguous. */
static bool
is_ctl_or_space(unsigned char c)
{
    return c <= 0x20 || c == 0x7f;
}

static bool
has_upper(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= 'A' && p[i] <= 'Z') {
            return true;
        }
    }
    return false;
}

static void
lower_copy(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) src[i];
        dst[i] = (char) ((c >= 'A' && c <= 'Z') ? (c | 0x20) : c);
    }
}

/* Points s at a lower-cased copy of itself when it has upper case. */
static rx_int_t
lower_str(rx_str_t *s, rx_pool_t *pool)
{
    char *p;

    if (!has_upper(s->data, s->len)) {
        return RX_OK;
    }
    p = rx_pnalloc(pool, s->len);
    if (p == NULL) {
        return RX_ERROR;
    }
    lower_copy(p, s->data, s->len);
    s->data = p;
    return RX_OK;
}

/* What a byte of a Host value asks of validate_host's scan: most ask
 * nothing, so the scan is a load and a test per byte. */
enum {
    HOST_PLAIN = 0,
    HOST_DOT,           /* a label ends; ".." is refused */
    HOST_BAD,           /* '/', a control byte, space, DEL: refused */
    HOST_OPEN,          /* '[': an IPv6 literal, first byte only */
    HOST_CLOSE,         /* ']': ends a literal */
    HOST_COLON,         /* ':': the port, outside a literal */
    HOST_UPPER          /* A-Z: the name needs a lower-cased copy */
};

static const uint8_t host_byte[256] = {
    [0x00 ... 0x20] = HOST_BAD, [0x7f] = HOST_BAD, ['/'] = HOST_BAD,
    ['.'] = HOST_DOT, ['['] = HOST_OPEN, [']'] = HOST_CLOSE,
    [':'] = HOST_COLON, ['A' ... 'Z'] = HOST_UPPER,
};

/*
 * ---- Host ----
 *
 * The rules are nginx's (ngx_http_validate_host, 1.21.1 and later); they
 * are listed in http_uri.h. One deliberate difference: nginx drops a
 * trailing dot only when it is the last dot of the whole value, so it
 * keeps the dot of "a.:8.0"; here the host's own last byte decides.
 * Returns RX_OK, RX_DECLINED (invalid) or RX_ERROR (no memory).
 */
static rx_int_t
validate_host(rx_str_t *host, rx_pool_t *pool, bool alloc)
{
    const unsigned char *h = (const unsigned char *) host->data;
    size_t               i, len = host->len, host_len = len;
    bool                 literal = false, in_host = true, prev_dot = false;
    char                *copy;

    for (i = 0; i < len; i++) {
        unsigned kind = host_byte[h[i]];

        if (kind == HOST_PLAIN) {
            prev_dot = false;
            continue;
        }
        if (kind == HOST_DOT) {
            if (prev_dot) {
                return RX_DECLINED;        /* "..": a path trick, not a name */
            }
            prev_dot = true;
            continue;
        }
        if (kind == HOST_BAD) {
            return RX_DECLINED;
        }
        prev_dot = false;
        if (!in_host) {
            continue;                      /* the port: only the checks above */
        }
        switch (kind) {
        case HOST_OPEN:
            literal = literal || i == 0;
            break;
        case HOST_CLOSE:
            if (literal) {
                host_len = i + 1;
                in_host = false;
            }
            break;
        case HOST_COLON:
            if (!literal) {
                host_len = i;
                in_host = false;
            }
            break;
        default:                           /* HOST_UPPER */
            alloc = true;
            break;
        }
    }

    if (host_len > 0 && h[host_len - 1] == '.') {
        host_len--;
    }
    if (host_len == 0) {
        return RX_DECLINED;
    }

    if (alloc) {
        if (pool == NULL) {
            copy = host->data;             /* the caller owns the bytes */
        } else {
            copy = rx_pnalloc(pool, host_len);
            if (copy == NULL) {
                return RX_ERROR;
            }
        }
        lower_copy(copy, host->data, host_len);
        host->data = copy;
    }
    host->len = host_len;
    return RX_OK;
}

bool
rx_http_validate_host(rx_str_t *host, rx_pool_t *pool, bool alloc)
{
    return validate_host(host, pool, alloc) == RX_OK;
}

/*
 * ---- absolute-form ----
 *
 * "scheme://authority" followed by the path, '?' or the end. The grammar
 * is nginx's request-line parser: a host name is letters, digits, '.' and
 * '-' (no userinfo, no '_', no %-escapes); an IP literal is "[...]" of
 * hex digits, ':', '.', unreserved and sub-delims characters; the port is
 * digits.
 */
static bool
is_literal_char(unsigned char c)
{
    return is_alpha(c) || is_digit(c) || (c && strchr(":.-_~!$&'()*+,;=", c));
}

/* The authority from p: sets out->host and out->port, *rest to what
 * follows. Returns RX_OK, 400 or RX_ERROR. */
static rx_int_t
parse_authority(rx_pool_t *pool, const char *p, const char *end,
    rx_http_uri_t *out, const char **rest)
{
    const char  *s = p, *host_end;
    rx_uint_t    port = 0;
    rx_int_t     rc;

    if (p < end && *p == '[') {
        for (p++; p < end && *p != ']'; p++) {
            if (!is_literal_char(*p)) {
                return RX_HTTP_BAD_REQUEST;
            }
        }
        if (p == end || p == s + 1) {
            return RX_HTTP_BAD_REQUEST;    /* unterminated or "[]" */
        }
        p++;
    } else {
        while (p < end && (is_alpha(*p) || is_digit(*p)
                           || *p == '.' || *p == '-'))
        {
            p++;
        }
    }
    host_end = p;

    if (p < end && *p == ':') {
        for (p++; p < end && is_digit(*p); p++) {
            port = port * 10 + (*p - '0');
            if (port > 65535) {
                return RX_HTTP_BAD_REQUEST;
            }
        }
    }
    if (p < end && *p != '/' && *p != '?') {
        return RX_HTTP_BAD_REQUEST;        /* '@', '_', '#', ... */
    }

    out->host.data = (char *) s;
    out->host.len = host_end - s;
    rc = validate_host(&out->host, pool, false);
    if (rc != RX_OK) {
        return rc == RX_ERROR ? RX_ERROR : RX_HTTP_BAD_REQUEST;
    }
    out->port = port;
    *rest = p;
    return RX_OK;
}

static rx_int_t
parse_absolute(rx_pool_t *pool, const char *p, const char *end,
    rx_http_uri_t *out, const char **rest)
{
    const char *s = p;

    /* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
    while (p < end && (is_alpha(*p) || is_digit(*p)
                       || *p == '+' || *p == '-' || *p == '.'))
    {
        p++;
    }
    if (end - p < 3 || memcmp(p, "://", 3) != 0) {
        return RX_HTTP_BAD_REQUEST;   /* neither form (authority-form too) */
    }
    out->scheme.data = (char *) s;
    out->scheme.len = p - s;
    if (lower_str(&out->scheme, pool) != RX_OK) {
        return RX_ERROR;
    }
    return parse_authority(pool, p + 3, end, out, rest);
}

/*
 * ---- path ----
 *
 * Decodes %XX from [p, end) into dst, which has room for end - p bytes.
 * Returns the decoded length, or -1 for a bad escape or a NUL: a NUL
 * would cut the path short at open(2) and let "/x.php%00.jpg" pass a
 * suffix check, so nginx refuses it and so do we.
 */
static ssize_t
decode_path(const char *p, const char *end, char *dst, bool *quoted)
{
    char *d = dst;

    while (p < end) {
        unsigned char c = (unsigned char) *p++;

        if (c == '%') {
            int hi, lo;

            if (end - p < 2) {
                return -1;
            }
            hi = hex_value((unsigned char) p[0]);
            lo = hex_value((unsigned char) p[1]);
            if (hi < 0 || lo < 0) {
                return -1;
            }
            c = (unsigned char) (hi << 4 | lo);
            if (c == '\0') {
                return -1;
            }
            p += 2;
            *quoted = true;
        }
        *d++ = (char) c;
    }
    return d - dst;
}

/*
 * Resolves "." and ".." segments of the decoded path s[0..n) in place
 * (s[0] is '/'), and collapses empty segments when `merge` is set. Works
 * on decoded bytes so that an encoded dot or slash cannot smuggle a ".."
 * past this step. Returns the new length, or -1 when a ".." would climb
 * above the root.
 *
 * Invariant: o <= i, and s[0..o) is the result so far, ending in '/'
 * whenever a segment starts; so writing never overtakes reading.
 */
static ssize_t
normalise_path(char *s, size_t n, bool merge, bool *complex)
{
    size_t i = 1, o = 1;

    while (i < n) {
        size_t j = i;

        while (j < n && s[j] != '/') {
            j++;
        }

        if (j == i) {                                /* "//" */
            *complex = true;
            if (!merge) {
                s[o++] = '/';
            }

        } else if (j - i == 1 && s[i] == '.') {      /* "/./" or "/." */
            *complex = true;

        } else if (j - i == 2 && s[i] == '.' && s[i + 1] == '.') {
            *complex = true;
            if (o == 1) {
                return -1;
            }
            /* drop the last output segment, keeping its leading '/';
             * an empty segment (merge off) is a segment too, as in nginx */
            for (o--; s[o - 1] != '/'; o--) {
                /* back to the previous '/' */
            }

        } else {
            memmove(s + o, s + i, j - i);
            o += j - i;
            if (j < n) {
                s[o++] = '/';
            }
        }
        i = j + 1;
    }
    return (ssize_t) o;
}

/* The extension as nginx sees it: after the last '.' of the last segment,
 * where up to three leading dots of the segment do not count: nginx's
 * parser reads a segment's ".", ".." and the byte after ".." as the start
 * of a possible dot segment, so ".hidden" and "...x" have none while
 * "....x" has "x". */
void
rx_http_uri_exten(const rx_str_t *path, rx_str_t *exten)
{
    char  *p = path->data, *end = p + path->len, *seg, *dot = NULL;
    int    k;

    exten->data = NULL;
    exten->len = 0;
    seg = memrchr(p, '/', path->len);
    seg = seg ? seg + 1 : p;
    for (k = 0; k < 3 && seg < end && *seg == '.'; k++) {
        seg++;
    }
    for (; seg < end; seg++) {
        if (*seg == '.') {
            dot = seg;
        }
    }
    if (dot) {
        exten->data = dot + 1;
        exten->len = end - (dot + 1);
    }
}

/* request_uri for absolute-form: what follows the authority, with the
 * "/" of an empty path made explicit ("http://h?x" gives "/?x"; nginx
 * gives "?x", which is not a valid origin-form to pass on). */
static rx_int_t
set_request_uri(rx_pool_t *pool, const char *rest, const char *end,
    rx_http_uri_t *out)
{
    char *p;

    if (rest < end && *rest == '/') {
        out->request_uri.data = (char *) rest;
        out->request_uri.len = end - rest;
        return RX_OK;
    }
    p = rx_pnalloc(pool, end - rest + 1);
    if (p == NULL) {
        return RX_ERROR;
    }
    p[0] = '/';
    memcpy(p + 1, rest, end - rest);
    out->request_uri.data = p;
    out->request_uri.len = end - rest + 1;
    return RX_OK;
}

/* Everything from the path on: p is the path's first byte, or what
 * follows an authority ('?' or the end when the path is empty). */
static rx_int_t
parse_path_and_query(rx_pool_t *pool, const char *p, const char *end,
    rx_http_uri_t *out, bool merge_slashes)
{
    const char  *path_end, *q;
    char        *buf;
    ssize_t      n;

    /* the path ends at the first raw '?' or '#'; the query at '#' */
    for (path_end = p; path_end < end; path_end++) {
        if (*path_end == '?' || *path_end == '#') {
            break;
        }
    }
    if (path_end < end && *path_end == '?') {
        q = memchr(path_end + 1, '#', end - path_end - 1);
        out->args.data = (char *) path_end + 1;
        out->args.len = (q ? q : end) - (path_end + 1);
    }

    /* room for the decoded path (never longer than its source), or the
     * "/" of an empty absolute-form path, plus a NUL */
    buf = rx_pnalloc(pool, (path_end - p) + 2);
    if (buf == NULL) {
        return RX_ERROR;
    }
    if (p == path_end) {
        buf[0] = '/';
        n = 1;
    } else {
        n = decode_path(p, path_end, buf, &out->quoted);
        if (n < 0) {
            return RX_HTTP_BAD_REQUEST;
        }
        n = normalise_path(buf, (size_t) n, merge_slashes, &out->complex);
        if (n < 0) {
            return RX_HTTP_BAD_REQUEST;
        }
    }
    buf[n] = '\0';
    out->path.data = buf;
    out->path.len = (size_t) n;

    rx_http_uri_exten(&out->path, &out->exten);
    return RX_OK;
}

/* True when a segment of s[0..n) is "..". */
static bool
has_dotdot_segment(const char *s, size_t n)
{
    const char *end = s + n, *seg, *slash;

    for (seg = s; ; seg = slash + 1) {
        slash = memchr(seg, '/', (size_t) (end - seg));
        if (slash == NULL) {
            slash = end;
        }
        if (slash - seg == 2 && seg[0] == '.' && seg[1] == '.') {
            return true;
        }
        if (slash == end) {
            return false;
        }
    }
}

rx_int_t
rx_http_parse_unsafe_uri(rx_pool_t *pool, const rx_str_t *uri,
    rx_str_t *path, rx_str_t *args)
{
    const char *p = uri->data, *q;
    char       *buf;
    ssize_t     n;
    bool        quoted = false;

    rx_str_null(args);
    if (uri->len == 0 || p[0] != '/') {
        return RX_DECLINED;         /* also "?a": no path at all */
    }
    q = memchr(p, '?', uri->len);
    if (q) {
        args->data = (char *) q + 1;
        args->len = (size_t) (p + uri->len - q - 1);
    } else {
        q = p + uri->len;
    }
    buf = rx_pnalloc(pool, (size_t) (q - p) + 1);
    if (buf == NULL) {
        return RX_ERROR;
    }
    /* decoded first, so that an escaped dot or slash is checked too */
    n = decode_path(p, q, buf, &quoted);
    if (n < 0 || memchr(buf, '\0', (size_t) n) != NULL
        || has_dotdot_segment(buf, (size_t) n)) {
        return RX_DECLINED;
    }
    buf[n] = '\0';
    path->data = buf;
    path->len = (size_t) n;
    return RX_OK;
}

/* What a byte of an origin-form path asks of parse_plain_origin. */
enum {
    PATH_PLAIN = 0,
    PATH_SLASH,
    PATH_DOT,
    PATH_QUERY,         /* '?': the path ends */
    PATH_OTHER          /* '%', '#', a control byte, space, DEL */
};

static const uint8_t path_byte[256] = {
    [0x00 ... 0x20] = PATH_OTHER, [0x7f] = PATH_OTHER,
    ['%'] = PATH_OTHER, ['#'] = PATH_OTHER,
    ['/'] = PATH_SLASH, ['.'] = PATH_DOT, ['?'] = PATH_QUERY,
};

/*
 * The common origin-form target in one pass: a path without an escape,
 * "//" or "/." (which decoding and normalising would leave as it is),
 * then a query, no control byte or space anywhere and no '#'. Fills out
 * as the general way below would; RX_DECLINED, with out untouched, sends
 * the target there, which decides everything again (a 400 too).
 */
static rx_int_t
parse_plain_origin(rx_pool_t *pool, const char *target, const char *end,
    rx_http_uri_t *out)
{
    const unsigned char *p = (const unsigned char *) target + 1;
    const unsigned char *e = (const unsigned char *) end, *q;
    bool                 after_slash = true;
    unsigned             kind;
    size_t               path_len;
    char                *buf;

    for ( ; p < e; p++) {
        kind = path_byte[*p];
        if (kind == PATH_PLAIN) {
            after_slash = false;
            continue;
        }
        if (kind == PATH_QUERY) {
            break;
        }
        if (kind == PATH_OTHER || after_slash) {
            return RX_DECLINED;         /* an escape, "//", "/." */
        }
        after_slash = kind == PATH_SLASH;
    }
    if (p < e) {
        for (q = p + 1; q < e; q++) {
            if (is_ctl_or_space(*q) || *q == '#') {
                return RX_DECLINED;
            }
        }
        out->args.data = (char *) p + 1;
        out->args.len = (size_t) (e - p - 1);
    }
    path_len = (size_t) ((const char *) p - target);
    buf = rx_pnalloc(pool, path_len + 1);
    if (buf == NULL) {
        return RX_ERROR;
    }
    memcpy(buf, target, path_len);
    buf[path_len] = '\0';
    out->path.data = buf;
    out->path.len = path_len;
    out->unparsed.data = (char *) target;
    out->unparsed.len = (size_t) (end - target);
    out->request_uri = out->unparsed;
    rx_http_uri_exten(&out->path, &out->exten);
    return RX_OK;
}

rx_int_t
rx_http_parse_request_target(rx_pool_t *pool, const char *target,
    size_t len, rx_http_uri_t *out, bool merge_slashes)
{
    const char  *end = target + len, *p;
    rx_int_t     rc;

    memset(out, 0, sizeof(*out));

    if (len == 0) {
        return RX_HTTP_BAD_REQUEST;
    }
    if (target[0] == '/') {
        rc = parse_plain_origin(pool, target, end, out);
        if (rc != RX_DECLINED) {
            return rc;
        }
    }
    for (p = target; p < end; p++) {
        if (is_ctl_or_space((unsigned char) *p)) {
            return RX_HTTP_BAD_REQUEST;
        }
    }
    out->unparsed.data = (char *) target;
    out->unparsed.len = len;

    if (len == 1 && target[0] == '*') {
        return RX_HTTP_TARGET_ASTERISK;
    }

    if (target[0] == '/') {
        p = target;
        out->request_uri = out->unparsed;

    } else if (is_alpha((unsigned char) target[0])) {
        rc = parse_absolute(pool, target, end, out, &p);
        if (rc != RX_OK) {
            return rc;
        }
        if (set_request_uri(pool, p, end, out) != RX_OK) {
            return RX_ERROR;
        }

    } else {
        return RX_HTTP_BAD_REQUEST;
    }

    return parse_path_and_query(pool, p, end, out, merge_slashes);
}

/*
 * ---- escaping ----
 *
 * The sets of http_uri.h as a predicate: escaping runs for Location
 * headers, redirects and logs, not per byte of a body, so a readable rule
 * beats four 256-bit tables.
 */
static bool
needs_escape(unsigned char c, rx_uint_t type)
{
    if (c <= 0x20 || c >= 0x7f) {
        return true;
    }
    switch (type) {
    case RX_ESCAPE_URI:
        return strchr("\"#%<>?\\^`{|}", c) != NULL;
    case RX_ESCAPE_ARGS:
        return strchr("\"#%<>?\\^`{|}&+;", c) != NULL;
    case RX_ESCAPE_HTML:
        return strchr("\"#%'", c) != NULL;
    default:                                       /* URI_COMPONENT */
        return !(is_alpha(c) || is_digit(c) || strchr("-._~", c));
    }
}

size_t
rx_http_escape_uri(char *dst, const char *src, size_t len, rx_uint_t type)
{
    static const char  hex[] = "0123456789ABCDEF";
    size_t             i, n = 0;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char) src[i];

        if (!needs_escape(c, type)) {
            if (dst) {
                dst[n] = (char) c;
            }
            n++;
            continue;
        }
        if (dst) {
            dst[n] = '%';
            dst[n + 1] = hex[c >> 4];
            dst[n + 2] = hex[c & 0xf];
        }
        n += 3;
    }
    return n;
}
