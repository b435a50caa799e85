#!/usr/bin/perl
# t/bench_harness.t: make bench (t/bench/) measures what ../shared/bench/bench.sh
# measures under the same names, and says so. No wrk run here (that is the
# bench's job, not a test's): the generated configs of the scenarios that
# share a name with bench.sh hold its gen_conf's directives (compared with
# bench.sh itself when the workplace's copy is on this machine), the idle
# client reports bytes per connection of the server's whole tree, and the
# summary marks the targets of t/bench/targets pass or short, with the ratio
# against the previous main beside them.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use lib 't/lib';
use Test::Ringx;

my $py = -x '/usr/bin/python3' ? '/usr/bin/python3 -I' : 'python3';
my $tmp = tempdir('/tmp/ringx-test-bench-XXXXXX', CLEANUP => 1);

# the directives of a config, one per line, comments and blank lines dropped,
# blanks squeezed; "##" template comments are gone already
sub directives {
    my ($text) = @_;
    my @out;
    for my $l (split /\n/, $text) {
        $l =~ s/#.*//;
        $l =~ s/^\s+|\s+$//g;
        $l =~ s/\s+/ /g;
        push @out, $l if length $l;
    }
    return \@out;
}

sub slurp { my ($f) = @_; open my $fh, '<', $f or return undef; local $/; return <$fh>; }

sub gen_ours { # gen_ours CONF FLAVOR: t/bench/run's config for a scenario conf
    my ($conf, $flavor) = @_;
    my $out = "$tmp/$conf-$flavor.conf";
    my $wc = $conf eq 'idle' ? 16384 : 4096;
    system("$py t/bench/benchlib.py conf --template t/bench/conf/main.conf"
         . " --snippet t/bench/conf/$conf.conf --flavor $flavor --out $out"
         . " --set PORT=28080 --set PREFIX=/p/ --set SCENARIO=x --set LABEL=x --set FLAVOR=$flavor"
         . " --set CONF=$conf --set RINGX_USE= --set WORKERS=1 --set WORKER_CONNECTIONS=$wc"
         . " --set UPSTREAM_PORT=28082 --set FPM_SOCKET=/p/run/php.sock"
         . " --set TLS_CERT=/c --set TLS_KEY=/k") == 0 or return undef;
    return slurp($out);
}

# ---- the scenarios bench.sh names, with its conf kind
my %kind = (small => 'static', 'small-c1' => 'static', 'small-noka' => 'static',
            mid => 'static', big => 'static', gzip => 'gzip', proxy => 'proxy',
            fastcgi => 'fastcgi', idle10k => 'idle');
