#!/usr/bin/perl

# Binary upgrade as nginx does it (issue #24). USR2: the old master renames
# its pid file to .oldbin and starts the binary again (the "new binary" is
# the same objs/ringx), which takes over the listening sockets (RINGX
# environment variable) and writes the pid file; WINCH ends the old
# workers, HUP to the old master brings them back and QUIT to the new one
# ends it (rollback: the pid file is the old master's again); a second
# USR2, WINCH and QUIT to the old master finish the upgrade. Keepalive
# clients run throughout: no request fails, no connection is refused. A
# new binary that cannot start (a broken config) leaves the old master
# serving with its pid file back in place.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Load;
use Time::HiRes qw(time sleep);

my $CONF = <<'EOF2';
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log notice;
events { worker_connections 128; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen unix:%%PREFIX%%/logs/u.sock;
        location / { return 200 "$pid\n"; }
    }
}
EOF2

my $t = Test::Ringx->new;
$t->write_config($CONF);
$t->run;
my $P = $t->port(0);
my $old = $t->master_pid;
my $pidf = $t->pid_file;
my @old_w = $t->wait_workers(2);

sub pid_of_file { my $c = $t->read_file($_[0]) // return undef; $c =~ /(\d+)/ ? $1 : undef }
# The master whose worker answers.
sub server_master {
    my $r = $t->http_get($P, '/') // return 0;
    return 0 unless $r =~ /\r\n\r\n(\d+)/;
    return Test::Ringx::ppid_of(undef, $1) // 0;
}

# clients that pause 1 ms between requests, stopped once the events are
# over (a tight loop made ~500,000 requests and the test last 10+ s)
my $load = Test::Load->start(port => $P, clients => 4, seconds => 60, pause => 0.001,
                             path => sub { "/x?$_[0]-$_[1]" },
                             check => sub { $_[0]{body} =~ /^\d+$/ });

# USR2
$t->signal('USR2', $old);
ok($t->wait_for(sub { -f "$pidf.oldbin" && (pid_of_file($pidf) // $old) != $old }, 10),
   'USR2: pid file renamed to .oldbin, a new pid file written');
my $new = pid_of_file($pidf);
is(pid_of_file("$pidf.oldbin"), $old, '.oldbin holds the old master');
is(Test::Ringx::ppid_of(undef, $new), $old, 'the new master is the old one\'s child');
like($t->cmdline($new) // '', qr/^ringx: master process/, 'new master title');
my @new_w = $t->wait_workers(2, master => $new);
is(scalar @new_w, 2, 'the new master started its workers');
ok($t->log_contains(qr/\[notice\] $new#\d+: using inherited sockets from "(\d+;)+"/),
   'the new master took the sockets over');
ok(!$t->log_contains(qr/bind\(\) to .* failed/), 'nothing bound twice');
is(scalar($t->worker_pids($old)), 3, 'old master: its two workers and the new master');

# WINCH the old workers
$t->signal('WINCH', $old);
ok($t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @old_w }, 10),
   'WINCH: the old workers exit');
my %m = map { server_master() => 1 } 1 .. 6;
is_deeply([keys %m], [$new], 'the new master\'s workers answer');

# Rollback: HUP the old master, QUIT the new one.
$t->signal('HUP', $old);
my @back = $t->wait_workers(3, master => $old);    # 2 workers + the new master
is(scalar @back, 3, 'HUP to the old master: its workers are back');
$t->signal('QUIT', $new);
ok($t->wait_for(sub { !Test::Ringx::pid_alive($new) }, 10), 'QUIT: the new master exits');
ok($t->wait_for(sub { !-e "$pidf.oldbin" && (pid_of_file($pidf) // 0) == $old }, 5),
   'rollback: the pid file is the old master\'s again, no .oldbin');
ok(-S $t->prefix . '/logs/u.sock', 'the unix socket file is still there');
%m = map { server_master() => 1 } 1 .. 6;
is_deeply([keys %m], [$old], 'the old master\'s workers answer');
my ($rc, $out, $err) = $t->ringx('-s', 'reload');
is($rc, 0, '-s reload reaches the old master through the pid file') or diag $err;

# The upgrade for good: USR2, WINCH, QUIT to the old master.
@old_w = $t->wait_workers(2, master => $old, not => [$new]);
$t->signal('USR2', $old);
ok($t->wait_for(sub { -f "$pidf.oldbin" && (pid_of_file($pidf) // $old) != $old }, 10),
   'second USR2: a new master');
$new = pid_of_file($pidf);
$t->wait_workers(2, master => $new);
$t->signal('WINCH', $old);
$t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @old_w }, 10);
$t->signal('QUIT', $old);
ok($t->wait_master_exit(10), 'QUIT: the old master exits');
ok(Test::Ringx::pid_alive($new), 'the new master stays');
is(pid_of_file($pidf), $new, 'the pid file names the new master');
ok(!-e "$pidf.oldbin", 'the old master removed .oldbin');
ok(-S $t->prefix . '/logs/u.sock', 'the unix socket file is still there');
my $r = `curl -s --max-time 5 --unix-socket ${\ $t->prefix}/logs/u.sock http://x/`;
like($r, qr/^\d+$/, 'the unix socket answers');

my $res = $load->stop->wait;
is($res->{failed}, 0, "no request failed across the upgrade ($res->{ok} answered, "
   . "$res->{retries} retried on a reused connection)")
    or diag(Test::Load->describe_failures($res));
ok($res->{ok} > 50, 'the clients were busy');

# A new binary that cannot start: the old master serves on.
$t->write_config($CONF . "bogus_directive on;\n");
$t->expect_log(qr/unknown directive "bogus_directive"/);
kill 'USR2', $new;
# this USR2's child by its pid: an earlier new binary's exit must not match
my $broken;
$t->wait_for(sub { ($broken) = map { /$new#\d+: start new binary process (\d+)/ ? $1 : () }
                       $t->log_contains(qr/$new#\d+: start new binary process/); $broken }, 10);
ok($broken && $t->wait_for(sub {
       $t->log_contains(qr/new binary process $broken exited with code 1/) }, 10),
   'a broken new binary exits');
is(pid_of_file($pidf), $new, 'its master\'s pid file is back');
ok(!-e "$pidf.oldbin", 'no .oldbin left');
is(server_master(), $new, 'the running master still serves');

kill 'QUIT', $new;
ok($t->wait_for(sub { !Test::Ringx::pid_alive($new) }, 10), 'QUIT ends the new master');
ok(!-e $pidf, 'it removed its pid file');
$t->check_logs;
done_testing;
