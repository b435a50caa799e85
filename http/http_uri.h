/*
 * http_uri.h: the request-target of HTTP/1.x (RFC 9112 3.2): splitting,
 * percent-decoding and dot-segment normalisation of the path with nginx's
 * semantics, the check of an upstream's X-Accel-Redirect URI, Host
 * validation, and escaping for headers and logs.
 */
#ifndef RX_HTTP_URI_H
#define RX_HTTP_URI_H

#include "core.h"

/*
 * A parsed request-target. Every rx_str_t points either into the target
 * given to the parser (unparsed, args, and the others when nothing had to
 * change) or into memory from the request pool.
 */
typedef struct {
    rx_str_t   unparsed;    /* the whole target as received */
    rx_str_t   request_uri; /* path and query as sent, nginx's $request_uri:
                               the target for origin-form; for absolute-form
                               what follows the authority, "/" prepended
                               when the path is empty */
    rx_str_t   path;        /* $uri: decoded and normalised, starts with '/',
                               NUL-terminated, never contains a NUL */
    rx_str_t   args;        /* query without '?', raw (not decoded), cut at
                               '#'; data NULL when there was no '?', len 0
                               for "/a?" */
    rx_str_t   exten;       /* after the last '.' of path's last segment,
                               up to three leading dots of the segment not
                               counting (nginx): "gz" for /a/b.tar.gz,
                               empty for /a.b/c and /a/.hidden */
    rx_str_t   scheme;      /* absolute-form: lower-cased; else empty */
    rx_str_t   host;        /* absolute-form: lower-cased, without port or
                               trailing dot, "[v6]" keeps its brackets;
                               else empty */
    rx_uint_t  port;        /* absolute-form ":port", 0 when absent */
    bool       quoted;      /* the path had a %XX escape */
    bool       complex;     /* the path had a ".", ".." or empty ("//")
                               segment (after decoding) */
} rx_http_uri_t;

/* rx_http_parse_request_target() answers this for the asterisk-form "*"
 * (OPTIONS *): out->unparsed is set, the rest is empty. */
#define RX_HTTP_TARGET_ASTERISK  RX_DECLINED

/*
 * Parses `target` (`len` bytes, the request-target exactly as it stood in
 * the request line) into `out`, allocating the decoded path from `pool`.
 *
 * Returns
 *   RX_OK                    parsed;
 *   RX_HTTP_TARGET_ASTERISK  the target is "*";
 *   400                      malformed: not origin-form ("/...") nor
 *                            absolute-form ("scheme://authority[/...]");
 *                            a space or control byte (0x00-0x1f, 0x7f)
 *                            anywhere; '%' not followed by two hex digits
 *                            in the path; "%00"; a ".." that would climb
 *                            above "/"; a bad authority (userinfo, a
 *                            character other than letters, digits, '.' and
 *                            '-' in a host name, "..", an empty host, a
 *                            port that is not digits or exceeds 65535);
 *   RX_ERROR                 the pool is exhausted (answer 500).
 * Length limits (414) are the caller's. After an error `out` is undefined.
 *
 * The path is decoded before the dot segments are resolved, as nginx does,
 * so "%2e" is a dot and "%2f" a slash for that purpose: "/a/%2e%2e/b" is
 * "/b" and "/%2e%2e/x" is 400. Decoding happens once: "%252e" becomes the
 * literal segment "%2e". A decoded '?', '#' or '%' is plain data.
 * `merge_slashes` collapses runs of '/'. A backslash is an ordinary byte
 * (Linux paths have no other separator), so "..\.." is one harmless name.
 * A raw '#' ends the path or the query (the fragment is dropped, as nginx
 * does). Bytes 0x80-0xff pass through. The query is never decoded.
 */
rx_int_t rx_http_parse_request_target(rx_pool_t *pool, const char *target,
    size_t len, rx_http_uri_t *out, bool merge_slashes);

