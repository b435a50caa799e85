#!/usr/bin/perl
# limit_except.t: nginx's limit_except block: its allow/deny and
# auth_basic apply to the methods not listed, GET implies HEAD (not the
# reverse), the block inherits its location's settings (root, alias,
# handler), access_log inside it, "internal" of the location still holds,
# and the configuration errors (unknown method, duplicate, a directive not
# allowed inside, not in a server, proxy_pass with a URI).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use MIME::Base64 qw(encode_base64);
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    default_type text/plain;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        root html;
        location /get/ { limit_except GET { deny all; } }
        location /getpost/ { limit_except GET post { deny all; } }
        location /head/ { limit_except HEAD { deny all; } }
        location /allowed/ { limit_except GET { allow 127.0.0.1; deny all; } }
        location /auth/ {
            limit_except GET {
                auth_basic "writers";
                auth_basic_user_file users;
            }
        }
        location /alias/ {
            alias html/real/;
            limit_except GET { deny all; }
        }
        location /logged/ {
            limit_except GET { access_log logs/lmt.log; deny all; }
        }
        location /int/ { internal; limit_except GET { allow all; } }
        location /outer/ {
            deny all;
            limit_except GET { allow all; }
        }
    }
}
EOF
for my $d (qw(get getpost head allowed auth real logged int outer)) {
    $t->write_file_raw("html/$d/f", "in\n");
}
$t->write_file_raw('conf/users', "w:{PLAIN}pw\n");
$t->run;
my $P = $t->port(0);

sub req {
    my ($method, $uri, @hdr) = @_;
    my $c = $t->raw($P) or return {};
    $c->send("$method $uri HTTP/1.1\r\nHost: localhost\r\n"
             . join('', map { "$_\r\n" } @hdr)
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3, head => $method eq 'HEAD');
    $c->close;
    return $r // {};
}

my @cases = (
    ['GET',    '/get/f',     200, 'a listed method is not limited'],
    ['HEAD',   '/get/f',     200, 'GET implies HEAD'],
    ['POST',   '/get/f',     403, 'an unlisted method gets the block\'s deny'],
    ['DELETE', '/get/f',     403, 'DELETE is not listed either'],
    ['POST',   '/getpost/f', 405, 'methods are case-insensitive: "post" listed, static answers 405'],
    ['PUT',    '/getpost/f', 403, 'PUT is not listed'],
    ['HEAD',   '/head/f',    200, 'HEAD listed'],
    ['GET',    '/head/f',    403, 'HEAD does not imply GET'],
    ['POST',   '/allowed/f', 405, 'allow inside the block lets the client through'],
    ['GET',    '/alias/f',   200, 'the block does not change the location\'s alias'],
    ['DELETE', '/alias/f',   403, 'denied through an alias location'],
    ['POST',   '/int/f',     404, 'the location\'s "internal" still holds'],
    ['GET',    '/outer/f',   403, 'a GET gets the location\'s own deny'],
    ['POST',   '/outer/f',   405, 'the block\'s rules replace the location\'s for a POST'],
);
for my $c (@cases) {
    my ($m, $uri, $status, $name) = @$c;
    is(req($m, $uri)->{status}, $status, "$m $uri: $name");
}

my $r = req('GET', '/auth/f');
is("$r->{status} $r->{body}", "200 in\n", 'auth in the block: GET passes without credentials');
$r = req('POST', '/auth/f');
is($r->{status}, 401, 'auth in the block: POST without credentials');
like($r->{headers}{'www-authenticate'} // '', qr/^Basic realm="writers"/,
     'auth in the block: its realm');
$r = req('POST', '/auth/f', 'Authorization: Basic ' . encode_base64('w:pw', ''));
is($r->{status}, 405, 'auth in the block: POST with credentials reaches the handler');

req('POST', '/logged/f');
req('GET', '/logged/f');
ok($t->wait_for(sub { ($t->read_file('logs/lmt.log') // '') =~ m{"POST /logged/f} }),
   'access_log inside the block logs a limited request');
unlike($t->read_file('logs/lmt.log') // '', qr{"GET /logged/f},
       'a GET uses the location\'s access_log (off)');
ok($t->log_contains(qr/\[error\] .*access forbidden by rule, client: 127\.0\.0\.1, .*request: "POST \/get\/f HTTP\/1\.1"/),
   'the refusal is logged in nginx\'s words');

$t->stop;

# ---- configuration errors -------------------------------------------------

my @bad = (
    ['location / { limit_except GET FOO { deny all; } }',
     qr/\[emerg\] invalid method "FOO" in \S+:\d+/, 'an unknown method'],
    ['location / { limit_except GET { } limit_except POST { } }',
     qr/\[emerg\] "limit_except" directive is duplicate/, 'two blocks in one location'],
    ['location / { limit_except GET { root /tmp; } }',
     qr/\[emerg\] "root" directive is not allowed here/, 'root inside the block'],
    ['limit_except GET { }',
     qr/\[emerg\] "limit_except" directive is not allowed here/, 'at server level'],
    ['location / { limit_except { } }',
     qr/\[emerg\] invalid number of arguments in "limit_except" directive/, 'no method'],
    ['location / { limit_except GET; }',
     qr/\[emerg\] directive "limit_except" has no opening "\{"/, 'no block'],
    ['location / { limit_except GET { proxy_pass http://127.0.0.1:1/x; } }',
     qr/\[emerg\] "proxy_pass" cannot have URI part .*inside "limit_except" block/,
     'proxy_pass with a URI inside the block'],
);
for my $c (@bad) {
    my ($line, $re, $name) = @$c;
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; $line } }
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    isnt($code, 0, "-t fails: $name");
    like($err, $re, "-t error: $name");
}

my $u = Test::Ringx->new;
$u->write_config(<<'EOF');
events { }
http { server { listen 127.0.0.1:%%PORT_0%%;
    location / { limit_except GET { proxy_pass http://127.0.0.1:1; } } } }
EOF
my ($code, undef, $err) = $u->ringx('-t');
is($code, 0, 'proxy_pass without a URI is allowed inside the block') or diag($err);

done_testing;
