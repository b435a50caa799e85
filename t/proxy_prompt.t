#!/usr/bin/perl
# proxy_prompt.t: what a proxied response owes the client at once, with
# proxy_read_timeout at 30 s so that waiting for the upstream cannot pass:
#   - a 304, a 204 and a HEAD response that announce a length (or chunked)
#     end with their header; the pooled upstream connection then serves
#     the next request with its own answer (no desync);
#   - a 101 reaches a client that sends nothing after its upgrade request
#     (as browsers do), on a plain and a TLS listener; an origin that
#     speaks first is heard without the client sending, and the client's
#     bytes still go through;
#   - with proxy_buffering off the header leaves before the first body byte.
# Every "at once" is a read with a 2 s deadline.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Select;
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use Test::Upstream;
use Time::HiRes qw(time);

my $HAVE_SSL = eval { require IO::Socket::SSL; 1 };
my $NOW = 2 * $Test::Ringx::SCALE;          # "at once"

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    proxy_read_timeout 30s;
    upstream pool { server $UP; keepalive 4; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen 127.0.0.1:%%PORT_1%% ssl;
        server_name localhost;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        location /ka/ {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /nobuf/ {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }
        location /ws/ {
            proxy_pass http://$UP;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection "upgrade";
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);
my $PS = $t->port(1);

# Reads from a plain or TLS socket until $done->($buf) or the deadline;
# returns what was read.
sub read_until {
    my ($s, $done, $timeout) = @_;
    my $buf = '';
    my $deadline = time + $timeout;
    my $sel = IO::Select->new($s);
    my $tls = $s->isa('IO::Socket::SSL');
    until ($done->($buf)) {
        my $left = $deadline - time;
        last if $left <= 0;
        next unless ($tls && $s->pending) || $sel->can_read($left);
        my $n = sysread($s, my $chunk, 65536);
        if (!defined $n && $tls && $!{EAGAIN}) {
            next;                     # a TLS record that held no data
        }
        last unless $n;
        $buf .= $chunk;
    }
    return $buf;
}

sub head_of { my ($b) = @_; return $b =~ /\A(.*?\r\n\r\n)/s ? $1 : undef }

# --- bodyless responses with a length, over one pooled connection -----------

{
    my @cases = (
        ['GET', '/ka/headers/304?Content-Length=10', 304, 10,
         'a 304 with Content-Length'],
        ['GET', '/ka/headers/204?Content-Length=10', 204, undef,
         'a 204 with Content-Length'],
        ['HEAD', '/ka/len/100', 200, 100, 'HEAD with Content-Length'],
        ['HEAD', '/ka/headers/200?Transfer-Encoding=chunked', 200, undef,
         'HEAD answered with Transfer-Encoding: chunked'],
    );
    $up->reset;
    for my $case (@cases) {
        my ($m, $uri, $st, $len, $name) = @$case;
        my $c = $t->raw($P, timeout => 10);
        $c->send("$m $uri HTTP/1.1\r\nHost: localhost\r\n\r\n");
        my $r = $c->read_response(timeout => $NOW, head => $m eq 'HEAD');
        ok $r, "$name: the response arrives at once" or next;
        is $r->{status}, $st, "$name: $st";
        is $r->{headers}{'content-length'}, $len,
            "$name: " . (defined $len ? 'the upstream\'s length relayed (nginx)'
                                      : 'no length (RFC 9110 8.6 for a 204)');
        ok !exists $r->{headers}{'transfer-encoding'}, "$name: no Transfer-Encoding";
        is $r->{headers}{connection}, 'keep-alive', "$name: the client connection stays";
        is $r->{body}, '', "$name: no body";

        # the next request, on the same pooled upstream connection
        $c->send("GET /ka/echo HTTP/1.1\r\nHost: localhost\r\n\r\n");
        my $n = $c->read_response(timeout => $NOW);
        ok $n, "$name: the next request is answered" or next;
        like $n->{body}, qr{^uri: /ka/echo$}m, "$name: with its own answer";
        is $n->{headers}{'x-upstream-conn'}, $r->{headers}{'x-upstream-conn'},
            "$name: over the same upstream connection";
        is $n->{headers}{'x-upstream-req'}, $r->{headers}{'x-upstream-req'} + 1,
            "$name: as its next request";
        $c->close;
    }
    is $up->connections, 1, 'one upstream connection served all of them';
}

# --- WebSocket: the 101 without a byte from the client -----------------------

my $UPGRADE = "Host: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";

sub ws_cases {
    my ($label, $open) = @_;
    {
        my $s = $open->();
        syswrite $s, "GET /ws/ws HTTP/1.1\r\n$UPGRADE";
        my $got = read_until($s, sub { $_[0] =~ /\r\n\r\n/ }, $NOW);
        like $got, qr{^HTTP/1\.1 101 }, "$label: the 101 reaches a client that sends nothing more";
        like head_of($got) // '', qr/\r\nUpgrade: websocket\r\n/i, "$label: with Upgrade";
        syswrite $s, 'ping';
        is read_until($s, sub { length $_[0] >= 4 }, $NOW), 'ping',
            "$label: the client speaks after it: echoed through the tunnel";
        close $s;
    }
    {
        my $s = $open->();
        syswrite $s, "GET /ws/ws?hello=hi HTTP/1.1\r\n$UPGRADE";
        my $got = read_until($s, sub { $_[0] =~ /\r\n\r\nhi/ }, $NOW);
        like $got, qr{^HTTP/1\.1 101 .*\r\n\r\nhi\z}s,
            "$label: the origin's first bytes, in the 101's own packet, reach the silent client";
        syswrite $s, 'back';
        is read_until($s, sub { length $_[0] >= 4 }, $NOW), 'back',
            "$label: and the client's bytes still go the other way";
        close $s;
    }
    {
        my $s = $open->();
        syswrite $s, "GET /ws/ws?hello=later&hello_ms=300 HTTP/1.1\r\n$UPGRADE";
        my $got = read_until($s, sub { $_[0] =~ /\r\n\r\n/ }, $NOW);
        like $got, qr{^HTTP/1\.1 101 }, "$label: the 101 first";
        $got =~ s/\A.*?\r\n\r\n//s;
        $got .= read_until($s, sub { length($got) + length($_[0]) >= 5 }, $NOW)
            if length $got < 5;
        is $got, 'later', "$label: the origin speaks first, later: heard without a client byte";
        close $s;
    }
}

ws_cases('plain', sub {
    my $c = $t->raw($P, timeout => 10) or die "connect: $!";
    return $c->sock;
});

SKIP: {
    skip 'no IO::Socket::SSL', 7 unless $HAVE_SSL;
    ws_cases('TLS', sub {
        my $s = IO::Socket::SSL->new(PeerAddr => '127.0.0.1', PeerPort => $PS,
            SSL_verify_mode => 0, SSL_hostname => 'localhost', Timeout => 10)
            or die 'TLS connect: ' . IO::Socket::SSL::errstr();
        $s->blocking(0);           # reads honour the deadline
        $s->autoflush(1);
        return $s;
    });
}

# --- proxy_buffering off: the header before the first body byte --------------

{
    my $c = $t->raw($P, timeout => 10);
    my $s = $c->sock;
    syswrite $s, "GET /nobuf/slow/5?pieces=1&head_ms=5000 HTTP/1.1\r\nHost: localhost\r\n\r\n";
    my $got = read_until($s, sub { $_[0] =~ /\r\n\r\n/ }, $NOW);
    like $got, qr{^HTTP/1\.1 200 .*\r\nContent-Length: 5\r\n}s,
        'proxy_buffering off: the header leaves while the body is still to come';
    $got .= read_until($s, sub { length(($got . $_[0]) =~ s/\A.*?\r\n\r\n//sr) >= 5 },
                       10);
    like $got, qr/\r\n\r\n\Q${\ Test::Upstream::pattern(5)}\E\z/, 'then the body';
    $c->close;
}

$t->stop;
$up->stop;
done_testing;
