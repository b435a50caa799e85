#!/usr/bin/perl
# t/idle_memory.t: what idle connections cost once a burst of requests is
# over (event/mem_tidy.c, core/slab.c). 400 connections each send a request
# at once and are then held idle: within a few quiet seconds the worker's
# RSS must fall back to within ~1 KiB per held connection of what it was
# before (the burst's request buffers and the receive buffers it cycled
# through go back to the kernel; the connections' pools sit in a slab of
# their own). Then every held connection sends another request at once, on
# buffers whose pages were dropped: each answer must be whole and exact.
# Runs on both event backends. RSS is not checked under ASan (its
# quarantine keeps freed memory resident).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::Ringx;

my $N = 400;

# Sends one GET on each connection, all of them first, then reads every
# answer: how many came back whole with the file's bytes.
sub burst {
    my ($conns, $body) = @_;
    my $ok = 0;
    $_->send("GET /f.txt HTTP/1.1\r\nHost: localhost\r\n\r\n") for @$conns;
    for my $c (@$conns) {
        my $r = $c->read_response(timeout => 10);
        $ok++ if $r && $r->{status} == 200 && $r->{body} eq $body;
    }
    return $ok;
}

for my $method ('io_uring', 'epoll') {
    my $t = Test::Ringx->new;
    my $body = join('', map { chr(65 + $_ % 26) } 0 .. 1499);
    $t->write_file('html/f.txt', $body);
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 2048; use $method; }
http {
    access_log off;
    keepalive_timeout 120s;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root %%PREFIX%%/html;
    }
}
EOF
    $t->run;
    my ($worker) = $t->worker_pids;
    my $port = $t->port(0);

    my $first = $t->http_get($port, '/f.txt');
    like($first, qr/^HTTP\/1\.1 200 /, "$method: answers");
    sleep 2;                         # the first request's tidy is done
    my $rss0 = $t->rss_kb($worker);

    my @conns = grep { defined } map { $t->raw($port) } 1 .. $N;
    is(scalar @conns, $N, "$method: $N connections open");
    is(burst(\@conns, $body), $N,
       "$method: a burst of $N requests, each answered whole");

    my $bound = $rss0 + $N + 256;    # 1 KiB a connection, and some slack
    my $rss;
    Test::Ringx::wait_for(sub { ($rss = $t->rss_kb($worker)) < $bound }, 10);
    note("$method: worker RSS $rss0 kB before, $rss kB with $N idle "
         . "connections held after the burst");
    SKIP: {
        skip('ASan keeps freed memory resident', 1) if $t->sanitized;
        cmp_ok($rss, '<', $bound, "$method: held idle connections after a "
               . "burst cost less than 1 KiB each");
    }

    is(burst(\@conns, $body), $N,
       "$method: after the quiet, another burst on the held connections, "
       . "each answered whole");
    $_->close for @conns;
    $t->stop;
}

done_testing;
