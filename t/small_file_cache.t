#!/usr/bin/perl
# small_file_cache.t: ringx keeps the bytes of small files static served
# (per worker) and checks them against the file at every request with one
# statx of its path instead of open, fstat, read and close. What must
# hold: a kept file is served without opening it; any change (in place at
# the same size, a rename over it, chmod, removal) is seen at the next
# request, as without the cache; a file changed in the last 2 seconds is
# not kept (timestamps are coarse: a second write within a tick would go
# unseen); ranges, conditionals, HEAD, gzip, sendfile, HTTP/2 and
# eviction give the bytes and validators an uncached request gives; off,
# file= and disable_symlinks keep files out; bad forms stop -t by name.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
# files are kept only on filesystems whose statx sees every change at once
my %local = map { $_ => 1 } qw(ef53 58465342 9123683e 1021994 794c7630 f2f52010 2fc12fc1);
my $fs = `stat -f -c %t ${\ $t->prefix}`;
chomp $fs;
plan(skip_all => "the test directory's filesystem (type 0x$fs) is not one "
    . 'small_file_cache keeps files of: every request opens (the other tests)')
    unless $local{$fs};
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; }
http {
    access_log off;
    types { text/plain txt; }
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        root html;
        location /off/ { alias html/; small_file_cache off; }
        location /sf/ { alias html/; sendfile on; }
        location /gz/ { alias html/; gzip on; gzip_types text/plain;
                        gzip_min_length 1; }
        location /tiny/ { alias html/many/; small_file_cache size=4k file=2k; }
        location /nolinks/ { alias html/; disable_symlinks on; }
        # the routes a request takes to a kept file
        location /tf/ { try_files /nope $uri /small.txt =404; }
        location /ep/ { error_page 404 /small.txt; }
        location /named/ { try_files /nope @kept; }
        location @kept { rewrite ^ /small.txt break; }
    }
}
EOF
my $small = "Hello, this is a 30-byte file\n";
my $mid = join '', map { chr(($_ * 7) % 251) } 1 .. 16384;
my $large = 'L' x 40000;
$t->write_file_raw('html/small.txt', $small);
$t->write_file_raw('html/mid.bin', $mid);
$t->write_file_raw('html/large.bin', $large);
$t->write_file_raw('html/inplace.txt', 'AAAAAAAAAA');
$t->write_file_raw('html/renamed.txt', 'old content');
$t->write_file_raw('html/chmod.txt', 'readable');
$t->write_file_raw('html/gone.txt', 'here');
$t->write_file_raw('html/text.txt', "compress me " x 100);
$t->write_file_raw('html/dir/index.html', 'the index');
$t->write_file_raw("html/many/f$_.txt", ($_ x 1000)) for 0 .. 9;
$t->run;
my ($w) = $t->worker_pids;
my $p = $t->port(0);

sub get {
    my ($path, @curl) = @_;
    return scalar `curl -s --max-time 10 @curl http://127.0.0.1:$p$path`;
}

# a file written just now is not kept: written twice at the same size
# within a tick, the second write must be what the next request gets
$t->write_file_raw('html/fresh.txt', 'first');
is(get('/fresh.txt'), 'first', 'a fresh file: served');
$t->write_file_raw('html/fresh.txt', 'again');
is(get('/fresh.txt'), 'again', '... rewritten at once at the same size: the new bytes');

# every file above is settled 2 seconds after it was written
sleep 3;

