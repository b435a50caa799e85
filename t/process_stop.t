#!/usr/bin/perl

# Stop, quit and reload finish in every worker state (issue #24): a worker
# that dies at start (io_uring_queue_init fails for want of descriptors:
# worker_rlimit_nofile 6) is crash-looping, then waits out a respawn delay;
# TERM and QUIT in either state end the master with no child left (the
# master used to cancel the pending respawn and then sleep for ever, as no
# SIGCHLD would come to make it count again), and a HUP with a repaired
# configuration brings workers that serve. A worker that is stuck (SIGSTOP:
# it cannot run its own worker_shutdown_timeout) is killed by the master
# after worker_shutdown_timeout and a 2 s grace, at QUIT and at a reload.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time sleep);

my $GOOD = <<'EOF2';
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log notice;
events { worker_connections 16; }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { } } }
EOF2
(my $DYING = $GOOD) =~ s/^(worker_processes 1;)$/$1\nworker_rlimit_nofile 6;/m;

# (io_uring refused for want of descriptors, the epoll fallback refused too)
my @DYING_LOGS = (qr/io_uring_queue_init\(\d+\) failed/, qr/epoll_create1\(\) failed/,
                  qr/worker process \d+ exited with code 1/,
                  qr/is dying right after start; respawning it in/);

# Starts a crash-looping server; waits until the log shows $re.
sub dying_server {
    my ($re) = @_;
    my $t = Test::Ringx->new;
    $t->write_config($DYING);
    $t->expect_log(@DYING_LOGS);
    $t->run({ wait => 0 });
    ok($t->wait_for(sub { $t->log_contains($re) }, 15), "worker state: $re");
    return $t;
}

sub children_of {
    my ($pid) = @_;
    my @c;
    for my $d (glob '/proc/[0-9]*') {
        my ($p) = $d =~ m{(\d+)$};
        push @c, $p if (Test::Ringx::ppid_of(undef, $p) // 0) == $pid
                       && Test::Ringx::pid_alive($p);
    }
    return @c;
}

for my $case (['TERM', qr/exited with code 1/],
              ['QUIT', qr/exited with code 1/],
              ['TERM', qr/respawning it in 2000 ms/],
              ['QUIT', qr/respawning it in 2000 ms/]) {
    my ($sig, $state) = @$case;
    my $t = dying_server($state);
    my $master = $t->{pid};
    my $t0 = time;
    $t->signal($sig, $master);
    ok($t->wait_master_exit(5), "$sig while '$state': the master exits")
        or diag(join '', `tail -5 ${\ $t->prefix}/logs/error.log`);
    ok(time - $t0 < Test::Ringx::timeout(5), sprintf("... in %.2f s", time - $t0));
    is(scalar(children_of($master)), 0, '... and leaves no child');
    $t->stop;
}

# HUP while a respawn is pending, with the configuration repaired: the new
# worker serves, the pending respawn of the old generation is dropped.
{
    my $t = dying_server(qr/respawning it in 2000 ms/);
    $t->write_config($GOOD);
    $t->signal('HUP', $t->{pid});
    ok($t->wait_for(sub { $t->connect_ok($t->port(0))
                          && ($t->http_get($t->port(0), '/') // '') =~ m{^HTTP/1.1 \d}
                          }, 10),
       'HUP while a respawn is pending: the repaired config serves');
    my @w = $t->wait_workers(1);
    sleep 2.5;     # past the cancelled respawn
    is_deeply([$t->worker_pids], \@w, 'no worker of the old generation came back');
    is($t->stop, 0, 'then QUIT ends it');
}

# Stuck workers: SIGSTOP, then QUIT (and then a reload) with
# worker_shutdown_timeout 1s.
(my $STUCK = $GOOD) =~ s/^(worker_processes 1;)$/$1\nworker_shutdown_timeout 1s;/m;
{
    my $t = Test::Ringx->new;
    $t->write_config($STUCK);
    $t->expect_log(qr/worker process \d+ did not exit in time, sending SIGKILL/,
                   qr/worker process \d+ exited on signal 9/);
    $t->run;
    my @w = $t->wait_workers(1);
    kill 'STOP', @w;
    my $t0 = time;
    $t->signal('QUIT');
    ok($t->wait_master_exit(10), 'QUIT with a stuck worker: the master exits');
    my $took = time - $t0;
    ok($took >= 2.5 && $took < Test::Ringx::timeout(10),
       sprintf('... after worker_shutdown_timeout and the grace (%.2f s)', $took));
    ok(!grep({ Test::Ringx::pid_alive($_) } @w), '... the stuck worker is gone');
    ok($t->log_contains(qr/worker process $w[0] did not exit in time/),
       '... and the kill is logged');
    $t->stop;
}
{
    my $t = Test::Ringx->new;
    $t->write_config($STUCK);
    $t->expect_log(qr/worker process \d+ did not exit in time, sending SIGKILL/,
                   qr/worker process \d+ exited on signal 9/);
    $t->run;
    my @w = $t->wait_workers(1);
    kill 'STOP', @w;
    $t->signal('HUP');
    my @n = $t->wait_workers(1, not => \@w);
    ok(@n, 'reload with a stuck old worker: a new worker starts');
    ok($t->connect_ok($t->port(0)), '... and serves');
    ok($t->wait_for(sub { !Test::Ringx::pid_alive($w[0]) }, 10),
       '... the stuck old worker is gone after worker_shutdown_timeout');
    is($t->stop, 0, '... and QUIT ends it');
}

done_testing;
