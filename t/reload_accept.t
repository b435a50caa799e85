#!/usr/bin/perl
# reload_accept.t: no request is lost to a reload. A stopping worker's
# accept is cancelled through its io_uring; the kernel wakes accept waiters
# one at a time, so a cancelled accept may have taken the wake-up meant for
# a connection, which then waited in the backlog until the next connection
# woke another worker (found by t/syslog.t's author: 1 to 4 in 30 reloads).
# The stopping worker now serves what waits in the backlog once its cancel
# is in (event/accept.c). Here: 30 reloads of two workers, each followed at
# once by a request on a new connection to a shared socket and to a
# reuseport one, which must be answered within 3 s.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time);

my $t = Test::Ringx->new;
$t->write_file('html/index.html', "x");
$t->write_config(<<'EOF2');
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    server { listen 127.0.0.1:%%PORT_0%%; root html; }
    server { listen 127.0.0.1:%%PORT_1%% reuseport; root html; }
}
EOF2
$t->run;
my @w = $t->wait_workers(2);
my @lost;
for my $i (1 .. 30) {
    $t->signal('HUP');
    @w = $t->wait_workers(2, not => [@w]);
    for my $port (0, 1) {       # a shared socket, and one per worker
        my $start = time;
        my $c = $t->raw($t->port($port));
        $c && $c->send("GET /index.html?$i HTTP/1.1\r\nHost: x\r\n"
                       . "Connection: close\r\n\r\n");
        my $r = $c && $c->read_response(timeout => 3);
        push @lost, sprintf("reload %d, port %d: %s after %.1f s", $i, $port,
                            $r ? "status $r->{status}" : 'no answer',
                            time - $start)
            unless $r && $r->{status} == 200;
    }
}
ok(!@lost, 'every request right after a reload answered') or diag(join "\n", @lost);
$t->stop;
done_testing;
