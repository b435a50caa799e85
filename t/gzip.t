#!/usr/bin/perl
# gzip.t: the gzip filter. Round trips of a small, a 1 MiB and a 20 MiB
# file (streamed as chunks), with tiny buffers and incompressible data too;
# Accept-Encoding with q-values; gzip_types, gzip_min_length, gzip_vary,
# gzip_disable (msie6 and regexes), gzip_http_version, gzip_proxied; HEAD,
# 304 with the weak ETag, ranges (206, never compressed), a response that
# is already encoded; $gzip_ratio in the access log; a client that leaves
# in the middle of a body; configuration errors. Which compressor ran: a
# body that arrives whole goes through libdeflate when the binary has it
# (-V), else and otherwise through zlib's stream, byte for byte what
# Compress::Raw::Zlib (the same libz) makes with the window ringx picks.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use Compress::Raw::Zlib;
use IO::Select;
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    log_format ratio '$uri $status $gzip_ratio';
    access_log logs/ratio.log ratio;
    default_type application/octet-stream;
    types { text/plain txt; text/html html; text/css css; }
    gzip on;
    gzip_types text/plain;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        root html;
        location / { }
        location /vary/ { alias html/; gzip_vary on; }
        location /any/ { alias html/; gzip_types *; }
        location /min/ { alias html/; gzip_min_length 5000; }
        location /min0/ { alias html/; gzip_min_length 0; }
        location /ua/ { alias html/; gzip_disable msie6 "^badbot/\d"; }
        location /v10/ { alias html/; gzip_http_version 1.0; }
        location /off/ { alias html/; gzip off; }
        location /tiny/ { alias html/; gzip_buffers 2 1k; gzip_comp_level 9;
                          gzip_window 1k; gzip_hash 1k; }
        location /onek/ { alias html/; gzip_buffers 1 1k; }
        location /l6/ { alias html/; gzip_comp_level 6; }
        location /splice/ { alias html/; sendfile on; sendfile_splice on; }
        location /px-any/ { alias html/; gzip_proxied any; }
        location /px-auth/ { alias html/; gzip_proxied auth no_last_modified; }
        location /px-exp/ { alias html/; gzip_proxied expired; expires -1; }
        location /px-exp-future/ { alias html/; gzip_proxied expired; expires 1h; }
        location /px-nolm/ { alias html/; gzip_proxied no_last_modified; }
        location /px-exp-none/ { alias html/; gzip_proxied expired; }
        location /px-nocache/ { alias html/; gzip_proxied no-cache;
                                add_header Cache-Control "private, no-cache"; }
        location /px-nostore/ { alias html/; gzip_proxied no-cache;
                                add_header Cache-Control no-store; }
        location = /encoded.html {
            add_header Content-Encoding br;
            return 200 "this body says it is already encoded, so it stays as is";
        }
        location = /text.html {
            return 200 "a body from return, long enough to be worth compressing";
        }
    }
}
EOF

# Text that compresses well but not trivially: numbered lines of words.
sub text_of {
    my ($size) = @_;
    my @w = qw(alpha bravo charlie delta echo foxtrot golf hotel india juliet
               kilo lima mike november oscar papa quebec romeo sierra tango);
    my $s = '';
    my $i = 0;
    while (length $s < $size) {
        $s .= "$i " . join(' ', map { $w[($i * 7 + $_ * 13) % @w] } 0 .. ($i % 9))
              . "\n";
        $i++;
    }
    return substr($s, 0, $size);
}

