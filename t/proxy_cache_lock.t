#!/usr/bin/perl
# proxy_cache_lock.t: concurrent misses for one key are coalesced, across
# workers, for as long as the fetch runs (no lock timeout to give up
# after): the origin (Test::Upstream, which counts) sees one request, and
# every waiter gets the whole response, which it receives as it arrives
# (a waiter has its header while the origin is still sending). A HEAD
# waits too; a client that leaves while it waits harms nobody; a response
# that is not stored sends its waiters upstream each.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
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
        listen 127.0.0.1:%%PORT_0%% reuseport;
        add_header X-Cache \$upstream_cache_status always;
        location / {
            proxy_pass http://$UP;
            proxy_cache one;
            proxy_cache_valid 200 1m;
            proxy_cache_lock_timeout 1s;
        }
        location /nolock/ {
            proxy_pass http://$UP/;
            proxy_cache one;
            proxy_cache_valid 200 1m;
            proxy_cache_lock off;
        }
    }
}
EOF
$t->run;
my $port = $t->port(0);

sub count { my ($uri) = @_; scalar grep { $_->{uri} eq $uri } $up->requests }

sub open_get {
    my ($path, $method) = @_;
    my $c = $t->raw($port) or return;
    $c->send(($method // 'GET') . " $path HTTP/1.1\r\nHost: x\r\n"
             . "Connection: close\r\n\r\n");
    return $c;
}

ok $t->log_contains(qr/"proxy_cache_lock_timeout" directive is ignored: a request waits/),
   'proxy_cache_lock_timeout: a notice says why it changes nothing';

# 100 clients at once for one slow key (about 1.5 s at the origin, longer
# than the proxy_cache_lock_timeout of the location: nobody gives up)
my $N = 100;
my $slow = '/slow/300000?pieces=6&ms=250';
my @c = grep { defined } map { open_get($slow) } 1 .. $N;
is scalar @c, $N, "$N clients connected";
my @r = map { $_->read_response(timeout => 30) } @c;
is scalar(grep { $_ && $_->{status} == 200 } @r), $N, 'every client got 200';
is scalar(grep { $_ && length($_->{body}) == 300000 } @r), $N,
   'every client got the whole body';
my %bodies = map { ($_ ? $_->{body} : '') => 1 } @r;
is scalar(keys %bodies), 1, 'all bodies are the same';
is count($slow), 1, 'the origin saw one request for the key';
my %st;
$st{ $_ ? ($_->{headers}{'x-cache'} // 'none') : 'none' }++ for @r;
is $st{MISS}, 1, 'one MISS (the fetch)';
is $st{HIT}, $N - 1, 'the others: HIT' or diag explain \%st;
$_->close for @c;

# a waiter receives the response as it arrives: its header comes while
# the origin still sends (the first client has not got the whole body)
my $slow2 = '/slow/200000?pieces=5&ms=500';
my $a = open_get($slow2);
sleep 0.3;
my $b = open_get($slow2);
my $got = '';
my $sel = IO::Select->new($b->sock);
my $deadline = time + Test::Ringx::timeout(10);
while ($got !~ /\r\n\r\n/ && time < $deadline) {
    next unless $sel->can_read(0.5);
    my $n = sysread($b->sock, my $chunk, 65536);
    last unless $n;
    $got .= $chunk;
}
like $got, qr{^HTTP/1\.1 200}, 'the waiter has its header';
my $a_got = '';
my $asel = IO::Select->new($a->sock);
while ($asel->can_read(0)) {
    my $n = sysread($a->sock, my $chunk, 1 << 20);
    last unless $n;
    $a_got .= $chunk;
}
cmp_ok length($a_got), '<', 200000,
    'at that moment the fetch was still under way';
my $rest_b = $got;
while ($sel->can_read(Test::Ringx::timeout(10))) {
    my $n = sysread($b->sock, my $chunk, 65536);
    last unless $n;
    $rest_b .= $chunk;
}
my ($rb) = Test::Ringx::parse_responses($rest_b);
is length($rb->{body} // ''), 200000, 'the waiter got the whole body';
is $rb->{headers}{'content-length'}, 200000,
   'with the origin\'s Content-Length';
is count($slow2), 1, 'one origin request for both';
$a->close;
$b->close;

# a HEAD waits as well, and a client leaving while it waits harms nobody
my $slow3 = '/slow/50000?pieces=4&ms=250';
my $f = open_get($slow3);
sleep 0.2;
my $h = open_get($slow3, 'HEAD');
my $gone = open_get($slow3);
sleep 0.1;
$gone->close;
my $rf = $f->read_response(timeout => 10);
my $rh = $h->read_response(timeout => 10, head => 1);
is length($rf->{body} // ''), 50000, 'the fetch: whole';
is $rh->{status}, 200, 'the HEAD waiter: 200';
is $rh->{body} // '', '', 'the HEAD waiter: no body';
is count($slow3), 1, 'one origin request, HEAD included';

# not a response to store (Set-Cookie): the waiters go upstream each
my $ck = '/headers?Set-Cookie=a%3D1&delay=500';
my @k = map { open_get($ck) } 1 .. 5;
my @rk = map { $_->read_response(timeout => 10) } @k;
is scalar(grep { $_ && $_->{status} == 200 } @rk), 5, 'Set-Cookie: all 200';
is count($ck), 5, 'Set-Cookie: each went upstream (not shared)';

# proxy_cache_lock off (nginx's default): each miss goes upstream
my $nl = '/slow/1000?pieces=2&ms=300&k=nolock';
my @l = map { open_get("/nolock$nl") } 1 .. 4;
my @rl = map { $_->read_response(timeout => 10) } @l;
is scalar(grep { $_ && length($_->{body}) == 1000 } @rl), 4,
   'proxy_cache_lock off: all whole';
is count($nl), 4, 'proxy_cache_lock off: each went upstream';
is(($t->http_get($port, "/nolock$nl") =~ /X-Cache: (\w+)/)[0], 'HIT',
   'proxy_cache_lock off: then stored');

# the next fetch after a failed one: a body cut short is not stored, the
# waiters that had nothing yet try again, one at a time
my $cut = '/close-mid/100000?delay=300';
my @x = map { open_get($cut) } 1 .. 3;
$_->read_all(timeout => 10) for @x;
cmp_ok count($cut), '<=', 3, 'a failed fetch: no more requests than clients';
ok $t->worker_pids >= 2, 'the workers are alive';

$t->stop;
$up->stop;
done_testing;
