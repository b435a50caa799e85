#!/usr/bin/perl
# static_cache.t: open_file_cache and its companions. What a client sees:
# a cached file keeps being served until open_file_cache_valid passes
# (replaced or removed meanwhile), then the change shows; errors are cached
# only with open_file_cache_errors on. What the worker holds (its fds, read
# in /proc): at most max= files, none unused past inactive=, none before
# open_file_cache_min_uses, and a file evicted while a slow client still
# reads it stays open until that response ends. And the config errors.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
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
        location /c/ {
            open_file_cache max=10;
            open_file_cache_valid 2s;
            open_file_cache_errors on;
        }
        location /n/ {
            open_file_cache max=10;
            open_file_cache_valid 2s;
        }
        location /lru/ {
            open_file_cache max=2 inactive=1m;
            sendfile off;
        }
        location /ina/ {
            open_file_cache max=10 inactive=1s;
        }
        location /m/ {
            open_file_cache max=10;
            open_file_cache_min_uses 2;
        }
        location /plain/ { }
    }
}
EOF
my $pre = $t->prefix;
$t->write_file("html/c/$_.txt", "$_ one\n") for qw(a b);
$t->write_file("html/lru/f$_.txt", "f$_\n") for 1 .. 4;
$t->write_file("html/ina/g$_.txt", "g$_\n") for 1 .. 3;
$t->write_file('html/m/x.txt', "x\n");
$t->write_file('html/plain/p.txt', "p one\n");
# 8 MiB: more than the socket buffers hold, so the worker is still reading
# it while the test evicts its entry
my $big = join '', map { pack('N', $_ * 2654435761 % 4294967296) } 0 .. 2 * 1048576 - 1;
$t->write_file_raw('html/lru/big.bin', $big);
$t->run;
my $P = $t->port(0);
my ($w) = $t->worker_pids;

