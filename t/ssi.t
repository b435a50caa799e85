#!/usr/bin/perl
# ssi.t: nginx's SSI filter: include virtual= and file= (relative URIs,
# args, nested includes, wait=, set=, stub= with block), echo (var=,
# default=, encoding=), set, if/elif/else/endif (=, !=, regex with
# captures and named captures), config errmsg/timefmt, $date_local and
# $date_gmt, errors (errmsg, ssi_silent_errors), commands cut across
# buffers (a static file and a proxied response in small chunks), a slow
# include before fast ones (document order), bodies bigger than a buffer,
# a proxied document that spills to its temporary file while a slow or a
# spilling include runs,
# gzip and chunked together, ssi_types, ssi_last_modified, configuration.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::MD5 qw(md5_hex);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $u = Test::Upstream->new;
$u->start;
my $up = $u->url;

my $t = Test::Ringx->new;
my $big = join('', map { sprintf("%07d\n", $_) } 0 .. 40000);   # 320 KiB
$t->write_file('html/s/inc.html', 'INC(<!--# include virtual="inner.html" -->)');
$t->write_file('html/s/inner.html', 'INNER');
$t->write_file('html/s/nested.html', 'A<!--# include virtual="inc.html" -->B');
$t->write_file('html/s/file.html', '<!--# include file="inner.html" -->|'
    . '<!--# include virtual="/s/args.html?x=1&y=two" -->');
$t->write_file('html/s/args.html', '<!--# echo var="arg_y" -->');
$t->write_file('html/s/echo.html', '[<!--# echo var="arg_a" -->]'
    . '[<!--# echo var="nothing" -->][<!--# echo var="nothing" default="dflt" -->]'
    . '<!--# set var="h" value="<b \\"x\\">&" -->'
    . '[<!--# echo var="h" encoding="entity" -->][<!--# echo var="h" -->]'
    . '[<!--# echo var="h" encoding="none" -->][<!--# echo var="h" encoding="url" -->]');
$t->write_file('html/s/set.html', '<!--# set var="v" value="x-$arg_a-\$arg_a-${arg_a}y" -->'
    . '<!--# echo var="v" -->');
$t->write_file('html/s/if.html',
    '<!--# if expr="$arg_a = foo" -->FOO'
    . '<!--# elif expr="$arg_a != bar" -->NOTBAR'
    . '<!--# else -->BAR<!--# endif -->|'
    . '<!--# if expr="$arg_b = /^x(\d+)-(?<tail>.*)\$/" -->M <!--# echo var="1" --> <!--# echo var="tail" -->'
    . '<!--# else -->NOMATCH<!--# endif -->|'
    . '<!--# if expr="$arg_c" -->SET<!--# else -->EMPTY<!--# endif -->');
$t->write_file('html/s/err.html', '1<!--# bogus -->2<!--# echo -->3'
    . '<!--# config errmsg="OOPS" --><!--# include -->4');
$t->write_file('html/quiet/err.html', '1<!--# bogus -->2');
$t->write_file('html/s/date.html', '<!--# config timefmt="%Y" --><!--# echo var="date_gmt" -->'
    . '|<!--# config timefmt="%s" --><!--# echo var="date_local" -->');
$t->write_file('html/s/stub.html', '<!--# block name="one" -->STUB<!--# endblock -->'
    . '[<!--# include virtual="/nothere.html" stub="one" -->]'
    . '[<!--# include virtual="inner.html" stub="one" -->]'
    . '[<!--# include virtual="/nothere.html" -->]');
$t->write_file('html/s/setinc.html', '<!--# include virtual="/up/len/20" set="body" -->'
    . 'got=[<!--# echo var="body" -->]');
$t->write_file('html/s/wait.html', '<!--# include virtual="inner.html" wait="yes" -->'
    . '<!--# include virtual="inner.html" wait="maybe" -->');
$t->write_file('html/s/order.html', '1<!--# include virtual="/up/slow/300" -->2'
    . '<!--# include virtual="inner.html" -->3<!--# include virtual="/up/len/50" -->4');
$t->write_file('html/s/big.html', "<!--# include virtual=\"/s/bigpart.txt\" -->\n$big"
    . '<!--# echo var="arg_a" -->');
