#!/usr/bin/perl
# proxy.t: proxy_pass end to end against Test::Upstream: the request sent
# upstream (URI rules, header defaults, proxy_set_header, bodies), the
# response (lengths, chunked, close-delimited, 1xx, HEAD, streaming, hidden
# and hop-by-hop headers, proxy_redirect, X-Accel-Redirect, intercepted
# errors), keepalive pools proven by the upstream's connection count,
# failures with nginx's error-log lines, next_upstream and the $upstream_*
# variables.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use Test::More;
use Test::Ringx;
use Test::Upstream;
use IO::Select;
use IO::Uncompress::Gunzip ();
use Time::HiRes qw(time sleep);

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;
my $up2 = Test::Upstream->new(idle_timeout_ms => 300);
$up2->start;
my $UP2 = $up2->addr;
my $sock = "/tmp/ringx-proxy-$$.sock";
my $upu = Test::Upstream->new(unix => $sock);
$upu->start;
chmod 0777, $sock;          # the workers run as nobody

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
    log_format up '\$request_uri \$status ua=\$upstream_addr us=\$upstream_status '
                  'ct=\$upstream_connect_time rt=\$upstream_response_time '
                  'br=\$upstream_bytes_received bs=\$upstream_bytes_sent '
                  'h=\$upstream_http_x_upstream_req';
    access_log logs/access.log up;
    upstream pool { server $UP; keepalive 4; }
    upstream pool_ka_close { server $UP2; keepalive 4; }
    upstream nopool { server $UP; }
    upstream mixed { server $DEAD; server $UP; }
    upstream alldead { server $DEAD; server $DEAD max_fails=1; }
    upstream sock { server unix:$sock; }
    upstream withbackup { server $DEAD; server $UP backup; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name proxy.test;
        location / { proxy_pass http://$UP; }
        location /app/ { proxy_pass http://$UP/echo/; }
        location /hdr/ {
            proxy_pass http://$UP;
            proxy_set_header X-Real-IP \$remote_addr;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header User-Agent "";
        }
        location /ka/ {
            proxy_pass http://pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /kaclose/ {
            proxy_pass http://pool_ka_close;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /noka/ { proxy_pass http://nopool; }
        location /mixed/ { proxy_pass http://mixed; }
        location /alldead/ { proxy_pass http://alldead; }
        location /backup/ { proxy_pass http://withbackup; }
        location /unix/ { proxy_pass http://sock; }
        location /refused/ { proxy_pass http://$DEAD; }
        location /timeout/ {
            proxy_pass http://$UP;
            proxy_read_timeout 1s;
        }
        location /passhdr/ {
            proxy_pass http://$UP;
            proxy_pass_header Server;
            proxy_hide_header X-Upstream-Conn;
            proxy_hide_header X-LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL;
        }
        location /redir/ { proxy_pass http://$UP/headers/; }
        location /intercept/ {
            proxy_pass http://$UP;
            proxy_intercept_errors on;
            error_page 404 /local404.txt;
        }
        location = /local404.txt { root html; }
        location /accel/ { proxy_pass http://$UP; }
        location /internal/ { internal; root html; }
        location /small/ {
            proxy_pass http://$UP;
            proxy_buffer_size 1k;
        }
        location /var/ { proxy_pass http://\$arg_up; }
        location /ws/ {
            proxy_pass http://$UP;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_read_timeout 2s;
        }
        location /gz/ {
            proxy_pass http://$UP;
            gzip on;
            gzip_proxied any;
            gzip_types text/plain;
        }
        location /gzu/ {
            proxy_pass http://$UP;
            proxy_buffering off;
            gzip on;
            gzip_proxied any;
            gzip_types text/plain;
        }
        location /stream/ {
            proxy_pass http://$UP;
            proxy_request_buffering off;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            client_max_body_size 10m;
            proxy_redirect off;     # streaming does not depend on it
        }
        location /next404/ {
            proxy_pass http://mixed;
            proxy_next_upstream error http_404;
        }
    }
}
EOF
$t->write_file_raw('html/local404.txt', "local not found page\n");
$t->write_file_raw('html/internal/target.txt', "accel target\n");
$t->run;
my $P = $t->port(0);

sub req {
    my ($raw, %o) = @_;
    my $c = $t->raw($P);
    $c->send($raw);
    return $c->read_response(%o);
}

sub get {
    my ($uri, $extra) = @_;
    $extra //= '';
    return req("GET $uri HTTP/1.1\r\nHost: proxy.test\r\n${extra}Connection: close\r\n\r\n");
}

sub last_request { my @r = $up->requests; return $r[-1] }

sub header_of {
    my ($rq, $name) = @_;
    my @v = map { $_->[1] } grep { lc $_->[0] eq lc $name } @{ $rq->{headers} };
    return wantarray ? @v : $v[0];
}

# --- the request sent upstream -------------------------------------------

my $r = get('/echo/a%20b/c?x=1&y=%41', "X-Custom: one\r\n");
is $r->{status}, 200, 'proxied GET';
my $rq = last_request();
is $rq->{uri}, '/echo/a%20b/c?x=1&y=%41',
    'without a URI part the request URI goes as the client sent it';
is $rq->{version}, 'HTTP/1.0', 'proxy_http_version defaults to 1.0';
is header_of($rq, 'Host'), $UP, 'Host is $proxy_host';
is header_of($rq, 'Connection'), 'close', 'Connection: close by default';
is header_of($rq, 'X-Custom'), 'one', 'client headers are passed';
my $e = Test::Upstream::parse_echo($r->{body});
is $e->{uri}, '/echo/a%20b/c?x=1&y=%41', 'the body is the upstream\'s';

$r = get('/app/sub/dir?q=2');
$rq = last_request();
is $rq->{uri}, '/echo/sub/dir?q=2', 'the location prefix is replaced by the URI part';
$r = get('/app/with%20space');
is last_request()->{uri}, '/echo/with%20space', 'the decoded URI is escaped again';

$r = get('/hdr/x', "User-Agent: secret\r\nX-Forwarded-For: 10.0.0.1\r\n");
$rq = last_request();
is header_of($rq, 'X-Real-IP'), '127.0.0.1', 'proxy_set_header with a variable';
is header_of($rq, 'X-Forwarded-For'), '10.0.0.1, 127.0.0.1',
    '$proxy_add_x_forwarded_for appends the client';
is scalar(() = header_of($rq, 'X-Forwarded-For')), 1, 'the client\'s XFF is replaced, not doubled';
ok !defined header_of($rq, 'User-Agent'), 'an empty proxy_set_header drops the header';

# request bodies
$r = req("POST /echo HTTP/1.1\r\nHost: proxy.test\r\nContent-Length: 11\r\n"
         . "Connection: close\r\n\r\nhello world");
is $r->{status}, 200, 'POST with a body';
$rq = last_request();
is $rq->{body}, 'hello world', 'the body reaches the upstream';
is header_of($rq, 'Content-Length'), '11', 'with its Content-Length';
$r = req("POST /echo HTTP/1.1\r\nHost: proxy.test\r\nTransfer-Encoding: chunked\r\n"
         . "Connection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
$rq = last_request();
is $rq->{body}, 'hello world', 'a chunked request body arrives whole';
is header_of($rq, 'Content-Length'), '11', 'sent with a Content-Length';
ok !defined header_of($rq, 'Transfer-Encoding'), 'and without Transfer-Encoding';
{
    my $c = $t->raw($P);
    $c->send("POST /echo HTTP/1.1\r\nHost: proxy.test\r\nContent-Length: 3\r\n"
             . "Expect: 100-continue\r\nConnection: close\r\n\r\n");
    my $cont = $c->read_response;
    is $cont->{status}, 100, '100 Continue to the client';
    $c->send('abc');
    my $fin = $c->read_response;
    is $fin->{status}, 200, 'then the proxied response';
    ok !defined header_of(last_request(), 'Expect'), 'Expect is not passed upstream';
    is last_request()->{body}, 'abc', 'the body after 100 Continue';
}

# proxy_request_buffering off: the body goes upstream as it arrives
{
    my $body = Test::Upstream::pattern(3_000_000);
    my $before = $up->connections;
    my $c = $t->raw($P);
    $c->send("POST /stream/echo HTTP/1.1\r\nHost: proxy.test\r\nContent-Length: "
             . length($body) . "\r\nConnection: close\r\n\r\n" . substr($body, 0, 100000));
    ok $up->wait_for(sub { $up->connections > $before }, 3),
        'streamed: the upstream is contacted before the body is complete';
    $c->send(substr($body, 100000));
    my $resp = $c->read_response(timeout => 10);
    is $resp->{status}, 200, 'a streamed 3 MB body';
    my $rq = last_request();
    ok $rq->{body} eq $body, 'arrives intact';
    is header_of($rq, 'Content-Length'), length($body), 'with the client\'s Content-Length';

    $c = $t->raw($P);
    $c->send("POST /stream/echo HTTP/1.1\r\nHost: proxy.test\r\nTransfer-Encoding: chunked\r\n"
             . "Connection: close\r\n\r\n");
    my $chunked = '';
    for my $i (0 .. 9) {
        my $piece = substr($body, $i * 30000, 30000);
        $chunked .= sprintf("%x\r\n%s\r\n", length $piece, $piece);
    }
    $c->send($chunked . "0\r\n\r\n");
    $resp = $c->read_response(timeout => 10);
    is $resp->{status}, 200, 'a streamed chunked body';
    $rq = last_request();
    ok $rq->{chunked}, 'goes upstream chunked (HTTP/1.1)';
    ok $rq->{body} eq substr($body, 0, 300000), 'intact';
}

# --- the response ----------------------------------------------------------

$r = get('/len/100000');
is $r->{status}, 200, 'Content-Length body';
is $r->{headers}{'content-length'}, 100000, 'its length is passed on';
is $r->{body}, Test::Upstream::pattern(100000), 'the bytes are right';

$r = get('/chunked/70000?trailers=1');
is $r->{status}, 200, 'chunked upstream body';
ok $r->{chunked}, 'goes chunked to an HTTP/1.1 client';
is $r->{body}, Test::Upstream::pattern(70000), 'de-chunked and re-chunked intact';

$r = get('/close/50000');
is $r->{body}, Test::Upstream::pattern(50000), 'close-delimited body';
$r = get('/close/3000?v=1.0');
is $r->{body}, Test::Upstream::pattern(3000), 'HTTP/1.0 upstream, close-delimited';

$r = req("GET /len/5000 HTTP/1.0\r\nHost: proxy.test\r\n\r\n");
is length($r->{body}), 5000, 'HTTP/1.0 client';

{
    my $c = $t->raw($P);
    $c->send("HEAD /len/5000 HTTP/1.1\r\nHost: proxy.test\r\n\r\n"
             . "GET /len/10 HTTP/1.1\r\nHost: proxy.test\r\nConnection: close\r\n\r\n");
    my $h = $c->read_response(head => 1);
    is $h->{status}, 200, 'HEAD';
    is $h->{headers}{'content-length'}, 5000, 'HEAD keeps the length';
    my $n = $c->read_response;
    is $n->{body}, Test::Upstream::pattern(10), 'no body after HEAD: the next response follows';
}

$r = get('/1xx');
is $r->{status}, 200, '1xx interim responses are skipped';
is $r->{body}, "final\n", 'the final body';

$r = get('/passhdr/headers?X-One=1&Keep-Alive=timeout%3D5&X-Upstream-Conn=9');
like $r->{headers}{server} // '', qr/./, 'a Server header is sent';
ok !defined $r->{headers}{'keep-alive'}, 'hop-by-hop Keep-Alive is not passed';
ok !defined $r->{headers}{'x-upstream-conn'}, 'proxy_hide_header';
is $r->{headers}{'x-one'}, '1', 'other headers pass';
# names of 63 bytes and more share one place in the mask of hidden lengths
# (http_upstream_header.c): one hidden, one of another length passed
$r = get('/passhdr/headers?X-LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL=7&X-MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM=8&Upgrade=h2c&Keep-Alive=1');
ok !defined $r->{headers}{lc 'X-LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL'}, 'proxy_hide_header of a 70-byte name';
is $r->{headers}{lc 'X-MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM'}, '8', 'a 65-byte name not hidden passes';
ok !defined $r->{headers}{upgrade} && !defined $r->{headers}{'keep-alive'},
    'hop-by-hop Upgrade and Keep-Alive are not passed beside them';
# nginx: the upstream's Server passed by proxy_pass_header goes instead of
# ringx's own, not beside it; without it, ringx's own alone
sub servers { map { $_->[1] } grep { lc $_->[0] eq 'server' } @{ $_[0]{header_list} } }
$r = get('/passhdr/headers?Server=up-srv');
is_deeply [servers($r)], ['up-srv'], 'proxy_pass_header Server: the upstream\'s Server only';
$r = get('/headers?Server=up-srv');
is_deeply [servers($r)], [$r->{headers}{server}], 'without it: one Server';
like $r->{headers}{server} // '', qr{^ringx}, '... ringx\'s own';
$r = get('/headers?Set-Cookie=a%3D1&Set-Cookie=b%3D2&Date=x&X-Pad=p');
my @cookies = map { $_->[1] } grep { lc $_->[0] eq 'set-cookie' } @{ $r->{header_list} };
is_deeply \@cookies, ['a=1', 'b=2'], 'several Set-Cookie kept';
isnt $r->{headers}{date}, 'x', 'the upstream\'s Date is hidden (ringx sends its own)';
ok !defined $r->{headers}{'x-pad'}, 'X-Pad hidden by default';

$r = get('/redir/302?Location=' . "http://$UP/headers/next");
is $r->{status}, 302, 'redirect status';
is $r->{headers}{location}, "http://proxy.test:$P/redir/next",
    'proxy_redirect default rewrites Location (then made absolute, as nginx)';

$r = get('/intercept/status/404');
is $r->{status}, 404, 'intercepted status';
is $r->{body}, "local not found page\n", 'proxy_intercept_errors serves error_page';
$r = get('/intercept/status/500');
is $r->{body}, "status 500\n", 'no error_page for it: the upstream\'s body';

$r = get('/accel/headers?X-Accel-Redirect=/internal/target.txt');
is $r->{status}, 200, 'X-Accel-Redirect';
is $r->{body}, "accel target\n", 'redirects internally to the named URI';

# streaming: the first piece arrives while the upstream still sends
{
    my $c = $t->raw($P);
    my $t0 = time;
    $c->send("GET /slow/4000?pieces=4&ms=600 HTTP/1.1\r\nHost: proxy.test\r\nConnection: close\r\n\r\n");
    my $first;
    while (time - $t0 < 5) {
        $c->wait_closed(0.05);
        if ($c->buffer =~ /\r\n\r\n(.+)/s) { $first = time - $t0; last }
    }
    ok defined $first && $first < 1.2, 'body bytes reach the client before the upstream finishes'
        or diag "first byte after " . ($first // 'never');
    my $all = $c->read_all(timeout => 5);
    my ($body) = $all =~ /\r\n\r\n(.*)/s;
    is length($body), 4000, 'and the whole body follows';
}

# gzip on proxied bodies: streamed through the filter, chunked
{
    $r = get('/gz/len/3000000', "Accept-Encoding: gzip\r\n");
    is $r->{headers}{'content-encoding'}, 'gzip', 'a proxied body is compressed';
    ok $r->{chunked}, 'and sent chunked';
    my $plain;
    IO::Uncompress::Gunzip::gunzip(\$r->{body} => \$plain);
    ok defined $plain && $plain eq Test::Upstream::pattern(3000000), '3 MB round trip through gzip';
    $r = get('/gz/chunked/200000', "Accept-Encoding: gzip\r\n");
    IO::Uncompress::Gunzip::gunzip(\$r->{body} => \$plain);
    ok $plain eq Test::Upstream::pattern(200000),
        'a chunked upstream body through gzip (longer than gzip_buffers hold: streamed)';
    # shorter than what gzip_buffers hold compressed: gathered, then compressed
    # in one call when ringx has libdeflate (t/gzip.t tells which)
    for my $n (1, 5000, 20000, 100000) {
        $r = get("/gz/chunked/$n?size=700", "Accept-Encoding: gzip\r\n");
        $plain = undef;
        IO::Uncompress::Gunzip::gunzip(\$r->{body} => \$plain);
        ok defined $plain && $plain eq Test::Upstream::pattern($n),
            "a chunked upstream body of $n bytes in 700-byte chunks through gzip";
    }
}

# proxy_buffering off: gzip lets each piece out as it comes (nginx)
{
    my $c = $t->raw($P);
    my $t0 = time;
    $c->send("GET /gzu/slow/40000?pieces=4&ms=600 HTTP/1.1\r\nHost: proxy.test\r\n"
             . "Accept-Encoding: gzip\r\nConnection: close\r\n\r\n");
    my $first;
    while (time - $t0 < 5) {
        $c->wait_closed(0.05);
        if ($c->buffer =~ /\r\n\r\n[0-9a-f]+\r\n(.+)/s) { $first = time - $t0; last }
    }
    ok defined $first && $first < 1.2,
        'proxy_buffering off: compressed bytes reach the client before the upstream finishes'
        or diag "first byte after " . ($first // 'never');
    my $all = $c->read_all(timeout => 5);
    my ($resp) = Test::Ringx::parse_responses($all);
    my $plain;
    IO::Uncompress::Gunzip::gunzip(\$resp->{body} => \$plain) if $resp;
    ok defined $plain && $plain eq Test::Upstream::pattern(40000),
        'proxy_buffering off: the whole body decompresses';
}

# a large body, bounded buffers
$r = req("GET /len/6000000 HTTP/1.1\r\nHost: proxy.test\r\nConnection: close\r\n\r\n",
         timeout => 20);
is sha256_hex($r->{body}), sha256_hex(Test::Upstream::pattern(6000000)), '6 MB body intact';

# --- keepalive pools ---------------------------------------------------------

$up->reset;
my $before = $up->connections;
for my $i (1 .. 5) {
    $r = get("/ka/len/$i");
    is $r->{body}, Test::Upstream::pattern($i), "pooled request $i";
}
is $up->connections - $before, 1, 'five requests, one upstream connection (keepalive 4)';
is header_of(last_request(), 'Connection'), undef, 'Connection cleared for keepalive';
is last_request()->{version}, 'HTTP/1.1', 'proxy_http_version 1.1';
$before = $up->connections;
get("/noka/len/1") for 1 .. 3;
is $up->connections - $before, 3, 'without keepalive: a connection per request';

# the upstream closes an idle pooled connection: noticed, never used
$before = $up2->connections;
$r = get('/kaclose/len/10');
is $r->{status}, 200, 'first request on the pool';
sleep 0.8;                  # the upstream closes idle connections after 300 ms
$up2->reset;
$r = get('/kaclose/len/20');
is $r->{status}, 200, 'after the upstream closed the idle connection';
is scalar($up2->requests), 1, 'one request reached the upstream (no failed try)';
is $up2->connections, 1, 'on a new connection';
is(($up2->requests)[0]{n}, 1, 'its first request');
ok !$t->log_contains(qr/prematurely closed.*kaclose/), 'no error for the idle close';

# keepalive across a connection the upstream closes after responding
$r = get('/ka/keepalive-close');
is $r->{body}, "bye\n", 'Connection: close from the upstream';
$r = get('/ka/len/7');
is $r->{body}, Test::Upstream::pattern(7), 'the next pooled request opens a new connection';

# --- failures ----------------------------------------------------------------

$r = get('/refused/x');
is $r->{status}, 502, 'refused: 502';
ok $t->log_contains(qr/\[error\] .*connect\(\) failed \(111: Connection refused\) while connecting to upstream, client: 127\.0\.0\.1, server: proxy\.test, request: "GET \/refused\/x HTTP\/1\.1", upstream: "http:\/\/\Q$DEAD\E\/refused\/x", host: "proxy\.test"/),
    'nginx\'s connect() failed line';

$r = get('/timeout/stall-header');
is $r->{status}, 504, 'read timeout: 504';
ok $t->log_contains(qr/upstream timed out \(110: Connection timed out\) while reading response header from upstream, client: 127\.0\.0\.1, .*upstream: "http:\/\/\Q$UP\E\/timeout\/stall-header"/),
    'nginx\'s timed-out line';

$r = get('/garbage');
is $r->{status}, 502, 'garbage from the upstream: 502';
ok $t->log_contains(qr/upstream sent no valid HTTP\/1\.0 header while reading response header from upstream/),
    'logged as nginx does';
$r = get('/bad-header');
is $r->{status}, 502, 'a malformed header line: 502';
$r = get('/drop');
is $r->{status}, 502, 'closed without an answer: 502';
ok $t->log_contains(qr/upstream prematurely closed connection while reading response header from upstream/),
    'premature close logged';
$r = get('/small/huge-header/4000');
is $r->{status}, 502, 'a header larger than proxy_buffer_size: 502';
ok $t->log_contains(qr/upstream sent too big header while reading response header from upstream/),
    'too big header logged';

{
    my $c = $t->raw($P);
    $c->send("GET /close-mid/20000 HTTP/1.1\r\nHost: proxy.test\r\n\r\n");
    ok $c->wait_closed(5), 'a body cut by the upstream: the client connection closes';
    my ($head, $body) = $c->buffer =~ /^(.*?\r\n\r\n)(.*)$/s;
    like $head // '', qr/^HTTP\/1\.1 200/, 'after the header went out';
    ok length($body // '') < 20000, 'with a short body, never a padded one';
    ok $t->log_contains(qr/upstream prematurely closed connection while reading upstream/),
        'logged';
}

# --- next upstream, failures counted ------------------------------------------

my @ok;
for (1 .. 4) {
    $r = get('/mixed/len/5');
    push @ok, $r->{status};
}
is_deeply \@ok, [200, 200, 200, 200], 'a dead peer in the group: every request served';
my @refused = $t->log_contains(qr/connect\(\) failed .*mixed/);
is scalar(@refused), 1, 'the dead peer is tried once, then out for fail_timeout';
my $log = $t->read_file('logs/access.log');
like $log, qr/^\/mixed\/len\/5 200 ua=\Q$DEAD\E, \Q$UP\E us=502, 200 ct=\S+, \d+\.\d{3} rt=\S+, \S+ br=0, \d+ bs=0, \d+ h=/m,
    '$upstream_addr and $upstream_status list both tries';

$r = get('/alldead/x');
is $r->{status}, 502, 'all peers refuse: 502';
$r = get('/alldead/y');
is $r->{status}, 502, 'and while they are out';
ok $t->log_contains(qr/no live upstreams while connecting to upstream, client: .*request: "GET \/alldead\/y HTTP\/1\.1", upstream: "http:\/\/alldead\/alldead\/y"/),
    'no live upstreams, named by the group';

$r = get('/backup/len/3');
is $r->{status}, 200, 'the backup serves when the primary fails';

$r = get('/next404/status/404');
is $r->{status}, 502, 'http_404 and the other peer out: 502, as nginx';
ok $t->log_contains(qr/no live upstreams while connecting to upstream, .*request: "GET \/next404\/status\/404/),
    'no live upstreams after the 404';

# non-idempotent requests are not sent twice
$up->reset;
$r = req("POST /mixed/echo HTTP/1.1\r\nHost: proxy.test\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
is $r->{status}, 200, 'POST through a group with a dead peer (it failed before sending)';

# --- WebSocket (Upgrade) -----------------------------------------------------

sub read_exactly {
    my ($c, $n, $timeout) = @_;
    my $deadline = time + ($timeout // 5);
    my $got = '';
    my $sel = IO::Select->new($c->sock);
    while (length($got) < $n && time < $deadline) {
        last unless $sel->can_read($deadline - time);
        my $k = sysread($c->sock, my $buf, 65536);
        last unless $k;
        $got .= $buf;
    }
    return $got;
}

{
    my $c = $t->raw($P);
    $c->send("GET /ws/ws HTTP/1.1\r\nHost: proxy.test\r\nUpgrade: websocket\r\n"
             . "Connection: Upgrade\r\n\r\nearly");
    my $head = '';
    my $sel = IO::Select->new($c->sock);
    while ($head !~ /\r\n\r\n/ && $sel->can_read(5)) {
        sysread($c->sock, my $buf, 1) or last;
        $head .= $buf;
    }
    like $head, qr/^HTTP\/1\.1 101 /, '101 Switching Protocols reaches the client';
    like $head, qr/\r\nConnection: upgrade\r\n/i, 'with Connection: upgrade';
    like $head, qr/\r\nUpgrade: websocket\r\n/i, 'and the Upgrade header';
    unlike $head, qr/Transfer-Encoding|Content-Length/i, 'and no body framing';
    my $ws = (grep { $_->{uri} eq '/ws/ws' } $up->requests)[-1];
    is header_of($ws, 'Upgrade'), 'websocket', 'Upgrade sent upstream';
    is header_of($ws, 'Connection'), 'upgrade', 'Connection: upgrade sent upstream';
    is read_exactly($c, 5), 'early', 'bytes sent with the request are tunnelled';
    $c->send('ping');
    is read_exactly($c, 4), 'ping', 'echoed through the tunnel';
    my $big = Test::Upstream::pattern(300000);
    $c->send($big);
    my $back = read_exactly($c, length $big, 10);
    ok $back eq $big, '300 KB each way, intact' or diag 'got ' . length($back) . ' bytes';
    $c->close;
    ok $up->wait_for(sub { grep { ($_->{by} // '') eq 'peer' } $up->closes }, 5),
        'the client closing closes the upstream side';
}
{
    my $c = $t->raw($P);
    $c->send("GET /ws/ws HTTP/1.1\r\nHost: proxy.test\r\nUpgrade: websocket\r\n"
             . "Connection: Upgrade\r\n\r\n");
    ok $c->wait_closed(6), 'an idle tunnel closes after proxy_read_timeout';
    ok $t->log_contains(qr/upstream timed out \(110: Connection timed out\) while proxying upgraded connection/),
        'logged';
}

# --- unix sockets and variables ---------------------------------------------

$r = get('/unix/len/9');
is $r->{body}, Test::Upstream::pattern(9), 'unix: upstream';
is header_of(($upu->requests)[-1], 'Host'), 'sock', 'Host is the group name';

$r = get('/var/len/4?up=pool');
is $r->{status}, 200, 'proxy_pass with a variable naming an upstream group';
$r = get('/var/len/4?up=nosuchhost.example');
is $r->{status}, 502, 'an unknown host without a resolver: 502';
ok $t->log_contains(qr/no resolver defined to resolve nosuchhost\.example/), 'logged';

$t->stop;
$up->stop;
$up2->stop;
$upu->stop;
unlink $sock;
done_testing;
