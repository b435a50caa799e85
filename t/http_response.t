#!/usr/bin/perl

# Responses: return with text, redirects (absolute_redirect,
# port_in_redirect, server_name_in_redirect), the built-in error pages
# byte for byte, server_tokens, Date, HEAD, error_page (status kept,
# =code, =, redirects, loops, recursive_error_pages), return 444,
# add_header (always, inheritance), expires, stub_status.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use POSIX ();
use Test::More;
use Test::Ringx;
use Time::HiRes qw(time sleep);
use Time::Local qw(timegm);

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
    access_log off;

    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost alias.test;

        location /text { return 200 "text body\n"; }
        location /typed {
            default_type text/x-test;
            return 200 "typed";
        }
        location /empty { return 200; }
        location /r301 { return 301 /x; }
        location /r302 { return 302 http://e.x/; }
        location /r307 { return 307 /temp?a=1; }
        location /r302text { return 302 "/relative"; }
        location /nf { return 404; }
        location /ise { return 500; }
        location /s403 { return 403; }
        location /s503 { return 503; }
        location /s204 { return 204; }
        location /s418 { return 418; }
        location /close { return 444; }

        location /ep404 {
            error_page 404 /err.html;
            return 404;
        }
        location /ep404ok {
            error_page 404 =200 /err.html;
            return 404;
        }
        location /ep404same {
            error_page 404 = /target;
            return 404;
        }
        location /ep404code {
            error_page 404 =410 /err.html;
            return 404;
        }
        location /ep500 {
            error_page 500 http://e.x/;
            return 500;
        }
        location /ep500code {
            error_page 500 =301 http://e.x/moved;
            return 500;
        }
        location /epvar/ {
            error_page 404 /epshow?u=$uri&s=$status;
            return 404;
        }
        location /epvarurl/ {
            error_page 404 $scheme://e.x$uri?q=$arg_q;
            return 404;
        }
        location /epvarcode/ {
            error_page 404 =301 http://e.x$uri;
            return 404;
        }
        location /epvarto/ {
            error_page 404 $arg_to;
            return 404;
        }
        location = /epshow { return 200 "shown $uri $args"; }
        location /eploop {
            error_page 404 /missing;
            return 404;
        }
        location /missing { return 404; }
        location /epchain {
            error_page 404 /step2;
            return 404;
        }
        location /step2 {
            error_page 500 /final;
            return 500;
        }
        location = /final { return 200 "final"; }
        location = /err.html { return 200 "custom"; }
        location = /target { return 202 "target"; }

        location /hdr {
            add_header X-A 1;
            add_header X-B 2 always;
            location /hdr/ok { return 200 "ok"; }
            location /hdr/nf { return 404; }
            location /hdr/redirect { return 302 /x; }
            location /hdr/ise { return 500; }
        }

        location /exp1h { expires 1h; return 200 "e"; }
        location /expepoch { expires epoch; return 200 "e"; }
        location /expmax { expires max; return 200 "e"; }
        location /expneg { expires -1; return 200 "e"; }
        location /expoff { expires off; return 200 "e"; }
        location /expnf { expires 1h; return 404; }

        location = /status { stub_status; }
    }

    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name localhost;
        absolute_redirect off;
        location /r301 { return 301 /x; }
    }

    server {
        listen 127.0.0.1:%%PORT_2%%;
        server_name localhost;
        port_in_redirect off;
        location /r301 { return 301 /x; }
    }

    server {
        listen 127.0.0.1:%%PORT_3%%;
        server_name main.test other.test;
        server_name_in_redirect on;
        server_tokens off;
        location /r301 { return 301 /x; }
        location /nf { return 404; }
        location / { return 200 "tokens off"; }
    }

    server {
        listen 127.0.0.1:%%PORT_4%%;
        server_name localhost;
        add_header X-Server s;
        recursive_error_pages on;
        location /inherits { return 200 "i"; }
        location /own {
            add_header X-Loc l;
            return 200 "o";
        }
        location /epchain {
            error_page 404 /step2;
            return 404;
        }
        location /step2 {
            error_page 500 /final;
            return 500;
        }
        location = /final { return 200 "final"; }
    }
}
EOF
$t->run;

my @P = map { $t->port($_) } 0 .. 4;