/*
 * Validates and normalises a Host header value (or the authority of an
 * absolute-form target) with nginx's rules (ngx_http_validate_host):
 *   - a '.' right after another '.' anywhere is invalid;
 *   - '/' and any byte <= 0x20 or 0x7f (NUL, controls, space, tab) anywhere
 *     are invalid; a backslash and bytes 0x80-0xff are allowed;
 *   - a value starting with '[' is an IP literal: the host runs through the
 *     first ']' (brackets kept, ':' inside it is not a port separator);
 *   - otherwise the host ends at the first ':' (the port, not checked
 *     further beyond the rules above, is dropped);
 *   - one trailing '.' of the host is dropped ("example.com." is
 *     "example.com");
 *   - an empty host ("", ":80", ".") is invalid.
 * On success host->len is the host's length and the host is lower-cased:
 * when it has upper-case letters, or when `alloc` asks for a copy anyway,
 * host->data becomes a lower-cased copy from `pool` (with pool NULL the
 * bytes are lower-cased in place, for a caller that owns them).
 * Returns false when invalid (answer 400 "client sent invalid host
 * header"), and also when the pool is exhausted (it has logged that);
 * host is unchanged then.
 */
/*
 * Checks a URI an upstream named for an internal redirect
 * (X-Accel-Redirect) with nginx's rules (ngx_http_parse_unsafe_uri): the
 * query after the first '?' is split off as sent, the path is
 * percent-decoded and then refused when it is empty (also "?a" alone),
 * holds a NUL (raw or "%00"), or has a ".." segment anywhere ("..",
 * "/a/../b", "/a/..", and "%2e%2e" or "..%2f" once decoded). "." and
 * empty segments pass as in nginx: they climb nowhere. Two rules are
 * stricter than nginx, which would serve something odd instead: a path
 * must start with '/' (nginx appends "x" to the server's root: a sibling
 * "root-x" directory), and a '%' not followed by two hex digits is
 * refused (nginx drops the '%').
 *
 * Returns RX_OK with *path the decoded path (NUL-terminated, from pool)
 * and *args the query (data NULL when there was no '?'); RX_DECLINED
 * when the URI is unsafe (the caller logs it and answers 404); RX_ERROR
 * when the pool is exhausted.
 */
rx_int_t rx_http_parse_unsafe_uri(rx_pool_t *pool, const rx_str_t *uri,
    rx_str_t *path, rx_str_t *args);

/* The extension of a path as nginx sees it (also after internal
 * redirects): after the last '.' of the last segment, up to three leading
 * dots not counting; empty when none. */
void rx_http_uri_exten(const rx_str_t *path, rx_str_t *exten);

bool rx_http_validate_host(rx_str_t *host, rx_pool_t *pool, bool alloc);

/*
 * Escape types for rx_http_escape_uri(). Every type escapes bytes <= 0x20,
 * 0x7f and 0x80-0xff; beyond that:
 *   URI            " # % < > ? \ ^ ` { | }     a path for Location,
 *                                               $request_uri-style logs
 *   ARGS           the URI set and & + ;       a query argument value
 *   URI_COMPONENT  everything but ALPHA DIGIT - . _ ~
 *   HTML           " # % '                     an href in generated HTML
 *                                               (then HTML-escape it)
 * These are nginx's ngx_escape_uri() sets.
 */
#define RX_ESCAPE_URI            0
#define RX_ESCAPE_ARGS           1
#define RX_ESCAPE_URI_COMPONENT  2
#define RX_ESCAPE_HTML           3

/*
 * Writes `len` bytes of `src` to `dst` with the bytes of `type`'s set as
 * %XX (upper-case hex) and returns the length written. With dst NULL
 * nothing is written and the length it would have is returned, so callers
 * size the buffer first. dst is not NUL-terminated. An unknown type escapes
 * as URI_COMPONENT, the strictest.
 */
size_t rx_http_escape_uri(char *dst, const char *src, size_t len,
    rx_uint_t type);

#endif /* RX_HTTP_URI_H */
