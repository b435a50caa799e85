#!/usr/bin/perl
# ssl_conf.t: the ssl module's configuration: errors with nginx's words
# and the directive's FILE:LINE (missing certificate, key mismatch, a TLS
# address whose default server has no certificate, verification without
# CAs, bad values), key passwords, `ssl` on one listen line of an address,
# OCSP stapling from a file, and -V.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;

my $t = Test::Ringx->new;
my $d = Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
$t->expect_log(qr/\[emerg\]/);

my $head = <<'EOF2';
daemon off;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
EOF2

# -t on a config of `http { BODY }`; returns (exit code, stderr)
sub check {
    my ($body) = @_;
    $t->write_file('conf/try.conf', $head . $body . "}\n");
    my ($rc, undef, $err) = $t->ringx('-t', '-c', $t->prefix . '/conf/try.conf');
    return ($rc, $err);
}

my $C = 'ssl_certificate certs/ec-localhost.crt; ssl_certificate_key certs/ec-localhost.key;';
my ($rc, $err);

($rc, $err) = check("server { listen 127.0.0.1:1 ssl;\n ssl_certificate certs/none.crt;\n ssl_certificate_key certs/ec-localhost.key; }\n");
like($err, qr{\[emerg\] cannot load certificate "\S+/certs/none\.crt": BIO_new_file\(\) failed \(SSL: .*No such file.*\) in \S+try\.conf:7$}m,
     'a missing certificate: nginx\'s words, the SSL error, FILE:LINE');
isnt($rc, 0, 'and -t fails');

($rc, $err) = check("server { listen 127.0.0.1:1 ssl;\n ssl_certificate certs/ec-localhost.crt;\n ssl_certificate_key certs/client.key; }\n");
like($err, qr{\[emerg\] SSL_CTX_use_PrivateKey\("\S+/client\.key"\) failed \(SSL: .*key values mismatch\) in \S+try\.conf:8$}m,
     'a key that is not the certificate\'s');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl;\n ssl_certificate certs/ec-localhost.crt;\n ssl_certificate_key certs/rsa-localhost.key; }\n");
like($err, qr{\[emerg\] SSL_CTX_check_private_key\("\S+/rsa-localhost\.key"\) failed \(SSL: .*\) in \S+try\.conf:8$}m,
     'a key of another type than the certificate');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl;\n ssl_certificate certs/ec-localhost.crt; }\n");
like($err, qr{\[emerg\] no "ssl_certificate_key" is defined for certificate "\S+/ec-localhost\.crt" in \S+try\.conf:7$}m,
     'a certificate without a key');

($rc, $err) = check("server { listen 127.0.0.1:1; server_name a; }\n server {\n listen 127.0.0.1:1 ssl; server_name b; $C }\n");
like($err, qr{\[emerg\] no "ssl_certificate" is defined for the "listen \.\.\. ssl" directive in \S+try\.conf:6$}m,
     'ssl on any listen line makes the address TLS: its default server needs a certificate');
($rc, $err) = check("server { listen 127.0.0.1:1; server_name a; $C }\n server {\n listen 127.0.0.1:1 ssl; server_name b; }\n");
is($rc, 0, 'the default server has one: fine') or diag $err;
($rc, $err) = check("server { listen 127.0.0.1:1 ssl default_server; ssl_reject_handshake on; }\n server { listen 127.0.0.1:1 ssl; server_name b; $C }\n");
is($rc, 0, 'a default server with ssl_reject_handshake needs none') or diag $err;

# the deprecated `ssl on;`: nginx's warning with FILE:LINE, and its own
# complaint when the server has no certificate
($rc, $err) = check("server { listen 127.0.0.1:1;\n ssl on; }\n");
like($err, qr{\[warn\] the "ssl" directive is deprecated, use the "listen \.\.\. ssl" directive instead in \S+try\.conf:7$}m,
     'ssl on: the deprecation warning, FILE:LINE');
