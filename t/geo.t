#!/usr/bin/perl
# geo.t: the geo module: IPv4 and IPv6 networks (the most specific wins),
# delete, default, include, IPv4-mapped addresses, an address that is not
# one (255.255.255.255), ranges, the client's address by default, proxy
# and proxy_recursive with X-Forwarded-For, a server on [::1]; then the
# configuration errors and warnings in nginx's words.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::IP;
use Socket qw(SOCK_STREAM);
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

    geo $arg_ip $cidr {
        default          def;
        127.0.0.0/8      loop;
        10.0.0.0/8       ten;
        10.1.0.0/16      ten-one;
        10.1.2.0/24      ten-one-two;
        10.1.2.3         host;
        10.1.2.128/25    upper-half;
        192.168.0.0/16   lan;
        172.16.0.0/12    private;
        delete 172.16.0.0/12;
        ::1              v6-loop;
        2001:db8::/32    doc;
        2001:db8:1::/48  doc-1;
        255.255.255.255  none-address;
        include geo.inc;
    }

    geo $arg_ip $nodefault {
        10.0.0.0/8 ten;
    }

    geo $client {
        default other;
        127.0.0.1 me;
    }

    geo $proxied {
        default none;
        proxy 127.0.0.0/8;
        proxy 192.168.0.0/16;
        10.0.0.0/8 ten;
        192.168.0.0/16 lan;
        127.0.0.1 local;
        2001:db8::/32 doc;
    }

    geo $recursive {
        proxy_recursive;
        proxy 127.0.0.1;
        proxy 192.168.0.0/16;
        default none;
        10.0.0.0/8 ten;
        192.168.0.0/16 lan;
        127.0.0.1 local;
    }

    geo $arg_ip $range {
        ranges;
        default                        rdef;
        10.0.0.0-10.0.0.255            a;
        10.0.1.0-10.0.1.255            b;
        10.0.0.100-10.0.0.110          inner;
        10.0.2.0-10.0.2.255            c;
        delete 10.0.2.0-10.0.2.255;
        0.0.0.0-0.0.0.255              zero;
        255.255.255.0-255.255.255.255  top;
        include ranges.inc;
    }

    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /cidr { return 200 "$cidr|$nodefault"; }
        location /client { return 200 "$client"; }
        location /proxy { return 200 "$proxied|$recursive"; }
        location /range { return 200 "$range"; }
    }
}
EOF
$t->write_file('conf/geo.inc', "1.2.3.0/24 from-include;\n");
$t->write_file('conf/ranges.inc', "20.0.0.0-20.0.0.9 r-include;\n");
$t->run;
my $P = $t->port(0);

sub get {
    my ($uri, @headers) = @_;
    my $c = $t->raw($P);
    my $extra = join '', map { "$_\r\n" } @headers;
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n${extra}Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r ? $r->{body} : undef;
}

my @cidr = (
    ['10.1.2.3',          'host|ten',          'a /32 inside nested networks'],
    ['10.1.2.4',          'ten-one-two|ten',   'the /24'],
    ['10.1.2.200',        'upper-half|ten',    'the /25 inside the /24'],
    ['10.1.2.127',        'ten-one-two|ten',   'just below the /25'],
    ['10.1.3.1',          'ten-one|ten',       'the /16'],
    ['10.2.0.0',          'ten|ten',           'the /8'],
    ['10.255.255.255',    'ten|ten',           'the last address of the /8'],
    ['11.0.0.0',          'def|',              'just past the /8: default (empty without one)'],
    ['9.255.255.255',     'def|',              'just before the /8'],
    ['127.0.0.1',         'loop|',             '127.0.0.0/8'],
    ['192.168.1.5',       'lan|',              '192.168.0.0/16'],
    ['172.16.5.5',        'def|',              'a deleted network'],
    ['1.2.3.4',           'from-include|',     'a network from an included file'],
    ['0.0.0.0',           'def|',              'the first address'],
    ['255.255.255.255',   'none-address|',     'the last address'],
    ['bogus',             'none-address|',     'not an address: 255.255.255.255'],
    ['10.1.2.3.4',        'none-address|',     'five parts: not an address'],
    ['::1',               'v6-loop|',          'IPv6 ::1'],
    ['::2',               'def|',              'IPv6 default'],
    ['2001:db8:1::1',     'doc-1|',            'IPv6 /48 inside /32'],
    ['2001:db8:2::1',     'doc|',              'IPv6 /32'],
    ['2001:DB8::',        'doc|',              'IPv6 in capitals'],
    ['::ffff:10.1.2.3',   'host|ten',          'an IPv4-mapped address is looked up as IPv4'],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'def|', 'the last IPv6 address'],
);
for my $c (@cidr) {
    is(get("/cidr?ip=$c->[0]"), $c->[1], "cidr: $c->[2]");
}
is(get('/cidr'), 'none-address|', 'no source value: 255.255.255.255');

