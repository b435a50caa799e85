#!/usr/bin/perl
# upstream_queue_place.t: a request admitted to the queue keeps its place.
# A group with max_conns=1 and `queue 1`, two workers. A's request waits in
# the queue while B's holds the only connection; B's ends, A's queue offers
# the free slot to its waiter, and gdb stops A right there (the waiter's
# new try). B takes the slot first and queues another request. A, let go,
# finds no connection: its waiter goes back to the head of the queue,
# still holding its place (B's second request is the one refused, 503), is
# never refused for a full queue, and is served once B's connection frees;
# its $upstream_queue_time counts from its first admission.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Select;
use POSIX qw(WNOHANG);
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Test::QueueWindow;

my $q = Test::QueueWindow::setup(queue => 1,
    why => 'between the offer of a free slot and its try');
my ($t, $PREFIX, $SOCK, $P) = @$q{qw(t prefix sock port)};

# keepalive client connections: one on A, four on B (three requests and
# the metrics)
my %on;
for (1 .. 200) {
    my $c = $t->raw($P) or next;
    $c->send("GET /pid HTTP/1.1\r\nHost: q\r\n\r\n");
    my $r = $c->read_response(timeout => 5) or next;
    push @{ $on{ $r->{body} } }, $c;
    my @n = sort { $a <=> $b } map { scalar @$_ } values %on;
    last if @n == 2 && $n[0] >= 1 && $n[1] >= 4;
}
my ($pb, $pa) = sort { @{ $on{$b} } <=> @{ $on{$a} } } keys %on;
ok $pa && @{ $on{$pb} } >= 4, 'a client connection on worker A, four on B'
    or BAIL_OUT('no connections on both workers');
my ($ca) = @{ $on{$pa} };
my ($cb1, $cb2, $cb3, $cm) = @{ $on{$pb} };

# requests waiting, every worker's (each worker's figure as of its last
# once-a-second tick)
sub depth {
    $cm->send("GET /m HTTP/1.1\r\nHost: q\r\n\r\n");
    my $r = $cm->read_response(timeout => 5) or return -1;
    return $r->{body} =~ /^ringx_upstream_queue_depth\{upstream="php"\} (\d+)/m
        ? $1 : -1;
}

# gdb stops A at its waiter's new try (the first try of A's request, which
# finds the group full, goes by), until told
my $gate = "$PREFIX/gdb";
my $gdb = Test::QueueWindow::hold($q, $pa, <<"EOF2");
set pagination off
set confirm off
break rx_http_upstream_try_begin
ignore 1 1
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

$cb1->send("GET /q/?ms=4000 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { (Test::PhpFpm::pool_open($SOCK) // 0) >= 1 }, 10),
    'worker B holds the only connection';
$ca->send("GET /q/?ms=10 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { depth() >= 1 }, 10), "A's request waits in the queue";
ok $t->wait_for(sub { -e "$gate.stopped" }, 15),
    "B's request ended: A stopped as its waiter tries the free slot"
    or diag $t->read_file('logs/gdb.out');

# meanwhile B takes the slot, and another request of B's wants a place
$cb2->send("GET /q/?ms=3000 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { (Test::PhpFpm::pool_open($SOCK) // 0) >= 1 }, 10),
    'B took the slot first';
$cb3->send("GET /q/?ms=10 HTTP/1.1\r\nHost: q\r\n\r\n");
my $sel = IO::Select->new($cb3->sock);
# refused at once, or queued (then A's stale figure 1 + B's 1)
$t->wait_for(sub { $sel->can_read(0) || depth() >= 2 }, 10);

open my $go, '>', "$gate.go" or die "$gate.go: $!";
close $go;
$t->wait_for(sub { waitpid($gdb, WNOHANG) != 0 }, 10)
    or do { kill 'KILL', $gdb; waitpid($gdb, 0) };

my $rb3 = $cb3->read_response(timeout => 10);
is $rb3 && $rb3->{status}, 503, "B's second request refused: A's waiter kept its place"
    or diag $rb3 ? "status $rb3->{status}" : 'no response';
my $ra = $ca->read_response(timeout => 15);
is $ra && $ra->{status}, 200, "A's waiter served once B's connection freed, no 503"
    or diag $ra ? "status $ra->{status}" : 'no response';
my $qt = $ra && $ra->{headers}{'x-queue-time'};
ok defined $qt && $qt >= 2.5,
    '$upstream_queue_time counts from its first admission (>= 2.5 s)'
    or diag 'X-Queue-Time: ' . ($qt // 'none');
is scalar(() = $t->log_contains(qr/the queue of upstream "php" is full/)), 1,
    'one "queue is full" logged (B\'s)';
my $rb2 = $cb2->read_response(timeout => 10);
is $rb2 && $rb2->{status}, 200, "B's request on the slot answered";

$t->stop;
done_testing;
