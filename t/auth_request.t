#!/usr/bin/perl
# auth_request.t: auth_request and auth_request_set (nginx's
# ngx_http_auth_request_module) on ringx's subrequests: 2xx lets a static
# file and a proxied POST through (the body reaches the origin byte-exact
# after the auth step: the subrequest neither takes nor drops it), 401
# with the auth server's WWW-Authenticate, 403, anything else 500 with
# nginx's log line, an auth server that is down, what the auth server
# receives (a GET, the client's headers, no body, $request_method the
# client's), auth_request_set from $upstream_http_* on to the origin,
# `off` in a nested location, satisfy any/all with allow/deny, keepalive to
# the auth upstream, an auth location answered by `return` and by a static
# file, error_page 401 = @login, several requests (also pipelined) on one
# client connection, and a client that goes while a slow subrequest runs.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(sleep);

my $auth = Test::Upstream->new;
$auth->start;
my $AUTH = $auth->addr;
my $origin = Test::Upstream->new;
$origin->start;
my $ORIGIN = $origin->addr;

# a port nothing listens on
my $DEAD = do {
    my $s = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                Listen => 1) or die;
    my $p = $s->sockport;
    close $s;
    "127.0.0.1:$p";
};

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    log_format al '\$request_uri \$status user=\$user';
    access_log logs/access.log al;
    upstream authpool { server $AUTH; keepalive 4; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name auth.test;
        root %%PREFIX%%/html;
        client_max_body_size 10m;

        location /auth/ {
            internal;
            proxy_pass http://authpool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-URI \$request_uri;
            proxy_set_header X-Original-Method \$request_method;
        }
        location /plainauth/ {
            internal;
            proxy_pass http://$AUTH/;
        }
        location /authshort/ {
            internal;
            proxy_pass http://$AUTH;
            proxy_read_timeout 300ms;
        }
        location /authdown/ {
            internal;
            proxy_pass http://$DEAD;
        }
        location = /auth-return { internal; return 204; }
        location /auth-static/ { internal; }

        location /ok/ {
            auth_request /auth/headers/200?X-User=alice;
            auth_request_set \$user \$upstream_http_x_user;
        }
        location /okproxy/ {
            auth_request /auth/headers/200?X-User=alice&X-Ignored=1;
            auth_request_set \$user \$upstream_http_x_user;
            auth_request_set \$st "\$upstream_status";
            proxy_pass http://$ORIGIN;
            proxy_set_header X-User \$user;
            proxy_set_header X-Auth-Status \$st;
        }
        location /plainok/ {
            auth_request /plainauth/status/200;
            proxy_pass http://$ORIGIN;
        }
        location /d401/ {
            auth_request "/auth/headers/401?WWW-Authenticate=Basic%20realm%3D%22r1%22&WWW-Authenticate=Bearer";
        }
        location /d403/ { auth_request /auth/status/403; }
        location /d500/ { auth_request /auth/status/500; }
        location /d302/ { auth_request /auth/status/302; }
        location /d404/ { auth_request /auth/status/404; }
        location /down/ { auth_request /authdown/x; }
        location /dcut/ { auth_request /auth/close-mid/200; }
        location /dstall/ { auth_request /authshort/stall-header; }
        location /ret/ { auth_request /auth-return; }
        location /sfile/ { auth_request /auth-static/token.txt; }
        location /snofile/ { auth_request /auth-static/missing.txt; }

        location /nested/ {
            auth_request /auth/status/403;
            location /nested/open/ { auth_request off; }
        }
        location /anyip/ {
            satisfy any;
            allow 127.0.0.1;
            deny all;
            auth_request /auth/status/403?loc=anyip;
        }
        location /anyauth/ {
            satisfy any;
            deny all;
            auth_request /auth/status/200?loc=anyauth;
        }
        location /anyboth/ {
            satisfy any;
            deny all;
            auth_request /auth/status/403?loc=anyboth;
        }
        location /all/ {
            satisfy all;
            allow all;
            auth_request /auth/status/403?loc=all;
        }
        location /login/ {
            auth_request /auth/status/401;
            error_page 401 = \@login;
        }
        location \@login { return 302 http://login.test/?back=\$request_uri; }

        location /slow/ {
            auth_request /auth/sleep/800;
            proxy_pass http://$ORIGIN;
        }
    }
}
EOF
for my $d (qw(dcut dstall ok nested nested/open anyip anyauth anyboth all login ret sfile
              snofile d401 d403 d500 d302 d404 down)) {
    $t->write_file("html/$d/f.txt", "file of $d\n");
}
$t->write_file('html/auth-static/token.txt', "token\n");
$t->run;
my $P = $t->port(0);

