#!/usr/bin/perl

# Reloads that drop nothing (issue #24). 20 reloads under keepalive load
# with clients that do not retry: an idle keepalive connection of an old
# worker must not be closed while a request on it is arriving (nginx trac
# #1022: the request is lost, the client sees the connection close with
# no answer); a request that is there is answered, with Connection: close.
# A response in flight when its worker is told to stop carries
# Connection: close. An open WebSocket (proxied) stays open and relays
# across a reload until worker_shutdown_timeout, and is closed then.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Load;
use Test::Upstream;
use Time::HiRes qw(time sleep);

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF2");
daemon off;
master_process on;
worker_processes 2;
worker_shutdown_timeout 4s;
error_log logs/error.log notice;
events { worker_connections 256; }
http {
    access_log off;
    keepalive_timeout 30s;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { return 200 "ok\\n"; }
        location /up/ {
            proxy_pass http://$UP/;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_read_timeout 60s;
        }
    }
}
EOF2
$t->run;
my $P = $t->port(0);

# --- an open WebSocket relays until worker_shutdown_timeout ---------------
# Its old worker serves it on after the reload: bytes pass both ways (a
# small message and 256 KB, more than the tunnel queues), before and after
# the 1 s at which a graceful stop closes idle connections, and the tunnel
# is closed at worker_shutdown_timeout (4 s), not before. (The new workers
# are waited for as "two new ones are up": wait_workers() also waits for
# the old worker to be gone, which made an earlier version of this test
# send after the timeout and see no echo.)
sub echo_ok {
    my ($c, $msg) = @_;
    $c->send($msg) or return 0;
    my $end = time + Test::Ringx::timeout(5);
    $c->_fill(0.2) while index($c->buffer, $msg) < 0 && !$c->eof && time < $end;
    return index($c->buffer, $msg) >= 0;
}
{
    my @w = $t->wait_workers(2);
    my %old = map { $_ => 1 } @w;
    my $c = $t->raw($P) or die;
    $c->send("GET /up/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
             . "Connection: Upgrade\r\n\r\n");
    my $r = $c->read_response(timeout => 5, head => 1);
    is($r && $r->{status}, 101, 'WebSocket: 101 through the proxy');
    ok(echo_ok($c, "ping-0"), 'WebSocket: echoing');
    my $t0 = time;
    $t->signal('HUP');
    ok($t->wait_for(sub { (grep { !$old{$_} } $t->worker_pids) >= 2 }, 5),
       'reload: the new workers are up');
    ok(scalar(grep { Test::Ringx::pid_alive($_) } @w), '... an old worker serves on');
    ok(echo_ok($c, "ping-1"), 'WebSocket: still echoing after the reload');
    my $big = join "", map { sprintf "%07d\n", $_ } 1 .. 16384;   # 128 KB
    ok(echo_ok($c, $big . "end-1"), 'WebSocket: 128 KB echoed after the reload');
    sleep 0.2 while time - $t0 < 1.5;
    ok(echo_ok($c, "ping-2"), 'WebSocket: echoing past the idle close (1 s)');
    ok(!$c->eof && time - $t0 < 3.5, 'WebSocket: open before the timeout');
    ok($c->wait_closed(10), 'WebSocket: closed at worker_shutdown_timeout');
    my $took = time - $t0;
    ok($took > 3.5, sprintf('... not before it (%.1f s after the reload)', $took));
}

# --- 20 reloads under keepalive load, no retries ---------------------------
# clients that pause 1 ms between requests, stopped after the last reload
# (a tight loop made ~500,000 requests in 14 s)
my $load = Test::Load->start(port => $P, clients => 6, seconds => 60, retry => 0,
                             pause => 0.001,
                             path => sub { "/k?$_[0]-$_[1]" },
                             check => sub { $_[0]{body} eq "ok\n" });
sleep 0.5;
my @w = $t->wait_workers(2);
for my $i (1 .. 20) {
    $t->signal('HUP');
    my @n = $t->wait_workers(2, not => \@w, timeout => 10);
    @w = @n;
    sleep 0.2;
}
my $res = $load->stop->wait;
is($res->{failed}, 0, "20 reloads under keepalive load: no request failed "
   . "($res->{ok} answered on $res->{connections} connections)")
    or diag(Test::Load->describe_failures($res));
ok($res->{connections} > 6, 'the old workers closed their keepalive connections');

# --- a response in flight at the reload carries Connection: close ---------
{
    my $c = $t->raw($P) or die;
    $c->send("GET /up/sleep/1500 HTTP/1.1\r\nHost: x\r\n\r\n");
    sleep 0.5;
    $t->signal('HUP');
    my $r = $c->read_response(timeout => 10);
    is($r && $r->{status}, 200, 'the request in flight at the reload is answered');
    like($r && $r->{head} // '', qr/^Connection: close\r?$/mi,
         '... with Connection: close');
    ok($c->wait_closed(5), '... and the connection is closed after it');
}

$t->stop;
done_testing;
