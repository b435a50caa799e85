#!/usr/bin/perl

# The command line, as nginx's: -v -V -h -? -t -q -s -p -c -e -g, the
# wording of invalid options, and -s without a running master.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $GOOD = <<'EOF';
daemon off;
master_process on;
events { worker_connections 64; }
http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { }
    }
}
EOF

my $t = Test::Ringx->new;
$t->write_config($GOOD);
my $prefix = $t->prefix;
my $conf = $t->conf_file;
my ($rc, $out, $err);

###########################################################################
# -v, -V

($rc, $out, $err) = $t->ringx({ prefix => 0 }, '-v');
is($rc, 0, '-v: exit 0');
my $ver = qr{ringx/\d+\.\d+\.\d+[^\s)]*};
like($err, qr{\Aringx version: $ver\nnginx version: nginx/1\.22\.1 \(compatible; $ver\)\n\z},
     '-v: ringx\'s version line, then the nginx release it follows');
is($out, '', '-v: nothing on stdout');

# What certbot's nginx plugin (configurator.py, get_version()) does with
# -V: the first "nginx version: NAME/VERSION" match must be nginx at
# 0.8.48 or later, and it wants " --with-http_ssl_module" and "TLS SNI
# support enabled"
sub certbot_version {
    my ($text) = @_;
    my @m = $text =~ m{nginx version: ([^/]+)/([0-9.]*)}ig or return 'no version';
    return "product $m[0]" if $m[0] ne 'nginx';
    my @v = split /\./, $m[1];
    return 'no version number' if !@v || grep { $_ !~ /^\d+$/ } @v;
    return 'too old' if sprintf('%05d%05d%05d', @v[0 .. 2]) lt '000000000800048';
    return 'no ssl module' if $text !~ / --with-http_ssl_module/;
    return 'no SNI' if $text !~ /TLS SNI support enabled/i;
    return "ok $m[1]";
}

