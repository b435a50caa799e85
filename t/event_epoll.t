#!/usr/bin/perl
# event_epoll.t: the epoll backend (event/epoll.c): `use epoll;` and its
# -t report, an unknown method refused with nginx's words, and a worker
# denied io_uring by a seccomp filter (as Docker's default profile denies
# it; t/tools/no_io_uring.c, built here) that serves on epoll all the same
# and says once why and how to allow io_uring. Files are compared whole
# through the read path, the splice path and the sendfile path, and a
# proxied request exercises connect; strace counts the worker's epoll_ctl
# calls (an fd stays registered while its connection lives).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use Test::More;
use Test::Ringx;

# this test chooses the backend of each server itself
delete $ENV{RINGX_EVENTS};

my $CONF = <<'EOF';
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; %%USE%% }
http {
    access_log off;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { root html; sendfile off; }
        location /z/ { root html; sendfile on; sendfile_splice on; }
        location /s/ { root html; sendfile on; }
        location /p/ { proxy_pass http://127.0.0.1:%%PORT_1%%/; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        location / { root html; }
    }
}
EOF

sub config {
    my ($use) = @_;
    (my $c = $CONF) =~ s/%%USE%%/$use/;
    return $c;
}

my %body;
sub files {
    my ($t) = @_;
    for my $size (30, 70000, 3 * 1048576 + 7) {
        my $data = '';
        my $i = 0;
        $data .= pack('N', ($i++ * 2654435761) % 4294967296) while length($data) < $size;
        $body{$size} = substr($data, 0, $size);
        $t->write_file_raw("html/$_/$size.bin", $body{$size}) for qw(z s);
        $t->write_file_raw("html/$size.bin", $body{$size});
    }
}

sub serves_all {
    my ($t, $what) = @_;
    my $P = $t->port(0);
    for my $size (sort { $a <=> $b } keys %body) {
        for my $path ('', 'z/', 's/', 'p/') {
            my $got = `curl -s --max-time 20 http://127.0.0.1:$P/$path$size.bin`;
            is(sha256_hex($got), sha256_hex($body{$size}),
               "$what: /$path$size.bin arrives whole");
        }
    }
    # keepalive: two pipelined requests on one connection
    my $c = $t->raw($P);
    $c->send("GET /30.bin HTTP/1.1\r\nHost: x\r\n\r\n"
             . "GET /z/70000.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    my $r1 = $c->read_response;
    my $r2 = $c->read_response;
    ok($r1 && $r1->{body} eq $body{30} && $r2 && $r2->{body} eq $body{70000},
       "$what: two pipelined requests on one connection");
}

# An fd stays in the epoll set while its connection lives: an operation
# that waits again after nothing waited on the fd costs no epoll_ctl. Four
# proxied 3 MiB responses on one client connection (each waits for the
# client and the upstream many times) take an epoll_ctl for each new
# connection, a few per request, counted by strace on the worker; an
# EPOLL_CTL_ADD each time an operation had to wait took ~18 per request.
sub epoll_ctl_calls {
    my ($t) = @_;
    my ($w) = $t->worker_pids;
    my $out = $t->prefix . '/strace.out';
    SKIP: {
        skip 'no strace here (apt-get install strace)', 2
            if system('strace -V >/dev/null 2>&1') != 0;
        my $pid = fork // die "fork: $!";
        if (!$pid) {
            exec 'strace', '-q', '-e', 'trace=epoll_ctl', '-o', $out, '-p', $w;
            exit 127;
        }
        # strace writes nothing until it attached: a first call tells
        Test::Ringx::wait_for(sub { `curl -s -o /dev/null http://127.0.0.1:${\$t->port(0)}/30.bin`;
                                    -s $out }, 10);
        my $url = "http://127.0.0.1:" . $t->port(0) . "/p/3145735.bin";
        my $got = `curl -s --max-time 60 $url $url $url $url`;
        kill 'INT', $pid;
        waitpid $pid, 0;
        my $calls = () = ($t->read_file($out) // '') =~ /^epoll_ctl\(/mg;
        skip 'strace could not attach to the worker (ptrace refused)', 2
            unless $calls;
        is(length $got, 4 * 3145735, 'epoll_ctl count: four proxied 3 MiB responses');
        cmp_ok($calls, '<', 4 * 4, 'epoll_ctl: a few per request, not one per wait')
            or diag("$calls calls; the first: ",
                    join("\n", grep { defined } (split /\n/, $t->read_file($out))[0 .. 4]));
    }
}

# --- use: the choice and -t ---------------------------------------------------------

{
    my $t = Test::Ringx->new;
    $t->write_config(config('use poll;'));
    my ($rc, undef, $err) = $t->ringx('-t');
    isnt($rc, 0, 'use poll: -t fails');
    like($err, qr/\[emerg\] invalid event type "poll": ringx supports "io_uring" and "epoll" in \S+ringx\.conf:5/,
         'use poll: nginx\'s words, with file:line');

    $t->write_config(config('use epoll;'));
    ($rc, undef, $err) = $t->ringx('-t');
    is($rc, 0, 'use epoll: -t exit 0') or diag($err);
    like($err, qr/the workers will use epoll \("use epoll"\)/, 'use epoll: -t says so');

    $t->write_config(config(''));
    ($rc, undef, $err) = $t->ringx('-t');
    like($err, qr/the workers will use (io_uring|epoll: io_uring_setup\(\) failed)/,
         'no use: -t says which backend will run');
}

# --- use epoll: a worker on epoll ---------------------------------------------------

{
    my $t = Test::Ringx->new;
    $t->write_config(config('use epoll;'));
    files($t);
    $t->run;
    serves_all($t, 'use epoll');
    ok(!$t->log_contains(qr/io_uring_setup\(\) failed/),
       'use epoll: no notice about io_uring');
    epoll_ctl_calls($t);
    $t->stop;
}

# --- io_uring refused: the fallback -------------------------------------------------

SKIP: {
    my $t = Test::Ringx->new;
    my $launcher = $t->prefix . "/no_io_uring";
    system('cc', '-O2', '-o', $launcher, "$FindBin::Bin/tools/no_io_uring.c") == 0
        or skip 'cannot build t/tools/no_io_uring.c (cc)', 1;
    my $probe = `$launcher /bin/true 2>&1`;
    skip "seccomp filters are refused here: $probe", 1 if $?;

    $t->write_config(config(''));
    files($t);
    my $bin = $t->bin;
    my $prefix = $t->prefix;
    my $err = `$launcher $bin -p $prefix/ -t 2>&1`;
    like($err, qr/the workers will use epoll: io_uring_setup\(\) failed; a seccomp profile refuses io_uring.* \(1: Operation not permitted\)/,
         'denied io_uring: -t says epoll will run, and why');

    $t->run({ wrap => [$launcher] });
    serves_all($t, 'denied io_uring');
    my @lines = $t->log_contains(qr/\[notice\].*io_uring_setup\(\) failed/);
    is(scalar @lines, 1, 'denied io_uring: one notice');
    like($lines[0] // '', qr/io_uring_setup\(\) failed, the worker uses epoll instead; a seccomp profile refuses io_uring .*io_uring_setup, io_uring_enter and io_uring_register .*kernel\.io_uring_disabled.* \(1: Operation not permitted\)/,
         'the notice says why and how to allow io_uring');
    $t->stop;
}

done_testing;
