#!/usr/bin/perl
# sub_filter.t: nginx's sub module: strings replaced in text responses,
# without regard to case; sub_filter_once on (each string once) and off;
# several sub_filter directives; variables in the string and the
# replacement; sub_filter_types; sub_filter_last_modified; matches cut
# across buffers (a static file larger than the read size, a proxied
# chunked response whose chunks cut a match, also across three pieces);
# gzip after it; sendfile kept off by the filter; configuration errors.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $u = Test::Upstream->new;
$u->start;
my $up = $u->url;

my $t = Test::Ringx->new;
my $big = ('x' x 131068) . 'SPLITMARK' . ('y' x 70000) . 'splitmark end';
$t->write_file('html/s/hello.html', 'Hello World, hello WORLD, world.');
$t->write_file('html/s/plain.txt', 'Hello World');
$t->write_file('html/big/big.html', $big);
$t->write_file('html/gz/big.html', $big);
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
        location /s/ {
            sub_filter world "ringx";
        }
        location /all/ {
            alias %%PREFIX%%/html/s/;
            sub_filter world "ringx";
            sub_filter_once off;
        }
        location /multi/ {
            alias %%PREFIX%%/html/s/;
            sub_filter hello bye;
            sub_filter world earth;
            sub_filter_last_modified on;
        }
        location /vars/ {
            alias %%PREFIX%%/html/s/;
            sub_filter \$arg_find "[\$arg_with]";
            sub_filter_once off;
        }
        location /types/ {
            alias %%PREFIX%%/html/s/;
            sub_filter world "ringx";
            sub_filter_types text/plain;
        }
        location /empty/ {
            alias %%PREFIX%%/html/s/;
            sub_filter World "";
            sub_filter_once off;
        }
        location /big/ {
            sub_filter splitmark "<found>";
            sub_filter_once off;
        }
        location /gz/ {
            gzip on;
            gzip_min_length 1;
            sub_filter splitmark "<found>";
            sub_filter_once off;
        }
        location /up/ {
            proxy_pass $up/;
            sub_filter_types text/plain;
            sub_filter 0000018 "[A]";
            sub_filter 00000A0 "[B]";
            sub_filter_once off;
        }
        location /upgz/ {
            proxy_pass $up/;
            gzip on;
            gzip_types text/plain;
            gzip_min_length 1;
            sub_filter_types text/plain;
            sub_filter 0000018 "[A]";
            sub_filter_once off;
        }
    }
}
EOF
$t->run;

sub get {
    my ($uri, %h) = @_;
    my $c = $t->raw($t->port(0)) or return {};
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n"
             . join('', map { "$_: $h{$_}\r\n" } sort keys %h)
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 10);
    $c->close;
    return $r // {};
}

my $r = get('/s/hello.html');
is($r->{body}, 'Hello ringx, hello WORLD, world.', 'once: the first match, case ignored');
ok(!exists $r->{headers}{'content-length'}, 'no Content-Length: the length changes');
ok(!exists $r->{headers}{'last-modified'}, 'Last-Modified removed');
ok(!exists $r->{headers}{etag}, 'ETag removed');

is(get('/all/hello.html')->{body}, 'Hello ringx, hello ringx, ringx.', 'once off: every match');

$r = get('/multi/hello.html');
is($r->{body}, 'bye earth, hello WORLD, world.', 'two sub_filter directives, each once');
ok(exists $r->{headers}{'last-modified'}, 'sub_filter_last_modified on: Last-Modified kept');
like($r->{headers}{etag} // '', qr{^W/"}, 'sub_filter_last_modified on: the ETag weak');

is(get('/vars/hello.html?find=hello&with=hi')->{body}, '[hi] World, [hi] WORLD, world.',
   'variables in the string and the replacement');
is(get('/vars/hello.html?with=hi')->{body}, 'Hello World, hello WORLD, world.',
   'an empty string from a variable: nothing replaced');

is(get('/s/plain.txt')->{body}, 'Hello World', 'text/plain is not in the default types');
is(get('/types/plain.txt')->{body}, 'Hello ringx', 'sub_filter_types text/plain');
is(get('/empty/hello.html')->{body}, 'Hello , hello , .', 'an empty replacement, case ignored');

# a static file larger than the read size (128 KiB): the first mark is cut
# by the chunk boundary; sendfile would skip the filter
$r = get('/big/big.html');
(my $want = $big) =~ s/splitmark/<found>/gi;
is(length($r->{body} // ''), length($want), 'big file: length');
ok(($r->{body} // '') eq $want, 'big file: a match cut by the read boundary and the last one replaced');

# the same through gzip: sub_filter sees the plain text
$r = get('/gz/big.html', 'Accept-Encoding' => 'gzip');
is($r->{headers}{'content-encoding'}, 'gzip', 'gzip after sub_filter');
my $plain = '';
gunzip(\$r->{body} => \$plain) or diag("gunzip: $GunzipError");
ok($plain eq $want, 'gzip: the decompressed body has the replacements');

# proxied, chunked, the body in pieces that cut the matches: /slow/48 in
# 16 pieces of 3 bytes: "0000018" (offset 24) spans three of them
$r = get('/up/slow/48?pieces=16&ms=30&chunked=1');
($want = Test::Upstream::pattern(48)) =~ s/0000018/[A]/g;
is($r->{body}, $want, 'proxied chunked: a match across three pieces');
$r = get('/up/slow/256?pieces=3&ms=50&chunked=1');
($want = Test::Upstream::pattern(256)) =~ s/0000018/[A]/g;
$want =~ s/00000a0/[B]/g;
is($r->{body}, $want, 'proxied chunked: case ignored (00000A0 matches 00000a0), piece boundaries');
$r = get('/up/chunked/20000');
($want = Test::Upstream::pattern(20000)) =~ s/0000018/[A]/g;
$want =~ s/00000a0/[B]/g;
ok(($r->{body} // '') eq $want, 'proxied chunked of mixed chunk sizes');
$r = get('/upgz/slow/48?pieces=16&ms=30&chunked=1', 'Accept-Encoding' => 'gzip');
$plain = '';
gunzip(\$r->{body} => \$plain) or diag("gunzip: $GunzipError");
($want = Test::Upstream::pattern(48)) =~ s/0000018/[A]/g;
is($plain, $want, 'proxied, gzip after sub_filter');

$t->stop;

my @bad = (
    ['sub_filter "" x;', qr/\[emerg\] empty search pattern/, 'an empty string'],
    ['sub_filter a;', qr/\[emerg\] invalid number of arguments in "sub_filter" directive/, 'one argument'],
    ['sub_filter_once maybe;', qr/\[emerg\] invalid value "maybe" in "sub_filter_once" directive/, 'a bad flag'],
);
for my $c (@bad) {
    my ($line, $re, $name) = @$c;
    my $v = Test::Ringx->new;
    $v->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { $line } } }
EOF
    my ($code, $out, $err) = $v->ringx('-t');
    isnt($code, 0, "-t fails: $name");
    like($err, $re, "-t error: $name");
}
$u->stop;

done_testing;
