#!/usr/bin/perl
# ssl_verify.t: client certificates. ssl_verify_client on, optional and
# optional_no_ca: the handshake always finishes and the request gets the
# verdict, as in nginx: 400 with the 495 ("The SSL certificate error") or
# 496 ("No required SSL certificate was sent") page, which error_page can
# catch; $ssl_client_verify and the certificate's variables.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;

plan(skip_all => 'no curl') if system('curl --version >/dev/null 2>&1');

my $t = Test::Ringx->new;
my $d = Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
$t->write_config(<<'EOF2');
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
        ssl_verify_client on;
        ssl_client_certificate certs/ca.crt;
        ssl_session_cache shared:V:1m;
        location / {
            return 200 "v=$ssl_client_verify s=$ssl_client_s_dn i=$ssl_client_i_dn serial=$ssl_client_serial fp=$ssl_client_fingerprint\n";
        }
        location /raw { return 200 "$ssl_client_raw_cert"; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%% ssl;
        ssl_verify_client optional;
        ssl_client_certificate certs/ca.crt;
        error_page 495 http://localhost/bad-certificate;
        location / { return 200 "v=$ssl_client_verify\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_2%% ssl;
        ssl_verify_client optional_no_ca;
        location / { return 200 "v=$ssl_client_verify s=$ssl_client_s_dn\n"; }
    }
}
EOF2
$t->run;
my ($P0, $P1, $P2) = map { $t->port($_) } 0 .. 2;

sub curl {
    my ($port, $cert, $path) = @_;
    my $auth = $cert ? "--cert $d/$cert.crt --key $d/$cert.key" : '';
    $path //= '/';
    my $out = qx{curl -sk --max-time 10 -D - $auth https://127.0.0.1:$port$path 2>&1};
    my ($status) = $out =~ m{^HTTP/1\.1 (\d+)};
    my ($body) = $out =~ m{\r\n\r\n(.*)\z}s;
    return ($status // 0, $body // '', $out);
}

# ---- on ---------------------------------------------------------------------
my ($s, $b) = curl($P0, 'client');
is($s, 200, 'on: a certificate signed by the CA is accepted');
like($b, qr/^v=SUCCESS /, '$ssl_client_verify SUCCESS');
like($b, qr/ s=O=ringx tests,CN=client one /, '$ssl_client_s_dn in RFC 2253 order');
like($b, qr/ i=CN=ringx test CA /, '$ssl_client_i_dn');
my $serial = qx{openssl x509 -in $d/client.crt -noout -serial};
$serial =~ s/^serial=//; chomp $serial;
like($b, qr/ serial=\Q$serial\E /, '$ssl_client_serial as openssl prints it');
my $fp = lc qx{openssl x509 -in $d/client.crt -noout -fingerprint -sha1};
$fp =~ s/^.*=//; $fp =~ s/[:\s]//g;
like($b, qr/ fp=$fp$/m, '$ssl_client_fingerprint: SHA1, lower-case hex');
(undef, $b) = curl($P0, 'client', '/raw');
my $pem = $t->read_file("$d/client.crt");
is($b, $pem, '$ssl_client_raw_cert is the PEM');

($s, $b) = curl($P0, undef);
is($s, 400, 'on, no certificate: 400');
like($b, qr{<title>400 No required SSL certificate was sent</title>}, 'with nginx\'s 496 page');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent no required SSL certificate while reading client request headers/) }, 3),
   'logged as nginx');

($s, $b) = curl($P0, 'self');
is($s, 400, 'on, a self-signed certificate: 400');
like($b, qr{<title>400 The SSL certificate error</title>}, 'with nginx\'s 495 page');
ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client SSL certificate verify error: \(\d+:self.signed certificate\) while reading client request headers/) }, 3),
   'the verify error is logged as nginx');

# a resumed session keeps its verdict
my $sess = $t->prefix . '/sess';
Test::Ringx::Certs::s_client($P0, "-tls1_2 -no_ticket -cert $d/client.crt -key $d/client.key -sess_out $sess",
                             "GET / HTTP/1.0\r\n\r\n");
my $o = Test::Ringx::Certs::s_client($P0, "-tls1_2 -no_ticket -sess_in $sess", "GET / HTTP/1.0\r\n\r\n");
like($o, qr/^Reused, .*v=SUCCESS /ms, 'a resumed session keeps the verified certificate');

# ---- optional ---------------------------------------------------------------
($s, $b) = curl($P1, undef);
is("$s $b", "200 v=NONE\n", 'optional, no certificate: served, NONE');
($s, $b) = curl($P1, 'client');
is("$s $b", "200 v=SUCCESS\n", 'optional, a good certificate: SUCCESS');
my (undef, undef, $raw) = curl($P1, 'self');
like($raw, qr{^HTTP/1\.1 302 .*^Location: http://localhost/bad-certificate\r$}ms,
     'optional, a bad certificate: 495, caught by error_page');

# ---- optional_no_ca -------------------------------------------------------------
($s, $b) = curl($P2, 'self');
is($s, 200, 'optional_no_ca: a certificate of an unknown issuer is let through');
like($b, qr/^v=FAILED:self.signed certificate s=CN=self signed$/m,
     'with $ssl_client_verify FAILED:reason');
($s, $b) = curl($P2, 'client');
like("$s $b", qr/^200 v=FAILED:unable to (?:get local issuer|verify the first) certificate /, 'also one signed by a CA it does not know');

$t->stop;
done_testing;
