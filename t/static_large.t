#!/usr/bin/perl
# static_large.t: sizes and offsets past 32 bits, and whole bodies checked
# by SHA-256. Sparse files (3 GiB and 5 GiB, a few written spots) cost no
# memory: HEAD gives their full Content-Length, and ranges near the end
# and across 2^31 and 2^32 return the written bytes, on the read path and
# the splice path. curl downloads of 0 B, 1 B, 16 KiB, 1 MiB and 100 MiB
# match their files (the 100 MiB one lives in the test prefix and is
# deleted at the end). A file truncated while it is sent on the read path
# ends the response, is logged, and the worker serves the next request.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
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
    access_log off;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { root html; sendfile off; }
        location /z/ { alias html/; sendfile on; sendfile_splice on; }
    }
}
EOF
my $pre = $t->prefix;
my $G = 1024 * 1024 * 1024;

# deterministic bytes of any length
sub pattern {
    my ($len, $seed) = @_;
    my $d = '';
    my $i = $seed;
    $d .= pack('N', ($i++ * 2654435761) % 4294967296) while length($d) < $len;
    return substr($d, 0, $len);
}

# sparse files with bytes written at some offsets
my %spots;
sub sparse {
    my ($name, $size, @at) = @_;
    my $path = "$pre/html/$name";
    open(my $fh, '>', $path) or die "$path: $!";
    binmode $fh;
    for my $off (@at) {
        my $bytes = pattern(80000, $off % 1000);
        $bytes = substr($bytes, 0, $size - $off) if $off + length $bytes > $size;
        seek($fh, $off, 0) or die;
        print $fh $bytes;
        $spots{$name}{$off} = $bytes;
    }
    truncate($fh, $size) or die "truncate: $!";
    close $fh;
}
mkdir "$pre/html";
sparse('g3.bin', 3 * $G, 3 * $G - 1000);
sparse('g5.bin', 5 * $G, 2**31 - 40000, 2**32 - 40000, 5 * $G - 500);

# the byte at any offset of a sparse file
sub expect {
    my ($name, $from, $to) = @_;     # inclusive
    my $want = "\0" x ($to - $from + 1);
    for my $off (keys %{ $spots{$name} }) {
        my $b = $spots{$name}{$off};
        my ($s, $e) = ($off, $off + length($b) - 1);
        next if $e < $from || $s > $to;
        my $lo = $s > $from ? $s : $from;
        my $hi = $e < $to ? $e : $to;
        substr($want, $lo - $from, $hi - $lo + 1) = substr($b, $lo - $s, $hi - $lo + 1);
    }
    return $want;
}

# files for whole downloads
my %small = (b0 => 0, b1 => 1, k16 => 16384, m1 => 1048576);
my %sum;
for my $n (keys %small) {
    my $d = pattern($small{$n}, 7);
    $t->write_file_raw("html/$n.bin", $d);
    $sum{$n} = sha256_hex($d);
}
{
    # 100 MiB, written and hashed in 1 MiB pieces
    my $sha = Digest::SHA->new(256);
    open(my $fh, '>', "$pre/html/m100.bin") or die $!;
    binmode $fh;
    my $piece = pattern(1048576, 11);
    for my $i (0 .. 99) {
        my $p = $piece;
        substr($p, 0, 4) = pack('N', $i);          # no two pieces alike
        print $fh $p;
        $sha->add($p);
    }
    close $fh;
    $sum{m100} = $sha->hexdigest;
}
$t->write_file_raw('html/trunc.bin', '');
truncate("$pre/html/trunc.bin", 64 * 1048576);
$t->run;
my $P = $t->port(0);

sub curl { my $c = join ' ', @_; return scalar `curl -s --max-time 60 $c` }

# full sizes
for my $c (['g3.bin', 3 * $G], ['g5.bin', 5 * $G]) {
    my ($name, $size) = @$c;
    my $h = curl('-I', "http://127.0.0.1:$P/$name");
    like($h, qr{^HTTP/1\.1 200 }, "HEAD $name: 200");
    like($h, qr{\r\nContent-Length: $size\r\n}, "HEAD $name: Content-Length $size");
    like($h, qr{\r\nETag: "[0-9a-f]+-${\ sprintf('%x', $size)}"\r\n}, "HEAD $name: ETag with the 64-bit size");
}

# ranges: near the end of 3 GiB, across 2^31 and 2^32, the end of 5 GiB
for my $prefix ('', 'z/') {
    my $how = $prefix ? 'splice' : 'read';
    for my $c (['g3.bin', 3 * $G - 1200, 3 * $G - 1, 3 * $G],
               ['g3.bin', 3 * $G - 70000, 3 * $G - 1, 3 * $G],
               ['g5.bin', 2**31 - 100, 2**31 + 99, 5 * $G],
               ['g5.bin', 2**31 - 35000, 2**31 + 35000, 5 * $G],
               ['g5.bin', 2**32 - 100, 2**32 + 99, 5 * $G],
               ['g5.bin', 2**32 - 35000, 2**32 + 35000, 5 * $G],
               ['g5.bin', 5 * $G - 600, 5 * $G - 1, 5 * $G]) {
        my ($name, $from, $to, $size) = @$c;
        my $r = curl('-si', "-r $from-$to", "http://127.0.0.1:$P/$prefix$name");
        my ($head, $body) = split /\r\n\r\n/, $r, 2;
        like($head // '', qr{^HTTP/1\.1 206 }, "$how: $name $from-$to: 206");
        like($head // '', qr{\r\nContent-Range: bytes $from-$to/$size(\r|$)},
             "$how: $name $from-$to: Content-Range");
        ok(defined $body && $body eq expect($name, $from, $to), "$how: $name $from-$to: the bytes");
    }
    # a suffix range of the 5 GiB file
    my $r = curl('-si', '-r -300', "http://127.0.0.1:$P/${prefix}g5.bin");
    my ($head, $body) = split /\r\n\r\n/, $r, 2;
    like($head // '', qr{\r\nContent-Range: bytes ${\ (5 * $G - 300)}-${\ (5 * $G - 1)}/${\ (5 * $G)}(\r|$)},
         "$how: suffix range of 5 GiB: Content-Range");
    ok(defined $body && $body eq expect('g5.bin', 5 * $G - 300, 5 * $G - 1), "$how: suffix range: the bytes");
}

# whole downloads by curl, compared by SHA-256
for my $prefix ('', 'z/') {
    my $how = $prefix ? 'splice' : 'read';
    for my $n (qw(b0 b1 k16 m1 m100)) {
        my $out = `curl -s --max-time 120 http://127.0.0.1:$P/$prefix$n.bin | sha256sum`;
        my ($got) = $out =~ /^([0-9a-f]{64})/;
        is($got, $sum{$n}, "$how: $n.bin arrives whole (sha256)");
    }
}
unlink "$pre/html/m100.bin";
ok(!-e "$pre/html/m100.bin", 'the 100 MiB file is deleted');

# truncated while sent on the read path: cut short, logged, the worker
# lives and serves the next request
{
    my @w = $t->worker_pids;
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
           $t->log_contains(qr/\[crit\] .*read\(\) of "\Q$pre\E\/html\/trunc\.bin" at \d+ failed: file was truncated while sent/)
       }, 5), 'truncated while sent: logged');
    is_deeply([$t->worker_pids], \@w, 'truncated while sent: the same worker lives');
    is(curl("http://127.0.0.1:$P/b1.bin"), pattern(1, 7), 'the worker serves the next request');
}
$t->expect_log(qr/file was truncated while sent/);

$t->stop;
done_testing;
