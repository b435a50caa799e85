#!/usr/bin/perl

# The access log (ngx_http_log_module): the default "combined" line, the
# default log with no access_log at all, access_log off, log_format
# variables, escape=default|json|none, several logs at one level, a
# location's own logs replacing the server's, if=, buffer= and flush=
# (lines kept across -s reopen and -s quit), configuration errors, and the
# lines of HEAD, 444, a client gone mid-header (400) and a header timeout
# (408).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use POSIX qw(strftime);
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time sleep);

###########################################################################
# helpers

# Lines of a log file of $t (missing file: none).
sub lines_of {
    my ($t, $file) = @_;
    my $c = $t->read_file($file) // '';
    return split /\n/, $c;
}

# Waits until $file has at least $n lines; returns the lines.
sub wait_lines {
    my ($t, $file, $n, $secs) = @_;
    my @l;
    $t->wait_for(sub { @l = lines_of($t, $file); @l >= $n }, $secs // 3);
    return @l;
}

# "k=v|k=v|..." (a line of the "vars" format) as a hash.
sub parse_vars {
    my ($line) = @_;
    return {} unless defined $line;
    return { map { /^([^=]+)=(.*)$/s ? ($1, $2) : () } split /\|/, $line };
}

# The local times (as strftime $fmt) of every second from $from to $to,
# with a margin of one second on each side.
sub times_between {
    my ($fmt, $from, $to) = @_;
    my %t;
    my @mon = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);
    for my $s (int($from) - 1 .. int($to) + 1) {
        my @lt = localtime $s;
        (my $f = $fmt) =~ s/%b/$mon[$lt[4]]/g;         # not the locale's
        my $txt = strftime($f, @lt);
        $txt =~ s/([+-]\d\d)(\d\d)$/$1:$2/ if $fmt =~ /%z$/ && $fmt =~ /T/;
        $t{$txt} = 1;
    }
    return \%t;
}

###########################################################################
# no access_log directive at all: logs/access.log, combined

{
    my $d = Test::Ringx->new;
    $d->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;

events {
    worker_connections 64;
}

http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { root html; }
    }
}
EOF
    my $body = join '', map { chr(97 + $_ % 26) } 0 .. 1233;
    $d->write_file('html/x', $body);
    $d->run;

    my $t0 = time;
    my $c = $d->raw($d->port(0));
    my $req = "GET /x?a=1 HTTP/1.1\r\nHost: localhost\r\n"
            . "User-Agent: ringx-test/1.0 (e2e)\r\nConnection: close\r\n\r\n";
    $c->send($req);
    my $r = $c->read_response;
    is($r && $r->{status}, 200, 'default log: GET /x?a=1 answered 200');
    is($r && length($r->{body}), 1234, 'default log: the whole file sent');
    my @l = wait_lines($d, 'logs/access.log', 1);
    my $t1 = time;
    is(scalar @l, 1, 'no access_log directive: one line in logs/access.log');
    my $line = $l[0] // '';
    like($line, qr{^127\.0\.0\.1 - - \[(\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\] "GET /x\?a=1 HTTP/1\.1" 200 1234 "-" "ringx-test/1\.0 \(e2e\)"$},
         'combined: the exact line')
        or diag("line: $line");
    my ($when) = $line =~ /\[([^\]]+)\]/;
    ok($when && times_between('%d/%b/%Y:%H:%M:%S %z', $t0, $t1)->{$when},
       'combined: $time_local is the local time of the request')
        or diag("logged [$when], now " . strftime('%d/%b/%Y:%H:%M:%S %z', localtime));

    # a second request with a Referer, and a request without User-Agent
    $c = $d->raw($d->port(0));
    $c->send("GET /x HTTP/1.0\r\nReferer: http://example.com/a?b\r\n\r\n");
    $r = $c->read_response;
    @l = wait_lines($d, 'logs/access.log', 2);
    like($l[1] // '', qr{^127\.0\.0\.1 - - \[[^\]]+\] "GET /x HTTP/1\.0" 200 1234 "http://example\.com/a\?b" "-"$},
         'combined: referer logged, a missing User-Agent is "-"')
        or diag($l[1]);
    $d->stop;
}

###########################################################################
# the main server

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;

events {
    worker_connections 64;
}