is(get('/client'), 'me', 'the client address by default ($remote_addr)');
is(get('/client', 'X-Forwarded-For: 10.0.0.1'), 'me',
   'X-Forwarded-For is ignored without proxy');

my @proxy = (
    [[],                                      'local|local', 'no X-Forwarded-For'],
    [['10.1.1.1'],                            'ten|ten',     'a trusted client: the forwarded address'],
    [['10.1.1.1, 192.168.1.1'],               'lan|ten',     'the last address; recursive skips trusted ones'],
    [['192.168.1.2, 192.168.1.1'],            'lan|lan',     'all trusted: recursive takes the first'],
    [['10.1.1.1', '192.168.1.1'],             'lan|ten',     'two headers: the last one first'],
    [['10.1.1.1,192.168.1.1 ,  '],            'lan|ten',     'commas and spaces'],
    [['garbage'],                             'local|local', 'not an address: the client address stays'],
    [['10.1.1.1, garbage'],                   'local|local', 'the last item is not an address'],
    [['10.1.1.1:8080'],                       'ten|ten',     'an address with a port'],
    [['[2001:db8::1]:80'],                    'doc|none',    'an IPv6 address with a port'],
    [['::ffff:192.168.3.3'],                  'lan|lan',     'an IPv4-mapped forwarded address'],
);
for my $c (@proxy) {
    my @h = map { "X-Forwarded-For: $_" } @{ $c->[0] };
    is(get('/proxy', @h), $c->[1], "proxy: $c->[2]");
}

my @ranges = (
    ['10.0.0.5',          'a',          'inside a range'],
    ['10.0.0.0',          'a',          'the first address of a range'],
    ['10.0.0.99',         'a',          'before the nested range'],
    ['10.0.0.100',        'inner',      'a nested range splits the outer one'],
    ['10.0.0.110',        'inner',      'the end of the nested range'],
    ['10.0.0.111',        'a',          'after the nested range'],
    ['10.0.0.255',        'a',          'the last address of a range'],
    ['10.0.1.7',          'b',          'the next range'],
    ['10.0.2.5',          'rdef',       'a deleted range'],
    ['9.9.9.9',           'rdef',       'outside every range: default'],
    ['0.0.0.1',           'zero',       'the first range'],
    ['20.0.0.9',          'r-include',  'a range from an included file'],
    ['255.255.255.255',   'top',        'the last range'],
    ['bogus',             'top',        'not an address: 255.255.255.255'],
    ['::1',               'top',        'IPv6 with ranges: 255.255.255.255'],
    ['::ffff:10.0.0.5',   'a',          'an IPv4-mapped address'],
);
for my $c (@ranges) {
    is(get("/range?ip=$c->[0]"), $c->[1], "ranges: $c->[2]");
}

$t->stop;

###########################################################################
# a server on [::1]: the client's IPv6 address

sub have_ipv6_loopback {
    my $s = IO::Socket::IP->new(LocalHost => '::1', LocalPort => 0,
                                Proto => 'tcp', Type => SOCK_STREAM);
    return $s ? 1 : 0;
}

SKIP: {
    skip 'IPv6 loopback ::1 is not configured', 2 unless have_ipv6_loopback();
    my $t6 = Test::Ringx->new;
    $t6->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; }
http {
    access_log off;
    geo $v6 {
        default no;
        127.0.0.1 v4;
        ::1 loopback-v6;
    }
    server {
        listen [::1]:%%PORT_0%%;
        location / { return 200 "$v6 $remote_addr"; }
    }
}
EOF
    $t6->run;
    my $c = $t6->raw($t6->port(0), host => '::1');
    ok($c, 'connect to [::1]');
    my $r;
    if ($c) {
        $c->send("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        $r = $c->read_response(timeout => 3);
        $c->close;
    }
    is($r && $r->{body}, 'loopback-v6 ::1', 'an IPv6 client is looked up as IPv6');
    $t6->stop;
}

###########################################################################
# configuration errors and warnings

sub conf_check {
    my ($block, %o) = @_;
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
    my %at;
    for my $i (1 .. @lines) {
        $at{$1} = $i if $lines[$i - 1] =~ /# <-(\w*)/;
    }
    my ($rc, undef, $err) = $e->ringx('-t');
    return ($rc, $err, $e->conf_file, \%at);
}

