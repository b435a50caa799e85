#!/usr/bin/perl
# request_body_routes.t: a request body survives every way a request
# travels to the handler that reads it (issue #16, http/http_body.c).
#
# The matrix: body kinds {Content-Length small, Content-Length 1 MiB (spills
# to a temporary file when buffered), chunked, split across reads (the head
# and 10 bytes, the other 10 after 300 ms), Expect: 100-continue} x routes
# {direct proxy_pass, direct fastcgi_pass, try_files to a named proxy
# location, try_files to /index.php on php-fpm, index to index.php, error_page
# 404 = @named and 405 = @named on a static location, X-Accel-Redirect after
# the origin read the body} x {request buffering on, off}. Each case checks
# that the upstream (a recording origin, or a real php-fpm that hashes
# php://input) received exactly the bytes sent, and that a probe over the
# same keepalive upstream pool gets its own answer (no desync).
# Also: a chunk whose size line declares more than client_max_body_size is
# answered 413 at once, on every reading route.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha1_hex);
use Test::More;
use Test::Ringx;
use Test::CgiApp;
use Test::PhpFpm;
use Test::Upstream;
use Time::HiRes qw(sleep time);

Test::PhpFpm::binary();            # skips, saying why, without php-fpm

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
     " sha=", sha1($in), " cl=", $_SERVER['CONTENT_LENGTH'] ?? '', "\n";
EOF

