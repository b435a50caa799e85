#!/usr/bin/perl

# make install into a DESTDIR (issue #24): the binary, the conf with the
# configured pid path, the man page on man's path, a systemd unit whose
# paths are the configured ones (ExecStartPre runs -t -q, ExecReload
# -s reload, no SystemCallFilter that would deny io_uring), and a
# logrotate file whose postrotate sends USR1 to the pid file's master.
# The Debian layout (./configure --layout=debian): /usr/sbin/ringx,
# /etc/ringx/ringx.conf including conf.d/*.conf and sites-enabled/* (the
# default site enabled by a symlink), /var/log/ringx, /run/ringx.pid, the
# unit and logrotate file pointing there, and a conf that passes -t.

use strict;
use warnings;

use FindBin;
use Test::More;
use File::Temp qw(tempdir);

my $root = "$FindBin::Bin/..";
plan skip_all => 'no objs/Makefile.conf (run ./configure)' unless -f "$root/objs/Makefile.conf";
my %mk;
open(my $fh, '<', "$root/objs/Makefile.conf") or die;
while (<$fh>) { $mk{$1} = $2 if /^(\w+) = (.*)$/ }
close $fh;
my $expand = sub { my $v = shift; $v =~ s/\$\((\w+)\)/$mk{$1}/g; $v };
my ($sbin, $conf, $pid, $elog) = map { $expand->($mk{$_}) }
    qw(SBIN_PATH CONF_PATH PID_PATH ERROR_LOG_PATH);

my $d = tempdir('/tmp/ringx-install-XXXXXX', CLEANUP => 1);
my $out = `cd $root && make -s install DESTDIR=$d 2>&1`;
is($?, 0, 'make install DESTDIR=... succeeds') or diag $out;

ok(-x "$d$sbin", "binary at $sbin");
ok(-f "$d$conf", "conf at $conf");
my $c = do { local $/; open my $f, '<', "$d$conf" or die; <$f> };
like($c, qr/^pid\s+\Q$pid\E;/m, 'the installed conf names the configured pid path');
my $mandir = $mk{PREFIX} eq '/usr' ? '/usr/share/man' : '/usr/local/share/man';
ok(-f "$d$mandir/man8/ringx.8", "man page on man's path ($mandir)");

my $unit = "$d/lib/systemd/system/ringx.service";
ok(-f $unit, 'systemd unit installed');
my $u = do { local $/; open my $f, '<', $unit or die; <$f> };
like($u, qr/^ExecStartPre=\Q$sbin\E -t -q\b/m, 'ExecStartPre: ringx -t -q');
like($u, qr/^ExecReload=\Q$sbin\E -s reload\b/m, 'ExecReload: ringx -s reload');
like($u, qr/^PIDFile=\Q$pid\E$/m, 'PIDFile: the configured pid path');
unlike($u, qr/^SystemCallFilter=/m, 'no SystemCallFilter (io_uring_* stays allowed)');
unlike($u, qr/\@[A-Z]+\@/, 'every placeholder replaced');
for my $p ($u =~ m{^Exec\w+=-?(/\S+)}mg) {
    ok(-e "$d$p", "unit path $p exists in the DESTDIR");
}
my $pid_dir = $pid =~ s{/[^/]+$}{}r;
ok(-d "$d$pid_dir", "the pid file's directory $pid_dir exists");

