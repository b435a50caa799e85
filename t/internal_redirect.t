#!/usr/bin/perl
# internal_redirect.t: redirects inside the server that an upstream or
# error_page asks for, against Test::Upstream: the X-Accel-Redirect URI is
# checked before it is served (".." also escaped, a NUL: 404 and nginx's
# "unsafe URI" line; escapes decoded), the method after each redirect as
# nginx has it (X-Accel-Redirect and error_page to a URI: GET, HEAD stays
# HEAD; to a named location: unchanged, so r->method and the method name
# the origin sees agree, and a POST is not retried on the next peer).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;
my $up2 = Test::Upstream->new;
$up2->start;
my $UP2 = $up2->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    types { text/plain txt; }
    upstream two { server $UP max_fails=0; server $UP2 max_fails=0; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name redirect.test;
        location / { root html; }
        location /accel/ { proxy_pass http://$UP; }
        location /protected/ { internal; alias %%PREFIX%%/html/private/; }
        location /up/ { proxy_pass http://$UP; }
        location /missing/ { root html; error_page 404 = \@back; }
        location \@back {
            proxy_pass http://$UP;
            proxy_ignore_headers X-Accel-Redirect;    # no loop back here
        }
        location /missing-two/ { root html; error_page 404 = \@two; }
        location \@two { proxy_pass http://two; }
        location /missing-uri/ { root html; error_page 404 /up/echo; }
    }
}
EOF
$t->write_file_raw('html/private/ok.txt', "private ok\n");
$t->write_file_raw('html/private/sub/x.txt', "x\n");
$t->write_file_raw('html/private/a b.txt', "spaced\n");
$t->write_file_raw('html/static.txt', "static target\n");
$t->write_file_raw('secret.txt', "the secret\n");   # outside the alias
$t->run;
my $P = $t->port(0);

sub req {
    my ($raw) = @_;
    my $c = $t->raw($P);
    $c->send($raw);
    return $c->read_response(head => ($raw =~ /^HEAD / ? 1 : 0));
}

# an X-Accel-Redirect value through Test::Upstream's /headers (its query is
# %XX-decoded once: a '%' of the value itself goes as %25)
sub accel {
    my ($value, $method, $body) = @_;
    (my $q = $value) =~ s/([^A-Za-z0-9\/._~-])/sprintf('%%%02X', ord $1)/ge;
    $method //= 'GET';
    $body //= '';
    my $len = $method eq 'POST' ? "Content-Length: " . length($body) . "\r\n" : '';
    return req("$method /accel/headers?X-Accel-Redirect=$q HTTP/1.1\r\n"
               . "Host: redirect.test\r\n${len}Connection: close\r\n\r\n$body");
}

sub last_request { my @r = $up->requests; return $r[-1] }

# --- X-Accel-Redirect: the URI is checked -----------------------------------

my $r = accel('/protected/ok.txt');
is $r->{status}, 200, 'X-Accel-Redirect to an internal alias location';
is $r->{body}, "private ok\n", 'its file';

is req("GET /protected/ok.txt HTTP/1.1\r\nHost: redirect.test\r\n"
       . "Connection: close\r\n\r\n")->{status}, 404,
    'the internal location is not for clients';

for my $bad ('/protected/sub/../../../secret.txt',
             '/protected/sub/%2e%2e/%2e%2e/%2E%2E/secret.txt',
             '/protected/sub/..%2f..%2f..%2fsecret.txt',
             '/protected/../../secret.txt?x=1',
             '/protected/ok.txt%00.jpg',
             '../secret.txt') {
    $r = accel($bad);
    is $r->{status}, 404, "X-Accel-Redirect: $bad: 404";
    unlike $r->{body} // '', qr/secret|private/, "X-Accel-Redirect: $bad: no file";
    ok $t->log_contains(qr/\[error\].*unsafe URI "\Q$bad\E" was detected/),
        "X-Accel-Redirect: $bad: nginx's log line";
}

$r = accel('/protected/ok%2Etxt');
is $r->{status}, 200, 'X-Accel-Redirect: escapes are decoded';
is $r->{body}, "private ok\n", 'X-Accel-Redirect: escapes are decoded: the file';
$r = accel('/protected/a%20b.txt?x=1');
is $r->{body}, "spaced\n", 'X-Accel-Redirect: %20 and a query';
$r = accel('/protected/./sub/x.txt');
is $r->{body}, "x\n", 'X-Accel-Redirect: a "." segment climbs nowhere (nginx lets it by)';

# --- X-Accel-Redirect: the method --------------------------------------------

$r = accel('/static.txt', 'POST', 'a=1&b=2');
is $r->{status}, 200, 'X-Accel-Redirect after a POST: the static target (GET)';
is $r->{body}, "static target\n", 'X-Accel-Redirect after a POST: its body';

$r = accel('/up/echo', 'POST', '');
is $r->{status}, 200, 'X-Accel-Redirect after a POST to a proxied URI';
is last_request()->{method}, 'GET', 'the origin gets a GET';

$r = accel('/up/echo', 'HEAD');
is $r->{status}, 200, 'X-Accel-Redirect after a HEAD';
is last_request()->{method}, 'HEAD', 'HEAD stays HEAD';

$r = accel('@back', 'POST', '');
is $r->{status}, 200, 'X-Accel-Redirect to a named location after a POST';
is last_request()->{method}, 'POST', 'a named location keeps the method';

# --- error_page: the method ---------------------------------------------------

$r = req("POST /missing/echo HTTP/1.1\r\nHost: redirect.test\r\n"
         . "Content-Length: 0\r\nConnection: close\r\n\r\n");
is $r->{status}, 200, 'error_page 404 = @named after a POST';
is last_request()->{method}, 'POST', 'the named location proxies the POST';

$r = req("POST /missing-uri/nothere HTTP/1.1\r\nHost: redirect.test\r\n"
         . "Content-Length: 0\r\nConnection: close\r\n\r\n");
is last_request()->{method}, 'GET', 'error_page 404 /uri after a POST: a GET';
$r = req("HEAD /missing-uri/nothere HTTP/1.1\r\nHost: redirect.test\r\n"
         . "Connection: close\r\n\r\n");
is last_request()->{method}, 'HEAD', 'error_page 404 /uri after a HEAD: HEAD';

# r->method is the POST too: a POST the first peer dropped after getting it
# is not sent to the next one (a GET is)
$up->reset;
$up2->reset;
$r = req("POST /missing-two/drop HTTP/1.1\r\nHost: redirect.test\r\n"
         . "Content-Length: 0\r\nConnection: close\r\n\r\n");
is $r->{status}, 502, 'error_page = @named: a POST the peer dropped: 502';
is scalar($up->requests) + scalar($up2->requests), 1,
    'error_page = @named: the POST is not retried on the next peer';
$up->reset;
$up2->reset;
$r = req("GET /missing-two/drop HTTP/1.1\r\nHost: redirect.test\r\n"
         . "Connection: close\r\n\r\n");
is scalar($up->requests) + scalar($up2->requests), 2,
    'error_page = @named: a GET is (the retry works here)';

$t->stop;
$up->stop;
$up2->stop;
done_testing;
