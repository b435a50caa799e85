/*
 * test_uri.c: the request-target parser, Host validation, URI escaping
 * and the X-Accel-Redirect URI check (http/http_uri.c), table-driven.
 * Expected values follow nginx's ngx_http_parse_complex_uri,
 * ngx_http_validate_host and ngx_http_parse_unsafe_uri; the few
 * deliberate differences are marked.
 */
#include "core.h"
#include "http_uri.h"
#include "tap.h"

/* A printable form of bytes for test names: no controls, no '#' (TAP's
 * directive marker). */
static const char *
show(const char *p, size_t n)
{
    static char  bufs[4][512];
    static int   which;
    char        *b = bufs[which++ % 4];
    size_t       i, o = 0;

    if (p == NULL) {
        return "(null)";
    }
    for (i = 0; i < n && o < sizeof(bufs[0]) - 5; i++) {
        unsigned char c = (unsigned char) p[i];
        if (c < 0x21 || c >= 0x7f || c == '#' || c == '\\') {
            o += snprintf(b + o, 5, "\\x%02x", c);
        } else {
            b[o++] = (char) c;
        }
    }
    b[o] = '\0';
    return b;
}

/* want NULL: s is the null string; else s holds want (data not NULL even
 * when empty, which is how "/a?" differs from "/a"). */
static bool
str_is(const rx_str_t *s, const char *want)
{
    if (want == NULL) {
        return s->data == NULL && s->len == 0;
    }
    return s->data != NULL && s->len == strlen(want)
           && (s->len == 0 || memcmp(s->data, want, s->len) == 0);
}

/* Same bytes, an empty string matching whatever its data pointer. */
static bool
bytes_are(const rx_str_t *s, const char *want)
{
    return s->len == strlen(want)
           && (s->len == 0 || memcmp(s->data, want, s->len) == 0);
}

/* ---- rx_http_parse_request_target ---- */

#define NOARGS  NULL          /* args.data must be NULL: there was no '?' */
#define ANY     -1

typedef struct {
    const char  *target;
    size_t       tlen;        /* 0: strlen(target) */
    bool         merge;
    rx_int_t     rc;
    const char  *path;
    const char  *args;
    const char  *exten;       /* "" when none */
    const char  *host;        /* NULL: origin-form, host must be empty */
    rx_uint_t    port;
    int          quoted;      /* 0, 1 or ANY */
    int          complex;
} uri_case_t;

/* origin-form, merge_slashes on */
#define T(t, p, a, e)              { t, 0, true, RX_OK, p, a, e, NULL, 0, ANY, ANY }
#define TF(t, p, a, e, q, c)       { t, 0, true, RX_OK, p, a, e, NULL, 0, q, c }
#define TN(t, p)                   { t, 0, false, RX_OK, p, NOARGS, "", NULL, 0, ANY, ANY }
#define ABS(t, h, port, p, a, e)   { t, 0, true, RX_OK, p, a, e, h, port, ANY, ANY }
#define BAD(t)                     { t, 0, true, 400, NULL, NULL, NULL, NULL, 0, ANY, ANY }
#define BADN(t, n)                 { t, n, true, 400, NULL, NULL, NULL, NULL, 0, ANY, ANY }
#define BADNM(t)                   { t, 0, false, 400, NULL, NULL, NULL, NULL, 0, ANY, ANY }