# One request on its own connection; the parsed response.
sub req {
    my ($raw) = @_;
    my $c = $t->raw($P) or return undef;
    $c->send($raw);
    my $r = $c->read_response;
    $c->close;
    return $r;
}

sub get {
    my ($path, $extra) = @_;
    return req("GET $path HTTP/1.1\r\nHost: auth.test\r\n" . ($extra // '')
               . "Connection: close\r\n\r\n");
}

sub auth_requests { grep { $_->{uri} =~ m{^/(?:auth|status)} } $auth->requests }

sub hdr {
    my ($req, $name) = @_;
    my @v = map { $_->[1] } grep { lc $_->[0] eq lc $name } @{ $req->{headers} };
    return wantarray ? @v : $v[0];
}

# ---- 2xx: the content is served ------------------------------------------

$auth->reset;
my $r = get('/ok/f.txt', "Authorization: Bearer tok\r\n");
is $r->{status}, 200, '2xx from the auth server: the static file is served';
is $r->{body}, "file of ok\n", '... with its content';
my @a = auth_requests();
is scalar @a, 1, 'one auth subrequest';
is $a[0]{method}, 'GET', 'the subrequest is a GET';
is $a[0]{uri}, '/auth/headers/200?X-User=alice', '... of the auth URI and its arguments';
is hdr($a[0], 'Authorization'), 'Bearer tok', "... with the client's headers";
is hdr($a[0], 'X-Original-URI'), '/ok/f.txt', '... $request_uri is the client\'s';

{
    my $c = $t->raw($P);
    $c->send("HEAD /ok/f.txt HTTP/1.1\r\nHost: auth.test\r\n\r\n"
             . "GET /ok/f.txt HTTP/1.1\r\nHost: auth.test\r\n\r\n");
    my $h = $c->read_response(head => 1);
    my $g = $c->read_response;
    is $h && $h->{status}, 200, 'HEAD after a 2xx auth: 200';
    is $h && $h->{body}, '', '... without a body';
    is $g && $g->{body}, "file of ok\n", '... and the GET after it on the connection gets the file';
    $c->close;
}

# a POST through to the origin: the body survives the auth step
$auth->reset;
$origin->reset;
my $body = join '', map { chr(($_ * 7 + 3) % 256) } 0 .. 299_999;
$r = req("POST /okproxy/echo?q=1 HTTP/1.1\r\nHost: auth.test\r\n"
         . "Content-Length: " . length($body) . "\r\nContent-Type: application/x-test\r\n"
         . "Connection: close\r\n\r\n$body");
is $r->{status}, 200, 'POST after a 2xx auth: proxied';
my @o = $origin->requests;
is scalar @o, 1, 'the origin got one request';
is $o[0]{method}, 'POST', '... a POST';
is length($o[0]{body}), length($body), '... with the whole body (300000 bytes)';
is sha256_hex($o[0]{body}), sha256_hex($body), '... byte-exact';
is hdr($o[0], 'X-User'), 'alice', 'auth_request_set $user $upstream_http_x_user reaches the origin';
is hdr($o[0], 'X-Auth-Status'), '200', 'auth_request_set from $upstream_status';
@a = auth_requests();
is scalar @a, 1, 'one auth subrequest for the POST';
is $a[0]{method}, 'GET', '... a GET';
is $a[0]{body} // '', '', '... without the body';
ok !defined hdr($a[0], 'Content-Length'), '... and without Content-Length';
ok !defined hdr($a[0], 'Transfer-Encoding'), '... nor Transfer-Encoding';
is hdr($a[0], 'X-Original-Method'), 'POST', "... \$request_method is the client's";
is hdr($a[0], 'Content-Type'), 'application/x-test', "... the client's other headers pass";

# a chunked body, and a subrequest whose location sets nothing special
$auth->reset;
$origin->reset;
my $cbody = 'x' x 70000;
my $chunked = join('', map { sprintf("%x\r\n%s\r\n", 10000, 'x' x 10000) } 1 .. 7) . "0\r\n\r\n";
$r = req("POST /plainok/echo HTTP/1.1\r\nHost: auth.test\r\nTransfer-Encoding: chunked\r\n"
         . "Connection: close\r\n\r\n$chunked");
is $r->{status}, 200, 'chunked POST after a 2xx auth (default proxy settings in the auth location)';
@o = $origin->requests;
is $o[0]{body}, $cbody, '... the origin gets the chunked body whole';
@a = grep { $_->{uri} eq '/status/200' } $auth->requests;
is scalar @a, 1, '... one auth subrequest';
is $a[0]{body} // '', '', '... without a body';
ok !defined hdr($a[0], 'Content-Length') && !defined hdr($a[0], 'Transfer-Encoding'),
    '... and no framing header even without proxy_set_header Content-Length ""';

# ---- refusals ---------------------------------------------------------------

$r = get('/d401/f.txt');
is $r->{status}, 401, '401 from the auth server: 401';
my @www = map { $_->[1] } grep { lc $_->[0] eq 'www-authenticate' } @{ $r->{header_list} };
is_deeply \@www, ['Basic realm="r1"', 'Bearer'], '... with its WWW-Authenticate headers, in order';
unlike $r->{body}, qr/file of/, '... and not the file';

$r = get('/d403/f.txt');
is $r->{status}, 403, '403 from the auth server: 403';
ok !$r->{headers}{'www-authenticate'}, '... without a challenge';

for my $s (500, 302, 404) {
    $r = get("/d$s/f.txt");
    is $r->{status}, 500, "$s from the auth server: 500";
    ok $t->wait_for(sub { $t->log_contains(qr/auth request unexpected status: $s\b/) }),
        "... logged: auth request unexpected status: $s";
}

$r = get('/down/f.txt');
is $r->{status}, 500, 'auth server down: 500';
ok $t->wait_for(sub { $t->log_contains(
        qr/connect\(\) failed \(111: Connection refused\) while connecting to upstream, client: \S+, server: auth\.test, request: "GET \/down\/f\.txt HTTP\/1\.1", subrequest: "\/authdown\/x", upstream: "http:\/\/\Q$DEAD\E\/authdown\/x"/) }),
    '... the connect error names the request, the subrequest and the upstream';
ok $t->log_contains(qr/auth request unexpected status: 502/), '... and the 502 it made';

$r = get('/dcut/f.txt');
is $r->{status}, 500, 'an auth response cut after its 200 header: 500';
ok $t->wait_for(sub { $t->log_contains(qr/upstream prematurely closed connection while reading upstream, .*subrequest: "\/auth\/close-mid\/200"/) }),
    '... logged, naming the subrequest';
$r = get('/dstall/f.txt');
is $r->{status}, 500, 'an auth server that never answers (proxy_read_timeout): 500';
ok $t->log_contains(qr/upstream timed out .*subrequest: "\/authshort\/stall-header"/),
    '... logged: upstream timed out';
ok $t->log_contains(qr/auth request unexpected status: 504/), '... after its 504';

$r = get('/auth/status/200');
is $r->{status}, 404, 'the internal auth location is not reachable from outside';

# ---- other auth locations ---------------------------------------------------

$r = get('/ret/f.txt');
is $r->{status}, 200, 'an auth location answering with "return 204": allowed';
$r = get('/sfile/f.txt');
is $r->{status}, 200, 'an auth location serving a static file (opened on the ring): allowed';
is $r->{body}, "file of sfile\n", '... the content follows';
$r = get('/snofile/f.txt');
is $r->{status}, 500, 'an auth location whose file is missing (404): 500';

# ---- off, satisfy ------------------------------------------------------------

is get('/nested/f.txt')->{status}, 403, 'auth_request applies to a location';
$r = get('/nested/open/f.txt');
is $r->{status}, 200, 'auth_request off in a nested location';
is $r->{body}, "file of nested/open\n", '... serves';

$auth->reset;
is get('/anyip/f.txt')->{status}, 200, 'satisfy any: the address allows';
is scalar(grep { $_->{uri} =~ /loc=anyip/ } $auth->requests), 0,
    '... and the subrequest is not even made';
is get('/anyauth/f.txt')->{status}, 200, 'satisfy any: deny all, but auth_request allows';
is get('/anyboth/f.txt')->{status}, 403, 'satisfy any: both refuse: 403';
is get('/all/f.txt')->{status}, 403, 'satisfy all: allow all, auth_request refuses: 403';

# ---- error_page 401 = @login ---------------------------------------------------

$r = get('/login/f.txt?x=1');
is $r->{status}, 302, 'error_page 401 = @login: the named location answers';
is $r->{headers}{location}, 'http://login.test/?back=/login/f.txt?x=1', '... with its redirect';

# ---- keepalive: to the auth upstream, and on the client connection ----------

$auth->reset;
my $c = $t->raw($P);
my @st;
for my $path ('/ok/f.txt', '/d401/f.txt', '/ok/f.txt', '/d403/f.txt', '/ok/f.txt') {
    $c->send("GET $path HTTP/1.1\r\nHost: auth.test\r\n\r\n");
    my $x = $c->read_response;
    push @st, $x ? $x->{status} : 'none';
}
is "@st", '200 401 200 403 200', 'five requests one after the other on one client connection';
ok $c->still_open, '... which stays open';
$c->send("GET /ok/f.txt HTTP/1.1\r\nHost: auth.test\r\n\r\n"
         . "GET /d403/f.txt HTTP/1.1\r\nHost: auth.test\r\n\r\n"
         . "POST /okproxy/echo HTTP/1.1\r\nHost: auth.test\r\nContent-Length: 5\r\n\r\nhello"
         . "GET /ok/f.txt HTTP/1.1\r\nHost: auth.test\r\nConnection: close\r\n\r\n");
my @resp = $c->read_responses(4);
is join(' ', map { $_->{status} } @resp), '200 403 200 200', 'four pipelined requests: answered in order';
like $resp[2]{body}, qr/body-length: 5\n\nhello\z/, '... the pipelined POST body reached the origin';
$c->close;
my %conns = map { $_->{conn} => 1 } $auth->requests;
is scalar(keys %conns), 1, 'all nine subrequests used one keepalive connection to the auth server';
is scalar($auth->requests), 9, '... (nine of them)';

# ---- the client goes while the subrequest runs -------------------------------

my $pids = join ',', $t->worker_pids;
$c = $t->raw($P);
$c->send("POST /slow/echo HTTP/1.1\r\nHost: auth.test\r\nContent-Length: 100\r\n\r\n0123456789");
sleep 0.2;
$c->close;                   # during the 800 ms auth subrequest, body unread
ok $t->wait_for(sub { $t->log_contains(qr/client prematurely closed connection while reading client request body/) }),
    'a client closing during the subrequest (its body unread): logged';
$c = $t->raw($P);
$c->send("GET /slow/echo HTTP/1.1\r\nHost: auth.test\r\n\r\n");
sleep 0.2;
$c->close;                   # a GET: the subrequest ends, the response has nowhere to go
sleep 1;
$r = get('/ok/f.txt');
is $r->{status}, 200, 'the worker still serves afterwards';
is join(',', $t->worker_pids), $pids, '... it is the same worker';
$r = get('/slow/echo');
is $r->{status}, 200, 'a slow auth subrequest, waited for: the response comes';

# access log: one line per client request, none for subrequests
my @lines = grep { m{^/ok/f\.txt } } split /\n/, ($t->read_file('logs/access.log') // '');
is scalar @lines, 9, 'the access log has one line per client request, none for its subrequest';
like $lines[0], qr/ 200 user=alice$/, '... with the variable auth_request_set made';

$t->stop;
done_testing;
