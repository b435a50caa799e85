#!/usr/bin/perl

# Process-level directives and listen variants: worker_cpu_affinity (masks
# and auto), worker_priority, env, worker_shutdown_timeout, an unprivileged
# master with `user`, master_process off, listen on [::1], on a UNIX socket,
# with reuseport and with socket options, ipv6only by default, duplicate
# listen options and default servers, and error_log inside a server.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::IP;
use Socket qw(SOCK_STREAM);
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time sleep);

my $EVENTS = "events {\n    worker_connections 64;\n}\n";

# CPUs this test may run on ("0-3,6" => [0,1,2,3,6]).
sub cpu_list {
    my ($txt) = @_;
    return () unless defined $txt;
    my @c;
    for my $part (split /,/, $txt) {
        my ($a, $b) = split /-/, $part;
        push @c, $a .. ($b // $a);
    }
    return @c;
}

my @MY_CPUS = cpu_list(Test::Ringx::proc_status($$)->{Cpus_allowed_list});
my $NCPU = do {
    open(my $fh, '<', '/sys/devices/system/cpu/online');
    my @c = cpu_list($fh ? scalar(<$fh>) =~ s/\s+//gr : undef);
    @c || 1;
};

sub have_ipv6_loopback {
    my $s = IO::Socket::IP->new(LocalHost => '::1', LocalPort => 0,
                                Proto => 'tcp', Type => SOCK_STREAM);
    return $s ? 1 : 0;
}

###########################################################################
# worker_cpu_affinity 01 10

SKIP: {
    skip "worker_cpu_affinity masks: needs CPUs 0 and 1 (allowed: @MY_CPUS)", 3
        unless (grep { $_ == 0 } @MY_CPUS) && (grep { $_ == 1 } @MY_CPUS);
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
worker_cpu_affinity 01 10;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server { listen 127.0.0.1:%%PORT_0%%; location / { return 200 "ok\\n"; } }
}
EOF
    $t->run;
    my @w = $t->wait_workers(2);
    is(scalar @w, 2, 'affinity masks: two workers');
    # a worker pins itself right after fork: give it a moment
    my @lists;
    $t->wait_for(sub {
        @lists = sort map { Test::Ringx::proc_status($_)->{Cpus_allowed_list} // '?' } @w;
        "@lists" eq '0 1';
    }, 3);
    is_deeply(\@lists, ['0', '1'], 'worker_cpu_affinity 01 10: one worker on CPU 0, one on CPU 1');
    $t->stop;
}

###########################################################################
# worker_cpu_affinity auto

SKIP: {
    skip "worker_cpu_affinity auto: needs 2 CPUs (online $NCPU, allowed @MY_CPUS)", 4
        unless $NCPU >= 2 && @MY_CPUS >= $NCPU;
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
worker_cpu_affinity auto;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server { listen 127.0.0.1:%%PORT_0%%; location / { return 200 "ok\\n"; } }
}
EOF
    $t->run;
    my @w = $t->wait_workers(2);
    is(scalar @w, 2, 'affinity auto: two workers');
    my @lists;
    $t->wait_for(sub {
        @lists = map { Test::Ringx::proc_status($_)->{Cpus_allowed_list} // '?' } @w;
        2 == grep { /^\d+$/ } @lists;
    }, 3);
    is(scalar(grep { /^\d+$/ } @lists), 2, 'worker_cpu_affinity auto: each worker on one CPU')
        or diag("@lists");
    isnt($lists[0], $lists[1], 'worker_cpu_affinity auto: on different CPUs');
    $t->stop;
}

###########################################################################
# worker_priority, env

{
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
worker_priority 10;
env FOO=bar;
env HOME;
env RINGX_TEST_UNSET;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server { listen 127.0.0.1:%%PORT_0%%; location / { return 200 "ok\\n"; } }
}
EOF
    $t->run({ env => { TZ => 'UTC', HOME => '/home/ringx-test',
                       RINGX_TEST_SECRET => 'sekrit', FOO => 'from-master' } });
    my $master = $t->master_pid;
    my @w = $t->wait_workers(2);
    is(scalar @w, 2, 'priority/env: two workers');
    is_deeply([ map { Test::Ringx::nice_of($_) } @w ], [10, 10],
              'worker_priority 10: the workers are at nice 10');
    is(Test::Ringx::nice_of($master), Test::Ringx::nice_of($$),
       'worker_priority: the master keeps its nice value');

    my $menv = Test::Ringx::live_environ($master);
    SKIP: {
        skip 'cannot read the environment of a process (nm, /proc/PID/mem)', 4
            unless $menv;
        is($menv->{RINGX_TEST_SECRET}, 'sekrit', 'the master has the whole environment');
        for my $w (@w) {
            my $env = Test::Ringx::live_environ($w);
            is_deeply($env, { TZ => 'UTC', FOO => 'bar', HOME => '/home/ringx-test' },
                      "worker $w: only TZ, FOO=bar and HOME in its environment")
                or diag(explain($env));
        }
        my $penv = $t->read_file("/proc/$w[0]/environ") // '';
        unlike($penv, qr/RINGX_TEST_SECRET/,
               '/proc/PID/environ of a worker does not show the master environment');
    }
    $t->stop;
}

###########################################################################
# worker_shutdown_timeout

{
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
worker_shutdown_timeout 1s;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    send_timeout 60s;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { root html; }
    }
}
EOF
    $t->write_file_raw('html/big.bin', 'x' x (32 * 1024 * 1024));
    $t->run;
    my ($w) = $t->wait_workers(1);
    my $c = $t->raw($t->port(0));
    setsockopt($c->sock, Socket::SOL_SOCKET(), Socket::SO_RCVBUF(), 4096);
    $c->send("GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    sleep 0.5;              # the worker fills the socket buffers and waits
    ok($c->still_open(0.1), 'shutdown timeout: the download is in progress');
    my $t0 = time;
    $t->signal('QUIT');
    ok($t->wait_for(sub { !Test::Ringx::pid_alive($w) }, 4),
       'worker_shutdown_timeout 1s: the worker exits after QUIT with a request in progress');
    my $dt = time - $t0;
    ok($dt >= 0.7, sprintf('the worker waited for the request first (%.2f s)', $dt));
    ok($dt < 2.5, sprintf('the worker exited within ~2 s (%.2f s)', $dt));
    ok($t->wait_master_exit(3), 'the master exits');
    ok($t->log_contains(qr/worker_shutdown_timeout/),
       'the error log has a line about worker_shutdown_timeout')
        or diag($t->read_file('logs/error.log'));
    $c->close;
    $t->stop;
}

