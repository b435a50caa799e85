#!/usr/bin/perl
# ssl_early.t: TLS 1.3 early data (0-RTT). With ssl_early_data on, a
# request sent with a resumed session's ClientHello is read before the
# handshake ends and marked by $ssl_early_data; its response leaves after
# the handshake. Off (the default): the server refuses early data and the
# client's request is answered after the handshake.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    ssl_certificate certs/ec-localhost.crt;
    ssl_certificate_key certs/ec-localhost.key;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        ssl_early_data on;
        location / { return 200 "early=[$ssl_early_data] uri=$uri\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%% ssl;
        client_header_timeout 2s;   # early data refused: nothing follows
        location / { return 200 "early=[$ssl_early_data] uri=$uri\n"; }
    }
}
EOF
$t->run;

my $dir = $t->prefix;
$t->write_file_raw('early.txt', "GET /zero-rtt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");

sub first_session {
    my ($port, $file) = @_;
    unlink $file;
    return Test::Ringx::Certs::s_client($port, "-tls1_3 -sess_out $file",
        "GET /full HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
}

my $o = first_session($t->port(0), "$dir/s0");
like($o, qr/early=\[\] uri=\/full/, 'a full handshake: $ssl_early_data is empty');
like($o, qr/Max Early Data: 16384/, 'the ticket allows 16 KiB of early data');

$o = `timeout 10 openssl s_client -connect 127.0.0.1:@{[ $t->port(0) ]} -tls1_3 -sess_in $dir/s0 -early_data $dir/early.txt -ign_eof </dev/null 2>&1`;
like($o, qr/^Early data was accepted/m, 'ssl_early_data on: early data accepted');
like($o, qr/^Reused, TLSv1\.3/m, 'on a resumed session');
like($o, qr/early=\[1\] uri=\/zero-rtt/, 'the request came in early data: $ssl_early_data is 1');

$o = first_session($t->port(1), "$dir/s1");
like($o, qr/Max Early Data: 0/, 'ssl_early_data off: tickets allow none');
$o = `timeout 10 openssl s_client -connect 127.0.0.1:@{[ $t->port(1) ]} -tls1_3 -sess_in $dir/s1 -early_data $dir/early.txt -ign_eof </dev/null 2>&1`;
unlike($o, qr/^Early data was accepted/m, 'off: no early data accepted');
unlike($o, qr/early=\[1\]/, 'and no request marked as early');

# the server still answers normally afterwards
$o = Test::Ringx::Certs::s_client($t->port(0), '-tls1_3',
    "GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
like($o, qr/early=\[\] uri=\/after/, 'a later full handshake is served');

$t->stop;
done_testing;
