/*
 * test_range.c: the Range header parser (http/http_range.c), table-driven.
 * Expectations follow RFC 9110 14.1-14.2 and nginx's range filter:
 * a syntactically invalid header is ignored (200, the whole body), a
 * valid one without a satisfiable range gets 416, ranges beyond the end
 * are clipped, unsatisfiable ranges among satisfiable ones are dropped,
 * and more satisfiable ranges than max_ranges, or ranges adding up to
 * more bytes than the whole, mean the whole body.
 */
#include "core.h"
#include "http_range.h"
#include "tap.h"

#define OK     RX_HTTP_RANGE_OK
#define IGNORE RX_HTTP_RANGE_IGNORE
#define UNSAT  RX_HTTP_RANGE_UNSATISFIABLE

typedef struct {
    const char  *header;
    int64_t      size;
    rx_uint_t    max;
    rx_int_t     rc;
    const char  *ranges;      /* with OK: "start:end ..." each [start, end) */
} range_case_t;

static const range_case_t cases[] = {

    /* one range */
    { "bytes=0-0", 1000, 8, OK, "0:1" },
    { "bytes=0-499", 1000, 8, OK, "0:500" },
    { "bytes=500-999", 1000, 8, OK, "500:1000" },
    { "bytes=500-", 1000, 8, OK, "500:1000" },
    { "bytes=0-", 1000, 8, OK, "0:1000" },
    { "bytes=999-", 1000, 8, OK, "999:1000" },
    { "bytes=-500", 1000, 8, OK, "500:1000" },
    { "bytes=-1", 1000, 8, OK, "999:1000" },
    { "bytes=-1000", 1000, 8, OK, "0:1000" },
    { "bytes=-5000", 1000, 8, OK, "0:1000" },        /* longer than the file */
    { "bytes=5-5", 1000, 8, OK, "5:6" },
    { "Bytes=0-1", 1000, 8, OK, "0:2" },             /* the unit is caseless */
    { "BYTES=0-1", 1000, 8, OK, "0:2" },

    /* clipped at the end */
    { "bytes=900-2000", 1000, 8, OK, "900:1000" },
    { "bytes=0-999", 1000, 8, OK, "0:1000" },
    { "bytes=0-1000", 1000, 8, OK, "0:1000" },
    { "bytes=0-9223372036854775799", 1000, 8, OK, "0:1000" },

    /* unsatisfiable */
    { "bytes=-0", 1000, 8, UNSAT, NULL },
    { "bytes=1000-", 1000, 8, UNSAT, NULL },
    { "bytes=1000-1000", 1000, 8, UNSAT, NULL },
    { "bytes=1001-2000", 1000, 8, UNSAT, NULL },
    { "bytes=5000-", 1000, 8, UNSAT, NULL },
    { "bytes=1000-,2000-3000,-0", 1000, 8, UNSAT, NULL },
    { "bytes=9223372036854775000-", 1000, 8, UNSAT, NULL },

    /* several */
    { "bytes=0-0,-1", 1000, 8, OK, "0:1 999:1000" },
    { "bytes=0-99,200-299,-100", 1000, 8, OK, "0:100 200:300 900:1000" },
    { "bytes=500-,0-9", 1000, 8, OK, "500:1000 0:10" },   /* order kept */
    { "bytes=0-9,5-14", 1000, 8, OK, "0:10 5:15" },       /* overlap kept */
    { "bytes=0-9,0-9", 1000, 8, OK, "0:10 0:10" },
    { "bytes=0-1, 4-5", 1000, 8, OK, "0:2 4:6" },          /* OWS after ',' */
    { "bytes=0-1 ,4-5", 1000, 8, OK, "0:2 4:6" },
    { "bytes=0-1 , 4-5 , -1", 1000, 8, OK, "0:2 4:6 999:1000" },
    { "bytes= 0-1", 1000, 8, OK, "0:2" },
    { "bytes=0-1\t,\t4-5", 1000, 8, OK, "0:2 4:6" },
    { "bytes=0-1,4-", 1000, 8, OK, "0:2 4:1000" },
    { "bytes=6-,4-5", 1000, 8, OK, "6:1000 4:6" },
    { "bytes=0 - 1", 1000, 8, OK, "0:2" },         /* nginx skips spaces too */
    { "bytes=6- ,4-5", 1000, 8, OK, "6:1000 4:6" },

    /* unsatisfiable ones among satisfiable: dropped */
    { "bytes=0-1,2000-3000", 1000, 8, OK, "0:2" },
    { "bytes=2000-3000,0-1", 1000, 8, OK, "0:2" },
    { "bytes=1000-,-0,10-19", 1000, 8, OK, "10:20" },
    { "bytes=0-1,5000-,-2", 1000, 8, OK, "0:2 998:1000" },

    /* max_ranges */
    { "bytes=0-1,4-5,8-9", 1000, 3, OK, "0:2 4:6 8:10" },
    { "bytes=0-1,4-5,8-9", 1000, 2, IGNORE, NULL },
    { "bytes=0-1,4-5", 1000, 1, IGNORE, NULL },
    { "bytes=0-1", 1000, 1, OK, "0:2" },
    { "bytes=5000-,0-1,6000-", 1000, 1, OK, "0:2" },  /* only kept ones count */
    { "bytes=0-1", 1000, 0, IGNORE, NULL },           /* max_ranges 0: off */
    { "bytes=5000-", 1000, 0, IGNORE, NULL },

    /* not a bytes range: ignored (200) */
    { "", 1000, 8, IGNORE, NULL },
    { "bytes", 1000, 8, IGNORE, NULL },
    { "bytes=", 1000, 8, IGNORE, NULL },
    { "bytes=  ", 1000, 8, IGNORE, NULL },
    { "items=0-1", 1000, 8, IGNORE, NULL },
    { "0-1", 1000, 8, IGNORE, NULL },                 /* no "bytes=" */
    { "=0-1", 1000, 8, IGNORE, NULL },

    /* a malformed bytes range: 416, as nginx 1.22 answers each of these */
    { "bytes=-", 1000, 8, UNSAT, NULL },
    { "bytes=a-b", 1000, 8, UNSAT, NULL },
    { "bytes=0-b", 1000, 8, UNSAT, NULL },
    { "bytes=a-1", 1000, 8, UNSAT, NULL },
    { "bytes=5-1", 1000, 8, UNSAT, NULL },            /* last < first: none */
    { "bytes=0-1,5-1", 1000, 8, OK, "0:2" },          /* ... dropped (nginx) */
    { "bytes=0-1,x", 1000, 8, UNSAT, NULL },
    { "bytes=0-1,", 1000, 8, UNSAT, NULL },
    { "bytes=,0-1", 1000, 8, UNSAT, NULL },
    { "bytes=1", 1000, 8, UNSAT, NULL },
    { "bytes=1-2-3", 1000, 8, UNSAT, NULL },
    { "bytes=--1", 1000, 8, UNSAT, NULL },
    { "bytes=-1-2", 1000, 8, UNSAT, NULL },
    { "bytes=+1-2", 1000, 8, UNSAT, NULL },
    { "bytes=0x10-20", 1000, 8, UNSAT, NULL },
    { "bytes=0-1;2-3", 1000, 8, UNSAT, NULL },
    { "bytes=0-1 2-3", 1000, 8, UNSAT, NULL },
    { "bytes 0-1", 1000, 8, IGNORE, NULL },
    { "bytes =0-1", 1000, 8, IGNORE, NULL },
    { "bytesx=0-1", 1000, 8, IGNORE, NULL },
    { " bytes=0-1", 1000, 8, IGNORE, NULL },

    /* numbers too large for an offset: malformed, 416 (nginx) */
    { "bytes=99999999999999999999-", 1000, 8, UNSAT, NULL },
    { "bytes=0-99999999999999999999", 1000, 8, UNSAT, NULL },
    { "bytes=-99999999999999999999", 1000, 8, UNSAT, NULL },
    { "bytes=18446744073709551616-", 1000, 8, UNSAT, NULL },

    /* a file of 0 bytes: no int-range is satisfiable (RFC 9110 14.1.1);
     * a suffix range is, but there is nothing to cut: the whole (empty)
     * body, as nginx answers */
    { "bytes=0-", 0, 8, UNSAT, NULL },
    { "bytes=0-0", 0, 8, UNSAT, NULL },
    { "bytes=-0", 0, 8, UNSAT, NULL },
    { "bytes=-1", 0, 8, IGNORE, NULL },
    { "bytes=-500", 0, 8, IGNORE, NULL },
    { "bytes=0-,-1", 0, 8, IGNORE, NULL },

    /* a file of 1 byte */
    { "bytes=0-0", 1, 8, OK, "0:1" },
    { "bytes=0-", 1, 8, OK, "0:1" },
    { "bytes=-1", 1, 8, OK, "0:1" },
    { "bytes=-2", 1, 8, OK, "0:1" },
    { "bytes=1-", 1, 8, UNSAT, NULL },

    /* a large file */
    { "bytes=4294967296-", 8589934592LL, 8, OK, "4294967296:8589934592" },
    { "bytes=-4294967296", 8589934592LL, 8, OK, "4294967296:8589934592" },

    /* several adding up to more than the whole (overlaps): the whole */
    { "bytes=0-,0-", 1000, 8, IGNORE, NULL },
    { "bytes=0-500,500-999", 1000, 8, IGNORE, NULL },      /* 1001 bytes */
    { "bytes=0-499,500-999", 1000, 8, OK, "0:500 500:1000" },  /* exactly */
    { "bytes=0-499,-500", 1000, 8, OK, "0:500 500:1000" },
    { "bytes=0-499,-501", 1000, 8, IGNORE, NULL },
    { "bytes=0-9,0-9,0-9", 1000, 8, OK, "0:10 0:10 0:10" },    /* small */
    { "bytes=0-,5000-", 1000, 8, OK, "0:1000" },   /* the unsatisfiable
                                                      one does not count */
    { "bytes=0-,0-9223372036854775799", 1000, 8, IGNORE, NULL },
    { "bytes=0-,0-", 9223372036854775807LL, 8, IGNORE, NULL }, /* no overflow */
    { "bytes=0-0,0-0", 1, 8, IGNORE, NULL },
    { "bytes=0-0", 1, 8, OK, "0:1" },
};

