#!/usr/bin/perl
# ssl_conn_reuse.t: a full connection table on a TLS port. As nginx does, a
# connection whose TLS handshake is under way (it sent a byte of it) is not
# closed to make room, and one whose handshake is done but that has not
# sent a request is (it waits for its first byte like a new connection).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use IO::Select;
use Time::HiRes qw(sleep time);

BEGIN {
    eval { require IO::Socket::SSL; 1 } or plan(skip_all => 'no IO::Socket::SSL');
    IO::Socket::SSL->import(qw(SSL_VERIFY_NONE));
}

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 8; }
http {
    access_log off;
    client_header_timeout 60s;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name localhost;
        ssl_certificate certs/rsa-localhost.crt;
        ssl_certificate_key certs/rsa-localhost.key;
        location / { return 200 "uri=$uri\n"; }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub tls_connect {
    return IO::Socket::SSL->new(PeerAddr => '127.0.0.1', PeerPort => $P,
        SSL_verify_mode => SSL_VERIFY_NONE(), SSL_hostname => 'localhost',
        Timeout => 5 * $Test::Ringx::SCALE);
}

# True when the server closes the TLS connection within $secs (what it
# sends meanwhile, session tickets, is read and dropped).
sub tls_closed {
    my ($s, $secs) = @_;
    my $deadline = time + $secs;
    $s->blocking(0);
    my $sel = IO::Select->new($s);
    while (1) {
        my $n = sysread($s, my $buf, 4096);
        return 1 if defined $n && $n == 0;
        return 1 if !defined $n && !$!{EAGAIN} && !$!{EWOULDBLOCK}
                    && ($IO::Socket::SSL::SSL_ERROR // '') !~ /want/i;
        my $left = $deadline - time;
        return 0 if $left <= 0;
        $sel->can_read($left);
    }
}

# 4 connections in the middle of a handshake: a truncated ClientHello
my @shaking;
for (1 .. 4) {
    my $c = $t->raw($P) or last;
    $c->send("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03");
    push @shaking, $c;
}
is(scalar @shaking, 4, 'four connections in the middle of a TLS handshake');

# 4 connections that finished their handshake and say nothing
my @quiet;
for (1 .. 4) {
    my $s = tls_connect() or last;
    push @quiet, $s;
}
is(scalar @quiet, 4, 'four connections that finished the handshake and send nothing')
    or diag("connect: $IO::Socket::SSL::SSL_ERROR");
sleep 0.5;                  # setup: the worker sees the handshakes end

# the table (8) is full: a new client gets the slot of the oldest quiet one
my $s = tls_connect();
ok($s, 'a new TLS client connects though the table is full')
    or diag("connect: $IO::Socket::SSL::SSL_ERROR");
my $got = '';
if ($s) {
    print $s "GET /new HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    local $/;
    $got = <$s> // '';
}
like($got, qr{\AHTTP/1\.1 200 .*\r\n\r\nuri=/new\n\z}s,
     'and is answered at once, not after client_header_timeout 60s');

ok(tls_closed($quiet[0], 3), 'the oldest quiet TLS connection was closed for it');
my $open = grep { !tls_closed($_, 0.1) } @quiet[1 .. 3];
is($open, 3, 'the other quiet ones are still open');
$open = grep { $_->still_open(0.1) } @shaking;
is($open, 4, 'no connection in the middle of its handshake was closed');
ok($t->log_contains(
    qr/\[warn\] .*\b8 worker_connections are not enough, reusing connections/),
   'log: [warn] 8 worker_connections are not enough, reusing connections');

$_->close for @shaking;
close($_) for @quiet;
$t->stop;
done_testing;
