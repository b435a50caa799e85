#!/usr/bin/perl
# upstream_queue_race.t: a group with max_conns and a queue, two workers.
# A request whose pick finds every server full waits in the queue; it must
# not get 502 "no live upstreams" because another worker closed a
# connection between the pick and the check whether the group is full
# (both read the shared counts, each at its own moment). On a loaded
# machine a worker preempted between the two is enough (seen in
# t/fastcgi_queue.t); here gdb holds worker A in that window
# (rx_http_upstream_full, called after the pick found none) while worker B
# finishes the request that held the only connection.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use POSIX qw(WNOHANG);
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Test::QueueWindow;

my $q = Test::QueueWindow::setup(queue => 8,
    why => 'between the pick and the full check');
my ($t, $PREFIX, $SOCK, $P) = @$q{qw(t prefix sock port)};

# a keepalive client connection on each worker
my %on;
for (1 .. 60) {
    my $c = $t->raw($P) or next;
    $c->send("GET /pid HTTP/1.1\r\nHost: q\r\n\r\n");
    my $r = $c->read_response(timeout => 5) or next;
    $on{ $r->{body} } //= $c;
    last if keys %on == 2;
}
is scalar(keys %on), 2, 'a client connection on each worker';
my ($pa, $pb) = sort keys %on;
my ($ca, $cb) = @on{ $pa, $pb };

# gdb stops A in the full check that follows a pick which found none, and
# lets it go once B's connection is closed (attached first: attaching may
# take seconds on a loaded machine)
my $gate = "$PREFIX/gdb";
my $gdb = Test::QueueWindow::hold($q, $pa, <<"EOF2");
set pagination off
set confirm off
break rx_http_upstream_full
shell touch $gate.armed
continue
shell touch $gate.stopped
shell n=0; while [ ! -e $gate.go ] && [ \$n -lt 1200 ]; do sleep 0.05; n=\$((n+1)); done
delete
detach
quit
EOF2
ok $t->wait_for(sub { -e "$gate.armed" }, 30), 'gdb attached to worker A'
    or diag $t->read_file('logs/gdb.out');

# B takes the only connection max_conns allows, for 3 s
$cb->send("GET /q/?ms=3000 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { (Test::PhpFpm::pool_open($SOCK) // 0) >= 1 }, 10),
    'worker B holds the connection';
$ca->send("GET /q/?ms=10 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { -e "$gate.stopped" }, 10),
    'A stopped between the pick (none free) and the full check'
    or diag $t->read_file('logs/gdb.out');
ok((Test::PhpFpm::pool_open($SOCK) // 0) >= 1,
    '... while B still held the connection');

# B's request ends, its connection closes: the group has room again
my $rb = $cb->read_response(timeout => 10);
is $rb && $rb->{status}, 200, 'B answered';
ok $t->wait_for(sub { (Test::PhpFpm::pool_open($SOCK) // 1) == 0 }, 10),
    'and its connection closed';
sleep 0.2;            # the close reaches ringx's shared count too
open my $go, '>', "$gate.go" or die "$gate.go: $!";
close $go;
$t->wait_for(sub { waitpid($gdb, WNOHANG) != 0 }, 10)
    or do { kill 'KILL', $gdb; waitpid($gdb, 0) };

my $ra = $ca->read_response(timeout => 10);
is $ra && $ra->{status}, 200, 'A served once the slot is free, no 502'
    or diag $ra ? "status $ra->{status}" : 'no response';
ok !$t->log_contains(qr/no live upstreams/), 'no "no live upstreams" logged'
    or diag join "\n", $t->log_contains(qr/no live upstreams/);

$t->stop;
done_testing;
