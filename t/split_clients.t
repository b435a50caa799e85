#!/usr/bin/perl
# split_clients.t: buckets by MurmurHash2 as nginx computes them. The
# expected bucket of every input comes from an independent MurmurHash2 in
# Perl (checked against published values first) and nginx's boundaries;
# then the configuration errors in nginx's words.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

# 32-bit multiplication modulo 2^32 without losing bits to floating point.
sub mul32 {
    my ($a, $b) = @_;
    my $lo = $a * ($b & 0xffff);
    my $hi = (($a * ($b >> 16)) & 0xffff) << 16;
    return ($lo + $hi) & 0xffffffff;
}

# MurmurHash2, 32 bits, seed 0, blocks read little-endian.
sub murmur2 {
    my ($s) = @_;
    my @b = unpack('C*', $s);
    my $m = 0x5bd1e995;
    my $h = scalar(@b) & 0xffffffff;
    my $i = 0;
    while (@b - $i >= 4) {
        my $k = $b[$i] | $b[$i + 1] << 8 | $b[$i + 2] << 16 | $b[$i + 3] << 24;
        $k = mul32($k, $m);
        $k ^= $k >> 24;
        $k = mul32($k, $m);
        $h = mul32($h, $m) ^ $k;
        $i += 4;
    }
    my $rest = @b - $i;
    $h ^= $b[$i + 2] << 16 if $rest >= 3;
    $h ^= $b[$i + 1] << 8 if $rest >= 2;
    if ($rest >= 1) {
        $h ^= $b[$i];
        $h = mul32($h, $m);
    }
    $h ^= $h >> 13;
    $h = mul32($h, $m);
    $h ^= $h >> 15;
    return $h;
}

# published MurmurHash2 values (ClickHouse's murmurHash2_32 tests)
is(murmur2(''), 0, 'reference MurmurHash2("") = 0');
is(murmur2('foo'), 2414502773, 'reference MurmurHash2("foo")');
is(murmur2('bar'), 670491991, 'reference MurmurHash2("bar")');

# nginx's boundaries: each part adds its share of 0xffffffff, truncated
sub bounds {
    my @parts = @_;             # [hundredths or '*', value]
    my ($last, @b) = (0);
    for my $p (@parts) {
        if ($p->[0] eq '*') {
            push @b, [undef, $p->[1]];
        } else {
            $last += int($p->[0] * 4294967295 / 10000);
            push @b, [$last, $p->[1]];
        }
    }
    return @b;
}

sub bucket {
    my ($hash, @b) = @_;
    for my $p (@b) {
        return $p->[1] if !defined $p->[0] || $hash < $p->[0];
    }
    return '';
}

my @doc = bounds([50, '.one'], [200, '.two'], ['*', '']);
is($doc[0][0], 21474836, 'nginx documentation: 0.5% ends at 21474836');
is($doc[1][0], 107374181, 'nginx documentation: 2% more ends at 107374181');

my @abc = bounds([1000, 'a'], [2550, 'b'], [3333, 'c'], ['*', 'd']);
my @partial = bounds([2500, 'p'], [2500, 'q']);

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    split_clients "${arg_s}AAA" $doc {
        0.5%  .one;
        2.0%  .two;
        *     "";
    }
    split_clients $arg_s $abc {
        10%     a;
        25.5%   b;
        33.33%  c;
        *       d;
    }
    split_clients "x$arg_s" $partial {
        25% p;
        25% q;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / {
            add_header X-Doc $doc;
            return 200 "$abc|$partial|$doc";
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

# one keepalive connection for all inputs
my $c = $t->raw($P);
my (%seen, $mismatch);
for my $i (0 .. 299) {
    my $s = "client-$i";
    $c->send("GET /?s=$s HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    last unless $r;
    my $want = join '|', bucket(murmur2($s), @abc),
                         bucket(murmur2("x$s"), @partial),
                         bucket(murmur2("${s}AAA"), @doc);
    $seen{(split /\|/, $want)[0]}++;
    if ($r->{body} ne $want) {
        $mismatch++;
        is($r->{body}, $want, "bucket of \"$s\"");
    }
    # a value is cached: the header sees the same bucket as the body
    my $doc = (split /\|/, $want, -1)[2];
    if (($r->{headers}{'x-doc'} // '') ne $doc) {
        $mismatch++;
        is($r->{headers}{'x-doc'} // '', $doc, "header bucket of \"$s\"");
    }
}
$c->close;
ok(!$mismatch, '300 inputs: every bucket as nginx computes it');
ok($seen{$_}, "bucket $_ was used") for qw(a b c d);

# the empty source hashes to 0: the first bucket
{
    my $r = $t->raw($P);
    $r->send("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    my $resp = $r->read_response(timeout => 3);
    like($resp->{body}, qr/^a\|/, 'an empty text: MurmurHash2 0, the first bucket');
}

$t->stop;

###########################################################################
# configuration errors

sub conf_error {
    my ($name, $block, $msg) = @_;
    my $e = Test::Ringx->new;
    my $conf = <<"EOF";
events { worker_connections 64; }
http {
$block
    server { listen 127.0.0.1:%%PORT_0%%; }
}
EOF
    $e->write_config($conf);
    my @lines = split /\n/, $conf;
    my ($line) = grep { $lines[$_ - 1] =~ /# <-/ } 1 .. @lines;
    my ($rc, undef, $err) = $e->ringx('-t');
    is($rc, 1, "$name: -t fails");
    like($err, qr/\[emerg\] \Q$msg\E in \Q${\ $e->conf_file }\E:$line$/m,
         "$name: message") or diag($err);
}

conf_error('over 100%', <<'EOF', 'percent total is greater than 100%');
    split_clients $uri $v {
        60% a;
        50% b;
    }   # <-
EOF
conf_error('percent after *', <<'EOF', 'percent total is greater than 100%');
    split_clients $uri $v {
        * a;
        1% b;
    }   # <-
EOF
conf_error('no percent sign', <<'EOF', 'invalid percent value "50"');
    split_clients $uri $v {
        50 a;   # <-
    }
EOF
conf_error('three decimals', <<'EOF', 'invalid percent value "0.125%"');
    split_clients $uri $v {
        0.125% a;   # <-
    }
EOF
conf_error('zero', <<'EOF', 'invalid percent value "0%"');
    split_clients $uri $v {
        0% a;   # <-
    }
EOF
conf_error('not a number', <<'EOF', 'invalid percent value "x%"');
    split_clients $uri $v {
        x% a;   # <-
    }
EOF
conf_error('one parameter', <<'EOF', 'invalid number of the split_clients parameters');
    split_clients $uri $v {
        50%;   # <-
    }
EOF
conf_error('variable name', <<'EOF', 'invalid variable name "v"');
    split_clients $uri v {   # <-
    }
EOF

# exactly 100% without "*" is fine
{
    my $e = Test::Ringx->new;
    $e->write_config(<<'EOF');
events { worker_connections 64; }
http {
    split_clients $uri $v { 50% a; 50.00% b; }
    server { listen 127.0.0.1:%%PORT_0%%; }
}
EOF
    my ($rc) = $e->ringx('-t');
    is($rc, 0, '100% in two parts is accepted');
}

done_testing;
