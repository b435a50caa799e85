#!/usr/bin/perl
# static_cache_lookup.t: index and try_files test their candidates through
# open_file_cache when it is on, as nginx does: a file removed after it was
# cached is still found (and served from the cached fd) until
# open_file_cache_valid passes; with open_file_cache_errors, a missing
# candidate stays missing. Without the cache the change shows at once.
# Directories (try_files $uri/) are found through the cache too.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    default_type text/plain;
    root html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location /tf/ {
            open_file_cache max=10;
            open_file_cache_valid 60s;
            open_file_cache_errors on;
            try_files $uri $uri/ /fallback.txt;
        }
        location /tfn/ {
            try_files $uri $uri/ /fallback.txt;
        }
        location /ix/ {
            open_file_cache max=10;
            open_file_cache_valid 60s;
            index first.html index.html;
        }
        location /ixn/ {
            index first.html index.html;
        }
        location /short/ {
            open_file_cache max=10;
            open_file_cache_valid 1s;
            try_files $uri /fallback.txt;
        }
        location = /fallback.txt { }
    }
}
EOF
my $pre = $t->prefix;
$t->write_file('html/fallback.txt', "fallback\n");
for my $d (qw(tf tfn)) {
    $t->write_file("html/$d/a.txt", "$d a\n");
    $t->write_file("html/$d/sub/index.html", "$d sub index\n");
}
$t->write_file("html/$_/index.html", "$_ index\n") for qw(ix ixn);
$t->write_file('html/short/s.txt', "short one\n");
$t->run;
my $P = $t->port(0);

sub get {
    my ($path) = @_;
    my $r = $t->http_get($P, $path);
    my ($code) = ($r // '') =~ m{^HTTP/1\.1 (\d+)};
    my ($body) = ($r // '') =~ /\r\n\r\n(.*)\z/s;
    return ($code // 0, $body // '');
}

# try_files: a file removed after it was cached is still found
is_deeply([get('/tf/a.txt')], [200, "tf a\n"], 'try_files, cache: found');
is_deeply([get('/tfn/a.txt')], [200, "tfn a\n"], 'try_files, no cache: found');
unlink "$pre/html/tf/a.txt", "$pre/html/tfn/a.txt";
is_deeply([get('/tf/a.txt')], [200, "tf a\n"],
          'try_files, cache: removed within open_file_cache_valid, still found and served');
is_deeply([get('/tfn/a.txt')], [200, "fallback\n"],
          'try_files, no cache: removed, the fallback at once');

# a directory candidate ($uri/) through the cache: found, the name without
# its slash gets nginx's 301 to the slash form (checked against nginx
# 1.22.1), and the slash form is served by index
is((get('/tf/sub'))[0], 301, 'try_files, cache: $uri/ finds the directory (301 to the slash)');
is((get('/tfn/sub'))[0], 301, 'try_files, no cache: $uri/ finds the directory (301 to the slash)');
is_deeply([get('/tf/sub/')], [200, "tf sub index\n"], 'try_files, cache: the directory\'s index');
is_deeply([get('/tfn/sub/')], [200, "tfn sub index\n"], 'try_files, no cache: the directory\'s index');

# open_file_cache_errors: a missing candidate is remembered as missing
is_deeply([get('/tf/late.txt')], [200, "fallback\n"], 'try_files, cache: missing, the fallback');
is_deeply([get('/tfn/late.txt')], [200, "fallback\n"], 'try_files, no cache: missing, the fallback');
$t->write_file('html/tf/late.txt', "late\n");
$t->write_file('html/tfn/late.txt', "late\n");
is_deeply([get('/tf/late.txt')], [200, "fallback\n"],
          'try_files, cache with errors: created meanwhile, still missing');
is_deeply([get('/tfn/late.txt')], [200, "late\n"], 'try_files, no cache: created, found');

# index: the index file removed after it was cached is still served
is_deeply([get('/ix/')], [200, "ix index\n"], 'index, cache: served');
is_deeply([get('/ixn/')], [200, "ixn index\n"], 'index, no cache: served');
unlink "$pre/html/ix/index.html", "$pre/html/ixn/index.html";
is_deeply([get('/ix/')], [200, "ix index\n"],
          'index, cache: removed within open_file_cache_valid, still served');
is((get('/ixn/'))[0], 403, 'index, no cache: removed, 403 at once');

# after open_file_cache_valid the removal shows
is_deeply([get('/short/s.txt')], [200, "short one\n"], 'valid 1s: found');
unlink "$pre/html/short/s.txt";
is_deeply([get('/short/s.txt')], [200, "short one\n"], 'valid 1s: removed, still found at once');
ok(Test::Ringx::wait_for(sub { (get('/short/s.txt'))[1] eq "fallback\n" }, 5),
   'valid 1s: once it has passed, the removal shows (the fallback)');

$t->stop;
done_testing;
