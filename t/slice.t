#!/usr/bin/perl
# slice.t: nginx's slice module: `slice SIZE` and $slice_range in the
# proxy's Range. A 2.5 MiB representation in 1 MiB slices: a client
# without Range gets a 200 of every byte (Content-Length from the first
# slice's total) fetched as three ranges; a client range gets a 206 and
# only the slices it covers are fetched; a range across a slice boundary;
# an ETag (or Last-Modified) that changes in the second slice, and a
# slice answered with the wrong range, and one whose connection the
# origin drops, cut the response with nginx's error; a client that goes
# mid-way; an origin that answers 200 passes through whole; gzip on; HEAD;
# keepalive after a stitched response; `slice` at -t.

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
my $N = 2621440;                       # 2.5 MiB
my $M = 1048576;
my $all = Test::Upstream::pattern($N);

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / {
            slice 1m;
            proxy_set_header Range \$slice_range;
            proxy_pass $up;
        }
        location /gz/ {
            slice 1m;
            proxy_set_header Range \$slice_range;
            proxy_pass $up/;
            gzip on;
            gzip_types text/plain;
        }
        location /small/ {
            slice 100k;
            proxy_set_header Range \$slice_range;
            proxy_pass $up/;
        }
        location /var/ {
            slice 1m;
            return 200 "[\$slice_range]";
        }
        location /off/ {
            return 200 "[\$slice_range]";
        }
    }
}
EOF
$t->run({ ports => [$t->port(0)] });

sub get {
    my ($uri, %h) = @_;
    my $method = delete $h{method} // 'GET';
    my $c = $t->raw($t->port(0)) or return {};
    $c->send("$method $uri HTTP/1.1\r\nHost: localhost\r\n"
             . join('', map { "$_: $h{$_}\r\n" } sort keys %h)
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 30, head => $method eq 'HEAD');
    $c->close;
    return $r // {};
}

