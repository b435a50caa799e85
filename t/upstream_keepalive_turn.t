#!/usr/bin/perl
# upstream_keepalive_turn.t: the keepalive pool within one loop turn. When
# the completions of one turn finish exchanges and start others, the
# connections the finished ones put back serve the new ones, even beyond
# `keepalive` (the pool goes back down to `keepalive` later, once those
# beyond it have been idle for 100 ms: upstream_keepalive_surplus.t); a
# request that comes before the answers in the turn connects at its end,
# served by what the answers put back. Before, a connection put back to a full pool closed
# another at once, and a request in the same turn connected anew: a close
# and a connect for nothing (opening and closing upstream connections is
# a quarter of the proxy's CPU under load, keepalive 32 for 50 clients).
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
END { kill 'CONT', $worker if $worker }     # never left stopped

sub req { "GET $_[0] HTTP/1.1\r\nHost: localhost\r\n\r\n" }

# kill -STOP returns before the worker stops: what arrives in between may
# be reaped on its way (and handled in a turn of its own after SIGCONT)
sub stop_worker {
    my ($pid) = @_;
    kill 'STOP', $pid or die "SIGSTOP $pid: $!";
    return $up->wait_for(sub {
        open(my $fh, '<', "/proc/$pid/stat") or return 0;
        my $st = <$fh> // '';
        return $st =~ /\)\s+T\s/;
    }, 10);
}

# The answers that wait unread in the stopped worker's sockets to the
# upstream (their receive queues, as ss shows them).
sub answers_waiting {
    my @q = grep { /^\s*(\d+)/ && $1 > 0 }
            `ss -tnH state established dst $UP 2>/dev/null`;
    return scalar @q;
}

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
ok stop_worker($worker), 'the worker stopped';
if (time - $t0 > $SLEEP - 1) {
    # the answers may have been read already: the turn is not the one
    # this test makes (a machine this slow cannot run it)
    kill 'CONT', $worker;
    SKIP: { skip 'the worker stopped too late: the machine is too loaded '
                 . 'to make the turn', 1 }
    $t->stop;
    done_testing;
    exit 0;
}
# the upstream answers meanwhile
ok $up->wait_for(sub { answers_waiting() == 2 }, $SLEEP + 10),
    'both answers wait in the stopped worker\'s sockets';
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

# then the pool holds at most keepalive (1): the other one closed
ok $up->wait_for(sub { grep({ $_->{by} eq 'peer' } $up->closes) >= 1 }, 10),
    'the pool went back to keepalive 1';
is scalar(grep { $_->{by} eq 'peer' } $up->closes), 1,
    'one connection closed, one stays idle';

# and the idle one serves the next request
my $c = $t->raw($P);
$c->send(req('/echo'));
my $r = $c->read_response(timeout => 10);
is $r && $r->{status}, 200, 'the next request';
is $up->connections, 2, 'served by the idle connection';

# The other order: the two new requests come first in the turn, the two
# answers after them. Their connects wait for the end of the turn, where
# the two connections the answers put back serve them.
@busy = map { $t->raw($P) } 1 .. 2;
$t0 = time;
$_->send(req('/sleep/' . $SLEEP * 1000)) for @busy;
$up->wait_requests(7, 10);
is $up->connections, 3, 'two exchanges in flight: the idle one and a new one';
@new = map { $t->raw($P) } 1 .. 2;
ok(( grep { $_->still_open(0.3) } @new) == 2, 'two more clients connected');
ok stop_worker($worker), 'the worker stopped';
if (time - $t0 > $SLEEP - 1) {
    kill 'CONT', $worker;
    SKIP: { skip 'the worker stopped too late: the machine is too loaded '
                 . 'to make the turn', 1 }
    $t->stop;
    done_testing;
    exit 0;
}
$_->send(req('/echo')) for @new;      # these first
ok $up->wait_for(sub { answers_waiting() == 2 }, $SLEEP + 10),
    'then both answers wait in the stopped worker\'s sockets';
sleep(0.3);                           # the requests reach the socket
kill 'CONT', $worker or die "SIGCONT $worker: $!";
for my $c (@busy, @new) {
    my $r = $c->read_response(timeout => 10);
    is $r && $r->{status}, 200, 'answered';
}
is $up->connections, 3,
    'the two requests that came before the answers in the same turn took '
    . 'the connections the answers put back: no new connection'
    or diag explain [map { "$_->{type} conn=$_->{conn} " . ($_->{uri} // $_->{by} // '') } $up->events];
ok $up->wait_for(sub { grep({ $_->{by} eq 'peer' } $up->closes) >= 2 }, 10),
    'the pool went back to keepalive 1';
is scalar(grep { $_->{by} eq 'peer' } $up->closes), 2,
    'one more connection closed, one stays idle';

$t->stop;
$up->stop;
done_testing;
