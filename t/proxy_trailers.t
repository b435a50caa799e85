#!/usr/bin/perl
# proxy_trailers.t: proxy_pass_trailers (nginx 1.27.x). With on, the
# trailer fields of an upstream's chunked response reach an HTTP/1.1
# client in the trailer section of its chunked response, every body byte
# intact, but for fields that frame or route a message (Content-Length
# ...), which are dropped; with off (the default) they are dropped, as
# nginx does; an HTTP/1.0 client gets the body without them.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::IP;
use POSIX ();
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

# an origin whose trailer section holds a framing field too
my $RAW = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                              Listen => 8, ReuseAddr => 1) or die;
my $RAWPORT = $RAW->sockport;
my $rawpid = fork // die;
if (!$rawpid) {
    while (my $c = $RAW->accept) {
        my $req = '';
        while (defined(my $l = <$c>)) { last if $l eq "\r\n"; }
        print $c "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
               . "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n"
               . "Content-Length: 99\r\nX-Checksum: abc\r\n\r\n";
        close $c;
    }
    POSIX::_exit(0);
}
close $RAW;
END { local $?; if ($rawpid) { kill 'KILL', $rawpid; waitpid($rawpid, 0); } }

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    proxy_http_version 1.1;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /on/ { proxy_pass_trailers on; proxy_pass http://$UP/; }
        location /off/ { proxy_pass http://$UP/; }
        location /raw/ { proxy_pass_trailers on; proxy_pass http://127.0.0.1:$RAWPORT; }
        location /both/ {
            proxy_pass_trailers on;
            proxy_buffers 2 4k;
            proxy_pass http://$UP/;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub get {
    my ($uri, $proto) = @_;
    my $c = $t->raw($P);
    $c->send("GET $uri HTTP/" . ($proto // '1.1') . "\r\nHost: x\r\nTE: trailers\r\n"
             . "Connection: close\r\n\r\n");
    my $raw = $c->read_all(timeout => 10);
    $c->close;
    return $raw;
}

sub trailer_section {
    my ($raw) = @_;
    return $raw =~ /\r\n0\r\n(.*?)\r\n\z/s ? $1 : undef;
}

my $want = Test::Upstream::pattern(300000, 0);
my $raw = get('/on/chunked/300000?trailers=1');
my ($r) = Test::Ringx::parse_responses($raw);
is($r && $r->{status}, 200, 'on: 200');
ok($r && $r->{body} eq $want, 'on: every body byte (300000)');
my $tr = trailer_section($raw) // '';
like($tr, qr/^X-Trailer-One: 1\r$/m, 'on: the first trailer field passes');
like($tr, qr/^X-Trailer-Two: two\r$/m, 'on: the second too');

$raw = get('/off/chunked/3000?trailers=1');
($r) = Test::Ringx::parse_responses($raw);
is($r && $r->{body}, Test::Upstream::pattern(3000, 0), 'off: the body');
is(trailer_section($raw), '', 'off (the default): no trailer fields, as nginx');

$raw = get('/raw/x');
$tr = trailer_section($raw) // '';
like($tr, qr/X-Checksum: abc/, 'a trailer field from a raw origin passes');
unlike($tr, qr/Content-Length/i, 'a framing field (Content-Length) is dropped');

$raw = get('/on/chunked/3000?trailers=1', '1.0');
unlike($raw, qr/X-Trailer-One/, 'HTTP/1.0: no trailers (no chunks)');
like($raw, qr/\Q@{[Test::Upstream::pattern(3000, 0)]}\E\z/, 'HTTP/1.0: the body');

$raw = get('/both/chunked/500000?trailers=1');
($r) = Test::Ringx::parse_responses($raw);
ok($r && $r->{body} eq Test::Upstream::pattern(500000, 0),
   'small buffers (through the temporary file): every byte');
like(trailer_section($raw) // '', qr/X-Trailer-Two: two/, 'and the trailers');

$t->stop;
$up->stop;
done_testing;
