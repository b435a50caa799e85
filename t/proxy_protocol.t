#!/usr/bin/perl
# proxy_protocol.t: `listen ... proxy_protocol` on a plain and a TLS
# listener. Debian's haproxy in front sends v1 (send-proxy), v2
# (send-proxy-v2) and v2 with TLVs (proxy-v2-options ssl,cert-cn,...,
# authority, from a TLS frontend), and speaks TLS to ringx after the
# header; raw sockets send what haproxy would not: headers split in
# pieces, in one packet with the request or the ClientHello, UNKNOWN and
# LOCAL, every TLV name, and the malformed, oversized, truncated and
# stalled headers that must close the connection with nginx's log line.
# $proxy_protocol_* variables, and `real_ip_header proxy_protocol` making
# the header's client the request's ($remote_addr, $remote_port, deny, the
# access log).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use IO::Socket::IP;
use Socket qw(IPPROTO_TCP inet_aton inet_pton AF_INET6);
use Time::HiRes qw(sleep time);
use Test::Ringx;
use Test::Ringx::Certs;

BEGIN {
    eval { require IO::Socket::SSL; 1 } or plan(skip_all => 'no IO::Socket::SSL');
    IO::Socket::SSL->import(qw(SSL_VERIFY_NONE));
}
use constant TCP_CORK => 3;

my $t = Test::Ringx->new;
my $cd = Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost', 'pp.example');
my $vars = 'ra=$remote_addr rp=$remote_port pa=$proxy_protocol_addr '
         . 'pp=$proxy_protocol_port sa=$proxy_protocol_server_addr '
         . 'sp=$proxy_protocol_server_port rra=$realip_remote_addr https=$https';
my $tlvs = 'alpn=$proxy_protocol_tlv_alpn auth=$proxy_protocol_tlv_authority '
         . 'uid=$proxy_protocol_tlv_unique_id ver=$proxy_protocol_tlv_ssl_version '
         . 'cn=$proxy_protocol_tlv_ssl_cn cipher=$proxy_protocol_tlv_ssl_cipher '
         . 'sig=$proxy_protocol_tlv_ssl_sig_alg key=$proxy_protocol_tlv_ssl_key_alg '
         . 'verify=$proxy_protocol_tlv_ssl_verify netns=$proxy_protocol_tlv_netns '
         . 'x05=$proxy_protocol_tlv_0x05 x30=$proxy_protocol_tlv_0x30 '
         . 'sub=$proxy_protocol_tlv_ssl_0x21 crc=$proxy_protocol_tlv_0x03';
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    log_format pp '\$remote_addr|\$proxy_protocol_addr|\$request_uri';
    access_log logs/access.log pp;
    client_header_timeout 2s;
    default_type text/plain;
    root html;

    # the header's addresses in \$proxy_protocol_*, \$remote_addr untouched
    server {
        listen 127.0.0.1:%%PORT_0%% proxy_protocol;
        location / { return 200 "$vars\\n"; }
        location /tlv { return 200 "$tlvs\\n"; }
    }

    # real_ip_header proxy_protocol from a trusted balancer
    server {
        listen 127.0.0.1:%%PORT_1%% proxy_protocol;
        set_real_ip_from 127.0.0.1;
        real_ip_header proxy_protocol;
        location / { return 200 "$vars\\n"; }
        location /deny/ { deny 203.0.113.0/24; allow all; }
    }

    # TLS after the header
    server {
        listen 127.0.0.1:%%PORT_2%% ssl proxy_protocol;
        ssl_certificate certs/rsa-localhost.crt;
        ssl_certificate_key certs/rsa-localhost.key;
        set_real_ip_from 127.0.0.1;
        real_ip_header proxy_protocol;
        location / { return 200 "$vars\\n"; }
    }

    # real_ip_header proxy_protocol from an untrusted balancer
    server {
        listen 127.0.0.1:%%PORT_3%% proxy_protocol;
        set_real_ip_from 10.0.0.0/8;
        real_ip_header proxy_protocol;
        location / { return 200 "$vars\\n"; }
    }
}
EOF
$t->write_file_raw('html/deny/f', "in\n");
my @H = map { $t->port($_) } 5 .. 9;   # haproxy's, free once ringx runs
$t->run;
my ($P0, $P1, $P2, $P3) = map { $t->port($_) } 0 .. 3;

