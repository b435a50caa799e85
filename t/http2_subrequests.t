#!/usr/bin/perl
# http2_subrequests.t: the modules built on subrequests over HTTP/2 (h2c
# with prior knowledge and TLS with ALPN h2): mirror (a GET, POST bodies
# of 100 B and 1 MiB reach the origin and the mirror byte-exact, once per
# request; a slow mirror does not hold the client's response), ssi's
# include virtual (document order, a slow include first, bodies bigger
# than a buffer), addition's before and after bodies, slice's ranges
# stitched (whole and a client range), sub_filter + gzip and charset
# recoding on a proxied response; all of them at once as interleaved
# streams of one connection; a client that resets an ssi stream or a
# mirrored stream mid-response (the connection goes on, its other streams
# complete, the worker stays; run under SANITIZE=1 for leaks).

use strict;
use warnings;
use utf8;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha1_hex);
use Encode qw(encode decode);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use JSON::PP;
use Test::More;
use Test::Ringx;
use Test::Ringx::Certs;
use Test::Upstream;

plan(skip_all => 'no curl') if system('curl --version >/dev/null 2>&1');
plan(skip_all => 'curl without HTTP/2') if `curl --version` !~ /\bHTTP2\b/;
plan(skip_all => 'no python3-h2 (Debian: python3-h2)')
    if system('/usr/bin/python3 -c "import h2, hyperframe, hpack" 2>/dev/null');

my $H2C = "$FindBin::Bin/lib/h2client.py";
my $origin = Test::Upstream->new;
$origin->start;
my $UP = $origin->url;
my $mir = Test::Upstream->new;
$mir->start;
my $MIR = $mir->url;

my $t = Test::Ringx->new;
Test::Ringx::Certs::make($t->prefix . '/conf/certs', 'localhost');
for my $f (qw(koi-utf)) {
    open(my $fh, '<', "$FindBin::Bin/../conf/$f") or die "conf/$f: $!";
    local $/;
    $t->write_file("conf/$f", <$fh>);
}

sub pat { return Test::Upstream::pattern(@_) }
my $big = join('', map { sprintf("%07d\n", $_) } 0 .. 40000);   # 320 KiB
my $koi_text = ("Привет, мир! ёЁ съешь же ещё этих мягких булок\n" x 5000);
my $koi = encode('koi8-r', $koi_text);

$t->write_file('html/inc/inner.html', 'INNER');
$t->write_file('html/inc/big.txt', $big);
$t->write_file('html/ssi/order.html', '1<!--# include virtual="/up/slow/3000?pieces=3&ms=200" -->2'
    . '<!--# include virtual="/inc/inner.html" -->3<!--# include virtual="/up/len/50" -->4');
$t->write_file('html/ssi/big.html', "<!--# include virtual=\"/inc/big.txt\" -->\n$big"
    . '<!--# include virtual="/up/len/200000" -->END');
$t->write_file('html/ssi/slowbig.html', "S<!--# include virtual=\"/up/slow/400000?pieces=40&ms=50\" -->"
    . "$big<!--# include virtual=\"/inc/inner.html\" -->E");
$t->write_file('html/add/doc.html', "DOC\n$big");
$t->write_file_raw('html/koi/text.txt', $koi);
my %want = (
    '/ssi/order.html' => '1' . pat(3000) . '2INNER3' . pat(50) . '4',
    '/ssi/big.html' => "$big\n$big" . pat(200000) . 'END',
    '/ssi/slowbig.html' => 'S' . pat(400000) . $big . 'INNERE',
    '/add/doc.html' => pat(2000) . "DOC\n$big" . $big,
    '/slice/range/2621440' => pat(2621440),
    '/sf/len/300000' => pat(300000) =~ s/000/ZZ/gr,
    '/cs/text.txt' => encode('UTF-8', $koi_text),
);

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    log_format sr '\$request|\$status';
    access_log logs/access.log sr;
    include koi-utf;
    types { text/html html; text/plain txt; }
    client_body_buffer_size 16k;
    client_max_body_size 8m;
    root %%PREFIX%%/html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen 127.0.0.1:%%PORT_1%% ssl;
        http2 on;
        ssl_certificate certs/ec-localhost.crt;
        ssl_certificate_key certs/ec-localhost.key;

        location /mir/ { mirror /m; proxy_pass $UP/echo/; }
        location /mirslow/ { mirror /mslow; proxy_pass $UP/echo/; }
        location /mirbig/ { mirror /mslow; proxy_pass $UP/; }
        location = /m { internal; proxy_pass $MIR/echo/m; }
        location = /mslow { internal; proxy_pass $MIR/sleep/2500; }

        location /up/ { proxy_pass $UP/; }
        location /inc/ { }
        location /ssi/ { ssi on; }
        location /add/ {
            add_before_body /up/slow/2000;
            add_after_body /inc/big.txt;
        }
        location /slice/ {
            slice 1m;
            proxy_set_header Range \$slice_range;
            proxy_pass $UP/;
        }
        location /sf/ {
            proxy_pass $UP/;
            sub_filter 000 ZZ;
            sub_filter_once off;
            sub_filter_types text/plain;
            gzip on;
            gzip_types text/plain;
            gzip_proxied any;
            gzip_min_length 1;
        }
        location /cs/ {
            proxy_pass http://127.0.0.1:%%PORT_2%%/koi/;
            charset utf-8;
            source_charset koi8-r;
        }
        location = /ret { return 200 "ret\\n"; }
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        location /koi/ { }
    }
}
EOF
$t->run;
my ($P, $S) = ($t->port(0), $t->port(1));
my ($worker) = $t->worker_pids;

