#!/usr/bin/perl
# worker_balance.t: with worker_processes 2 and a plain listen, every worker
# takes its share of the connections (issue #25 item 1: one worker used to
# take them all, its multishot accept at the head of the shared socket's
# wait queue). A TCP address gets one SO_REUSEPORT socket per worker by
# default: connection per request, keepalive connections and a burst of
# connections opened at once all spread. worker_reuseport off and unix
# sockets keep one shared socket, whose one-shot accepts take turns. A
# second server on the address is still refused. Reloads under load, also
# to more and to fewer workers, lose no connection.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use IO::Socket::IP;
use IO::Select;
use POSIX qw(_exit);
use Time::HiRes qw(sleep time);

my $ss = (grep { -x } '/usr/bin/ss', '/bin/ss', '/usr/sbin/ss')[0];

sub pid_of { my ($raw) = @_; ($raw // '') =~ /\r\n\r\n(\d+)\z/ ? $1 : 'none' }

# every worker in @w has at least $min of the counts in %seen
sub fair {
    my ($name, $seen, $w, $min) = @_;
    my @short = grep { ($seen->{$_} // 0) < $min } @$w;
    ok(!@short && !$seen->{none}, $name)
        or diag(explain($seen), "workers @$w, each needs $min");
}

sub listeners {
    my ($port) = @_;
    return scalar grep { /^LISTEN/ } split /\n/, `$ss -Hltn 'sport = :$port' 2>/dev/null`;
}

# $n connections opened before any request is sent, then one request each
sub burst {
    my ($port, $n) = @_;
    my (@c, %seen);
    for (1 .. $n) {
        my $s = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $port,
                                    Timeout => 5);
        if ($s) { push @c, $s } else { $seen{none}++ }
    }
    syswrite($_, "GET / HTTP/1.0\r\nHost: x\r\n\r\n") for @c;
    for my $s (@c) {
        my ($raw, $buf) = ('');
        my $sel = IO::Select->new($s);
        while ($sel->can_read(5) && sysread($s, $buf, 4096)) { $raw .= $buf }
        $seen{pid_of($raw)}++;
    }
    return \%seen;
}

my $EVENTS = "events { worker_connections 1024; }";

###########################################################################
# the default: a plain listen, two workers

{
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { return 200 "\$pid"; }
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name other;
        location / { return 200 "\$pid"; }
    }
}
EOF
    $t->run;
    my @w = $t->wait_workers(2);

    my %seen;
    $seen{pid_of($t->http_get($t->port(0), '/'))}++ for 1 .. 60;
    fair('connection per request: both workers serve', \%seen, \@w, 12);

    %seen = ();
    for (1 .. 40) {
        my $c = $t->raw($t->port(0));
        my %pids;
        for my $i (1 .. 3) {
            $c && $c->send("GET /$i HTTP/1.1\r\nHost: x\r\n\r\n");
            my $r = $c && $c->read_response;
            $pids{$r && $r->{status} == 200 ? $r->{body} : 'none'}++;
        }
        $c->close if $c;
        my @p = keys %pids;
        $seen{@p == 1 ? $p[0] : 'none'}++;
    }
    fair('keepalive connections: both workers serve', \%seen, \@w, 8);

    fair('a burst of 200 connections: both workers serve',
         burst($t->port(0), 200), \@w, 50);

    SKIP: {
        skip 'no ss(8)', 1 unless $ss;
        is(listeners($t->port(0)), 2, 'one listening socket per worker, '
           . 'the address of two servers bound once');
    }

    # a second server on the same address is refused, as without reuseport
    my $conf = $t->read_file('conf/ringx.conf');
    $conf =~ s/^daemon off;/daemon off;\npid logs\/second.pid;/m;
    $t->write_file('conf/second.conf', $conf);
    $t->expect_log(qr/bind\(\) to \S+ failed \(98: Address already in use\)/);
    my ($rc, $out, $err) = $t->ringx({ timeout => 10 }, '-c', 'conf/second.conf');
    isnt($rc, 0, 'a second server on the address does not start');
    like($err, qr/\[emerg\] bind\(\) to 127\.0\.0\.1:\d+ failed \(98: Address already in use\)/,
         'and says the address is in use');
    $seen{pid_of($t->http_get($t->port(0), '/'))}++;
    ok(!$seen{none}, 'the first server still answers');
    $t->stop;
}

###########################################################################
# worker_reuseport off, and a unix socket: one shared socket, turns taken

{
    my $t = Test::Ringx->new;
    my $sock = $t->prefix . '/u.sock';
    $t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 2;
worker_reuseport off;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen unix:$sock;
        location / { return 200 "\$pid"; }
    }
}
EOF
    $t->run;
    my @w = $t->wait_workers(2);
    SKIP: {
        skip 'no ss(8)', 1 unless $ss;
        is(listeners($t->port(0)), 1, 'worker_reuseport off: one shared socket');
    }
    my %seen;
    $seen{pid_of($t->http_get($t->port(0), '/'))}++ for 1 .. 40;
    fair('worker_reuseport off: both workers serve', \%seen, \@w, 10);
    %seen = ();
    for (1 .. 40) {
        my $s = IO::Socket::UNIX->new(Peer => $sock);
        my ($raw, $buf) = ('');
        if ($s) {
            syswrite($s, "GET / HTTP/1.0\r\nHost: x\r\n\r\n");
            my $sel = IO::Select->new($s);
            while ($sel->can_read(5) && sysread($s, $buf, 4096)) { $raw .= $buf }
        }
        $seen{pid_of($raw)}++;
    }
    fair('a unix socket: both workers serve', \%seen, \@w, 10);
    $t->stop;
}

