/*
 * regex.h: compiled regular expressions (the pcre2 wrapper). Patterns are
 * compiled, and JIT-compiled where the library can, once at load time; a
 * match at request time only runs the compiled code.
 */
#ifndef RX_REGEX_H
#define RX_REGEX_H

#include "core.h"

typedef struct rx_regex_s rx_regex_t;

/* One named capture, "(?<name>...)": later modules turn these into
 * variables, so the table is kept in the order pcre2 reports it (sorted by
 * name). */
typedef struct {
    rx_str_t   name;     /* NUL-terminated */
    rx_uint_t  index;    /* capture number: $index */
} rx_regex_name_t;

/*
 * Compiles pattern (PCRE2_CASELESS when caseless). On failure returns NULL
 * and writes nginx's text into err, e.g.
 *   pcre2_compile() failed: missing closing parenthesis in "(abc"
 * (the caller appends " in file:line"). The compiled code and its match
 * data are freed by a cleanup handler of pool.
 */
rx_regex_t *rx_regex_compile(rx_pool_t *pool, const rx_str_t *pattern,
    bool caseless, char *err, size_t errlen);

/*
 * Matches s[0..len). Returns RX_DECLINED when it does not match, RX_ERROR
 * when pcre2 fails (match limit, bad UTF...), else the number of capture
 * pairs pcre2 set, $0 included (at least 1). When captures is not NULL the
 * first min(that, ncaptures) pairs are copied there as start/end offsets
 * (captures[2*i], captures[2*i+1]); a group that did not take part is
 * -1/-1. Pairs beyond the returned count are left untouched, and nothing is
 * written on RX_DECLINED.
 *
 * Uses match data owned by the regex: a worker is single-threaded, so one
 * per regex is enough and nothing is allocated per match.
 */
rx_int_t rx_regex_exec(rx_regex_t *re, const char *s, size_t len,
    int *captures, rx_uint_t ncaptures);

/* Number of capturing groups, $0 not counted (nginx's "captures"). */
rx_uint_t rx_regex_captures(const rx_regex_t *re);

/* The pattern as compiled (for logs: "... using \"%s\""). */
const rx_str_t *rx_regex_pattern(const rx_regex_t *re);

/* Capture number of a named group, or -1 when the pattern has none. */
rx_int_t rx_regex_named_index(const rx_regex_t *re, const rx_str_t *name);

/* The named groups: *n is set to their count (0 and NULL when none). */
const rx_regex_name_t *rx_regex_names(const rx_regex_t *re, rx_uint_t *n);

#endif /* RX_REGEX_H */
