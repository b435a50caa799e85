#!/usr/bin/perl
# access_log_gzip.t: access_log PATH [FORMAT] gzip[=level] [buffer=]
# [flush=]. Each write of the buffer (full, flushed by the timer, or at
# exit) and each line longer than the buffer is one complete gzip member,
# so the file is a valid multi-member gzip whose lines are the requests'
# in order; gzip alone means a 64k buffer; bad levels and a file named
# with and without gzip fail -t with nginx's wording.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use IO::Uncompress::Gunzip qw($GunzipError);

# The members of a gzip file, each decompressed (dies on invalid data).
sub members {
    my ($data) = @_;
    my @out;
    while (length $data) {
        my $z = IO::Uncompress::Gunzip->new(\$data, MultiStream => 0,
                                            Transparent => 0)
            or die "not gzip: $GunzipError\n";
        my $text = '';
        while ((my $n = $z->read(my $buf, 65536)) != 0) {
            die "gunzip: $GunzipError\n" if $n < 0;
            $text .= $buf;
        }
        die "truncated member\n" unless $z->eof;
        push @out, $text;
        $data = $z->trailingData // '';
        $z->close;
    }
    return @out;
}

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    log_format short '$uri $status';
    server {
        listen 127.0.0.1:%%PORT_0%%;
        access_log logs/small.log.gz short gzip=9 buffer=64;
        access_log logs/timer.log.gz short gzip flush=200ms;
        location / { return 200 "ok"; }
        location /plain { access_log logs/plain.log short; return 200 "ok"; }
    }
}
EOF
$t->run;
my $port = $t->port(0);

my @want;
for my $i (1 .. 20) {
    my $uri = "/r$i";
    $t->http_get($port, $uri);
    push @want, "$uri 200\n";
}
my $long = '/' . ('L' x 200);
$t->http_get($port, $long);
push @want, "$long 200\n";
$t->http_get($port, '/plain');

# flush=200ms: the lines reach the file without a stop
my $tf = $t->prefix . '/logs/timer.log.gz';
ok Test::Ringx::wait_for(sub { -s $tf }, 5), 'flush=: the buffer is written by the timer';
my @m = eval { members($t->read_file($tf)) };
is $@, '', 'flush=: the file is valid gzip';
is join('', @m), join('', @want), 'flush=: its lines are the requests, in order';

$t->stop;

my $raw = $t->read_file('logs/small.log.gz');
is substr($raw, 0, 2), "\x1f\x8b", 'the file starts with a gzip header';
@m = eval { members($raw) };
is $@, '', 'buffer=64: the whole file is valid gzip';
cmp_ok scalar(@m), '>=', 4, 'buffer=64: one member per flush (' . scalar(@m) . ')';
is join('', @m), join('', @want), 'buffer=64: the lines are the requests, in order';
ok((grep { $_ eq "$long 200\n" } @m), 'a line longer than the buffer is a member of its own');
ok !(grep { !/\n\z/ } @m), 'no member ends inside a line';
is $t->read_file('logs/plain.log'), "/plain 200\n", 'a plain log next to them is not compressed';

# -t: nginx's checks
{
    my $e = Test::Ringx->new;
    my $conf = $e->conf_file;
    my $head = "events { worker_connections 64; }\nhttp {\n";
    my $tail = "    server { listen 127.0.0.1:%%PORT_0%%; }\n}\n";
    for my $case (
        [ "    access_log logs/a.gz combined gzip=0;\n",
          qr/\[emerg\] invalid compression level "0" in \Q$conf\E:3$/m, 'gzip=0' ],
        [ "    access_log logs/a.gz combined gzip=10;\n",
          qr/\[emerg\] invalid compression level "10" in \Q$conf\E:3$/m, 'gzip=10' ],
        [ "    access_log logs/a.gz combined gzip=x;\n",
          qr/\[emerg\] invalid compression level "x" in \Q$conf\E:3$/m, 'gzip=x' ],
        [ "    access_log logs/a.gz combined gzip;\n    access_log logs/a.gz combined buffer=64k;\n",
          qr/\[emerg\] access_log "logs\/a.gz" already defined with conflicting parameters in \Q$conf\E:4$/m,
          'one file with and without gzip' ],
        [ "    access_log logs/a.gz combined gzip=2 buffer=64k;\n    access_log logs/a.gz combined gzip=3 buffer=64k;\n",
          qr/\[emerg\] access_log "logs\/a.gz" already defined with conflicting parameters in \Q$conf\E:4$/m,
          'one file with two levels' ],
        [ "    access_log logs/a.gz\$host combined gzip;\n",
          qr/\[emerg\] buffered logs cannot have variables in name in \Q$conf\E:3$/m,
          'gzip with variables in the path' ],
    ) {
        my ($body, $re, $name) = @$case;
        $e->write_config($head . $body . $tail);
        my ($rc, $out, $err) = $e->ringx('-t');
        isnt $rc, 0, "$name: -t fails";
        like $err, $re, "$name: the error" or diag $err;
    }
    for my $body ("    access_log logs/a.gz combined gzip;\n",
                  "    access_log logs/a.gz combined flush=1s gzip;\n",
                  "    access_log logs/a.gz combined gzip=5 buffer=8k flush=5m;\n"
                  . "    access_log logs/a.gz combined buffer=8k gzip=5 flush=5m;\n") {
        $e->write_config($head . $body . $tail);
        my ($rc, $out, $err) = $e->ringx('-t');
        is $rc, 0, "-t accepts: $body" or diag $err;
    }
}

done_testing;
