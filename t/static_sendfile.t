#!/usr/bin/perl
# static_sendfile.t: the sendfile(2) path (sendfile on). Whole downloads of
# 0 B, 1 B, 16 KiB, 1 MiB and 100 MiB by curl, compared by SHA-256, with
# sendfile_min_size 0 so that every size takes the path, and 1 MiB under
# the default threshold; ranges of a 3 GiB sparse file (offsets past 2^31);
# a slow reader with a small receive buffer, so that the socket fills,
# sendfile(2) comes back short (or with EAGAIN) and the body goes on after
# POLLOUT; a reader
# that stops reading, so that send_timeout ends it; a file truncated while
# it is sent (cut short, logged in nginx's words, the worker lives and
# serves the next connection); gzip turning the path off.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use Socket qw(SOL_SOCKET SO_RCVBUF);
use Time::HiRes qw(sleep time);
use Test::More;
use Test::Ringx;

plan skip_all => 'curl is needed' unless `curl --version 2>/dev/null` =~ /^curl /;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log logs/access.log;
    default_type application/octet-stream;
    types { text/plain txt; }
    sendfile on;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { root html; sendfile_min_size 0; }
        location /d/ { alias html/; }
        location /slow/ { alias html/; send_timeout 1s; }
        location /sp/ { alias html/; sendfile_splice on; }
        location /rd/ { alias html/; sendfile off; }
        location /gz/ { alias html/; gzip on; gzip_types text/plain;
                        gzip_min_length 0; sendfile_min_size 0; }
    }
}
EOF
my $pre = $t->prefix;
my $G = 1024 * 1024 * 1024;

sub pattern {
    my ($len, $seed) = @_;
    my $d = '';
    my $i = $seed;
    $d .= pack('N', ($i++ * 2654435761) % 4294967296) while length($d) < $len;
    return substr($d, 0, $len);
}

my %size = (b0 => 0, b1 => 1, k16 => 16384, m1 => 1048576, m8 => 8 * 1048576);
my (%sum, %body);
for my $n (keys %size) {
    $body{$n} = pattern($size{$n}, 3);
    $t->write_file_raw("html/$n.bin", $body{$n});
    $sum{$n} = sha256_hex($body{$n});
}
{
    my $sha = Digest::SHA->new(256);
    open(my $fh, '>', "$pre/html/m100.bin") or die $!;
    binmode $fh;
    my $piece = pattern(1048576, 5);
    for my $i (0 .. 99) {
        my $p = $piece;
        substr($p, 0, 4) = pack('N', $i);
        print $fh $p;
        $sha->add($p);
    }
    close $fh;
    $sum{m100} = $sha->hexdigest;
}
# 3 GiB sparse, with bytes written just below 2^31 and near the end
my %spot = (2**31 - 50000 => pattern(100000, 9), 3 * $G - 70000 => pattern(70000, 11));
{
    open(my $fh, '>', "$pre/html/g3.bin") or die $!;
    binmode $fh;
    for my $off (keys %spot) {
        seek($fh, $off, 0) or die;
        print $fh $spot{$off};
    }
    truncate($fh, 3 * $G) or die;
    close $fh;
}
sub expect {
    my ($from, $to) = @_;
    my $want = "\0" x ($to - $from + 1);
    for my $off (keys %spot) {
        my ($s, $e) = ($off, $off + length($spot{$off}) - 1);
        next if $e < $from || $s > $to;
        my $lo = $s > $from ? $s : $from;
        my $hi = $e < $to ? $e : $to;
        substr($want, $lo - $from, $hi - $lo + 1) = substr($spot{$off}, $lo - $s, $hi - $lo + 1);
    }
    return $want;
}
$t->write_file_raw('html/trunc.bin', '');
truncate("$pre/html/trunc.bin", 64 * 1048576);
$t->write_file_raw('html/stall.bin', '');
truncate("$pre/html/stall.bin", 64 * 1048576);
$t->write_file_raw('html/text.txt', 'hello, sendfile ' x 20000);
$t->run;
my $P = $t->port(0);
my @workers = $t->worker_pids;