SKIP: {
    skip 'a worker that keeps crashing is throttled: no crash trigger to test it with', 1;
}

###########################################################################
# an unprivileged master with `user`

SKIP: {
    skip 'not root: cannot switch to nobody', 7 if $> != 0;
    my ($nobody_uid, $nobody_gid) = (getpwnam('nobody'))[2, 3];
    skip 'no user nobody', 7 unless defined $nobody_uid;
    my $setpriv = (grep { -x } '/usr/bin/setpriv', '/bin/setpriv')[0];
    skip 'no setpriv', 7 unless $setpriv;
    skip 'no user www-data', 7 unless defined getpwnam('www-data');

    my $t = Test::Ringx->new;
    my $p = $t->prefix;
    chown $nobody_uid, $nobody_gid, "$p/logs" or die "chown $p/logs: $!";
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
user www-data;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server { listen 127.0.0.1:%%PORT_0%%; location / { return 200 "unprivileged\\n"; } }
}
EOF
    my $port = $t->port(0);
    ok($port > 1024, 'unprivileged: a port above 1024');
    $t->run({ wrap => [ $setpriv, "--reuid=$nobody_uid", "--regid=$nobody_gid",
                        '--clear-groups' ] });
    my $master = $t->master_pid;
    my ($w) = $t->wait_workers(1);
    like($t->http_get($port, '/') // '', qr/^HTTP\/1\.1 200 .*\r\n\r\nunprivileged\n\z/s,
         'unprivileged master: serves return 200');
    my ($muid) = split ' ', Test::Ringx::proc_status($master)->{Uid} // '';
    my ($wuid) = split ' ', ($w ? Test::Ringx::proc_status($w)->{Uid} : undef) // '';
    is($muid, $nobody_uid, 'the master runs as nobody');
    is($wuid, $nobody_uid, 'the worker stays nobody (user www-data ignored)');
    my $warn = qr/\[warn\] .*the "user" directive makes sense only if the master process runs with super-user privileges, ignored in \Q${\ $t->conf_file }\E:4/;
    ok($t->log_contains($warn)
       || ($t->read_file('logs/stderr.log') // '') =~ $warn,
       'the nginx warning about "user" without super-user privileges')
        or diag($t->read_file('logs/error.log'), $t->read_file('logs/stderr.log'));
    $t->stop;
    ok(!-e $t->pid_file, 'unprivileged master: pid file removed at exit');
}