sub req {
    my ($port, $path, %o) = @_;
    my $method = $o{method} // 'GET';
    my $host = $o{host} // 'localhost';
    my $raw = $t->http($port, "$method $path HTTP/1.0\r\nHost: $host\r\n\r\n", timeout => 2) // '';
    my ($r) = Test::Ringx::parse_responses($raw, head => [ $method eq 'HEAD' ]);
    return $r || { status => 0, headers => {}, body => '', raw => $raw, head => $raw };
}

my $CRLF = "\r\n";

# nginx's built-in page, with ringx's name in the footer
sub page {
    my ($title, $footer) = @_;
    $footer //= 'ringx/0.1.0';
    return "<html>$CRLF<head><title>$title</title></head>$CRLF<body>$CRLF"
         . "<center><h1>$title</h1></center>$CRLF"
         . "<hr><center>$footer</center>$CRLF</body>$CRLF</html>$CRLF";
}

my @WDAY = qw(Sun Mon Tue Wed Thu Fri Sat);
my @MON = qw(Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec);
my %MON = map { $MON[$_] => $_ } 0 .. 11;
my $DATE_RE = qr/^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/;

sub http_date_epoch {
    my ($d) = @_;
    return undef unless defined $d
        && $d =~ /^\w{3}, (\d\d) (\w{3}) (\d{4}) (\d\d):(\d\d):(\d\d) GMT$/;
    return timegm($6, $5, $4, $1, $MON{$2}, $3);
}

###########################################################################
# return with text

