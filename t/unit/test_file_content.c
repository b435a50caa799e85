/*
 * test_file_content.c: small_file_cache's store (http/http_file_content.c)
 * on real files in a temporary directory: kept only when settled, small
 * and whole; found while statx says the same; dropped at a change in
 * place, a rename over, a chmod, a removal; bounded by size= with the
 * least recently used going first; an entry referenced by a response
 * survives its eviction until released (ASan sees the frees); one statx
 * an epoch of the worker's input (rx_ring_epoch), none after it in it.
 */
#include <sys/stat.h>
#include <sys/statfs.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "core.h"
#include "clock.h"
#include "ring.h"
#include "http_file_content.h"
#include "tap.h"

static char dir[] = "/tmp/rx-content-XXXXXX";

static void
write_file(const char *name, const char *data)
{
    char path[256];
    int  fd;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd == -1 || write(fd, data, strlen(data)) != (ssize_t) strlen(data)) {
        bail_out("cannot write a test file");
        exit(1);
    }
    close(fd);
}

/* Opens name and fills id as the opener does (fstat before the read). */
static int
open_id(const char *name, rx_http_file_id_t *id, char *path, size_t size)
{
    struct stat st;
    int         fd;

    snprintf(path, size, "%s/%s", dir, name);
    fd = open(path, O_RDONLY);
    if (fd == -1 || fstat(fd, &st) == -1) {
        return -1;
    }
    id->ino = st.st_ino;
    id->dev = st.st_dev;
    id->size = st.st_size;
    id->mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    id->ctime_ns = st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
    id->mode = st.st_mode;
    return fd;
}

/* Offers name's bytes to c as static does after reading it whole. */
static void
offer(rx_http_file_content_t *c, const char *name, const char *data)
{
    rx_http_file_id_t id;
    char              path[256];
    int               fd = open_id(name, &id, path, sizeof(path));

    rx_http_file_content_add(c, path, strlen(path), fd, &id, data,
                             strlen(data));
    close(fd);
}

static rx_http_content_entry_t *
find_in_epoch(rx_http_file_content_t *c, const char *name, const char **data,
    size_t *n)
{
    rx_http_file_id_t id;
    char              path[256];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return rx_http_file_content_find(c, path, strlen(path), data, n, &id);
}

/* A lookup for a request read after the last one: a new epoch. */
static rx_http_content_entry_t *
find(rx_http_file_content_t *c, const char *name, const char **data,
    size_t *n)
{
    rx_ring_epoch++;
    return find_in_epoch(c, name, data, n);
}