###########################################################################
# -t

{
    my $t = Test::Ringx->new;
    $t->write_config(<<"EOF");
worker_reuseport maybe;
$EVENTS
http { server { listen 127.0.0.1:%%PORT_0%%; } }
EOF
    my ($rc, $out, $err) = $t->ringx('-t');
    like($err, qr/\[emerg\] invalid value "maybe" in "worker_reuseport" directive, it must be "on" or "off" in \S+ringx\.conf:1/,
         '-t: a bad worker_reuseport value, with file:line');
}

###########################################################################
# a listen address a reload removes is closed: no new worker holds it open
# (unserved, the kernel would still complete connections to it)

{
    my $t = Test::Ringx->new;
    my $conf = <<"EOF";
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server { listen 127.0.0.1:%%PORT_0%%; location / { return 200 "\$pid"; } }
    %%SECOND%%
}
EOF
    my $config = sub { (my $c = $conf) =~ s/%%SECOND%%/$_[0]/; $t->write_config($c) };
    $config->('server { listen 127.0.0.1:%%PORT_1%%; location / { return 204; } }');
    $t->run;
    my @old = $t->wait_workers(2);
    like($t->http_get($t->port(1), '/') // '', qr/^HTTP\/1\.1 204/, 'the second address serves');
    $config->('');
    $t->signal('HUP');
    my @w = $t->wait_workers(2, not => [@old]);
    ok(Test::Ringx::wait_for(sub { !grep { Test::Ringx::pid_alive($_) } @old }, 10),
       'the old workers left');
    my $s = IO::Socket::IP->new(PeerHost => '127.0.0.1', PeerPort => $t->port(1),
                                Timeout => 3);
    ok(!$s, 'a connection to the removed address is refused') or diag('connected');
    like($t->http_get($t->port(0), '/') // '', qr/\r\n\r\n\d+\z/, 'the kept address serves');
    $t->stop;
}

###########################################################################
# reloads under load, to more and to fewer workers: no connection refused,
# reset or left unanswered

{
    my $t = Test::Ringx->new;
    my $conf = <<"EOF";
daemon off;
master_process on;
worker_processes %%N%%;
error_log logs/error.log info;
$EVENTS
http {
    access_log off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { return 200 "\$pid"; }
    }
}
EOF
    my $config = sub { (my $c = $conf) =~ s/%%N%%/$_[0]/; $t->write_config($c) };
    $config->(2);
    $t->run;
    my @w = $t->wait_workers(2);
    my $port = $t->port(0);
    my $stop = $t->prefix . '/stop-load';
    my $report = $t->prefix . '/load-report';

    # the load: two clients, each a connection per request, back to back
    my @kids;
    for my $k (1 .. 2) {
        my $pid = fork // die "fork: $!";
        if ($pid == 0) {
            my ($ok, @bad) = (0);
            while (!-e $stop) {
                my $s = IO::Socket::IP->new(PeerHost => '127.0.0.1',
                                            PeerPort => $port, Timeout => 5);
                if (!$s) { push @bad, "connect: $!"; next }
                my ($raw, $buf) = ('');
                if (!syswrite($s, "GET / HTTP/1.0\r\nHost: x\r\n\r\n")) {
                    push @bad, "write: $!";
                    next;
                }
                my $sel = IO::Select->new($s);
                while ($sel->can_read(5)) {
                    my $n = sysread($s, $buf, 4096);
                    if (!defined $n) { push @bad, "read: $!"; last }
                    last if $n == 0;
                    $raw .= $buf;
                }
                if ($raw =~ /^HTTP\/1\.1 200 /) { $ok++ }
                else { push @bad, 'no answer: ' . length($raw) . ' bytes' }
            }
            open(my $fh, '>', "$report.$k") or _exit(1);
            print $fh join("\n", "ok $ok", @bad[0 .. ($#bad < 9 ? $#bad : 9)]),
                  "\nbad " . scalar(@bad) . "\n";
            close $fh;
            _exit(0);
        }
        push @kids, $pid;
    }
    my @steps = split / /, ($ENV{STEPS} // '2 2 3 3 2 1 2 3 1 2');
    my $three_served;
    for my $n (@steps) {
        $config->($n);
        $t->signal('HUP');
        @w = $t->wait_workers($n, not => [@w]);
        sleep 0.3;
        if ($n == 3 && !$three_served) {
            my %seen;
            $seen{pid_of($t->http_get($port, '/'))}++ for 1 .. 45;
            $three_served = 1;
            fair('after a reload to 3 workers, all 3 serve', \%seen, \@w, 5);
        }
    }
    open(my $fh, '>', $stop) or die;
    close $fh;
    waitpid($_, 0) for @kids;
    my ($ok, $bad, @why) = (0, 0);
    for my $k (1 .. 2) {
        my $r = $t->read_file("$report.$k") // "bad 1\nno report\n";
        $ok += $1 if $r =~ /^ok (\d+)/m;
        $bad += $1 if $r =~ /^bad (\d+)/m;
        push @why, grep { !/^(ok|bad) / } split /\n/, $r;
    }
    cmp_ok($ok, '>', 100, "the load ran through the reloads ($ok requests)");
    is($bad, 0, 'reloads under load: no connection refused, reset or unanswered')
        or diag(join "\n", @why);
    $t->stop;
}

done_testing;
