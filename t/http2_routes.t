#!/usr/bin/perl
# http2_routes.t: HTTP/2 streams through the routes of the request layer
# (issue #20, second pass). FastCGI on a real php-fpm pool (a GET; POST
# bodies small, 1 MiB spilled to a temporary file, in many small DATA
# frames against a small stream window, without content-length) hashed by
# PHP; try_files to PHP; error_page to a named location with a body;
# X-Accel-Redirect; auth_request; return and rewrite; limit_req and
# limit_conn per stream; the access log ($request HTTP/2.0, $status,
# $body_bytes_sent) and stub_status's counters; a client that resets a
# stream mid-response (the upstream request let go, the connection goes
# on); a client that closes its connection with streams open (the worker
# stays and leaks nothing: run under SANITIZE=1).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha1_hex);
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Test::Upstream;
use JSON::PP;

plan(skip_all => 'no curl') if system('curl --version >/dev/null 2>&1');
plan(skip_all => 'curl without HTTP/2') if `curl --version` !~ /\bHTTP2\b/;
plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import h2, hyperframe, hpack" 2>/dev/null');
Test::PhpFpm::binary();            # skips, saying why, without php-fpm

my $H2C = "$FindBin::Bin/lib/h2client.py";
my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $SOCK = "$PREFIX/php.sock";

my $BODY_PHP = <<'EOF';
<?php
$in = file_get_contents('php://input');
echo "method=", $_SERVER['REQUEST_METHOD'], " len=", strlen($in),
     " sha=", sha1($in), " cl=", $_SERVER['CONTENT_LENGTH'] ?? '',
     " proto=", $_SERVER['SERVER_PROTOCOL'] ?? '', "\n";