sub conf_error {
    my ($name, $block, $msg) = @_;
    my ($rc, $err, $file, $at) = conf_check($block);
    is($rc, 1, "$name: -t fails");
    like($err, qr/\[emerg\] \Q$msg\E in \Q$file\E:$at->{''}$/m, "$name: message")
        or diag($err);
}

conf_error('three parameters', <<'EOF', 'invalid number of the geo parameters');
    geo $g {
        10.0.0.0/8 a b;   # <-
    }
EOF
conf_error('ranges after a network', <<'EOF',
    geo $g {
        default x;
        ranges;   # <-
    }
EOF
    'the "ranges" directive must be the first directive inside "geo" block');
conf_error('prefix too long', <<'EOF', 'invalid network "10.0.0.0/33"');
    geo $g {
        10.0.0.0/33 a;   # <-
    }
EOF
conf_error('not a network', <<'EOF', 'invalid network "example.com"');
    geo $g {
        example.com a;   # <-
    }
EOF
conf_error('IPv6 prefix too long', <<'EOF', 'invalid network "::1/129"');
    geo $g {
        ::1/129 a;   # <-
    }
EOF
conf_error('bad proxy', <<'EOF', 'invalid network "10.0.0.0/x"');
    geo $g {
        proxy 10.0.0.0/x;   # <-
    }
EOF
conf_error('reversed range', <<'EOF', 'invalid range "10.0.0.5-10.0.0.1"');
    geo $g {
        ranges;
        10.0.0.5-10.0.0.1 a;   # <-
    }
EOF
conf_error('a network with ranges', <<'EOF', 'invalid range "10.0.0.0/8"');
    geo $g {
        ranges;
        10.0.0.0/8 a;   # <-
    }
EOF
conf_error('IPv6 range', <<'EOF', 'invalid range "::1-::2"');
    geo $g {
        ranges;
        ::1-::2 a;   # <-
    }
EOF
conf_error('overlapping ranges', <<'EOF', 'range "10.0.0.128-10.0.1.5" overlaps "10.0.0.0-10.0.0.255"');
    geo $g {
        ranges;
        10.0.0.0-10.0.0.255 a;
        10.0.0.128-10.0.1.5 b;   # <-
    }
EOF
conf_error('a range over another', <<'EOF', 'range "9.0.0.0-11.0.0.0" overlaps "10.0.0.0-10.0.0.255"');
    geo $g {
        ranges;
        10.0.0.0-10.0.0.255 a;
        9.0.0.0-11.0.0.0 b;   # <-
    }
EOF
conf_error('variable name', <<'EOF', 'invalid variable name "g"');
    geo $remote_addr g {   # <-
    }
EOF
conf_error('source variable name', <<'EOF', 'invalid variable name "remote_addr"');
    geo remote_addr $g {   # <-
    }
EOF

# warnings: the configuration loads
{
    my ($rc, $err, $file, $at) = conf_check(<<'EOF');
    geo $g {
        10.0.0.0/8 a;
        10.0.0.0/8 b;   # <-dup
        10.1.2.3/16 c;   # <-bits
        delete 11.0.0.0/8;   # <-nonet
        default x;
        default y;   # <-dupdef
    }
    geo $r {
        ranges;
        default x;
        default y;   # <-rdef
        10.0.0.0-10.0.0.255 a;
        10.0.0.0-10.0.0.255 b;   # <-rdup
        delete 11.0.0.0-11.0.0.255;   # <-norange
    }
EOF
    is($rc, 0, 'warnings: the configuration loads');
    my @w = (
        [dup     => 'duplicate network "10.0.0.0/8", value: "b", old value: "a"'],
        [bits    => 'low address bits of 10.1.2.3/16 are meaningless'],
        [nonet   => 'no network "11.0.0.0/8" to delete'],
        [dupdef  => 'duplicate network "default", value: "y", old value: "x"'],
        [rdef    => 'duplicate default geo range value: "y", old value: "x"'],
        [rdup    => 'duplicate range "10.0.0.0-10.0.0.255", value: "b", old value: "a"'],
        [norange => 'no address range "11.0.0.0-11.0.0.255" to delete'],
    );
    for my $w (@w) {
        like($err, qr/\[warn\] \Q$w->[1]\E in \Q$file\E:$at->{$w->[0]}$/m,
             "warning: $w->[1]") or diag($err);
    }
}

done_testing;
