#!/usr/bin/perl

# The process model: master and workers, titles, the pid file, reload by
# -s reload and by HUP (also with a bad config), a killed worker respawned,
# reopen of logs, graceful and fast stop, and daemon mode with WINCH.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use POSIX qw(WNOHANG);
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time sleep);

my $CONF = <<'EOF';
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log notice;

events {
    worker_connections 64;
}

http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { }
    }
}
EOF

my $LINE_RE = qr{^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(?:debug|info|notice|warn|error|crit|alert|emerg)\] \d+#\d+: \S};

sub overlap {
    my ($a, $b) = @_;
    my %in = map { $_ => 1 } @$a;
    return grep { $in{$_} } @$b;
}

###########################################################################
# master, workers, titles, pid file

my $t = Test::Ringx->new;
$t->write_config($CONF);
$t->run;
my $port = $t->port(0);
my $master = $t->master_pid;

is($t->read_pid_file, $master, 'pid file holds the master pid');
like($t->cmdline($master) // '', qr/^ringx: master process/, 'master title');

my @w = $t->wait_workers(2);
is(scalar @w, 2, 'worker_processes 2: two workers');
for my $pid (@w) {
    like($t->cmdline($pid) // '', qr/^ringx: worker process/, "worker $pid title");
}
ok($t->connect_ok($port), 'listening');

###########################################################################
# reload: -s reload, then HUP

for my $how ('-s reload', 'HUP') {
    if ($how eq 'HUP') {
        $t->signal('HUP');
    } else {
        my ($rc, $out, $err) = $t->ringx('-s', 'reload');
        is($rc, 0, '-s reload: exit 0') or diag($err);
    }
    ok($t->connect_ok($port), "$how: port answers during the reload");
    my @n = $t->wait_workers(2, not => \@w);
    is(scalar @n, 2, "$how: two new workers")
        or diag("old @w, now " . join ' ', $t->worker_pids);
    ok($t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @w }),
       "$how: old workers exited");
    is($t->master_pid, $master, "$how: same master");
    ok($t->connect_ok($port), "$how: port answers after the reload");
    @w = @n if @n;
}

###########################################################################
# reload with a bad config: [emerg] logged, old workers keep serving

{
    $t->write_config($CONF =~ s/(worker_processes 2;)/$1\nno_such_directive on;/r);
    $t->expect_log(qr/\[emerg\].*unknown directive "no_such_directive"/);
    $t->signal('HUP');
    ok($t->wait_for(sub {
            $t->log_contains(qr/\[emerg\] .*unknown directive "no_such_directive" in \Q${\ $t->conf_file }\E:4/) }),
       'bad config on reload: [emerg] with file:line in the error log');
    sleep 0.5;
    is_deeply([ $t->worker_pids ], [ @w ], 'bad config on reload: same workers');
    ok(kill(0, $master) && Test::Ringx::pid_alive($master), 'bad config on reload: master alive');
    ok($t->connect_ok($port), 'bad config on reload: port answers');
    $t->write_config($CONF);
}

###########################################################################
# a worker killed with SIGKILL is respawned

{
    my $victim = $w[0];
    $t->expect_log(qr/\[alert\] .*worker process $victim exited on signal 9/);
    kill 'KILL', $victim;
    my @n = $t->wait_workers(2, not => [$victim]);
    is(scalar @n, 2, 'killed worker: respawned');
    is(scalar(overlap(\@n, [ $w[1] ])), 1, 'killed worker: the other worker untouched');
    ok($t->wait_for(sub { $t->log_contains(qr/\[alert\] .*worker process $victim exited on signal 9/) }),
       'killed worker: alert logged');
    @w = @n if @n;
}

###########################################################################
# reopen: USR1 after the log was moved away