/* "start:end ..." of what the parser returned */
static const char *
show_ranges(const rx_http_range_t *r, rx_uint_t n)
{
    static char buf[512];
    size_t      o = 0;
    rx_uint_t   i;

    buf[0] = '\0';
    for (i = 0; i < n && o < sizeof(buf) - 48; i++) {
        o += (size_t) snprintf(buf + o, sizeof(buf) - o, "%s%" PRId64 ":%" PRId64,
                               i ? " " : "", r[i].start, r[i].end);
    }
    return buf;
}

static const char *
rc_name(rx_int_t rc)
{
    return rc == OK ? "OK" : rc == IGNORE ? "IGNORE" : rc == UNSAT ? "416"
           : "?";
}

static void
test_table(void)
{
    rx_http_range_t  r[16];
    rx_uint_t        i, n;
    rx_int_t         rc;

    for (i = 0; i < rx_nelems(cases); i++) {
        const range_case_t *c = &cases[i];
        /* the header as an unterminated copy, so that the parser cannot
         * lean on a NUL (ASan sees a read past it) */
        size_t   len = strlen(c->header);
        char    *copy = malloc(len ? len : 1);
        rx_str_t h;
        bool     good;

        memcpy(copy, c->header, len);
        h.len = len;
        h.data = copy;
        memset(r, 0x5a, sizeof(r));
        n = 12345;
        rc = rx_http_parse_range(&h, c->size, r, c->max, &n);

        good = rc == c->rc;
        if (good && rc == OK) {
            good = strcmp(show_ranges(r, n), c->ranges) == 0;
        }
        if (good && rc != OK) {
            good = n <= c->max;     /* n means nothing then, but stays in room */
        }
        if (!ok(good, "'%s' size %" PRId64 " max %lu -> %s%s%s", c->header,
                c->size, (unsigned long) c->max, rc_name(c->rc),
                c->ranges ? " " : "", c->ranges ? c->ranges : "")) {
            diag("got %s, %lu ranges: %s", rc_name(rc), (unsigned long) n,
                 rc == OK || n <= 16 ? show_ranges(r, n > 16 ? 0 : n) : "");
        }
        free(copy);
    }
}

