#!/usr/bin/perl
# http2_request_fields.t: an HTTP/2 stream's request is the same request
# as over HTTP/1.1 (issue #20: its fields go to the request layer as
# fields, not through llhttp): $request, $server_protocol and
# $request_length in the access log; Host from :authority and from a host
# field (which wins), a bad Host (400), server selection by it; cookie
# crumbs joined with "; "; a field over large_client_header_buffers (494,
# "too long header line") and a header that needs more large buffers than
# allowed (494, "too large request"); an underscore name dropped; a
# method llhttp does not know (400), TRACE (405), HEAD; a target with ../
# and %2F normalised as over HTTP/1.1; a POST body with and without
# content-length through proxy_pass (what the origin got), 300 kB ones
# buffered and streamed, one held unclaimed while auth_request runs (the
# stream's window shut meanwhile), to FastCGI (php-fpm), and over
# client_max_body_size (413). Driven by python3-h2 (real HPACK). Every
# case passes on the binary from before the change as well: it pins
# behaviour (the change is measured, not seen).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;
use Test::PhpFpm;
use JSON::PP;

plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import h2, hyperframe, hpack" 2>/dev/null');

my $u = Test::Upstream->new;
$u->start;
my $uurl = $u->url;

my $t = Test::Ringx->new;
my $fpm_sock = $t->prefix . '/php.sock';
my $fpm = Test::PhpFpm::binary()
    ? Test::PhpFpm->start($t, [{ name => 'pool', sock => $fpm_sock,
                                 pm => "pm = static\npm.max_children = 1" }])
    : undef;
$t->write_file_raw('html/body.php', '<?php echo "cl=", $_SERVER["CONTENT_LENGTH"] ?? "-",
    " te=", $_SERVER["HTTP_TRANSFER_ENCODING"] ?? "-",
    " read=", strlen(file_get_contents("php://input")), "\n";' . "\n");
# One connection per request: [ [name, value] ... ] (pseudo-headers too,
# sent as given, unvalidated: crumbs stay crumbs), an optional body and
# whether it gets a content-length, in the JSON file argv[2]. Out:
# [{status, body, reset}].
$t->write_file('h2req.py', <<'EOF');
import json, socket, sys, time
import h2.connection, h2.config, h2.events

out = []
for spec in json.load(open(sys.argv[2])):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    c = h2.connection.H2Connection(h2.config.H2Configuration(
        client_side=True, header_encoding="utf-8",
        validate_outbound_headers=False, normalize_outbound_headers=False,
        validate_inbound_headers=False))
    c.initiate_connection()
    sid = c.get_next_available_stream_id()
    hdrs = [tuple(h) for h in spec["headers"]]
    body = spec.get("body")
    if body is not None and spec.get("length", True):
        hdrs.append(("content-length", str(len(body))))
    c.send_headers(sid, hdrs, end_stream=body is None)
    body = body.encode() if body is not None else b""
    sent = 0
    s.sendall(c.data_to_send())
    r = {"status": None, "body": "", "reset": None}
    done = False
    deadline = time.time() + 20
    while not done and time.time() < deadline:
        # the body as the windows let it go
        while sent < len(body) and r["status"] is None:
            n = min(len(body) - sent, c.local_flow_control_window(sid),
                    c.max_outbound_frame_size)
            if n <= 0:
                break
            c.send_data(sid, body[sent:sent + n], end_stream=sent + n == len(body))
            sent += n
        s.sendall(c.data_to_send())
        s.settimeout(0.2 if sent < len(body) else 10)
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        if not d:
            break
        for e in c.receive_data(d):
            if isinstance(e, h2.events.ResponseReceived):
                r["status"] = int(dict(e.headers)[":status"])
            elif isinstance(e, h2.events.DataReceived):
                r["body"] += e.data.decode("latin-1")
                c.acknowledge_received_data(e.flow_controlled_length, sid)
            elif isinstance(e, h2.events.StreamEnded):
                done = True
            elif isinstance(e, h2.events.StreamReset):
                r["reset"] = int(e.error_code)
                done = True
        s.sendall(c.data_to_send())
    s.close()
    out.append(r)
print(json.dumps(out))
EOF
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    log_format f '\$request|\$server_protocol|\$request_length|\$status';
    access_log logs/access.log f;
    client_header_buffer_size 1k;
    large_client_header_buffers 4 1k;
    client_max_body_size 100;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        http2 on;
        server_name default.test;
        location / { return 200 "host=\$host http_host=\$http_host server=\$server_name\\n"; }
        location /cookie { return 200 "\$http_cookie|\$cookie_b"; }
        location /under { return 200 "[\$http_x_y]"; }
        location /u/ { return 200 "\$uri|\$request_uri|\$args"; }
        location /p/ { proxy_pass $uurl/echo/; }
        location /h { return 200 "head"; }
        location /big/ { client_max_body_size 1m; proxy_pass $uurl/echo/; }
        location /stream/ {
            client_max_body_size 1m;
            proxy_request_buffering off;
            proxy_http_version 1.1;
            proxy_pass $uurl/echo/;
        }
        location /ignore { return 200 "ignored"; }
        # the body waits unclaimed (and the stream's window shut past
        # 64 kB) while auth_request's subrequest takes 300 ms
        location /held/ {
            client_max_body_size 1m;
            auth_request /auth;
            proxy_pass $uurl/echo/;
        }
        location = /auth {
            internal;
            proxy_pass $uurl/sleep/300;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
        }
        location = /body.php {
            root html;
            client_max_body_size 1m;
            fastcgi_pass unix:$fpm_sock;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param CONTENT_LENGTH \$content_length;
            fastcgi_param SCRIPT_FILENAME \$document_root/body.php;
        }
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name other.test;
        location / { return 200 "host=\$host server=\$server_name\\n"; }
    }
}
EOF
$t->run;
my $port = $t->port(0);

