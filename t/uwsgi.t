#!/usr/bin/perl
# uwsgi.t: uwsgi_pass against a real uWSGI (Debian's uwsgi-core and its
# python3 plugin, t/lib/Test/Uwsgi.pm): the CGI variables of uwsgi_params
# and uwsgi_param, the request headers as HTTP_*, request bodies (small,
# 1 MiB spilled to a file, chunked, split across reads) intact with
# uwsgi_request_buffering on and off, statuses and redirects, response
# bodies with and without a length, auto_redirect, uwsgi_next_upstream,
# uwsgi_pass with variables; the packet itself (modifier1/size/modifier2,
# the vars) read by a raw listener; and what -t refuses.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::IP;
use POSIX ();
use Test::More;
use Test::Ringx;
use Test::Uwsgi;
use Test::CgiApp;
use Time::HiRes qw(sleep);

Test::Uwsgi::binary();             # skips, saying why, without uWSGI

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $uw = Test::Uwsgi->start($t);
my $UW = '127.0.0.1:' . $uw->port;
my $DEAD = '127.0.0.1:' . Test::Uwsgi::free_port();

# the raw listener: records the first request's bytes in a file, answers
my $RAW = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                              Listen => 8, ReuseAddr => 1) or die "listen: $!";
my $RAWPORT = $RAW->sockport;
my $rawpid = fork // die "fork: $!";
if (!$rawpid) {
    while (my $c = $RAW->accept) {
        my $buf = '';
        $c->blocking(0);
        my $deadline = time + 3;
        while (time < $deadline) {
            my $n = sysread($c, $buf, 65536, length $buf);
            last if defined $n && $n == 0;
            if (length($buf) >= 4) {
                my $size = unpack('v', substr($buf, 1, 2));
                last if length($buf) >= 4 + $size + 5;    # vars + "hello"
            }
            sleep 0.02;
        }
        open my $fh, '>', "$PREFIX/raw.bin"; print $fh $buf; close $fh;
        $c->blocking(1);
        syswrite($c, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nraw ok\n");
        close $c;
    }
    POSIX::_exit(0);
}
close $RAW;
END { local $?; kill "KILL", $rawpid if $rawpid; waitpid($rawpid, 0) if $rawpid; }

system('cp', "$FindBin::Bin/../conf/uwsgi_params", "$PREFIX/conf/") == 0
    or die "cp uwsgi_params";

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
    upstream uw { server $DEAD; server $UW; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /u/ { include uwsgi_params; uwsgi_pass $UW; }
        location /nb/ {
            include uwsgi_params;
            uwsgi_request_buffering off;
            uwsgi_pass uwsgi://$UW;
        }
        location /nohdr/ {
            include uwsgi_params;
            uwsgi_param X_PARAM "m=\$request_method";
            uwsgi_pass_request_headers off;
            uwsgi_pass $UW;
        }
        location /up/ { include uwsgi_params; uwsgi_pass uw; }
        location /var/ {
            include uwsgi_params;
            set \$addr $UW;
            uwsgi_pass \$addr;
        }
        location /lr/ {
            rewrite ^/lr/(.*)\$ /u/\$1 break;
            include uwsgi_params;
            uwsgi_limit_rate 1m;
            uwsgi_pass $UW;
        }
        location /lrvar/ {
            rewrite ^/lrvar/(.*)\$ /u/\$1 break;
            include uwsgi_params;
            uwsgi_limit_rate \$arg_r;
            uwsgi_pass $UW;
        }
        location /lroff/ {
            rewrite ^/lroff/(.*)\$ /u/\$1 break;
            include uwsgi_params;
            uwsgi_buffering off;
            uwsgi_limit_rate 100k;
            uwsgi_pass $UW;
        }
        location /raw/ {
            uwsgi_param REQUEST_METHOD \$request_method;
            uwsgi_param CONTENT_LENGTH \$content_length;
            uwsgi_param EMPTY "" if_not_empty;
            uwsgi_modifier1 5;
            uwsgi_modifier2 9;
            uwsgi_pass 127.0.0.1:$RAWPORT;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub get { Test::CgiApp::get($t, $P, @_) }
sub var { Test::CgiApp::var(@_) }

# --- variables and headers ------------------------------------------------------

my $r = get("GET /u/x?a=1&b=2 HTTP/1.1\r\nHost: uw.test\r\nX-Test: one\r\n"
            . "Cookie: a=1\r\nCookie: b=2\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 200, 'GET: 200') or diag($r ? $r->{raw} : 'none');
is(var($r, 'REQUEST_METHOD'), 'GET', 'REQUEST_METHOD');
is(var($r, 'REQUEST_URI'), '/u/x?a=1&b=2', 'REQUEST_URI');
is(var($r, 'QUERY_STRING'), 'a=1&b=2', 'QUERY_STRING');
is(var($r, 'PATH_INFO'), '/u/x', 'PATH_INFO ($document_uri)');
is(var($r, 'HTTP_HOST'), 'uw.test', 'Host as HTTP_HOST');
is(var($r, 'HTTP_X_TEST'), 'one', 'X-Test as HTTP_X_TEST');
is(var($r, 'HTTP_COOKIE'), 'a=1; b=2', 'Cookie headers joined with "; "');
is($r && $r->{headers}{'content-type'}, 'text/plain', 'the app\'s Content-Type');

$r = get("GET /nohdr/x HTTP/1.1\r\nHost: uw.test\r\nX-Test: one\r\n"
         . "Connection: close\r\n\r\n");
is(var($r, 'HTTP_X_TEST'), '', 'uwsgi_pass_request_headers off: no HTTP_*');
is(var($r, 'X_PARAM'), 'm=GET', 'uwsgi_param with a variable');

# --- request bodies -------------------------------------------------------------

Test::CgiApp::request_bodies($t, $P, $_, 'uWSGI') for '/u/', '/nb/';

# --- responses ------------------------------------------------------------------

$r = get("GET /u/status/404 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 404, 'the app\'s 404 passes');
like($r && $r->{body}, qr/^status 404$/m, 'with its body');
$r = get("GET /u/redirect HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 302, 'a redirect passes');
like($r && $r->{headers}{location}, qr{/elsewhere$}, 'with its Location');
$r = get("GET /u/len/300000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && length($r->{body}), 300000, 'a body with Content-Length: all of it');
my $want = Test::CgiApp::stream_body(500000);
$r = get("GET /u/stream/500000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
ok($r && $r->{body} eq $want, 'a body ended by the close: every byte, in order')
    or diag($r ? length($r->{body}) : 'none');
$r = get("HEAD /u/len/1000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
         head => 1);
is($r && $r->{status}, 200, 'HEAD: 200');
is($r && $r->{headers}{'content-length'}, 1000, 'HEAD: the length the app gave');

# --- auto_redirect, next_upstream, variables --------------------------------------

$r = get("GET /u HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 301, '/u for "location /u/ { uwsgi_pass }": 301');
like($r && $r->{headers}{location}, qr{/u/$}, 'to /u/');

$r = get("GET /up/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 200, 'the dead server first: the next one answers');
ok($t->log_contains(qr/connect\(\) failed .*upstream: "uwsgi:\/\/\Q$DEAD\E"/),
   'the failed try logged with the uwsgi:// upstream');

$r = get("GET /var/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
is($r && $r->{status}, 200, 'uwsgi_pass with a variable');
is(var($r, 'REQUEST_URI'), '/var/x', 'reaches the app');

# --- uwsgi_limit_rate -------------------------------------------------------------
# 4 MB read at 1 MB/s: a second's worth at once, then the rate, about 3 s.
# Reading stops between reads, but what the kernel already holds for the
# connection (its receive buffer, up to the worker's 1 MiB of provided
# buffers in one turn) still comes, so the floor asserted is 1 s. Without
# a limit the same body takes a few ms; with 100k it would take 40 s, so
# "under 10 s" tells the two apart on a loaded machine too.

sub timed_get {
    my ($uri) = @_;
    my $start = Time::HiRes::time();
    my $c = $t->raw($P);
    $c->send("GET $uri HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $resp = $c->read_response(timeout => 60);
    $c->close;
    return ($resp, Time::HiRes::time() - $start);
}

my $MB4 = 4 * 1024 * 1024;
my ($lr, $secs) = timed_get("/lr/len/$MB4");
is($lr && length($lr->{body}), $MB4, 'uwsgi_limit_rate 1m: every byte');
cmp_ok($secs, '>=', 1.0, 'uwsgi_limit_rate 1m: 4 MB take their time');
($lr, $secs) = timed_get("/lrvar/len/$MB4?r=1m");
is($lr && length($lr->{body}), $MB4, 'uwsgi_limit_rate $arg_r: every byte');
cmp_ok($secs, '>=', 1.0, 'uwsgi_limit_rate $arg_r (1m): limited too');
($lr, $secs) = timed_get("/lrvar/len/$MB4?r=0");
cmp_ok($secs, '<', 10, 'uwsgi_limit_rate $arg_r (0): no limit');
($lr, $secs) = timed_get("/lroff/len/$MB4");
is($lr && length($lr->{body}), $MB4, 'uwsgi_buffering off: every byte');
cmp_ok($secs, '<', 10, 'uwsgi_buffering off: uwsgi_limit_rate 100k does not apply, as nginx');
($lr, $secs) = timed_get('/lrvar/stream/300000?r=bad');
is($lr && $lr->{status}, 200, 'a bad $arg_r: served unlimited');
ok($t->log_contains(qr/invalid "uwsgi_limit_rate" value "bad"/), 'and logged');

# --- the packet -------------------------------------------------------------------

$r = get("POST /raw/x HTTP/1.1\r\nHost: raw\r\nContent-Length: 5\r\n"
         . "Connection: close\r\n\r\nhello");
is($r && $r->{status}, 200, 'raw listener: a status line response');
is($r && $r->{body}, "raw ok\n", 'its body');
my $pkt = $t->read_file('raw.bin') // '';
my ($m1, $size, $m2) = unpack('C v C', $pkt);
is($m1, 5, 'uwsgi_modifier1 in the first byte');
is($m2, 9, 'uwsgi_modifier2 in the fourth byte');
my $vars = substr($pkt, 4, $size // 0);
my @kv;
while (length $vars >= 2) {
    my $n = unpack('v', $vars);
    push @kv, substr($vars, 2, $n);
    $vars = substr($vars, 2 + $n);
}
my %v = @kv;
is($v{REQUEST_METHOD}, 'POST', 'vars: 16-bit little-endian lengths');
is($v{CONTENT_LENGTH}, '5', 'vars: CONTENT_LENGTH');
ok(!exists $v{EMPTY}, 'an empty if_not_empty param is left out');
is($v{HTTP_HOST}, 'raw', 'the Host header as a var');
is(substr($pkt, 4 + ($size // 0)), 'hello', 'the body right after the vars');

$t->stop;

# --- what -t refuses -------------------------------------------------------------

sub conf_with {
    my ($loc) = @_;
    $t->write_config(<<"EOF");
events { worker_connections 64; }
http { uwsgi_temp_path %%PREFIX%%/uwsgi_t; server { listen 127.0.0.1:%%PORT_0%%; location / { $loc } } }
EOF
    return $t->ringx('-t');
}

my ($rc, $out, $err) = conf_with("uwsgi_pass 127.0.0.1:1;");
is($rc, 0, '-t: uwsgi_pass and uwsgi_temp_path load') or diag($err);
($rc, $out, $err) = conf_with("uwsgi_pass suwsgi://127.0.0.1:1;");
isnt($rc, 0, '-t: suwsgi:// refused');
like($err, qr/\[emerg\] suwsgi:.* in .*ringx\.conf:\d+/, 'by name, with file:line');
($rc, $out, $err) = conf_with("uwsgi_modifier1 256; uwsgi_pass 127.0.0.1:1;");
isnt($rc, 0, '-t: uwsgi_modifier1 256 refused');
($rc, $out, $err) = conf_with("uwsgi_cache one; uwsgi_pass 127.0.0.1:1;");
like($err, qr/\[emerg\] unknown directive "uwsgi_cache"/,
     '-t: uwsgi_cache (not in ringx) refused by name');

done_testing;
