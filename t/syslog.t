#!/usr/bin/perl

# error_log and access_log to syslog ("syslog:server=..."), against a UDP
# and unix datagram listeners of the test: the exact datagram nginx sends
# ("<PRI>Mmm dd hh:mm:ss HOST TAG: message"; PRI = facility * 8 + severity,
# HOST left out with nohostname), the body equal to the line the file log
# got, error_log's severity taken from each message's level (notice, warn,
# error, crit, info), the master's own messages, access_log if=, a long line
# (as cut as the file's for error_log, whole for access_log), a reload (the
# master keeps no socket of a freed configuration), a syslog server that is
# down (UDP port closed, unix socket missing: requests are served, the
# failure is logged once a second, the next messages get through once the
# server is back), a receiver that does not read (the worker does not
# block), syslog-only error logs keeping the default file, and the -t
# errors with nginx's words and file:line.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Select;
use IO::Socket::IP;
use IO::Socket::UNIX;
use POSIX qw(strftime);
use Socket qw(SOCK_DGRAM);
use Sys::Hostname qw(hostname);
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time sleep);

my $HOST = lc hostname();          # nginx: gethostname(), lower-cased
my @MON = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);

###########################################################################
# helpers

sub udp_listener {
    my ($port) = @_;
    return IO::Socket::IP->new(Proto => 'udp', LocalHost => '127.0.0.1',
                               LocalPort => $port // 0)
        || die "udp listener: $!\n";
}

# A UDP port nothing listens on, to be bound again later: below the
# kernel's ephemeral range, where the other tests' sockets (bound to port
# 0, or connected: a resolver's) never land, as one did in CI.
sub udp_dead_port {
    for (1 .. 100) {
        my $port = 20000 + int rand 12000;
        my $s = IO::Socket::IP->new(Proto => 'udp', LocalHost => '127.0.0.1',
                                    LocalPort => $port) or next;
        close $s;
        return $port;
    }
    die "no free UDP port below the ephemeral range\n";
}

sub unix_listener {
    my ($path) = @_;
    unlink $path;
    my $s = IO::Socket::UNIX->new(Type => SOCK_DGRAM, Local => $path)
        or die "unix listener $path: $!\n";
    chmod 0666, $path;            # workers run as another user under root
    return $s;
}

# Every datagram a listener has received so far, in order (read now).
my %received;
sub datagrams {
    my ($s) = @_;
    my $sel = IO::Select->new($s);
    while ($sel->can_read(0)) {
        my $buf;
        last unless defined $s->recv($buf, 70000);
        push @{ $received{"$s"} }, $buf;
    }
    return @{ $received{"$s"} // [] };
}

# The first datagram matching $re, waiting up to $secs; undef when none.
sub wait_dgram {
    my ($s, $re, $secs) = @_;
    my $hit;
    Test::Ringx::wait_for(sub { ($hit) = grep { $_ =~ $re } datagrams($s);
                                defined $hit }, $secs // 5);
    return $hit;
}

# The RFC 3164 timestamps ("Jan  2 15:04:05", local time) of every second
# from $from to $to, one second of margin each side.
sub stamps_between {
    my ($from, $to) = @_;
    my %t;
    for my $s (int($from) - 1 .. int($to) + 1) {
        my @lt = localtime $s;
        $t{ sprintf('%s %2d %02d:%02d:%02d', $MON[$lt[4]], $lt[3], $lt[2],
                    $lt[1], $lt[0]) } = 1;
    }
    return \%t;
}

# Splits a datagram into (pri, stamp, rest after the stamp and a space).
sub split_dgram {
    my ($d) = @_;
    return $d =~ /^<(\d{1,3})>([A-Z][a-z]{2} [ 1-3]\d \d\d:\d\d:\d\d) (.*)\z/s;
}

# The line of a log file of $t matching $re (undef when none).
sub file_line {
    my ($t, $file, $re) = @_;
    my ($l) = grep { $_ =~ $re } split /\n/, ($t->read_file($file) // '');
    return $l;
}

# Checks one datagram: PRI, a timestamp of [$t0, now], "HOST TAG: " (or
# "TAG: " for nohostname) and the body equal to the file's line.
sub check_dgram {
    my ($d, $pri, $tag, $host, $body, $t0, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my ($p, $stamp, $rest) = split_dgram($d // '');
    if (!defined $p) {
        fail("$name: a syslog datagram");
        diag(defined $d ? "got: $d" : 'nothing received');
        return;
    }
    is($p, $pri, "$name: PRI <$pri>");
    ok(stamps_between($t0, time)->{$stamp}, "$name: timestamp \"$stamp\" is now")
        or diag("datagram: $d");
    my $head = defined $host ? "$host $tag: " : "$tag: ";
    is(substr($rest, 0, length $head), $head, "$name: header \"$head\"");
    is(substr($rest, length $head), $body, "$name: body equals the file log's line")
        if defined $body;
}

sub get_status {
    my ($t, $path, %o) = @_;
    my $r = $t->http_get($t->port(0), $path, %o) // '';
    return $r =~ m{^HTTP/1\.\d (\d{3})} ? $1 : 'none';
}

sub fd_count {
    my ($pid) = @_;
    opendir(my $dh, "/proc/$pid/fd") or return -1;
    my $n = grep { !/^\./ } readdir $dh;
    closedir $dh;
    return $n;
}

###########################################################################
# error_log and access_log to a UDP and a unix datagram listener

my $t = Test::Ringx->new;
my $prefix = $t->prefix;
my $udp = udp_listener();
my $uport = $udp->sockport;
my $errsock = unix_listener("$prefix/err.sock");
my $accsock = unix_listener("$prefix/acc.sock");
$t->write_file('html/index.html', "index\n");

my $conf = <<'EOF';
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
error_log syslog:server=127.0.0.1:%%UDP%% info;
error_log syslog:server=unix:%%PREFIX%%/err.sock,facility=daemon,severity=debug,tag=web_1,nohostname warn;

events {
    worker_connections 64;
}

http {
    log_format plain '$request_method $request_uri $status';
    access_log logs/access.log plain;
    access_log syslog:server=127.0.0.1:%%UDP%% plain;

    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        root html;

        location /cond/ {
            access_log logs/cond.log plain;
            access_log syslog:server=unix:%%PREFIX%%/acc.sock,facility=local0,severity=notice plain if=$arg_log;
        }

        location /crit/ {
            auth_basic "x";
            auth_basic_user_file %%PREFIX%%/html/index.html/users;
        }
        # %%EXTRA%%
    }
}
EOF
(my $c = $conf) =~ s/%%UDP%%/$uport/g;
$t->write_config($c);
my $t0 = time;
$t->run;
my $master = $t->master_pid;

{
    # the master's notice, local7 (23) * 8 + notice (5)
    my $d = wait_dgram($udp, qr/\[notice\] $master#\d+: start worker process/);
    my ($body) = ($d // '') =~ /ringx: (.*)\z/s;
    my $line = defined $body ? file_line($t, 'logs/error.log', qr/^\Q$body\E$/)
                             : undef;
    check_dgram($d, 189, 'ringx', $HOST, $line, $t0,
                'master notice to UDP, default facility and tag');
}

{
    $t0 = time;
    is(get_status($t, '/missing-1'), 404, 'GET /missing-1: 404');
    my $re = qr/\[error\] .*open\(\) "[^"]*\/missing-1" failed/;
    my $d = wait_dgram($udp, $re);
    my $line = file_line($t, 'logs/error.log', $re);
    ok(defined $line, 'the error is in the file log');
    check_dgram($d, 187, 'ringx', $HOST, $line, $t0, 'error to UDP');

    # daemon (3) * 8 + error (3): severity= does not apply to error_log
    $d = wait_dgram($errsock, $re);
    check_dgram($d, 27, 'web_1', undef, $line, $t0,
                'error to unix socket, nohostname, tag=web_1');

    # access_log: local7 info
    $d = wait_dgram($udp, qr/GET \/missing-1 404\z/);
    $line = file_line($t, 'logs/access.log', qr/^GET \/missing-1 /);
    is($line, 'GET /missing-1 404', 'the access line in the file');
    check_dgram($d, 190, 'ringx', $HOST, $line, $t0, 'access line to UDP');
}

{
    # info: a duplicate Host header
    $t0 = time;
    my $r = $t->http($t->port(0), "GET /dup HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n");
    like($r // '', qr{^HTTP/1\.\d 400}, 'duplicate Host: 400');
    my $re = qr/\[info\] .*client sent duplicate header line: "Host: b"/;
    my $d = wait_dgram($udp, $re);
    check_dgram($d, 190, 'ringx', $HOST, file_line($t, 'logs/error.log', $re),
                $t0, 'info message to UDP');
}

{
    # crit: the user file is under a regular file
    $t->expect_log(qr/\[crit\] .*open\(\) "[^"]*\/index\.html\/users" failed \(20: Not a directory\)/);
    $t0 = time;
    is(get_status($t, '/crit/', host_header => "localhost\r\nAuthorization: Basic YTpi"),
       500, 'unreadable auth_basic_user_file: 500');
    my $re = qr/\[crit\] .*index\.html\/users" failed/;
    my $line = file_line($t, 'logs/error.log', $re);
    check_dgram(wait_dgram($udp, $re), 186, 'ringx', $HOST, $line, $t0,
                'crit message to UDP');
    check_dgram(wait_dgram($errsock, $re), 26, 'web_1', undef, $line, $t0,
                'crit message to the unix socket');
}

{
    # access_log if=: only the line whose condition is true is sent;
    # local0 (16) * 8 + notice (5), and the hostname
    $t0 = time;
    is(get_status($t, "/cond/$_"), 404, "GET /cond/$_: 404")
        for 'a?log=0', 'b', 'c?log=1';
    my $d = wait_dgram($accsock, qr/GET \/cond\/c\?log=1 404\z/);
    check_dgram($d, 133, 'ringx', $HOST, 'GET /cond/c?log=1 404', $t0,
                'if= true: the line is sent');
    is_deeply([ grep { /GET \/cond\/[ab]/ } datagrams($accsock) ], [],
              'if= "0" or empty: nothing sent (and sent in order before c)');
    my @file = grep { /^GET \/cond\// } split /\n/, $t->read_file('logs/cond.log') // '';
    is(scalar @file, 3, 'the file log without if= got all three lines');
}

{
    # a long line: error_log's is cut as the file's line is, access_log's
    # goes whole in one datagram
    my $long = '/long-' . ('x' x 6000);
    is(get_status($t, $long), 404, 'GET of a 6000-byte URI: 404');
    my $re = qr/\[error\] .*open\(\) "[^"]*\/long-xxxx/;
    my $line = file_line($t, 'logs/error.log', $re);
    ok(defined $line && length($line) < 2048, 'the file line is cut below 2048 bytes');
    my $d = wait_dgram($udp, $re);
    my ($body) = ($d // '') =~ /ringx: (.*)\z/s;
    is($body, $line, 'the syslog body is cut as the file line is');
    $d = wait_dgram($udp, qr/GET \/long-x+ 404\z/);
    is(length($d // ''), length("<190>Jan  1 00:00:00 $HOST ringx: GET $long 404"),
       'the 6000-byte access line is one whole datagram');
}

{
    # reload: the master's warning while loading goes through the running
    # targets (local7 warn: 188; daemon warn: 28); the new workers send
    # too; a freed configuration leaves no socket open in the master
    my ($old) = $t->wait_workers(1);
    (my $c2 = $conf) =~ s/%%UDP%%/$uport/g;
    $c2 =~ s{# %%EXTRA%%}{location /w/ { allow 127.0.0.1/8; }};
    $t->write_config($c2);
    $t0 = time;
    $t->signal('HUP');
    my ($new) = $t->wait_workers(1, not => [$old]);
    ok($new, 'reload: a new worker');
    my $re = qr/\[warn\] $master#\d+: low address bits of 127\.0\.0\.1\/8 are meaningless/;
    my $line = file_line($t, 'logs/error.log', $re);
    check_dgram(wait_dgram($udp, $re), 188, 'ringx', $HOST, $line, $t0,
                'reload: the master\'s warning to UDP');
    check_dgram(wait_dgram($errsock, $re), 28, 'web_1', undef, $line, $t0,
                'reload: the master\'s warning to the unix socket');

    # a request right after a reload can stall in the listen queue (seen
    # on main without syslog too, reported apart): up to three tries
    my $st = 'none';
    for my $try (1 .. 3) {
        $st = get_status($t, '/missing-2', timeout => 2);
        last if $st ne 'none';
    }
    is($st, 404, 'after reload: GET /missing-2');
    ok(wait_dgram($udp, qr/\[error\] $new#\d+: \*\d+ open\(\) "[^"]*\/missing-2"/),
       'after reload: the new worker\'s error reaches UDP');
    ok(wait_dgram($udp, qr/ringx: GET \/missing-2 404\z/),
       'after reload: the new worker\'s access line reaches UDP');

    my $fds = fd_count($master);
    my $w = $new;
    for my $i (1 .. 3) {
        $t->signal('HUP');
        ($w) = $t->wait_workers(1, not => [$w]);
        wait_dgram($udp, qr/\[notice\] $master#\d+: start worker process $w\b/);
    }
    is(fd_count($master), $fds, 'three more reloads: the master holds as many fds');
}

{
    # nothing sent below a target's level: the unix target is at warn
    is_deeply([ grep { /\[(?:notice|info)\]/ } datagrams($errsock) ], [],
              'the warn-level target got no notice or info message');
}

$t->stop;

###########################################################################
# the syslog server is down, then back

{
    my $d = Test::Ringx->new;
    my $dead = udp_dead_port();                 # nothing listens there now
    (my $dc = <<'EOF') =~ s/%%UDP%%/$dead/g;
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
error_log syslog:server=127.0.0.1:%%UDP%%;
error_log syslog:server=unix:%%PREFIX%%/gone.sock;

events {
    worker_connections 64;
}

http {
    log_format plain '$request_method $request_uri $status';
    access_log logs/access.log plain;
    access_log syslog:server=127.0.0.1:%%UDP%% plain;
    access_log syslog:server=unix:%%PREFIX%%/gone.sock plain;

    server {
        listen 127.0.0.1:%%PORT_0%%;
        root html;
    }
}
EOF
    $d->write_config($dc);
    $d->expect_log(qr/\[alert\] \d+#\d+: connect\(\) failed \(2: No such file or directory\) while logging to syslog, server: unix:\S+\/gone\.sock$/);
    $d->run;
    my ($w) = $d->wait_workers(1);
    my $t1 = time;
    my @st = map { get_status($d, "/down-$_") } 1 .. 20;
    is_deeply(\@st, [ (404) x 20 ], '20 requests served while syslog is down');
    my $secs = time - $t1;
    is(($d->wait_workers(1))[0], $w, 'the worker is still the same');
    my $gone = $d->prefix . '/gone.sock';
    my @c = $d->log_contains(qr/\[alert\] $w#\d+: connect\(\) failed \(2: No such file or directory\) while logging to syslog, server: unix:\Q$gone\E$/);
    ok(@c >= 1, 'missing unix socket: connect() failed, with the server');
    # two peers (error_log's and access_log's) name that socket
    ok(@c <= 2 * (2 + int($secs)), 'reported at most once a second per peer')
        or diag(scalar(@c) . " lines in $secs s");
    ok($d->log_contains(qr/\[error\] $w#\d+: send\(\) failed \(111: Connection refused\) while logging to syslog, server: 127\.0\.0\.1:$dead$/),
       'closed UDP port: send() failed (111: Connection refused), with the server');
    ok($d->log_contains(qr/\[warn\] $w#\d+: \*\d+ send\(\) to syslog failed/),
       'the access log reports its failed send');
    ok(!$d->log_contains(qr/logging to syslog.*logging to syslog/),
       'no failure about a failure');

    # back: the sockets are connected again (a UDP error of an earlier
    # datagram may still eat one send, so up to 10 requests)
    my $u = udp_listener($dead);
    my $s = unix_listener($gone);
    my ($gu, $gs);
    for my $i (1 .. 10) {
        get_status($d, "/back-$i");
        $gu //= wait_dgram($u, qr/ringx: GET \/back-\d+ 404\z/, 0.5);
        $gs //= wait_dgram($s, qr/ringx: GET \/back-\d+ 404\z/, 0.5);
        last if $gu && $gs;
    }
    ok($gu, 'UDP server back: access lines arrive again');
    ok($gs, 'unix socket back: access lines arrive again');
    ok(wait_dgram($s, qr/\[error\] .*open\(\) "[^"]*\/back-\d+" failed/),
       'unix socket back: error lines arrive again');
    $d->stop;
}

###########################################################################
# a receiver that never reads: the worker does not block on a full queue

{
    my $b = Test::Ringx->new;
    my $full = $b->prefix . '/full.sock';
    my $s = unix_listener($full);
    $b->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
error_log syslog:server=unix:%%PREFIX%%/full.sock;

events {
    worker_connections 64;
}

http {
    access_log syslog:server=unix:%%PREFIX%%/full.sock;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root html;
    }
}
EOF
    $b->run;
    # the kernel queues few datagrams for a unix socket (max_dgram_qlen,
    # 10 by default): a blocking send() would stop the worker long before
    # the end; each request sends two (its error and its access line)
    my $qlen = 10;
    if (open(my $fh, '<', '/proc/sys/net/unix/max_dgram_qlen')) {
        $qlen = 0 + (<$fh> // 10);
    }
    my $nreq = int($qlen / 2) + 30;
    my @st = map { get_status($b, "/q-$_", timeout => 3) } 1 .. $nreq;
    is_deeply(\@st, [ (404) x $nreq ], "$nreq requests served, the receiver reading none");
    ok($b->log_contains(qr/\[warn\] .*send\(\) to syslog failed/),
       'the dropped lines are reported');
    my $n = () = datagrams($s);
    ok($n > 0 && $n < 2 * $nreq, "the queue took $n datagrams, the rest was dropped");
    is(get_status($b, '/q-after'), 404, 'the receiver read its queue: GET /q-after');
    ok(wait_dgram($s, qr/GET \/q-after HTTP/),
       'the next line is sent on the same socket');
    $b->stop;
}

###########################################################################
# syslog error logs only: the default file is kept, as nginx does

{
    my $o = Test::Ringx->new;
    my $u = udp_listener();
    (my $oc = <<'EOF') =~ s/%%UDP%%/$u->sockport/ge;
daemon off;
master_process on;
worker_processes 1;
error_log syslog:server=127.0.0.1:%%UDP%%,tag=only;

events {
    worker_connections 64;
}

http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root html;
    }
}
EOF
    $o->write_config($oc);
    $o->run;
    is(get_status($o, '/only-1'), 404, 'syslog-only error_log: GET /only-1');
    my $re = qr/\[error\] .*open\(\) "[^"]*\/only-1" failed/;
    ok(wait_dgram($u, $re), 'the error reaches syslog');
    ok($o->wait_for(sub { $o->log_contains($re, 'logs/error.log') }),
       'and the default logs/error.log');
    $o->stop;
}

###########################################################################
# -t: errors with nginx's words, file:line; a good configuration passes

{
    my $e = Test::Ringx->new;
    my $file = $e->conf_file;
    my $head = "events { worker_connections 64; }\n";
    my $tail = "http {\n    server { listen 127.0.0.1:%%PORT_0%%; }\n}\n";
    my $long = 'a' x 33;
    my @cases = (
        [ "error_log syslog:server=127.0.0.1,x;\n", 2,
          'unknown syslog parameter "x"' ],
        [ "error_log syslog:server=127.0.0.1,nohostnames;\n", 2,
          'unknown syslog parameter "nohostnames"' ],
        [ "error_log syslog:;\n", 2, 'unknown syslog parameter ""' ],
        [ "error_log syslog:server=127.0.0.1,facility=x;\n", 2,
          'unknown syslog facility "x"' ],
        [ "error_log syslog:server=127.0.0.1,severity=err;\n", 2,
          'unknown syslog severity "err"' ],
        [ "error_log syslog:facility=local0,tag=a;\n", 2,
          'no syslog server specified' ],
        [ "error_log syslog:server=127.0.0.1,server=127.0.0.2;\n", 2,
          'duplicate syslog "server"' ],
        [ "error_log syslog:server=127.0.0.1,facility=user,facility=mail;\n", 2,
          'duplicate syslog "facility"' ],
        [ "error_log syslog:server=127.0.0.1,tag=a-b;\n", 2,
          'syslog "tag" only allows alphanumeric characters and underscore' ],
        [ "error_log syslog:server=127.0.0.1,tag=$long;\n", 2,
          'syslog tag length exceeds 32' ],
        [ "error_log syslog:server=127.0.0.1:99999;\n", 2,
          'invalid port in syslog server "127.0.0.1:99999"' ],
        [ "error_log syslog:server=nosuch.invalid;\n", 2,
          'host not found in syslog server "nosuch.invalid"' ],
        [ "error_log syslog:server=127.0.0.1 loud;\n", 2,
          'invalid log level "loud", it must be one of debug, info, notice, '
          . 'warn, error, crit, alert, emerg' ],
        [ "http {\n    access_log syslog:server=127.0.0.1 combined buffer=4k;\n}\n", 3,
          'logs to syslog cannot be buffered' ],
        [ "http {\n    access_log syslog:server=127.0.0.1 combined flush=1s;\n}\n", 3,
          'no buffer is defined for access_log "syslog:server=127.0.0.1"' ],
        [ "http {\n    access_log syslog:server=127.0.0.1,severity=x;\n}\n", 3,
          'unknown syslog severity "x"' ],
        [ "http {\n    server {\n        error_log syslog:server=127.0.0.1,x=1;\n    }\n}\n", 4,
          'unknown syslog parameter "x=1"' ],
    );
    for my $case (@cases) {
        my ($body, $line, $msg) = @$case;
        $e->write_config($head . $body . ($body =~ /^http/ ? '' : $tail));
        my ($rc, $out, $err) = $e->ringx('-t');
        isnt($rc, 0, "-t fails: $msg");
        like($err, qr/\[emerg\] \Q$msg\E in \Q$file\E:$line$/m, "-t: $msg, file:line")
            or diag($err);
    }

    $e->write_config(<<'EOF');
error_log syslog:server=unix:/nonexistent/dev/log,facility=local0,severity=info,tag=Ab_9,nohostname info;
error_log syslog:server=localhost;
error_log logs/error.log;
events { worker_connections 64; }
http {
    access_log syslog:server=[::1]:5514 combined if=$arg_x;
    access_log syslog:server=127.0.0.1:514,facility=kern,severity=emerg;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        error_log syslog:server=127.0.0.1 debug;
        location / { access_log syslog:server=127.0.0.1,nohostname; }
    }
}
EOF
    my ($rc, $out, $err) = $e->ringx('-t');
    is($rc, 0, 'every syslog parameter: -t passes (nothing is connected)')
        or diag($err);
}

done_testing;
