#!/usr/bin/perl
# static.t: files served by the static module: bodies of every size through
# both paths (read into memory, and zero-copy splices with sendfile on),
# compared by SHA-256; ranges, including unaligned ones on the splice
# path, and overlapping ones adding up to more than the file (200);
# validators and conditional requests; HEAD; directories; a file
# that shrinks while it is sent.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
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
    access_log off;
    default_type application/octet-stream;
    types { text/plain txt; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { root html; sendfile off; }
        location /z/ { root html; sendfile on; sendfile_splice on; }
    }
}
EOF

# deterministic contents of every size that matters: empty, one byte, a
# small page, exactly 64 KiB (the splice threshold), 1 MiB, 3 MiB + 7
my %size = (empty => 0, one => 1, small => 30, mid => 16384,
            edge => 65536, big => 1048576, huge => 3 * 1048576 + 7);
my %body;
for my $name (keys %size) {
    my $data = '';
    my $i = 0;
    $data .= pack('N', ($i++ * 2654435761) % 4294967296) while length($data) < $size{$name};
    $body{$name} = substr($data, 0, $size{$name});
    $t->write_file_raw("html/$name.bin", $body{$name});
    $t->write_file_raw("html/z/$name.bin", $body{$name});
}
$t->write_file_raw('html/dir/index.html', "index\n");
$t->write_file_raw('html/note.txt', "a note\n");
# a sparse 64 MiB file: far more than socket buffers hold, so the server is
# still sending it when the test cuts it short
$t->write_file_raw('html/z/trunc.bin', '');
truncate($t->prefix . '/html/z/trunc.bin', 64 * 1048576);
$t->run;
my $P = $t->port(0);

sub curl {
    my (@args) = @_;
    return scalar `curl -s --max-time 10 @args`;
}

for my $prefix ('', 'z/') {
    my $how = $prefix ? 'splice' : 'read';
    for my $name (sort { $size{$a} <=> $size{$b} } keys %size) {
        my $got = curl("http://127.0.0.1:$P/$prefix$name.bin");
        is(sha256_hex($got), sha256_hex($body{$name}),
           "$how: $name ($size{$name} bytes) arrives whole");
    }
    # ranges: unaligned starts and ends, on both sides of the threshold
    for my $r ([1, 70000], [4095, 1048576], [65535, 3 * 1048576 + 6], [3000000, undef]) {
        my ($a, $b) = @$r;
        my $spec = defined $b ? "$a-$b" : "$a-";
        my $want = defined $b ? substr($body{huge}, $a, $b - $a + 1) : substr($body{huge}, $a);
        my $got = curl("-r $spec", "http://127.0.0.1:$P/${prefix}huge.bin");
        is(sha256_hex($got), sha256_hex($want), "$how: range $spec of 3 MiB");
    }
}

# several requests in a row on one connection, alternating paths
{
    my $c = $t->raw($P);
    $c->send(join '', map { "GET /$_ HTTP/1.1\r\nHost: localhost\r\n\r\n" }
             'z/big.bin', 'small.bin', 'z/edge.bin', 'note.txt');
    my @r = $c->read_responses(4, timeout => 10);
    is(scalar @r, 4, 'pipelined: four responses');
    ok(@r == 4 && $r[0]{body} eq $body{big} && $r[1]{body} eq $body{small}
       && $r[2]{body} eq $body{edge} && $r[3]{body} eq "a note\n",
       'pipelined: each body whole and in order');
    $c->close;
}

# validators and conditional requests
my $head = curl('-sI', "http://127.0.0.1:$P/note.txt");
like($head, qr{^HTTP/1\.1 200 OK\r\n}, 'HEAD: 200');
like($head, qr{\r\nContent-Length: 7\r\n}, 'HEAD: Content-Length of the file');
like($head, qr{\r\nContent-Type: text/plain\r\n}, 'HEAD: type from the extension');
my ($etag) = $head =~ /\r\nETag: ("[0-9a-f]+-7")\r\n/;
ok($etag, 'ETag in nginx\'s form "mtime-size" (hex)');
my ($lm) = $head =~ /\r\nLast-Modified: ([^\r]+)\r\n/;
ok($lm, 'Last-Modified');
like(curl('-si', "-H 'If-None-Match: $etag'", "http://127.0.0.1:$P/note.txt"),
     qr{^HTTP/1\.1 304 }, 'If-None-Match with the ETag: 304');