###########################################################################
# master_process off

{
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process off;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server { listen 127.0.0.1:%%PORT_0%%; location / { return 200 "single \$pid\\n"; } }
}
EOF
    $t->run;
    my $pid = $t->master_pid;
    is(scalar($t->worker_pids), 0, 'master_process off: no child process');
    like($t->http_get($t->port(0), '/') // '', qr/\r\n\r\nsingle $pid\n\z/,
         'master_process off: the single process serves');
    is($t->read_pid_file, $pid, 'master_process off: pid file');
    $t->signal('QUIT');
    ok($t->wait_master_exit(5), 'master_process off: QUIT stops it');
    is($t->exit_status, 0, 'master_process off: exit code 0');
    ok(!-e $t->pid_file, 'master_process off: pid file removed');
    $t->stop;
}

###########################################################################
# listen [::1]:PORT, and ipv6only by default on [::]:PORT

SKIP: {
    skip 'IPv6 loopback ::1 is not configured', 6 unless have_ipv6_loopback();
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server {
        listen [::1]:%%PORT_0%%;
        location / { return 200 "v6 \$remote_addr \$server_addr\\n"; }
    }
    server {
        listen [::]:%%PORT_1%%;
        location / { return 200 "any6\\n"; }
    }
}
EOF
    $t->run;
    my $c = $t->raw($t->port(0), host => '::1');
    ok($c, 'listen [::1]: connect to ::1');
    if ($c) {
        $c->send("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        my $r = $c->read_response;
        is($r && $r->{body}, "v6 ::1 ::1\n", 'listen [::1]: served, $remote_addr ::1');
    } else {
        fail('listen [::1]: served');
    }
    ok(!$t->connect_ok($t->port(0)), 'listen [::1]: not on 127.0.0.1');
    my $c6 = $t->raw($t->port(1), host => '::1');
    ok($c6, 'listen [::]: IPv6 connections accepted');
    ok(!$t->connect_ok($t->port(1)),
       'listen [::]: ipv6only by default, no IPv4 connection on 127.0.0.1');
    $c->close if $c;
    $c6->close if $c6;
    $t->stop;
}

###########################################################################
# listen unix:

