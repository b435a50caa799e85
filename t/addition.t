#!/usr/bin/perl
# addition.t: nginx's addition module: add_before_body and add_after_body
# put a subrequest's body before and after a 200 response of
# addition_types, in document order whatever the subrequests' speeds
# (a slow proxied "before" and a static "after"); bodies bigger than a
# buffer on each side; a proxied chunked main response; one that spills
# to its temporary file while the "before" runs, and a spilling "after";
# gzip after it;
# a subrequest that fails (its error page takes the place); keepalive
# after such a response; the headers nginx changes; configuration errors.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $u = Test::Upstream->new;
$u->start;
my $up = $u->url;

my $t = Test::Ringx->new;
my $big = join('', map { sprintf("%07d\n", $_) } 0 .. 40000);   # 320 KiB
$t->write_file('html/index.html', "BODY\n");
$t->write_file('html/plain.txt', "PLAIN\n");
$t->write_file('html/big.html', $big);
$t->write_file('html/inc/before.html', "BEFORE\n");
$t->write_file('html/inc/after.html', "AFTER\n");
$t->write_file('html/inc/empty.html', "");
$t->write_file('html/inc/big.html', $big);
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    sendfile on;
    sendfile_min_size 1;
    types { text/html html; text/plain txt; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / {
            add_before_body /inc/before.html;
            add_after_body /inc/after.html;
        }
        location /inc/ { }
        location /before/ {
            alias %%PREFIX%%/html/;
            add_before_body /inc/before.html;
        }
        location /after/ {
            alias %%PREFIX%%/html/;
            add_after_body /inc/after.html;
        }
        location /emptyafter/ {
            alias %%PREFIX%%/html/;
            add_after_body /inc/empty.html;
        }
        location /bigafter/ {
            alias %%PREFIX%%/html/;
            add_after_body /inc/big.html;
        }
        location /slowfirst/ {
            alias %%PREFIX%%/html/;
            add_before_body /up/slow/300;
            add_after_body /inc/after.html;
        }
        location /up/ {
            proxy_pass $up/;
        }
        location /proxied/ {
            proxy_pass $up/;
            add_before_body /inc/before.html;
            add_after_body /inc/after.html;
            addition_types text/plain;
        }
        # the main response's body spills to its temporary file while
        # the "before" subrequest runs (the addition holds the input)
        location /spillbefore/ {
            proxy_pass $up/;
            add_before_body /up/slow/300;
            add_after_body /inc/after.html;
            addition_types text/plain;
        }
        # both spill: the main response, then the "after" subrequest (a
        # slow client: limit_rate)
        location /spillboth/ {
            proxy_pass $up/;
            limit_rate 2m;
            add_before_body /up/slow/300;
            add_after_body /up/len/300000;
            addition_types text/plain;
        }
        location /types/ {
            alias %%PREFIX%%/html/;
            add_after_body /inc/after.html;
            addition_types text/plain;
        }
        location /gz/ {
            alias %%PREFIX%%/html/;
            gzip on;
            gzip_min_length 1;
            add_before_body /inc/before.html;
            add_after_body /inc/big.html;
        }
        location /fail/ {
            alias %%PREFIX%%/html/;
            add_before_body /refused/;
            add_after_body /inc/after.html;
        }
        location /refused/ {
            proxy_pass http://127.0.0.1:%%PORT_1%%/;
        }
    }
}
EOF
$t->run({ ports => [$t->port(0)] });

sub get {
    my ($uri, %h) = @_;
    my $c = $t->raw($t->port(0)) or return {};
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n"
             . join('', map { "$_: $h{$_}\r\n" } sort keys %h)
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 20);
    $c->close;
    return $r // {};
}