sub curl { my $c = join ' ', @_; return scalar `curl -s --max-time 60 $c` }

# whole downloads
for my $n (qw(b0 b1 k16 m1 m8 m100)) {
    my $out = `curl -s --max-time 120 http://127.0.0.1:$P/$n.bin | sha256sum`;
    my ($got) = $out =~ /^([0-9a-f]{64})/;
    is($got, $sum{$n}, "sendfile: $n.bin ($size{$n} bytes) arrives whole (sha256)")
        if $n ne 'm100';
    is($got, $sum{$n}, 'sendfile: m100.bin (100 MiB) arrives whole (sha256)')
        if $n eq 'm100';
}
unlink "$pre/html/m100.bin";
is(sha256_hex(curl("http://127.0.0.1:$P/d/m1.bin")), $sum{m1},
   'sendfile on, default sendfile_min_size: 1 MiB arrives whole');
is(sha256_hex(curl("http://127.0.0.1:$P/d/k16.bin")), $sum{k16},
   'sendfile on, default sendfile_min_size: 16 KiB (read path) arrives whole');

# header and body on one keepalive connection, twice in a row
{
    my $c = $t->raw($P);
    $c->send("GET /m1.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"
             . "GET /k16.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my @r = $c->read_responses(2, timeout => 10);
    is(scalar @r, 2, 'pipelined: two responses');
    ok(@r == 2 && $r[0]{body} eq $body{m1} && $r[1]{body} eq $body{k16},
       'pipelined: both bodies whole, in order');
    like($r[0]{head} // '', qr{\r\nContent-Length: 1048576\r\n}, 'pipelined: Content-Length');
    $c->close;
}

# ranges of a 3 GiB sparse file, across 2^31 and at the end
for my $c ([2**31 - 60000, 2**31 + 60000], [3 * $G - 70000, 3 * $G - 1],
           [2**31 - 10, 3 * $G - 1]) {
    my ($from, $to) = @$c;
    if ($to - $from > 2 * 1048576) {
        # a 1 GiB range: check the head and the length only
        my $h = curl('-s', '-o /dev/null', "-w '%{http_code} %{size_download}'",
                     "-r $from-$to", "--max-time 120", "http://127.0.0.1:$P/g3.bin");
        is($h, '206 ' . ($to - $from + 1), "3 GiB: range $from-$to, every byte arrives");
        next;
    }
    my $r = curl('-si', "-r $from-$to", "http://127.0.0.1:$P/g3.bin");
    my ($head, $body) = split /\r\n\r\n/, $r, 2;
    like($head // '', qr{^HTTP/1\.1 206 }, "3 GiB: range $from-$to: 206");
    like($head // '', qr{\r\nContent-Range: bytes $from-$to/${\ (3 * $G)}(\r|$)},
         "3 GiB: range $from-$to: Content-Range");
    ok(defined $body && $body eq expect($from, $to), "3 GiB: range $from-$to: the bytes");
}

# a slow reader: a small receive buffer, read in small bites with pauses,
# so the socket fills again and again; the body still arrives whole
{
    my $c = $t->raw($P);
    setsockopt($c->sock, SOL_SOCKET, SO_RCVBUF, 16384);
    $c->send("GET /m8.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $buf = '';
    my $deadline = time + 60;
    my $want = 8 * 1048576;
    my $head_len;
    while (time < $deadline) {
        my $n = sysread($c->sock, my $b, 32768);
        last if !defined $n || $n == 0;
        $buf .= $b;
        if (!defined $head_len && $buf =~ /\r\n\r\n/) {
            $head_len = $+[0];
        }
        last if defined $head_len && length($buf) - $head_len >= $want;
        # pause now and then, long enough for the server to find it full
        sleep 0.02 if length($buf) % (512 * 1024) < 32768;
    }
    like($buf, qr{^HTTP/1\.1 200 OK\r\n}, 'slow reader: 200');
    ok(defined $head_len && sha256_hex(substr($buf, $head_len)) eq $sum{m8},
       'slow reader: 8 MiB arrives whole after the socket filled');
    $c->close;
}

# sendfile leaves the socket non-blocking: a splice response and a read
# response after it on the same connection, to a slow reader, still wait
# for room instead of failing
{
    my $c = $t->raw($P);
    setsockopt($c->sock, SOL_SOCKET, SO_RCVBUF, 16384);
    $c->send("GET /m8.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"
             . "GET /sp/m8.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"
             . "GET /rd/m8.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $buf = '';
    my @r;
    my $deadline = time + 60;
    while (time < $deadline) {
        my $n = sysread($c->sock, my $b, 32768);
        last if !defined $n || $n == 0;
        $buf .= $b;
        sleep 0.02 if length($buf) % (512 * 1024) < 32768;
        if (length($buf) >= 3 * 8 * 1048576) {
            @r = Test::Ringx::parse_responses($buf);
            last if @r == 3;
        }
    }
    is(scalar @r, 3, 'sendfile, splice, read on one connection, slow reader: three responses');
    ok(@r == 3 && !grep({ sha256_hex($_->{body}) ne $sum{m8} } @r),
       'sendfile, splice, read on one connection: every body whole');
    $c->close;
}

# a reader that stops: POLLOUT never comes, send_timeout ends it
{
    $t->mark_logs;
    my $c = $t->raw($P);
    setsockopt($c->sock, SOL_SOCKET, SO_RCVBUF, 16384);
    $c->send("GET /slow/stall.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    ok(Test::Ringx::wait_for(sub {
           $t->log_contains(qr/\[info\] .*client timed out.* while sending response to client/)
       }, 10), 'a stalled reader: send_timeout, logged');
    my $rest = $c->read_all(timeout => 10);
    ok(length($rest) < 64 * 1048576, 'a stalled reader: the body is cut short');
    ok($c->eof, 'a stalled reader: the connection is closed');
    $c->close;
}

# truncated while sent: cut short, logged as nginx does, the worker lives
{
    my $c = $t->raw($P);
    $c->send("GET /trunc.bin HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $r = $c->read_response(head => 1, timeout => 5);
    like($r->{head} // '', qr{Content-Length: 67108864\r\n}, 'truncated: the promised length');
    truncate("$pre/html/trunc.bin", 100000);
    my $rest = $c->read_all(timeout => 10);
    ok(length($rest // '') < 64 * 1048576, 'truncated while sent: the body is cut short');
    ok($c->eof, 'truncated while sent: the connection is closed');
    $c->close;
    ok(Test::Ringx::wait_for(sub {
           $t->log_contains(qr/\[alert\] .*sendfile\(\) reported that "\Q$pre\E\/html\/trunc\.bin" was truncated at \d+/)
       }, 5), 'truncated while sent: logged in nginx\'s words');
    is_deeply([$t->worker_pids], \@workers, 'truncated while sent: the same worker lives');
    is(sha256_hex(curl("http://127.0.0.1:$P/m1.bin")), $sum{m1},
       'the next request, on a new connection, is served whole');
}
$t->expect_log(qr/was truncated at/);

# gzip needs the bytes: the path steps aside, the body is compressed
{
    my $r = `curl -s --max-time 10 -H 'Accept-Encoding: gzip' http://127.0.0.1:$P/gz/text.txt | gzip -dc`;
    is($r, 'hello, sendfile ' x 20000, 'gzip on: the body is compressed, not sent by sendfile');
}

# HEAD sends no body
like(curl('-sI', "http://127.0.0.1:$P/m1.bin"), qr{\r\nContent-Length: 1048576\r\n},
     'HEAD: the length, no body');

# bytes in the access log: header + body counted
{
    ok(Test::Ringx::wait_for(sub {
           $t->log_contains(qr{"GET /d/m1\.bin HTTP/1\.1" 200 1048576 }, 'logs/access.log')
       }, 5), 'access log: $body_bytes_sent of a sendfile response');
}

is_deeply([$t->worker_pids], \@workers, 'one worker all along');
$t->stop;
done_testing;
