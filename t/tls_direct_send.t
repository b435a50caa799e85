#!/usr/bin/perl
# t/tls_direct_send.t: the records of a TLS connection's send of several go
# to the socket from OpenSSL's buffer as they are encrypted (event/tls_bio.c,
# rx_tls_send_direct), with MSG_MORE while more of the same send follows
# and without it on the last, which pushes them together; a send of one
# record goes by the ring, batched with the loop turn's other sends. Before, every
# record was copied into the connection's output buffer and sent by the
# ring: a copy of every byte (~5 % of a 1 MiB HTTP/2 response's CPU); and
# direct sends without MSG_MORE woke the peer once per 16 KiB record.
# Checked on the io_uring backend with strace: a 1 MiB response over
# HTTP/1.1 and over HTTP/2 leaves in sendto calls, most of them corked;
# a small response by the ring (no sendto: a syscall of its own per
# response cost tls-1k 1.2x the CPU). A reader that does not read
# (the socket fills) still gets every byte: what the socket refused goes
# through the ring, which pushes what was corked before it.

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::Ringx;
use Test::Ringx::Certs;
use Digest::MD5 qw(md5_hex);
use Socket qw(SOL_SOCKET SO_RCVBUF);

BEGIN {
    eval { require IO::Socket::SSL; 1 } or plan(skip_all => 'no IO::Socket::SSL');
    IO::Socket::SSL->import(qw(SSL_VERIFY_NONE));
}

delete $ENV{RINGX_EVENTS};    # the direct sends are the io_uring backend's

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
my $big = join('', map { pack('N', ($_ * 2654435761) % 4294967291) } 0 .. 262143);
$t->write_file('html/big.bin', $big);
$t->write_file('html/small.txt', "small\n");
$t->write_config(<<'CONF');
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; use io_uring; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        http2 on;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        root html;
    }
}
CONF
$t->run;
my ($w) = $t->worker_pids;
my $P = $t->port(0);
my $URL = "https://127.0.0.1:$P";

sub fetch {
    my ($opt, $path) = @_;
    return scalar `curl -sk $opt --max-time 20 $URL$path`;
}

# the sendto calls in strace's text: (corked, not corked, bytes sent)
sub sends {
    my ($text) = @_;
    my ($more, $push, $bytes) = (0, 0, 0);
    for my $l (split /\n/, $text // '') {
        next unless $l =~ /^sendto\(\d+, .*\) = (\d+)$/;
        $bytes += $1;
        if ($l =~ /MSG_MORE/) { $more++ } else { $push++ }
    }
    return ($more, $push, $bytes);
}

SKIP: {
    skip 'no strace here (apt-get install strace)', 8
        if system('strace -V >/dev/null 2>&1') != 0;
    skip 'the kernel refused io_uring: the worker runs epoll', 8
        if $t->log_contains(qr/uses epoll instead/);

    for my $v (['--http1.1', 'HTTP/1.1'], ['--http2', 'HTTP/2']) {
        my ($opt, $name) = @$v;
        my ($body, $calls, $text) = $t->syscalls_during($w,
            "-k $URL/small.txt", sub { fetch($opt, '/big.bin') });
        ok(defined $body && length($body) == length($big)
           && md5_hex($body) eq md5_hex($big), "$name: 1 MiB whole");
        my ($more, $push, $bytes) = sends($text);
        # most of its 64 records of 16 KiB (the rest when the socket was
        # full: by the ring); all but the last of each send corked
        # (HTTP/1.1 sends 128 KiB at a time, HTTP/2 64 KiB of frames)
        cmp_ok($bytes, '>=', 0.75 * length($big), "$name: its records left by "
               . "sendto ($more corked, $push not, $bytes bytes)");
        cmp_ok($more, '>=', 3 * $push, "$name: most of them corked");
    }

    # two on one connection: the second one's record goes after the
    # handshake's flight (its session tickets) surely left
    my ($body, $calls, $text) = $t->syscalls_during($w, "-k $URL/small.txt",
        sub { fetch('--http1.1', "/small.txt $URL/small.txt") });
    is($body, "small\nsmall\n", 'small responses');
    my ($more, $push) = sends($text);
    ok($push == 0 && $more == 0, "a small response is one record: by the "
       . "ring, with the loop turn's other sends ($push sendto, $more corked)");
}

# a reader that waits: the socket fills, the rest goes by the ring
for my $round (1 .. 3) {
    my $s = IO::Socket::SSL->new(PeerAddr => '127.0.0.1', PeerPort => $P,
        SSL_verify_mode => SSL_VERIFY_NONE(), Timeout => 10);
    ok($s, "connected ($round)") or next;
    setsockopt($s, SOL_SOCKET, SO_RCVBUF, 16384);
    print $s "GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"
           . "GET /small.txt HTTP/1.1\r\nHost: localhost\r\n"
           . "Connection: close\r\n\r\n";
    select(undef, undef, undef, 0.5 * $round);
    my $got = '';
    while (1) {
        my $n = sysread($s, my $buf, 65536);
        last unless $n;
        $got .= $buf;
    }
    my $at = index($got, "\r\n\r\n");
    my $b1 = $got =~ /^HTTP\/1\.1 200 / && $at > 0
             ? substr($got, $at + 4, length $big) : undef;
    my $rest = defined $b1 ? substr($got, $at + 4 + length $big) : undef;
    ok(defined $b1 && md5_hex($b1) eq md5_hex($big),
       'a reader that waited ' . 0.5 * $round . ' s: 1 MiB whole');
    like($rest // '', qr/^HTTP\/1\.1 200 .*\r\n\r\nsmall\n$/s,
         '... and the response after it');
}

$t->stop;
$t->check_logs;
done_testing;
