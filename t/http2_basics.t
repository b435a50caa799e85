#!/usr/bin/perl
# http2_basics.t: HTTP/2 (issue #20): h2c with prior knowledge on a plain
# listener with `http2 on`, ALPN h2 with HTTP/1.1 fallback over TLS, the
# deprecated `listen ... http2` and the obsolete http2_* directives with
# nginx's warnings; per stream: static files as DATA frames (whole and
# ranged, through the ring), conditionals, HEAD, return, 404, gzip, many
# streams at once, $request/$server_protocol "HTTP/2.0" and $http2 in the
# access log; request bodies (with and without content-length) through
# proxy_pass; HTTP/1.1 on the same port unchanged.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use Test::Upstream;
use JSON::PP;
use Digest::SHA qw(sha1_hex);

plan(skip_all => 'no curl') if system('curl --version >/dev/null 2>&1');
plan(skip_all => 'curl without HTTP/2') if `curl --version` !~ /\bHTTP2\b/;
plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import h2, hyperframe, hpack" 2>/dev/null');

my $H2C = "$FindBin::Bin/lib/h2client.py";
my $u = Test::Upstream->new;
$u->start;
my $uurl = $u->url;

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
my $big = join '', map { chr(($_ * 7) % 256) } 0 .. 300_000 - 1;
$t->write_file_raw('html/big.bin', $big);
$t->write_file('html/index.html', "hello h2\n");
$t->write_file('html/text.txt', "compress me " x 400);
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    log_format h2 '$request|$status|$body_bytes_sent|$http2|$server_protocol';
    access_log logs/access.log h2;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        http2_idle_timeout 10s;
        http2_max_requests 100;
        root html;
        location / { }
        location /ret { return 200 "ret $http2 $server_protocol\n"; }
        location /gz { gzip on; gzip_min_length 1; gzip_types text/plain; alias html/text.txt; }
        location /p/ { proxy_pass UPSTREAM; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%% ssl http2;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;
        root html;
        location / { }
        location /ret { return 200 "ret $http2 $ssl_alpn_protocol\n"; }
    }
}
EOF
$t->write_config($t->read_file('conf/ringx.conf') =~ s/UPSTREAM/$uurl/r);

my ($rc, $out, $err) = $t->ringx('-t');
is $rc, 0, '-t accepts http2 on, listen ... http2 and the obsolete http2_* directives';
like $err, qr/\[warn\] the "listen \.\.\. http2" directive is deprecated, use the "http2" directive instead in \S+:\d+/,
    'listen ... http2: nginx 1.25\'s warning with file:line';
like $err, qr/\[warn\] the "http2_idle_timeout" directive is obsolete, use the "keepalive_timeout" directive instead/,
    'http2_idle_timeout: nginx\'s obsolete warning';
like $err, qr/\[warn\] the "http2_max_requests" directive is obsolete, use the "keepalive_requests" directive instead/,
    'http2_max_requests: nginx\'s obsolete warning';

$t->run;
my ($p0, $p1) = ($t->port(0), $t->port(1));

sub curl { my $cmd = shift; return scalar `curl -s --max-time 20 $cmd` }

is curl("--http2-prior-knowledge http://127.0.0.1:$p0/ret"), "ret h2c HTTP/2.0\n",
    'h2c with prior knowledge: $http2 is h2c, $server_protocol HTTP/2.0';
is curl("--http1.1 http://127.0.0.1:$p0/ret"), "ret  HTTP/1.1\n",
    'HTTP/1.1 on the same port as before';
is curl("-o /dev/null -w '%{http_version}' --http2-prior-knowledge http://127.0.0.1:$p0/index.html"),
    '2', 'curl saw HTTP/2';

is curl("-k --http2 https://127.0.0.1:$p1/ret"), "ret h2 h2\n", 'TLS: ALPN chose h2, $http2 is h2';
is curl("-k --http1.1 https://127.0.0.1:$p1/ret"), "ret  http/1.1\n",
    'TLS: a client without h2 falls back to http/1.1';