$t->write_file('html/s/bigpart.txt', $big);
$t->write_file('html/s/plain.txt', 'P<!--# echo var="arg_a" -->');
$t->write_file('html/s/unsafe.html', '<!--# include virtual="/s/../../etc/passwd" -->');
$t->write_file('html/typed/plain.txt', 'P<!--# echo var="arg_a" -->');
$t->write_file('html/lm/page.html', 'x<!--# echo var="arg_a" -->');
# documents proxied from the second server (so that they spill to the
# temporary file while an include runs)
$t->write_file('html/sp/slowinc.html', '<!--# include virtual="/up/slow/300" -->'
    . "\n$big" . '<!--# echo var="arg_a" -->');
$t->write_file('html/sp/biginc.html', 'A<!--# include virtual="/up/len/300000" -->B'
    . $big . 'C');
# a command cut by the 128 KiB read size of static files
my $pad = 'p' x (131072 - 10);
$t->write_file('html/s/cut.html', $pad . '<!--# echo var="arg_a" -->END');
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    sendfile on;
    sendfile_min_size 1;
    types { text/html html; text/plain txt; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { ssi on; }
        location /quiet/ { ssi on; ssi_silent_errors on; }
        location /typed/ { ssi on; ssi_types text/plain; }
        location /lm/ { ssi on; ssi_last_modified on; }
        location /up/ { proxy_pass $up/; }
        location /upssi/ {
            proxy_pass $up/;
            ssi on;
            ssi_types text/plain;
        }
        location /spill/ {
            proxy_pass http://127.0.0.1:%%PORT_1%%/sp/;
            ssi on;
        }
        location /spillslow/ {
            proxy_pass http://127.0.0.1:%%PORT_1%%/sp/;
            ssi on;
            limit_rate 2m;
        }
        location /gz/ {
            alias %%PREFIX%%/html/s/;
            ssi on;
            gzip on;
            gzip_min_length 1;
        }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
    }
}
EOF
$t->run({ ports => [$t->port(0), $t->port(1)] });

