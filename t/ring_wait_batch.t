#!/usr/bin/perl
# ring_wait_batch.t: the worker's batched waits (event/ring.c). A worker
# whose last loop turn reaped 8 completions or more asks io_uring_enter for
# as many again (min_complete > 1) with a 50 µs min_wait_usec, so that
# under load one sleep serves several completions; a worker whose turns
# reap fewer waits for the first completion (min_complete 1), so a lone
# client's latency is not touched. Seen by strace on the worker: bursts of
# 32 requests at once on 32 connections, every answer whole; then one
# client's requests one at a time, each waited for with min_complete 1
# (after at most the first two turns), and a lone request after a burst
# answered at once. Batched waits need Linux 6.12 (IORING_FEAT_MIN_TIMEOUT);
# an older kernel waits as before, which every other test covers.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time);

delete $ENV{RINGX_EVENTS};      # the io_uring backend's waits

my $CONNS  = 32;
my $ROUNDS = 20;
my $BODY   = "batched\n";

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 128; use io_uring; }
http {
    access_log off;
    keepalive_requests 10000;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { return 200 "$BODY"; }
    }
}
EOF
$t->run;
my ($w) = $t->worker_pids;
my $P = $t->port(0);
my $url = "http://127.0.0.1:$P/";

my ($major, $minor) = (`uname -r` =~ /^(\d+)\.(\d+)/);
my $kernel_batches = $major > 6 || ($major == 6 && $minor >= 12);

sub req { "GET /r$_[0] HTTP/1.1\r\nHost: localhost\r\n\r\n" }

# min_complete of every io_uring_enter that waits, in order
sub waits {
    my ($text) = @_;
    return map { /^io_uring_enter\(\d+, \d+, (\d+), [^,]*GETEVENTS/ ? $1 : () }
           split /\n/, $text;
}

SKIP: {
    skip 'no strace here (apt-get install strace)', 6
        if system('strace -V >/dev/null 2>&1') != 0;
    skip 'the kernel refused io_uring: the worker runs epoll', 6
        if $t->log_contains(qr/uses epoll instead/);

    # bursts: $CONNS requests at once, then their answers
    my @c = map { $t->raw($P) } 1 .. $CONNS;
    my ($whole, $seen) = (0, 0);
    my (undef, undef, $text) = $t->syscalls_during($w, $url, sub {
        for my $round (1 .. $ROUNDS) {
            $_->send(req($round)) for @c;
            for my $c (@c) {
                my $r = $c->read_response(timeout => 10);
                $seen++;
                $whole++ if $r && $r->{status} == 200 && $r->{body} eq $BODY;
            }
        }
    });
    is $whole, $CONNS * $ROUNDS, "every answer of $ROUNDS bursts of $CONNS whole"
        or diag "$whole of $seen";
    my @burst = waits($text);
    SKIP: {
        skip "Linux $major.$minor has no batched waits (6.12): the worker "
             . 'waits for one completion, as before', 1 unless $kernel_batches;
        cmp_ok scalar(grep { $_ >= 8 } @burst), '>', 0,
            'under the bursts the worker waits for several completions at once'
            or diag "min_complete of the waits: @burst";
    }

    # then one client, one request at a time: waits for one completion
    my $t0 = time;
    my $lone = $t->raw($P);
    $lone->send(req(0));
    my $r = $lone->read_response(timeout => 10);
    is $r && $r->{body}, $BODY, 'a lone request right after the bursts';
    cmp_ok time - $t0, '<', 1, 'answered at once';

    my ($got, undef, $text1) = $t->syscalls_during($w, $url, sub {
        `curl -s --max-time 30 ${\ join ' ', ($url) x 20}`;
    });
    is $got, $BODY x 20, 'twenty requests of one client answered';
    my @single = waits($text1);
    my @batched = grep { $_ > 1 } @single[2 .. $#single];
    is scalar(@batched), 0,
        'one client\'s requests: every wait (after the first two) for one '
        . 'completion, no latency added'
        or diag "min_complete of the waits: @single";
}

$t->check_logs;
$t->stop;
done_testing;