my $r = get('/index.html');
is($r->{status}, 200, 'status');
is($r->{body}, "BEFORE\nBODY\nAFTER\n", 'before, body, after in order');
ok(!exists $r->{headers}{'content-length'}, 'no Content-Length');
like($r->{headers}{etag} // '', qr{^W/"}, 'the ETag made weak, as nginx');
ok(exists $r->{headers}{'last-modified'}, 'Last-Modified kept, as nginx');

is(get('/before/index.html')->{body}, "BEFORE\nBODY\n", 'add_before_body alone');
is(get('/after/index.html')->{body}, "BODY\nAFTER\n", 'add_after_body alone');
is(get('/after/plain.txt')->{body}, "PLAIN\n", 'text/plain is not in the default types');
is(get('/types/plain.txt')->{body}, "PLAIN\nAFTER\n", 'addition_types text/plain');
is(get('/after/nothere.html')->{status}, 404, 'a 404 gets nothing added');

$r = get('/big.html');
is(length($r->{body} // ''), length($big) + 13, 'a big body between: length');
is(md5_hex($r->{body} // ''), md5_hex("BEFORE\n$big" . "AFTER\n"), 'a big body between: bytes');

$r = get('/bigafter/big.html');
is(md5_hex($r->{body} // ''), md5_hex($big . $big), 'a big body, then a big subrequest body');

# the "before" subrequest is slow (its body comes in four pieces over
# ~300 ms: a plain URI, no arguments, as nginx) while the file and the "after" one are at hand: order is kept
$r = get('/slowfirst/index.html');
is(length($r->{body} // ''), 300 + 5 + 6, 'slow before: length');
is(substr($r->{body} // '', 300), "BODY\nAFTER\n", 'slow before: the body waits for it');

# a proxied chunked main response (text/plain added by addition_types)
$r = get('/proxied/chunked/100000');
my $body = $r->{body} // '';
like($body, qr/^BEFORE\n/, 'proxied chunked: before first');
like($body, qr/AFTER\n\z/, 'proxied chunked: after last');
is(length($body), 100000 + 13, 'proxied chunked: every byte');

# the main response spills to its temporary file while the "before"
# subrequest runs: the file's completions are the main request's, not
# the subrequest's (they went to the subrequest: nothing was sent, ever)
my $slow300 = get('/up/slow/300')->{body} // 'x';
my $ch300k = get('/up/chunked/300000')->{body} // 'x';
my $len300k = get('/up/len/300000')->{body} // 'x';
$r = get('/spillbefore/chunked/300000');
is(length($r->{body} // ''), 300 + 300000 + 6, 'spilled main, slow before: length');
is(md5_hex($r->{body} // ''), md5_hex("$slow300$ch300k" . "AFTER\n"),
   'spilled main, slow before: bytes in order');
ok($t->log_contains(qr{buffered to a temporary file.*"GET /spillbefore/}),
   'spilled main, slow before: the body went through the file');
$r = get('/spillboth/chunked/300000');
is(md5_hex($r->{body} // ''), md5_hex("$slow300$ch300k$len300k"),
   'spilled main and spilled after: bytes in order');
ok($t->log_contains(qr{buffered to a temporary file.*upstream: "[^"]*/len/300000"}),
   'spilled after: its body went through its own file');

# gzip below the addition: the client's bytes are compressed as one
$r = get('/gz/big.html', 'Accept-Encoding' => 'gzip');
is($r->{headers}{'content-encoding'}, 'gzip', 'gzip: encoded');
my $plain;
gunzip(\($r->{body} // ''), \$plain) or diag $GunzipError;
is(md5_hex($plain // ''), md5_hex("BEFORE\n$big$big"), 'gzip: every byte in order');

# a "before" subrequest whose upstream refuses: its 502 page takes its
# place (as nginx), the response goes on
$r = get('/fail/index.html');
is($r->{status}, 200, 'failed subrequest: the main status stays');
like($r->{body} // '', qr{502 Bad Gateway.*BODY\nAFTER\n\z}s,
     'failed subrequest: its error page, then the body and after');

# keepalive: the next request on the connection after a composed response
my $c = $t->raw($t->port(0));
$c->send("GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n");
my $r1 = $c->read_response(timeout => 10);
$c->send("GET /after/index.html HTTP/1.1\r\nHost: localhost\r\n\r\n");
my $r2 = $c->read_response(timeout => 10);
is($r1->{body}, "BEFORE\nBODY\nAFTER\n", 'keepalive: first');
is($r2->{body}, "BODY\nAFTER\n", 'keepalive: second on the same connection');
$c->close;

# HEAD: nothing added, no subrequest
$c = $t->raw($t->port(0));
$c->send("HEAD /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
$r = $c->read_response(timeout => 10, head => 1);
is($r->{status}, 200, 'HEAD: 200');
$c->close;

# QUIT while a main response spills to its file and its "before" runs:
# the response completes, then the worker exits (it waited forever for a
# completion that had gone to the subrequest)
# the "after" subrequest adds nothing and the client is HTTP/1.0 (no
# chunked terminator): the response's last buffer is empty, the request
# ends inside the filter that sends it, and that filter must not touch it
# afterwards (ASan's use-after-free in addition's sr_done)
for my $i (1 .. 3) {
    my $raw = $t->http($t->port(0),
        "GET /emptyafter/index.html HTTP/1.0\r\nHost: localhost\r\n\r\n");
    my ($er) = Test::Ringx::parse_responses($raw // '');
    is($er && $er->{body}, "BODY\n", "empty after, HTTP/1.0 ($i): the body");
}
$r = get('/after/index.html');
is($r->{body}, "BODY\nAFTER\n", 'the server goes on after them');

my $ch300k1 = get('/up/chunked/300001')->{body} // 'x';
$c = $t->raw($t->port(0));
$c->send("GET /spillbefore/chunked/300001 HTTP/1.1\r\nHost: localhost\r\n"
         . "Connection: close\r\n\r\n");
ok($t->wait_for(sub { $t->log_contains(qr{buffered to a temporary file.*/spillbefore/chunked/300001 }) }, 10),
   'QUIT: the response spills');
$t->signal('QUIT');
$r = $c->read_response(timeout => 20) // {};
is(md5_hex($r->{body} // ''), md5_hex("$slow300$ch300k1" . "AFTER\n"),
   'QUIT: the response completes');
$c->close;

$t->stop;

# configuration errors
for my $case (['add_before_body;', qr/invalid number of arguments in "add_before_body"/],
              ['add_after_body a b;', qr/invalid number of arguments in "add_after_body"/],
              ['addition_types;', qr/invalid number of arguments in "addition_types"/]) {
    my $e = Test::Ringx->new;
    $e->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { $case->[0] } } }
EOF
    my ($rc, $out, $err) = $e->ringx('-t');
    isnt($rc, 0, "-t fails: $case->[0]");
    like($err . $out, $case->[1], "emerg names it: $case->[0]");
    like($err . $out, qr/ringx\.conf:2/, "with file:line: $case->[0]");
}

done_testing;
