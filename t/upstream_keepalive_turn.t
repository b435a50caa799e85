#!/usr/bin/perl
# upstream_keepalive_turn.t: the keepalive pool within one loop turn. When
# the completions of one turn finish exchanges and start others, the
# connections the finished ones put back serve the new ones, even beyond
# `keepalive`; only at the end of the turn does the pool go back down to
# `keepalive` (the least recently used close). Before, a connection put
# back to a full pool closed another at once, and a request later in the
# same turn connected anew: a close and a connect for nothing, a quarter
# of the proxy's CPU under load (keepalive 32 for 50 clients).
#
# To put two answers and two new requests into one turn the worker is
# stopped (SIGSTOP) while they arrive, and continued.
use strict;
use warnings;
use Test::More;
use lib 't/lib';
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(time sleep);

my $SLEEP = 3;    # s the upstream takes to answer the first two

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
    upstream pool { server $UP; keepalive 1; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);
my ($worker) = $t->worker_pids;
ok $worker, 'one worker';

sub req { "GET $_[0] HTTP/1.1\r\nHost: localhost\r\n\r\n" }

# two exchanges in flight on two upstream connections (keepalive 1: the
# pool will be full with one of them)
my @busy = map { $t->raw($P) } 1 .. 2;
my $t0 = time;
$_->send(req('/sleep/' . $SLEEP * 1000)) for @busy;
$up->wait_requests(2, 10);
is $up->connections, 2, 'two exchanges, two upstream connections';

# two more clients, accepted and idle
my @new = map { $t->raw($P) } 1 .. 2;
ok(( grep { $_->still_open(0.3) } @new) == 2, 'two more clients connected');

# the worker stops; the upstream answers both, then the two clients ask
kill 'STOP', $worker or die "SIGSTOP $worker: $!";
if (time - $t0 > $SLEEP - 0.5) {
    # the answers may have been read already: the turn is not the one
    # this test makes (a machine this slow cannot run it)
    kill 'CONT', $worker;
    SKIP: { skip 'the worker stopped too late: the machine is too loaded '
                 . 'to make the turn', 1 }
    $t->stop;
    done_testing;
    exit 0;
}
sleep($t0 + $SLEEP + 1 - time);       # the upstream answers meanwhile
$_->send(req('/echo')) for @new;
sleep(0.3);                           # the requests reach the socket
kill 'CONT', $worker or die "SIGCONT $worker: $!";

for my $c (@busy, @new) {
    my $r = $c->read_response(timeout => 10);
    is $r && $r->{status}, 200, 'answered';
}
is $up->connections, 2,
    'the two new requests took the two connections put back in the same '
    . 'turn: no new connection';

# after the turn the pool holds at most keepalive (1): the other one closed
ok $up->wait_for(sub { grep({ $_->{by} eq 'peer' } $up->closes) >= 1 }, 10),
    'the pool went back to keepalive 1 at the end of the turn';
is scalar(grep { $_->{by} eq 'peer' } $up->closes), 1,
    'one connection closed, one stays idle';

# and the idle one serves the next request
my $c = $t->raw($P);
$c->send(req('/echo'));
my $r = $c->read_response(timeout => 10);
is $r && $r->{status}, 200, 'the next request';
is $up->connections, 2, 'served by the idle connection';

$t->stop;
$up->stop;
done_testing;