like(curl('-si', "-H 'If-None-Match: \"other\", W/$etag'", "http://127.0.0.1:$P/note.txt"),
     qr{^HTTP/1\.1 304 }, 'If-None-Match: a weak match in a list is enough');
like(curl('-si', "-H 'If-Modified-Since: $lm'", "http://127.0.0.1:$P/note.txt"),
     qr{^HTTP/1\.1 304 }, 'If-Modified-Since equal to Last-Modified: 304');
like(curl('-si', "-H 'If-Match: \"nope\"'", "http://127.0.0.1:$P/note.txt"),
     qr{^HTTP/1\.1 412 }, 'If-Match with another tag: 412');
like(curl('-si', "-H 'If-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT'",
          "http://127.0.0.1:$P/note.txt"),
     qr{^HTTP/1\.1 412 }, 'If-Unmodified-Since before the file: 412');
like(curl('-si', "-r 0-1", "-H 'If-Range: \"stale\"'", "http://127.0.0.1:$P/note.txt"),
     qr{^HTTP/1\.1 200 }, 'If-Range with another tag: the whole file (200)');

# Accept-Ranges goes with the whole file only, as in nginx: not with a
# 206 (single or multipart) nor a 416
like($head, qr{\r\nAccept-Ranges: bytes\r\n}, '200: Accept-Ranges: bytes');
for my $case (['0-1', 206], ['0-1,4-5', 206], ['100-200', 416]) {
    my $r = curl('-si', "-r $case->[0]", "http://127.0.0.1:$P/note.txt");
    my ($h) = $r =~ /\A(.*?\r\n)\r\n/s;
    like($h // '', qr{^HTTP/1\.1 $case->[1] }, "range $case->[0]: $case->[1]");
    unlike($h // '', qr{\r\nAccept-Ranges:}i, "range $case->[0]: no Accept-Ranges");
}

# ranges: several, unsatisfiable
my $multi = curl('-si', '-r 0-1,4-5', "http://127.0.0.1:$P/note.txt");
like($multi, qr{^HTTP/1\.1 206 }, 'two ranges: 206');
like($multi, qr{\r\nContent-Type: multipart/byteranges; boundary=\d+\r\n},
     'two ranges: multipart/byteranges');
my ($boundary) = $multi =~ /boundary=(\d+)/;
my ($mbody) = $multi =~ /\r\n\r\n(.*)\z/s;
is($mbody, "\r\n--$boundary\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/7\r\n\r\na "
         . "\r\n--$boundary\r\nContent-Type: text/plain\r\nContent-Range: bytes 4-5/7\r\n\r\nte"
         . "\r\n--$boundary--\r\n", 'two ranges: the parts and the closing boundary');
my ($clen) = $multi =~ /\r\nContent-Length: (\d+)\r\n/;
is($clen, length($mbody // ''), 'two ranges: Content-Length matches the body');
# ranges adding up to more than the file (overlaps): the whole file, 200,
# as nginx does; 64 times "0-" of 1 MiB must not make a 64 MiB answer
for my $prefix ('', 'z/') {
    my $how = $prefix ? 'splice' : 'read';
    my $c = $t->raw($P, timeout => 10);
    $c->send("GET /${prefix}big.bin HTTP/1.1\r\nHost: localhost\r\n"
             . 'Range: bytes=' . join(',', ('0-') x 64) . "\r\n\r\n"
             . "GET /${prefix}big.bin HTTP/1.1\r\nHost: localhost\r\n"
             . "Range: bytes=0-524288,524288-\r\nConnection: close\r\n\r\n");
    my @r = $c->read_responses(2, timeout => 10);
    is($r[0]{status}, 200, "$how: 64 overlapping ranges of 1 MiB: 200");
    is($r[0]{headers}{'content-length'}, 1048576,
       "$how: 64 overlapping ranges: Content-Length is the file's");
    ok(defined $r[0]{body} && $r[0]{body} eq $body{big},
       "$how: 64 overlapping ranges: the file once");
    ok(!defined $r[0]{headers}{'content-range'}, "$how: 64 overlapping ranges: no Content-Range");
    is($r[1]{status}, 200, "$how: two ranges one byte over the file: 200");
    ok(defined $r[1]{body} && $r[1]{body} eq $body{big},
       "$how: two ranges one byte over the file: the file");
    $c->close;
}
my $parts = curl('-si', '-r 0-99,200000-200099,-100', "http://127.0.0.1:$P/big.bin");
like($parts, qr{^HTTP/1\.1 206 }, 'three ranges under the size: 206');
like($parts, qr{\r\nContent-Type: multipart/byteranges; boundary=\d+\r\n},
     'three ranges under the size: multipart');
is(scalar(() = $parts =~ /\r\nContent-Range: bytes \d+-\d+\/1048576\r\n/g), 3,
   'three ranges under the size: three parts');
like(curl('-si', '-r 0-9,5-14', "http://127.0.0.1:$P/big.bin"), qr{^HTTP/1\.1 206 },
     'overlapping ranges under the size: still 206 (nginx)');

my $unsat = curl('-si', '-r 100-200', "http://127.0.0.1:$P/note.txt");
like($unsat, qr{^HTTP/1\.1 416 }, 'unsatisfiable range: 416');
like($unsat, qr{\r\nContent-Range: bytes \*/7\r\n}, '416: Content-Range: bytes */size');
for my $bad ('bytes=x', 'bytes=5-3', 'bytes=0-1,x', 'bytes=0-1,') {
    like(curl('-si', "-H 'Range: $bad'", "http://127.0.0.1:$P/note.txt"),
         qr{^HTTP/1\.1 416 .*\r\nContent-Range: bytes \*/7\r\n}s,
         "a malformed range ($bad): 416, as nginx");
}
like(curl('-si', "-H 'Range: bytes=0-1,5-1'", "http://127.0.0.1:$P/note.txt"),
     qr{^HTTP/1\.1 206 .*\r\nContent-Range: bytes 0-1/7\r\n}s,
     'a spec that selects nothing (5-1) among others is dropped: 206');
like($parts, qr{\r\nContent-Type: multipart/byteranges; boundary=\d{20}\r\n},
     'the multipart boundary has 20 digits, as nginx');

# directories
my $dir = curl('-si', "-H 'Host: localhost'", "http://127.0.0.1:$P/dir");
like($dir, qr{^HTTP/1\.1 301 }, 'a directory without its slash: 301');
like($dir, qr{\r\nLocation: http://localhost:$P/dir/\r\n}, '301 to the slash, absolute');
is(curl("http://127.0.0.1:$P/dir/"), "index\n", 'the directory with its slash: its index');
like(curl('-si', "http://127.0.0.1:$P/nothere.bin"), qr{^HTTP/1\.1 404 }, 'a missing file: 404');
like(curl('-si', '-X DELETE', "http://127.0.0.1:$P/note.txt"), qr{^HTTP/1\.1 405 },
     'DELETE on a file: 405');

# a file that shrinks while it is sent: the response ends, the error is
# logged, the worker lives
{
    my @w = $t->worker_pids;
    my $c = $t->raw($P);
    $c->send("GET /z/trunc.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $r = $c->read_response(head => 1, timeout => 5);
    truncate($t->prefix . '/html/z/trunc.bin', 100000);
    my $rest = $c->read_all(timeout => 10);
    ok(length($rest // '') < 64 * 1048576, 'a file truncated while sent: the body is cut short');
    ok($c->eof, 'a file truncated while sent: the connection is closed');
    is_deeply([$t->worker_pids], \@w, 'a file truncated while sent: the worker lives');
    $c->close;
}
$t->expect_log(qr/file was truncated while sent/);

$t->stop;
done_testing;