static const uri_case_t uri_cases[] = {

    /* plain, query, fragment */
    TF("/", "/", NOARGS, "", 0, 0),
    TF("/index.html", "/index.html", NOARGS, "html", 0, 0),
    TF("/a/b/c", "/a/b/c", NOARGS, "", 0, 0),
    T("/a/b/", "/a/b/", NOARGS, ""),
    T("/a?b=c", "/a", "b=c", ""),
    T("/a?", "/a", "", ""),                          /* empty, but present */
    T("/?", "/", "", ""),
    T("/a?b=c?d/../e", "/a", "b=c?d/../e", ""),     /* query is not touched */
    T("/a?x=%zz%00", "/a", "x=%zz%00", ""),          /* ... nor decoded */
    T("/a#frag", "/a", NOARGS, ""),
    T("/a?b#frag", "/a", "b", ""),
    T("/a.txt#x.y", "/a.txt", NOARGS, "txt"),
    T("/a+b", "/a+b", NOARGS, ""),
    T("/caf\xc3\xa9", "/caf\xc3\xa9", NOARGS, ""), /* raw UTF-8 passes */
    /* the one-pass way (no escape, "//", "/." or '#'): the same answers */
    TF("/a./b.c?d.e", "/a./b.c", "d.e", "c", 0, 0),
    TF("/a.b/c", "/a.b/c", NOARGS, "", 0, 0),
    T("/a/b.tar.gz?", "/a/b.tar.gz", "", "gz"),
    T("/a?b/./c//d", "/a", "b/./c//d", ""),
    BAD("/a?b\x7f"),
    BAD("/a?b\tc"),
    BAD("/a\x01b?c"),

    /* percent-decoding of the path */
    TF("/%41%62c", "/Abc", NOARGS, "", 1, 0),
    T("/caf%C3%A9", "/caf\xc3\xa9", NOARGS, ""),
    T("/a%20b", "/a b", NOARGS, ""),
    T("/a%2Bb", "/a+b", NOARGS, ""),
    T("/a%23b", "/a#b", NOARGS, ""),                 /* decoded '#': data */
    T("/a%3Fb?c", "/a?b", "c", ""),                  /* decoded '?': data */
    T("/a%3fb", "/a?b", NOARGS, ""),
    T("/a%25b", "/a%b", NOARGS, ""),
    T("/a%0ab", "/a\nb", NOARGS, ""),                /* nginx: only %00 */
    T("/a/b.%74xt", "/a/b.txt", NOARGS, "txt"),

    /* dot segments */
    TF("/a/./b", "/a/b", NOARGS, "", 0, 1),
    TF("/a/../b", "/b", NOARGS, "", 0, 1),
    T("/a/b/..", "/a/", NOARGS, ""),
    T("/a/b/.", "/a/b/", NOARGS, ""),
    T("/a/b/../../c", "/c", NOARGS, ""),
    T("/a/..", "/", NOARGS, ""),
    T("/.", "/", NOARGS, ""),
    T("/./", "/", NOARGS, ""),
    T("/a/.?x", "/a/", "x", ""),
    T("/a/b/..?x", "/a/", "x", ""),
    TF("/a/..b", "/a/..b", NOARGS, "", 0, 0),        /* not a dot segment */
    TF("/a/.../b", "/a/.../b", NOARGS, "", 0, 0),
    T("/..a/b", "/..a/b", NOARGS, ""),

    /* slashes */
    TF("//a//b", "/a/b", NOARGS, "", 0, 1),
    TN("//a//b", "//a//b"),
    T("/a//../b", "/b", NOARGS, ""),
    TN("/a//../b", "/a/b"),                          /* ".." drops the "" */
    T("/a///", "/a/", NOARGS, ""),
    TN("///", "///"),
    TN("//..", "/"),
    T("/a%2fb", "/a/b", NOARGS, ""),                 /* decoded '/' is one */
    T("/a%2F%2Fb", "/a/b", NOARGS, ""),

    /* traversal, every encoding */
    BAD("/.."),
    BAD("/../"),
    BAD("/../etc/passwd"),
    BAD("/a/../../etc"),
    BAD("/a/b/../../../etc/passwd"),
    BAD("/%2e%2e/x"),
    BAD("/%2E%2e/x"),
    BAD("/.%2e/x"),
    BAD("/%2e./x"),
    BAD("/%2e%2e"),
    BAD("/a/%2e%2e/%2e%2e/x"),
    TF("/a/%2e%2e/b", "/b", NOARGS, "", 1, 1),
    BAD("/a/..%2f..%2fetc"),
    BAD("/a/..%2F..%2Fetc/passwd"),
    T("/a/..%2fb", "/b", NOARGS, ""),
    T("/a/b/..%2F..%2Fc", "/c", NOARGS, ""),
    BAD("/a%2f..%2f..%2fetc"),
    BAD("/%2f%2e%2e"),                               /* "//..", merged */
    TN("/%2f%2e%2e", "/"),                           /* "//..", unmerged */
    BADNM("/%2e%2e%2f%2e%2e"),
    T("/%252e%252e/x", "/%2e%2e/x", NOARGS, ""),     /* decoded once */
    T("/a/%252e%252e%252fetc", "/a/%2e%2e%2fetc", NOARGS, ""),
    /* '\' is an ordinary byte on Linux, as in nginx: one odd name */
    T("/a/..\\..\\etc", "/a/..\\..\\etc", NOARGS, "\\etc"),
    T("/..\\x", "/..\\x", NOARGS, ""),
    T("/a\\..", "/a\\..", NOARGS, ""),
    BAD("/a%00b"),
    BAD("/a%00"),
    BAD("/a/%2e%2e%00"),
    BADN("/a\0b", 4),                                /* raw NUL */
    BADN("/a?\0", 4),

    /* bad escapes */
    BAD("/a%"),
    BAD("/a%2"),
    BAD("/a%zz"),
    BAD("/a%2g"),
    BAD("/a%g2"),
    BAD("/a%?x"),
    BAD("/a%2?x"),
    BAD("/a%#"),

    /* spaces and controls, anywhere */
    BAD("/a b"),
    BAD("/a\tb"),
    BAD("/a\r"),
    BAD("/a\n"),
    BAD("/a\x7f"),
    BAD("/a\x01"),
    BAD("/a?b c"),
    BAD("/a?\x1f"),
    BAD("/a#b c"),
    BAD(" /a"),

    /* neither form */
    BAD(""),
    BAD("a/b"),
    BAD("%2fa"),
    BAD("./a"),
    BAD("example.com:80"),                           /* authority-form */
    BAD("*/"),
    BAD("**"),

    /* absolute-form */
    ABS("http://example.com/a?b", "example.com", 0, "/a", "b", ""),
    ABS("http://Example.COM:8080/x.txt", "example.com", 8080, "/x.txt",
        NOARGS, "txt"),
    ABS("HTTPS://h", "h", 0, "/", NOARGS, ""),
    ABS("http://h?x=1", "h", 0, "/", "x=1", ""),
    ABS("http://h:/a", "h", 0, "/a", NOARGS, ""),
    ABS("http://h:65535/", "h", 65535, "/", NOARGS, ""),
    ABS("http://[::1]:443/", "[::1]", 443, "/", NOARGS, ""),
    ABS("http://[2001:DB8::1]/", "[2001:db8::1]", 0, "/", NOARGS, ""),
    ABS("http://example.com./", "example.com", 0, "/", NOARGS, ""),
    ABS("http://h/a/../b//c", "h", 0, "/b/c", NOARGS, ""),
    ABS("ftp://h/a", "h", 0, "/a", NOARGS, ""),      /* nginx: any scheme */
    ABS("http://1.2.3.4:80/", "1.2.3.4", 80, "/", NOARGS, ""),
    BAD("http://[::1/"),
    BAD("http://[]/"),
    BAD("http://[::1]x/"),
    BAD("http://user@h/"),
    BAD("http://h:99999/"),
    BAD("http://h:65536/"),
    BAD("http://h:8a/"),
    BAD("http://a..b/"),
    BAD("http:///a"),
    BAD("http://./"),
    BAD("http://:80/"),
    BAD("http:/a"),
    BAD("http:a"),
    BAD("http//h/"),
    BAD("http://h_x/"),
    BAD("http://h%41/"),
    BAD("http://h#f"),
    BAD("http://h/%2e%2e/"),
    BAD("ht~tp://h/"),
    BAD("1http://h/"),

    /* exten */
    T("/a.b/c", "/a.b/c", NOARGS, ""),
    T("/a/b.tar.gz", "/a/b.tar.gz", NOARGS, "gz"),
    T("/a/.hidden", "/a/.hidden", NOARGS, ""),       /* nginx: none */
    T("/a/.hidden.txt", "/a/.hidden.txt", NOARGS, "txt"),
    T("/a/..x.y", "/a/..x.y", NOARGS, "y"),
    T("/a/...x", "/a/...x", NOARGS, ""),
    T("/a/....x", "/a/....x", NOARGS, "x"),        /* nginx: 4th dot counts */
    T("/a/b.txt?x.y", "/a/b.txt", "x.y", "txt"),
    T("/a/b.", "/a/b.", NOARGS, ""),
    T("/a/b.txt/", "/a/b.txt/", NOARGS, ""),
    T("/a/b.txt/..", "/a/", NOARGS, ""),
    T("/a.b/..", "/", NOARGS, ""),
    T("/a/b.c%2fd", "/a/b.c/d", NOARGS, ""),
    T("/a/b%2Ehtml", "/a/b.html", NOARGS, "html"),
};

