#!/usr/bin/perl
# http_send_end.t: the last send of a response on a connection that stays
# open (event/conn.c, rx_conn_send_end). Under a light load (the loop turn
# began with at most two completions) it is made at once with sendmsg on
# the worker's thread, which spares an io_uring_enter; under load it goes
# through the ring with the turn's other sends. Seen by strace on the
# worker: one client's keepalive responses each went by sendmsg on its
# socket; eight requests completed in one turn (the worker stopped while
# they came) were answered through the ring, none by sendmsg. Routes that
# must lose nothing: a 6.4 MB response from one memory buffer to a slow
# reader (the socket takes part at once, the ring the rest; the next
# request on the connection answered; $bytes_sent whole), pipelined
# requests answered in order, a proxied one among them. The epoll backend
# (whose sends are all made at once) answers the same routes whole.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Socket qw(SOL_SOCKET SO_RCVBUF);

delete $ENV{RINGX_EVENTS};

my $BODY = "0123456789abcdef\n";
my $ONE = "one at a time\n";
my $BURST = "eight in a turn\n";
my $HUGE = join('', map { sprintf "%015d\n", $_ } 1 .. 400000);  # 6.4 MB

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $CONF = <<"EOF";
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; use %%EVENTS%%; }
http {
    log_format sent '\$request_uri \$status \$bytes_sent';
    access_log logs/sent.log sent;
    default_type application/octet-stream;
    keepalive_requests 10000;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root html;
        location ~ ^/(small|one|burst)\.txt\$ { }
        # one buffer for the whole file: the last send is all of it
        location /onebuf/ { alias html/; sendfile off; output_buffers 1 8m; }
        location /up/ { proxy_pass http://$UP/; }
    }
}
EOF

sub req { "GET $_[0] HTTP/1.1\r\nHost: localhost\r\n\r\n" }

# sendmsg calls of the strace text that carry a response with this body
sub sends_of {
    my ($text, $body) = @_;
    (my $shown = $body) =~ s/\n/\\n/g;
    return scalar grep { /^sendmsg\(\d+, .*"HTTP\/1\.1 200 .*"\Q$shown\E"/ }
                       split /\n/, $text;
}

for my $events ('io_uring', 'epoll') {
    my $t = Test::Ringx->new;
    (my $conf = $CONF) =~ s/%%EVENTS%%/$events/;
    $t->write_config($conf);
    $t->write_file('html/small.txt', $BODY);
    $t->write_file('html/one.txt', $ONE);
    $t->write_file('html/burst.txt', $BURST);
    $t->write_file('html/huge.txt', $HUGE);
    $t->run;
    my $P = $t->port(0);
    my ($w) = $t->worker_pids;
    my $ring = $events eq 'io_uring'
               && !$t->log_contains(qr/uses epoll instead/);

    # the direct send is the io_uring backend's (epoll's sends are made at
    # once anyway); strace shows it
    SKIP: {
        last SKIP if $events ne 'io_uring';
        skip 'the kernel refused io_uring: the worker runs epoll', 4
            unless $ring;
        skip 'no strace here (apt-get install strace)', 4
            if system('strace -V >/dev/null 2>&1') != 0;

        # one client, one request at a time: each response by sendmsg
        my $c = $t->raw($P);
        my $whole = 0;
        my (undef, undef, $text) = $t->syscalls_during($w,
            "http://127.0.0.1:$P/small.txt", sub {
                for my $i (1 .. 5) {
                    $c->send(req("/one.txt?$i"));
                    my $r = $c->read_response(timeout => 10);
                    $whole++ if $r && $r->{status} == 200
                                && $r->{body} eq $ONE;
                }
            });
        is $whole, 5, "$events: five keepalive responses, whole";
        is sends_of($text, $ONE), 5,
            "$events: each sent at once (sendmsg), not through the ring"
            or diag $text;

        # eight requests complete in one turn: the worker is stopped while
        # they come, so its next turn begins with their receives
        my @c = map { $t->raw($P) } 1 .. 8;
        $_->send(req('/small.txt?warm')) for @c;      # connections accepted
        $_->read_response(timeout => 10) for @c;
        my $n = 0;
        (undef, undef, $text) = $t->syscalls_during($w,
            "http://127.0.0.1:$P/small.txt", sub {
                kill 'STOP', $w;
                $_->send(req('/burst.txt')) for @c;
                select(undef, undef, undef, 0.3);
                kill 'CONT', $w;
                for my $c (@c) {
                    my $r = $c->read_response(timeout => 10);
                    $n++ if $r && $r->{status} == 200 && $r->{body} eq $BURST;
                }
            });
        is $n, 8, "$events: eight requests in one turn, answered";
        # the first may complete alone, as the worker stops (a turn of one)
        cmp_ok sends_of($text, $BURST), '<=', 1,
            "$events: a turn of eight completions sends through the ring"
            or diag $text;
    }

    # a response from one 6.4 MB buffer to a slow reader: part sent at once,
    # the rest by the ring; the connection goes on
    my $c = $t->raw($P);
    setsockopt($c->sock, SOL_SOCKET, SO_RCVBUF, pack('i', 16384));
    $c->send(req('/onebuf/huge.txt'));
    select(undef, undef, undef, 0.5);
    my $r = $c->read_response(timeout => 30);
    ok $r && $r->{body} eq $HUGE, "$events: 6.4 MB from one buffer to a "
        . "slow reader, every byte (" . length($r ? $r->{body} : '') . ")";
    $c->send(req('/small.txt?after'));
    $r = $c->read_response(timeout => 10);
    is $r && $r->{body}, $BODY, "$events: the next request on that connection";

    # pipelined: three in one write, answered in order
    $c->send(req('/small.txt?p1') . req('/up/echo?p2') . req('/small.txt?p3'));
    my @got = map { $c->read_response(timeout => 10) } 1 .. 3;
    is $got[0] && $got[0]{body}, $BODY, "$events: pipelined, the first";
    like $got[1] && $got[1]{body}, qr{^uri: /echo\?p2$}m,
        "$events: pipelined, the second (proxied)";
    is $got[2] && $got[2]{body}, $BODY, "$events: pipelined, the third";
    $c->close;

    $t->stop;
    my $log = $t->read_file('logs/sent.log') // '';
    my ($sent) = $log =~ m{^/onebuf/huge\.txt 200 (\d+)$}m;
    ok defined $sent && $sent > length($HUGE) && $sent < length($HUGE) + 512,
        "$events: \$bytes_sent counts what went at once and by the ring ("
        . ($sent // 'none') . ")";
}

$up->stop;
done_testing;