{
    my $p = $t->prefix;
    ok(rename("$p/logs/error.log", "$p/logs/error.log.1"), 'error.log moved to error.log.1');
    my ($rc, $out, $err) = $t->ringx('-s', 'reopen');
    is($rc, 0, '-s reopen: exit 0') or diag($err);
    ok($t->wait_for(sub { -e "$p/logs/error.log" }), 'reopen: a new logs/error.log');

    ($rc, $out, $err) = $t->ringx('-s', 'reload');
    is($rc, 0, '-s reload after reopen: exit 0');
    my @n = $t->wait_workers(2, not => \@w);
    is(scalar @n, 2, 'reload after reopen: new workers');
    @w = @n if @n;
    ok($t->wait_for(sub { -s "$p/logs/error.log" }), 'reopen: new lines go to the new file');

    my @bad = grep { $_ !~ $LINE_RE }
              split /\n/, ($t->read_file('logs/error.log.1') // '')
                        . ($t->read_file('logs/error.log') // '');
    is(scalar @bad, 0, 'every error log line in nginx format')
        or diag(join "\n", @bad[0 .. ($#bad < 9 ? $#bad : 9)]);
}

###########################################################################
# -s quit: graceful stop, pid file removed

{
    my ($rc, $out, $err) = $t->ringx('-s', 'quit');
    is($rc, 0, '-s quit: exit 0') or diag($err);
    ok($t->wait_master_exit(10), '-s quit: master exits');
    is($t->exit_status, 0, '-s quit: master exit code 0');
    ok(!-e $t->pid_file, '-s quit: pid file removed');
    ok($t->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @w }), '-s quit: workers gone');
    $t->stop;     # checks the logs
}

###########################################################################
# -s stop: fast stop

{
    my $u = Test::Ringx->new;
    $u->write_config($CONF);
    $u->run;
    my @uw = $u->wait_workers(2);
    is(scalar @uw, 2, 'second server: two workers');
    my $t0 = time;
    my ($rc, $out, $err) = $u->ringx('-s', 'stop');
    is($rc, 0, '-s stop: exit 0') or diag($err);
    ok($u->wait_master_exit(3), '-s stop: master exits within 3 s');
    ok(!-e $u->pid_file, '-s stop: pid file removed');
    ok($u->wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @uw }), '-s stop: workers gone');
    $u->stop;
}

###########################################################################
# daemon on: ringx returns at once, the master lives on; WINCH; -s stop

{
    my $d = Test::Ringx->new;
    $d->write_config($CONF =~ s/daemon off;/daemon on;/r);
    my $t0 = time;
    my ($rc, $out, $err) = $d->ringx({ timeout => 5 });
    is($rc, 0, 'daemon on: the command exits 0') or diag($err);
    ok(time - $t0 < 3, 'daemon on: the command returns at once');

    ok($d->wait_for(sub { $d->read_pid_file }), 'daemon on: pid file written');
    my $dm = $d->read_pid_file // 0;
    ok(Test::Ringx::pid_alive($dm), 'daemon on: master running');
    isnt($d->ppid_of($dm), $$, 'daemon on: master is not a child of the test');
    is(waitpid($dm, WNOHANG), -1, 'daemon on: master cannot be waited for by the test');
    like($d->cmdline($dm) // '', qr/^ringx: master process/, 'daemon on: master title');
    ok($d->wait_for(sub { $d->connect_ok($d->port(0)) }), 'daemon on: listening');

    my @dw = $d->wait_workers(2, master => $dm);
    is(scalar @dw, 2, 'daemon on: two workers');

    kill 'WINCH', $dm;
    ok($d->wait_for(sub { !$d->worker_pids($dm) }), 'WINCH: workers exit');
    sleep 0.3;
    ok(Test::Ringx::pid_alive($dm), 'WINCH: master stays');
    is(scalar($d->worker_pids($dm)), 0, 'WINCH: no worker respawned');

    ($rc, $out, $err) = $d->ringx('-s', 'stop');
    is($rc, 0, 'daemon: -s stop exit 0') or diag($err);
    ok($d->wait_for(sub { !Test::Ringx::pid_alive($dm) }), 'daemon: master gone');
    ok($d->wait_for(sub { !-e $d->pid_file }), 'daemon: pid file removed');
    $d->check_logs;
}

done_testing;
