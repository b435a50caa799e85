#!/usr/bin/perl
# userid.t: nginx's userid filter: the cookie it sets (base64 of four
# 32-bit words: the server's address or userid_service, the time, a start
# value, a sequence; nginx's byte orders for "on" and "v1"), the cookie's
# attributes (userid_name, _domain, _path, _expires, _flags, _p3p),
# userid_mark, $uid_got, $uid_set, $uid_reset, "log" mode, bad cookies and
# configuration errors.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use MIME::Base64 qw(decode_base64);
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
$t->write_config(<<'EOF');
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    access_log off;
    default_type text/plain;
    userid on;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /on/ { return 200 "[$uid_got][$uid_set]"; }
        location /v1/ {
            userid v1;
            userid_service 42;
            return 200 "[$uid_got][$uid_set]";
        }
        location /attrs/ {
            userid_name track;
            userid_domain example.com;
            userid_path /attrs/;
            userid_expires max;
            userid_flags secure httponly samesite=lax;
            userid_p3p 'CP="CUR ADM"';
            return 200 "[$uid_set]";
        }
        location /expires/ {
            userid_expires 1h;
            userid_domain none;
            return 200 "ok";
        }
        location /mark/ {
            userid_mark X;
            return 200 "[$uid_got][$uid_set]";
        }
        location /reset/ {
            set $uid_reset log;
            return 200 "[$uid_got][$uid_set]";
        }
        location /log/ {
            userid log;
            return 200 "[$uid_got][$uid_set]";
        }
        location /off/ {
            userid off;
            return 200 "[$uid_got][$uid_set]";
        }
        location /missing { userid_mark =; }
    }
}
EOF
$t->run;

sub get {
    my ($uri, $cookie) = @_;
    my $c = $t->raw($t->port(0)) or return;
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n"
             . (defined $cookie ? "Cookie: $cookie\r\n" : '')
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r;
}

# the words as nginx prints them: each read in the host's byte order
sub words_hex {
    my ($b64) = @_;
    return join '', map { sprintf '%08X', $_ } unpack 'L4', decode_base64($b64);
}