http {
    default_type text/plain;
    client_header_timeout 1s;
    keepalive_timeout 10s;

    log_format vars 'rt=$request_time|status=$status|bbs=$body_bytes_sent|'
                    'bs=$bytes_sent|rl=$request_length|xfoo=$http_x_foo|'
                    'ct=$sent_http_content_type|conn=$connection|'
                    'creq=$connection_requests|msec=$msec|iso=$time_iso8601|'
                    'us=$request_start_us|uri=$uri|ruri=$request_uri|'
                    'args=$args|arg_a=$arg_a|cookie_a=$cookie_a|host=$host|'
                    'sname=$server_name|sport=$server_port|raddr=$remote_addr|'
                    'scheme=$scheme|method=$request_method|pid=$pid';
    log_format short '$request_uri $status';
    log_format e_default '$request_uri [$http_x_foo][$http_x_missing] $uri';
    log_format e_json escape=json '$request_uri [$http_x_foo][$http_x_missing] $uri';
    log_format e_none escape=none '$request_uri [$http_x_foo][$http_x_missing] $uri';

    # no access_log in http nor here: the default logs/access.log combined
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location / { root html; }
        location = /444 { return 444; }
        location /off { access_log off; return 200 "off\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name vars.test alias.test;
        access_log logs/vars.log vars;
        error_page 404 /err.html;
        location / { root html; }
        location = /err.html { root html; }
        location = /v { return 200 "vars\n"; }
        location /loc { access_log logs/loc.log short; return 200 "loc\n"; }
        location /locoff { access_log off; return 200 "locoff\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_2%%;
        server_name localhost;
        access_log logs/both1.log short;
        access_log logs/both2.log combined;
        location / { return 200 "both\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_3%%;
        server_name localhost;
        access_log logs/e_default.log e_default;
        access_log logs/e_json.log e_json;
        access_log logs/e_none.log e_none;
        location / { return 200 "esc\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_4%%;
        server_name localhost;
        access_log logs/if.log short if=$arg_log;
        location / { return 200 "if\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_5%%;
        server_name localhost;
        access_log logs/flush.log short buffer=64k flush=1s;
        location / { return 200 "flush\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_6%%;
        server_name localhost;
        access_log logs/reopen.log short buffer=64k;
        location / { return 200 "reopen\n"; }
    }

    server {
        listen 127.0.0.1:%%PORT_7%%;
        server_name localhost;
        access_log logs/quit.log short buffer=64k;
        location / { return 200 "quit\n"; }
    }
}
EOF
$t->write_file('html/x', 'x' x 1000);
$t->write_file('html/err.html', "custom error page\n");
$t->run;

my @P = map { $t->port($_) } 0 .. 7;
my ($worker) = $t->wait_workers(1);

###########################################################################
# HEAD, 444, access_log off (default log of server 0)

{
    my $c = $t->raw($P[0]);
    $c->send("HEAD /x HTTP/1.1\r\nHost: localhost\r\nUser-Agent: ua\r\n\r\n");
    my $r = $c->read_response(head => 1);
    is($r && $r->{headers}{'content-length'}, 1000, 'HEAD: Content-Length of the file');
    my @l = wait_lines($t, 'logs/access.log', 1);
    like($l[0] // '', qr{"HEAD /x HTTP/1\.1" 200 0 "-" "ua"$},
         'HEAD: logged with 0 body bytes') or diag($l[0]);

    $c->send("GET /444 HTTP/1.1\r\nHost: localhost\r\nUser-Agent: ua\r\n\r\n");
    ok($c->wait_closed(3), 'return 444: the connection is closed');
    is($c->buffer, '', 'return 444: nothing sent');
    @l = wait_lines($t, 'logs/access.log', 2);
    like($l[1] // '', qr{"GET /444 HTTP/1\.1" 444 0 "-" "ua"$},
         'return 444: logged as 444 with 0 bytes') or diag($l[1]);

    my $raw = $t->http_get($P[0], '/off/a');
    like($raw // '', qr/^HTTP\/1\.1 200 .*\r\n\r\noff\n\z/s, 'access_log off location answers');
    # a marker request after it: the off request must not appear before it
    $t->http_get($P[0], '/x?marker');
    @l = wait_lines($t, 'logs/access.log', 3);
    is(scalar(grep { m{ /off/} } @l), 0, 'access_log off: no line for the request');
    like($l[2] // '', qr{"GET /x\?marker HTTP/1\.0" 200 1000 }, 'the request after it is logged');
}

###########################################################################
# variables (server 1, format "vars")

my $vars_n = 0;     # lines of logs/vars.log seen so far

# The lines added to logs/vars.log since the last call (waits for $n).
sub new_vars {
    my ($n) = @_;
    my @l = wait_lines($t, 'logs/vars.log', $vars_n + $n);
    my @new = @l[$vars_n .. $#l];
    $vars_n = @l;
    return map { parse_vars($_) } @new;
}

{
    my $c = $t->raw($P[1]);
    my $req1 = "GET /v?a=1&b=2 HTTP/1.1\r\nHost: Alias.Test\r\nX-Foo: foo value\r\n"
             . "Cookie: b=2; a=xyz\r\nUser-Agent: vars\r\n\r\n";
    my $req2 = "GET /v HTTP/1.1\r\nHost: vars.test\r\n\r\n";
    my $t0 = time;
    $c->send($req1);
    my $r1 = $c->read_response;
    my @v1 = new_vars(1);
    $c->send($req2);
    my $r2 = $c->read_response;
    my @v2 = new_vars(1);
    my $t1 = time;
    my ($a, $b) = ($v1[0] || {}, $v2[0] || {});

    is($r1 && $r1->{status}, 200, 'vars: first request 200');
    like($a->{rt} // '', qr/^\d+\.\d{3}$/, '$request_time: seconds with milliseconds');
    ok(($a->{rt} // 99) < 2, '$request_time: small');
    is($a->{status}, '200', '$status');
    is($a->{bbs}, length($r1->{body} // ''), '$body_bytes_sent: the body length');
    is($a->{bs}, length($r1->{raw} // ''), '$bytes_sent: header and body');
    is($a->{rl}, length($req1), '$request_length: the request line and header');
    is($a->{xfoo}, 'foo value', '$http_x_foo');
    is($a->{ct}, 'text/plain', '$sent_http_content_type');
    like($a->{conn} // '', qr/^\d+$/, '$connection: a number');
    is($b->{conn}, $a->{conn}, '$connection: the same on the keepalive connection');
    is($a->{creq}, '1', '$connection_requests: 1 for the first request');
    is($b->{creq}, '2', '$connection_requests: 2 for the second one');
    like($a->{msec} // '', qr/^\d{10}\.\d{3}$/, '$msec: seconds with milliseconds');
    ok(defined $a->{msec} && $a->{msec} >= $t0 - 1 && $a->{msec} <= $t1 + 1,
       '$msec: now') or diag("msec $a->{msec}, test clock $t0 .. $t1");
    like($a->{iso} // '', qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/, '$time_iso8601: format');
    ok($a->{iso} && times_between('%Y-%m-%dT%H:%M:%S%z', $t0, $t1)->{$a->{iso}},
       '$time_iso8601: the local time') or diag("logged $a->{iso}");
    like($a->{us} // '', qr/^\d{16}$/, '$request_start_us: microseconds since the epoch');
    ok(defined $a->{us} && defined $a->{msec}
       && $a->{us} <= $a->{msec} * 1e6 + 1000
       && $a->{msec} * 1e6 - $a->{us} < 1e6,
       '$request_start_us: just before $msec (log time)')
        or diag("us $a->{us}, msec $a->{msec}");
    is($a->{uri}, '/v', '$uri');
    is($a->{ruri}, '/v?a=1&b=2', '$request_uri');
    is($a->{args}, 'a=1&b=2', '$args');
    is($a->{arg_a}, '1', '$arg_a');
    is($b->{arg_a}, '-', '$arg_a absent: "-"');
    is($a->{cookie_a}, 'xyz', '$cookie_a');
    is($b->{cookie_a}, '-', '$cookie_a absent: "-"');
    is($b->{xfoo}, '-', '$http_x_foo absent: "-"');
    is($a->{host}, 'alias.test', '$host: the Host header, lower-cased');
    is($a->{sname}, 'vars.test', '$server_name: the first name of the server');
    is($a->{sport}, $P[1], '$server_port');
    is($a->{raddr}, '127.0.0.1', '$remote_addr');
    is($a->{scheme}, 'http', '$scheme');
    is($a->{method}, 'GET', '$request_method');
    is($a->{pid}, $worker, '$pid: the worker');
    $c->close;
}

# POST: $request_length counts the body
{
    my $c = $t->raw($P[1]);
    my $req = "POST /v HTTP/1.1\r\nHost: vars.test\r\nContent-Length: 11\r\n"
            . "Connection: close\r\n\r\nhello world";
    $c->send($req);
    my $r = $c->read_response;
    my ($v) = new_vars(1);
    is($v && $v->{method}, 'POST', 'POST: $request_method');
    is($v && $v->{rl}, length($req), 'POST: $request_length includes the body');
}

# error_page: the line comes from where processing ended
{
    my $c = $t->raw($P[1]);
    $c->send("GET /missing/file?q=1 HTTP/1.1\r\nHost: vars.test\r\nConnection: close\r\n\r\n");
    my $r = $c->read_response;
    is($r && $r->{status}, 404, 'error_page: 404');
    is($r && $r->{body}, "custom error page\n", 'error_page: the custom page');
    my ($v) = new_vars(1);
    is($v && $v->{status}, '404', 'error_page: $status 404');
    is($v && $v->{uri}, '/err.html', 'error_page: $uri is the error page');
    is($v && $v->{ruri}, '/missing/file?q=1', 'error_page: $request_uri is the original');
    is($v && $v->{bbs}, length("custom error page\n"), 'error_page: $body_bytes_sent');
}

# a location with its own access_log replaces the server's; off in a location
{
    my $loc_raw = $t->http_get($P[1], '/loc/a?z');
    like($loc_raw // '', qr/\r\n\r\nloc\n\z/, 'location with its own access_log answers');
    my @l = wait_lines($t, 'logs/loc.log', 1);
    is_deeply(\@l, ['/loc/a?z 200'], "the location's own log has the line");
    $t->http_get($P[1], '/locoff/b');
    $t->http_get($P[1], '/v?after');
    my @v = new_vars(1);
    is(scalar @v, 1, 'the server log: one new line');
    is($v[0] && $v[0]{ruri}, '/v?after',
       "the server log has neither the location's own request nor the off one");
    is_deeply([ lines_of($t, 'logs/loc.log') ], ['/loc/a?z 200'], 'loc.log: still one line');
}

###########################################################################
# several access_log lines at one level

{
    $t->http_get($P[2], '/both?1');
    my @a = wait_lines($t, 'logs/both1.log', 1);
    my @b = wait_lines($t, 'logs/both2.log', 1);
    is_deeply(\@a, ['/both?1 200'], 'two access_log lines: the first file (short)');
    is(scalar @b, 1, 'two access_log lines: the second file');
    like($b[0] // '', qr{^127\.0\.0\.1 - - \[[^\]]+\] "GET /both\?1 HTTP/1\.0" 200 5 "-" "-"$},
         'two access_log lines: the second file in combined');
}

###########################################################################
# escape=default | json | none

{
    my $c = $t->raw($P[3]);
    # control bytes reach the log through the decoded URI ($uri): a header
    # value with one is refused (RFC 9110 5.5 allows none but HTAB; nginx
    # lets all but NUL, CR and LF through -- a documented difference)
    $c->send("GET /ctl/%01%22 HTTP/1.1\r\nHost: localhost\r\nX-Foo: q\"c\r\n\r\n");
    my $r = $c->read_response;
    is($r && $r->{status}, 200, 'a %01 in the URI is accepted');
    $c->close;
    $c = $t->raw($P[3]);
    $c->send("GET /esc HTTP/1.1\r\nHost: localhost\r\nX-Foo: a\"b\\c\td\x80e\r\n"
             . "Connection: close\r\n\r\n");
    $r = $c->read_response;
    is($r && $r->{status}, 200, 'a header value with ", \\, tab and 0x80 is accepted');
    $c->close;
    $c = $t->raw($P[3]);
    $c->send("GET /bad HTTP/1.1\r\nHost: localhost\r\nX-Foo: q\x01c\r\n\r\n");
    $r = $c->read_response;
    is($r && $r->{status}, 400, 'a header value with a 0x01 byte is refused');
    $c->close;
    ok($t->wait_for(sub { $t->log_contains(qr/\[info\] .*client sent invalid header line/) }, 1),
       'the refused header is logged as "client sent invalid header line"');

    my %want = (
        e_default => { ctl => "/ctl/%01%22 [q\\x22c][-] /ctl/\\x01\\x22",
                       esc => "/esc [a\\x22b\\x5Cc\\x09d\\x80e][-] /esc" },
        e_json    => { ctl => "/ctl/%01%22 [q\\\"c][] /ctl/\\u0001\\\"",
                       esc => "/esc [a\\\"b\\\\c\\td\x80e][] /esc" },
        e_none    => { ctl => "/ctl/%01%22 [q\"c][] /ctl/\x01\"",
                       esc => "/esc [a\"b\\c\td\x80e][] /esc" },
    );
    for my $f (sort keys %want) {
        my @l = wait_lines($t, "logs/$f.log", 2);
        for my $which (qw(ctl esc)) {
            my ($got) = grep { m{^/\Q$which\E[ /]} } @l;
            is($got, $want{$f}{$which}, "escape=$f: the $which line")
                or diag('got: ' . join(' ', map { sprintf '%02x', ord } split //, $got // ''));
        }
    }
}

###########################################################################
# if=$arg_log

{
    $t->http_get($P[4], "/a?log=1");
    $t->http_get($P[4], "/b?log=0");
    $t->http_get($P[4], "/c?log=");
    $t->http_get($P[4], "/d");
    $t->http_get($P[4], "/e?log=yes");
    my @l = wait_lines($t, 'logs/if.log', 2);
    sleep 0.2;
    @l = lines_of($t, 'logs/if.log');
    is_deeply(\@l, ['/a?log=1 200', '/e?log=yes 200'],
              'if=$arg_log: logged only when the condition is neither empty nor "0"');
}

###########################################################################
# buffer=64k flush=1s

{
    my $t0 = time;
    my $raw = $t->http_get($P[5], '/flushed');
    like($raw // '', qr/\r\n\r\nflush\n\z/, 'buffered log: request answered');
    my $size_now = -s $t->prefix . '/logs/flush.log';
    is($size_now || 0, 0, 'buffer=64k: the line is not written at once');
    my @l = wait_lines($t, 'logs/flush.log', 1, 3);
    my $dt = time - $t0;
    is_deeply(\@l, ['/flushed 200'], 'flush=1s: the line is written without more traffic');
    ok($dt < 2.5, sprintf('flush=1s: within 2.5 s (%.2f s)', $dt));
}

###########################################################################
# buffer=64k: -s reopen after the log was renamed loses no line

{
    my $p = $t->prefix;
    my $c = $t->raw($P[6]);
    my $got = 0;
    for my $i (1 .. 50) {
        $c->send("GET /r$i HTTP/1.1\r\nHost: localhost\r\n\r\n");
        my $r = $c->read_response;
        $got++ if $r && $r->{status} == 200;
    }
    $c->close;
    is($got, 50, 'reopen: 50 requests answered');
    is((-s "$p/logs/reopen.log") || 0, 0, 'reopen: the 50 lines are still in the buffer');
    ok(rename("$p/logs/reopen.log", "$p/logs/reopen.log.1"), 'reopen: log renamed');
    my ($rc, $out, $err) = $t->ringx('-s', 'reopen');
    is($rc, 0, '-s reopen: exit 0') or diag($err);
    my $total = 0;
    my @old;
    $t->wait_for(sub {
        @old = lines_of($t, 'logs/reopen.log.1');
        $total = @old + lines_of($t, 'logs/reopen.log');
        $total >= 50 && -e "$p/logs/reopen.log";
    }, 3);
    ok(-e "$p/logs/reopen.log", 'reopen: a new reopen.log was created');
    is($total, 50, 'reopen: all 50 lines are in the two files');
    my %seen = map { $_ => 1 } @old, lines_of($t, 'logs/reopen.log');
    is(scalar(grep { $seen{"/r$_ 200"} } 1 .. 50), 50, 'reopen: every request has its line');
    # one more, into the new file (written at quit)
    $t->http_get($P[6], '/after-reopen');
}

###########################################################################
# a client gone in the middle of its header: 400; a header timeout: 408

{
    my $c = $t->raw($P[1]);
    $c->send("GET /partial400 HTTP/1.1\r\nHost: vars.test\r\nX-A: 1");
    sleep 0.2;
    $c->close;
    my @v = new_vars(1);
    is(scalar @v, 1, 'client closed mid-header: one line logged');
    is($v[0] && $v[0]{status}, '400', 'client closed mid-header: status 400');
    is($v[0] && $v[0]{bbs}, '0', 'client closed mid-header: 0 body bytes');

    my $t0 = time;
    $c = $t->raw($P[1]);
    $c->send("GET /partial408 HTTP/1.1\r\nHost: vars.test\r\n");
    ok($c->wait_closed(4), 'client_header_timeout 1s: the connection is closed');
    is($c->buffer, '', 'header timeout: no response');
    @v = new_vars(1);
    is(scalar @v, 1, 'header timeout: one line logged');
    is($v[0] && $v[0]{status}, '408', 'header timeout: status 408');
    is($v[0] && $v[0]{bbs}, '0', 'header timeout: 0 body bytes');
}

###########################################################################
# buffer=64k: -s quit writes the buffered lines

{
    my $c = $t->raw($P[7]);
    my $got = 0;
    for my $i (1 .. 50) {
        $c->send("GET /q$i HTTP/1.1\r\nHost: localhost\r\n\r\n");
        my $r = $c->read_response;
        $got++ if $r && $r->{status} == 200;
    }
    $c->close;
    is($got, 50, 'quit: 50 requests answered');
    is((-s $t->prefix . '/logs/quit.log') || 0, 0, 'quit: the lines are still in the buffer');
    my ($rc, $out, $err) = $t->ringx('-s', 'quit');
    is($rc, 0, '-s quit: exit 0') or diag($err);
    ok($t->wait_master_exit(5), '-s quit: the master exits');
    $t->stop;
    my @l = lines_of($t, 'logs/quit.log');
    is(scalar @l, 50, '-s quit: all 50 buffered lines written');
    is_deeply(\@l, [ map { "/q$_ 200" } 1 .. 50 ], '-s quit: in order');
    is_deeply([ lines_of($t, 'logs/reopen.log') ], ['/after-reopen 200'],
              'after the reopen: the next line went to the new file (written at quit)');
}

###########################################################################
# configuration errors (-t)

{
    my $e = Test::Ringx->new;
    my $conf = $e->conf_file;
    my $head = "events { worker_connections 64; }\nhttp {\n";
    my $tail = "    server { listen 127.0.0.1:%%PORT_0%%; }\n}\n";
    my @cases = (
        [ "    log_format a '\$remote_addr';\n    log_format b '\$status \$foo';\n",
          qr/\[emerg\] unknown "foo" variable in \Q$conf\E:4$/m,
          'unknown variable in log_format: [emerg] with file:line' ],
        [ "    log_format a '\$remote_addr';\n    log_format a '\$status';\n",
          qr/\[emerg\] duplicate "log_format" name "a" in \Q$conf\E:4$/m,
          'duplicate log_format name: [emerg] with file:line' ],
        [ "    log_format combined '\$status';\n",
          qr/\[emerg\] duplicate "log_format" name "combined" in \Q$conf\E:3$/m,
          'log_format combined cannot be redefined' ],
        [ "    access_log logs/a.log nosuch;\n",
          qr/\[emerg\] unknown log format "nosuch" in \Q$conf\E:3$/m,
          'access_log with an unknown format' ],
        [ "    access_log logs/a.log combined flush=1s;\n",
          qr/\[emerg\] no buffer is defined for access_log "logs\/a.log" in \Q$conf\E:3$/m,
          'flush= without buffer=' ],
        [ "    log_format j escape=yaml '\$status';\n",
          qr/\[emerg\] unknown log format escaping "yaml", it must be "default", "json" or "none" in \Q$conf\E:3$/m,
          'unknown escape=' ],
    );
    for my $case (@cases) {
        my ($body, $re, $name) = @$case;
        $e->write_config($head . $body . $tail);
        my ($rc, $out, $err) = $e->ringx('-t');
        isnt($rc, 0, "$name: -t fails");
        like($err, $re, $name) or diag($err);
        like($err, qr/test failed/, "$name: test failed") or diag($err);
    }
}

done_testing;