static void
check_uri_case(rx_pool_t *pool, const uri_case_t *c)
{
    rx_http_uri_t  u;
    size_t         tlen = c->tlen ? c->tlen : strlen(c->target);
    rx_int_t       rc;
    bool           good;
    const char    *why = "";

    rc = rx_http_parse_request_target(pool, c->target, tlen, &u, c->merge);

    if (rc != c->rc) {
        ok(false, "%s%s -> %d", show(c->target, tlen),
           c->merge ? "" : " (merge off)", (int) c->rc);
        diag("got %d, path \"%s\"", (int) rc,
             rc == RX_OK ? show(u.path.data, u.path.len) : "");
        return;
    }
    if (rc != RX_OK) {
        ok(true, "%s%s -> %d", show(c->target, tlen),
           c->merge ? "" : " (merge off)", (int) c->rc);
        return;
    }

    good = true;
    if (!str_is(&u.path, c->path) || u.path.data[u.path.len] != '\0') {
        good = false; why = "path";
    } else if (!str_is(&u.args, c->args)) {
        good = false; why = "args";
    } else if (!bytes_are(&u.exten, c->exten)) {
        good = false; why = "exten";
    } else if (u.unparsed.len != tlen || u.unparsed.data != c->target) {
        good = false; why = "unparsed";
    } else if (c->host == NULL ? u.host.len != 0 || u.scheme.len != 0
                                 || u.request_uri.data != c->target
                               : !str_is(&u.host, c->host))
    {
        good = false; why = "host";
    } else if (u.port != c->port) {
        good = false; why = "port";
    } else if (c->quoted != ANY && u.quoted != (c->quoted == 1)) {
        good = false; why = "quoted";
    } else if (c->complex != ANY && u.complex != (c->complex == 1)) {
        good = false; why = "complex";
    }

    if (!ok(good, "%s%s -> %s%s%s%s%s%s%s", show(c->target, tlen),
            c->merge ? "" : " (merge off)", show(c->path, strlen(c->path)),
            c->args ? " args \"" : "",
            c->args ? show(c->args, strlen(c->args)) : "",
            c->args ? "\"" : "", *c->exten ? " exten \"" : "",
            show(c->exten, strlen(c->exten)), *c->exten ? "\"" : ""))
    {
        diag("wrong %s: path \"%s\" args \"%s\" exten \"%s\"", why,
             show(u.path.data, u.path.len), show(u.args.data, u.args.len),
             show(u.exten.data, u.exten.len));
        diag("host \"%s\" port %lu quoted %d complex %d",
             show(u.host.data, u.host.len), (unsigned long) u.port,
             u.quoted, u.complex);
    }
}