sub v2 {
    my ($vc, $fam, $addrs, $tlv) = @_;
    $tlv //= '';
    return "\r\n\r\n\0\r\nQUIT\n" . pack('CCn', $vc, $fam, length($addrs . $tlv))
           . $addrs . $tlv;
}
sub v4addrs { pack('a4a4nn', inet_aton($_[0]), inet_aton($_[1]), $_[2], $_[3]) }
sub tlv { pack('Cn', $_[0], length $_[1]) . $_[1] }

my $GET = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

# Sends the pieces (one write each, a pause between them) and reads one
# response; returns its body, or undef.
sub exchange {
    my ($port, @pieces) = @_;
    my $c = $t->raw($port) or return undef;
    $c->send_slow(\@pieces, delay => 0.05);
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r ? $r->{body} : undef;
}

# Sends bytes and expects the connection closed without a response.
sub refused {
    my ($port, $bytes, %o) = @_;
    my $c = $t->raw($port) or return 0;
    $c->send($bytes);
    $c->sock->shutdown(1) if $o{eof};
    my $closed = $c->wait_closed($o{wait} // 3);
    my $got = $c->buffer;
    $c->close;
    return $closed && $got eq '';
}

# ---- v1 ----------------------------------------------------------------------

like(exchange($P0, "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n$GET"),
     qr/^ra=127\.0\.0\.1 rp=\d+ pa=192\.0\.2\.1 pp=56324 sa=198\.51\.100\.2 sp=443 rra=127\.0\.0\.1 https=\n\z/,
     'v1 TCP4 in one packet with the request');
like(exchange($P0, "PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n", $GET),
     qr/ pa=2001:db8::1 pp=1 sa=2001:db8::2 sp=65535 /, 'v1 TCP6, the request after it');
like(exchange($P0, "PRO", "XY TCP4 192.0.2.1 ", "198.51.100.2 5 6", "\r", "\n", $GET),
     qr/ pa=192\.0\.2\.1 pp=5 sa=198\.51\.100\.2 sp=6 /,
     'v1 header in five pieces: gathered (nginx refuses it)');
like(exchange($P0, "PROXY TCP4 192.0.2.1 198.51.100.2 7 8\r\nGET / HT", "TP/1.1\r\nHost: x\r\n\r\n"),
     qr/ pa=192\.0\.2\.1 pp=7 /, 'v1 header with part of the request: nothing lost');
like(exchange($P0, "PROXY UNKNOWN\r\n$GET"),
     qr/^ra=127\.0\.0\.1 rp=\d+ pa= pp= sa= sp= /, 'v1 UNKNOWN: no address');

# keepalive: the header is the connection's
{
    my $c = $t->raw($P0);
    $c->send("PROXY TCP4 192.0.2.9 198.51.100.2 1000 80\r\n"
             . "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    my @r = $c->read_responses(2, timeout => 3);
    is(scalar(grep { $_->{body} =~ / pa=192\.0\.2\.9 / } @r), 2,
       'two pipelined requests after one header: both see it');
    $c->send("GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    like($r ? $r->{body} : '', qr/ pa=192\.0\.2\.9 /, 'a later keepalive request too');
    $c->close;
}

# ---- v2 ----------------------------------------------------------------------

my $ssl_tlv = tlv(0x20, pack('CN', 0x07, 0) . tlv(0x21, 'TLSv1.3') . tlv(0x22, 'client one')
                  . tlv(0x23, 'TLS_AES_256_GCM_SHA384') . tlv(0x24, 'RSA-SHA256')
                  . tlv(0x25, 'RSA2048'));
my $all_tlvs = tlv(0x01, 'h2') . tlv(0x02, 'pp.example') . tlv(0x05, 'id-1')
             . $ssl_tlv . tlv(0x30, 'blue') . tlv(0x04, "\0\0");
my $hdr = v2(0x21, 0x11, v4addrs('203.0.113.7', '192.0.2.10', 50000, 8443), $all_tlvs);
like(exchange($P0, $hdr . $GET),
     qr/ pa=203\.0\.113\.7 pp=50000 sa=192\.0\.2\.10 sp=8443 /, 'v2 TCP4 with TLVs');
is(exchange($P0, $hdr . "GET /tlv HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
   "alpn=h2 auth=pp.example uid=id-1 ver=TLSv1.3 cn=client one "
   . "cipher=TLS_AES_256_GCM_SHA384 sig=RSA-SHA256 key=RSA2048 verify=0 netns=blue "
   . "x05=id-1 x30=blue sub=TLSv1.3 crc=\n",
   'v2 TLVs by every name, 0xNN and ssl_0xNN');
like(exchange($P0, substr($hdr, 0, 10), substr($hdr, 10, 7), substr($hdr, 17), $GET),
     qr/ pa=203\.0\.113\.7 /, 'v2 header in three pieces: gathered');
like(exchange($P0, v2(0x21, 0x21, inet_pton(AF_INET6, '2001:db8::5')
                               . inet_pton(AF_INET6, '::1') . pack('nn', 12345, 80)) . $GET),
     qr/ pa=2001:db8::5 pp=12345 sa=::1 sp=80 /, 'v2 TCP6');
like(exchange($P0, v2(0x20, 0x11, v4addrs('203.0.113.7', '192.0.2.10', 1, 2)) . $GET),
     qr/^ra=127\.0\.0\.1 rp=\d+ pa= pp= /, 'v2 LOCAL: no address');
like(exchange($P0, v2(0x21, 0x11, v4addrs('203.0.113.7', '192.0.2.10', 1, 2),
                      tlv(0x02, 'x') . "\x05\x00\x09ab") . "GET /tlv HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
     qr/^alpn= auth=x uid= /, 'v2 with a broken TLV: the ones before it read, the rest absent');
ok($t->log_contains(qr/\[error\] .*broken PROXY protocol TLV "unique_id"/),
   'a broken TLV is logged when read');

# ---- realip from the header --------------------------------------------------

like(exchange($P1, "PROXY TCP4 203.0.113.9 198.51.100.2 5555 443\r\n$GET"),
     qr/^ra=203\.0\.113\.9 rp=5555 pa=203\.0\.113\.9 pp=5555 .* rra=127\.0\.0\.1 /,
     'real_ip_header proxy_protocol: $remote_addr and $remote_port from the header');
like(exchange($P1, v2(0x21, 0x11, v4addrs('203.0.113.10', '192.0.2.10', 4444, 443)) . $GET),
     qr/^ra=203\.0\.113\.10 rp=4444 /, 'real_ip_header proxy_protocol with v2');
like(exchange($P1, "PROXY UNKNOWN\r\n$GET"), qr/^ra=127\.0\.0\.1 /,
     'real_ip_header proxy_protocol, UNKNOWN: the balancer itself');
like(exchange($P3, "PROXY TCP4 203.0.113.9 198.51.100.2 5555 443\r\n$GET"),
     qr/^ra=127\.0\.0\.1 rp=\d+ pa=203\.0\.113\.9 /, 'an untrusted balancer: not applied');
{
    my $c = $t->raw($P1);
    $c->send("PROXY TCP4 203.0.113.9 198.51.100.2 5555 443\r\n"
             . "GET /deny/f HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    is($r && $r->{status}, 403, 'deny by the header\'s client');
    ok($t->log_contains(qr/access forbidden by rule, client: 203\.0\.113\.9,/),
       'the error log names the header\'s client');
}

# ---- TLS after the header ------------------------------------------------------

# Sends $pre on a new connection, then a TLS handshake and a request; with
# cork, the header and the ClientHello leave in one segment.
sub tls_after {
    my ($pre, %o) = @_;
    my $s = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $P2, Timeout => 3)
        or return "connect: $!";
    $s->autoflush(1);
    setsockopt($s, IPPROTO_TCP, TCP_CORK, 1) if $o{cork};
    for my $p (ref $pre ? @$pre : ($pre)) {
        syswrite($s, $p);
        sleep 0.05 unless $o{cork};
    }
    IO::Socket::SSL->start_SSL($s, SSL_verify_mode => SSL_VERIFY_NONE(),
                               SSL_hostname => 'localhost', Timeout => 5)
        or return "handshake: $IO::Socket::SSL::SSL_ERROR";
    print $s $GET;
    local $/;
    my $raw = <$s> // '';
    close $s;
    my ($r) = Test::Ringx::parse_responses($raw);
    return $r ? $r->{body} : "no response: $raw";
}

like(tls_after("PROXY TCP4 203.0.113.20 198.51.100.2 6000 443\r\n"),
     qr/^ra=203\.0\.113\.20 rp=6000 .* https=on\n\z/, 'TLS listener: v1 header, then the handshake');
like(tls_after("PROXY TCP4 203.0.113.21 198.51.100.2 6001 443\r\n", cork => 1),
     qr/^ra=203\.0\.113\.21 .* https=on/,
     'TLS listener: the header and the ClientHello in one segment');
like(tls_after(["PROXY TCP4 203.0", ".113.22 198.51.100.2 6002 443\r\n"]),
     qr/^ra=203\.0\.113\.22 /, 'TLS listener: the header in two pieces');
like(tls_after(v2(0x21, 0x11, v4addrs('203.0.113.23', '192.0.2.10', 6003, 443))),
     qr/^ra=203\.0\.113\.23 rp=6003 .* https=on/, 'TLS listener: v2 header');
{
    my $c = $t->raw($P2);
    $c->send("PROXY TCP4 203.0.113.24 198.51.100.2 1 2\r\n$GET");
    my $r = $c->read_response(timeout => 3);
    is($r && $r->{status}, 400, 'TLS listener: plain HTTP after the header gets the 497 answer (400)');
    $c->close;
}

# ---- refused headers -------------------------------------------------------------

my $server0 = "client: 127\\.0\\.0\\.1, server: 127\\.0\\.0\\.1:$P0";
ok(refused($P0, $GET), 'no header (an HTTP request): closed without a response');
ok($t->wait_for(sub { $t->log_contains(
       qr/\[error\] .*broken header: "GET \/ HTTP\/1\.1" while reading PROXY protocol, $server0$/) }),
   'logged in nginx\'s words, naming the client');
ok(refused($P0, "PROXY TCP4 192.0.2.1 198.51.100.2 1\r\n"), 'v1 without a port: closed');
ok($t->wait_for(sub { $t->log_contains(qr/broken header: "PROXY TCP4 192\.0\.2\.1 198\.51\.100\.2 1" while reading PROXY protocol/) }),
   'v1 without a port: logged');
ok(refused($P0, "PROXY UNKNOWN " . ('a' x 120)), 'v1 of 134 bytes without CRLF: closed');
ok($t->wait_for(sub { $t->log_contains(qr/broken header: "PROXY UNKNOWN a{93}" while/) }),
   'oversized v1: logged with its first 107 bytes');
ok(refused($P0, v2(0x21, 0x11, v4addrs('1.2.3.4', '5.6.7.8', 1, 2), "\0" x 5000)),
   'v2 of 5044 bytes: closed');
ok($t->wait_for(sub { $t->log_contains(qr/\[error\] .*header is too large while reading PROXY protocol, $server0/) }),
   'v2 too large: logged');
ok(refused($P0, "\r\n\r\n\0\r\nQUIT\n\x11\x11\0\x0c" . v4addrs('1.2.3.4', '5.6.7.8', 1, 2)),
   'v2 signature with version 1: closed');
ok($t->wait_for(sub { $t->log_contains(qr/unknown PROXY protocol version: 1 while reading PROXY protocol/) }),
   'v2 version 1: logged');
ok(refused($P0, v2(0x21, 0x11, "\1\2\3\4\5\6\7\x08")), 'v2 TCP4 with 8 address bytes: closed');
ok($t->wait_for(sub { $t->log_contains(qr/broken header: the PROXY protocol v2 address block is too short/) }),
   'short v2 address block: logged');
ok(refused($P0, "PROXY TCP4 192.0.2.1", eof => 1), 'truncated v1, then EOF: closed');
ok($t->wait_for(sub { $t->log_contains(qr/broken header: "PROXY TCP4 192\.0\.2\.1" while reading PROXY protocol/) }),
   'truncated v1: logged');
ok(refused($P0, substr($hdr, 0, 20), eof => 1), 'truncated v2, then EOF: closed');
ok($t->wait_for(sub { $t->log_contains(qr/broken header: "\\x0D\\x0A\\x0D\\x0A\\x00\\x0D\\x0AQUIT\\x0A!\\x11\\x00\\x[0-9A-F]{2}" while/) }),
   'truncated v2: logged, escaped');
ok(refused($P2, "\x16\x03\x01\x00\x05hello"), 'TLS listener, a ClientHello without header: closed');
ok($t->wait_for(sub { $t->log_contains(qr/broken header: "\\x16\\x03\\x01\\x00\\x05hello" while reading PROXY protocol, client: 127\.0\.0\.1, server: 127\.0\.0\.1:$P2/) }),
   'TLS listener: logged before any handshake');
{
    my $c = $t->raw($P0);
    $c->send("PROXY TCP4 192.0.2.1 ");
    my $t0 = time;
    ok($c->wait_closed(6), 'a header that stalls: closed');
    cmp_ok(time - $t0, '>=', 1.5, '... after client_header_timeout');
    $c->close;
    ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client timed out \(110: .*\) while reading PROXY protocol, $server0/) }),
       'the timeout is logged while reading PROXY protocol');
}
{
    # a balancer's health check: connect, close; nothing to log
    my $mark = () = $t->log_contains(qr/while reading PROXY protocol/);
    my $c = $t->raw($P0);
    $c->close;
    $c = $t->raw($P0);
    $c->send("PROXY TCP4 192.0.2.1 198.51.100.2 1 2\r\n");
    $c->close;
    like(exchange($P0, "PROXY UNKNOWN\r\n$GET"), qr/^ra=/, 'the next connection is served');
    my $now = () = $t->log_contains(qr/while reading PROXY protocol/);
    is($now, $mark, 'connect-and-close and a header alone are not logged');
}

ok($t->wait_for(sub { ($t->read_file('logs/access.log') // '') =~ /^203\.0\.113\.9\|203\.0\.113\.9\|\/$/m }),
   'access log: $remote_addr from the header with realip');

# ---- haproxy in front ------------------------------------------------------------

SKIP: {
    my $haproxy = `command -v haproxy 2>/dev/null`;
    chomp $haproxy;
    skip 'no haproxy (Debian: apt-get install haproxy; auto/deps test installs it)', 13
        unless $haproxy;
    my ($H1, $H2, $H3, $H4, $H5) = @H;
    my $pem = $t->prefix . '/conf/certs/haproxy.pem';
    $t->write_file_raw('conf/certs/haproxy.pem',
        $t->read_file('conf/certs/rsa-pp.example.crt') . $t->read_file('conf/certs/rsa-pp.example.key'));
    my $ca = $t->prefix . '/conf/certs/ca.crt';
    my $cfg = $t->prefix . '/conf/haproxy.cfg';
    $t->write_file_raw('conf/haproxy.cfg', <<"EOF");
global
    maxconn 100
defaults
    mode tcp
    timeout connect 3s
    timeout client 10s
    timeout server 10s
listen v1
    bind 127.0.0.1:$H1
    server s 127.0.0.1:$P0 send-proxy
listen v2
    bind 127.0.0.1:$H2
    server s 127.0.0.1:$P1 send-proxy-v2
listen v2tls
    bind 127.0.0.1:$H3 ssl crt $pem ca-file $ca verify optional alpn http/1.1
    server s 127.0.0.1:$P0 send-proxy-v2 proxy-v2-options ssl,cert-cn,ssl-cipher,cert-sig,cert-key,authority,crc32c
listen v1ssl
    bind 127.0.0.1:$H4
    server s 127.0.0.1:$P2 send-proxy ssl verify none
listen v2ssl
    bind 127.0.0.1:$H5
    server s 127.0.0.1:$P2 send-proxy-v2 ssl verify none
EOF
    my $check = `$haproxy -c -f $cfg 2>&1`;
    ok($? == 0, 'haproxy accepts its configuration') or diag($check);
    my $pid = fork;
    if (!$pid) {
        open STDOUT, '>', $t->prefix . '/logs/haproxy.log';
        open STDERR, '>&', \*STDOUT;
        exec $haproxy, '-db', '-f', $cfg;
        exit 127;
    }
    my $up = Test::Ringx::wait_for(sub { $t->connect_ok($H5) }, 10);
    ok($up, 'haproxy listens') or diag($t->read_file('logs/haproxy.log'));

    my %c3 = (local => '127.0.0.3');
    my $via = sub {
        my ($port, $uri) = @_;
        my $c = $t->raw($port, %c3) or return '';
        $c->send("GET $uri HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        my $r = $c->read_response(timeout => 5);
        return $r ? $r->{body} : '';
    };
    like($via->($H1, '/'), qr/^ra=127\.0\.0\.1 rp=\d+ pa=127\.0\.0\.3 pp=\d+ sa=127\.0\.0\.1 sp=$H1 /,
         'haproxy send-proxy (v1): the client in $proxy_protocol_addr');
    like($via->($H2, '/'), qr/^ra=127\.0\.0\.3 rp=\d+ pa=127\.0\.0\.3 .* rra=127\.0\.0\.1 /,
         'haproxy send-proxy-v2 with realip: the client in $remote_addr');
    like($via->($H4, '/'), qr/^ra=127\.0\.0\.3 .* https=on\n/,
         'haproxy send-proxy (v1), then TLS to ringx');
    like($via->($H5, '/'), qr/^ra=127\.0\.0\.3 .* https=on\n/,
         'haproxy send-proxy-v2, then TLS to ringx');

    # TLS to haproxy, with SNI and a client certificate: v2 TLVs about it
    my $s = IO::Socket::SSL->new(PeerHost => '127.0.0.1', PeerPort => $H3,
        LocalAddr => '127.0.0.3', SSL_verify_mode => SSL_VERIFY_NONE(),
        SSL_hostname => 'pp.example', SSL_alpn_protocols => ['http/1.1'],
        SSL_cert_file => "$cd/client.crt", SSL_key_file => "$cd/client.key",
        Timeout => 5);
    ok($s, 'TLS to haproxy') or diag("$IO::Socket::SSL::SSL_ERROR");
    my $body = '';
    if ($s) {
        print $s "GET /tlv HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        local $/;
        my ($r) = Test::Ringx::parse_responses(<$s> // '');
        $body = $r ? $r->{body} : '';
        close $s;
    }
    like($body, qr/^alpn=http\/1\.1 /, 'haproxy v2 TLV: alpn');
    like($body, qr/ auth=pp\.example /, 'haproxy v2 TLV: authority (SNI)');
    like($body, qr/ ver=TLSv1\.[23] /, 'haproxy v2 TLV: ssl_version');
    like($body, qr/ cn=client one /, 'haproxy v2 TLV: ssl_cn (the client certificate)');
    like($body, qr/ cipher=\S+ sig=\S+ key=\S+ /, 'haproxy v2 TLV: ssl_cipher, ssl_sig_alg, ssl_key_alg');
    like($body, qr/ verify=0 /, 'haproxy v2 TLV: ssl_verify 0 (verified)');
    like($body, qr/ crc=.{4}\n\z/s, 'haproxy v2 TLV: 0x03 (crc32c, 4 binary bytes) by its number');
    diag($body) unless $body =~ /^alpn=http/;

    kill 'TERM', $pid;
    waitpid($pid, 0);
}

$t->stop;
done_testing;