sub get {
    my ($uri, %h) = @_;
    my $c = $t->raw($t->port(0)) or return {};
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n"
             . join('', map { "$_: $h{$_}\r\n" } sort keys %h)
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 20);
    $c->close;
    return $r // {};
}
sub body { get(@_)->{body} // '' }

my $r = get('/s/nested.html');
is($r->{status}, 200, 'status');
is($r->{body}, 'AINC(INNER)B', 'nested includes, relative URIs, in order');
ok(!exists $r->{headers}{'content-length'}, 'no Content-Length');
ok(!exists $r->{headers}{'last-modified'}, 'no Last-Modified (ssi_last_modified off)');
ok(!exists $r->{headers}{etag}, 'no ETag');
like(get('/lm/page.html')->{headers}{etag} // '', qr{^W/"}, 'ssi_last_modified on: weak ETag');

is(body('/s/file.html'), 'INNER|two', 'include file= and virtual= with args');
is(body('/s/echo.html?a=1'),
   '[1][(none)][dflt][&lt;b &quot;x&quot;&gt;&amp;][&lt;b &quot;x&quot;&gt;&amp;][<b "x">&][<b%20%22x%22>&]',
   'echo: value, (none), default, entity (the default), none, url');
is(body('/s/set.html?a=Q'), 'x-Q-$arg_a-Qy', 'set with $var, \$ and ${var}');
is(body('/s/if.html?a=foo&b=x12-rest&c=1'), 'FOO|M 12 rest|SET', 'if, regex captures, named capture');
is(body('/s/if.html?a=baz&b=y'), 'NOTBAR|NOMATCH|EMPTY', 'elif !=, no match, empty');
is(body('/s/if.html?a=bar'), 'BAR|NOMATCH|EMPTY', 'else');

is(body('/s/err.html'), '1[an error occurred while processing the directive]2'
   . '[an error occurred while processing the directive]3OOPS4', 'errors: errmsg, config errmsg');
ok($t->log_contains(qr/invalid SSI command: "bogus"/), 'an unknown command is logged');
ok($t->log_contains(qr/mandatory "var" parameter is absent in "echo" SSI command/),
   'a missing parameter is logged');
is(body('/quiet/err.html'), '12', 'ssi_silent_errors: nothing in the output');

my ($year, $epoch) = split /\|/, body('/s/date.html');
is($year, (gmtime)[5] + 1900, 'config timefmt, $date_gmt');
ok(abs($epoch - time) < 60, '$date_local with %s');

is(body('/s/stub.html'), '[STUB][INNER][' . (get('/nothere.html')->{body} // 'x') . ']',
   'stub: the block for an error, the body otherwise; no stub: the error page');
is(body('/s/setinc.html'), 'got=[' . substr(get('/up/len/20')->{body} // '', 0, 20) . ']',
   'include set=: the body in a variable');
is(body('/s/wait.html'), 'INNER[an error occurred while processing the directive]',
   'wait=yes, and a bad wait value');
is(body('/s/unsafe.html'), '[an error occurred while processing the directive]', 'unsafe URI');
ok($t->log_contains(qr/unsafe URI "[^"]*" was detected/), 'unsafe URI logged');

# a slow include (four pieces over ~300 ms) before a static and a fast
# proxied one: each body in its place
$r = body('/s/order.html');
my $slow = body('/up/slow/300');
my $len50 = body('/up/len/50');
is($r, "1${slow}2INNER3${len50}4", 'a slow include first: document order kept');

$r = body('/s/big.html?a=Z');
is(length $r, 2 * length($big) + 2, 'big include and big body: length');
is(md5_hex($r), md5_hex("$big\n${big}Z"), 'big include and big body: bytes');
is(body('/s/cut.html?a=CUT'), $pad . 'CUTEND', 'a command cut by the read size');

# a proxied document spills to its temporary file while its include runs
# (ssi holds the rest): the file's completions are the document's, not
# the include's (they went to the include: nothing was sent, ever)
$r = body('/spill/slowinc.html?a=Z');
is(length $r, 300 + length($big) + 2, 'proxied, spilling, slow include: length');
is(md5_hex($r), md5_hex("$slow\n${big}Z"), 'proxied, spilling, slow include: bytes');
ok($t->log_contains(qr{buffered to a temporary file.*"GET /spill/slowinc\.html}),
   'proxied, spilling, slow include: the document went through its file');
# ... and the include is itself a big proxied response that spills (a
# slow client: limit_rate): two temporary files at once
$r = body('/spillslow/biginc.html');
my $len300k = body('/up/len/300000');
is(md5_hex($r), md5_hex("A${len300k}B${big}C"), 'spilling document, spilling include: bytes');
ok($t->log_contains(qr{buffered to a temporary file.*"GET /spillslow/biginc\.html}),
   'spilling document, spilling include: the document spilled');
ok($t->log_contains(qr{buffered to a temporary file.*upstream: "[^"]*/len/300000"}),
   'spilling document, spilling include: the include spilled');

# a proxied response holding commands (the origin echoes a request
# header): parsed as it streams in
$r = body('/upssi/echo?a=PX', 'X-Cmd' => '<!--# echo var="arg_a" -->|<!--# include virtual="/s/inner.html" -->');
like($r, qr/^header: X-Cmd: PX\|INNER$/m, 'a proxied response: echo and include');
is(body('/s/plain.txt?a=1'), 'P<!--# echo var="arg_a" -->', 'text/plain is not in ssi_types by default');
is(body('/typed/plain.txt?a=1'), 'P1', 'ssi_types text/plain');

# gzip after ssi, chunked to the client
$r = get('/gz/big.html?a=G', 'Accept-Encoding' => 'gzip');
is($r->{headers}{'content-encoding'}, 'gzip', 'gzip: encoded');
is($r->{headers}{'transfer-encoding'}, 'chunked', 'gzip: chunked');
my $plain;
gunzip(\($r->{body} // ''), \$plain) or diag $GunzipError;
is(md5_hex($plain // ''), md5_hex("$big\n${big}G"), 'gzip: every byte in order');

# keepalive after an SSI response
my $c = $t->raw($t->port(0));
$c->send("GET /s/nested.html HTTP/1.1\r\nHost: localhost\r\n\r\n");
my $r1 = $c->read_response(timeout => 10);
$c->send("GET /s/order.html HTTP/1.1\r\nHost: localhost\r\n\r\n");
my $r2 = $c->read_response(timeout => 10);
is($r1->{body}, 'AINC(INNER)B', 'keepalive: first');
is($r2->{body}, "1${slow}2INNER3${len50}4", 'keepalive: second');
$c->close;

$t->stop;

for my $case (['ssi maybe;', qr/invalid value "maybe" in "ssi" directive|"ssi" directive.*on.*off/],
              ['ssi_value_length 0;', qr/ssi_value_length/],
              ['ssi_types;', qr/invalid number of arguments in "ssi_types"/],
              ['ssi_min_file_chunk x;', qr/"ssi_min_file_chunk" directive invalid value|invalid value/]) {
    my $e = Test::Ringx->new;
    $e->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { $case->[0] } } }
EOF
    my ($rc, $out, $err) = $e->ringx('-t');
    isnt($rc, 0, "-t fails: $case->[0]");
    like($err . $out, $case->[1], "emerg names it: $case->[0]");
}

done_testing;