static void
test_targets(rx_pool_t *pool)
{
    size_t i;

    for (i = 0; i < rx_nelems(uri_cases); i++) {
        check_uri_case(pool, &uri_cases[i]);
    }
}

/* The fields the table does not cover. */
static void
test_target_details(rx_pool_t *pool)
{
    rx_http_uri_t  u;
    const char    *t;
    rx_int_t       rc;

    t = "*";
    rc = rx_http_parse_request_target(pool, t, 1, &u, true);
    ok(rc == RX_HTTP_TARGET_ASTERISK && u.unparsed.data == t
       && u.unparsed.len == 1 && u.path.len == 0,
       "\"*\" is told apart, unparsed set, no path");

    t = "HTTP://Example.Com:81/a%2e%2e/b?c=d#e";
    rc = rx_http_parse_request_target(pool, t, strlen(t), &u, true);
    ok(rc == RX_OK && str_is(&u.scheme, "http")
       && str_is(&u.host, "example.com") && u.port == 81
       && str_is(&u.unparsed, t)
       && str_is(&u.request_uri, "/a%2e%2e/b?c=d#e")
       && str_is(&u.path, "/a../b") && str_is(&u.args, "c=d"),
       "absolute-form: scheme and host lower-cased, request_uri after it");

    t = "http://h?x";
    rc = rx_http_parse_request_target(pool, t, strlen(t), &u, true);
    ok(rc == RX_OK && str_is(&u.request_uri, "/?x"),
       "absolute-form with an empty path: request_uri gets its \"/\"");

    t = "http://h";
    rc = rx_http_parse_request_target(pool, t, strlen(t), &u, true);
    ok(rc == RX_OK && str_is(&u.request_uri, "/") && str_is(&u.path, "/")
       && u.args.data == NULL, "absolute-form without path or query");

    t = "/x/../y?q";
    rc = rx_http_parse_request_target(pool, t, strlen(t), &u, true);
    ok(rc == RX_OK && u.request_uri.data == t && u.request_uri.len == 9
       && u.args.data == t + 8 && u.path.data != t,
       "origin-form: request_uri and args point into the target");

    /* the path must be a fresh copy even when nothing changed, so that a
     * caller's buffer can go; and its NUL must lie within the copy */
    t = "/plain";
    rc = rx_http_parse_request_target(pool, t, strlen(t), &u, true);
    ok(rc == RX_OK && u.path.data != t && u.path.data[6] == '\0'
       && !u.quoted && !u.complex, "a plain path is copied, NUL-terminated");

    /* a long path of many ".." that exactly returns to the root */
    {
        char    buf[4096];
        size_t  n = 0;
        int     i;

        for (i = 0; i < 300; i++) {
            n += (size_t) snprintf(buf + n, sizeof(buf) - n, "/d%d", i);
        }
        for (i = 0; i < 300; i++) {
            n += (size_t) snprintf(buf + n, sizeof(buf) - n, "/..");
        }
        rc = rx_http_parse_request_target(pool, buf, n, &u, true);
        ok(rc == RX_OK && str_is(&u.path, "/"),
           "300 segments and 300 \"..\" give \"/\"");
        n += (size_t) snprintf(buf + n, sizeof(buf) - n, "/..");
        rc = rx_http_parse_request_target(pool, buf, n, &u, true);
        ok(rc == 400, "one more \"..\" is 400");
    }
}

