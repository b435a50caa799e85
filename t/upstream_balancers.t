#!/usr/bin/perl
# upstream_balancers.t: least_conn, hash, hash consistent, ip_hash and
# random [two] end to end against three Test::Upstream peers. Which peer
# answered is read from $upstream_addr (an add_header on every location).
# least_conn and random two are shown to avoid a peer holding a slow
# request; hash, hash consistent and ip_hash are checked against the
# mapping computed here the way nginx computes it (CRC-32, the ketama ring
# of the server names, ip_hash's 113/6271 function); removing a server
# from a consistent ring moves only its own keys; random honours weights
# (loose bounds). Every balancer skips a refused peer; `backup` and the
# other configuration errors are checked with `ringx -t`.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use IO::Socket::IP;
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $HAVE_ZLIB = eval { require Compress::Zlib; 1 };

my @up = map { Test::Upstream->new->start } 1 .. 3;
my ($U1, $U2, $U3) = map { $_->addr } @up;

# a port nothing listens on
my $DEAD = do {
    my $s = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                Listen => 1) or die;
    my $p = $s->sockport;
    close $s;
    "127.0.0.1:$p";
};

# ip_hash as nginx: the peer index for 127.0.0.1 among n equal weights
sub ip_hash_index {
    my ($n, @bytes) = @_;
    my $h = 89;
    $h = ($h * 113 + $_) % 6271 for @bytes;
    return $h % $n;
}
my $IPI = ip_hash_index(3, 127, 0, 0);
# the group for the refused-peer test, the dead peer where 127.0.0.1 maps
my @ipd = ($U1, $U2);
splice @ipd, $IPI, 0, "$DEAD max_fails=0";
my $IPD = join ' ', map { "server $_;" } @ipd;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 256; }
http {
    access_log off;
    upstream lc   { least_conn; server $U1; server $U2; }
    upstream h    { hash \$arg_k; server $U1; server $U2; server $U3; }
    upstream hdn  { hash \$arg_k; server $U1; server $U2; server $U3 down; }
    upstream hc   { hash \$arg_k consistent; server $U1; server $U2; server $U3; }
    upstream hc2  { hash \$arg_k consistent; server $U1; server $U2; }
    upstream ip   { ip_hash; server $U1; server $U2; server $U3; }
    upstream rnd  { random; server $U1; server $U2 weight=3; }
    upstream rnd2 { random two; server $U1; server $U2; server $U3; }
    upstream rtwo { random two least_conn; server $U1; server $U2; }
    upstream lcd  { least_conn; server $DEAD max_fails=0; server $U1; server $U2; }
    upstream hd   { hash \$arg_k; server $U1; server $DEAD max_fails=0; server $U2; }
    upstream hcd  { hash \$arg_k consistent; server $U1; server $U2; server $DEAD max_fails=0; }
    upstream ipd  { ip_hash; $IPD }
    upstream rd   { random; server $DEAD max_fails=0; server $U1; server $U2; }
    upstream r2d  { random two; server $U1; server $DEAD max_fails=0; server $U2; }
    upstream lcb  { least_conn; server $DEAD; server $U3 backup; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name bal.test;
        add_header X-Up \$upstream_addr;
        location ~ ^/([a-z0-9]+)/ { proxy_pass http://\$1; }
    }
}
EOF
$t->run;

my $c;
sub get {
    my ($path) = @_;
    for (1 .. 2) {
        $c ||= $t->raw($t->port(0)) or return undef;
        if ($c->send("GET $path HTTP/1.1\r\nHost: bal.test\r\n\r\n")) {
            my $r = $c->read_response(timeout => 10);
            return $r if $r;
        }
        $c = undef;
    }
    return undef;
}

# the peer that answered (the last of $upstream_addr), or a reason
sub who {
    my ($r) = @_;
    return 'no response' unless $r;
    return "status $r->{status}" unless $r->{status} == 200;
    my @a = split /, /, $r->{headers}{'x-up'} // '';
    return $a[-1] // 'no X-Up';
}

sub count {
    my %n;
    $n{$_}++ for @_;
    return \%n;
}

# --- least_conn ---------------------------------------------------------------

{
    my @r = map { who(get('/lc/echo')) } 1 .. 4;
    my $n = count(@r);
    is_deeply [ sort values %$n ], [ 2, 2 ],
        'least_conn: idle peers take turns (ties by round robin)'
        or diag "@r";

    my $slow = $t->raw($t->port(0));
    $slow->send("GET /lc/sleep/2500 HTTP/1.1\r\nHost: bal.test\r\n\r\n");
    Test::Ringx::wait_for(sub {
        grep { $_->{uri} =~ m{/sleep/} } map { $_->requests } @up[0, 1]
    });
    my ($busy) = map { $_->addr }
                 grep { grep { $_->{uri} =~ m{/sleep/} } $_->requests } @up[0, 1];
    ok $busy, 'the slow request reached a peer';
    my $idle = $busy && $busy eq $U1 ? $U2 : $U1;
    @r = map { who(get('/lc/echo')) } 1 .. 6;
    is_deeply \@r, [ ($idle) x 6 ],
        'least_conn: while one peer holds a slow request, the idle one serves';
    my $sr = $slow->read_response(timeout => 10);
    is who($sr), $busy, 'the slow request answered by the busy peer';
}

# --- random two: the less busy of the two ---------------------------------------

{
    $_->reset for @up;
    my $slow = $t->raw($t->port(0));
    $slow->send("GET /rtwo/sleep/2500 HTTP/1.1\r\nHost: bal.test\r\n\r\n");
    ok Test::Ringx::wait_for(sub {
        grep { $_->{uri} =~ m{/sleep/} } map { $_->requests } @up[0, 1]
    }), 'random two: the slow request reached a peer';
    my ($busy) = map { $_->addr }
                 grep { grep { $_->{uri} =~ m{/sleep/} } $_->requests } @up[0, 1];
    my $idle = $busy && $busy eq $U1 ? $U2 : $U1;
    my @r = map { who(get('/rtwo/echo')) } 1 .. 10;
    is_deeply \@r, [ ($idle) x 10 ],
        'random two least_conn: of two peers, the one without the slow request';
    is who($slow->read_response(timeout => 10)), $busy, 'the slow one answered';
}

# --- hash ------------------------------------------------------------------------

my @keys = map { "key$_" } 1 .. 30;
my %h;
{
    for my $k (@keys) {
        $h{$k} = who(get("/h/echo?k=$k"));
    }
    my @again = map { who(get("/h/echo?k=$_")) } @keys;
    is_deeply \@again, [ map { $h{$_} } @keys ], 'hash: a key goes to the same peer again';
    my $n = count(values %h);
    ok !grep({ !/^127\.0\.0\.1:\d+$/ } keys %$n), 'hash: every key served';
    cmp_ok scalar(keys %$n), '>=', 2, 'hash: keys spread over the peers'
        or diag explain $n;
  SKIP: {
        skip 'Compress::Zlib missing', 1 unless $HAVE_ZLIB;
        my @servers = ($U1, $U2, $U3);
        my @want = map {
            my $crc = Compress::Zlib::crc32($_);
            $servers[ (($crc >> 16) & 0x7fff) % 3 ];
        } @keys;
        is_deeply [ map { $h{$_} } @keys ], \@want,
            'hash: the peer nginx\'s formula gives (crc32 >> 16 & 0x7fff)';
    }

    # a down server keeps its place: the other keys stay
    my @moved = grep { $h{$_} ne $U3 && who(get("/hdn/echo?k=$_")) ne $h{$_} } @keys;
    is "@moved", '', 'hash: marking a server down moves none of the other keys';
    my @off = grep { $h{$_} eq $U3 } @keys;
    my @bad = grep { my $w = who(get("/hdn/echo?k=$_")); $w ne $U1 && $w ne $U2 } @off;
    is "@bad", '', 'hash: the down server\'s keys go to the others';
}

# --- hash consistent ---------------------------------------------------------------

{
    my @ck = map { "/item/$_" } 1 .. 90;
    my %one = map { $_ => who(get("/hc/echo?k=$_")) } @ck;
    my %two = map { $_ => who(get("/hc2/echo?k=$_")) } @ck;
    my $n = count(values %one);
    is scalar(keys %$n), 3, 'consistent: keys spread over the three peers'
        or diag explain $n;
    my @again = grep { who(get("/hc/echo?k=$_")) ne $one{$_} } @ck[0 .. 19];
    is "@again", '', 'consistent: the same key, the same peer';
    my @moved = grep { $one{$_} ne $U3 && $two{$_} ne $one{$_} } @ck;
    is "@moved", '', 'consistent: without the third server, no key of the others moves';
    my $held = grep { $one{$_} eq $U3 } @ck;
    ok $held >= 9 && $held <= 60,
        "consistent: the removed server held a share of the keys ($held of 90)";
    my @lost = grep { $one{$_} eq $U3 && $two{$_} ne $U1 && $two{$_} ne $U2 } @ck;
    is "@lost", '', 'consistent: its keys go to the others';
  SKIP: {
        skip 'Compress::Zlib missing', 1 unless $HAVE_ZLIB;
        # the ketama ring as nginx builds it from the names as written
        my @ring;
        for my $s ($U1, $U2, $U3) {
            my ($host, $port) = $s =~ /^(.*):(\d+)$/;
            my $base = Compress::Zlib::crc32($port,
                         Compress::Zlib::crc32("\0", Compress::Zlib::crc32($host)));
            my $prev = 0;
            for (1 .. 160) {
                $prev = Compress::Zlib::crc32(pack('V', $prev), $base);
                push @ring, [ $prev, $s ];
            }
        }
        @ring = sort { $a->[0] <=> $b->[0] } @ring;
        my @want = map {
            my $h = Compress::Zlib::crc32($_);
            my ($p) = grep { $_->[0] >= $h } @ring;
            ($p // $ring[0])->[1];
        } @ck;
        is_deeply [ map { $one{$_} } @ck ], \@want,
            'consistent: the peer of nginx\'s ketama ring';
    }
}

# --- ip_hash ----------------------------------------------------------------------

{
    my @r = map { who(get('/ip/echo')) } 1 .. 8;
    is_deeply \@r, [ ($r[0]) x 8 ], 'ip_hash: 127.0.0.1 always goes to one peer';
    is $r[0], ($U1, $U2, $U3)[$IPI],
        'ip_hash: the peer of nginx\'s function of 127.0.0';
}

# --- random -----------------------------------------------------------------------

{
    my @r = map { who(get('/rnd/echo')) } 1 .. 400;
    my $n = count(@r);
    my ($a, $b) = ($n->{$U1} // 0, $n->{$U2} // 0);
    is $a + $b, 400, 'random: every request served';
    ok $b >= 240 && $b <= 360 && $a >= 40,
        "random: weight=3 gets about three quarters ($a : $b)";

    @r = map { who(get('/rnd2/echo')) } 1 .. 300;
    $n = count(@r);
    ok !grep({ ($n->{$_} // 0) < 30 } $U1, $U2, $U3),
        'random two: sequential requests spread over all three peers'
        or diag explain $n;
}

# --- a refused peer is skipped ---------------------------------------------------------

for my $g (qw(lcd hd hcd ipd rd r2d)) {
    my (@r, $tried_dead, @bad);
    for my $i (1 .. 60) {
        my $r = get("/$g/echo?k=k$i");
        my $w = who($r);
        push @bad, $w if $w ne $U1 && $w ne $U2;
        $tried_dead++ if $r && ($r->{headers}{'x-up'} // '') =~ /^\Q$DEAD\E, /;
    }
    is "@bad", '', "$g: every request served by a live peer";
    ok $tried_dead, "$g: the refused peer was tried and skipped"
        . ($tried_dead ? " ($tried_dead times)" : '');
}
ok $t->log_contains(qr/\[error\] .*connect\(\) failed \(111: Connection refused\) while connecting to upstream, .*upstream: "http:\/\/\Q$DEAD\E\/ipd\/echo\?k=k\d+"/),
    'nginx\'s connect() failed line for the refused peer';
is who(get('/lcb/echo')), $U3, 'least_conn: the backup serves when the primary is out';

$t->stop;

# --- configuration errors -----------------------------------------------------------

my @conf = (
    [ "hash \$uri;\n    server 127.0.0.1:1;\n    server 127.0.0.1:2 backup;",
      qr/\[emerg\] balancing method does not support parameter "backup" in \S+:6/,
      'hash refuses backup' ],
    [ "hash \$uri consistent;\n    server 127.0.0.1:1 backup;",
      qr/\[emerg\] balancing method does not support parameter "backup" in \S+:5/,
      'hash consistent refuses backup' ],
    [ "ip_hash;\n    server 127.0.0.1:1;\n    server 127.0.0.1:2 backup;",
      qr/\[emerg\] balancing method does not support parameter "backup" in \S+:6/,
      'ip_hash refuses backup' ],
    [ "random two;\n    server 127.0.0.1:1;\n    server 127.0.0.1:2 backup;",
      qr/\[emerg\] balancing method does not support parameter "backup" in \S+:6/,
      'random refuses backup' ],
    [ "server 127.0.0.1:2 backup;\n    ip_hash;\n    server 127.0.0.1:1;",
      qr/\[emerg\] balancing method does not support parameter "backup" in \S+:5/,
      'a backup server written before ip_hash is refused too' ],
    [ "hash \$uri cons;\n    server 127.0.0.1:1;",
      qr/\[emerg\] invalid parameter "cons" in \S+:4/, 'hash: a bad parameter' ],
    [ "random two most_conn;\n    server 127.0.0.1:1;",
      qr/\[emerg\] invalid parameter "most_conn"/, 'random: a bad method' ],
    [ "random one;\n    server 127.0.0.1:1;",
      qr/\[emerg\] invalid parameter "one"/, 'random: a bad parameter' ],
    [ "ip_hash on;\n    server 127.0.0.1:1;",
      qr/\[emerg\] invalid number of arguments in "ip_hash" directive/,
      'ip_hash takes no argument' ],
    [ "least_conn 2;\n    server 127.0.0.1:1;",
      qr/\[emerg\] invalid number of arguments in "least_conn" directive/,
      'least_conn takes no argument' ],
    [ "hash;\n    server 127.0.0.1:1;",
      qr/\[emerg\] invalid number of arguments in "hash" directive/,
      'hash needs a key' ],
);
for my $case (@conf) {
    my ($body, $re, $name) = @$case;
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http {
  upstream g {
    $body
  }
  server { listen 127.0.0.1:%%PORT_0%%; location / { proxy_pass http://g; } }
}
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    isnt $code, 0, "-t fails: $name";
    like $err, $re, "-t error: $name";
}

{
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http {
  upstream a { least_conn; server 127.0.0.1:1; server 127.0.0.1:2 backup; }
  upstream b {
    random;
    hash \$uri consistent;
    server 127.0.0.1:1 weight=3 max_fails=2 fail_timeout=5s max_conns=10;
    server 127.0.0.1:2 down;
  }
  upstream c { ip_hash; server 127.0.0.1:1 weight=2; server 127.0.0.1:2 down; }
  server { listen 127.0.0.1:%%PORT_0%%; location / { proxy_pass http://a; } }
}
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    is $code, 0, '-t passes: least_conn with backup, weight/down/max_conns with hash and ip_hash';
    like $err, qr/\[warn\] load balancing method redefined in \S+:6/,
        'a second method in a block: nginx\'s warning';
}

{
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http {
  least_conn;
  server { listen 127.0.0.1:%%PORT_0%%; }
}
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    like $err, qr/\[emerg\] "least_conn" directive is not allowed here/,
        'least_conn outside upstream is refused';
}

{
    my $u = Test::Ringx->new;
    my ($code, $out, $err) = $u->ringx({ prefix => 0 }, '-V');
    unlike $err, qr/--without-http_upstream_(?:hash|ip_hash|least_conn|random)_module/,
        '-V: the balancers are not listed as missing';
}

done_testing;