my %body = (
    small => text_of(3000),
    mid => text_of(1000),
    big => text_of(1048576),
    huge => text_of(20 * 1048576),
    tiny => "ten bytes\n",
);
$t->write_file_raw("html/$_.txt", $body{$_}) for keys %body;
$t->write_file_raw('html/page.html', $body{small});
$t->write_file_raw('html/style.css', $body{small});
$t->write_file_raw('html/data.bin', $body{mid});
$t->write_file_raw('html/empty.txt', '');
# incompressible: deflate's output is a little larger than its input, so
# the output buffers run out before a 128 KiB read is used up
my $rand = '';
srand(7);
$rand .= pack('N', int(rand(4294967296))) while length $rand < 1048576;
$t->write_file_raw('html/rand.txt', $rand);
# 16 MiB that deflate cannot shrink: more than the socket buffers hold
{
    open(my $fh, '<:raw', '/dev/urandom') or die "/dev/urandom: $!\n";
    read($fh, my $noise, 16 * 1048576) == 16 * 1048576 or die "short read\n";
    close $fh;
    $t->write_file_raw('html/noise.bin', $noise);
}
$t->run;
my $P = $t->port(0);

sub ungzip {
    my ($data) = @_;
    my $out;
    return gunzip(\$data => \$out) ? $out : "gunzip failed: $GunzipError";
}

# One request on its own connection; the parsed response.
sub req {
    my ($path, %o) = @_;
    my $method = $o{method} // 'GET';
    my $proto = $o{proto} // 'HTTP/1.1';
    my $h = $o{headers} // {};
    my $raw = "$method $path $proto\r\nHost: localhost\r\nConnection: close\r\n";
    $raw .= "$_: $h->{$_}\r\n" for sort keys %$h;
    my $resp = $t->http($P, "$raw\r\n", timeout => 20);
    my ($r) = Test::Ringx::parse_responses($resp // '',
                                           head => [$method eq 'HEAD']);
    return $r // { status => 0, headers => {}, body => '', head => $resp // '' };
}