my $got = curl("--http2-prior-knowledge http://127.0.0.1:$p0/big.bin");
is length($got), length($big), 'a 300 KB file: every byte over h2c';
ok $got eq $big, '... and the same bytes';
$got = curl("-k --http2 https://127.0.0.1:$p1/big.bin");
ok $got eq $big, 'the same file over TLS h2';

$got = curl("--http2-prior-knowledge -r 1000-1999 http://127.0.0.1:$p0/big.bin");
ok $got eq substr($big, 1000, 1000), 'a range: those 1000 bytes of the file';

my $head = `curl -s -I --http2-prior-knowledge http://127.0.0.1:$p0/index.html`;
like $head, qr{^HTTP/2 200}m, 'HEAD: 200';
like $head, qr{^content-length: 9\r?$}m, 'HEAD: the content-length of the file';
my ($lm) = $head =~ /^last-modified: (.*?)\r?$/m;
is curl("-o /dev/null -w '%{http_code}' --http2-prior-knowledge -H 'If-Modified-Since: $lm' http://127.0.0.1:$p0/index.html"),
    '304', 'If-Modified-Since: 304';
is curl("-o /dev/null -w '%{http_code}' --http2-prior-knowledge http://127.0.0.1:$p0/nope"),
    '404', 'a missing file: 404';

my $gz = `curl -s --http2-prior-knowledge -H 'Accept-Encoding: gzip' -D - -o /dev/null http://127.0.0.1:$p0/gz`;
like $gz, qr/^content-encoding: gzip\r?$/m, 'gzip applies per stream';
is curl("--http2-prior-knowledge --compressed http://127.0.0.1:$p0/gz"), "compress me " x 400,
    '... and the body inflates to the file';

sub h2 {
    my $o = `/usr/bin/python3 $H2C @_`;
    return eval { decode_json($o) } || { error => $o, responses => [] };
}

my $r = h2($p0, 'request', '--streams', 20, '--path', '/big.bin');
is scalar(grep { ($_->{status} // 0) == 200 && $_->{body_len} == length($big) && $_->{ended} }
          @{$r->{responses}}), 20, '20 concurrent streams of one connection: each gets the whole file';
# over TLS the connection's sends go in whole records and a batch's tail
# waits for the next batch: every stream's bytes, in order, each ended
# (windows wide enough for the batches to fill)
$r = h2($p1, 'request', '--tls', '--streams', 20, '--path', '/big.bin',
        '--window', 1 << 20, '--conn-window', 1 << 24);
is scalar(grep { ($_->{status} // 0) == 200 && ($_->{sha1} // '') eq sha1_hex($big) && $_->{ended} }
          @{$r->{responses}}), 20, '20 concurrent TLS streams: each gets the file, byte for byte';

$r = h2($p0, 'request', '--method', 'POST', '--path', '/p/x', '--body-size', 100000);
is $r->{responses}[0]{status}, 200, 'a body with content-length: 200';
my @req = $u->requests;
is length($req[-1]{body} // q{}), 100000, '... the upstream got all of it';
$r = h2($p0, 'request', '--method', 'POST', '--path', '/p/x', '--body-size', 200000, '--no-length');
@req = $u->requests;
is length($req[-1]{body} // q{}), 200000,
    'a body without content-length (beyond one window): the upstream gets all of it';
$r = h2($p0, 'request', '--method', 'POST', '--path', '/p/x', '--body-size', 10, '--no-length');
@req = $u->requests;
is $req[-1]{body}, 'ABCDEFGHIJ', 'a small body: its bytes, in order';

$t->stop;
my @log = split /\n/, $t->read_file('logs/access.log') // '';
ok scalar(grep { $_ eq 'GET /ret HTTP/2.0|200|17|h2c|HTTP/2.0' } @log), 'access log: $request says HTTP/2.0';
ok(scalar(grep { m{^GET /big.bin HTTP/2.0\|200\|300000\|h2\|} } @log), 'access log: a TLS stream and its body bytes')
    or diag(join("\n", grep({ m{/big\.bin} } @log),
                 grep({ /\[(?:alert|crit|error|warn)\]/ } split(/\n/, $t->read_file('logs/error.log') // ''))));
done_testing;