sub h2 {
    my ($tls, @args) = @_;
    open my $fh, '-|', '/usr/bin/python3', $H2C, $tls ? ($S, 'request', '--tls') : ($P, 'request'),
        @args or die "h2client: $!";
    my $o = do { local $/; <$fh> };
    close $fh;
    return eval { decode_json($o) } || { error => $o, responses => [] };
}
# the body h2client.py sends: A..Z repeated
sub body_of { my ($n) = @_; return join '', map { chr(65 + $_ % 26) } 0 .. $n - 1 }

sub curl {
    my ($tls, $path, @opt) = @_;
    my $url = $tls ? "https://127.0.0.1:$S$path" : "http://127.0.0.1:$P$path";
    my @how = $tls ? ('-k', '--http2') : ('--http2-prior-knowledge');
    open my $fh, '-|', 'curl', '-s', '--max-time', '20', @how, @opt, $url or die "curl: $!";
    binmode $fh;
    my $o = do { local $/; <$fh> };
    close $fh;
    return $o;
}

sub header_of {
    my ($req, $name) = @_;
    my @v = map { $_->[1] } grep { lc $_->[0] eq lc $name } @{ $req->{headers} };
    return $v[0];
}

for my $tls (0, 1) {
    my $via = $tls ? 'TLS h2' : 'h2c';

    # --- mirror -------------------------------------------------------------------
    $mir->reset;
    $origin->reset;
    my $got = curl($tls, '/mir/x?a=1', '-w', '|%{http_version}');
    like $got, qr{^uri: /echo/x\?a=1$}m, "$via mirror GET: the origin answered";
    like $got, qr{\|2$}, "$via mirror GET: over HTTP/2";
    my @m = $mir->wait_requests(1, 10);
    is scalar(@m), 1, "$via mirror GET: the mirror got it";
    is $m[0] && $m[0]{uri}, '/echo/m?a=1', "$via mirror GET: with the arguments";

    for my $n (100, 1 << 20) {
        $mir->reset;
        $origin->reset;
        my $r = h2($tls, '--method', 'POST', '--path', "/mir/p$n", '--body-size', $n);
        is $r->{responses}[0]{status}, 200, "$via mirror POST $n B: 200";
        ok $r->{responses}[0]{ended}, "$via mirror POST $n B: the stream ended";
        my @o = $origin->wait_requests(1, 10);
        is sha1_hex($o[0] ? $o[0]{body} : ''), sha1_hex(body_of($n)),
            "$via mirror POST $n B: the origin's body is exact";
        @m = $mir->wait_requests(1, 10);
        is sha1_hex($m[0] ? $m[0]{body} : ''), sha1_hex(body_of($n)),
            "$via mirror POST $n B: the mirror's body is exact";
        is $m[0] && header_of($m[0], 'Content-Length'), $n,
            "$via mirror POST $n B: with its Content-Length";
        select undef, undef, undef, 0.3;
        is scalar($origin->requests) . '/' . scalar($mir->requests), '1/1',
            "$via mirror POST $n B: once to each";
    }

    # a slow mirror (2.5 s): the client's stream ends at once (nginx sends
    # END_STREAM with the main request's last buffer; the request itself
    # ends, and is logged, when the mirror ended)
    $mir->reset;
    $got = curl($tls, "/mirslow/s$tls", '-w', '|%{time_total}');
    my ($took) = $got =~ /\|([\d.]+)$/;
    like $got, qr{^uri: /echo/s$tls$}m, "$via slow mirror: the response";
    cmp_ok $took // 99, '<', 2.0, "$via slow mirror: the response is not held by the mirror";
    ok $mir->wait_requests(1, 10), "$via slow mirror: the mirror got its request";
    ok $t->wait_for(sub { $t->log_contains(qr{^GET /mirslow/s$tls HTTP/2.0\|200$}, 'logs/access.log') }, 10),
        "$via slow mirror: the request logged once the mirror ended";

    # --- ssi, addition, slice, sub_filter + gzip, charset ----------------------------
    for my $path ('/ssi/order.html', '/ssi/big.html', '/add/doc.html', '/slice/range/2621440',
                  '/cs/text.txt') {
        $got = curl($tls, $path);
        is length($got // ''), length($want{$path}), "$via $path: every byte";
        ok(($got // '') eq $want{$path}, "$via $path: the same bytes, in document order");
    }
    $got = curl($tls, '/slice/range/2621440', '-r', '1000000-2100000', '-w', '|%{http_code}');
    is $got, substr($want{'/slice/range/2621440'}, 1000000, 1100001) . '|206',
        "$via slice: a range across slices is a 206 of those bytes";
    $got = curl($tls, '/sf/len/300000', '-H', 'Accept-Encoding: gzip');
    my $plain;
    gunzip(\$got => \$plain) or diag "gunzip: $GunzipError";
    ok defined($plain) && $plain eq $want{'/sf/len/300000'},
        "$via sub_filter + gzip on a proxied response: the replaced bytes, gzipped";

    # --- all at once, on one connection ---------------------------------------------
    $mir->reset;
    $origin->reset;
    my @reqs = ('POST /mir/c 1048576', map { "GET $_" } sort keys %want);
    my $r = h2($tls, map { ('--req', $_) } @reqs);
    my @res = @{ $r->{responses} };
    is scalar(@res), scalar(@reqs), "$via one connection: " . scalar(@reqs) . ' streams';
    for my $i (1 .. $#reqs) {
        my ($path) = $reqs[$i] =~ m{^GET (\S+)};
        ok $res[$i]{ended} && ($res[$i]{status} // 0) == 200
            && $res[$i]{sha1} eq sha1_hex($want{$path}),
            "$via one connection: $path whole and exact"
            or diag explain { %{ $res[$i] }, body => undef, headers => undef };
    }
    ok $res[0]{ended} && $res[0]{status} == 200, "$via one connection: the mirrored POST answered";
    @m = $mir->wait_requests(1, 10);
    is sha1_hex($m[0] ? $m[0]{body} : ''), sha1_hex(body_of(1 << 20)),
        "$via one connection: the mirror got the 1 MiB body";
    my $overlap = grep { my $a = $_; grep { $_ != $a && $res[$_]{first_data} && $res[$a]{first_data}
        && $res[$_]{first_data} < $res[$a]{last_data} && $res[$a]{first_data} < $res[$_]{last_data} }
        0 .. $#res } 0 .. $#res;
    cmp_ok $overlap, '>=', 2, "$via one connection: the streams' DATA frames interleaved";

    # --- a client that resets an ssi stream, or a mirrored one, mid-response ----------
    for my $case (['an ssi stream', 0], ['a mirrored stream', 1]) {
        my ($what, $k) = @$case;
        $mir->reset;
        $r = h2($tls, '--req', 'GET /ssi/slowbig.html', '--req', 'GET /mirbig/slow/400000?pieces=40&ms=50',
                '--req', 'GET /ssi/big.html', '--req', 'GET /add/doc.html',
                '--reset-after', 1, '--reset-index', $k, '--then', '/ret');
        @res = @{ $r->{responses} };
        is $res[$k]{reset}, -1, "$via reset of $what: reset by the client mid-response";
        my %done = ('/ssi/slowbig.html' => 0, '/mirbig' => 1, '/ssi/big.html' => 2, '/add/doc.html' => 3);
        for my $path (grep { $done{$_} != $k } sort keys %done) {
            my $x = $res[$done{$path}];
            my $w = $path eq '/mirbig' ? pat(400000) : $want{$path};
            ok $x->{ended} && $x->{sha1} eq sha1_hex($w),
                "$via reset of $what: $path on the same connection completes";
        }
        is $r->{then}{status}, 200, "$via reset of $what: the connection goes on";
        ok $mir->wait_requests(1, 10), "$via reset of $what: the mirror got its request";
    }
}

ok $t->wait_for(sub { 2 <= grep { m{^GET /mirbig/\S+ HTTP/2.0\|} }
                        split /\n/, $t->read_file('logs/access.log') // '' }, 15),
    'the reset mirrored streams ended and were logged';
my ($now) = $t->worker_pids;
is $now, $worker, 'the same worker throughout';
$t->stop;
done_testing;