# userid on: a new cookie with the server's address and nginx's sequence
my $r = get('/on/');
my $sc = $r->{headers}{'set-cookie'} // '';
like($sc, qr{^uid=[A-Za-z0-9+/]{22}==; path=/$}, 'on: Set-Cookie uid=BASE64==; path=/');
my ($b64) = $sc =~ /^uid=([^;]+)/;
$b64 //= '';
my @w = unpack 'N4', decode_base64($b64);
is(sprintf('%08X', $w[0] // 0), '7F000001', 'on: word 0 is the server address, network order');
ok(abs(($w[1] // 0) - time) < 60, 'on: word 1 is the time, network order');
is(($w[3] // 0) & 0xff, 0x02, 'on: word 3 is nginx\'s sequence (0x03030302 + n*0x100)');
is($r->{body}, '[][uid=' . words_hex($b64) . ']', 'on: $uid_set prints the words, $uid_got empty');

# the cookie sent back: recognised, nothing set again
$r = get('/on/', "a=b; uid=$b64; c=d");
ok(!exists $r->{headers}{'set-cookie'}, 'a known client gets no Set-Cookie');
is($r->{body}, '[uid=' . words_hex($b64) . '][]', '$uid_got from the cookie, $uid_set empty');

# v1: host byte order, the service first
$r = get('/v1/');
($b64) = ($r->{headers}{'set-cookie'} // '') =~ /^uid=([^;]+)/;
$b64 //= '';
@w = unpack 'L4', decode_base64($b64);
is($w[0] // -1, 42, 'v1: word 0 is userid_service, host order');
ok(abs(($w[1] // 0) - time) < 60, 'v1: word 1 is the time, host order');
is(($w[3] // 0) & 0xff, 1, 'v1: word 3 is the v1 sequence (1 + n*0x100)');
like($r->{body}, qr/^\[\]\[uid=0000002A[0-9A-F]{24}\]$/, 'v1: $uid_set');

# the cookie's attributes, in nginx's order, and P3P
$r = get('/attrs/');
like($r->{headers}{'set-cookie'} // '',
     qr{^track=[A-Za-z0-9+/]{22}==; expires=Thu, 31-Dec-37 23:55:55 GMT; domain=example\.com; path=/attrs/; secure; httponly; samesite=lax$},
     'userid_name, _expires max, _domain, _path, _flags');
is($r->{headers}{p3p}, 'CP="CUR ADM"', 'userid_p3p');
like($r->{body}, qr/^\[track=[0-9A-F]{32}\]$/, '$uid_set names userid_name');

$r = get('/expires/');
like($r->{headers}{'set-cookie'} // '',
     qr{^uid=[^;]+; expires=(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d\d \d\d:\d\d:\d\d GMT; path=/$},
     'userid_expires 1h: a cookie date, two-digit year; domain none');
ok(!exists $r->{headers}{p3p}, 'no P3P by default');

# userid_mark: new cookies carry it; an unmarked known cookie is re-sent marked
$r = get('/mark/');
like($r->{headers}{'set-cookie'} // '', qr{^uid=[A-Za-z0-9+/]{22}X=; path=/$}, 'mark: "X=" instead of "=="');
my ($unmarked) = ($sc =~ /^uid=([^;]+)/);
$r = get('/mark/', "uid=$unmarked");
is($r->{headers}{'set-cookie'}, 'uid=' . substr($unmarked, 0, 22) . 'X=; path=/',
   'mark: an unmarked cookie is sent again, marked');
is($r->{body}, '[uid=' . words_hex($unmarked) . '][uid=' . words_hex($unmarked) . ']',
   'mark: $uid_set is the same identifier');
my $marked = substr($unmarked, 0, 22) . 'X=';
$r = get('/mark/', "uid=$marked");
ok(!exists $r->{headers}{'set-cookie'}, 'mark: a marked cookie is kept');

# $uid_reset: a new identifier, "log" logs the old one
$r = get('/reset/', "uid=$unmarked");
my ($new) = ($r->{headers}{'set-cookie'} // '') =~ /^uid=([^;]+)/;
ok(defined $new && $new ne $unmarked, '$uid_reset: a new cookie');
is($r->{body}, '[uid=' . words_hex($unmarked) . '][uid=' . words_hex($new // '') . ']',
   '$uid_reset: $uid_got the old, $uid_set the new');
ok($t->wait_for(sub { $t->log_contains(qr/\[notice\].*userid cookie "uid=${\ words_hex($unmarked)}" was reset/) }),
   '$uid_reset log: nginx\'s notice');

# log: read only
$r = get('/log/', "uid=$unmarked");
ok(!exists $r->{headers}{'set-cookie'}, 'log: no Set-Cookie');
is($r->{body}, '[uid=' . words_hex($unmarked) . '][]', 'log: $uid_got only');
$r = get('/log/');
ok(!exists $r->{headers}{'set-cookie'}, 'log: no Set-Cookie for a new client');
$r = get('/off/', "uid=$unmarked");
is($r->{body}, '[][]', 'off: no variables');

# bad cookies: logged, treated as absent
$r = get('/on/', 'uid=short');
ok(exists $r->{headers}{'set-cookie'}, 'a too short cookie: a new one');
ok($t->wait_for(sub { $t->log_contains(qr/\[error\].*client sent too short userid cookie "uid=short"/) }),
   'too short: nginx\'s error line');
$r = get('/on/', 'uid=!!!!!!!!!!!!!!!!!!!!!!!!');
ok(exists $r->{headers}{'set-cookie'}, 'an invalid cookie: a new one');
ok($t->wait_for(sub { $t->log_contains(qr/\[error\].*client sent invalid userid cookie/) }),
   'invalid: nginx\'s error line');

# a 404 gets the cookie too (a header filter)
$r = get('/missing');
is($r->{status}, 404, 'a missing file: 404');
like($r->{headers}{'set-cookie'} // '', qr/^uid=[A-Za-z0-9+\/]{22}==; path=\/$/, 'error responses get the cookie; mark "="');
$t->stop;

my ($vcode, $vout, $verr) = $t->ringx('-V');
unlike($vout . $verr, qr/--without-http_userid_module/, '-V: userid is built in');

my @bad = (
    ['userid maybe;', qr/\[emerg\] invalid value "maybe" in "userid" directive/, 'an unknown state'],
    ['userid_mark ab;', qr/\[emerg\] "userid_mark" directive value must be "off" or a single letter, digit or "="/, 'a long mark'],
    ['userid_expires soon;', qr/\[emerg\] "userid_expires" directive invalid value/, 'a bad time'],
    ['userid_flags secure bogus;', qr/\[emerg\] invalid value "bogus" in "userid_flags" directive/, 'an unknown flag'],
    ['userid_name a; userid_name b;', qr/"userid_name" directive is duplicate/, 'a name twice'],
);
for my $c (@bad) {
    my ($line, $re, $name) = @$c;
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { $line } } }
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    isnt($code, 0, "-t fails: $name");
    like($err, $re, "-t error: $name");
}

done_testing;
