#!/usr/bin/perl
# static_syscalls.t: the system calls a static response costs the worker
# outside its io_uring (counted by strace on the worker). A 30 B file on
# one keepalive connection: opened and read on the worker's thread from
# the dentry and page caches (openat2, fstat, preadv2: no loop turn each),
# closed through the ring (no close(2) per response); on a
# connection each, the sockets are closed through the ring too, and get
# TCP_NODELAY from the listening socket, not a setsockopt each. A 16 KiB
# file with `sendfile on`: by sendfile(2) (above sendfile_min_size's 4 KiB
# default), the socket made non-blocking once per connection, not once
# per response (no fcntl pair each time).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

# the counts are the io_uring backend's (epoll runs file operations itself)
delete $ENV{RINGX_EVENTS};

my $N = 20;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
events { worker_connections 64; use io_uring; }
http {
    access_log off;
    default_type application/octet-stream;
    # the calls of a file opened per request (small_file_cache.t has the
    # kept file's single statx)
    small_file_cache off;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location / { root html; sendfile on; }
        location /k/ { alias html/; sendfile on; sendfile_min_size 1k; }
    }
    # one server of two on a port without tcp_nodelay: the socket has
    # none to give, and the other server's connections set it each
    server {
        listen 127.0.0.1:%%PORT_1%%;
        location / { root html; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name off.example;
        tcp_nodelay off;
    }
}
EOF
my $small = "Hello, this is a 30-byte file\n";
my $mid = join '', map { chr(($_ * 7) % 251) } 1 .. 16384;
$t->write_file_raw('html/small.txt', $small);
$t->write_file_raw('html/mid.bin', $mid);
$t->run;
my ($w) = $t->worker_pids;

SKIP: {
    skip 'no strace here (apt-get install strace)', 14
        if system('strace -V >/dev/null 2>&1') != 0;
    skip 'the kernel refused io_uring: the worker runs epoll', 14
        if $t->log_contains(qr/uses epoll instead/);

    # strace on the worker for $N keepalive requests of PATH; the calls by
    # name, and the bodies curl got
    my $trace = sub {
        my ($path, @curl) = @_;
        my $port = $path =~ s/^:(\d)// ? $t->port($1) : $t->port(0);
        my $url = "http://127.0.0.1:$port$path";
        return $t->syscalls_during($w, $url, sub {
            `curl -s --max-time 30 @curl ${\ join ' ', ($url) x $N}`;
        });
    };

    my ($got, $calls) = $trace->('/small.txt');
    skip 'strace could not attach to the worker (ptrace refused)', 14
        unless %$calls;
    is($got, $small x $N, "$N keepalive responses of a 30 B file, whole");
    # the connection's own close (its socket) and the warm-up's: at most 2
    cmp_ok($calls->{close} // 0, '<=', 2,
           '30 B: the file closed through the ring, not by close(2) each time')
        or diag(explain $calls);
    cmp_ok($calls->{newfstatat} // 0, '<=', $N + 1, '30 B: one fstat per response')
        or diag(explain $calls);
    # opened (openat2, RESOLVE_CACHED) and read (preadv2, RWF_NOWAIT) on the
    # worker's thread, the response out in the request's own loop turn:
    # about 2 io_uring_enter a response (the writev's submit and the wait
    # for the next request), where open, read and writev completions each
    # took a turn of their own (4 or more)
    cmp_ok($calls->{io_uring_enter} // 0, '<', 3 * ($N + 1),
           '30 B: fewer than 3 io_uring_enter per response')
        or diag(explain $calls);
    # the fd opened O_NONBLOCK needs no fcntl when its body was read inline
    cmp_ok($calls->{fcntl} // 0, '<=', 2, '30 B: no fcntl per response')
        or diag(explain $calls);

    # a connection each: the sockets too are closed through the ring
    ($got, $calls) = $trace->('/small.txt', '-H', "'Connection: close'");
    is($got, $small x $N, "$N responses on a connection each, whole");
    cmp_ok($calls->{close} // 0, '<=', 1,
           'Connection: close: the sockets closed through the ring')
        or diag(explain $calls);
    # every server has tcp_nodelay on: the listening socket has it, and
    # the accepted ones inherit it
    cmp_ok($calls->{setsockopt} // 0, '<=', 1,
           'TCP_NODELAY from the listening socket, not set on each')
        or diag(explain $calls);
    ($got, $calls) = $trace->(':1/small.txt', '-H', "'Connection: close'");
    is($got, $small x $N, "$N responses on a port with tcp_nodelay off in one server");
    cmp_ok($calls->{setsockopt} // 0, '>=', $N,
           'there: TCP_NODELAY set on each connection of the server with it on')
        or diag(explain $calls);

    ($got, $calls) = $trace->('/mid.bin');
    ok($got eq $mid x $N, "$N keepalive responses of a 16 KiB file, whole")
        or diag(length($got) . " bytes");
    cmp_ok($calls->{sendfile} // 0, '>=', $N,
           '16 KiB with sendfile on: by sendfile(2)')
        or diag(explain $calls);

    # sendfile_min_size set low, for a sendfile path whatever the default
    ($got, $calls) = $trace->('/k/mid.bin');
    ok($got eq $mid x $N, "$N keepalive responses by sendfile, whole");
    # warm-up connection and the measured one: one F_GETFL + F_SETFL each
    cmp_ok($calls->{fcntl} // 0, '<=', 4,
           'sendfile: O_NONBLOCK set once per connection, not per response')
        or diag(explain $calls);
}

$t->stop;
done_testing;
