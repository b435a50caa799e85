#!/usr/bin/perl
# proxy_ssl.t: proxy_pass https:// against TLS origins made at test time
# (Test::Upstream::TLS, certificates from the openssl command): requests
# and bodies over TLS, keepalive reuse without a new handshake, session
# resumption, certificate verification (right CA, wrong CA, self-signed,
# name mismatch) with nginx's log lines, SNI on/off and proxy_ssl_name,
# a client certificate with an encrypted key, an origin that closes during
# the handshake, a 20 MB body, and the configuration errors.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Test::Upstream::TLS;

my $t = Test::Ringx->new;
my $conf = $t->prefix . '/conf';
my $c = Test::Upstream::TLS::make_certs($conf);
$t->write_file('conf/pw', "wrong\nsecret\n");

my $o = Test::Upstream::TLS->new(cert => $c->{server_crt},
                                 key => $c->{server_key})->start;
my $self = Test::Upstream::TLS->new(cert => $c->{self_crt},
                                    key => $c->{self_key})->start;
my $mtls = Test::Upstream::TLS->new(cert => $c->{server_crt},
                                    key => $c->{server_key},
                                    client_ca => $c->{ca_crt})->start;
my $cut = Test::Upstream::TLS->new(handshake => 'close')->start;
my ($P, $PS, $PM, $PC) = map { $_->port } $o, $self, $mtls, $cut;

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    log_format up '\$request_uri \$status ua=\$upstream_addr us=\$upstream_status';
    access_log logs/access.log up;
    upstream ka { server 127.0.0.1:$P; keepalive 4; }
    upstream named { server 127.0.0.1:$P; }
    proxy_ssl_session_reuse off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /plain/ { proxy_pass https://127.0.0.1:$P; }
        location /ka/ {
            proxy_pass https://ka;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /sess/ {
            proxy_pass https://127.0.0.1:$P;
            proxy_ssl_session_reuse on;
        }
        location /verify/ {
            proxy_pass https://127.0.0.1:$P;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate ca.crt;
        }
        location /verify-name/ {
            proxy_pass https://127.0.0.1:$P;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate ca.crt;
            proxy_ssl_name localhost;
        }
        location /wrongca/ {
            proxy_pass https://127.0.0.1:$P;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate other_ca.crt;
        }
        location /selfsigned/ {
            proxy_pass https://127.0.0.1:$PS;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate ca.crt;
        }
        location /selfsigned-off/ { proxy_pass https://127.0.0.1:$PS; }
        location /mismatch/ {
            proxy_pass https://127.0.0.1:$P;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate ca.crt;
            proxy_ssl_name other.example;
        }
        location /sni-on/ {
            proxy_pass https://named;
            proxy_ssl_server_name on;
        }
        location /sni-off/ { proxy_pass https://named; }
        location /sni-name/ {
            proxy_pass https://named;
            proxy_ssl_server_name on;
            proxy_ssl_name sni.example:8443;
        }
        location /clientcert/ {
            proxy_pass https://127.0.0.1:$PM;
            proxy_ssl_certificate client.crt;
            proxy_ssl_certificate_key client_enc.key;
            proxy_ssl_password_file pw;
        }
        location /nocert/ { proxy_pass https://127.0.0.1:$PM; }
        location /cut/ { proxy_pass https://127.0.0.1:$PC; }
        location /big/ { proxy_pass https://127.0.0.1:$P/len/; }
        location /var/ {
            set \$up 127.0.0.1:$P;
            proxy_pass https://\$up;
        }
    }
}
EOF
$t->run;
my $port = $t->port(0);

sub get {
    my ($path, %o) = @_;
    my $conn = $t->raw($port) or return undef;
    my $body = $o{body} // '';
    my $m = $o{method} // ($o{body} ? 'POST' : 'GET');
    $conn->send("$m $path HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
                . (length $body ? "Content-Length: " . length($body) . "\r\n"
                                : '') . "\r\n$body");
    return $conn->read_response(timeout => 10);
}

sub last_handshake { ($o->handshakes)[-1] }

# plain requests through https
my $r = get('/plain/x?a=1');
is $r->{status}, 200, 'GET through https';
is $r->{body}, "GET /plain/x?a=1 0\n", 'the origin got the request';
$r = get('/plain/post', body => 'hello world');
is $r->{body}, "POST /plain/post 11\n", 'POST body through https';
ok $o->wait_for(sub { $t->log_contains(qr{^/plain/post 200 ua=127\.0\.0\.1:$P us=200},
                      $t->prefix . '/logs/access.log') }), '$upstream_addr';
is last_handshake()->{reused}, 0, 'session reuse off: no resumption';

# keepalive: one connection, one handshake for three requests
$o->reset;
for my $i (1 .. 3) {
    $r = get("/ka/$i");
    is $r->{body}, "GET /ka/$i 0\n", "keepalive request $i";
}
is $o->connections, 1, 'keepalive: one TCP connection to the origin';
is scalar($o->handshakes), 1, 'keepalive: one handshake';

# session resumption: a new connection offers the last session
$o->reset;
get('/sess/1');
$r = get('/sess/2');
is $r->{status}, 200, 'second request with session reuse';
my @h = $o->handshakes;
is scalar(@h), 2, 'two connections';
is $h[0]{reused}, 0, 'first handshake is full';
is $h[1]{reused}, 1, 'second handshake resumed the session';

# verification
$r = get('/verify/a');
is $r->{status}, 200, 'verify on, right CA, IP checked against the SAN';
$r = get('/verify-name/a');
is $r->{status}, 200, 'verify on with proxy_ssl_name localhost';
$o->reset;
$r = get('/wrongca/a');
is $r->{status}, 502, 'verify on, wrong CA: 502';
ok $t->log_contains(qr/\[error\].*upstream SSL certificate verify error: \(20:unable to get local issuer certificate\) while SSL handshaking to upstream, client: 127\.0\.0\.1, .*request: "GET \/wrongca\/a HTTP\/1\.1", upstream: "https:\/\/127\.0\.0\.1:$P\/wrongca\/a"/),
    'verify error logged as nginx';
is scalar(grep { $_->{type} eq 'request' } $o->events), 0,
    'no request reached the unverified origin';
$r = get('/selfsigned/a');
is $r->{status}, 502, 'verify on, self-signed origin: 502';
ok $t->log_contains(qr/upstream SSL certificate verify error: \(18:self[- ]signed certificate\) while SSL handshaking to upstream/),
    'self-signed logged';
$r = get('/selfsigned-off/a');
is $r->{status}, 200, 'verify off: a self-signed origin is fine';
$r = get('/mismatch/a');
is $r->{status}, 502, 'name mismatch: 502';
ok $t->log_contains(qr/upstream SSL certificate does not match "other\.example" while SSL handshaking to upstream, client: 127\.0\.0\.1/),
    'name mismatch logged';

# SNI
$o->reset;
get('/sni-on/a');
is last_handshake()->{sni}, 'named', 'proxy_ssl_server_name on: SNI is the upstream name';
get('/sni-off/a');
is last_handshake()->{sni}, undef, 'proxy_ssl_server_name off: no SNI';
get('/sni-name/a');
is last_handshake()->{sni}, 'sni.example', 'proxy_ssl_name overrides it (port stripped)';
get('/plain/sni');
is last_handshake()->{sni}, undef, 'no SNI for an IP address';

# client certificate
$r = get('/clientcert/a');
is $r->{status}, 200, 'client certificate accepted';
my ($mh) = grep { $_->{type} eq 'handshake' } $mtls->events;
like $mh->{subject} // '', qr/CN\s*=\s*ringx-client/, 'the origin saw its subject';
$r = get('/nocert/a');
is $r->{status}, 502, 'origin requiring a certificate, none given: 502';

# an origin that closes during the handshake
$r = get('/cut/a');
is $r->{status}, 502, 'closed mid-handshake: 502';
ok $t->log_contains(qr/peer closed connection in SSL handshake.* while SSL handshaking to upstream/),
    'mid-handshake close logged';
ok $cut->connections >= 1, 'the origin saw the connection';

# proxy_pass with variables
$r = get('/var/v');
is $r->{body}, "GET /var/v 0\n", 'https with variables';

# 20 MB over TLS
my $len = 20 * 1024 * 1024;
my $out = $t->prefix . '/big.out';
system('curl', '-s', '-o', $out, '--max-time', '120',
       "http://127.0.0.1:$port/big/$len") == 0 or diag "curl failed";
is -s $out, $len, '20 MB body complete';
open(my $fh, '<', $out) or die;
binmode $fh;
my $sum = Digest::SHA->new(256)->addfile($fh)->hexdigest;
close $fh;
is $sum, sha256_hex(Test::Upstream::pattern($len)), '20 MB body intact';
unlink $out;

$t->stop;

# configuration errors
sub conf_error {
    my ($body, $re, $name) = @_;
    $t->write_file('conf/bad.conf', "events { }\nhttp { server { listen "
                   . "127.0.0.1:%%PORT_1%%; location / { $body } } }\n");
    my ($rc, $stdout, $stderr) = $t->ringx('-t', '-c', 'conf/bad.conf');
    isnt $rc, 0, "$name: -t fails";
    like $stderr, $re, "$name: message";
}
conf_error('proxy_pass https://127.0.0.1:1; proxy_ssl_verify on;',
           qr/\[emerg\] no proxy_ssl_trusted_certificate for proxy_ssl_verify/,
           'verify without trusted certificates');
conf_error('proxy_pass https://127.0.0.1:1; proxy_ssl_certificate client.crt;',
           qr/\[emerg\] no "proxy_ssl_certificate_key" is defined for certificate/,
           'certificate without key');
conf_error('proxy_pass https://127.0.0.1:1; proxy_ssl_trusted_certificate nope.crt;',
           qr/\[emerg\] SSL_CTX_load_verify_locations\(".*nope\.crt"\) failed/,
           'missing trusted file');
conf_error('proxy_pass https://127.0.0.1:1; proxy_ssl_certificate client.crt; '
           . 'proxy_ssl_certificate_key client_enc.key;',
           qr/\[emerg\] cannot load certificate key ".*client_enc\.key"/,
           'encrypted key without its password');
conf_error('proxy_pass https://127.0.0.1:1; proxy_ssl_protocols TLSv1.4;',
           qr/\[emerg\] invalid value "TLSv1\.4" in "proxy_ssl_protocols"/,
           'unknown protocol');
conf_error('proxy_pass https://127.0.0.1:1; proxy_ssl_ciphers NOPE-CIPHER;',
           qr/\[emerg\] SSL_CTX_set_cipher_list\("NOPE-CIPHER"\) failed/,
           'bad cipher list');
conf_error('proxy_pass https://127.0.0.1:1; proxy_ssl_conf_command Nope x;',
           qr/\[emerg\] SSL_CONF_cmd\("Nope", "x"\) failed/,
           'bad conf command');

done_testing;