{
    my $t = Test::Ringx->new;
    my $sock = $t->prefix . '/logs/ringx.sock';
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server {
        listen unix:$sock;
        location / { return 200 "unix [\$remote_addr]\\n"; }
    }
}
EOF
    $t->run;
    ok($t->wait_for(sub { -S $sock }), 'listen unix: the socket file exists');
    my $mode = (stat $sock)[2];
    is(sprintf('%o', ($mode // 0) & 0777), '666', 'listen unix: mode 0666');
    my $out = `curl -s --max-time 5 --unix-socket '$sock' http://localhost/ 2>&1`;
    is($out, "unix [unix:]\n", 'listen unix: served through the socket (curl --unix-socket)');
    $t->stop;
    ok(!-e $sock, 'listen unix: the socket file is removed after the master exits');
}

###########################################################################
# listen ... reuseport with two workers

{
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        location / { return 200 "\$pid"; }
    }
}
EOF
    $t->run;
    my @w = $t->wait_workers(2);
    my %seen;
    for (1 .. 40) {
        my $raw = $t->http_get($t->port(0), '/') // '';
        my ($pid) = $raw =~ /\r\n\r\n(\d+)\z/;
        $seen{$pid // 'none'}++;
    }
    is_deeply([ sort { $a <=> $b } grep { $_ ne 'none' } keys %seen ], [@w],
              'reuseport: both workers serve connections')
        or diag(explain(\%seen), "workers @w");
    is($seen{none}, undef, 'reuseport: every request answered');
    SKIP: {
        my $ss = (grep { -x } '/usr/bin/ss', '/bin/ss', '/usr/sbin/ss')[0];
        skip 'no ss(8)', 1 unless $ss;
        my $port = $t->port(0);
        my @l = grep { /^LISTEN/ } split /\n/, `$ss -Hltn 'sport = :$port' 2>/dev/null`;
        is(scalar @l, 2, 'reuseport: one listening socket per worker') or diag(@l);
    }
    $t->stop;
}

###########################################################################
# listen with backlog=, rcvbuf=, sndbuf=, so_keepalive=on, deferred

{
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%% backlog=16 rcvbuf=64k sndbuf=64k so_keepalive=on deferred;
        location / { return 200 "opts\\n"; }
    }
}
EOF
    $t->run;
    my $port = $t->port(0);
    like($t->http_get($port, '/') // '', qr/\r\n\r\nopts\n\z/, 'listen with options: serves');
    SKIP: {
        my $ss = (grep { -x } '/usr/bin/ss', '/bin/ss', '/usr/sbin/ss')[0];
        skip 'no ss(8)', 3 unless $ss;
        my $l = `$ss -Hltnm 'sport = :$port' 2>/dev/null`;
        like($l, qr/^LISTEN\s+\d+\s+16\s/m, 'backlog=16: the listen queue is 16') or diag($l);
        # the kernel doubles SO_RCVBUF/SO_SNDBUF
        like($l, qr/\brb131072\b.*\btb131072\b/s, 'rcvbuf=64k sndbuf=64k: set')
            or diag($l);
        my $c = $t->raw($port);
        $c->send("GET / HTTP/1.1\r\n");     # accepted (deferred), not complete
        my $est = '';
        $t->wait_for(sub {
            $est = `$ss -Htno state established 'sport = :$port' 2>/dev/null`;
            $est =~ /keepalive/;
        }, 2);
        like($est, qr/timer:\(keepalive/, 'so_keepalive=on: accepted connections have SO_KEEPALIVE')
            or diag($est);
        $c->close;
    }
    $t->stop;
}

###########################################################################
# duplicate listen options, duplicate default servers (-t)

{
    my $t = Test::Ringx->new;
    my $conf = $t->conf_file;
    my $port = $t->port(0);
    $t->write_config(<<"EOF");
$EVENTS
http {
    server { listen 127.0.0.1:%%PORT_0%% backlog=8; server_name a; }
    server { listen 127.0.0.1:%%PORT_0%% backlog=8; server_name b; }
}
EOF
    my ($rc, $out, $err) = $t->ringx('-t');
    isnt($rc, 0, 'duplicate listen options: -t fails');
    like($err, qr/\[emerg\] duplicate listen options for 127\.0\.0\.1:$port in \Q$conf\E:7$/m,
         'duplicate listen options: [emerg] naming the address and the second listen')
        or diag($err);

    $t->write_config(<<"EOF");
$EVENTS
http {
    server { listen 127.0.0.1:%%PORT_0%% default_server; server_name a; }
    server { listen 127.0.0.1:%%PORT_0%% default_server; server_name b; }
}
EOF
    ($rc, $out, $err) = $t->ringx('-t');
    isnt($rc, 0, 'two default servers: -t fails');
    like($err, qr/\[emerg\] a duplicate default server for 127\.0\.0\.1:$port in \Q$conf\E:7$/m,
         'two default servers: [emerg] a duplicate default server')
        or diag($err);

    # the same options once, in one of the servers: fine
    $t->write_config(<<"EOF");
$EVENTS
http {
    server { listen 127.0.0.1:%%PORT_0%% backlog=8 default_server; server_name a; }
    server { listen 127.0.0.1:%%PORT_0%%; server_name b; }
}
EOF
    ($rc, $out, $err) = $t->ringx('-t');
    is($rc, 0, 'options and default_server given once per address: -t passes') or diag($err);

    # the same address twice in one server: nginx's "a duplicate listen",
    # named before any options or default_server clash the pair also makes
    for my $c (['',                 '',                 'plain'],
               [' default_server',  ' default_server',  'both default_server'],
               [' backlog=8',       ' rcvbuf=65536',    'both with options']) {
        $t->write_config(<<"EOF");
$EVENTS
http {
    server {
        listen 127.0.0.1:%%PORT_0%%$c->[0];
        listen 127.0.0.1:%%PORT_0%%$c->[1];
    }
}
EOF
        ($rc, $out, $err) = $t->ringx('-t');
        isnt($rc, 0, "same listen twice in one server ($c->[2]): -t fails");
        like($err, qr/\[emerg\] a duplicate listen 127\.0\.0\.1:$port in \Q$conf\E:8$/m,
             "same listen twice in one server ($c->[2]): [emerg] a duplicate listen, file:line")
            or diag($err);
    }

    # `listen PORT` and `listen *:PORT` are one address
    $t->write_config(<<"EOF");
$EVENTS
http {
    server {
        listen %%PORT_0%%;
        listen *:%%PORT_0%%;
    }
}
EOF
    ($rc, $out, $err) = $t->ringx('-t');
    like($err, qr/\[emerg\] a duplicate listen 0\.0\.0\.0:$port in \Q$conf\E:8$/m,
         'listen PORT and listen *:PORT in one server: a duplicate listen 0.0.0.0:PORT')
        or diag($err);

    # a wildcard and a specific address on one port in one server: fine
    $t->write_config(<<"EOF");
$EVENTS
http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen %%PORT_0%%;
    }
}
EOF
    ($rc, $out, $err) = $t->ringx('-t');
    is($rc, 0, 'a specific address and the wildcard on one port in one server: -t passes')
        or diag($err);
}