like($err, qr{\[emerg\] no "ssl_certificate" is defined for the "ssl" directive in \S+try\.conf:7$}m,
     'ssl on without a certificate: nginx\'s words, where ssl was written');
isnt($rc, 0, 'and -t fails');
($rc, $err) = check("ssl on;\n server { listen 127.0.0.1:1; $C }\n");
is($rc, 0, 'ssl on in http, a certificate in the server: -t passes') or diag $err;
like($err, qr{\[warn\] the "ssl" directive is deprecated.* in \S+try\.conf:6$}m, 'with the warning');
($rc, $err) = check("server { listen 127.0.0.1:1; ssl off; }\n");
is($rc, 0, 'ssl off: accepted, no certificate needed') or diag $err;

($rc, $err) = check("server { listen 127.0.0.1:1 ssl; $C\n ssl_verify_client on; }\n");
like($err, qr{\[emerg\] no ssl_client_certificate or ssl_trusted_certificate for ssl_verify_client in \S+try\.conf:7$}m,
     'ssl_verify_client without CAs');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; $C\n ssl_verify_client optional_no_ca; }\n");
is($rc, 0, 'optional_no_ca needs none') or diag $err;
($rc, $err) = check("ssl_protocols TLSv1.2 TLSv9;\n");
like($err, qr{\[emerg\] invalid value "TLSv9" in "ssl_protocols" directive, it must be .* in \S+try\.conf:6$}m,
     'an unknown protocol');
($rc, $err) = check("ssl_protocols SSLv3 TLSv1 TLSv1.1 TLSv1.2;\n server { listen 127.0.0.1:1 ssl; $C }\n");
is($rc, 0, 'old protocols are accepted') or diag $err;
($rc, $err) = check("ssl_session_cache shared:x;\n");
like($err, qr{\[emerg\] invalid session cache "shared:x" in \S+try\.conf:6$}m, 'a bad session cache');
($rc, $err) = check("ssl_session_cache shared:x:1k;\n");
like($err, qr{\[emerg\] zone "x" is too small}m, 'a session cache too small');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; $C ssl_session_cache shared:S:1m; }\n"
                    . "server { listen 127.0.0.1:2 ssl; $C\n ssl_session_cache builtin:1000 shared:S:2m; }\n");
like($err, qr{\[emerg\] the size 2097152 of shared memory zone "S" conflicts with already declared size 1048576 in \S+try\.conf:8$}m,
     'one zone name, two sizes');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; $C\n ssl_ciphers BOGUS; }\n");
like($err, qr{\[emerg\] SSL_CTX_set_cipher_list\("BOGUS"\) failed \(SSL: }m, 'bad ciphers');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; $C\n ssl_ecdh_curve nosuchcurve; }\n");
like($err, qr{\[emerg\] SSL_CTX_set1_curves_list\("nosuchcurve"\) failed}m, 'a bad curve');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; $C\n ssl_conf_command NoSuchCommand x; }\n");
like($err, qr{\[emerg\] SSL_CONF_cmd\("NoSuchCommand", "x"\) failed}m, 'a bad ssl_conf_command');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; $C\n ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256; ssl_early_data on; ssl_buffer_size 4k; ssl_stapling_verify on; ssl_prefer_server_ciphers on; ssl_ecdh_curve X25519:prime256v1; }\n");
is($rc, 0, 'ssl_conf_command, ssl_early_data, ssl_buffer_size ... accepted') or diag $err;
unlike($err, qr{ssl_early_data}, 'ssl_early_data on is taken without a warning (see t/ssl_early.t)');

# passwords
system("openssl pkey -in $d/ec-localhost.key -aes256 -passout pass:right -out $d/enc.key") == 0 or die;
$t->write_file('conf/pw', "wrong\nright\n");
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; ssl_certificate certs/ec-localhost.crt;\n ssl_certificate_key certs/enc.key; }\n");
like($err, qr{\[emerg\] cannot load certificate key "\S+/enc\.key": PEM_read_bio_PrivateKey\(\) failed \(SSL: .*\) in \S+try\.conf:7$}m,
     'an encrypted key without a password fails (no prompt)');
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; ssl_certificate certs/ec-localhost.crt;\n ssl_certificate_key certs/enc.key; ssl_password_file pw; }\n");
is($rc, 0, 'ssl_password_file: each password is tried') or diag $err;

