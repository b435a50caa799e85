#!/usr/bin/perl
# ssl_ktls.t: files over TLS with kTLS. Where the kernel has the "tls"
# ULP, the kernel takes the write keys at the end of the handshake
# (/proc/net/tls_stat counts the connection), file bodies go by
# sendfile(2) (the worker's rchar grows by the file: io_uring reads do not
# count there, sendfile does), and everything a client can check still
# holds: bodies by sha256 over TLS 1.2 and 1.3 with AES-GCM and
# ChaCha20, keepalive mixing small and large responses, a slow reader,
# session tickets (sent by the kernel as handshake records) that resume,
# close_notify on Connection: close. A CBC cipher and
# `ssl_conf_command Options -KTLS` stay in user space. The same
# client-side checks run on a kernel without kTLS (the read-and-encrypt
# path); only the kernel-side assertions are skipped there, saying why.
# t/vm/run runs this file under a kernel that has kTLS.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use Digest::SHA qw(sha256_hex);
use IO::Select;
use Socket qw(AF_INET SOCK_STREAM IPPROTO_TCP inet_aton sockaddr_in
              pack_sockaddr_in INADDR_LOOPBACK);
use Time::HiRes qw(sleep);

BEGIN {
    eval { require IO::Socket::SSL; require Net::SSLeay; 1 }
        or plan(skip_all => 'no IO::Socket::SSL');
    IO::Socket::SSL->import(qw(SSL_VERIFY_NONE));
}
plan(skip_all => 'no curl') if system('curl --version >/dev/null 2>&1');

# Whether this kernel attaches the "tls" ULP to a connected TCP socket
# (what ringx probes before it asks OpenSSL for kTLS).
sub ktls_probe {
    my $TCP_ULP = 31;
    socket(my $l, AF_INET, SOCK_STREAM, 0) or return "socket: $!";
    bind($l, pack_sockaddr_in(0, INADDR_LOOPBACK)) or return "bind: $!";
    listen($l, 1) or return "listen: $!";
    socket(my $s, AF_INET, SOCK_STREAM, 0) or return "socket: $!";
    connect($s, getsockname($l)) or return "connect: $!";
    setsockopt($s, IPPROTO_TCP, $TCP_ULP, "tls\0") or return "setsockopt(TCP_ULP, \"tls\"): $!";
    return '';
}
my $no_ktls = ktls_probe();
diag($no_ktls ? "no kTLS here ($no_ktls): the kernel-side assertions are skipped"
              : 'kTLS: this kernel has the tls ULP');

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
    sendfile on;
    ssl_certificate certs/ec-localhost.crt;
    ssl_certificate_key certs/ec-localhost.key;
    ssl_ciphers HIGH:!aNULL:!MD5;
    ssl_session_cache shared:K:1m;
    root html;
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        server_name localhost;
        location = /p { return 200 "p=$ssl_protocol c=$ssl_cipher\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%% ssl;
        server_name localhost;
        ssl_conf_command Options -KTLS;
        location = /p { return 200 "p=$ssl_protocol c=$ssl_cipher\n"; }
    }
}
EOF

my $BIG = 8 * 1048576;
system("head -c $BIG /dev/urandom > " . $t->prefix . '/html/big.bin') == 0 or die;
my $sha_big = sha256_hex($t->read_file('html/big.bin'));
my $small = join '', map { chr(97 + $_ % 26) } 1 .. 3000;
$t->write_file_raw('html/small.txt', $small);

$t->run;
my ($P0, $P1) = ($t->port(0), $t->port(1));
my ($w) = $t->wait_workers(1);

# ---- what the kernel and the worker say --------------------------------------

sub tls_stat {
    my %s;
    open my $fh, '<', '/proc/net/tls_stat' or return {};
    while (<$fh>) {
        $s{$1} = $2 if /^(\w+)\s+(\d+)/;
    }
    return \%s;
}