sub gz { return req($_[0], headers => { 'Accept-Encoding' => 'gzip', %{ $_[1] // {} } },
                    @_[2 .. $#_]) }

sub is_gzipped {
    my ($r) = @_;
    return ($r->{headers}{'content-encoding'} // '') eq 'gzip';
}

# curl into a file: big bodies without re-parsing them in Perl
sub curl_gz {
    my ($path) = @_;
    my $dir = $t->prefix;
    my $hdr = `curl -s --max-time 60 -H 'Accept-Encoding: gzip' -D - -o $dir/curl.out http://127.0.0.1:$P$path`;
    open(my $fh, '<:raw', "$dir/curl.out") or return ($hdr, '');
    local $/;
    my $data = <$fh>;
    close $fh;
    return ($hdr, $data);
}

###########################################################################
# round trips

{
    my $r = gz('/small.txt');
    is($r->{status}, 200, 'small: 200');
    ok(is_gzipped($r), 'small: Content-Encoding: gzip');
    ok(!defined $r->{headers}{'content-length'}, 'small: no Content-Length');
    ok($r->{chunked}, 'small: chunked over HTTP/1.1');
    is(ungzip($r->{body}), $body{small}, 'small: decompresses to the file');
    ok(length $r->{body} < length $body{small}, 'small: smaller than the file');
    like($r->{headers}{etag} // '', qr{^W/"[0-9a-f]+-[0-9a-f]+"$}, 'small: the ETag is weak');
    ok(!defined $r->{headers}{'accept-ranges'}, 'small: no Accept-Ranges');
    ok(!defined $r->{headers}{vary}, 'small: no Vary without gzip_vary');
}

for my $case (['/big.txt', 'big', '1 MiB'], ['/huge.txt', 'huge', '20 MiB'],
              ['/rand.txt', undef, '1 MiB incompressible'],
              ['/tiny/big.txt', 'big', '1 MiB through 2 buffers of 1k'],
              ['/tiny/rand.txt', undef, 'incompressible through 2 buffers of 1k'],
              ['/splice/big.txt', 'big', '1 MiB where sendfile_splice is on'],
              ['/any/data.bin', 'mid', 'gzip_types *: application/octet-stream']) {
    my ($path, $name, $what) = @$case;
    my $want = defined $name ? $body{$name} : $rand;
    my ($hdr, $data) = curl_gz($path);
    like($hdr, qr{^HTTP/1\.1 200 }, "$what: 200");
    like($hdr, qr{\r\nContent-Encoding: gzip\r\n}, "$what: gzip");
    like($hdr, qr{\r\nTransfer-Encoding: chunked\r\n}, "$what: streamed in chunks");
    unlike($hdr, qr{\r\nContent-Length:}i, "$what: no Content-Length");
    is(sha256_hex(ungzip($data)), sha256_hex($want), "$what: round trip");
}

{
    my $r = gz('/text.html');
    ok(is_gzipped($r), 'return: text/html is always compressed');
    is(ungzip($r->{body}),
       'a body from return, long enough to be worth compressing', 'return: round trip');
    my $e = gz('/empty.txt');
    ok(!is_gzipped($e), 'an empty file is below gzip_min_length 20');
    is($e->{headers}{'content-length'}, '0', 'an empty file: Content-Length: 0');
    $e = gz('/min0/empty.txt');
    ok(is_gzipped($e), 'gzip_min_length 0: an empty file is compressed');
    is(ungzip($e->{body}), '', 'gzip_min_length 0: an empty gzip stream');
}

# Which compressor: zlib's stream gives exactly what zlib gives with the
# window and hash ringx picks for a known length (nginx's rule: halve the
# window while the body fits in half of it, the hash with it).
sub zlib_gzip {
    my ($data, $level) = @_;
    my ($wbits, $memlevel) = (15, 8);
    while (length($data) < (1 << ($wbits - 1)) && $wbits > 9) {
        $wbits--;
        $memlevel--;
    }
    $memlevel = 1 if $memlevel < 1;
    my ($d, $st) = Compress::Raw::Zlib::Deflate->new(-Level => $level,
        -WindowBits => $wbits + 16, -MemLevel => $memlevel, -AppendOutput => 1);
    die "deflateInit: $st\n" unless $d;
    my $out = '';
    $d->deflate($data, $out) == Z_OK or die "deflate\n";
    $d->flush($out) == Z_OK or die "flush\n";
    return $out;
}

{
    my (undef, undef, $err) = $t->ringx({ prefix => 0 }, '-V');
    my $libdeflate = $err =~ /^built with libdeflate /m;
    note($libdeflate ? 'built with libdeflate: whole bodies go through it'
                     : 'built without libdeflate: zlib alone');
    # 3000 bytes arrive in one read: whole
    my $r = gz('/small.txt');
    is(ungzip($r->{body}), $body{small}, 'whole body: decompresses to the file');
    if ($libdeflate) {
        isnt($r->{body}, zlib_gzip($body{small}, 1),
             'whole body: compressed by libdeflate, not zlib');
        my $r6 = gz('/l6/small.txt');
        is(ungzip($r6->{body}), $body{small}, 'whole body, level 6: decompresses');
        isnt($r6->{body}, $r->{body}, 'whole body, level 6: not level 1\'s bytes');
        isnt($r6->{body}, zlib_gzip($body{small}, 6), 'whole body, level 6: libdeflate');
    } else {
        is($r->{body}, zlib_gzip($body{small}, 1), 'whole body: zlib (no libdeflate)');
    }
    # its compressed form may exceed gzip_buffers 1 1k: the stream takes it
    my $s = gz('/onek/small.txt');
    is($s->{body}, zlib_gzip($body{small}, 1),
       'gzip_buffers too small for the whole body in one: zlib\'s stream');
    is(ungzip($s->{body}), $body{small}, 'gzip_buffers 1 1k: decompresses');
    # 1 MiB arrives in 128 KiB reads: streamed, whatever the build
    my (undef, $big) = curl_gz('/big.txt');
    is($big, zlib_gzip($body{big}, 1), '1 MiB in pieces: zlib\'s stream');
}

# keepalive: two compressed responses on one connection
{
    my $c = $t->raw($P);
    $c->send("GET /small.txt HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n"
             . "GET /page.html HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n");
    my @r = $c->read_responses(2, timeout => 10);
    is(scalar @r, 2, 'pipelined: two responses');
    ok(@r == 2 && ungzip($r[0]{body}) eq $body{small}
       && ungzip($r[1]{body}) eq $body{small}, 'pipelined: both decompress');
    $c->close;
}

###########################################################################
# Accept-Encoding

for my $case (['gzip', 1], ['GZIP', 1], ['deflate, gzip', 1],
              ['gzip;q=0', 0], ['gzip; q=0.000', 0], ['gzip;q=0.5', 1],
              ['gzip ; Q=0.001', 1], ['br;q=1, gzip;q=0', 0],
              ['*', 1], ['*;q=0', 0], ['*;q=0, gzip', 1], ['gzip;q=0, *', 0],
              ['identity', 0], ['identity;q=1, br', 0], ['x-gzip', 1],
              ['gzipx', 0], ['gzip;q=2', 0], ['gzip;q=abc', 0],
              ['gzip;level=1;q=0.3', 1], ['gzip;foo="a,b";q=0', 0],
              ['', 0]) {
    my ($ae, $yes) = @$case;
    my $r = req('/small.txt', headers => { 'Accept-Encoding' => $ae });
    is(is_gzipped($r) ? 1 : 0, $yes, "Accept-Encoding \"$ae\": "
       . ($yes ? 'compressed' : 'not compressed'));
}
{
    my $r = req('/small.txt');
    ok(!is_gzipped($r), 'no Accept-Encoding: not compressed');
    is($r->{body}, $body{small}, 'no Accept-Encoding: the file as is');
    is($r->{headers}{'content-length'}, length $body{small}, 'no Accept-Encoding: Content-Length');
}

###########################################################################
# what gets compressed

ok(!is_gzipped(gz('/data.bin')), 'gzip_types: octet-stream is not in the list');
ok(!is_gzipped(gz('/style.css')), 'gzip_types: text/css is not in the list');
ok(is_gzipped(gz('/page.html')), 'gzip_types: text/html is always in it');
ok(is_gzipped(gz('/any/style.css')), 'gzip_types *: anything');
ok(!is_gzipped(gz('/tiny.txt')), 'gzip_min_length 20 (default): 10 bytes are not');
ok(!is_gzipped(gz('/min/mid.txt')), 'gzip_min_length 5000: 1000 bytes are not');
ok(!is_gzipped(gz('/min/small.txt')), 'gzip_min_length 5000: 3000 bytes are not');
ok(is_gzipped(gz('/min/big.txt')), 'gzip_min_length 5000: 1 MiB is');
ok(!is_gzipped(gz('/off/small.txt')), 'gzip off');

{
    my $r = gz('/vary/small.txt');
    ok(is_gzipped($r), 'gzip_vary: compressed');
    is($r->{headers}{vary}, 'Accept-Encoding', 'gzip_vary: Vary: Accept-Encoding');
    $r = req('/vary/small.txt');
    ok(!is_gzipped($r), 'gzip_vary, no Accept-Encoding: not compressed');
    is($r->{headers}{vary}, 'Accept-Encoding',
       'gzip_vary: Vary also on the uncompressed form');
    ok(!defined gz('/vary/tiny.txt')->{headers}{vary},
       'gzip_vary: no Vary on what is never compressed');
}

# gzip_disable
{
    my %ua = ('Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)' => 0,
              'Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)' => 0,
              'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)' => 1,
              'Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)' => 1,
              'BadBot/2.0' => 0, 'badbot/1' => 0, 'BadBot/x' => 1,
              'curl/8.0' => 1);
    for my $ua (sort keys %ua) {
        my $r = gz('/ua/small.txt', { 'User-Agent' => $ua });
        is(is_gzipped($r) ? 1 : 0, $ua{$ua}, "gzip_disable, \"$ua\": "
           . ($ua{$ua} ? 'compressed' : 'not compressed'));
    }
    ok(is_gzipped(gz('/small.txt', { 'User-Agent' => 'Mozilla/4.0 (compatible; MSIE 6.0)' })),
       'msie6 compressed where gzip_disable is not set');
}

# gzip_http_version
{
    my $r = gz('/small.txt', {}, proto => 'HTTP/1.0');
    ok(!is_gzipped($r), 'HTTP/1.0 request, gzip_http_version 1.1: not compressed');
    $r = gz('/v10/big.txt', {}, proto => 'HTTP/1.0');
    ok(is_gzipped($r), 'HTTP/1.0 request, gzip_http_version 1.0: compressed');
    ok(!$r->{chunked} && !defined $r->{headers}{'content-length'},
       'HTTP/1.0: neither chunked nor a length');
    is($r->{headers}{connection}, 'close', 'HTTP/1.0: the close ends the body');
    is(sha256_hex(ungzip($r->{body})), sha256_hex($body{big}), 'HTTP/1.0: round trip');
}

# gzip_proxied: a request with Via
{
    my $via = { Via => '1.1 proxy.example' };
    ok(!is_gzipped(gz('/small.txt', $via)), 'Via, gzip_proxied off: not compressed');
    ok(is_gzipped(gz('/px-any/small.txt', $via)), 'Via, gzip_proxied any: compressed');
    ok(!is_gzipped(gz('/px-auth/small.txt', $via)),
       'Via, auth no_last_modified, no Authorization: not');
    ok(is_gzipped(gz('/px-auth/small.txt', { %$via, Authorization => 'Basic eDp5' })),
       'Via, auth, with Authorization: compressed');
    ok(is_gzipped(gz('/px-exp/small.txt', $via)), 'Via, expired, Expires in the past: compressed');
    ok(!is_gzipped(gz('/px-exp-future/small.txt', $via)),
       'Via, expired, Expires in the future: not');
    ok(!is_gzipped(gz('/px-nolm/small.txt', $via)),
       'Via, no_last_modified, a file with Last-Modified: not');
    ok(is_gzipped(gz('/px-exp-none/small.txt', $via)),
       'Via, expired, neither Expires nor Cache-Control: compressed (as nginx)');
    ok(is_gzipped(gz('/px-nocache/small.txt', $via)),
       'Via, no-cache, Cache-Control: private, no-cache: compressed');
    ok(!is_gzipped(gz('/px-nostore/small.txt', $via)),
       'Via, no-cache, Cache-Control: no-store: not');
    ok(is_gzipped(gz('/px-exp-none/small.txt')), 'no Via: gzip_proxied does not apply');
}

###########################################################################
# HEAD, 304, ranges, already encoded

{
    my $r = gz('/big.txt', {}, method => 'HEAD');
    is($r->{status}, 200, 'HEAD: 200');
    ok(is_gzipped($r), 'HEAD: Content-Encoding: gzip, as GET would say');
    ok(!defined $r->{headers}{'content-length'}, 'HEAD: no Content-Length');
    like($r->{head}, qr/\r\n\r\n\z/, 'HEAD: no body');
    my $etag = $r->{headers}{etag} // '';
    like($etag, qr{^W/"}, 'HEAD: weak ETag');

    my $c = gz('/big.txt', { 'If-None-Match' => $etag });
    is($c->{status}, 304, 'If-None-Match with the weak ETag: 304');
    ok(!is_gzipped($c), '304: no Content-Encoding');
    is($c->{body}, '', '304: no body');
}
{
    my $r = gz('/big.txt', { Range => 'bytes=10-29' });
    is($r->{status}, 206, 'Range: 206');
    ok(!is_gzipped($r), 'Range: not compressed');
    is($r->{body}, substr($body{big}, 10, 20), 'Range: the bytes of the file');
}
{
    my $r = gz('/encoded.html');
    is($r->{status}, 200, 'already encoded: 200');
    is($r->{headers}{'content-encoding'}, 'br', 'already encoded: its own Content-Encoding');
    is($r->{body}, 'this body says it is already encoded, so it stays as is',
       'already encoded: the body as is');
}
{
    my $r = gz('/nothere.html');
    is($r->{status}, 404, '404: status');
    ok(is_gzipped($r), '404: the error page (text/html) is compressed, as nginx');
    like(ungzip($r->{body}), qr{<title>404 Not Found</title>}, '404: round trip');
}

###########################################################################
# a client that leaves in the middle of a body, and one that does not read

{
    # the client stops reading: the socket buffers fill, and the worker must
    # stop deflating rather than hold the body (16 MiB that does not shrink)
    my ($w) = $t->worker_pids;
    my ($k0) = ($t->proc_status($w)->{VmRSS} // '') =~ /(\d+)/;
    my $c = $t->raw($P);
    $c->send("GET /any/noise.bin HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n");
    my $sel = IO::Select->new($c->sock);
    my $got = '';
    sysread($c->sock, $got, 65536) if $sel->can_read(5);
    like($got, qr{^HTTP/1\.1 200 .*\r\nContent-Encoding: gzip\r\n}s,
         'a client that stops reading: the response started');
    select(undef, undef, undef, 1);
    my ($k1) = ($t->proc_status($w)->{VmRSS} // '') =~ /(\d+)/;
    ok(defined $k0 && defined $k1 && $k1 - $k0 < 3 * 1024,
       'a client that stops reading: the worker grows by less than 3 MiB')
        or diag("VmRSS ${\ ($k0 // '?')} kB -> ${\ ($k1 // '?')} kB");
    # then it leaves in the middle of the body: the zlib stream is freed
    # with the request (the sanitizer build checks for leaks at exit)
    diag("VmRSS $k0 kB -> $k1 kB") if $ENV{GZIP_T_VERBOSE};
    $c->close;
    ok($t->wait_for(sub { $t->log_contains(qr{\[info\] .*writev\(\) failed \(\d+: .*\) while sending response to client.*"GET /any/noise\.bin }) }, 5),
       'after the abort: the failed send is logged at info, as nginx');
    is(ungzip(gz('/small.txt')->{body}), $body{small}, 'after the abort: the next request is served');
}

###########################################################################
# $gzip_ratio

{
    # every compressed /small.txt logged the same ratio
    my $r = gz('/small.txt');
    my ($zin, $zout) = (length $body{small}, length $r->{body});
    my $frac = int($zin * 100 / $zout) % 100;
    my $whole = int($zin / $zout);
    if (int($zin * 1000 / $zout) % 10 > 4 && ++$frac > 99) { $whole++; $frac = 0; }
    my $want = sprintf('%d.%02d', $whole, $frac);
    my $log = $t->prefix . '/logs/ratio.log';
    my @lines;
    $t->wait_for(sub {
        open(my $fh, '<', $log) or return 0;
        @lines = <$fh>;
        close $fh;
        return grep { m{^/any/noise\.bin } } @lines;
    }, 5);
    my @small = grep { m{^/small\.txt 200 \d} } @lines;
    ok(@small >= 3, '$gzip_ratio: lines for /small.txt');
    is_deeply([grep { !m{^/small\.txt 200 \Q$want\E\n\z} } @small], [],
              "\$gzip_ratio: $want (two decimals, rounded as nginx)");
    ok((grep { m{^/data\.bin 200 -$} } @lines), '$gzip_ratio: "-" when not compressed');
    ok((grep { m{^/huge\.txt 200 [5-9]\.\d\d$} } @lines), '$gzip_ratio of 20 MiB of text');
    ok((grep { m{^/any/noise\.bin \d+ -$} } @lines),
       '$gzip_ratio: "-" for a client that left before the end');
}

###########################################################################
# configuration errors

for my $case (['gzip_comp_level 10;', 'invalid value "10" in "gzip_comp_level" directive, it must be between 1 and 9'],
              ['gzip_buffers 0 4k;', 'invalid value "0 4k" in "gzip_buffers" directive'],
              ['gzip_window 3k;', 'invalid value "3k" in "gzip_window" directive, it must be a power of two from 512 to 32k'],
              ['gzip_hash 256k;', 'invalid value "256k" in "gzip_hash" directive'],
              ['gzip_proxied sometimes;', 'invalid value "sometimes" in "gzip_proxied" directive'],
              ['gzip_http_version 2.0;', 'invalid value "2.0" in "gzip_http_version" directive'],
              ['gzip_disable "(";', 'pcre2_compile() failed'],
              ['gzip maybe;', 'invalid value "maybe" in "gzip" directive']) {
    Test::Ringx::http_line_refused_ok(@$case, 1);
}

$t->stop;
done_testing;