# a response that may be cut: its head and how many body bytes came
sub get_cut {
    my ($uri) = @_;
    my $c = $t->raw($t->port(0)) or return {};
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $all = $c->read_all(timeout => 30) // '';
    $c->close;
    my ($head, $body) = split /\r\n\r\n/, $all, 2;
    my ($cl) = ($head // '') =~ /^Content-Length: (\d+)/mi;
    return { cl => $cl, body => $body // '' };
}

# the Range headers the origin got for the requests since $from
sub ranges_since {
    my ($from) = @_;
    my @r = $u->requests;
    return join ' ', map {
        my ($h) = grep { lc $_->[0] eq 'range' } @{ $_->{headers} };
        $h ? $h->[1] : '-'
    } @r[$from .. $#r];
}

is(get('/var/x')->{body}, '[bytes=0-1048575]', '$slice_range');
is(get('/var/x', Range => 'bytes=3000000-3000001')->{body},
   '[bytes=2097152-3145727]', '$slice_range: the slice holding the client\'s start');
is(get('/var/x', Range => 'bytes=5-6,3000000-')->{body}, '[bytes=0-1048575]',
   '$slice_range: several ranges start at 0, as nginx');
is(get('/off/x')->{body}, '[]', '$slice_range without slice: empty');

# a client without Range: 200, every byte, three slices
my $n = () = $u->requests;
my $r = get("/range/$N");
is($r->{status}, 200, 'whole: 200');
is($r->{headers}{'content-length'}, $N, 'whole: Content-Length is the total');
ok(!exists $r->{headers}{'content-range'}, 'whole: no Content-Range');
is($r->{headers}{etag}, '"r-1"', 'whole: the ETag');
is(length($r->{body} // ''), $N, 'whole: length');
ok(md5_hex($r->{body} // '') eq md5_hex($all), 'whole: every byte in order');
is(ranges_since($n), 'bytes=0-1048575 bytes=1048576-2097151 bytes=2097152-3145727',
   'whole: three slices asked');

# a range inside the second slice: only that slice is fetched
$n = () = $u->requests;
$r = get("/range/$N", Range => 'bytes=1100000-1100099');
is($r->{status}, 206, 'range: 206');
is($r->{headers}{'content-range'}, "bytes 1100000-1100099/$N", 'range: Content-Range');
is($r->{headers}{'content-length'}, 100, 'range: Content-Length');
is($r->{body}, substr($all, 1100000, 100), 'range: the bytes');
is(ranges_since($n), 'bytes=1048576-2097151', 'range: only the slice it covers');

# a range across a slice boundary: two slices, cut at both ends
$n = () = $u->requests;
$r = get("/range/$N", Range => 'bytes=1048000-2097200');
is($r->{status}, 206, 'across: 206');
is($r->{headers}{'content-range'}, "bytes 1048000-2097200/$N", 'across: Content-Range');
ok(($r->{body} // '') eq substr($all, 1048000, 2097201 - 1048000), 'across: the bytes');
is(ranges_since($n), 'bytes=0-1048575 bytes=1048576-2097151 bytes=2097152-3145727',
   'across: the three slices it touches');

# an open range and a suffix range
$r = get("/range/$N", Range => 'bytes=2600000-');
is($r->{headers}{'content-range'}, "bytes 2600000-2621439/$N", 'open range');
is($r->{body}, substr($all, 2600000), 'open range: the bytes');
$r = get("/range/$N", Range => 'bytes=-100');
is($r->{status}, 206, 'suffix range: 206');
is($r->{body}, substr($all, -100), 'suffix range: the last bytes');
$r = get("/range/$N", Range => 'bytes=9999999-');
is($r->{status}, 416, 'a range past the end: the origin\'s 416');

# If-Range: the range holds while the ETag matches, else the whole
$r = get("/range/$N", Range => 'bytes=10-19', 'If-Range' => '"r-1"');
is($r->{status}, 206, 'If-Range matching: 206');
is($r->{body}, substr($all, 10, 10), 'If-Range matching: the bytes');
$r = get("/range/$N", Range => 'bytes=10-19', 'If-Range' => '"other"');
is($r->{status}, 200, 'If-Range not matching: 200');
is(length($r->{body} // ''), $N, 'If-Range not matching: every byte');

# small slices: many subrequests, one after another
$r = get('/small/range/1000000');
ok(($r->{body} // '') eq Test::Upstream::pattern(1000000), 'ten 100k slices: every byte');

# gzip below the slice filter
$r = get("/gz/range/$N", 'Accept-Encoding' => 'gzip');
is($r->{headers}{'content-encoding'}, 'gzip', 'gzip: encoded');
my $plain;
gunzip(\($r->{body} // ''), \$plain) or diag $GunzipError;
ok(defined $plain && $plain eq $all, 'gzip: every byte in order');

# HEAD: the first slice's header only
$n = () = $u->requests;
$r = get("/range/$N", method => 'HEAD');
is($r->{status}, 200, 'HEAD: 200');
is($r->{headers}{'content-length'}, $N, 'HEAD: the total length');
is(ranges_since($n), 'bytes=0-1048575', 'HEAD: one slice asked');

# an origin that answers 200 to the first slice: passed through whole
$n = () = $u->requests;
$r = get("/range/$N?no206=1");
is($r->{status}, 200, 'origin 200: 200');
ok(($r->{body} // '') eq $all, 'origin 200: the body as it came');
is(scalar(() = $u->requests) - $n, 1, 'origin 200: no further slices');

# the ETag changes in the second slice: the response is cut
$r = get_cut("/range/$N?etag_at=1048576");
is($r->{cl}, $N, 'etag mismatch: the header went');
ok(length($r->{body} // '') < $N, 'etag mismatch: the response is cut');
ok($t->log_contains(qr{\[error\].*etag mismatch in slice response}),
   'etag mismatch: nginx\'s error');
$r = get_cut("/range/$N?etag_at=1048576&lm=1");
ok(length($r->{body} // '') < $N, 'last-modified mismatch: the response is cut');
ok($t->log_contains(qr{\[error\].*last-modified mismatch in slice response}),
   'last-modified mismatch: logged');

# the second slice answers another range: cut
$r = get_cut("/range/$N?shift_at=1048576");
ok(length($r->{body} // '') < $N, 'unexpected range: the response is cut');
ok($t->log_contains(qr{\[error\].*unexpected range in slice response: 1048577-2097153}),
   'unexpected range: nginx\'s error');
ok(substr($r->{body} // '', 0, 1048576) eq substr($all, 0, 1048576),
   'unexpected range: no wrong byte before the cut');

# the origin drops the third slice's connection: the slice's 502 never
# joins the output, the response is cut after the second
$r = get_cut("/range/$N?drop_at=2097152");
is($r->{cl}, $N, 'dropped slice: the header went');
is(length($r->{body}), 2097152, 'dropped slice: cut after the slices that came');
ok($r->{body} eq substr($all, 0, 2097152), 'dropped slice: no error page in the body');
ok($t->log_contains(qr{\[error\].*unexpected status code 502 in slice response}),
   'dropped slice: logged');

# the client goes while a slice runs: nothing is left behind (the worker
# answers the next request, and exits on QUIT at the end)
{
    my $c = $t->raw($t->port(0));
    $c->send("GET /range/$N?delay=300 HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $head = $c->read_response(timeout => 0.5);
    $c->close;
    my $c2 = $t->raw($t->port(0));
    $c2->send("GET /small/range/250000 HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $rr = $c2->read_response(timeout => 20) // {};
    $c2->close;
    ok(($rr->{body} // '') eq Test::Upstream::pattern(250000),
       'a client gone mid-way: the next request served');
}

# keepalive after a stitched response
my $c = $t->raw($t->port(0));
$c->send("GET /small/range/300000 HTTP/1.1\r\nHost: localhost\r\n\r\n");
my $r1 = $c->read_response(timeout => 20) // {};
$c->send("GET /range/100 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
my $r2 = $c->read_response(timeout => 20) // {};
ok(($r1->{body} // '') eq Test::Upstream::pattern(300000), 'keepalive: first response');
is($r2->{body}, Test::Upstream::pattern(100), 'keepalive: the next one');
$c->close;

$t->stop;

# -t: slice's argument is a size
my $t2 = Test::Ringx->new;
$t2->write_config(<<'EOF');
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { slice 1x; } } }
EOF
my ($rc, $out, $err) = $t2->ringx('-t');
isnt($rc, 0, 'slice 1x: -t fails');
like($err, qr{\[emerg\].*"slice".*ringx\.conf:2}, 'slice 1x: [emerg] with file:line');

$u->stop;
done_testing;
