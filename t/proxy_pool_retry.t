#!/usr/bin/perl
# proxy_pool_retry.t: a pooled upstream connection that the peer closes
# before answering is not the peer's fault: the request goes again on a
# fresh connection, to the same peer when it is the only one (it used to
# count as tried, and the retry found "no live upstreams": seen as a
# random 502 under load in t/fastcgi_queue.t).

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
events { worker_connections 128; }
http {
    access_log off;
    upstream pool { server $UP; keepalive 4; }
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    server { listen 127.0.0.1:%%PORT_0%%; location / { proxy_pass http://pool; } }
}
EOF
$t->run;

my $c = $t->raw($t->port(0));
$c->send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
my $r = $c->read_response(timeout => 3);
is($r && $r->{status}, 200, 'a first request leaves a pooled connection');
# /drop: the origin reads the request and closes without an answer
$c->send("GET /drop HTTP/1.1\r\nHost: x\r\n\r\n");
$r = $c->read_response(timeout => 3);
is($r && $r->{status}, 502, 'the peer closes every time: 502 in the end');
my @drops = grep { $_->{uri} eq '/drop' } $up->requests;
is(scalar @drops, 2, 'the request went again after the pooled connection closed');
isnt($drops[0] && $drops[0]{conn}, $drops[1] && $drops[1]{conn},
     'on a fresh connection');
ok(!$t->log_contains(qr/no live upstreams/), 'the only peer was not counted as tried');

$t->stop;
$up->stop;
done_testing;