sub get {
    my ($path) = @_;
    my $r = $t->http_get($P, $path);
    my ($code) = ($r // '') =~ m{^HTTP/1\.1 (\d+)};
    my ($body) = ($r // '') =~ /\r\n\r\n(.*)\z/s;
    return ($code // 0, $body // '');
}

# the files of dir the worker holds open, by name
sub held {
    my ($dir) = @_;
    my @names;
    opendir(my $dh, "/proc/$w/fd") or return ();
    for my $fd (readdir $dh) {
        my $to = readlink "/proc/$w/fd/$fd" // next;
        push @names, $1 if $to =~ m{^\Q$pre\E/html/\Q$dir\E/([^/]+)$};
    }
    return sort @names;
}

# held(dir) once it is what the test expects, or after 2 s what it is: a
# fd the cache does not keep is closed through the ring after the
# response went, and a response sent on the worker's thread (the last one
# of a Connection: close) can reach the client a moment before that close
sub held_now {
    my ($dir, @want) = @_;
    my @got;
    Test::Ringx::wait_for(sub { @got = held($dir); "@got" eq "@want" }, 2);
    return @got;
}

sub replace {
    my ($rel, $text) = @_;
    $t->write_file("$rel.new", $text);
    rename("$pre/$rel.new", "$pre/$rel") or die "rename: $!";
}

# a file replaced (a new inode) or removed: served as cached until
# open_file_cache_valid passes, then the change shows
is_deeply([get('/c/a.txt')], [200, "a one\n"], 'cached: served');
replace('html/c/a.txt', "a two\n");
is_deeply([get('/c/a.txt')], [200, "a one\n"],
          'replaced within open_file_cache_valid: the cached file still');
is_deeply([get('/c/b.txt')], [200, "b one\n"], 'another file: served');
unlink("$pre/html/c/b.txt");
is_deeply([get('/c/b.txt')], [200, "b one\n"],
          'removed within open_file_cache_valid: still served from the fd');
# without the cache the change shows at once
is_deeply([get('/plain/p.txt')], [200, "p one\n"], 'no cache: served');
replace('html/plain/p.txt', "p two\n");
is_deeply([get('/plain/p.txt')], [200, "p two\n"], 'no cache: a replaced file shows at once');

# errors: cached with open_file_cache_errors on, not with off
is((get('/c/late.txt'))[0], 404, 'errors on: a missing file is 404');
is((get('/n/late.txt'))[0], 404, 'errors off: a missing file is 404');
$t->write_file('html/c/late.txt', "late\n");
$t->write_file('html/n/late.txt', "late\n");
is((get('/c/late.txt'))[0], 404, 'errors on: created meanwhile, the cached 404 stays');
is_deeply([get('/n/late.txt')], [200, "late\n"], 'errors off: created meanwhile, served');

sleep 3;     # open_file_cache_valid 2s has passed
is_deeply([get('/c/a.txt')], [200, "a two\n"], 'after valid: the replaced file (statx saw a new inode)');
is((get('/c/b.txt'))[0], 404, 'after valid: the removed file is 404');
is_deeply([get('/c/late.txt')], [200, "late\n"], 'after valid: the cached error is tried again');
is_deeply([held_now('c', 'a.txt', 'late.txt')], ['a.txt', 'late.txt'],
          'after valid: the replaced and removed files\' fds are closed');

# max=2: the least recently used entries are closed
get("/lru/f$_.txt") for 1 .. 4;
is_deeply([held_now('lru', 'f3.txt', 'f4.txt')], ['f3.txt', 'f4.txt'], 'max=2: the two most recent files held');
get('/lru/f3.txt');
get('/lru/f1.txt');
is_deeply([held_now('lru', 'f1.txt', 'f3.txt')], ['f1.txt', 'f3.txt'], 'max=2: a lookup refreshes, the coldest goes');

# inactive=1s: entries unused that long are closed at the next lookup
get('/ina/g1.txt');
get('/ina/g2.txt');
is_deeply([held_now('ina', 'g1.txt', 'g2.txt')], ['g1.txt', 'g2.txt'], 'inactive: both held while in use');
sleep 2;
get('/ina/g3.txt');
is_deeply([held_now('ina', 'g3.txt')], ['g3.txt'], 'inactive: unused entries were closed');

# min_uses 2: the fd is kept from the second use on
get('/m/x.txt');
is_deeply([held_now('m')], [], 'min_uses 2: not held after one use');
get('/m/x.txt');
is_deeply([held_now('m', 'x.txt')], ['x.txt'], 'min_uses 2: held after two');

# an entry evicted while a response still reads from its fd: the fd stays
# open until that response is done, and the body arrives whole
{
    my $c = $t->raw($P);
    $c->send("GET /lru/big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(head => 1, timeout => 5);
    like($r->{head} // '', qr{^HTTP/1\.1 200 }, 'slow client: 200');
    get("/lru/f$_.txt") for 1 .. 3;           # evicts big.bin
    ok(scalar(grep { $_ eq 'big.bin' } held('lru')),
       'evicted while a response reads it: the fd is still open');
    my $rest = $c->read_all(timeout => 10);
    is(sha256_hex(substr($rest // '', 0, length $big)), sha256_hex($big),
       'evicted while a response reads it: the body arrives whole');
    $c->close;
    ok(Test::Ringx::wait_for(sub { !grep { $_ eq 'big.bin' } held('lru') }, 5),
       'the response done: the fd is closed');
}

# config errors, in nginx's words
for my $case (['open_file_cache max=0;', 'invalid "open_file_cache" parameter "max=0"'],
              ['open_file_cache inactive=10s;', '"open_file_cache" must have the "max" parameter'],
              ['open_file_cache max=1 bogus;', 'invalid "open_file_cache" parameter "bogus"'],
              ['open_file_cache_min_uses 0;', 'open_file_cache_min_uses'],
              ['open_file_cache_errors maybe;', 'invalid value "maybe"']) {
    Test::Ringx::http_line_refused_ok(@$case);
}
{
    my $c = Test::Ringx->new;
    $c->write_config(<<"EOF");
events { }
http {
    open_file_cache max=1000 inactive=20s;
    open_file_cache_valid 30s;
    open_file_cache_min_uses 2;
    open_file_cache_errors on;
    server { listen 127.0.0.1:%%PORT_0%%; location / { open_file_cache off; } }
}
EOF
    my ($rc, $out, $err) = $c->ringx('-t');
    is($rc, 0, '-t: the documented forms are accepted') or diag($err);
}

$t->stop;
done_testing;
