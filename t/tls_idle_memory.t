#!/usr/bin/perl
# t/tls_idle_memory.t: what a TLS connection costs while it waits for its
# first request. Its handshake's flights go out through the connection's
# two output buffers (event/tls_bio.c, TLS_OUT_SIZE each); they went back
# to the worker's spares only after a response, so a client that had shaken
# hands and not yet asked held both, touched, for as long as it waited: 40
# KiB per such connection against nginx's 16 (measured with 2,000). Now the
# buffers go back once the flights are sent: 300 handshaken connections
# must cost the worker less than 24 KiB each (OpenSSL's own state is ~16),
# and each then gets its answer whole, on buffers taken again. Runs on both
# event backends. RSS is not checked under ASan (its quarantine keeps freed
# memory resident).

use strict;
use warnings;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::Ringx;
use Test::Ringx::Certs;

BEGIN {
    eval { require IO::Socket::SSL; 1 } or plan(skip_all => 'no IO::Socket::SSL');
    IO::Socket::SSL->import(qw(SSL_VERIFY_NONE));
}

my $N = 300;

sub whole {
    my ($answer, $body) = @_;
    return ($answer // '') =~ /^HTTP\/1\.1 200 .*\r\n\r\n\Q$body\E$/s;
}

for my $method ('io_uring', 'epoll') {
    my $t = Test::Ringx->new;
    Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
    my $body = join('', map { chr(65 + $_ % 26) } 0 .. 1499);
    $t->write_file('html/f.txt', $body);
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 1024; use $method; }
http {
    access_log off;
    client_header_timeout 120s;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        root %%PREFIX%%/html;
    }
}
EOF
    $t->run;
    my ($worker) = $t->worker_pids;
    my $port = $t->port(0);
    my $connect = sub {
        IO::Socket::SSL->new(PeerAddr => '127.0.0.1', PeerPort => $port,
            SSL_verify_mode => SSL_VERIFY_NONE(), SSL_hostname => 'localhost',
            Timeout => 5 * $Test::Ringx::SCALE);
    };
    my $get = "GET /f.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

    # one connection first, so that the worker's spares and OpenSSL's
    # lazily made state exist before the measure
    my $warm = $connect->();
    ok($warm, "$method: a TLS client connects")
        or diag("connect: $IO::Socket::SSL::SSL_ERROR");
    print $warm $get;
    ok(whole(do { local $/; <$warm> }, $body), "$method: answers");
    close $warm;
    sleep 1;
    my $rss0 = $t->rss_kb($worker);

    my @conns = grep { defined } map { $connect->() } 1 .. $N;
    is(scalar @conns, $N, "$method: $N TLS connections shook hands");
    sleep 1;                          # the worker has sent every flight
    my $rss = $t->rss_kb($worker);
    my $per = int(($rss - $rss0) * 1024 / $N);
    note("$method: worker RSS $rss0 kB before, $rss kB with $N handshaken "
         . "connections: $per B each");
    SKIP: {
        skip('ASan keeps freed memory resident', 1) if $t->sanitized;
        cmp_ok($per, '<', 24 * 1024, "$method: a handshaken connection "
               . "waiting for its request costs less than 24 KiB");
    }

    my $whole = 0;
    print $_ $get for @conns;
    for my $c (@conns) {
        $whole++ if whole(do { local $/; <$c> }, $body);
        close $c;
    }
    is($whole, $N, "$method: then each asks, and each answer is whole");
    $t->stop;
}

done_testing;
