#!/usr/bin/perl
# scgi.t: scgi_pass against an SCGI responder (t/lib/Test/Scgi.pm, which
# checks the netstring strictly: CONTENT_LENGTH first, NUL-ended pairs, the
# ',', then exactly CONTENT_LENGTH body bytes): the params of scgi_params
# and scgi_param, SCGI=1, headers as HTTP_*, request bodies (small, 1 MiB
# spilled to a file, chunked, split across reads) intact with
# scgi_request_buffering on and off, CGI statuses (Status:, Location
# alone, an HTTP status line), bodies with and without a length, a body
# cut short (logged), a Transfer-Encoding refused (502), auto_redirect,
# and what -t refuses.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Scgi;
use Test::CgiApp;

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $sc = Test::Scgi->new->start;
my $SC = '127.0.0.1:' . $sc->port;

system('cp', "$FindBin::Bin/../conf/scgi_params", "$PREFIX/conf/") == 0
    or die "cp scgi_params";

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    access_log off;
    client_max_body_size 8m;
    client_body_buffer_size 16k;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /s/ { include scgi_params; scgi_pass $SC; }
        location /nb/ {
            include scgi_params;
            scgi_request_buffering off;
            scgi_pass $SC;
        }
        location /own/ {
            scgi_param REQUEST_URI \$request_uri;
            scgi_param HTTP_X_TEST "from param";
            scgi_param EMPTY "" if_not_empty;
            scgi_pass $SC;
        }
        location /nobody/ {
            include scgi_params;
            scgi_pass_request_body off;
            scgi_pass $SC;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub get { Test::CgiApp::get($t, $P, @_) }
sub var { Test::CgiApp::var(@_) }

my $r = get("GET /s/x?a=1 HTTP/1.1\r\nHost: sc.test\r\nX-Test: one\r\n"
            . "Connection: close\r\n\r\n");
is($r && $r->{status}, 200, 'GET: 200') or diag($r ? $r->{raw} : 'none');
is(var($r, 'first'), 'CONTENT_LENGTH', 'CONTENT_LENGTH is the first header');
is(var($r, 'CONTENT_LENGTH'), '0', 'CONTENT_LENGTH 0 without a body');
is(var($r, 'SCGI'), '1', 'SCGI=1 (scgi_params)');
is(var($r, 'REQUEST_METHOD'), 'GET', 'REQUEST_METHOD');
is(var($r, 'REQUEST_URI'), '/s/x?a=1', 'REQUEST_URI');
is(var($r, 'QUERY_STRING'), 'a=1', 'QUERY_STRING');
is(var($r, 'HTTP_HOST'), 'sc.test', 'Host as HTTP_HOST');
is(var($r, 'HTTP_X_TEST'), 'one', 'X-Test as HTTP_X_TEST');

$r = get("GET /own/x HTTP/1.1\r\nHost: sc.test\r\nX-Test: one\r\n"
         . "Connection: close\r\n\r\n");
is(var($r, 'HTTP_X_TEST'), 'from param',
   'a header that an scgi_param HTTP_* gives is not passed again');
is(scalar(() = ($r && $r->{body} // '') =~ /^HTTP_X_TEST=/mg), 1, 'once');
ok(defined var($r, 'HTTP_HOST'), 'the other headers still are');
ok(!defined var($r, 'EMPTY'), 'an empty if_not_empty param is left out');

# --- request bodies -------------------------------------------------------------

Test::CgiApp::request_bodies($t, $P, $_, 'the application') for '/s/', '/nb/';

$r = get("POST /nobody/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
         . "Connection: close\r\n\r\nhello");
is(var($r, 'CONTENT_LENGTH'), '0', 'scgi_pass_request_body off: CONTENT_LENGTH 0');
like($r && $r->{body}, qr/len=0 /, 'and no body');

# --- responses ------------------------------------------------------------------

$r = get("GET /s/status/404 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 404, 'Status: 404 passes');
like($r && $r->{body}, qr/^status 404$/m, 'with its body');
$r = get("GET /s/http HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 201, 'an HTTP status line instead of Status:');
is($r && $r->{headers}{'x-form'}, 'status-line', 'its headers follow');
is($r && $r->{body}, "created\n", 'and its body');
$r = get("GET /s/redirect HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 302, 'Location without Status: 302');
$r = get("GET /s/len/200000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && length($r->{body}), 200000, 'a body with Content-Length: all of it');
my $want = Test::CgiApp::stream_body(500000);
$r = get("GET /s/stream/500000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
ok($r && $r->{body} eq $want, 'a body ended by the close: every byte, in order')
    or diag($r ? length($r->{body}) : 'none');

my $c = $t->raw($P);
$c->send("GET /s/short HTTP/1.1\r\nHost: x\r\n\r\n");
my $raw = $c->read_all(timeout => 5);
$c->close;
like($raw, qr/^HTTP\/1\.1 200/, 'a body cut short: the header went');
unlike($raw, qr/12345.{5}/s, 'not more than was sent');
ok($t->wait_for(sub { $t->log_contains(qr/upstream prematurely closed connection/) }, 5),
   'the cut is logged');

$r = get("GET /s/te HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 502, 'Transfer-Encoding from SCGI: 502');
ok($t->log_contains(qr/upstream sent "Transfer-Encoding" header/), 'logged by name');

$r = get("GET /s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 301, '/s for "location /s/ { scgi_pass }": 301');

$t->stop;

my ($rc, $out, $err);
$t->write_config(<<"EOF");
events { worker_connections 64; }
http { scgi_temp_path %%PREFIX%%/scgi_t; server { listen 127.0.0.1:%%PORT_0%%;
    location / { scgi_param A; scgi_pass 127.0.0.1:1; } } }
EOF
($rc, $out, $err) = $t->ringx('-t');
like($err, qr/\[emerg\] invalid number of arguments in "scgi_param" directive in \S+:\d+/,
     '-t: scgi_param with one argument refused with file:line');
$t->write_config(<<"EOF");
events { worker_connections 64; }
http { server { listen 127.0.0.1:%%PORT_0%%;
    location / { scgi_param A b bad; scgi_pass 127.0.0.1:1; } } }
EOF
($rc, $out, $err) = $t->ringx('-t');
like($err, qr/\[emerg\] invalid parameter "bad"/, '-t: a bad if_not_empty refused');

$sc->stop;
done_testing;