sub h2 {
    my @specs = @_;
    $t->write_file_raw('h2req.json', encode_json(\@specs));
    open my $fh, '-|', '/usr/bin/python3', $t->prefix . '/h2req.py', $port,
        $t->prefix . '/h2req.json' or die "h2req: $!";
    local $/;
    my $o = <$fh>;
    close $fh;
    my $r = eval { decode_json($o) } or diag "h2req said: $o";
    return wantarray ? @$r : $r->[0];
}

sub req {
    my ($method, $path, %o) = @_;
    my @h = ([':method', $method], [':path', $path], [':scheme', 'http']);
    push @h, [':authority', $o{authority} // 'default.test'] unless $o{no_authority};
    push @h, @{ $o{headers} || [] };
    return { headers => \@h, (exists $o{body} ? (body => $o{body}) : ()),
             (exists $o{length} ? (length => $o{length}) : ()) };
}

sub http11 {
    my ($raw) = @_;
    my $res = $t->http($port, $raw);
    return $res;
}

# $request, $server_protocol, $request_length: what the client spoke, and
# the length of the same request as HTTP/1.1 text
my $r = h2(req('GET', '/log?x=1', headers => [['accept', 'text/plain']]));
is $r->{status}, 200, 'GET: 200';
ok $t->wait_for(sub { ($t->read_file('logs/access.log') // '') =~ /log\?x=1/ }),
    'the access log has the request';
# "GET /log?x=1 HTTP/1.1\r\n" 23 + "host: default.test\r\n" 20
# + "accept: text/plain\r\n" 20 + "\r\n" 2
like $t->read_file('logs/access.log'), qr{^GET /log\?x=1 HTTP/2\.0\|HTTP/2\.0\|65\|200$}m,
    '$request and $server_protocol say HTTP/2.0; $request_length counts the request as HTTP/1.1 text';

# Host: :authority, or a host field, which wins; a bad one is a 400
$r = h2(req('GET', '/', authority => 'Default.TEST:8080'));
is $r->{body}, "host=default.test http_host=Default.TEST:8080 server=default.test\n",
    ':authority is the Host ($host lower-cased without the port; $http_host as sent)';
$r = h2(req('GET', '/', authority => 'other.test'));
is $r->{body}, "host=other.test server=other.test\n", ':authority picks the server';
$r = h2(req('GET', '/', authority => 'default.test', headers => [['host', 'other.test']]));
is $r->{body}, "host=other.test server=other.test\n", 'a host field wins over :authority';
$r = h2(req('GET', '/', no_authority => 1, headers => [['host', 'other.test']]));
is $r->{body}, "host=other.test server=other.test\n", 'a host field without :authority';
$r = h2(req('GET', '/', authority => 'bad..host'));
is $r->{status}, 400, 'an invalid :authority: 400';
$r = h2(req('GET', '/', headers => [['host', 'a..b']]));
is $r->{status}, 400, 'an invalid host field: 400';
ok $t->log_contains(qr/client sent invalid host header.*request: "GET \/ HTTP\/2\.0"/),
    '... logged as for HTTP/1.1';
$r = h2(req('GET', '/', no_authority => 1));
is_deeply [$r->{status}, $r->{reset}], [undef, 1],
    'neither :authority nor host: the stream is reset (PROTOCOL_ERROR), as nghttp2 did';

# cookie crumbs (RFC 9113 8.2.3): one Cookie, joined with "; "
$r = h2(req('GET', '/cookie', headers => [['cookie', 'a=1'], ['accept', '*/*'],
                                          ['cookie', 'b=2'], ['cookie', 'c=3']]));
is $r->{body}, 'a=1; b=2; c=3|2', 'cookie crumbs joined with "; " ($http_cookie, $cookie_b)';

# an underscore in a name: dropped with nginx's line (ignore_invalid_headers)
$r = h2(req('GET', '/under', headers => [['x_y', 'v']]));
is $r->{body}, '[]', 'a field with an underscore is dropped';
ok $t->log_contains(qr/client sent invalid header line: "x_y: v"/), '... and logged';

# large_client_header_buffers 4 1k: a longer field is a 494; fields that
# need a fifth large buffer too (nginx answers its 494 with a 400)
$r = h2(req('GET', '/', headers => [['x-long', 'a' x 1100]]));
is $r->{status}, 400, 'a field longer than a large buffer: 494 (400 to the client, as nginx)';
ok $t->log_contains(qr/client sent too long header line.*request: "GET \/ HTTP\/2\.0"/),
    '... "client sent too long header line"';
$r = h2(req('GET', '/', headers => [map { ["x-f$_", 'b' x 590] } 1 .. 6]));
is $r->{status}, 400, 'fields that need more large buffers than allowed: 494 (400)';
ok $t->log_contains(qr/client sent too large request/), '... "client sent too large request"';
$r = h2(req('GET', '/', headers => [map { ["x-f$_", 'b' x 590] } 1 .. 4]));
is $r->{status}, 200, 'fields that fit the buffers: 200';
$r = h2(req('GET', '/' . ('p' x 1100)));
is $r->{status}, 414, 'a target longer than a large buffer: 414';

# methods: llhttp's list, TRACE refused, HEAD without a body
$r = h2(req('FOO', '/'));
is $r->{status}, 400, 'a method HTTP/1.1 parsing does not know: 400';
$r = h2(req('TRACE', '/'));
is $r->{status}, 405, 'TRACE: 405';
$r = h2(req('HEAD', '/h'));
is_deeply [$r->{status}, $r->{body}], [200, ''], 'HEAD: 200 without a body';

# the target normalised as over HTTP/1.1
my $target = '/u/a/../b/./c%2Fd//e?k=%2F';
$r = h2(req('GET', $target));
my $h1 = http11("GET $target HTTP/1.1\r\nHost: default.test\r\nConnection: close\r\n\r\n");
my ($h1body) = $h1 =~ /\r\n\r\n(.*)\z/s;
is $r->{body}, '/u/b/c/d/e|/u/a/../b/./c%2Fd//e?k=%2F|k=%2F', '../, ./, %2F and // normalised';
is $r->{body}, $h1body, '... as over HTTP/1.1';

# bodies through proxy_pass: with a content-length, without one (chunked
# to the origin, as today), and over client_max_body_size
$r = h2(req('POST', '/p/len', body => 'hello world'));
is $r->{status}, 200, 'POST with content-length: 200';
like $r->{body}, qr/^header: content-length: 11$/mi, '... the origin got its length';
like $r->{body}, qr/^body-length: 11\n/m, '... and its 11 bytes';
$r = h2(req('POST', '/p/chunked', body => 'no length here', length => 0));
is $r->{status}, 200, 'POST without content-length: 200';
like $r->{body}, qr/body-length: 14\n/m, '... the origin got its 14 bytes';
like $r->{body}, qr/no length here\z/, '... intact';
my @got = $u->requests;
is scalar(@got), 2, 'two requests upstream';
is $got[1]{method}, 'POST', '... the second a POST';
$r = h2(req('POST', '/p/big', body => 'x' x 200));
is $r->{status}, 413, 'a body over client_max_body_size: 413';
$r = h2(req('POST', '/p/big', body => 'x' x 200, length => 0));
is $r->{status}, 413, '... without content-length too';

# what the origin got of a body: its framing, and the bytes whole
sub origin_got {
    my ($body) = @_;
    my %g;
    $g{chunked} = $1 if $body =~ /^chunked: (\d)$/m;
    $g{length} = $1 if $body =~ /^header: content-length: (\d+)$/mi;
    $g{te} = $1 if $body =~ /^header: transfer-encoding: (.*)$/mi;
    $g{bytes} = $1 if $body =~ /^body-length: (\d+)$/m;
    return \%g;
}
my $big = join '', map { chr(65 + $_ % 26) } 1 .. 300_000;
for my $case (['/big/a', 1, 'buffered'], ['/big/b', 0, 'buffered'],
              ['/stream/c', 1, 'streamed'], ['/stream/d', 0, 'streamed']) {
    my ($path, $len, $how) = @$case;
    $r = h2(req('POST', $path, body => $big, length => $len));
    my $g = origin_got($r->{body});
    my ($echoed) = $r->{body} =~ /\n\n(.*)\z/s;
    is $r->{status}, 200, "300 kB POST " . ($len ? 'with' : 'without') . " content-length, $how: 200";
    is_deeply $g, $len || $how eq 'buffered'
        ? { chunked => 0, length => 300000, bytes => 300000 }
        : { chunked => 1, te => 'chunked', bytes => 300000 },
        '... the origin got it ' . ($len || $how eq 'buffered' ? 'with its length' : 'chunked');
    ok defined $echoed && $echoed eq $big, '... every byte, in order';
}
for my $len (1, 0) {
    $r = h2(req('POST', '/held/x', body => $big, length => $len));
    my ($echoed) = $r->{body} =~ /\n\n(.*)\z/s;
    is $r->{status}, 200, 'a body held while auth_request runs, ' . ($len ? 'with' : 'without')
        . ' content-length: 200';
    ok defined $echoed && $echoed eq $big, '... every byte reached the origin, in order';
}
SKIP: {
    skip 'no php-fpm (Debian: php-fpm)', 2 unless $fpm;
    $r = h2(req('POST', '/body.php', body => 'y' x 70_000));
    is $r->{body}, "cl=70000 te=- read=70000\n", 'FastCGI: a body with content-length';
    $r = h2(req('POST', '/body.php', body => 'y' x 70_000, length => 0));
    is $r->{body}, "cl=70000 te=chunked read=70000\n",
        'FastCGI: a body without (buffered, its length given; as today, the field says chunked)';
}
$r = h2(req('POST', '/ignore', body => 'x' x 50_000, length => 0));
is_deeply [$r->{status}, $r->{body}], [200, 'ignored'], 'a body nobody reads: the response';

$t->stop;
done_testing;
