#!/usr/bin/perl
# proxy_cache_abort.t: the client whose request fetches an entry for
# others leaves mid-body; the fetch goes on to its end (nginx finishes the
# upstream read into the cache when the client left), so every waiter
# streaming from its growing file gets every byte, and the entry is
# stored: the next request is a HIT, the origin saw one request.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
use IO::Select;
use Socket;
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(time sleep);

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 512; }
http {
    access_log off;
    proxy_cache_path %%PREFIX%%/cache levels=1:2 keys_zone=one:1m;
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
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

sub count { my ($uri) = @_; scalar grep { $_->{uri} eq $uri } $up->requests }

sub open_get {
    my ($path) = @_;
    my $c = $t->raw($port) or return;
    $c->send("GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    return $c;
}

# reads from $c until $n bytes came (or the deadline)
sub read_some {
    my ($c, $n) = @_;
    my $got = '';
    my $sel = IO::Select->new($c->sock);
    my $deadline = time + Test::Ringx::timeout(10);
    while (length($got) < $n && time < $deadline) {
        next unless $sel->can_read(0.2);
        my $k = sysread($c->sock, my $chunk, 65536);
        last unless $k;
        $got .= $chunk;
    }
    return $got;
}

for my $case (['content-length', ''], ['chunked', '&chunked=1']) {
    my ($name, $q) = @$case;
    my $size = 600000;
    my $uri = "/slow/$size?pieces=12&ms=200$q";
    my $want = md5_hex(Test::Upstream::pattern($size));

    my $first = open_get($uri);
    my $head = read_some($first, 1000);
    like $head, qr{^HTTP/1\.1 200}, "$name: the fetching client has its header";
    my @w = grep { defined } map { open_get($uri) } 1 .. 5;
    is scalar @w, 5, "$name: 5 waiters connected";
    sleep 0.3;
    # the fetching client leaves mid-body, with bytes unread: a reset
    setsockopt($first->sock, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
    $first->close;

    my @r = map { $_->read_response(timeout => 30) } @w;
    is scalar(grep { $_ && ($_->{status} // 0) == 200 } @r), 5,
       "$name: every waiter got 200";
    is scalar(grep { $_ && md5_hex($_->{body} // '') eq $want } @r), 5,
       "$name: every waiter got every byte (md5)"
        or diag join ' ', map { $_ ? length($_->{body} // '') : 'none' } @r;
    $_->close for @w;

    my $again = open_get($uri)->read_response(timeout => 10);
    is $again->{headers}{'x-cache'}, 'HIT', "$name: then the entry is stored";
    is md5_hex($again->{body} // ''), $want, "$name: ... whole";
    is count($uri), 1, "$name: the origin saw one request";
}

ok $t->log_contains(qr/the response goes on without the client, for the cache/),
   'the detached fetch is logged';

$t->stop;
$up->stop;
done_testing;
