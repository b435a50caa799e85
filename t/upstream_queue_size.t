#!/usr/bin/perl
# upstream_queue_size.t: `queue N` holds across workers. A group with
# max_conns=1 and `queue 1`, two workers: while worker B's request holds
# the only connection, worker A reads the shared count of waiting requests
# (0: room) and gdb stops it there; B then queues a request of its own,
# taking the one place. A, let go, must not count itself in as well: the
# check and the count are one step (a compare-and-swap), so A's request
# gets 503 "is full" and only one request waits, as `queue 1` says.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use POSIX qw(WNOHANG);
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Test::QueueWindow;

my $q = Test::QueueWindow::setup(queue => 1,
    why => 'between reading the queue count and taking a place');
my ($t, $PREFIX, $SOCK, $P) = @$q{qw(t prefix sock port)};

# keepalive client connections: one on A, three on B (two requests and the
# metrics)
my %on;
for (1 .. 200) {
    my $c = $t->raw($P) or next;
    $c->send("GET /pid HTTP/1.1\r\nHost: q\r\n\r\n");
    my $r = $c->read_response(timeout => 5) or next;
    push @{ $on{ $r->{body} } }, $c;
    my @n = sort { $a <=> $b } map { scalar @$_ } values %on;
    last if @n == 2 && $n[0] >= 1 && $n[1] >= 3;
}
my ($pb, $pa) = sort { @{ $on{$b} } <=> @{ $on{$a} } } keys %on;
ok $pa && @{ $on{$pb} } >= 3, 'a client connection on worker A, three on B'
    or BAIL_OUT('no connections on both workers');
my ($ca) = @{ $on{$pa} };
my ($cb1, $cb2, $cm) = @{ $on{$pb} };

sub depth {
    $cm->send("GET /m HTTP/1.1\r\nHost: q\r\n\r\n");
    my $r = $cm->read_response(timeout => 5) or return -1;
    return $r->{body} =~ /^ringx_upstream_queue_depth\{upstream="php"\} (\d+)/m
        ? $1 : -1;
}

# gdb stops A once it has read the count of waiting requests, until told
my $gate = "$PREFIX/gdb";
my $gdb = Test::QueueWindow::hold($q, $pa, <<"EOF2");
set pagination off
set confirm off
break rx_http_upstream_shared_waiting
shell touch $gate.armed
continue
finish
shell touch $gate.stopped
shell n=0; while [ ! -e $gate.go ] && [ \$n -lt 1200 ]; do sleep 0.05; n=\$((n+1)); done
delete
detach
quit
EOF2
ok $t->wait_for(sub { -e "$gate.armed" }, 30), 'gdb attached to worker A'
    or diag $t->read_file('logs/gdb.out');

$cb1->send("GET /q/?ms=3000 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { (Test::PhpFpm::pool_open($SOCK) // 0) >= 1 }, 10),
    'worker B holds the only connection';
$ca->send("GET /q/?ms=10 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { -e "$gate.stopped" }, 10),
    'A stopped after reading the queue count (0 waiting)'
    or diag $t->read_file('logs/gdb.out');

# B's second request takes the one place in the queue
$cb2->send("GET /q/?ms=10 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { depth() >= 1 }, 10), 'B queued a request: the queue is full';

open my $go, '>', "$gate.go" or die "$gate.go: $!";
close $go;
$t->wait_for(sub { waitpid($gdb, WNOHANG) != 0 }, 10)
    or do { kill 'KILL', $gdb; waitpid($gdb, 0) };

my $ra = $ca->read_response(timeout => 10);
is $ra && $ra->{status}, 503, 'A refused: the place it saw was taken'
    or diag $ra ? "status $ra->{status}" : 'no response';
ok $t->log_contains(qr/the queue of upstream "php" is full \(1 requests waiting\)/),
    'logged: the queue is full, 1 waiting';
my $rb1 = $cb1->read_response(timeout => 10);
is $rb1 && $rb1->{status}, 200, "B's first request answered";
my $rb2 = $cb2->read_response(timeout => 10);
is $rb2 && $rb2->{status}, 200, "B's queued request answered";

$t->stop;
done_testing;