/* ---- rx_http_validate_host ---- */

typedef struct {
    const char  *in;
    size_t       len;        /* 0: strlen(in) */
    const char  *out;        /* NULL: invalid */
} host_case_t;

static const host_case_t host_cases[] = {
    { "example.com", 0, "example.com" },
    { "Example.COM", 0, "example.com" },
    { "example.com:8080", 0, "example.com" },
    { "EXAMPLE.com:8080", 0, "example.com" },
    { "example.com.", 0, "example.com" },
    { "example.com.:80", 0, "example.com" },
    { "localhost", 0, "localhost" },
    { "host_name", 0, "host_name" },
    { "xn--caf-dma.example", 0, "xn--caf-dma.example" },
    { "\xc3\xa9t\xc3\xa9.example", 0, "\xc3\xa9t\xc3\xa9.example" },
    { ".example.com", 0, ".example.com" },
    { "a\\b", 0, "a\\b" },                 /* '\' is no separator on Linux */
    { "1.2.3.4:80", 0, "1.2.3.4" },
    { "[::1]", 0, "[::1]" },
    { "[::1]:80", 0, "[::1]" },
    { "[2001:DB8::1]:443", 0, "[2001:db8::1]" },
    { "[::1", 0, "[::1" },                 /* nginx takes it whole */
    { "a:b:c", 0, "a" },
    { "a[b:80", 0, "a[b" },                /* '[' opens a literal first only */
    { "a]b:80", 0, "a]b" },                /* ']' outside one: a byte */
    { "[A::1]:8.0", 0, "[a::1]" },         /* the port: only its checks */
    { "a:B", 0, "a" },                     /* the port is not folded */
    { "[::1]:", 0, "[::1]" },
    { "[a:b]]:80", 0, "[a:b]" },
    { "", 0, NULL },
    { ":80", 0, NULL },
    { ".", 0, NULL },
    { ".:80", 0, NULL },
    { "..", 0, NULL },
    { "a..b", 0, NULL },
    { "example.com..", 0, NULL },
    { "a:80..", 0, NULL },                 /* ".." anywhere, port too */
    { "a/b", 0, NULL },
    { "a:8/0", 0, NULL },
    { "a\0b", 3, NULL },
    { "a b", 0, NULL },
    { "a\tb", 0, NULL },
    { "a\r\nX-Injected: 1", 0, NULL },
    { "a\x7f", 0, NULL },
    { "a:80\x01", 0, NULL },
};

