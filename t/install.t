#!/usr/bin/perl

# make install into a DESTDIR (issue #24): the binary, the conf with the
# configured pid path, the man page on man's path, a systemd unit whose
# paths are the configured ones (ExecStartPre runs -t -q, ExecReload
# -s reload, no SystemCallFilter that would deny io_uring), and a
# logrotate file whose postrotate sends USR1 to the pid file's master.

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
    skip 'systemd-analyze not installed', 1 unless `command -v systemd-analyze`;
    my $v = `systemd-analyze verify --root=$d ringx.service 2>&1`;
    unlike($v, qr/SystemCallFilter|Unknown key|Invalid/i, 'systemd-analyze verify: no unknown or invalid setting')
        or diag $v;
}
done_testing;