my %scen;
for my $l (split /\n/, slurp('t/bench/scenarios')) {
    next if $l =~ /^\s*(#|$)/;
    my @f = map { s/^\s+|\s+$//gr } split /\|/, $l;
    $scen{$f[0]} = { set => $f[1], c => $f[2], conf => $f[3], path => $f[4], wrk => $f[5] };
}
my %want = (small => [50, '/small.txt'], 'small-c1' => [1, '/small.txt'],
            'small-noka' => [50, '/small.txt'], mid => [50, '/mid.bin'], big => [10, '/big.bin'],
            gzip => [50, '/text.txt'], proxy => [50, '/small.txt'], fastcgi => [4, '/hello.php'],
            idle10k => [10000, '/small.txt']);
for my $s (sort keys %want) {
    ok($scen{$s}, "scenario $s exists") or next;
    is("$scen{$s}{c} $scen{$s}{path}", "$want{$s}[0] $want{$s}[1]", "$s: bench.sh's connections and path");
    is($scen{$s}{conf}, $kind{$s}, "$s: conf/$kind{$s}.conf");
    is($scen{$s}{set}, 'default', "$s: in the default set");
}
like($scen{'small-noka'}{wrk}, qr/-H 'Connection: close'/, 'small-noka closes');
like($scen{idle10k}{wrk}, qr/^--idle batched$/, 'idle10k opens in batches as bench.sh');
for my $t (qw(small-c1 small-noka mid idle10k proxy fastcgi h2-1k cache-16k)) {
    is($scen{$t}{set} // '', 'default', "the target scenario $t runs with no arguments");
}

# ---- configs: bench.sh's gen_conf lines are all in ours (bench.sh's own text when present)
my $bench_sh = '/work/shared/bench/bench.sh';
SKIP: {
    skip "no $bench_sh on this machine to compare with", 4 unless -r $bench_sh;
    for my $kind (qw(static proxy fastcgi idle)) {
        # bench.sh's gen_conf, run by itself in bash
        my ($fn) = slurp($bench_sh) =~ /^(gen_conf\(\) \{.*?^EOF\n\}\n)/ms;
        open my $sh, '>', "$tmp/gen.sh" or die;
        print $sh "PORT_BASE=28080\nFCGI_KEEPALIVE=4\n$fn\nmkdir -p $tmp/b-$kind/conf\n"
                . "gen_conf $tmp/b-$kind 28080 $kind\n";
        close $sh;
        system('bash', "$tmp/gen.sh") == 0 or die "gen_conf $kind";
        my $theirs = slurp("$tmp/b-$kind/conf/nginx.conf");
        $theirs =~ s{unix:\Q$tmp/b-$kind\E/run/php\.sock}{unix:/p/run/php.sock};
        my %ours = map { $_ => 1 } @{directives(gen_ours($kind, 'ringx'))};
        my @missing = grep { !$ours{$_} && !/^pid / } @{directives($theirs)};
        is("@missing", '', "conf/$kind.conf has every line of bench.sh's $kind config");
    }
}
my $static = join "\n", @{directives(gen_ours('static', 'nginx'))};
for my $d ('worker_processes 1;', 'worker_connections 4096;', 'access_log off;', 'sendfile on;',
           'tcp_nopush on;', 'keepalive_timeout 75s;', 'keepalive_requests 1000;',
           'error_log logs/error.log warn;') {
    like($static, qr/^\Q$d\E$/m, "static: $d");
}
like(join("\n", @{directives(gen_ours('proxy', 'ringx'))}), qr/^keepalive 32;$/m, 'proxy: keepalive 32');
like(join("\n", @{directives(gen_ours('idle', 'ringx'))}), qr/^worker_connections 16384;$/m,
     'idle: worker_connections 16384');

# ---- the idle client against a real ringx: bytes per connection of the tree
my $t = Test::Ringx->new;
$t->write_file('html/small.txt', "Hello, this is a 30-byte file\n");
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 1024; }
http {
    keepalive_timeout 75s;
    server { listen 127.0.0.1:%%PORT_0%%; root html; }
}
EOF
$t->run;
for my $mode (qw(batched fresh keepalive)) {
    my $out = `$py t/bench/idle_conns.py --mode $mode --count 300 --port ${\ $t->port(0)} --pid ${\ $t->master_pid}`;
    my ($json) = $out =~ /^IDLEJSON (.*)$/m;
    ok($json, "idle_conns.py --mode $mode reports") or diag $out;
    next unless $json;
    like($json, qr/"opened": 300\b/, "$mode: 300 connections held");
    like($json, qr/"failed": 0\b/, "$mode: none failed");
    like($json, qr/"bytes_per_conn": -?[0-9.]+/, "$mode: bytes per connection");
    like($json, qr/"check": \{"status": 200/, "$mode: a request is answered while they are held");
}
$t->stop;

# ---- the summary: targets pass/short, the previous main beside them
my $res = "$tmp/results.jsonl";
open my $fh, '>', $res or die;
print $fh qq({"type":"session","session":"S","labels":["ringx","nginx","base"],"nginx_label":"nginx","base_label":"base"}\n);
my %run = (ringx => [100000, 5.0], nginx => [90000, 9.5], base => [95000, 5.5]);
for my $srv (qw(ringx nginx base)) {
    my ($rps, $us) = @{$run{$srv}};
    print $fh qq({"type":"run","session":"S","scenario":"small","server":"$srv","run":1,"ok":true,)
            . qq("rps":$rps,"srv_us_per_req":$us,"p50_us":300,"p99_us":600,"rss_kb":11000,)
            . qq("err_status":0,"err_sock":0,"foreign_pct":0}\n);
    my $b = { ringx => 400, nginx => 527, base => 380 }->{$srv};
    print $fh qq({"type":"run","kind":"idle","session":"S","scenario":"idle10k","server":"$srv","run":1,)
            . qq("ok":true,"bytes_per_conn":$b,"rss_before_kb":12000,"rss_after_kb":16000,"rss_kb":16000,)
            . qq("opened":10000,"check":{"status":200},"err_status":0,"err_sock":0}\n);
}
close $fh;
my $sum = `$py t/bench/benchlib.py summarize $res --session S`;
like($sum, qr/^\| small\.cpu #25 \| 1\.900 \| >= 1\.8 \| pass \| 1\.100 \|$/m, 'small.cpu: pass, the base ratio beside');
like($sum, qr/^\| idle10k\.mem #25 \| 0\.759 \| <= 0\.75 \| \*\*short\*\* \| 1\.053 \*\*worse\*\* \|$/m,
     'idle10k.mem: short, and worse than the previous main');
like($sum, qr/^\| proxy\.cpu #25 \| – \| >= 1\.4 \| not run \|/m, 'a target not run says so');
like($sum, qr/^summary mode=ratio vs=nginx small=1\.111 idle10k=1\.317 small\.cpu=1\.900 errors=0\/0\/0$/m,
     "bench.sh's summary line against nginx");
like($sum, qr/^summary-base mode=ratio vs=base small=1\.053 idle10k=0\.950 small\.cpu=1\.100 /m,
     'the summary line against the previous main');

done_testing;
