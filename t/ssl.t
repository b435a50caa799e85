#!/usr/bin/perl
# ssl.t: HTTPS on the server side: protocols accepted and refused, SNI
# choosing the certificate (exact, wildcard, regex; RSA and ECDSA side by
# side), the default server without SNI, ssl_reject_handshake, ALPN, the
# $ssl_* variables, $https/$scheme and https:// redirects, plain HTTP on
# the TLS port (400 and error_page 497), garbage and stalled handshakes,
# and a 100 MiB file over TLS.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use Digest::SHA;

plan(skip_all => 'no curl') if system('curl --version >/dev/null 2>&1');

my $t = Test::Ringx->new;
my $cd = Test::Ringx::Certs::make($t->prefix . '/conf/certs',
    'default.example', 'a.example', '*.wild.example', 'b.example');
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    client_header_timeout 1s;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name default.example;
        ssl_certificate certs/rsa-default.example.crt;
        ssl_certificate_key certs/rsa-default.example.key;
        root html;
        location / { return 200 "default\n"; }
        location /vars {
            return 200 "p=$ssl_protocol c=$ssl_cipher curve=$ssl_curve sid=$ssl_session_id r=$ssl_session_reused sn=$ssl_server_name alpn=$ssl_alpn_protocol v=$ssl_client_verify https=$https scheme=$scheme\n";
        }
        location /redir { return 302 /there; }
        location /big/ { }
    }
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name a.example;
        ssl_certificate certs/rsa-a.example.crt;
        ssl_certificate_key certs/rsa-a.example.key;
        ssl_certificate certs/ec-a.example.crt;
        ssl_certificate_key certs/ec-a.example.key;
        location / { return 200 "a\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name *.wild.example;
        ssl_certificate certs/ec-star.wild.example.crt;
        ssl_certificate_key certs/ec-star.wild.example.key;
        location / { return 200 "wild $ssl_server_name\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name ~^re(\d+)\.example$;
        ssl_certificate certs/rsa-b.example.crt;
        ssl_certificate_key certs/rsa-b.example.key;
        location / { return 200 "regex $1\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name reject.example;
        ssl_reject_handshake on;
    }
    server {
        listen 127.0.0.1:%%PORT_1%% ssl;
        server_name localhost;
        ssl_protocols TLSv1.3;
        ssl_certificate certs/ec-default.example.crt;
        ssl_certificate_key certs/ec-default.example.key;
        error_page 497 =301 https://localhost:%%PORT_1%%/;
        location / { return 200 "v13 $ssl_protocol\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        location / { return 200 "plain [$https] $scheme [$ssl_protocol]\n"; }
    }
}
EOF
# 100 MiB of pseudo-random bytes: gzip or a pattern would hide errors less
my $big = $t->prefix . '/html/big/file.bin';
mkdir $t->prefix . '/html/big';
system("head -c 104857600 /dev/urandom > $big") == 0 or die;
$t->run;
my ($P0, $P1, $P2) = ($t->port(0), $t->port(1), $t->port(2));
my $sc = \&Test::Ringx::Certs::s_client;

sub curl {
    my ($args) = @_;
    return scalar qx{curl -sk --max-time 20 $args 2>&1};
}

sub subject { my ($out) = @_; return $out =~ /^subject=(.*)$/m ? $1 : '' }

# ---- protocols ----------------------------------------------------------
my $o = $sc->($P0, '-tls1_2 -no_ticket', "GET /vars HTTP/1.0\r\n\r\n");
like($o, qr/Protocol *: TLSv1\.2/, 'TLSv1.2 is accepted by default');
like($o, qr/p=TLSv1\.2 c=ECDHE-RSA-\S+ curve=\S+ sid=[0-9a-f]{64} r=\. /,
     '$ssl_protocol, $ssl_cipher, $ssl_curve, $ssl_session_id, $ssl_session_reused');
$o = $sc->($P0, '-tls1_3', "GET /vars HTTP/1.0\r\n\r\n");
like($o, qr/p=TLSv1\.3 c=TLS_\S+ curve=X25519 .*v=NONE https=on scheme=https/,
     'TLSv1.3 is accepted; $ssl_client_verify NONE, $https on, $scheme https');
$o = $sc->($P1, '-tls1_2');
like($o, qr/Cipher is \(NONE\)/, 'a TLSv1.3-only server refuses TLSv1.2');
like($o, qr/alert protocol version|no protocols available|unsupported protocol/i,
     'with a protocol_version alert');
like($sc->($P1, '-tls1_3', "GET / HTTP/1.0\r\n\r\n"), qr/v13 TLSv1\.3/,
     'the TLSv1.3-only server serves TLSv1.3');

# ---- SNI ---------------------------------------------------------------
like(subject($sc->($P0, '-noservername')), qr/CN = default\.example/,
     'no SNI: the default server\'s certificate');
like(subject($sc->($P0, '-servername nosuch.example')), qr/CN = default\.example/,
     'an unknown name: the default server\'s certificate');
$o = $sc->($P0, '-servername a.example -sigalgs ECDSA+SHA256',
           "GET / HTTP/1.0\r\nHost: a.example\r\n\r\n");
like(subject($o), qr/CN = a\.example/, 'SNI picks the exact name');
like($o, qr/Peer signature type: ECDSA/, 'an ECDSA-only client gets the ECDSA certificate');
like($o, qr/^a$/m, 'and is served by that server');
$o = $sc->($P0, '-servername a.example -sigalgs RSA-PSS+SHA256:RSA+SHA256');
like($o, qr/Peer signature type: RSA/, 'an RSA-only client gets the RSA certificate of the same server');
$o = $sc->($P0, '-servername x.wild.example', "GET / HTTP/1.0\r\nHost: x.wild.example\r\n\r\n");
like(subject($o), qr/CN = \*\.wild\.example/, 'SNI matches a wildcard name');
like($o, qr/wild x\.wild\.example/, '$ssl_server_name');
$o = $sc->($P0, '-servername re42.example', "GET / HTTP/1.0\r\nHost: re42.example\r\n\r\n");
like(subject($o), qr/CN = b\.example/, 'SNI matches a regex name');
like($o, qr/regex 42/, 'Host picks the same server, with its captures');
$o = $sc->($P0, '-servername reject.example');
unlike($o, qr/^subject=/m, 'ssl_reject_handshake: no certificate is sent');
like($o, qr/unrecognized name/i, 'the handshake is refused with unrecognized_name');

# ---- ALPN --------------------------------------------------------------
like($sc->($P0, '-alpn h2,http/1.1', "GET /vars HTTP/1.0\r\n\r\n"),
     qr/ALPN protocol: http\/1\.1.*alpn=http\/1\.1/s, 'ALPN: http/1.1 chosen over h2');
$o = $sc->($P0, '-alpn h2');
unlike($o, qr/^subject=/m, 'ALPN without an HTTP/1.x protocol is refused (nginx >= 1.21.4)');
like($o, qr/no application protocol/i, 'with no_application_protocol');

# ---- curl, redirects, plain ------------------------------------------------
is(curl("https://127.0.0.1:$P0/"), "default\n", 'curl over TLS');
like(curl("-D - -o /dev/null https://127.0.0.1:$P0/redir -H 'Host: localhost'"),
     qr{^Location: https://localhost:$P0/there\r?$}mi,
     'an absolute redirect says https://');
is(curl("http://127.0.0.1:$P2/"), "plain [] http []\n",
   'on a plain port: $https empty, $scheme http, no $ssl_protocol');

my $c = $t->raw($P0);
$c->send("GET /vars HTTP/1.1\r\nHost: localhost\r\n\r\n");
my $r = $c->read_response(timeout => 3);
is($r && $r->{status}, 400, 'plain HTTP to the TLS port: 400');
like($r && $r->{body}, qr{<title>400 The plain HTTP request was sent to HTTPS port</title>.*<center>The plain HTTP request was sent to HTTPS port</center>}s,
     'with nginx\'s page');
ok($c->wait_closed(3), 'and the connection is closed');
ok($t->log_contains(qr/\[info\] .*client sent plain HTTP request to HTTPS port while reading client request headers/),
   'logged at info as nginx');
$c = $t->raw($P1);
$c->send("GET /some?x=1 HTTP/1.0\r\nHost: localhost\r\n\r\n");
$r = $c->read_response(timeout => 3);
is($r && $r->{status}, 301, 'error_page 497 catches plain HTTP');
is($r && $r->{headers}{location}, "https://localhost:$P1/", 'and redirects to https');

# ---- hostile handshakes --------------------------------------------------
$c = $t->raw($P0);
$c->send("\x16\x03\x01\x00\x10" . ("\xff" x 16));
ok($c->wait_closed(3), 'a bad ClientHello: closed');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*SSL_do_handshake\(\) failed/) }, 3),
   'logged at info');
$c = $t->raw($P0);
$c->send("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03");   # truncated
ok(!$c->still_open(0.5) ? 0 : 1, 'a truncated ClientHello: the server waits for the rest');
ok($c->wait_closed(5), 'and client_header_timeout closes it');
$c = $t->raw($P0);
ok($c->wait_closed(5), 'a connection that sends nothing is closed by client_header_timeout');
is(curl("https://127.0.0.1:$P0/"), "default\n", 'the server still serves');

# ---- a large file ---------------------------------------------------------
my $want = Digest::SHA->new(256)->addfile($big)->hexdigest;
my $got = qx{curl -sk --max-time 60 https://127.0.0.1:$P0/big/file.bin | sha256sum};
$got =~ s/\s.*//s;
is($got, $want, '100 MiB over TLS arrives intact (sha256)');

$t->stop;
done_testing;
