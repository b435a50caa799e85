#!/usr/bin/perl
# mirror.t: mirror and mirror_request_body (nginx's ngx_http_mirror_module)
# on ringx's background subrequests (http/http_background.c): a GET and
# POST bodies (26 B, 1 MiB spilled to the temporary file, chunked) reach
# the origin and the mirror byte-exact, with the method and arguments;
# two mirrors; mirror_request_body off (no body, no Content-Length); a
# slow mirror (the client's response is not delayed; the access log line
# and the next request on the connection wait for the mirror, as nginx);
# a refused mirror and a 500 mirror (the main response unchanged); a
# static main response; keepalive; the config errors; and a client that
# goes while a slow mirror runs.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use IO::Socket::IP;
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Time::HiRes qw(time sleep);

my $origin = Test::Upstream->new;
$origin->start;
my $ORIGIN = $origin->addr;
my $mir = Test::Upstream->new;
$mir->start;
my $MIR = $mir->addr;

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
    log_format al '\$request_uri \$status';
    access_log logs/access.log al;
    client_body_buffer_size 16k;
    client_max_body_size 10m;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root %%PREFIX%%/html;

        location /one/ { mirror /m1; proxy_pass http://$ORIGIN/echo/; }
        location /two/ {
            mirror /m1;
            mirror /m2;
            proxy_pass http://$ORIGIN/echo/;
        }
        location /nobody/ {
            mirror /m1;
            mirror_request_body off;
            proxy_pass http://$ORIGIN/echo/;
        }
        location /slow/ { mirror /mslow; proxy_pass http://$ORIGIN/echo/; }
        location /refused/ { mirror /mdead; proxy_pass http://$ORIGIN/echo/; }
        location /err/ { mirror /m500; proxy_pass http://$ORIGIN/echo/; }
        location /static/ { mirror /m1; }
        location /off/ {
            mirror off;
            proxy_pass http://$ORIGIN/echo/;
        }

        location = /m1 { internal; proxy_pass http://$MIR/echo/m1; }
        location = /m2 { internal; proxy_pass http://$MIR/echo/m2; }
        location = /mslow {
            internal;
            proxy_pass http://$MIR/sleep/2500;
        }
        location = /mdead { internal; proxy_pass http://$DEAD; }
        location = /m500 { internal; proxy_pass http://$MIR/status/500; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        mirror /m1;
        location / { proxy_pass http://$ORIGIN/echo/; }
        location /inner/ { mirror off; proxy_pass http://$ORIGIN/echo/; }
        location = /m1 { internal; proxy_pass http://$MIR/echo/srv; }
    }
}
EOF
$t->write_file('html/static/a.txt', "static file\n");
$t->run;
my $P = $t->port(0);

sub req {
    my ($method, $path, %o) = @_;
    my $body = $o{body} // '';
    my $head = "$method $path HTTP/1.1\r\nHost: localhost\r\n";
    if ($o{chunked}) {
        $head .= "Transfer-Encoding: chunked\r\n";
        my $c = '';
        for (my $i = 0; $i < length $body; $i += 1000) {
            my $piece = substr($body, $i, 1000);
            $c .= sprintf("%x\r\n%s\r\n", length $piece, $piece);
        }
        $body = $c . "0\r\n\r\n";
    } elsif ($method eq 'POST') {
        $head .= "Content-Length: " . length($body) . "\r\n";
    }
    $head .= "Connection: close\r\n" unless $o{keep};
    return "$head\r\n$body";
}

sub fetch {
    my ($raw, %o) = @_;
    my ($r) = Test::Ringx::parse_responses(
        $t->http($o{port} // $P, $raw, timeout => $o{timeout} // 10) // '');
    return $r;
}

sub header_of {
    my ($req, $name) = @_;
    my @v = map { $_->[1] } grep { lc $_->[0] eq lc $name } @{ $req->{headers} };
    return $v[0];
}

sub mirrored {
    my ($n) = @_;
    my @r = $mir->wait_requests($n, 10);
    return @r;
}

# GET: the mirror gets the method and the arguments
{
    $mir->reset;
    $origin->reset;
    my $r = fetch(req('GET', '/one/x?a=1&b=2'));
    is $r->{status}, 200, 'GET: the main response';
    like $r->{body}, qr{^uri: /echo/x\?a=1&b=2$}m, 'GET: the origin got it';
    my @m = mirrored(1);
    is scalar @m, 1, 'GET: one mirror request';
    is $m[0]{method}, 'GET', 'GET: the mirror gets the method';
    is $m[0]{uri}, '/echo/m1?a=1&b=2', 'GET: the mirror gets the arguments';
}

# POST bodies: 26 B, 1 MiB (spilled past client_body_buffer_size), chunked
for my $case ([small => 'abcdefghijklmnopqrstuvwxyz', 0],
              [large => join('', map { chr(32 + $_ % 90) } 1 .. 1048576), 0],
              [chunked => 'x' x 5000 . 'end', 1]) {
    my ($name, $body, $chunked) = @$case;
    $mir->reset;
    $origin->reset;
    my $r = fetch(req('POST', "/one/$name", body => $body,
                      chunked => $chunked), timeout => 20);
    is $r->{status}, 200, "POST $name: the main response";
    my @o = $origin->wait_requests(1);
    is length($o[0]{body} // ''), length $body,
        "POST $name: the origin got the whole body";
    is sha256_hex($o[0]{body} // ''), sha256_hex($body),
        "POST $name: the origin's body is exact";
    my @m = mirrored(1);
    is $m[0]{method}, 'POST', "POST $name: the mirror gets POST";
    is sha256_hex($m[0]{body} // ''), sha256_hex($body),
        "POST $name: the mirror's body is exact";
    is header_of($m[0], 'Content-Length'), length $body,
        "POST $name: the mirror gets a Content-Length";
    ok !$m[0]{chunked}, "POST $name: the mirror's body is not chunked";
}
ok !$t->log_contains(qr/a subrequest cannot read/), 'no refused body read';

# two mirrors
{
    $mir->reset;
    my $r = fetch(req('POST', '/two/t?k=v', body => 'two-mirrors'));
    is $r->{status}, 200, 'two mirrors: the main response';
    my @m = sort { $a->{uri} cmp $b->{uri} } mirrored(2);
    is_deeply [map { $_->{uri} } @m], ['/echo/m1?k=v', '/echo/m2?k=v'],
        'two mirrors: both requested';
    is_deeply [map { $_->{body} } @m], ['two-mirrors', 'two-mirrors'],
        'two mirrors: both got the body';
}

# mirror_request_body off: no body and no Content-Length (nginx)
{
    $mir->reset;
    $origin->reset;
    my $r = fetch(req('POST', '/nobody/n', body => 'kept for the origin'));
    is $r->{status}, 200, 'body off: the main response';
    my @o = $origin->wait_requests(1);
    is $o[0]{body}, 'kept for the origin', 'body off: the origin has the body';
    my @m = mirrored(1);
    is $m[0]{method}, 'POST', 'body off: the mirror gets POST';
    is $m[0]{body} // '', '', 'body off: the mirror gets no body';
    ok !defined header_of($m[0], 'Content-Length'),
        'body off: no Content-Length to the mirror';
    ok !defined header_of($m[0], 'Transfer-Encoding'),
        'body off: no Transfer-Encoding to the mirror';
}

# a refused mirror and a 500 mirror leave the main response as it is
{
    my $ref = fetch(req('GET', '/one/same'));
    my $r = fetch(req('GET', '/refused/same'));
    is $r->{status}, 200, 'refused mirror: 200';
    is $r->{body} =~ s/^conn: \d+\n//mr, $ref->{body} =~ s/^conn: \d+\n//mr,
        'refused mirror: the body unchanged';
    ok $t->wait_for(sub { $t->log_contains(
        qr/connect\(\) failed .*subrequest: "\/mdead"/) }, 5),
        'refused mirror: logged with the subrequest named';
    $r = fetch(req('POST', '/err/e', body => 'x' x 100));
    is $r->{status}, 200, '500 mirror: 200';
    like $r->{body}, qr/^body-length: 100$/m, '500 mirror: the body unchanged';
}

# a static file as the main response
{
    $mir->reset;
    my $r = fetch(req('GET', '/static/a.txt'));
    is $r->{status}, 200, 'static: 200';
    is $r->{body}, "static file\n", 'static: the file';
    is scalar(mirrored(1)), 1, 'static: mirrored';
}

# inheritance: server level, "off" in a location
{
    $mir->reset;
    fetch(req('GET', '/s?q=1'), port => $t->port(1));
    my @m = mirrored(1);
    is $m[0]{uri}, '/echo/srv?q=1', 'server-level mirror inherited';
    $mir->reset;
    fetch(req('GET', '/inner/i'), port => $t->port(1));
    fetch(req('GET', '/off/o'));
    sleep 0.3;
    is scalar($mir->requests), 0, '"mirror off" in a location: none';
}

# keepalive: requests after a mirrored one on the same connection
{
    $mir->reset;
    my $c = $t->raw($P);
    $c->send(req('POST', '/one/k1', body => 'first', keep => 1));
    my $r1 = $c->read_response;
    $c->send(req('GET', '/one/k2', keep => 1));
    my $r2 = $c->read_response;
    $c->send(req('POST', '/two/k3', body => 'third', keep => 1));
    my $r3 = $c->read_response;
    is_deeply [map { $_ && $_->{status} } $r1, $r2, $r3], [200, 200, 200],
        'keepalive: three responses on one connection';
    like $r3->{body}, qr/^body-length: 5$/m, 'keepalive: the third body';
    my @m = mirrored(4);
    is scalar @m, 4, 'keepalive: every request mirrored';
    ok $c->still_open, 'keepalive: the connection stays';
    $c->close;
}

# a slow mirror: the client's response goes out at once; the access log
# line and the next request on the connection wait for the mirror (nginx)
{
    my $c = $t->raw($P);
    my $t0 = time;
    $c->send(req('GET', '/slow/s1', keep => 1));
    my $r1 = $c->read_response(timeout => 10);
    my $took = time - $t0;
    is $r1 && $r1->{status}, 200, 'slow mirror: the main response';
    cmp_ok $took, '<', 2.0, 'slow mirror: the response is not delayed';
    ok !$t->log_contains(qr{^/slow/s1 }, 'logs/access.log'),
        'slow mirror: no access log line while the mirror runs';
    $c->send(req('GET', '/one/after', keep => 1));
    my $r2 = $c->read_response(timeout => 10);
    my $took2 = time - $t0;
    is $r2 && $r2->{status}, 200, 'slow mirror: the next request answered';
    cmp_ok $took2, '>=', 2.0,
        'slow mirror: the next request waited for the mirror';
    ok $t->log_contains(qr{^/slow/s1 200$}, 'logs/access.log'),
        'slow mirror: the access log line once it ended';
    $c->close;
}

# a client that goes while a slow mirror runs
{
    my $c = $t->raw($P);
    $c->send(req('POST', '/slow/gone', body => 'bye', keep => 1));
    my $r = $c->read_response(timeout => 10);
    is $r && $r->{status}, 200, 'client gone: the response came';
    $c->close;
    my $c2 = $t->raw($P);
    $c2->send(req('GET', '/slow/gone2', keep => 1));
    $c2->close;            # before the response
    sleep 0.3;
    my $r2 = fetch(req('GET', '/one/alive'));
    is $r2 && $r2->{status}, 200, 'client gone: the server goes on';
    ok $t->wait_for(sub { $t->log_contains(qr{^/slow/gone2 }, 'logs/access.log') }, 10),
        'client gone: the request logged';
}

$t->stop;

# config errors
{
    my $t2 = Test::Ringx->new;
    for my $case (['mirror /a; mirror off;', qr/"mirror" directive is duplicate/],
                  ['mirror off; mirror /a;', qr/"mirror" directive is duplicate/],
                  ['mirror a;', qr/invalid URI "a" in "mirror"/],
                  ['mirror_request_body maybe;', qr/mirror_request_body/]) {
        $t2->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { $case->[0] } } }
EOF
        my ($rc, $out, $err) = $t2->ringx('-t');
        isnt $rc, 0, "-t refuses: $case->[0]";
        like $err, qr/\[emerg\].*$case->[1].*ringx\.conf:2/,
            "-t names it: $case->[0]";
    }
}

done_testing;