# On the epoll backend (RINGX_EVENTS=epoll) the worker reads files with
# preadv2 and its thread pool's preads, which rchar counts as it counts
# sendfile: "read and encrypted" cannot be told from rchar there.
my $EPOLL_READS = ($ENV{RINGX_EVENTS} // '') eq 'epoll'
    && 'on epoll, file reads are preadv2/pread calls, which rchar counts too';

sub rchar {
    open my $fh, '<', "/proc/$w/io" or return 0;
    while (<$fh>) {
        return $1 if /^rchar:\s+(\d+)/;
    }
    return 0;
}

# Runs $code (a download), then says how many connections the kernel
# took over (TlsTxSw) and how many file bytes the worker passed by
# sendfile in the meantime.
sub measured {
    my ($code) = @_;
    my ($s0, $r0) = (tls_stat(), rchar());
    my @ret = $code->();
    my ($s1, $r1) = (tls_stat(), rchar());
    return (($s1->{TlsTxSw} // 0) - ($s0->{TlsTxSw} // 0), $r1 - $r0, @ret);
}

sub curl_sha {
    my ($opts, $url) = @_;
    my $out = qx{curl -sk --max-time 60 $opts $url | sha256sum};
    return (split ' ', $out)[0] // '';
}

# ---- one case per TLS version and cipher --------------------------------------

my @cases = (
    [ 'TLS 1.3 AES-GCM',  "--tlsv1.3 --tls13-ciphers TLS_AES_128_GCM_SHA256", 1 ],
    [ 'TLS 1.3 AES-256',  "--tlsv1.3 --tls13-ciphers TLS_AES_256_GCM_SHA384", 1 ],
    [ 'TLS 1.3 ChaCha20', "--tlsv1.3 --tls13-ciphers TLS_CHACHA20_POLY1305_SHA256", 1 ],
    [ 'TLS 1.2 AES-GCM',  "--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-GCM-SHA256", 1 ],
    [ 'TLS 1.2 CBC',      "--tlsv1.2 --tls-max 1.2 --ciphers ECDHE-ECDSA-AES128-SHA", 0 ],
);
for my $case (@cases) {
    my ($name, $opts, $kernel) = @$case;
    is(qx{curl -sk --max-time 10 $opts https://127.0.0.1:$P0/p} =~ /^p=TLSv1\.[23] c=\S+$/ ? 'ok' : 'no',
       'ok', "$name: the handshake");
    my ($ktls, $rchar, $sha) = measured(sub { curl_sha($opts, "https://127.0.0.1:$P0/big.bin") });
    is($sha, $sha_big, "$name: 8 MiB arrive intact");
    SKIP: {
        skip("no kTLS: $no_ktls", 2) if $no_ktls;
        if ($kernel) {
            is($ktls, 1, "$name: the kernel encrypts (TlsTxSw +1)");
            cmp_ok($rchar, '>=', $BIG, "$name: the body went by sendfile");
        } else {
            is($ktls, 0, "$name: not a kTLS cipher, user space encrypts");
            SKIP: {
                skip($EPOLL_READS, 1) if $EPOLL_READS;
                cmp_ok($rchar, '<', $BIG / 2, "$name: the body was read and encrypted");
            }
        }
    }
}

# ---- turned off -----------------------------------------------------------------

{
    my ($ktls, $rchar, $sha) = measured(sub {
        curl_sha('--tlsv1.3', "https://127.0.0.1:$P1/big.bin") });
    is($sha, $sha_big, 'Options -KTLS: 8 MiB arrive intact');
    SKIP: {
        skip("no kTLS: $no_ktls", 2) if $no_ktls;
        is($ktls, 0, 'Options -KTLS: the kernel is not asked');
        SKIP: {
            skip($EPOLL_READS, 1) if $EPOLL_READS;
            cmp_ok($rchar, '<', $BIG / 2, 'Options -KTLS: read and encrypted');
        }
    }
}

# ---- keepalive: small (from memory) and large (sendfile) in turn ------------------

{
    my $u = "https://127.0.0.1:$P0";
    my ($ktls, $rchar, $out) = measured(sub {
        scalar qx{curl -sk --max-time 60 --tlsv1.3 -w '%{num_connects} ' -o /dev/null $u/small.txt -o /dev/null $u/big.bin -o /dev/null $u/small.txt -o /dev/null $u/big.bin 2>&1} });
    is($out, '1 0 0 0 ', 'keepalive: four responses on one connection');
    my $s = IO::Socket::SSL->new(PeerAddr => '127.0.0.1', PeerPort => $P0,
        SSL_verify_mode => SSL_VERIFY_NONE(), SSL_hostname => 'localhost',
        Timeout => 10) or diag("connect: $IO::Socket::SSL::SSL_ERROR");
    my $req = join '', map { "GET $_ HTTP/1.1\r\nHost: localhost\r\n\r\n" }
                       '/small.txt', '/big.bin', '/small.txt', '/p';
    print $s $req;
    my @got;
    for my $want ('/small.txt', '/big.bin', '/small.txt', '/p') {
        my $head = '';
        while ($head !~ /\r\n\r\n\z/) {
            last unless defined(my $c = getc $s);
            $head .= $c;
        }
        my ($len) = $head =~ /Content-Length: (\d+)/i;
        my $body = '';
        while (defined $len && length $body < $len) {
            my $n = read($s, $body, $len - length $body, length $body);
            last unless $n;
        }
        push @got, $body;
    }
    is(length $got[0], length $small, 'pipelined: the small file');
    is(sha256_hex($got[1]), $sha_big, 'pipelined: the big file behind it');
    is($got[2], $small, 'pipelined: the small file again');
    like($got[3], qr/^p=TLSv1\.3 /, 'pipelined: a response from memory last');
    close $s;
    SKIP: {
        skip("no kTLS: $no_ktls", 1) if $no_ktls;
        cmp_ok($rchar, '>=', 2 * $BIG, 'keepalive: both large bodies by sendfile');
    }
}

# ---- a slow reader: the socket fills, sendfile waits for POLLOUT --------------------

{
    my $s = IO::Socket::SSL->new(PeerAddr => '127.0.0.1', PeerPort => $P0,
        SSL_verify_mode => SSL_VERIFY_NONE(), SSL_hostname => 'localhost',
        Timeout => 10);
    print $s "GET /big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    my $buf = '';
    for (1 .. 20) {                 # 20 × 16 KiB with pauses, then the rest
        my $n = sysread($s, my $b, 16384);
        last unless $n;
        $buf .= $b;
        sleep 0.05;
    }
    while (1) {
        my $n = read($s, my $b, 1 << 20);
        last unless $n;
        $buf .= $b;
    }
    my ($body) = $buf =~ /\r\n\r\n(.*)\z/s;
    is(sha256_hex($body // ''), $sha_big, 'a slow reader gets the file whole');
    my $ssl = $s->_get_ssl_object;
    ok($ssl && (Net::SSLeay::get_shutdown($ssl) & 2),
       'Connection: close ends with the server\'s close_notify');
    close $s;
}

# ---- session tickets, written by OpenSSL through the kernel ------------------------

{
    my $sess = $t->prefix . '/ticket.pem';
    my $req = "GET /p HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    my $o1 = Test::Ringx::Certs::s_client($P0, "-tls1_3 -sess_out $sess", $req);
    like($o1, qr/p=TLSv1\.3 /, 'tickets: the first connection');
    my $o2 = Test::Ringx::Certs::s_client($P0, "-tls1_3 -sess_in $sess", $req);
    like($o2, qr/^Reused, TLSv1\.3/m, 'tickets: the ticket resumes a session');
    like($o2, qr/p=TLSv1\.3 /, 'tickets: the resumed connection answers');
}

my @loud = grep { /\[(?:warn|error|crit|alert|emerg)\]/ }
           split /\n/, $t->read_file('logs/error.log') // '';
ok(!@loud, 'nothing logged above notice') or diag(join "\n", @loud);

$t->stop;
done_testing();
