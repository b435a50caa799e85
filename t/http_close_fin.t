#!/usr/bin/perl
# http_close_fin.t: a response that ends its connection (Connection: close)
# is sent so that the FIN rides on its last segment, as nginx's does (its
# TCP_CORK is still on when it closes): the client receives one segment
# fewer. Counted by the client's own socket (TCP_INFO tcpi_segs_in: the
# SYN-ACK, the ACK of the request, then the response with the FIN = 3;
# a FIN in a segment of its own makes 4). With both event backends; the
# bytes are all there (from memory and by sendfile), through a lingering close,
# and on a keepalive connection nothing is held back.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use IO::Socket::INET;
use Socket qw(IPPROTO_TCP TCP_INFO);

delete $ENV{RINGX_EVENTS};

my $N = 10;
my $BODY = '0' x 30;
my $BIG = join('', map { sprintf "%07d\n", $_ } 1 .. 40000);   # 320 KB

my $t = Test::Ringx->new;
my $CONF = <<'EOF';
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; use %%EVENTS%%; }
http {
    access_log off;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root html;
        location /bigmem/ { alias html/; sendfile off; }
    }
}
EOF
$t->write_file('html/small.txt', $BODY);
$t->write_file('html/big.txt', $BIG);

# One request on a connection of its own; returns (response, segs_in).
sub one {
    my ($port, $req) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port",
                                  Timeout => 5) or return;
    $s->syswrite($req);
    my $resp = '';
    local $SIG{ALRM} = sub { die "timeout\n" };
    alarm 10;
    while (1) {
        my $n = $s->sysread(my $buf, 65536);
        last if !$n;
        $resp .= $buf;
    }
    alarm 0;
    my $info = getsockopt($s, IPPROTO_TCP, TCP_INFO);
    close $s;
    # struct tcp_info: tcpi_segs_in is the u32 at byte 140 (Linux >= 4.2)
    my $segs = defined $info && length($info) >= 144
               ? unpack('L', substr($info, 140, 4)) : undef;
    return ($resp, $segs);
}

sub body_of { my ($r) = @_; $r =~ /\r\n\r\n(.*)\z/s ? $1 : undef }

for my $events ('io_uring', 'epoll') {
    (my $conf = $CONF) =~ s/%%EVENTS%%/$events/;
    $t->write_config($conf);
    $t->run;
    my $port = $t->port(0);

    my ($alone, $bad) = (0, 0);
    for (1 .. $N) {
        my ($resp, $segs) = one($port, "GET /small.txt HTTP/1.1\r\n"
                                . "Host: x\r\nConnection: close\r\n\r\n");
        $bad++ if !defined $resp || body_of($resp) ne $BODY;
        $alone++ if !defined $segs || $segs > 3;
    }
    is($bad, 0, "$events: $N responses with Connection: close, whole");
    # a loaded machine may retransmit now and then: most, not all
    cmp_ok($alone, '<=', 2, "$events: the FIN rode on the response's "
           . "segment ($alone of $N connections got it alone)");

    my ($resp) = one($port, "GET /small.txt HTTP/1.0\r\n\r\n");
    is(body_of($resp), $BODY, "$events: HTTP/1.0 without keep-alive");

    for my $uri ('/big.txt', '/bigmem/big.txt') {
        ($resp) = one($port, "GET $uri HTTP/1.1\r\nHost: x\r\n"
                      . "Connection: close\r\n\r\n");
        ok(defined $resp && body_of($resp) eq $BIG,
           "$events: $uri (320 KB) with Connection: close, every byte");
    }

    # a body left unread: a lingering close (shutdown first, then drain)
    ($resp) = one($port, "POST /small.txt HTTP/1.1\r\nHost: x\r\n"
                  . "Connection: close\r\nContent-Length: 5\r\n\r\nabcde");
    like($resp // '', qr{^HTTP/1\.1 405 }, "$events: lingering close: the "
         . "response arrives");

    # keepalive: each response goes at once, the connection stays
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port",
                                  Timeout => 5);
    my $got = '';
    for my $i (1 .. 2) {
        $s->syswrite("GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n");
        my $deadline = time + 10;
        while ((() = $got =~ /\Q$BODY\E/g) < $i && time < $deadline) {
            my $rin = '';
            vec($rin, fileno($s), 1) = 1;
            next if !select($rin, undef, undef, 0.5);
            last if !$s->sysread(my $buf, 65536);
            $got .= $buf;
        }
    }
    is(scalar(() = $got =~ /\Q$BODY\E/g), 2,
       "$events: keepalive: both responses, the connection open");
    close $s;

    $t->stop;
}

done_testing;