int
main(void)
{
    rx_pool_t               *pool;
    rx_http_file_content_t  *c;
    rx_http_content_entry_t *e, *pinned;
    const char              *data, *pdata = NULL;
    size_t                   n, pn = 0;
    char                     path[512], big[200];

    if (mkdtemp(dir) == NULL) {
        skip_all("no temporary directory");
        return 0;
    }
    {
        struct statfs sfs;
        /* the store keeps files of local filesystems only */
        if (statfs(dir, &sfs) != 0
            || (sfs.f_type != 0xEF53 && sfs.f_type != 0x01021994
                && sfs.f_type != 0x58465342 && sfs.f_type != 0x9123683E
                && sfs.f_type != 0x794c7630)) {
            rmdir(dir);
            skip_all("/tmp is on a filesystem the store keeps no files of");
            return 0;
        }
    }
    pool = rx_pool_create(4096, NULL);
    c = rx_http_file_content_create(pool, 1000, 100);
    ok(c != NULL, "a store of 1000 bytes, files of 100 at most");

    rx_time_sec = time(NULL);
    write_file("a.txt", "alpha");
    offer(c, "a.txt", "alpha");
    ok(find(c, "a.txt", &data, &n) == NULL, "a file written just now: not kept");

    /* the same file seen 3 seconds later (the clock, not the file, moves) */
    rx_time_sec += 3;
    offer(c, "a.txt", "alpha");
    e = find(c, "a.txt", &data, &n);
    ok(e != NULL && n == 5 && memcmp(data, "alpha", 5) == 0,
       "settled: kept, and found with its bytes");
    if (e) {
        rx_http_file_content_release(e);
    }

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    write_file("big.txt", big);
    rx_time_sec += 3;
    offer(c, "big.txt", big);
    ok(find(c, "big.txt", &data, &n) == NULL, "above file=: not kept");

    write_file("short.txt", "0123456789");
    rx_time_sec += 3;
    offer(c, "short.txt", "01234");
    ok(find(c, "short.txt", &data, &n) == NULL,
       "bytes that are not the whole file: not kept");

    /* a change in place at the same size: ctime and mtime move */
    write_file("b.txt", "bravo");
    rx_time_sec += 3;
    offer(c, "b.txt", "bravo");
    usleep(20000);
    write_file("b.txt", "BRAVO");
    ok(find(c, "b.txt", &data, &n) == NULL, "rewritten at the same size: dropped");
    ok(find(c, "b.txt", &data, &n) == NULL, "... and not found again");

    /* renamed over */
    write_file("r.txt", "old");
    rx_time_sec += 3;
    offer(c, "r.txt", "old");
    write_file("r.new", "new");
    snprintf(path, sizeof(path), "%s/r.new", dir);
    {
        char to[256];
        snprintf(to, sizeof(to), "%s/r.txt", dir);
        if (rename(path, to) != 0) {
            bail_out("rename");
            return 1;
        }
    }
    ok(find(c, "r.txt", &data, &n) == NULL, "a file renamed over it: dropped");

    /* chmod, then removal */
    write_file("m.txt", "mode");
    rx_time_sec += 3;
    offer(c, "m.txt", "mode");
    snprintf(path, sizeof(path), "%s/m.txt", dir);
    chmod(path, 0600);
    ok(find(c, "m.txt", &data, &n) == NULL, "chmod: dropped");
    rx_time_sec += 3;
    offer(c, "m.txt", "mode");
    e = find(c, "m.txt", &data, &n);
    ok(e != NULL, "kept again once settled");
    if (e) {
        rx_http_file_content_release(e);
    }
    unlink(path);
    ok(find(c, "m.txt", &data, &n) == NULL, "removed: dropped");

    /* one statx an epoch: a change after it is seen in the next epoch,
     * as it is by the requests read after it */
    write_file("e.txt", "echo");
    rx_time_sec += 3;
    offer(c, "e.txt", "echo");
    snprintf(path, sizeof(path), "%s/e.txt", dir);
    chmod(path, 0600);
    ok(find_in_epoch(c, "e.txt", &data, &n) == NULL,
       "an entry's first lookup checks it, even in the epoch it came in");
    rx_time_sec += 3;
    offer(c, "e.txt", "echo");
    e = find(c, "e.txt", &data, &n);
    ok(e != NULL && n == 4 && memcmp(data, "echo", 4) == 0,
       "checked with statx in a new epoch: found");
    if (e) {
        rx_http_file_content_release(e);
    }
    unlink(path);
    e = find_in_epoch(c, "e.txt", &data, &n);
    ok(e != NULL && n == 4 && memcmp(data, "echo", 4) == 0,
       "removed within the same epoch: no second statx, the bytes as checked");
    if (e) {
        rx_http_file_content_release(e);
    }
    ok(find(c, "e.txt", &data, &n) == NULL,
       "the next epoch's lookup sees the removal");

    /* size=: 1000 bytes hold a few entries of ~100 bytes with overhead */
    {
        int  i, kept = 0;
        char name[32], body[64];

        for (i = 0; i < 20; i++) {
            snprintf(name, sizeof(name), "f%02d.txt", i);
            snprintf(body, sizeof(body), "file number %02d", i);
            write_file(name, body);
        }
        rx_time_sec += 3;
        offer(c, "f00.txt", "file number 00");
        pinned = find(c, "f00.txt", &pdata, &pn);
        ok(pinned != NULL, "the first of 20 files kept, and held by a response");
        for (i = 1; i < 20; i++) {
            snprintf(name, sizeof(name), "f%02d.txt", i);
            snprintf(body, sizeof(body), "file number %02d", i);
            offer(c, name, body);
        }
        ok(c->used <= c->size, "the store stays within size= (%zu of %zu)",
           c->used, c->size);
        for (i = 0; i < 20; i++) {
            snprintf(name, sizeof(name), "f%02d.txt", i);
            e = find(c, name, &data, &n);
            if (e) {
                kept++;
                rx_http_file_content_release(e);
            }
        }
        ok(kept > 0 && kept < 20, "some kept, the oldest evicted (%d of 20)", kept);
        e = find(c, "f19.txt", &data, &n);
        ok(e != NULL, "the most recent is kept");
        if (e) {
            rx_http_file_content_release(e);
        }
        ok(find(c, "f00.txt", &data, &n) == NULL, "the held one was evicted");
        ok(pinned && pn == 14 && memcmp(pdata, "file number 00", 14) == 0,
           "... and its bytes stay readable while held");
        if (pinned) {
            rx_http_file_content_release(pinned);   /* freed now */
        }
        for (i = 0; i < 20; i++) {
            snprintf(path, sizeof(path), "%s/f%02d.txt", dir, i);
            unlink(path);
        }
    }

    /* the configuration's end frees every entry (ASan: no leak) */
    rx_time_sec += 3;
    write_file("z.txt", "zulu");
    rx_time_sec += 3;
    offer(c, "z.txt", "zulu");
    pinned = find(c, "z.txt", &pdata, &pn);
    ok(pinned != NULL, "an entry held when the store goes");
    rx_pool_destroy(pool);
    ok(pinned && memcmp(pdata, "zulu", 4) == 0, "... its bytes stay until released");
    if (pinned) {
        rx_http_file_content_release(pinned);
    }

    snprintf(path, sizeof(path), "rm -rf %s", dir);
    if (system(path) != 0) {
        diag("could not remove %s", dir);
    }
    return done();
}
