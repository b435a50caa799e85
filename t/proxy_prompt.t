#!/usr/bin/perl
# proxy_prompt.t: what a proxied response owes the client at once, with
# proxy_read_timeout at 30 s so that waiting for the upstream cannot pass:
#   - a 304, a 204 and a HEAD response that announce a length (or chunked)
#     end with their header; the pooled upstream connection then serves
#     the next request with its own answer (no desync).
# Every "at once" is a read with a 2 s deadline.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $NOW = 2 * $Test::Ringx::SCALE;          # "at once"

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
    proxy_read_timeout 30s;
    upstream pool { server $UP; keepalive 4; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location /ka/ {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

# --- bodyless responses with a length, over one pooled connection -----------

{
    my @cases = (
        ['GET', '/ka/headers/304?Content-Length=10', 304, 10,
         'a 304 with Content-Length'],
        ['GET', '/ka/headers/204?Content-Length=10', 204, 10,
         'a 204 with Content-Length'],
        ['HEAD', '/ka/len/100', 200, 100, 'HEAD with Content-Length'],
        ['HEAD', '/ka/headers/200?Transfer-Encoding=chunked', 200, undef,
         'HEAD answered with Transfer-Encoding: chunked'],
    );
    $up->reset;
    for my $case (@cases) {
        my ($m, $uri, $st, $len, $name) = @$case;
        my $c = $t->raw($P, timeout => 10);
        $c->send("$m $uri HTTP/1.1\r\nHost: localhost\r\n\r\n");
        my $r = $c->read_response(timeout => $NOW, head => $m eq 'HEAD');
        ok $r, "$name: the response arrives at once" or next;
        is $r->{status}, $st, "$name: $st";
        is $r->{headers}{'content-length'}, $len,
            "$name: " . (defined $len ? 'the upstream\'s length relayed (nginx)'
                                      : 'no length');
        ok !exists $r->{headers}{'transfer-encoding'}, "$name: no Transfer-Encoding";
        is $r->{headers}{connection}, 'keep-alive', "$name: the client connection stays";
        is $r->{body}, '', "$name: no body";

        # the next request, on the same pooled upstream connection
        $c->send("GET /ka/echo HTTP/1.1\r\nHost: localhost\r\n\r\n");
        my $n = $c->read_response(timeout => $NOW);
        ok $n, "$name: the next request is answered" or next;
        like $n->{body}, qr{^uri: /ka/echo$}m, "$name: with its own answer";
        is $n->{headers}{'x-upstream-conn'}, $r->{headers}{'x-upstream-conn'},
            "$name: over the same upstream connection";
        is $n->{headers}{'x-upstream-req'}, $r->{headers}{'x-upstream-req'} + 1,
            "$name: as its next request";
        $c->close;
    }
    is $up->connections, 1, 'one upstream connection served all of them';
}

$t->stop;
$up->stop;
done_testing;