my $lr = "$d/etc/logrotate.d/ringx";
ok(-f $lr, 'logrotate file installed');
my $l = do { local $/; open my $f, '<', $lr or die; <$f> };
my $logdir = $elog =~ s{/[^/]+$}{}r;
like($l, qr/^\Q$logdir\E\/\*\.log \{/m, 'it rotates the configured log directory');
like($l, qr/kill -USR1 "\$\(cat \Q$pid\E\)"/, 'postrotate: USR1 (reopen) to the master');

SKIP: {
    skip 'systemd-analyze not installed', 1
        unless `sh -c 'command -v systemd-analyze'`;
    my $v = `systemd-analyze verify --root=$d ringx.service 2>&1`;
    unlike($v, qr/SystemCallFilter|Unknown key|Invalid/i, 'systemd-analyze verify: no unknown or invalid setting')
        or diag $v;
}

# --- the Debian layout ------------------------------------------------------
# configure's defaults for --layout=debian, read from auto/options (running
# ./configure would rewrite this tree's objs/), given to make install
my $vars = `cd $root && sh -c '. auto/init; set -- --layout=debian; . auto/options; echo "\$RX_PREFIX|\$RX_SBIN_PATH|\$RX_CONF_PATH|\$RX_ERROR_LOG_PATH|\$RX_HTTP_LOG_PATH|\$RX_PID_PATH|\$RX_USER"'`;
chomp $vars;
my ($dprefix, $dsbin, $dconf, $delog, $dalog, $dpid, $duser) = split /\|/, $vars;
is_deeply([$dprefix, $dsbin, $dconf, $delog, $dalog, $dpid, $duser],
          ['/usr/share/ringx', '/usr/sbin/ringx', '/etc/ringx/ringx.conf',
           '/var/log/ringx/error.log', '/var/log/ringx/access.log',
           '/run/ringx.pid', 'www-data'], '--layout=debian: the Debian paths');
my $dd = tempdir('/tmp/ringx-install-XXXXXX', CLEANUP => 1);
$out = `cd $root && make -s install DESTDIR=$dd LAYOUT=debian PREFIX=$dprefix SBIN_PATH=$dsbin CONF_PATH=$dconf ERROR_LOG_PATH=$delog HTTP_LOG_PATH=$dalog PID_PATH=$dpid WORKER_USER=$duser 2>&1`;
is($?, 0, 'Debian layout: make install succeeds') or diag $out;
ok(-x "$dd/usr/sbin/ringx", 'binary at /usr/sbin/ringx');
my $mc = do { local $/; open my $f, '<', "$dd/etc/ringx/ringx.conf" or die; <$f> } // '';
like($mc, qr{^\s*include\s+/etc/ringx/sites-enabled/\*;}m, 'ringx.conf includes sites-enabled/*');
like($mc, qr{^\s*include\s+/etc/ringx/conf\.d/\*\.conf;}m, '... and conf.d/*.conf');
like($mc, qr{^pid\s+/run/ringx\.pid;}m, '... pid /run/ringx.pid');
like($mc, qr{^error_log\s+/var/log/ringx/error\.log;}m, '... error log in /var/log/ringx');
like($mc, qr{^\s*access_log\s+/var/log/ringx/access\.log\b}m, '... access log in /var/log/ringx');
like($mc, qr{^user\s+www-data;}m, '... user www-data');
ok(-f "$dd/etc/ringx/sites-available/default", 'sites-available/default');
is(readlink("$dd/etc/ringx/sites-enabled/default"), '../sites-available/default',
   'sites-enabled/default: a symlink to it');
ok(-d "$dd/etc/ringx/conf.d", 'conf.d/');
ok(-f "$dd/etc/ringx/mime.types", 'mime.types next to ringx.conf');
ok(-d "$dd/var/log/ringx", '/var/log/ringx');
ok(-f "$dd/usr/share/man/man8/ringx.8", 'man page in /usr/share/man');
my $du = do { local $/; open my $f, '<', "$dd/lib/systemd/system/ringx.service" or die; <$f> } // '';
like($du, qr{^ExecStart=/usr/sbin/ringx -c /etc/ringx/ringx.conf$}m, 'unit: ExecStart');
like($du, qr{^PIDFile=/run/ringx\.pid$}m, 'unit: PIDFile=/run/ringx.pid');
my $dl = do { local $/; open my $f, '<', "$dd/etc/logrotate.d/ringx" or die; <$f> } // '';
like($dl, qr{^/var/log/ringx/\*\.log \{}m, 'logrotate: /var/log/ringx/*.log');
like($dl, qr{kill -USR1 "\$\(cat /run/ringx\.pid\)"}, 'logrotate: USR1 to /run/ringx.pid');
unlike($mc . $du . $dl, qr/\@[A-Z_]+\@/, 'every placeholder replaced');
# the installed tree passes -t once its absolute paths point into DESTDIR
# (a second make install keeps what is there)
$out = `cd $root && make -s install DESTDIR=$dd LAYOUT=debian PREFIX=$dprefix SBIN_PATH=$dsbin CONF_PATH=$dconf ERROR_LOG_PATH=$delog HTTP_LOG_PATH=$dalog PID_PATH=$dpid WORKER_USER=$duser 2>&1`;
like($out, qr{kept \Q$dd\E/etc/ringx/ringx\.conf}, 'a second install keeps ringx.conf');
for my $f ("$dd/etc/ringx/ringx.conf", "$dd/etc/ringx/sites-available/default") {
    my $c = do { local $/; open my $h, '<', $f or die; <$h> };
    $c =~ s{(?<![\w/])(/etc/ringx|/var/log/ringx|/run/ringx\.pid|/usr/share/ringx)}{$dd$1}g;
    $c =~ s/^user\s+\S+;//m unless getpwnam('www-data');
    open my $h, '>', $f or die; print $h $c; close $h;
}
my $tout = `$dd/usr/sbin/ringx -T -p $dd/usr/share/ringx/ -c $dd/etc/ringx/ringx.conf 2>&1`;
is($?, 0, 'the installed Debian configuration passes -t') or diag $tout;
like($tout, qr{^# configuration file \Q$dd\E/etc/ringx/sites-enabled/default:}m,
     '... with the enabled site included');
done_testing;