static void
test_hosts(rx_pool_t *pool)
{
    size_t i;

    for (i = 0; i < rx_nelems(host_cases); i++) {
        const host_case_t  *c = &host_cases[i];
        char                buf[64];
        rx_str_t            h;
        bool                valid, good;

        h.len = c->len ? c->len : strlen(c->in);
        memcpy(buf, c->in, h.len);
        h.data = buf;
        valid = rx_http_validate_host(&h, pool, false);

        if (c->out == NULL) {
            good = !valid && h.data == buf && h.len == (c->len ? c->len
                                                                : strlen(c->in));
        } else {
            good = valid && str_is(&h, c->out);
        }
        if (!ok(good, "host \"%s\" -> %s", show(c->in, c->len ? c->len
                                                              : strlen(c->in)),
                c->out ? show(c->out, strlen(c->out)) : "invalid"))
        {
            diag("got %s \"%s\"", valid ? "valid" : "invalid",
                 show(h.data, h.len));
        }
    }

    /* where the bytes end up */
    {
        char      buf[] = "Example.com:80";
        rx_str_t  h = { 11, buf };

        ok(rx_http_validate_host(&h, pool, false) && h.data != buf
           && str_is(&h, "example.com") && strcmp(buf, "Example.com:80") == 0,
           "upper case: a lower-cased copy, the input untouched");

        h.data = buf;
        h.len = 14;
        ok(rx_http_validate_host(&h, NULL, false) && h.data == buf
           && h.len == 11 && memcmp(buf, "example.com", 11) == 0,
           "upper case with pool NULL: lower-cased in place");
    }
    {
        char      buf[] = "example.com";
        rx_str_t  h = { 11, buf };

        ok(rx_http_validate_host(&h, pool, false) && h.data == buf,
           "lower case, alloc false: no copy");
        ok(rx_http_validate_host(&h, pool, true) && h.data != buf
           && str_is(&h, "example.com"), "alloc true: always a copy");
    }
}

/* ---- rx_http_escape_uri ---- */

typedef struct {
    const char  *in;
    size_t       len;
    rx_uint_t    type;
    const char  *out;
} escape_case_t;

static const escape_case_t escape_cases[] = {
    { "/a b?c#d%e", 0, RX_ESCAPE_URI, "/a%20b%3Fc%23d%25e" },
    { "/caf\xc3\xa9", 0, RX_ESCAPE_URI, "/caf%C3%A9" },
    { "/a\x01\x7f\r\n", 0, RX_ESCAPE_URI, "/a%01%7F%0D%0A" },
    { "/a\0b", 4, RX_ESCAPE_URI, "/a%00b" },
    { "/a/b;c=d&e+f:g@h!$'()*,~-._", 0, RX_ESCAPE_URI,
      "/a/b;c=d&e+f:g@h!$'()*,~-._" },
    { "<\"\\^`{|}>", 0, RX_ESCAPE_URI, "%3C%22%5C%5E%60%7B%7C%7D%3E" },
    { "a=b&c+d;e/f?g", 0, RX_ESCAPE_ARGS, "a=b%26c%2Bd%3Be/f%3Fg" },
    { "a/b c~-._:", 0, RX_ESCAPE_URI_COMPONENT, "a%2Fb%20c~-._%3A" },
    { "AZaz09", 0, RX_ESCAPE_URI_COMPONENT, "AZaz09" },
    { "a'b\"c<d #%", 0, RX_ESCAPE_HTML, "a%27b%22c<d%20%23%25" },
    { "a/b", 0, 99, "a%2Fb" },             /* unknown: the strictest */
    { "", 0, RX_ESCAPE_URI, "" },
};

static void
test_escape(void)
{
    size_t i;

    for (i = 0; i < rx_nelems(escape_cases); i++) {
        const escape_case_t  *c = &escape_cases[i];
        size_t                len = c->len ? c->len : strlen(c->in);
        size_t                need, got;
        char                  buf[256];

        need = rx_http_escape_uri(NULL, c->in, len, c->type);
        memset(buf, 'X', sizeof(buf));
        got = rx_http_escape_uri(buf, c->in, len, c->type);
        if (!ok(need == got && got == strlen(c->out)
                && memcmp(buf, c->out, got) == 0 && buf[got] == 'X',
                "escape type %lu \"%s\" -> \"%s\"", (unsigned long) c->type,
                show(c->in, len), show(c->out, strlen(c->out))))
        {
            diag("got %zu/%zu \"%s\"", need, got, show(buf, got));
        }
    }
}