is(get('/small.txt'), $small, 'a settled small file: served (and kept)');
my ($have_strace) = system('strace -V >/dev/null 2>&1') == 0;
SKIP: {
    skip 'no strace here (apt-get install strace)', 8 unless $have_strace;
    my $N = 10;
    my $count = sub {
        my ($path) = @_;
        my $url = "http://127.0.0.1:$p$path";
        my ($got, $calls) = $t->syscalls_during($w, $url, sub {
            `curl -s --max-time 30 ${\ join ' ', ($url) x $N}`;
        });
        return ($got, ($calls->{openat2} // 0) + ($calls->{openat} // 0),
                $calls->{statx} // 0, $calls);
    };
    my ($got, $opens, $statx, $calls) = $count->('/small.txt');
    skip 'strace could not attach to the worker (ptrace refused)', 8
        unless %$calls;
    is($got, $small x $N, "$N keepalive responses of a kept file, whole");
    is($opens, 0, 'a kept file is not opened') or diag(explain $calls);
    cmp_ok($statx, '>=', $N, '... one statx of its path per request')
        or diag(explain $calls);
    ($got, $opens) = $count->('/tf/x');
    is($got, $small x $N, 'try_files to a kept file: its bytes');
    is($opens, 0, '... not opened (try_files tests with statx)');
    (undef, $opens) = $count->('/off/small.txt');
    cmp_ok($opens, '>=', $N, 'small_file_cache off: opened every time');
    (undef, $opens) = $count->('/large.bin');
    cmp_ok($opens, '>=', $N, 'a file above file= (32k by default): opened every time');
    (undef, $opens) = $count->('/nolinks/small.txt');
    cmp_ok($opens, '>=', $N, 'disable_symlinks on: opened (checked) every time');
}

# validators and ranges: what an uncached request gives
my $kept = `curl -s -D - -o /dev/null http://127.0.0.1:$p/small.txt`;
my $open = `curl -s -D - -o /dev/null http://127.0.0.1:$p/off/small.txt`;
my ($etag_k) = $kept =~ /^ETag: (\S+)/mi;
my ($etag_o) = $open =~ /^ETag: (\S+)/mi;
my ($lm_k) = $kept =~ /^Last-Modified: (.*?)\r?$/mi;
my ($lm_o) = $open =~ /^Last-Modified: (.*?)\r?$/mi;
ok(defined $etag_k && $etag_k eq $etag_o, 'kept: the ETag an open gives');
ok(defined $lm_k && $lm_k eq $lm_o, 'kept: the Last-Modified an open gives');
like($kept, qr/^Content-Length: 30\r?$/mi, 'kept: its Content-Length');
is(get('/small.txt', '-o /dev/null -w "%{http_code}"', "-H 'If-None-Match: $etag_k'"),
   '304', 'kept: If-None-Match with its ETag: 304');
is(get('/small.txt', '-r 7-10'), substr($small, 7, 4), 'kept: a range');
my $multi = get('/small.txt', '-r 0-4,7-10');
like($multi, qr/\r\n\r\nHello\r\n--.*\r\n\r\nthis\r\n--/s, 'kept: two ranges, multipart');
like(`curl -s -I http://127.0.0.1:$p/small.txt`, qr/^HTTP\/1.1 200/, 'kept: HEAD');
is(get('/small.txt', '-X POST'), get('/off/small.txt', '-X POST'),
   'kept: POST answered as without the cache');

is(get('/sf/mid.bin'), $mid, 'sendfile on, 16 KiB: the bytes (read, kept)');
is(get('/sf/mid.bin'), $mid, '... and again, from what was kept');
is(get('/gz/text.txt', '--compressed'), "compress me " x 100, 'gzip: inflates to the file');
is(get('/gz/text.txt', '--compressed'), "compress me " x 100, '... kept, the same');
like(get('/gz/text.txt', "-D - -o /dev/null -H 'Accept-Encoding: gzip'"),
     qr/^Content-Encoding: gzip\r?$/mi, '... compressed');
is(get('/small.txt', '--http2-prior-knowledge'), $small, 'HTTP/2: a kept file');
is(get('/large.bin'), $large, 'a file above file=: served whole');
for (1, 2) {
    is(get('/dir/'), 'the index', "index: the kept index file ($_)");
    is(get('/ep/nope'), $small, "error_page 404 to a kept file ($_)");
    is(get('/named/x'), $small, "try_files to a named location, to a kept file ($_)");
}

# eviction: 10 files of 1000 bytes through a 4 KiB store, twice over
my $ok = 0;
for my $round (1, 2) {
    for (0 .. 9) { $ok++ if get("/tiny/f$_.txt") eq ($_ x 1000); }
}
is($ok, 20, 'a store smaller than the files asked: every response right');

# changes to kept files (each was served once above or is now)
is(get('/inplace.txt'), 'AAAAAAAAAA', 'in place: served (kept)');
get('/inplace.txt');
open(my $fh, '+<', $t->prefix . '/html/inplace.txt') or die $!;
print $fh 'BBBBBBBBBB';
close $fh;
is(get('/inplace.txt'), 'BBBBBBBBBB', 'rewritten in place, same size: the new bytes at once');

is(get('/renamed.txt'), 'old content', 'rename: served (kept)');
$t->write_file_raw('html/renamed.new', 'new content');
rename($t->prefix . '/html/renamed.new', $t->prefix . '/html/renamed.txt') or die $!;
is(get('/renamed.txt'), 'new content', 'a file renamed over it: the new one at once');

is(get('/chmod.txt'), 'readable', 'chmod: served (kept)');
chmod 0000, $t->prefix . '/html/chmod.txt';
is(get('/chmod.txt', '-o /dev/null -w "%{http_code}"'), '403',
   'chmod 000: 403 at once, as an open says');
chmod 0644, $t->prefix . '/html/chmod.txt';

is(get('/gone.txt'), 'here', 'removal: served (kept)');
unlink $t->prefix . '/html/gone.txt';
is(get('/gone.txt', '-o /dev/null -w "%{http_code}"'), '404', 'removed: 404 at once');

$t->stop;

for my $case (['small_file_cache size=lots;', 'invalid size "size=lots"'],
              ['small_file_cache file=1m;', 'invalid file size "file=1m" (at most 128k)'],
              ['small_file_cache on;', 'invalid parameter "on"'],
              ['small_file_cache off; small_file_cache off;', 'is duplicate']) {
    Test::Ringx::http_line_refused_ok(@$case);
}
{
    my $c = Test::Ringx->new;
    $c->write_config(<<"EOF");
events { }
http {
    small_file_cache size=2m file=64k;
    server { listen 127.0.0.1:%%PORT_0%%;
             location / { small_file_cache off; }
             location /a/ { small_file_cache size=100k; } }
}
EOF
    my ($rc, $out, $err) = $c->ringx('-t');
    is($rc, 0, '-t: the documented forms are accepted') or diag($err);
}

done_testing;
