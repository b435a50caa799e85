#!/usr/bin/perl
# proxy_body_sizes.t: response bodies around the size of one proxy_buffers
# block, through a kept-alive upstream connection and one client
# connection. A body announced smaller than a block is copied into a block
# of its own size (http_upstream_body.c, next_block), which is never reused
# at the full size: every byte must arrive, at every size below, at and
# above a block, whole or in pieces that the client takes in between (the
# blocks recycle), chunked (no size known), cut short by the length the
# upstream announced, for HEAD, and under the gzip filter. These pass on
# main too: they guard the sizing, which changes no byte (ASan checks it).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    upstream pool { server $UP; keepalive 4; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffer_size 1k;
            proxy_buffers 2 1k;
        }
        location /gz/ {
            proxy_pass http://pool/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffers 2 1k;
            gzip on;
            gzip_types text/plain;
            gzip_min_length 1;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

my @sizes = (1, 2, 29, 511, 1023, 1024, 1025, 2047, 2048, 2049, 3071, 3072,
             3073, 10_000);

# Many responses on one client connection (and so on the pooled upstream
# ones): what one response leaves in its blocks must not show in the next.
my $c = $t->raw($P);
my @want;
for my $n (@sizes) {
    $c->send("GET /len/$n HTTP/1.1\r\nHost: x\r\n\r\n");
    my $r = $c->read_response;
    ok $r && $r->{status} == 200 && $r->{headers}{'content-length'} == $n
        && $r->{body} eq Test::Upstream::pattern($n),
        "/len/$n: every byte, in order";
}

# in pieces, the client reading each (the blocks recycle in between)
for my $n (5, 1000, 1024, 1500, 2500) {
    $c->send("GET /slow/$n?pieces=4&ms=30 HTTP/1.1\r\nHost: x\r\n\r\n");
    my $r = $c->read_response(timeout => 10);
    ok $r && $r->{status} == 200
        && $r->{body} eq Test::Upstream::pattern($n),
        "/slow/$n in 4 pieces: every byte";
}

# chunked: no length known, blocks of the full size
for my $n (1, 1024, 3000) {
    $c->send("GET /chunked/$n HTTP/1.1\r\nHost: x\r\n\r\n");
    my $r = $c->read_response;
    ok $r && $r->{status} == 200
        && $r->{body} eq Test::Upstream::pattern($n),
        "/chunked/$n: every byte";
}

# HEAD with a length: no body, the connection goes on
$c->send("HEAD /len/700 HTTP/1.1\r\nHost: x\r\n\r\n");
my $h = $c->read_response(head => 1);
ok $h && $h->{status} == 200 && $h->{headers}{'content-length'} == 700,
    'HEAD /len/700: the length, no body';
$c->send("GET /len/700 HTTP/1.1\r\nHost: x\r\n\r\n");
my $r = $c->read_response;
ok $r && $r->{body} eq Test::Upstream::pattern(700),
    'and the GET after it on the same connection';

# more bytes than announced: the client gets what was announced
my $s = $t->raw($P);
$s->send("GET /headers?Content-Length=2 HTTP/1.1\r\nHost: x\r\n\r\n");
my $sr = $s->read_response;
ok $sr && $sr->{status} == 200 && $sr->{body} eq 'ok',
    'a body longer than its Content-Length: the announced bytes';
$s->send("GET /len/300 HTTP/1.1\r\nHost: x\r\n\r\n");
$sr = $s->read_response;
ok $sr && $sr->{body} eq Test::Upstream::pattern(300),
    'and the next response is whole';

# a body the gzip filter holds slices of
for my $n (40, 1024, 3000) {
    my $g = $t->raw($P);
    $g->send("GET /gz/len/$n HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n"
             . "Connection: close\r\n\r\n");
    my $gr = $g->read_response;
    my $plain = '';
    if ($gr && ($gr->{headers}{'content-encoding'} // '') eq 'gzip') {
        require IO::Uncompress::Gunzip;
        IO::Uncompress::Gunzip::gunzip(\$gr->{body} => \$plain);
    }
    is $plain, Test::Upstream::pattern($n), "gzip of /len/$n: every byte";
}

$t->stop;
$up->stop;
done_testing;
