#!/usr/bin/perl
# proxy_cache_stall.t: the client whose request fetches an entry for
# others stops reading (a zero window) and send_timeout ends its request;
# the fetch goes on without it, as when a client leaves (abort.t), so
# every waiter streaming from the growing file gets every byte (sha1),
# the entry is stored, and the origin saw one request.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha1_hex);
use IO::Select;
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
        # a small send buffer: the stalled client's window fills soon
        listen 127.0.0.1:%%PORT_0%% reuseport sndbuf=16k;
        send_timeout 1s;
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

# Reads every connection at once to its end (each waiter is a client that
# reads: one left unread would time out itself), then parses each.
sub read_all {
    my @c = @_;
    my %buf = map { $_ => '' } 0 .. $#c;
    my %open = map { fileno($c[$_]->sock) => $_ } 0 .. $#c;
    my $sel = IO::Select->new(map { $_->sock } @c);
    my $deadline = time + Test::Ringx::timeout(40);
    while ($sel->count && time < $deadline) {
        for my $s ($sel->can_read(0.2)) {
            my $i = $open{fileno($s)};
            my $k = sysread($s, my $chunk, 262144);
            if ($k) {
                $buf{$i} .= $chunk;
            } else {
                $sel->remove($s);
            }
        }
    }
    return map { (Test::Ringx::parse_responses($buf{$_}))[0] } 0 .. $#c;
}

for my $case (['content-length', ''], ['chunked', '&chunked=1']) {
    my ($name, $q) = @$case;
    # 4 MB over about 4 s: far more than the stalled client's window, and
    # the body goes on well past its send_timeout
    my $size = 4 * 1024 * 1024;
    my $uri = "/slow/$size?pieces=16&ms=250$q";
    my $want = sha1_hex(Test::Upstream::pattern($size));

    # the fetching client: asks, then never reads a byte
    my $first = open_get($uri);
    ok Test::Ringx::wait_for(sub { count($uri) >= 1 }, 10),
       "$name: the fetch reached the origin";
    my @w = grep { defined } map { open_get($uri) } 1 .. 5;
    is scalar @w, 5, "$name: 5 waiters connected";

    my @r = read_all(@w);
    is scalar(grep { $_ && ($_->{status} // 0) == 200 } @r), 5,
       "$name: every waiter got 200";
    is scalar(grep { $_ && sha1_hex($_->{body} // '') eq $want } @r), 5,
       "$name: every waiter got every byte (sha1)"
        or diag join ' ', map { $_ ? length($_->{body} // '') : 'none' } @r;
    $_->close for @w;
    $first->close;

    my $again = open_get($uri)->read_response(timeout => 10);
    is $again->{headers}{'x-cache'}, 'HIT', "$name: then the entry is stored";
    is sha1_hex($again->{body} // ''), $want, "$name: ... whole";
    is count($uri), 1, "$name: the origin saw one request";
}

ok $t->log_contains(qr/client timed out/), 'the stalled client timed out';
ok $t->log_contains(qr/the response goes on without the client, for the cache/),
   'the fetch went on without it';

$t->stop;
$up->stop;
done_testing;