($rc, $out, $err) = $t->ringx({ prefix => 0 }, '-V');
is($rc, 0, '-V: exit 0');
my @v = split /\n/, $err;
like($v[0] // '', qr{^ringx version: ringx/\d+\.\d+\.\d+\S*$}, '-V: version first');
like($v[1] // '', qr{^nginx version: nginx/1\.22\.1 \(compatible; ringx/},
     '-V: then the nginx release it follows');
is(certbot_version($err), 'ok 1.22.1', '-V: what certbot\'s nginx plugin reads');
sub at_line { my ($re) = @_; for my $i (0 .. $#v) { return $i if $v[$i] =~ $re } return -1 }
my $by   = at_line(qr/^built by \S+ \d+\.\d+/);
my $ssl  = at_line(qr/^built with OpenSSL \d+\.\d+\.\d+/);
my $sni  = at_line(qr/^TLS SNI support enabled$/);
my $args = at_line(qr/^configure arguments:/);
ok($by > 0, '-V: "built by <compiler> <version>"') or diag($err);
ok($ssl > 0, '-V: "built with OpenSSL x.y.z"');
# "TLS SNI support enabled" is printed by a build that terminates TLS
# (the ssl module), right after the TLS library's line, as nginx does
my $with_ssl = $err =~ / --with-http_ssl_module\b/;
if ($with_ssl) {
    is($sni, $ssl + 1, '-V: "TLS SNI support enabled" after "built with"');
} else {
    is($sni, -1, '-V: no "TLS SNI support enabled" without the ssl module');
}
ok($args > 0, '-V: "configure arguments:"');
ok($by < $ssl && $ssl < $args, '-V: lines in nginx order');
my $cargs = $v[$args] // '';
like($cargs, qr/ --with-http_stub_status_module\b/,
     '-V: optional modules compiled in are listed as --with-');
like($cargs, qr/ --without-http_grpc_module\b/,
     '-V: standard nginx modules ringx lacks are listed as --without-');
unlike($cargs, qr/--with(?:out)?-http_(?:rewrite|proxy|fastcgi|gzip)_module/,
       '-V: standard modules that are there are not listed');
like($cargs, qr/ --with-http_auth_request_module\b/,
     '-V: --with-http_auth_request_module (ringx has auth_request)');

###########################################################################
# -h, -?

for my $h ('-h', '-?') {
    ($rc, $out, $err) = $t->ringx({ prefix => 0 }, $h);
    is($rc, 0, "$h: exit 0");
    my $usage = $err . $out;
    like($usage, qr/^Usage: ringx /m, "$h: usage line");
    for my $flag (qw(-? -h -v -V -t -T -q -s -p -e -c -g)) {
        like($usage, qr/(?:^|[\s,])\Q$flag\E(?=[\s,:])/m, "$h: explains $flag");
    }
}

###########################################################################
# invalid options (nginx's wording), exit 1

for my $case (
    [ ['-x'],      'invalid option: "x"' ],
    [ ['foo'],     'invalid option: "foo"' ],
    [ ['-s', 'foo'], 'invalid option: "-s foo"' ],
    [ ['-s'],      'option "-s" requires parameter' ],
    [ ['-p'],      'option "-p" requires directory name' ],
    [ ['-c'],      'option "-c" requires file name' ],
    [ ['-e'],      'option "-e" requires file name' ],
    [ ['-g'],      'option "-g" requires parameter' ],
) {
    my ($args, $msg) = @$case;
    ($rc, $out, $err) = $t->ringx({ prefix => 0 }, @$args);
    is($rc, 1, "@$args: exit 1");
    like($err, qr/^ringx: \Q$msg\E$/m, "@$args: $msg");
}

###########################################################################
# -s without a running master

($rc, $out, $err) = $t->ringx('-s', 'reload');
is($rc, 1, '-s reload without pid file: exit 1');
like($err, qr/^ringx: \[error\] open\(\) "\Q$prefix\E\/logs\/ringx\.pid" failed \(2: No such file or directory\)$/m,
     '-s reload without pid file: open() failed on the default pid file');

{
    # the pid file is the one the config names
    my $u = Test::Ringx->new;
    $u->write_config("pid logs/other.pid;\n$GOOD");
    my $p = $u->prefix;
    ($rc, $out, $err) = $u->ringx('-s', 'stop');
    is($rc, 1, '-s stop, pid directive, no file: exit 1');
    like($err, qr/^ringx: \[error\] open\(\) "\Q$p\E\/logs\/other\.pid" failed \(2: No such file or directory\)$/m,
         '-s reads the pid file named by the pid directive');
}

{
    # a pid that no process has
    my $stale = unused_pid();
    $t->write_file('logs/ringx.pid', "$stale\n");
    ($rc, $out, $err) = $t->ringx('-s', 'reload');
    is($rc, 1, '-s reload, stale pid: exit 1');
    like($err, qr/^ringx: \[alert\] kill\($stale, 1\) failed \(3: No such process\)$/m,
         '-s reload, stale pid: kill() alert with the signal number');
    ($rc, $out, $err) = $t->ringx('-s', 'quit');
    like($err, qr/\[alert\] kill\($stale, 3\) failed \(3: No such process\)/,
         '-s quit, stale pid: SIGQUIT is 3');
    unlink "$prefix/logs/ringx.pid";
}

###########################################################################
# -p, -c

($rc, $out, $err) = $t->ringx({ prefix => 0 }, '-p', $prefix, '-t');
is($rc, 0, '-p PREFIX without a trailing slash: exit 0') or diag($err);
like($err, qr/^ringx: the configuration file \Q$prefix\E\/conf\/ringx\.conf syntax is ok$/m,
     '-p PREFIX: default config conf/ringx.conf under the prefix');

$t->write_file('conf/other.conf', $GOOD);
($rc, $out, $err) = $t->ringx('-c', 'conf/other.conf', '-t');
is($rc, 0, '-c relative: exit 0') or diag($err);
like($err, qr/^ringx: configuration file \Q$prefix\E\/conf\/other\.conf test is successful$/m,
     '-c relative to the prefix');

($rc, $out, $err) = $t->ringx({ prefix => 0 }, '-c', 'conf/other.conf',
                              '-p', "$prefix/", '-t');
is($rc, 0, '-c relative before -p: exit 0') or diag($err);
like($err, qr/^ringx: configuration file \Q$prefix\E\/conf\/other\.conf test is successful$/m,
     '-c relative before -p: still relative to that prefix');

($rc, $out, $err) = $t->ringx({ prefix => 0 }, '-p', "$prefix/", '-c',
                              "$prefix/conf/other.conf", '-t');
is($rc, 0, '-c absolute: exit 0');
like($err, qr/^ringx: configuration file \Q$prefix\E\/conf\/other\.conf test is successful$/m,
     '-c absolute');

###########################################################################
# -e

{
    my $u = Test::Ringx->new;
    $u->write_config("daemon off;\nevents { worker_connections 64; }\nsendfille on;\n");
    my $p = $u->prefix;
    my $c = $u->conf_file;

    ($rc, $out, $err) = $u->ringx('-e', 'stderr', '-t');
    is($rc, 1, '-e stderr, bad config: exit 1');
    # the log target is stderr itself: full log format, as nginx
    like($err, qr{^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[emerg\] \d+#\d+: unknown directive "sendfille" in \Q$c\E:3$}m,
         '-e stderr: the error on stderr, in log format');
    ok(!-e "$p/logs/error.log", '-e stderr: logs/error.log not created');

    ($rc, $out, $err) = $u->ringx('-e', 'logs/startup.log', '-t');
    is($rc, 1, '-e FILE, bad config: exit 1');
    my $log = $u->read_file('logs/startup.log') // '';
    like($log, qr{^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[emerg\] \d+#\d+: unknown directive "sendfille" in \Q$c\E:3$}m,
         '-e FILE (relative to the prefix): the error in the file, log format');
    ok(!-e "$p/logs/error.log", '-e FILE: default error log not used');
}

done_testing;

###########################################################################

# A pid that no process has: near pid_max, where pids are handed out last.
sub unused_pid {
    my $max = 32768;
    if (open(my $fh, '<', '/proc/sys/kernel/pid_max')) {
        $max = <$fh> + 0;
        close $fh;
    }
    for (my $p = $max - 1; $p > 300; $p--) {
        return $p unless -e "/proc/$p";
    }
    die "no unused pid\n";
}
