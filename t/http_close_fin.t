#!/usr/bin/perl
# http_close_fin.t: a response that ends its connection (Connection: close)
# has its last send made at once with its FIN queued behind it (event/conn.c,
# rx_conn_send_last: sendmsg MSG_MORE, shutdown SHUT_WR): the FIN rides on the last segment, as nginx's does
# (its TCP_CORK is still on when it closes), and nothing is lost. Counted
# by the client's own socket (TCP_INFO tcpi_segs_in: the SYN-ACK, the ACK
# of the request, then the response with the FIN = 3; a FIN in a segment
# of its own makes 4). The epoll backend sends as before (bytes checked).
# Every byte of a large response to a slow reader, a lingering close (an
# unread body, a pipelined request) still answered, the logs' addresses
# on a wildcard listener after the socket is gone, a client that resets
# during the last send (the ring's send fails: the slot is freed), and
# keep-alive untouched.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use IO::Socket::INET;
use Socket qw(IPPROTO_TCP TCP_INFO SOL_SOCKET SO_LINGER SO_RCVBUF);

delete $ENV{RINGX_EVENTS};

my $N = 10;
my $BODY = '0' x 30;
my $BIG = join('', map { sprintf "%07d\n", $_ } 1 .. 40000);     # 320 KB
my $MID = 'm' x 100000;      # one send from memory, more than the window
my $HUGE = join('', map { sprintf "%015d\n", $_ } 1 .. 400000);  # 6.4 MB

my $t = Test::Ringx->new;
my $CONF = <<'EOF';
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; use %%EVENTS%%; }
http {
    log_format addrs '$remote_addr $server_addr $status $bytes_sent';
    access_log logs/addrs.log addrs;
    default_type application/octet-stream;
    server {
        listen %%PORT_0%%;
        listen 127.0.0.1:%%PORT_1%% sndbuf=8192;
        root html;
        location /bigmem/ { alias html/; sendfile off; }
        location = /status { stub_status; access_log off; }
    }
}
EOF
$t->write_file('html/small.txt', $BODY);
$t->write_file('html/big.txt', $BIG);
$t->write_file('html/huge.txt', $HUGE);
$t->write_file('html/mid.txt', $MID);

sub conn {
    my ($port) = @_;
    return IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port", Timeout => 5);
}

# Reads to EOF, after a pause and slowly at first when $slow; returns
# (response, segs_in).
sub read_all {
    my ($s, $slow) = @_;
    my $resp = '';
    local $SIG{ALRM} = sub { die "timeout\n" };
    alarm 30;
    select(undef, undef, undef, $slow) if $slow;
    my $reads = 0;
    while (1) {
        my $n = $s->sysread(my $buf, 16384);
        last if !$n;
        $resp .= $buf;
        select(undef, undef, undef, 0.02) if $slow && ++$reads < 20;
    }
    alarm 0;
    my $info = getsockopt($s, IPPROTO_TCP, TCP_INFO);
    close $s;
    # struct tcp_info: tcpi_segs_in is the u32 at byte 140 (Linux >= 4.2)
    my $segs = defined $info && length($info) >= 144
               ? unpack('L', substr($info, 140, 4)) : undef;
    return ($resp, $segs);
}

sub one {
    my ($port, $req, $slow) = @_;
    my $s = conn($port) or return;
    if ($slow) {
        # a small receive window: the server's sends wait on the client
        setsockopt($s, SOL_SOCKET, SO_RCVBUF, pack('i', 16384));
    }
    $s->syswrite($req);
    return read_all($s, $slow);
}

sub body_of { my ($r) = @_; defined $r && $r =~ /\r\n\r\n(.*)\z/s ? $1 : '' }