EOF

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    log_format h2 '\$request|\$status|\$body_bytes_sent|\$uri';
    access_log logs/access.log h2;
    client_max_body_size 8m;
    client_body_buffer_size 16k;
    upstream origin { server $UP; keepalive 4; }
    upstream php { server unix:$SOCK; keepalive 4; }
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    limit_req_zone \$binary_remote_addr zone=one:1m rate=1r/m;
    limit_conn_zone \$binary_remote_addr zone=addr:1m;
    root %%PREFIX%%/html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        http2_body_preread_size 1k;
        location ~ \\.php\$ {
            fastcgi_pass php;
            fastcgi_keep_conn on;
            include %%PREFIX%%/conf/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
        }
        location /app/ { try_files \$uri /body.php?\$args; }
        location /e404/ { error_page 404 = \@back; }
        location /xa/ { proxy_pass http://origin; }
        location /xadone/ { internal; return 200 "xa done \$request_method\\n"; }
        location /auth/ { internal; proxy_pass http://origin; proxy_pass_request_body off; proxy_set_header Content-Length ""; }
        location /ok/ { auth_request /auth/status/200; }
        location /no/ { auth_request /auth/status/403; }
        location /ret { return 201 "returned \$server_protocol\\n"; }
        location /rw/ { rewrite ^/rw/(.*)\$ /ret?from=\$1 last; }
        location /lr/ { limit_req zone=one; }
        location /lc/ { limit_conn addr 1; proxy_pass http://origin; }
        location /p/ { proxy_pass http://origin; }
        location /status { stub_status; }
        location \@back { proxy_pass http://origin; }
    }
}
EOF
system('cp', "$FindBin::Bin/../conf/fastcgi_params", "$PREFIX/conf/") == 0
    or die "cp fastcgi_params";
$t->write_file_raw('html/body.php', $BODY_PHP);
$t->write_file("html/$_/x", "allowed\n") for qw(ok no lr);

Test::PhpFpm->start($t, [ { name => 'pool', sock => $SOCK,
    pm => "pm = static\npm.max_children = 2\n"
        . "php_admin_value[post_max_size] = 16M\n"
        . "php_admin_value[enable_post_data_reading] = 0" } ]);
$t->run;
my $port = $t->port(0);
my ($worker) = $t->worker_pids;

sub h2 {
    open my $fh, '-|', '/usr/bin/python3', $H2C, $port, 'request', @_ or die "h2client: $!";
    my $o = do { local $/; <$fh> };
    close $fh;
    return eval { decode_json($o) } || { error => $o, responses => [] };
}
# the body h2client.py sends: A..Z repeated
sub body_of { my ($n) = @_; return join '', map { chr(65 + $_ % 26) } 0 .. $n - 1 }

# --- FastCGI ---------------------------------------------------------------------

my $r = h2('--path', '/hello.php');
is $r->{responses}[0]{status}, 200, 'FastCGI GET over h2: 200';
like $r->{responses}[0]{body}, qr/^hello \d+$/, '... PHP answered';
ok $r->{responses}[0]{ended}, '... and the stream ended';

for my $case ([ 'small body', 100, [] ],
              [ '1 MiB body (spilled to a file)', 1 << 20, [] ],
              [ 'a body in many 1000-byte DATA frames, small windows', 300_000,
                [ '--frame-size', 1000, '--window', 4096 ] ],
              [ 'a body without content-length', 200_000, [ '--no-length' ] ]) {
    my ($what, $n, $extra) = @$case;
    $r = h2('--method', 'POST', '--path', '/body.php', '--body-size', $n, @$extra);
    my $sha = sha1_hex(body_of($n));
    is $r->{responses}[0]{status}, 200, "FastCGI POST, $what: 200";
    like $r->{responses}[0]{body}, qr/^method=POST len=$n sha=$sha\b/,
        "... PHP read every byte, in order";
}

$r = h2('--method', 'POST', '--path', '/app/missing?a=1', '--body-size', 5000);
like $r->{responses}[0]{body}, qr/len=5000 sha=@{[ sha1_hex(body_of(5000)) ]}/,
    'try_files to PHP: the body reached it';

# --- the other routes ---------------------------------------------------------------

$up->reset;
$r = h2('--method', 'POST', '--path', '/e404/missing', '--body-size', 70_000);
is $r->{responses}[0]{status}, 200, 'error_page 404 = @named with a body: 200';
my @req = $up->wait_requests(1);
is length($req[-1]{body} // ''), 70_000, '... the named location\'s upstream got the body';
ok(($req[-1]{body} // '') eq body_of(70_000), '... the same bytes');

$r = h2('--method', 'POST', '--path', '/xa/headers?X-Accel-Redirect=/xadone/ok', '--body-size', 3000);
is $r->{responses}[0]{status}, 200, 'X-Accel-Redirect: 200';
is $r->{responses}[0]{body}, "xa done GET\n", '... the redirect\'s answer (a GET, as nginx makes it)';

is h2('--path', '/ok/x')->{responses}[0]{body}, "allowed\n", 'auth_request 200: allowed';
is h2('--path', '/no/x')->{responses}[0]{status}, 403, 'auth_request 403: 403';

$r = h2('--path', '/ret');
is $r->{responses}[0]{status}, 201, 'return 201';
is $r->{responses}[0]{body}, "returned HTTP/2.0\n", '... its body';
is h2('--path', '/rw/abc')->{responses}[0]{body}, "returned HTTP/2.0\n", 'rewrite ... last';

$r = h2('--path', '/lr/x', '--streams', 3);
is join(',', sort map { $_->{status} // 'none' } @{$r->{responses}}), '200,503,503',
    'limit_req counts streams: of 3 at once, one passes';

$r = h2('--path', '/lc/sleep/1500', '--streams', 3);
is join(',', sort map { $_->{status} // 'none' } @{$r->{responses}}), '200,503,503',
    'limit_conn counts streams: of 3 at once, one passes';
$r = h2('--path', '/lc/sleep/10');
is $r->{responses}[0]{status}, 200, '... and its count went back down';

# stub_status: the requests counter counts streams
my $st1 = h2('--path', '/status')->{responses}[0]{body};
h2('--path', '/ret', '--streams', 5);
my $st2 = h2('--path', '/status')->{responses}[0]{body};
my ($n1) = $st1 =~ /^\s*\d+\s+\d+\s+(\d+)\s*$/m;
my ($n2) = $st2 =~ /^\s*\d+\s+\d+\s+(\d+)\s*$/m;
is $n2 - $n1, 6, 'stub_status: 5 streams and the status request counted as 6 requests';
like $st2, qr/^Active connections: 1\s*$/m, 'stub_status: one active connection (streams are not connections)';

# --- a client that resets a stream, or closes its connection ----------------------

$up->reset;
$r = h2('--path', '/p/slow/400000?pieces=40&ms=50', '--reset-after', 1, '--then', '/ret');
is $r->{responses}[0]{reset}, -1, 'a stream reset by the client mid-response';
is $r->{then}{status}, 201, '... the connection goes on: the next stream answers';
ok $up->wait_for(sub { grep { $_->{by} ne 'server' } $up->closes }, 10),
    '... the upstream request was let go (its connection closed)';
ok $t->wait_for(sub { $t->log_contains(qr/client reset HTTP\/2 stream 1 \(error 8\)/) }, 10),
    '... logged with the stream and the error code';
# nginx keeps the status a response header went out with (499 only for
# a request that answered nothing yet), and counts the bytes sent
ok $t->wait_for(sub { grep { m{^GET /p/slow/400000\S* HTTP/2.0\|200\|(\d+)\|} && $1 < 400_000 }
                        split /\n/, $t->read_file('logs/access.log') // '' }, 10),
    '... logged with its status and only the bytes sent';

$r = h2('--path', '/p/slow/400000?pieces=40&ms=50', '--streams', 4, '--close-after', 1);
ok $r->{closed}, 'a client closed its connection with 4 streams open';
ok $t->wait_for(sub { 5 <= grep { m{^GET /p/slow/400000\S* HTTP/2.0\|(499|200)\|} }
                        split /\n/, $t->read_file('logs/access.log') // '' }, 10),
    '... each stream\'s request ended and was logged';
$r = h2('--method', 'POST', '--path', '/body.php', '--body-size', 200_000,
        '--frame-size', 1000, '--close-after', 0, '--streams', 3);
my ($now) = $t->worker_pids;
is $now, $worker, '... the same worker';
is h2('--path', '/ret')->{responses}[0]{status}, 201, '... which still answers';

# --- the access log ---------------------------------------------------------------

$t->stop;
my @log = split /\n/, $t->read_file('logs/access.log') // '';
ok scalar(grep { $_ eq 'GET /ret HTTP/2.0|201|18|/ret' } @log),
    'access log: $request HTTP/2.0, $status, $body_bytes_sent';
ok scalar(grep { m{^POST /body.php HTTP/2.0\|200\|\d+\|/body.php$} } @log),
    'access log: a FastCGI POST stream';
ok scalar(grep { $_ eq 'GET /no/x HTTP/2.0|403|153|/no/x' } @log)
    || scalar(grep { m{^GET /no/x HTTP/2.0\|403\|\d+\|} } @log),
    'access log: auth_request\'s 403';
done_testing;