my $routes = <<"EOF";
        location /direct/ { proxy_pass http://origin; }
        location ~ \\.php\$ {
            fastcgi_pass php;
            fastcgi_keep_conn on;
            include %%PREFIX%%/conf/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME \$document_root/body.php;
        }
        location /tf/ { try_files \$uri \@back; }
        location /app/ { try_files \$uri \$uri/ /index.php?\$args; }
        location /dir/ { index index.php; }
        location /e404/ { error_page 404 = \@back; }
        location /e405/ { error_page 405 = \@back; }
        location /xa/ { proxy_pass http://origin; }
        location /xadone/ { internal; return 200 "xa done\\n"; }
        location \@back { proxy_pass http://origin; }
EOF

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
    upstream origin { server $UP; keepalive 4; }
    upstream php { server unix:$SOCK; keepalive 4; }
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    root %%PREFIX%%/html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        proxy_request_buffering on;
        fastcgi_request_buffering on;
$routes
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        proxy_request_buffering off;
        fastcgi_request_buffering off;
$routes
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        client_max_body_size 1k;
$routes
    }
}
EOF
system('cp', "$FindBin::Bin/../conf/fastcgi_params", "$PREFIX/conf/") == 0
    or die "cp fastcgi_params";
$t->write_file_raw('html/body.php', $BODY_PHP);
$t->write_file_raw('html/index.php', $BODY_PHP);
$t->write_file_raw('html/dir/index.php', $BODY_PHP);
$t->write_file('html/e405/file.txt', "a static file\n");

Test::PhpFpm->start($t, [ { name => 'pool', sock => $SOCK,
    pm => "pm = static\npm.max_children = 2\n"
        . "php_admin_value[post_max_size] = 16M\n"
        . "php_admin_value[enable_post_data_reading] = 0" } ]);
$t->run;

# --- the matrix -----------------------------------------------------------------

# route => [ URI, 'origin' or 'php', the URI the origin sees ]
my @ROUTES = (
    [ 'direct proxy_pass',      '/direct/x',        'origin', '/direct/x' ],
    [ 'direct fastcgi_pass',    '/body.php',        'php' ],
    [ 'try_files to @named',    '/tf/missing',      'origin', '/tf/missing' ],
    [ 'try_files to /index.php', '/app/missing?a=1', 'php' ],
    [ 'index to index.php',     '/dir/',            'php' ],
    [ 'error_page 404 = @named', '/e404/missing',   'origin', '/e404/missing' ],
    [ 'error_page 405 = @named', '/e405/file.txt',  'origin', '/e405/file.txt' ],
    [ 'X-Accel-Redirect',
      '/xa/headers?X-Accel-Redirect=/xadone/ok',    'origin',
      '/xa/headers?X-Accel-Redirect=/xadone/ok' ],
);

my $SMALL = join '', 'a' .. 'z';
my $BIG = join '', map { chr(32 + ($_ * 7 + int($_ / 251)) % 95) } 0 .. 1048575;
my $CHUNKED = ('0123456789abcdef' x 300) . "end";

sub head_for {
    my ($uri, @h) = @_;
    return join '', "POST $uri HTTP/1.1\r\nHost: localhost\r\n",
                    map({ "$_\r\n" } @h), "\r\n";
}

# kind => sub (conn, uri) returning the body that was sent (or undef)
my @KINDS = (
    [ 'Content-Length small' => sub {
        my ($c, $uri) = @_;
        $c->send(head_for($uri, "Content-Length: 26") . $SMALL) or return;
        return $SMALL;
    } ],
    [ 'Content-Length 1 MiB' => sub {
        my ($c, $uri) = @_;
        $c->send(head_for($uri, "Content-Length: " . length $BIG) . $BIG)
            or return;
        return $BIG;
    } ],
    [ 'chunked' => sub {
        my ($c, $uri) = @_;
        $c->send(head_for($uri, "Transfer-Encoding: chunked")
                 . Test::CgiApp::chunked_of($CHUNKED)) or return;
        return $CHUNKED;
    } ],
    [ 'split across reads' => sub {
        my ($c, $uri) = @_;
        my $body = '0123456789ABCDEFGHIJ';
        $c->send(head_for($uri, "Content-Length: 20") . substr($body, 0, 10))
            or return;
        sleep 0.3;
        $c->send(substr($body, 10)) or return;
        return $body;
    } ],
    [ 'Expect: 100-continue' => sub {
        my ($c, $uri) = @_;
        $c->send(head_for($uri, "Content-Length: 26", "Expect: 100-continue"))
            or return;
        my $r = $c->read_response(timeout => 3);
        return unless ok($r && $r->{status} == 100, "$uri: 100 Continue came")
                      or diag($r ? $r->{raw} : 'nothing');
        $c->send($SMALL) or return;
        return $SMALL;
    } ],
);

my $probe = 0;

sub check_case {
    my ($name, $port, $route, $kind) = @_;
    my ($rname, $uri, $where, $seen) = @$route;

    $up->reset;
    my $c = $t->raw($port);
    my $sent = $kind->[1]->($c, $uri);
    ok(defined $sent, "$name: sent") or return;
    my $r = $c->read_response(timeout => 10);
    ok($r, "$name: a response") or return;
    if ($where eq 'php') {
        is($r->{status}, 200, "$name: 200") or diag($r->{raw});
        my ($len, $sha) = ($r->{body} // '') =~ /len=(\d+) sha=(\w+)/;
        is($len, length $sent, "$name: php received every byte");
        is($sha, sha1_hex($sent), "$name: php received the bytes sent");
    } else {
        is($r->{status}, 200, "$name: 200") or diag(substr($r->{raw}, 0, 500));
        like($r->{body}, qr/^xa done/, "$name: the redirect target answered")
            if $rname eq 'X-Accel-Redirect';
        my @got = $up->requests;
        is(scalar @got, 1, "$name: the origin got one request");
        if (@got) {
            is($got[0]{method}, 'POST', "$name: as a POST");
            is($got[0]{uri}, $seen, "$name: for its URI");
            my $b = $got[0]{body} // '';
            is(length $b, length $sent, "$name: the origin received every byte");
            ok($b eq $sent, "$name: the origin received the bytes sent");
        }
    }
    $c->close;

    # the same pools, from a new connection: each answers its own request
    $probe++;
    my $p = $t->raw($port);
    $p->send("GET /direct/probe$probe HTTP/1.1\r\nHost: localhost\r\n\r\n"
             . "GET /body.php?probe=$probe HTTP/1.1\r\nHost: localhost\r\n"
             . "Connection: close\r\n\r\n");
    my @pr = $p->read_responses(2, timeout => 5);
    like($pr[0] && $pr[0]{body}, qr{^uri: /direct/probe$probe$}m,
         "$name: the origin pool is in step");
    like($pr[1] && $pr[1]{body}, qr/method=GET len=0 /,
         "$name: the php pool is in step");
    my @bad = grep { $_->{type} eq 'bad' } $up->events;
    ok(!@bad, "$name: the origin parsed everything it got") or diag(explain(\@bad));
}

for my $buffering ([ 'buffered', 0 ], [ 'unbuffered', 1 ]) {
    for my $route (@ROUTES) {
        for my $kind (@KINDS) {
            check_case("$buffering->[0], $route->[0], $kind->[0]",
                       $t->port($buffering->[1]), $route, $kind);
        }
    }
}

# --- a chunk that declares more than client_max_body_size (1k) -----------------

for my $route (@ROUTES) {
    my ($rname, $uri) = @$route;
    my $c = $t->raw($t->port(2));
    my $start = time;
    $c->send(head_for($uri, "Transfer-Encoding: chunked")
             . "7FFFFFFFFFFFFFFF\r\nabc");
    my $r = $c->read_response(timeout => 5);
    is($r && $r->{status}, 413, "$rname: a chunk over the limit: 413")
        or diag($r ? $r->{raw} : 'no response');
    ok(time - $start < 3, "$rname: at once");
    $c->close;
}
ok($t->log_contains(qr/client intended to send too large chunked body: 0\+9223372036854775807 bytes/),
   'logged with the declared size');

$t->stop;
$up->stop;
done_testing;