/* n is always set, also when the header is ignored; ranges are written
 * only up to max. */
static void
test_bounds(void)
{
    rx_http_range_t  r[4];
    rx_uint_t        n = 99;
    rx_str_t         h = rx_string("bytes=0-1,2-3,4-5");
    rx_int_t         rc;

    memset(r, 0, sizeof(r));
    rc = rx_http_parse_range(&h, 100, r, 2, &n);
    ok(rc == IGNORE && n <= 2 && r[2].start == 0 && r[2].end == 0,
       "3 ranges for room 2: ignored, nothing written past the room");

    memset(r, 0, sizeof(r));
    rc = rx_http_parse_range(&h, 100, r, 3, &n);
    is_int(rc, OK, "3 ranges for room 3: OK");
    is_int(n, 3, "3 ranges for room 3: n = 3");
    ok(r[3].start == 0 && r[3].end == 0, "nothing written past n");

    n = 99;
    rx_str_set(&h, "items=0-1");
    rx_http_parse_range(&h, 100, r, 3, &n);
    is_int(n, 0, "n is 0 for an ignored header");

    /* many ranges, up to a large max */
    {
        static rx_http_range_t big[200];
        char                   text[200 * 12 + 8], *p = text;
        rx_uint_t              i;
        bool                   all = true;

        p += sprintf(p, "bytes=");
        for (i = 0; i < 200; i++) {
            p += sprintf(p, "%s%lu-%lu", i ? "," : "", (unsigned long) i * 10,
                         (unsigned long) i * 10 + 4);
        }
        h.data = text;
        h.len = (size_t) (p - text);
        rc = rx_http_parse_range(&h, 100000, big, 200, &n);
        for (i = 0; rc == OK && i < n; i++) {
            all = all && big[i].start == (int64_t) i * 10
                  && big[i].end == (int64_t) i * 10 + 5;
        }
        ok(rc == OK && n == 200 && all, "200 ranges with max 200");
        rc = rx_http_parse_range(&h, 100000, big, 199, &n);
        is_int(rc, IGNORE, "200 ranges with max 199: ignored");
    }

    /* the amplification: 64 times the whole file */
    {
        static rx_http_range_t big[64];
        char                   text[64 * 3 + 8], *p = text;
        rx_uint_t              i;

        p += sprintf(p, "bytes=");
        for (i = 0; i < 64; i++) {
            p += sprintf(p, "%s0-", i ? "," : "");
        }
        h.data = text;
        h.len = (size_t) (p - text);
        rc = rx_http_parse_range(&h, 1024 * 1024, big, 64, &n);
        is_int(rc, IGNORE, "64 times \"0-\" of 1 MiB: the whole file");
    }
}

int
main(void)
{
    test_table();
    test_bounds();
    return done();
}
