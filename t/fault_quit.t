#!/usr/bin/perl

# Fault drill 3: graceful stop during slow downloads. Two 5 MB downloads
# read at about 1 MB/s each (a small receive buffer, so that the server
# really has to wait for the client): a static file and the same size
# through proxy_pass. SIGQUIT to the master one second in: the listener
# closes at once (new connections are refused), both downloads complete
# intact (sha256), and only then do the workers and the master exit.
# Figures: docs/reliability.md ("Faults under load"); `prove -v` prints them.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Digest::SHA qw(sha256_hex);
use Errno qw(EAGAIN EINTR);
use IO::Select;
use Socket qw(AF_INET SOCK_STREAM SOL_SOCKET SO_RCVBUF inet_aton
              pack_sockaddr_in);
use Time::HiRes qw(time sleep);

my $SIZE = 5_000_000;
my $RATE = 1_000_000;        # bytes per second per download

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log notice;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { root html; }
        location /up/ { proxy_pass http://$UP/; }
    }
}
EOF
my $blob = join '', map { pack 'N', int rand 2**32 } 1 .. $SIZE / 4;
$t->write_file_raw('html/big.bin', $blob);
my %want = ('/big.bin' => sha256_hex($blob),
            "/up/len/$SIZE" => sha256_hex(Test::Upstream::pattern($SIZE)));
$t->run;
my $P = $t->port(0);
my $master = $t->master_pid;
my @workers = $t->wait_workers(2);

# A blocking connect with a 32 KB receive buffer, then non-blocking reads.
sub slow_client {
    my ($path) = @_;
    socket(my $s, AF_INET, SOCK_STREAM, 0) or die "socket: $!";
    setsockopt($s, SOL_SOCKET, SO_RCVBUF, 32768) or die "SO_RCVBUF: $!";
    connect($s, pack_sockaddr_in($P, inet_aton('127.0.0.1'))) or die "connect: $!";
    binmode $s;
    syswrite($s, "GET $path HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    $s->blocking(0);
    return { path => $path, sock => $s, data => '', eof => 0 };
}

my @dl = map { slow_client($_) } sort keys %want;
my $t0 = time;
my ($t_quit, $refused, $master_alive_mid, %done_at);
my $step = 0.05;
while (grep { !$_->{eof} } @dl) {
    my $now = time;
    if (!$t_quit && $now - $t0 >= 1) {
        kill 'QUIT', $master;
        $t_quit = time;
    }
    if ($t_quit && !defined $refused && time - $t_quit > 0.5) {
        $refused = !Test::Ringx::_connect('127.0.0.1', $P, 1);
        $master_alive_mid = Test::Ringx::pid_alive($master);
    }
    for my $d (grep { !$_->{eof} } @dl) {
        my $budget = int($RATE * $step);
        while ($budget > 0) {
            my $n = sysread($d->{sock}, my $buf, $budget);
            if (!defined $n) {
                last if $! == EAGAIN || $! == EINTR;
                $d->{eof} = 1; last;
            }
            if ($n == 0) { $d->{eof} = 1; last; }
            $d->{data} .= $buf;
            $budget -= $n;
        }
        $done_at{ $d->{path} } = time if $d->{eof};
    }
    last if time - $t0 > 20;
    sleep $step;
}
my $t_done = time;
ok($t->wait_master_exit(5), 'the master exits after the downloads');
my $t_exit = time;

ok($t_quit, 'QUIT sent during the downloads');
ok($refused, 'after QUIT new connections are refused (listener closed)');
ok($master_alive_mid, 'the master was still running 0.5 s after QUIT');
for my $d (@dl) {
    my $r = (Test::Ringx::parse_responses($d->{data}))[0];
    ok($r && $r->{status} == 200, "$d->{path}: 200");
    is($r && length $r->{body}, $SIZE, "$d->{path}: all $SIZE bytes");
    is($r && sha256_hex($r->{body}), $want{ $d->{path} }, "$d->{path}: sha256 matches");
    cmp_ok($done_at{ $d->{path} } - $t_quit, '>', 2,
           "$d->{path}: it finished well after QUIT ("
           . sprintf('%.2f s', $done_at{ $d->{path} } - $t_quit) . ')');
}
is($t->exit_status, 0, 'master exit code 0');
ok(!grep({ Test::Ringx::pid_alive($_) } @workers), 'no worker left');
ok($t->log_contains(qr/\[notice\] .*gracefully shutting down/), 'log: gracefully shutting down');

note(sprintf "quit drill: QUIT at %.2f s; downloads done at %s (after QUIT); "
     . "master gone %.2f s after the last byte; %.2f MB/s per download",
     $t_quit - $t0,
     join(', ', map { sprintf '%s %.2f s', $_, $done_at{$_} - $t_quit } sort keys %done_at),
     $t_exit - $t_done, $SIZE / ($t_done - $t0) / 1e6);

$t->stop;
$up->stop;
done_testing;
