#!/usr/bin/perl
# http_first_recv.t: a plain connection's first receive is a single one,
# every later one multishot (event/conn.c, rx_conn_arm_recv): a request
# that comes whole and closes its connection leaves nothing armed, so the
# close needs no cancel. Counted by the entries the worker submits
# (strace: what each io_uring_enter returns): a connection per request
# costs its receive and its close (2), where a standing receive cost a
# cancel more (3); a keepalive connection gets its standing receive once,
# not a receive per request. And every way a request can come still
# works: cut after its first read (the standing receive is armed at the
# end of the turn), a body that follows its head late, pipelined
# requests in the first read, a client that closes at once, a PROXY
# protocol header; on both event backends.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use IO::Socket::INET;
use Time::HiRes qw(sleep);
use Test::Upstream;

my $N = 40;

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
my $CONF = <<"EOF";
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; use %%EVENTS%%; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen 127.0.0.1:%%PORT_1%% proxy_protocol;
        location = /hello { return 200 "hello\n"; }
        location = /echo { proxy_pass http://$UP; }
        location = /ip { return 200 "\$proxy_protocol_addr\n"; }
    }
}
EOF

sub conn {
    my ($port) = @_;
    return IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5);
}

# Sends the pieces with a pause between them, then reads to EOF.
sub exchange {
    my ($port, @pieces) = @_;
    my $s = conn($port) or return '';
    my $resp = '';
    local $SIG{ALRM} = sub { die "timeout\n" };
    my $ok = eval {
        alarm 10;
        for my $i (0 .. $#pieces) {
            $s->syswrite($pieces[$i]);
            sleep 0.2 if $i < $#pieces;
        }
        while (1) {
            my $n = $s->sysread(my $buf, 16384);
            last if !$n;
            $resp .= $buf;
        }
        alarm 0;
        1;
    };
    alarm 0;
    close $s;
    return $ok ? $resp : "$resp(timed out)";
}

sub bodies { my ($r) = @_; join '|', $r =~ /\r\n\r\n([^\r]*?\n)(?=HTTP\/|\z)/g }

# What the worker submitted to the ring while $code ran: the sum of what
# its io_uring_enter calls returned (undef when strace could not attach).
sub submitted_during {
    my ($w, $url, $code) = @_;
    my ($got, $calls, $text) = $t->syscalls_during($w, $url, $code);
    return ($got, undef) unless %$calls;
    my $sqes = 0;
    $sqes += $1 while $text =~ /^io_uring_enter\(.*\) = (\d+)$/mg;
    return ($got, $sqes);
}

for my $events ('io_uring', 'epoll') {
    (my $conf = $CONF) =~ s/%%EVENTS%%/$events/;
    $t->write_config($conf);
    $t->run;
    my $P = $t->port(0);
    my $PP = $t->port(1);
    my ($w) = $t->worker_pids;

    # a head cut after its first read: the rest comes by the standing
    # receive armed at the end of that turn
    like(exchange($P, "GET /hel", "lo HTTP/1.1\r\nHost: x\r\n",
                  "Connection: close\r\n\r\n"),
         qr/^HTTP\/1\.1 200 .*\r\n\r\nhello\n\z/s,
         "$events: a request cut in three, on a new connection");
    # a body that follows its head late
    like(exchange($P, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10"
                  . "\r\nConnection: close\r\n\r\n", "0123", "456789"),
         qr/^body-length: 10$/m,
         "$events: a body in two pieces after its head");
    is(($up->requests)[-1]{body}, '0123456789', '... whole at the upstream');
    # pipelined in the first read: both answered, then the close
    my $r = exchange($P, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
                     . "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close"
                     . "\r\n\r\n");
    is(bodies($r), "hello\n|hello\n",
       "$events: two pipelined requests in the first read");
    # a keepalive request, then one more after a pause (the standing
    # receive), then the close
    is(bodies(exchange($P, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n",
                       "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n",
                       "GET /hello HTTP/1.1\r\nHost: x\r\n"
                       . "Connection: close\r\n\r\n")),
       "hello\n|hello\n|hello\n",
       "$events: three requests on one connection, a pause between each");
    # a client that connects and closes at once, and one that half-closes
    # after its request
    {
        my $s = conn($P);
        close $s if $s;
        my $h = conn($P);
        $h->syswrite("GET /hello HTTP/1.0\r\n\r\n");
        shutdown($h, 1);
        local $/;
        my $got = <$h> // '';
        like($got, qr/\r\n\r\nhello\n\z/, "$events: a request then a half "
             . 'close: answered');
    }
    # a PROXY protocol header in the first read, and one cut from its
    # request
    like(exchange($PP, "PROXY TCP4 192.0.2.7 127.0.0.1 5000 80\r\n"
                  . "GET /ip HTTP/1.0\r\n\r\n"),
         qr/\r\n\r\n192\.0\.2\.7\n\z/s, "$events: PROXY header and request "
         . 'in one read');
    like(exchange($PP, "PROXY TCP4 192.0.2.8 127.0.0.1 5000 80\r\n",
                  "GET /ip HTTP/1.0\r\n\r\n"),
         qr/\r\n\r\n192\.0\.2\.8\n\z/s, "$events: PROXY header, then the "
         . 'request');

    SKIP: {
        skip 'the entries counted are the io_uring backend\'s', 3
            if $events ne 'io_uring';
        skip 'no strace here (apt-get install strace)', 3
            if system('strace -V >/dev/null 2>&1') != 0;
        skip 'the kernel refused io_uring: the worker runs epoll', 3
            if $t->log_contains(qr/uses epoll instead/);

        my $url = "http://127.0.0.1:$P/hello";
        my ($got, $sqes) = submitted_during($w, $url, sub {
            `curl -s --max-time 30 -H 'Connection: close' ${\ join ' ', ($url) x $N}`;
        });
        skip 'strace could not attach to the worker (ptrace refused)', 3
            unless defined $sqes;
        is($got, "hello\n" x $N, "$N requests, a connection each, answered");
        # strace's first request (its connection) is counted too
        cmp_ok($sqes, '<', 2.5 * ($N + 1),
               'a connection per request: its receive and its close, no '
               . "cancel ($sqes entries for " . ($N + 1) . ')');

        ($got, $sqes) = submitted_during($w, $url, sub {
            `curl -s --max-time 30 ${\ join ' ', ($url) x $N}`;
        });
        # curl's keepalive connection: its first receive, the standing
        # one, its close; strace's own connection: two or three
        cmp_ok($sqes // 0, '<=', 8,
               "$N requests on one keepalive connection: one standing "
               . "receive, not one a request ($sqes entries)");
    }
    $t->stop;
}

$up->stop;
done_testing;