# stapling
($rc, $err) = check("server { listen 127.0.0.1:1 ssl; $C ssl_stapling on; }\n");
like($err, qr{\[warn\] "ssl_stapling" ignored, no OCSP responder URL in the certificate "\S+/ec-localhost\.crt"}m,
     'ssl_stapling without a responder URL: nginx\'s warning');
is($rc, 0, 'and the configuration is fine');

my $serial = qx{openssl x509 -in $d/ec-localhost.crt -noout -serial};
$serial =~ s/^serial=//; chomp $serial;
my $subj = qx{openssl x509 -in $d/ec-localhost.crt -noout -subject -nameopt compat};
$subj =~ s/^subject=//; chomp $subj;
$t->write_file("conf/certs/index.txt", "V\t391231000000Z\t\t$serial\tunknown\t$subj\n");
system("openssl ocsp -index $d/index.txt -rsigner $d/ca.crt -rkey $d/ca.key -CA $d/ca.crt"
       . " -issuer $d/ca.crt -cert $d/ec-localhost.crt -respout $d/ocsp.der -ndays 2 >/dev/null 2>&1") == 0
    or die 'openssl ocsp';

$t->write_config($head . <<'EOF2' . "}\n");
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name tls;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        ssl_stapling on;
        ssl_stapling_file certs/ocsp.der;
        ssl_early_data on;
        location / { return 200 "$https $server_name\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name plain;
        location / { return 200 "$https $server_name\n"; }
    }
EOF2
$t->run;
my $o = Test::Ringx::Certs::s_client($t->port(0), '-status -servername tls',
                                     "GET / HTTP/1.0\r\nHost: tls\r\n\r\n");
like($o, qr/OCSP Response Status: successful/, 'ssl_stapling_file: the response is stapled');
like($o, qr/^on tls$/m, 'ssl on the second server\'s listen line: the address is TLS for both');
$o = Test::Ringx::Certs::s_client($t->port(0), '-servername plain', "GET / HTTP/1.0\r\nHost: plain\r\n\r\n");
like($o, qr/^on plain$/m, 'a server without a certificate on it is served with the default one\'s');

like(Test::Ringx::Certs::s_client($t->port(0), '-servername tls', "GET / HTTP/1.0\r\nHost: tls\r\n\r\n"),
     qr/^on tls$/m, 'and the server works without early data');

{
    # `ssl on;` is honoured: the server's listen socket speaks TLS
    my $t2 = Test::Ringx->new;
    Test::Ringx::Certs::make($t2->prefix . '/conf/certs', 'localhost');
    $t2->write_config($head . <<'EOF2' . "}\n");
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name on.test;
        ssl on;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        location / { return 200 "https=$https scheme=$scheme\n"; }
    }
EOF2
    $t2->run;
    like(Test::Ringx::Certs::s_client($t2->port(0), '-servername on.test',
                                      "GET / HTTP/1.0\r\nHost: on.test\r\n\r\n"),
         qr/^https=on scheme=https$/m, 'ssl on: the listen socket speaks TLS');
    my $raw = $t2->http($t2->port(0), "GET / HTTP/1.0\r\nHost: on.test\r\n\r\n", timeout => 3) // '';
    like($raw, qr{^HTTP/1\.1 400 .*The plain HTTP request was sent to HTTPS port}s,
         'ssl on: plain HTTP there gets nginx\'s 400');
    $t2->stop;
}

my (undef, undef, $v) = $t->ringx('-V');
like($v, qr/--with-http_ssl_module/, '-V lists --with-http_ssl_module');

$t->stop;
done_testing;
