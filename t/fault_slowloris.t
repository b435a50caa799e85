#!/usr/bin/perl

# Fault drill 5: slowloris. 500 connections each send one byte of a request
# header every 2 s, with client_header_timeout 3s: every one is closed on
# time (3 s after its first byte, plus a margin), without a response; the
# worker's CPU time stays low; and a normal client, a new connection every
# 100 ms, is served promptly all along (its slowest answer is measured).
# Figures: docs/reliability.md ("Faults under load"); `prove -v` prints them.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Errno qw(EAGAIN EINTR);
use IO::Select;
use Time::HiRes qw(time sleep);

my $N = 500;
my $TIMEOUT = 3;
my $EVERY = 2;              # seconds between two bytes of a slow client

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log notice;
events { worker_connections 1024; }
http {
    access_log off;
    client_header_timeout ${TIMEOUT}s;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { return 200 "uri=\$uri\\n"; }
    }
}
EOF
$t->run;
my $P = $t->port(0);
my ($worker) = $t->wait_workers(1);
my $cpu0 = $t->cpu_seconds($worker);

my $header = "GET /slow HTTP/1.1\r\nHost: localhost\r\nX-Pad: "
           . ('a' x 100) . "\r\n\r\n";
my (@slow, %by_fd);
my $sel = IO::Select->new;
my $t0 = time;
for my $i (1 .. $N) {
    my $c = $t->raw($P) or last;
    $c->sock->blocking(0);
    $c->send(substr($header, 0, 1));
    my $s = { c => $c, sent => 1, first => time, next => time + $EVERY,
              closed => undef, got => 0 };
    push @slow, $s;
    $by_fd{ fileno $c->sock } = $s;
    $sel->add($c->sock);
}
my $connect_span = time - $t0;
is(scalar @slow, $N, "$N slow connections made (in "
   . sprintf('%.2f s', $connect_span) . ')');

my (@lat, $normal_bad);
my $next_normal = time;
my $end = $t0 + $connect_span + $TIMEOUT + 3;
while (time < $end && grep { !$_->{closed} } @slow) {
    my $now = time;
    for my $s (grep { !$_->{closed} && $_->{next} <= $now } @slow) {
        $s->{c}->send(substr($header, $s->{sent}++, 1));
        $s->{next} = $now + $EVERY;
    }
    if ($now >= $next_normal) {
        my $a = time;
        my $c = $t->raw($P);
        $c && $c->send("GET /normal HTTP/1.1\r\nHost: localhost\r\n"
                       . "Connection: close\r\n\r\n");
        my $r = $c && $c->read_response(timeout => 3);
        $normal_bad++ unless $r && $r->{status} == 200
                             && $r->{body} eq "uri=/normal\n";
        push @lat, time - $a;
        $next_normal = time + 0.1;
    }
    for my $fh ($sel->can_read(0.02)) {
        my $s = $by_fd{ fileno $fh };
        my $n = sysread($fh, my $buf, 4096);
        next if !defined $n && ($! == EAGAIN || $! == EINTR);
        if ($n) {
            $s->{got} += $n;
            next;
        }
        $s->{closed} = time;
        $sel->remove($fh);
    }
}
my $cpu = $t->cpu_seconds($worker) - $cpu0;
my $wall = time - $t0;

my @open = grep { !$_->{closed} } @slow;
is(scalar @open, 0, "all $N slow connections were closed");
my @after = map { $_->{closed} - $_->{first} } grep { $_->{closed} } @slow;
my ($min, $max) = (sort { $a <=> $b } @after)[0, -1];
$min //= 0; $max //= 0;
cmp_ok($min, '>=', $TIMEOUT - 0.1, sprintf('none closed before the timeout '
       . '(earliest %.2f s after its first byte)', $min));
cmp_ok($max, '<=', $TIMEOUT + 1.5, sprintf('all closed on time (latest '
       . '%.2f s after its first byte)', $max));
my $answered = grep { $_->{got} } @slow;
is($answered, 0, 'closed without a response (as nginx)');
cmp_ok($cpu, '<', 1, sprintf('the worker stays cheap: %.2f s CPU in %.1f s',
       $cpu, $wall));
my ($lmax) = sort { $b <=> $a } @lat;
$lmax //= 99;
ok(!$normal_bad, 'every normal request answered (' . scalar(@lat) . ')');
cmp_ok($lmax, '<', 1, sprintf('the normal client is served promptly '
       . '(slowest %.3f s)', $lmax));
my @sorted = sort { $a <=> $b } @lat;
my $median = @sorted ? $sorted[int(@sorted / 2)] : 0;
is_deeply([ $t->worker_pids ], [ $worker ], 'the same worker throughout');
$_->{c}->close for @slow;

note(sprintf "slowloris drill: %d connections, 1 byte every %d s, "
     . "client_header_timeout %ds: closed %.2f..%.2f s after the first byte; "
     . "worker %.2f s CPU in %.1f s; normal client: %d requests, median "
     . "%.1f ms, slowest %.1f ms",
     $N, $EVERY, $TIMEOUT, $min, $max, $cpu, $wall, scalar @lat,
     $median * 1000, $lmax * 1000);

$t->stop;
done_testing;
