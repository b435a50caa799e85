#!/usr/bin/perl
# proxy_cache_keepalive.t: requests that meet the cache one after another
# on one keepalive connection, the next sent (pipelined) with the previous
# one, so that it is parsed while the previous response's cache file is
# still written and renamed: no completion of an ended request reaches
# the next one (completions are routed by the request's tag, and a stored
# response ends only after its file is in place). More requests than the
# 8-bit tag has values, so the tags wrap on the connection. Each response
# is checked byte for byte.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
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
    keepalive_requests 10000;
    proxy_cache_path %%PREFIX%%/cache levels=1:2 keys_zone=one:1m;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_valid 200 1m;
        }
    }
}
EOF
$t->run;
my $port = $t->port(0);

my $c = $t->raw($port);
my ($ok, $bad, $n) = (0, 0, 0);
my %status;
# pairs: a MISS (stored: a file written and renamed) with a HIT of the
# previous pair's entry pipelined behind it (opened and read through the
# ring), on one connection
for my $i (1 .. 150) {
    my $size = 1000 + 997 * $i;
    my $miss = "/len/$size?i=$i";
    my $prev = $i > 1 ? "/len/" . (1000 + 997 * ($i - 1)) . "?i=" . ($i - 1)
                      : $miss;
    $c->send("GET $miss HTTP/1.1\r\nHost: x\r\n\r\n"
             . "GET $prev HTTP/1.1\r\nHost: x\r\n\r\n");
    for my $want ([$miss, $size], [$prev, $i > 1 ? $size - 997 : $size]) {
        my $r = $c->read_response(timeout => 10);
        $n++;
        if ($r && ($r->{status} // 0) == 200
            && md5_hex($r->{body} // '') eq md5_hex(Test::Upstream::pattern($want->[1]))) {
            $ok++;
            $status{ $r->{headers}{'x-cache'} // 'none' }++;
        } else {
            $bad++;
            diag "request $n ($want->[0]): "
                 . ($r ? "status $r->{status}, " . length($r->{body} // '')
                         . " bytes" : 'no response');
            last;
        }
    }
    last if $bad;
}
is $bad, 0, 'no response was wrong on the keepalive connection';
is $ok, 300, '300 requests (more than the 256 tags) answered whole';
is $status{MISS}, 150, '150 stored (MISS)';
is $status{HIT}, 150, '150 hits, each right behind a store';
$c->close;

$t->stop;
$up->stop;
done_testing;