###########################################################################
# error_log inside a server

{
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        error_log logs/srv.log;
        location / { root html; }
    }
}
EOF
    $t->run;
    my $raw = $t->http_get($t->port(0), '/no-such-file');
    like($raw // '', qr/^HTTP\/1\.1 404 /, 'error_log in server: 404 for a missing file');
    my $re = qr/\[error\] \d+#\d+: \*\d+ open\(\) "\Q${\ $t->prefix }\E\/html\/no-such-file" failed \(2: No such file or directory\), client: 127\.0\.0\.1, server: localhost, request: "GET \/no-such-file HTTP\/1\.0"/;
    ok($t->wait_for(sub { $t->log_contains($re, 'logs/srv.log') }, 2),
       "error_log in server: the open() failed line goes to the server's log")
        or diag($t->read_file('logs/srv.log'));
    # nginx ends the line with the Host header of the request
    like(($t->log_contains($re, 'logs/srv.log'))[0] // '',
         qr/, request: "GET \/no-such-file HTTP\/1\.0", host: "localhost"$/,
         'error_log in server: the line ends with , host: "localhost" as in nginx');
    ok(!$t->log_contains(qr/no-such-file/, 'logs/error.log'),
       'error_log in server: not to the main error log')
        or diag($t->read_file('logs/error.log'));
    $t->stop;
}

done_testing;