{
    my $r = req($P[0], '/text');
    is($r->{status}, 200, 'return 200 text: 200');
    is($r->{reason}, 'OK', 'return 200 text: reason OK');
    is($r->{body}, "text body\n", 'return 200 text: body');
    is($r->{headers}{'content-length'}, 10, 'return 200 text: Content-Length');
    is($r->{headers}{'content-type'}, 'text/plain', 'return 200 text: Content-Type from default_type (text/plain)');
    is($r->{headers}{server}, 'ringx/0.1.0', 'Server: ringx/0.1.0');
    like($r->{headers}{date} // '', $DATE_RE, 'Date: RFC 1123 format');
    my $d = http_date_epoch($r->{headers}{date});
    ok(defined $d && abs($d - time) < 5, 'Date: now') or diag($r->{headers}{date});
    is_deeply([ map { $_->[0] } @{ $r->{header_list} } ],
              [ qw(Server Date Content-Type Content-Length Connection) ],
              'return 200 text: headers and their order as nginx');

    $r = req($P[0], '/typed');
    is($r->{headers}{'content-type'}, 'text/x-test', 'default_type in the location');

    $r = req($P[0], '/empty');
    is($r->{status}, 200, 'return 200 without text: 200');
    is($r->{body}, '', 'return 200 without text: empty body');
}

###########################################################################
# redirects

{
    my $r = req($P[0], '/r301');
    is($r->{status}, 301, 'return 301: 301');
    is($r->{reason}, 'Moved Permanently', 'return 301: reason');
    is($r->{headers}{location}, "http://localhost:$P[0]/x", 'return 301 /x: Location made absolute');
    is($r->{body}, page('301 Moved Permanently'), 'return 301: the built-in page');
    is($r->{headers}{'content-type'}, 'text/html', 'return 301: text/html');

    $r = req($P[0], '/r301', host => 'alias.test');
    is($r->{headers}{location}, "http://alias.test:$P[0]/x",
       'return 301: host from the Host header (server_name_in_redirect off)');

    $r = req($P[0], '/r302');
    is($r->{status}, 302, 'return 302 URL: 302');
    is($r->{reason}, 'Moved Temporarily', 'return 302: reason "Moved Temporarily"');
    is($r->{headers}{location}, 'http://e.x/', 'return 302 URL: Location as given');
    is($r->{body}, page('302 Found'), 'return 302: the built-in page says "302 Found"');

    $r = req($P[0], '/r307');
    is($r->{status}, 307, 'return 307: 307');
    is($r->{headers}{location}, "http://localhost:$P[0]/temp?a=1", 'return 307: Location with args');

    $r = req($P[1], '/r301');
    is($r->{headers}{location}, '/x', 'absolute_redirect off: relative Location');

    $r = req($P[2], '/r301');
    is($r->{headers}{location}, 'http://localhost/x', 'port_in_redirect off: no port');

    $r = req($P[3], '/r301', host => 'other.test');
    is($r->{headers}{location}, "http://main.test:$P[3]/x",
       'server_name_in_redirect on: the first server_name');
}

###########################################################################
# built-in pages, server_tokens

{
    my $r = req($P[0], '/nf');
    is($r->{status}, 404, 'return 404: 404');
    is($r->{reason}, 'Not Found', 'return 404: reason');
    is($r->{body}, page('404 Not Found'), 'return 404: the built-in page, byte for byte');
    like($r->{body}, qr{<center><h1>404 Not Found</h1></center>}, 'return 404: <h1>');
    like($r->{body}, qr{<hr><center>ringx/0\.1\.0</center>}, 'return 404: footer');
    is($r->{headers}{'content-length'}, length($r->{body}), 'return 404: Content-Length');
    is($r->{headers}{'content-type'}, 'text/html', 'return 404: text/html');

    for my $case ([ '/ise', 500, 'Internal Server Error' ],
                  [ '/s403', 403, 'Forbidden' ],
                  [ '/s503', 503, 'Service Temporarily Unavailable' ]) {
        my ($path, $code, $text) = @$case;
        $r = req($P[0], $path);
        is("$r->{status} $r->{reason}", "$code $text", "return $code: status line");
        is($r->{body}, page("$code $text"), "return $code: the built-in page");
    }

    $r = req($P[0], '/s204');
    is($r->{status}, 204, 'return 204: 204');
    ok(!exists $r->{headers}{'content-type'}, 'return 204: no Content-Type');
    ok(!exists $r->{headers}{'content-length'}, 'return 204: no Content-Length');
    is($r->{body}, '', 'return 204: no body');

    $r = req($P[0], '/s418');
    is($r->{status}, 418, 'return 418: the code');
    is($r->{body}, '', 'return 418: no built-in page for an unknown code');

    $r = req($P[3], '/nf');
    is($r->{headers}{server}, 'ringx', 'server_tokens off: Server: ringx');
    is($r->{body}, page('404 Not Found', 'ringx'), 'server_tokens off: footer "ringx"');
}

###########################################################################
# HEAD

{
    my $get = req($P[0], '/text');
    my $head = req($P[0], '/text', method => 'HEAD');
    is($head->{status}, 200, 'HEAD: 200');
    is($head->{headers}{'content-length'}, $get->{headers}{'content-length'},
       'HEAD: the Content-Length of the GET');
    is($head->{raw}, $head->{head}, 'HEAD: nothing after the header');

    my $c = $t->raw($P[0]);
    $c->send("HEAD /text HTTP/1.1\r\nHost: localhost\r\n\r\n"
             . "HEAD /nf HTTP/1.1\r\nHost: localhost\r\n\r\n"
             . "GET /text HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my @r = $c->read_responses(3, head => [1, 1, 0]);
    is(join('|', map { $_->{status} } @r), '200|404|200', 'HEAD, HEAD of a 404, GET pipelined: three responses');
    is($r[1] && $r[1]{headers}{'content-length'}, length(page('404 Not Found')),
       'HEAD of a 404: the Content-Length of the page');
    is($r[2] && $r[2]{body}, "text body\n", 'the GET after two HEADs has its body');
    is($c->buffer, '', 'HEAD pipelined: no stray bytes');
    $c->close;
}

###########################################################################
# error_page

{
    my $r = req($P[0], '/ep404');
    is("$r->{status} $r->{body}", '404 custom', 'error_page 404 /err.html: status 404 kept, custom body');
    $r = req($P[0], '/ep404ok');
    is("$r->{status} $r->{body}", '200 custom', 'error_page 404 =200: 200');
    $r = req($P[0], '/ep404same');
    is("$r->{status} $r->{body}", '202 target', 'error_page 404 = /target: the status of the target');
    $r = req($P[0], '/ep404code');
    is("$r->{status} $r->{body}", '410 custom', 'error_page 404 =410: 410');

    $r = req($P[0], '/ep500');
    is($r->{status}, 302, 'error_page 500 http://e.x/: 302');
    is($r->{headers}{location}, 'http://e.x/', 'error_page 500 http://e.x/: Location');
    $r = req($P[0], '/ep500code');
    is($r->{status}, 301, 'error_page 500 =301 URL: 301');
    is($r->{headers}{location}, 'http://e.x/moved', 'error_page 500 =301 URL: Location');

    # variables in the target: evaluated for each request, as in nginx
    $r = req($P[0], '/epvar/one');
    is("$r->{status} $r->{body}", '404 shown /epshow u=/epvar/one&s=404',
       'error_page 404 /epshow?u=$uri&s=$status: the URI and its args made per request');
    $r = req($P[0], '/epvar/two');
    is($r->{body}, 'shown /epshow u=/epvar/two&s=404', 'error_page with $uri: another request, its own URI');
    $r = req($P[0], '/epvarurl/a?q=7');
    is($r->{status}, 302, 'error_page 404 $scheme://e.x$uri?q=$arg_q: 302');
    is($r->{headers}{location}, 'http://e.x/epvarurl/a?q=7',
       'error_page 404 $scheme://e.x$uri?q=$arg_q: Location made from the request');
    # response splitting: a decoded CR LF in $uri would end the Location
    # line and start a header of the client's; nginx sends it, ringx drops
    # the header and logs why
    $r = req($P[0], '/epvarurl/a%0d%0aX-Injected:%20yes');
    is($r->{status}, 302, 'a CR LF in $uri: still the 302');
    ok(!exists $r->{headers}{'x-injected'}, 'a CR LF in $uri: no header of the client\'s')
        or diag($r->{raw});
    ok(!exists $r->{headers}{location}, 'a CR LF in $uri: the split Location is not sent');
    ok($t->log_contains(qr/response header "Location" has a CR or LF in its value: not sent/),
       'a CR LF in $uri: logged');
    $r = req($P[0], '/epvarcode/b');
    is($r->{status}, 301, 'error_page 404 =301 http://e.x$uri: 301');
    is($r->{headers}{location}, 'http://e.x/epvarcode/b', 'error_page 404 =301 http://e.x$uri: Location');
    $r = req($P[0], '/epvarto/c?to=/epshow?k=v');
    is("$r->{status} $r->{body}", '404 shown /epshow k=v',
       'error_page 404 $arg_to: a value that starts with / is an internal redirect');
    $r = req($P[0], '/epvarto/d?to=');
    is($r->{status}, 302, 'error_page 404 $arg_to, empty: a 302 as in nginx');

    $r = req($P[0], '/eploop');
    is($r->{status}, 404, 'error_page to a location that 404s too: 404');
    is($r->{body}, page('404 Not Found'), 'recursive_error_pages off: the built-in 404 page');

    $r = req($P[0], '/epchain');
    is($r->{status}, 500, 'recursive_error_pages off: the error of the error page');
    is($r->{body}, page('500 Internal Server Error'), 'recursive_error_pages off: built-in 500 page');

    $r = req($P[4], '/epchain');
    is("$r->{status} $r->{body}", '500 final', 'recursive_error_pages on: the second error_page applies');
}

###########################################################################
# return 444

{
    my $c = $t->raw($P[0]);
    $c->send("GET /close HTTP/1.1\r\nHost: localhost\r\n\r\n");
    ok($c->wait_closed(2), 'return 444: connection closed');
    is($c->buffer, '', 'return 444: nothing sent');
}

###########################################################################
# add_header

{
    my $r = req($P[0], '/hdr/ok');
    is($r->{headers}{'x-a'}, '1', 'add_header on 200');
    is($r->{headers}{'x-b'}, '2', 'add_header always on 200');
    $r = req($P[0], '/hdr/redirect');
    is($r->{headers}{'x-a'}, '1', 'add_header on 302');
    $r = req($P[0], '/hdr/nf');
    ok(!exists $r->{headers}{'x-a'}, 'add_header: not on 404');
    is($r->{headers}{'x-b'}, '2', 'add_header always: on 404');
    $r = req($P[0], '/hdr/ise');
    ok(!exists $r->{headers}{'x-a'}, 'add_header: not on 500');
    is($r->{headers}{'x-b'}, '2', 'add_header always: on 500');

    $r = req($P[4], '/inherits');
    is($r->{headers}{'x-server'}, 's', 'add_header inherited from the server');
    $r = req($P[4], '/own');
    is($r->{headers}{'x-loc'}, 'l', 'add_header of the location');
    ok(!exists $r->{headers}{'x-server'}, "a location's own add_header drops the server's");
}

###########################################################################
# expires

{
    my $r = req($P[0], '/exp1h');
    my $exp = http_date_epoch($r->{headers}{expires});
    my $date = http_date_epoch($r->{headers}{date});
    ok(defined $exp && defined $date && $exp - $date == 3600, 'expires 1h: Expires = Date + 3600')
        or diag("Date: " . ($r->{headers}{date} // '-') . ", Expires: " . ($r->{headers}{expires} // '-'));
    is($r->{headers}{'cache-control'}, 'max-age=3600', 'expires 1h: Cache-Control: max-age=3600');

    $r = req($P[0], '/expepoch');
    is($r->{headers}{expires}, 'Thu, 01 Jan 1970 00:00:01 GMT', 'expires epoch: Expires');
    is($r->{headers}{'cache-control'}, 'no-cache', 'expires epoch: Cache-Control: no-cache');

    $r = req($P[0], '/expmax');
    is($r->{headers}{expires}, 'Thu, 31 Dec 2037 23:55:55 GMT', 'expires max: Expires');
    is($r->{headers}{'cache-control'}, 'max-age=315360000', 'expires max: Cache-Control');

    $r = req($P[0], '/expneg');
    $exp = http_date_epoch($r->{headers}{expires});
    $date = http_date_epoch($r->{headers}{date});
    ok(defined $exp && defined $date && $date - $exp == 1, 'expires -1: Expires = Date - 1')
        or diag("Date: " . ($r->{headers}{date} // '-') . ", Expires: " . ($r->{headers}{expires} // '-'));
    is($r->{headers}{'cache-control'}, 'no-cache', 'expires -1: Cache-Control: no-cache');

    $r = req($P[0], '/expoff');
    ok(!exists $r->{headers}{expires} && !exists $r->{headers}{'cache-control'},
       'expires off: no Expires, no Cache-Control');

    $r = req($P[0], '/expnf');
    ok(!exists $r->{headers}{expires}, 'expires: not on 404');
}

###########################################################################
# stub_status

{
    my $r = req($P[0], '/status');
    is($r->{status}, 200, 'stub_status: 200');
    is($r->{headers}{'content-type'}, 'text/plain', 'stub_status: text/plain');
    like($r->{body},
         qr/\AActive connections: \d+ \nserver accepts handled requests\n \d+ \d+ \d+ \nReading: \d+ Writing: \d+ Waiting: \d+ \n\z/,
         'stub_status: the format') or diag($r->{body});
    my ($acc1, $hand1, $req1) = $r->{body} =~ /\n (\d+) (\d+) (\d+) \n/;
    my ($active) = $r->{body} =~ /Active connections: (\d+)/;
    cmp_ok($active // 0, '>=', 1, 'stub_status: at least this connection active');
    my ($writing) = $r->{body} =~ /Writing: (\d+)/;
    cmp_ok($writing // 0, '>=', 1, 'stub_status: this request is writing');

    req($P[0], '/text') for 1 .. 3;

    my $c = $t->raw($P[0]);
    $c->send("GET /status HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $r1 = $c->read_response;
    $c->send("GET /status HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $r2 = $c->read_response;
    $c->close;
    my ($acc2, $hand2, $req2) = ($r1 && $r1->{body} // '') =~ /\n (\d+) (\d+) (\d+) \n/;
    my ($acc3, $hand3, $req3) = ($r2 && $r2->{body} // '') =~ /\n (\d+) (\d+) (\d+) \n/;
    is(($acc2 // 0) - ($acc1 // 0), 4, 'stub_status: accepts grew by the 4 connections');
    is(($req2 // 0) - ($req1 // 0), 4, 'stub_status: requests grew by 4');
    is(($hand2 // 0), ($acc2 // -1), 'stub_status: handled = accepts');
    is(($acc3 // 0) - ($acc2 // 0), 0, 'stub_status: same connection, accepts unchanged');
    is(($req3 // 0) - ($req2 // 0), 1, 'stub_status: same connection, requests + 1');
    my ($waiting) = ($r2 && $r2->{body} // '') =~ /Waiting: (\d+)/;
    ok(defined $waiting, 'stub_status: Waiting present');
}

$t->stop;
done_testing;
