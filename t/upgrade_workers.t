#!/usr/bin/perl

# Binary upgrade, the cases around t/upgrade.t (issue #24). With one
# reuseport socket per worker (worker_reuseport on, the default) the
# RINGX="fd;..." handoff carries every worker's socket: a new binary with
# more workers takes them and opens the rest, one with fewer closes what it
# does not need, and keepalive clients see no failed request either way.
# A new binary that exits after WINCH (the old workers are gone) makes the
# old master start its workers again, as nginx does, and serve; a rollback
# (HUP to the old master, QUIT to the new one) from a new binary with fewer
# workers brings every old worker its share of the connections again.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Load;
use Time::HiRes qw(time sleep);

my $CONF = <<'EOF';
daemon off;
master_process on;
worker_processes %%N%%;
error_log logs/error.log notice;
events { worker_connections 128; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { return 200 "$pid\n"; }
    }
}
EOF
sub conf { my $n = shift; (my $c = $CONF) =~ s/%%N%%/$n/; $c }

my $t = Test::Ringx->new;
$t->write_config(conf(2));
$t->run;
my $P = $t->port(0);
my $pidf = $t->pid_file;
sub pid_of_file { my $c = $t->read_file($_[0]) // return undef; $c =~ /(\d+)/ ? $1 : undef }
# Distinct workers that answer n fresh connections.
sub answering {
    my %w;
    for (1 .. $_[0]) {
        my $r = $t->http_get($P, '/') // next;
        $w{$1} = 1 if $r =~ /\r\n\r\n(\d+)/;
    }
    return keys %w;
}
# USR2 to $old: the new master's pid once its workers are up, or undef.
sub upgrade {
    my ($old, $n) = @_;
    $t->signal('USR2', $old);
    $t->wait_for(sub { -f "$pidf.oldbin" && (pid_of_file($pidf) // $old) != $old }, 10)
        or return undef;
    my $new = pid_of_file($pidf);
    return $t->wait_workers($n, master => $new, timeout => 10) ? $new : undef;
}

my $load = Test::Load->start(port => $P, clients => 4, seconds => 60, pause => 0.001,
                             path => sub { "/x?$_[0]-$_[1]" },
                             check => sub { $_[0]{body} =~ /^\d+$/ });

# --- 2 workers -> 3 --------------------------------------------------------
my $m1 = $t->master_pid;
my @w1 = $t->wait_workers(2);
$t->write_config(conf(3));
my $m2 = upgrade($m1, 3);
ok($m2, 'USR2: a new master with 3 workers');
ok($t->log_contains(qr/$m2#\d+: using inherited sockets from "\d+;\d+;"/),
   'the handoff carries both workers\' sockets');
ok(!$t->log_contains(qr/bind\(\) to .* failed/), 'nothing refused to bind');
$t->signal('WINCH', $m1);
ok($t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @w1 }, 10),
   'WINCH: the old workers exit');
my @w2 = $t->wait_workers(3, master => $m2);
my @a = answering(60);
ok(@a >= 2 && !grep({ my $p = $_; !grep { $_ == $p } @w2 } @a),
   'the new workers answer (' . scalar(@a) . ' of 3 seen)');
$t->signal('QUIT', $m1);
ok($t->wait_for(sub { !Test::Ringx::pid_alive($m1) }, 10), 'the old master exits');

# --- 3 workers -> 1 --------------------------------------------------------
$t->write_config(conf(1));
my $m3 = upgrade($m2, 1);
ok($m3, 'USR2: a new master with 1 worker');
ok($t->log_contains(qr/$m3#\d+: using inherited sockets from "\d+;\d+;\d+;"/),
   'the handoff carries the 3 workers\' sockets');
# a new binary ignores USR2 while its old master runs (as nginx): a second
# rename would overwrite the old master's .oldbin
$t->signal('USR2', $m3);
ok($t->wait_for(sub { $t->log_contains(qr/$m3#\d+: USR2 ignored: the old master process $m2 is still running/) }, 10),
   'USR2 to the new binary while the old master runs: ignored');
is(pid_of_file("$pidf.oldbin"), $m2, '... .oldbin is still the old master\'s');
is(scalar($t->worker_pids($m3)), 1, '... and no third master');
$t->signal('WINCH', $m2);
ok($t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @w2 }, 10),
   'WINCH: the old workers exit');
my @w3 = $t->wait_workers(1, master => $m3);
is_deeply([answering(20)], \@w3, 'the one new worker answers everything');
$t->signal('QUIT', $m2);
ok($t->wait_for(sub { !Test::Ringx::pid_alive($m2) }, 10), 'the old master exits');

# --- the new binary exits after WINCH: the old master's workers come back --
$t->write_config(conf(2));
my $m4 = upgrade($m3, 2);
my @w4 = $t->worker_pids($m4);
ok($m4, 'USR2: a new master');
$t->signal('WINCH', $m3);
ok($t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @w3 }, 10),
   'WINCH: the old worker exits');
is(scalar($t->worker_pids($m3)), 1, 'the old master has no worker, only the new master');
$t->signal('QUIT', $m4);
ok($t->wait_for(sub { $t->log_contains(qr/new binary process $m4 exited/) }, 10),
   'QUIT: the new master exits');
my @back = $t->wait_workers(1, master => $m3, timeout => 10);
is(scalar @back, 1, 'the old master started its worker again');
ok($t->wait_for(sub { (pid_of_file($pidf) // 0) == $m3 && !-e "$pidf.oldbin" }, 5),
   'its pid file is back');
ok($t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @w4 }, 10),
   'the new master\'s workers are gone');
is_deeply([answering(10)], \@back, 'its worker answers');

# --- rollback from a new binary with fewer workers --------------------------
# The new binary's reuseport selector picks among its own workers' sockets;
# the old master, starting its workers again on HUP, sets it back to its
# count, or its second worker would get no connection.
$t->write_config(conf(2));
my @w5 = $t->worker_pids($m3);
$t->signal('HUP', $m3);
@w5 = $t->wait_workers(2, master => $m3, not => \@w5, timeout => 10);
is(scalar @w5, 2, 'reload: the master has 2 workers');
$t->write_config(conf(1));
my $m5 = upgrade($m3, 1);
ok($m5, 'USR2: a new master with 1 worker');
$t->signal('WINCH', $m3);
ok($t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @w5 }, 10),
   'WINCH: the old workers exit');
$t->signal('HUP', $m3);
my @w6 = $t->wait_workers(3, master => $m3, timeout => 10);   # 2 + the new master
$t->signal('QUIT', $m5);
ok($t->wait_for(sub { $t->log_contains(qr/new binary process $m5 exited/) }, 10),
   'HUP to the old master, QUIT to the new one: it exits');
@w6 = $t->wait_workers(2, master => $m3, timeout => 10);
is(scalar(my @seen = answering(60)), 2, 'both of the old master\'s workers answer again');

my $res = $load->stop->wait;
is($res->{failed}, 0, "no request failed across the upgrades ($res->{ok} answered, "
   . "$res->{retries} retried on a reused connection)")
    or diag(Test::Load->describe_failures($res));
ok($res->{ok} > 50, 'the clients were busy');

$t->signal('QUIT', $m3);
ok($t->wait_for(sub { !Test::Ringx::pid_alive($m3) }, 10), 'QUIT ends the master');
ok(!-e $pidf, 'it removed its pid file');
$t->check_logs;
done_testing;
