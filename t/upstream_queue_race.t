#!/usr/bin/perl
# upstream_queue_race.t: a group with max_conns and a queue, two workers.
# A request whose pick finds every server full waits in the queue; it must
# not get 502 "no live upstreams" because another worker closed a
# connection between the pick and the check whether the group is full
# (both read the shared counts, each at its own moment). On a loaded
# machine a worker preempted between the two is enough (seen in
# t/fastcgi_queue.t); here gdb holds worker A in that window
# (rx_http_upstream_full, called after the pick found none) while worker B
# finishes the request that held the only connection.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use POSIX qw(WNOHANG);
use Test::More;
use Test::Ringx;
use Test::PhpFpm;

my ($GDB) = grep { -x $_ } map { "$_/gdb" } split /:/, $ENV{PATH} // '';
plan(skip_all => 'gdb not found (Debian: apt-get install gdb): it holds a '
    . 'worker between the pick and the full check') unless $GDB;
my $scope = 0;
if (open my $fh, '<', '/proc/sys/kernel/yama/ptrace_scope') {
    $scope = <$fh> // 0;
    chomp $scope;
}
plan(skip_all => "ptrace not allowed (kernel.yama.ptrace_scope=$scope, not root)")
    if $scope > 0 && $> != 0 || $scope > 2;

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $SOCK = "$PREFIX/php.sock";
Test::PhpFpm->start($t, [
    { name => 'pool', sock => $SOCK, pm => "pm = static\npm.max_children = 2" },
]);

$t->write_config(<<"EOF2");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    upstream php {
        server unix:$SOCK max_conns=1;
        queue 8 timeout=20s;
    }
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        root html;
        location = /pid { return 200 "\$pid"; }
        location /q/ {
            fastcgi_pass php;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
        }
    }
}
EOF2
$t->run;
my $P = $t->port(0);
# may this process trace another here (a container may forbid it)?
my $probe = `$GDB -nx -batch -p ${\ $t->master_pid} -ex detach 2>&1`;
if ($? != 0 || $probe =~ /ptrace: |could not attach|not permitted/i) {
    plan(skip_all => "gdb cannot attach to a process here: "
        . (grep { /ptrace|attach|permit/i } split /\n/, $probe)[0] // $probe);
}

# a keepalive client connection on each worker
my %on;
for (1 .. 60) {
    my $c = $t->raw($P) or next;
    $c->send("GET /pid HTTP/1.1\r\nHost: q\r\n\r\n");
    my $r = $c->read_response(timeout => 5) or next;
    $on{ $r->{body} } //= $c;
    last if keys %on == 2;
}
is scalar(keys %on), 2, 'a client connection on each worker';
my ($pa, $pb) = sort keys %on;
my ($ca, $cb) = @on{ $pa, $pb };

# gdb stops A in the full check that follows a pick which found none, and
# lets it go once B's connection is closed (attached first: attaching may
# take seconds on a loaded machine)
my $gate = "$PREFIX/gdb";
$t->write_file_raw('gdb.cmd', <<"EOF2");
set pagination off
set confirm off
break rx_http_upstream_full
shell touch $gate.armed
continue
shell touch $gate.stopped
shell n=0; while [ ! -e $gate.go ] && [ \$n -lt 1200 ]; do sleep 0.05; n=\$((n+1)); done
delete
detach
quit
EOF2
my $gdb = fork // die "fork: $!";
if (!$gdb) {
    open STDOUT, '>', "$PREFIX/logs/gdb.out";
    open STDERR, '>&', \*STDOUT;
    { exec $GDB, '-nx', '-batch', '-x', "$PREFIX/gdb.cmd", '-p', $pa };
    POSIX::_exit(127);
}
ok $t->wait_for(sub { -e "$gate.armed" }, 30), 'gdb attached to worker A'
    or diag $t->read_file('logs/gdb.out');

# B takes the only connection max_conns allows, for 3 s
$cb->send("GET /q/?ms=3000 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { (Test::PhpFpm::pool_open($SOCK) // 0) >= 1 }, 10),
    'worker B holds the connection';
$ca->send("GET /q/?ms=10 HTTP/1.1\r\nHost: q\r\n\r\n");
ok $t->wait_for(sub { -e "$gate.stopped" }, 10),
    'A stopped between the pick (none free) and the full check'
    or diag $t->read_file('logs/gdb.out');
ok((Test::PhpFpm::pool_open($SOCK) // 0) >= 1,
    '... while B still held the connection');

# B's request ends, its connection closes: the group has room again
my $rb = $cb->read_response(timeout => 10);
is $rb && $rb->{status}, 200, 'B answered';
ok $t->wait_for(sub { (Test::PhpFpm::pool_open($SOCK) // 1) == 0 }, 10),
    'and its connection closed';
sleep 0.2;            # the close reaches ringx's shared count too
open my $go, '>', "$gate.go" or die "$gate.go: $!";
close $go;
$t->wait_for(sub { waitpid($gdb, WNOHANG) != 0 }, 10)
    or do { kill 'KILL', $gdb; waitpid($gdb, 0) };

my $ra = $ca->read_response(timeout => 10);
is $ra && $ra->{status}, 200, 'A served once the slot is free, no 502'
    or diag $ra ? "status $ra->{status}" : 'no response';
ok !$t->log_contains(qr/no live upstreams/), 'no "no live upstreams" logged'
    or diag join "\n", $t->log_contains(qr/no live upstreams/);

$t->stop;
done_testing;