/* ---- rx_http_parse_unsafe_uri (X-Accel-Redirect) ---- */

#define UNSAFE  NULL          /* path: RX_DECLINED expected */

typedef struct {
    const char  *in;
    size_t       len;         /* 0: strlen(in) */
    const char  *path;        /* UNSAFE, or the decoded path */
    const char  *args;        /* NOARGS when there is no '?' */
} unsafe_case_t;

static const unsafe_case_t unsafe_cases[] = {
    { "/protected/a.txt", 0, "/protected/a.txt", NOARGS },
    { "/a?b=1&c", 0, "/a", "b=1&c" },
    { "/a?", 0, "/a", "" },
    { "/a?x=/../..", 0, "/a", "x=/../.." },    /* args are not a path */
    { "/a%20b/%3F", 0, "/a b/?", NOARGS },       /* decoded once */
    { "/a/%252e%252e/b", 0, "/a/%2e%2e/b", NOARGS },
    { "/a/./b", 0, "/a/./b", NOARGS },           /* "." climbs nowhere */
    { "/a//b", 0, "/a//b", NOARGS },
    { "/a/...", 0, "/a/...", NOARGS },
    { "/a/..b/c..", 0, "/a/..b/c..", NOARGS },
    { "/a\\..\\b", 0, "/a\\..\\b", NOARGS },    /* one harmless name */
    { "/", 0, "/", NOARGS },

    { "", 0, UNSAFE, NULL },
    { "?a", 0, UNSAFE, NULL },
    { "..", 0, UNSAFE, NULL },
    { "../a", 0, UNSAFE, NULL },
    { "a/b", 0, UNSAFE, NULL },                /* stricter than nginx */
    { "/..", 0, UNSAFE, NULL },
    { "/../a", 0, UNSAFE, NULL },
    { "/protected/sub/../../../secret.txt", 0, UNSAFE, NULL },
    { "/a/..", 0, UNSAFE, NULL },
    { "/a/..?x", 0, UNSAFE, NULL },            /* nginx lets this one by */
    { "/a/%2e%2e/b", 0, UNSAFE, NULL },
    { "/a/%2E%2e", 0, UNSAFE, NULL },
    { "/a/.%2e/b", 0, UNSAFE, NULL },
    { "/a/..%2fb", 0, UNSAFE, NULL },
    { "/a%2f..%2fb", 0, UNSAFE, NULL },
    { "/a%00.txt", 0, UNSAFE, NULL },
    { "/a\0.txt", 7, UNSAFE, NULL },
    { "/a%zz", 0, UNSAFE, NULL },              /* stricter than nginx */
    { "/a%2", 0, UNSAFE, NULL },
};

static void
test_unsafe(rx_pool_t *pool)
{
    size_t i;

    for (i = 0; i < rx_nelems(unsafe_cases); i++) {
        const unsafe_case_t *c = &unsafe_cases[i];
        size_t               len = c->len ? c->len : strlen(c->in);
        char                *copy = malloc(len ? len : 1);
        rx_str_t             in, path = { 0, NULL }, args = { 0, NULL };
        rx_int_t             rc;
        bool                 good;

        /* an unterminated copy: the check must not lean on a NUL */
        memcpy(copy, c->in, len);
        in.data = copy;
        in.len = len;
        rc = rx_http_parse_unsafe_uri(pool, &in, &path, &args);
        if (c->path == UNSAFE) {
            good = rc == RX_DECLINED;
        } else {
            good = rc == RX_OK && str_is(&path, c->path)
                   && path.data[path.len] == '\0' && str_is(&args, c->args);
        }
        if (!ok(good, "unsafe URI check \"%s\" -> %s", show(c->in, len),
                c->path ? show(c->path, strlen(c->path)) : "unsafe")) {
            diag("got rc %ld path \"%s\" args \"%s\"", (long) rc,
                 rc == RX_OK ? show(path.data, path.len) : "",
                 rc == RX_OK ? show(args.data, args.len) : "");
        }
        free(copy);
    }
}

int
main(void)
{
    rx_pool_t *pool = rx_pool_create(4096, NULL);

    if (pool == NULL) {
        bail_out("no memory for a pool");
        return 1;
    }

    test_targets(pool);
    test_target_details(pool);
    test_hosts(pool);
    test_escape();
    test_unsafe(pool);

    rx_pool_destroy(pool);
    return done();
}