sub active {
    my ($port) = @_;
    my ($r) = one($port, "GET /status HTTP/1.0\r\n\r\n");
    return ($r // '') =~ /Active connections: (\d+)/ ? $1 : -1;
}

for my $events ('io_uring', 'epoll') {
    (my $conf = $CONF) =~ s/%%EVENTS%%/$events/;
    $t->write_config($conf);
    $t->run;
    my $port = $t->port(0);

    my ($alone, $bad) = (0, 0);
    for (1 .. $N) {
        my ($resp, $segs) = one($port, "GET /small.txt HTTP/1.1\r\n"
                                . "Host: x\r\nConnection: close\r\n\r\n");
        $bad++ if body_of($resp) ne $BODY;
        $alone++ if !defined $segs || $segs > 3;
    }
    is($bad, 0, "$events: $N responses with Connection: close, whole");
    if ($events eq 'io_uring') {
        # a loaded machine may retransmit now and then: most, not all
        cmp_ok($alone, '<=', 2, "$events: the FIN rode on the response's "
               . "segment ($alone of $N connections got it alone)");
    }

    my ($resp) = one($port, "GET /small.txt HTTP/1.0\r\n\r\n");
    is(body_of($resp), $BODY, "$events: HTTP/1.0 without keep-alive");

    for my $uri ('/big.txt', '/bigmem/big.txt') {
        ($resp) = one($port, "GET $uri HTTP/1.1\r\nHost: x\r\n"
                      . "Connection: close\r\n\r\n");
        ok(body_of($resp) eq $BIG,
           "$events: $uri (320 KB) with Connection: close, every byte");
    }
    # from memory: the socket takes part of the last send, the ring's send
    # the rest, to a client that reads slowly through a small window
    for my $uri ('/bigmem/huge.txt', '/huge.txt') {
        ($resp) = one($port, "GET $uri HTTP/1.1\r\nHost: x\r\n"
                      . "Connection: close\r\n\r\n", 0.5);
        my $got = body_of($resp);
        ok($got eq $HUGE, "$events: $uri (6.4 MB) to a slow reader with "
           . "Connection: close, every byte (" . length($got) . ")");
    }

    # a body left unread: a lingering close (shutdown first, then drain)
    ($resp) = one($port, "POST /small.txt HTTP/1.1\r\nHost: x\r\n"
                  . "Connection: close\r\nContent-Length: 5\r\n\r\nabcde");
    like($resp // '', qr{^HTTP/1\.1 405 }, "$events: unread body: the "
         . "response arrives");
    # a request pipelined behind the one that closes: answered, not reset
    my $req = "GET /bigmem/big.txt HTTP/1.1\r\nHost: x\r\n"
              . "Connection: close\r\n\r\n";
    ($resp) = one($port, $req x 2);
    ok(body_of($resp) eq $BIG, "$events: a pipelined request behind "
       . "Connection: close: the first response whole");

    # the client resets while the last send (the whole response here)
    # waits: the ring's send of the rest fails, and the connection closes
    # as before: its slot is freed
    my $s = conn($t->port(1));
    setsockopt($s, SOL_SOCKET, SO_RCVBUF, pack('i', 4096));
    $s->syswrite("GET /bigmem/mid.txt HTTP/1.1\r\nHost: x\r\n"
                 . "Connection: close\r\n\r\n");
    $s->sysread(my $buf, 4096);
    select(undef, undef, undef, 0.3);
    setsockopt($s, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
    close $s;
    ok(Test::Ringx::wait_for(sub { active($port) == 1 }, 10),
       "$events: a client reset during the response: its connection freed");

    # keepalive: each response goes at once, the connection stays
    $s = conn($port);
    my $got = '';
    for my $i (1 .. 2) {
        $s->syswrite("GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n");
        my $deadline = time + 10;
        while ((() = $got =~ /\Q$BODY\E/g) < $i && time < $deadline) {
            my $rin = '';
            vec($rin, fileno($s), 1) = 1;
            next if !select($rin, undef, undef, 0.5);
            last if !$s->sysread(my $b, 65536);
            $got .= $b;
        }
    }
    is(scalar(() = $got =~ /\Q$BODY\E/g), 2,
       "$events: keepalive: both responses, the connection open");
    close $s;

    $t->stop;
    # a wildcard listener: the local address logged after the socket went
    # with its last send is the one the client reached
    my $log = $t->read_file('logs/addrs.log') // '';
    my @lines = grep { / 200 / } split /\n/, $log;
    my @wrong = grep { !/^127\.0\.0\.1 127\.0\.0\.1 200 \d+$/ } @lines;
    ok(@lines >= $N && !@wrong, "$events: \$remote_addr \$server_addr "
       . "logged (" . scalar(@lines) . " lines, " . scalar(@wrong)
       . " wrong: " . ($wrong[0] // '') . ")");
    $t->write_file('logs/addrs.log', '');
}

done_testing;
