#!/usr/bin/perl

# Location and server selection: nginx's documented location example,
# regex order, exact and ^~ against regexes, nested locations, named
# locations through error_page, internal locations, auto_redirect (a
# proxy_pass location "/app/" answers "/app" with a 301); server_name precedence
# (exact, leading wildcard, trailing wildcard, regex in order, default),
# default_server, and the Host forms that must match (port, trailing dot,
# upper case).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

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
        server_name localhost;

        # the example of the nginx documentation
        location = / { return 200 "A"; }
        location / { return 200 "B"; }
        location /documents/ { return 200 "C"; }
        location ^~ /images/ { return 200 "D"; }
        location ~* \.(gif|jpg|jpeg)$ { return 200 "E"; }

        # regexes: the first match in config order wins
        location ~ ^/re/ { return 200 "re-first"; }
        location ~ ^/re/x { return 200 "re-second"; }

        # exact beats a regex, a regex beats the longest plain prefix
        location = /exact.gif { return 200 "exact"; }
        location /long/prefix/ { return 200 "long-prefix"; }
        location ~ ^/long/ { return 200 "long-regex"; }

        # nested
        location /outer/ {
            location /outer/inner/ { return 200 "inner"; }
            location ~ \.php$ { return 200 "outer-php"; }
            return 200 "outer";
        }

        # named location through error_page
        location /missing/ {
            error_page 404 = @fallback;
            return 404;
        }
        location /missing-keep/ {
            error_page 404 @fallback;
            return 404;
        }
        location @fallback { return 200 "fallback uri=$uri"; }

        # internal
        location /int/ {
            internal;
            return 200 "internal uri=$uri";
        }
        location /via-error-page/ {
            error_page 404 /int/page;
            return 404;
        }
    }

    # server_name precedence on port 1
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name first.test;
        return 200 "first";
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name ~^mail\.;
        return 200 "regex-first";
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name ~^mail\.example\.net$;
        return 200 "regex-second";
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name www.example.*;
        return 200 "wild-end";
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name *.example.com;
        return 200 "wild-start";
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name *.sub.example.com;
        return 200 "wild-start-longer";
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name www.example.com;
        return 200 "exact host=$host";
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name .special.test;
        return 200 "special";
    }
    server {
        listen 127.0.0.1:%%PORT_1%% default_server;
        server_name _;
        return 200 "default";
    }

    # nginx's auto_redirect: a location ending in '/' with proxy_pass or
    # fastcgi_pass answers its name without the '/' with a 301
    server {
        listen 127.0.0.1:%%PORT_3%%;
        server_name localhost;
        location / { return 200 "root"; }
        location /app/ { proxy_pass http://127.0.0.1:%%PORT_2%%/; }
        location /both/ { proxy_pass http://127.0.0.1:%%PORT_2%%/; }
        location /both { return 200 "both-prefix"; }
        location = /exactp/ { proxy_pass http://127.0.0.1:%%PORT_2%%/; }
        location /fcgi/ { fastcgi_pass 127.0.0.1:1; }
        location /plain/ { return 200 "plain"; }
        location ~ ^/rx$ { return 200 "regex"; }
        location /rx/ { proxy_pass http://127.0.0.1:%%PORT_2%%/; }
        location /ap { return 200 "ap-prefix"; }
        location "/sp ace/" { proxy_pass http://127.0.0.1:%%PORT_2%%/; }
        location /nest/ {
            location /nest/in/ { proxy_pass http://127.0.0.1:%%PORT_2%%/; }
            return 200 "nest";
        }
    }

    # no default_server flag on port 2: the first server is the default
    server {
        listen 127.0.0.1:%%PORT_2%%;
        server_name one.test;
        return 200 "one";
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        server_name two.test;
        return 200 "two";
    }
}
EOF
$t->run;

my @P = map { $t->port($_) } 0 .. 3;

# (status, body) of a GET
sub get {
    my ($port, $path, $host) = @_;
    my $req = "GET $path HTTP/1.0\r\n" . (defined $host ? "Host: $host\r\n" : '') . "\r\n";
    my ($r) = Test::Ringx::parse_responses($t->http($port, $req, timeout => 2) // '');
    return $r ? ($r->{status}, $r->{body}) : (0, '');
}

sub body_is {
    my ($port, $path, $host, $want, $name) = @_;
    my ($st, $body) = get($port, $path, $host);
    is("$st $body", "200 $want", $name);
}

###########################################################################
# the documented example

for my $case (
    [ '/', 'A' ],
    [ '/index.html', 'B' ],
    [ '/documents/document.html', 'C' ],
    [ '/images/1.gif', 'D' ],
    [ '/documents/1.jpg', 'E' ],
    [ '/documents', 'B' ],
    [ '/images/', 'D' ],
    [ '/DOCUMENTS/1.JPG', 'E' ],
    [ '/x/y.JpEg', 'E' ],
    [ '/?a=b', 'A' ],
    [ '/documents/1.jpg?x=1', 'E' ],
    [ '/documents/1.jpgx', 'C' ],
) {
    body_is($P[0], $case->[0], 'localhost', $case->[1], "location for $case->[0] is $case->[1]");
}

###########################################################################
# regexes and priorities

body_is($P[0], '/re/x', 'localhost', 're-first', 'regexes: the first match in order wins');
body_is($P[0], '/re/y', 'localhost', 're-first', 'regexes: /re/y');
body_is($P[0], '/RE/x', 'localhost', 'B', '~ is case-sensitive');
body_is($P[0], '/exact.gif', 'localhost', 'exact', '= beats a matching regex');
body_is($P[0], '/exact.gif/', 'localhost', 'B', '= is exact only');
body_is($P[0], '/long/prefix/a', 'localhost', 'long-regex', 'a regex beats the longest prefix');
body_is($P[0], '/images/a/../b.jpg', 'localhost', 'D', '^~ checked on the normalised URI');

###########################################################################
# nested

body_is($P[0], '/outer/x', 'localhost', 'outer', 'nested: the outer location');
body_is($P[0], '/outer/inner/y', 'localhost', 'inner', 'nested: prefix inside');
body_is($P[0], '/outer/a.php', 'localhost', 'outer-php', 'nested: regex inside');
body_is($P[0], '/outer/inner/b.php', 'localhost', 'outer-php',
        'nested: the regex of the outer level after a nested prefix');
body_is($P[0], '/outer/a.gif', 'localhost', 'E',
        'nested: the top-level regex when no nested one matches');

###########################################################################
# named and internal locations

body_is($P[0], '/missing/x', 'localhost', 'fallback uri=/missing/x',
        'error_page 404 = @fallback: the named location answers with its status');
{
    my ($st, $body) = get($P[0], '/missing-keep/x', 'localhost');
    is("$st $body", '404 fallback uri=/missing-keep/x',
       'error_page 404 @fallback (no =): status 404 kept, named location body');
}
{
    my ($st, $body) = get($P[0], '/int/page', 'localhost');
    is($st, 404, 'internal location from outside: 404');
    like($body, qr{<center><h1>404 Not Found</h1></center>}, 'internal location from outside: the 404 page');
    ($st, $body) = get($P[0], '/via-error-page/x', 'localhost');
    is("$st $body", '404 internal uri=/int/page',
       'internal location reached through error_page (status 404 kept)');
}
{
    my ($st) = get($P[0], '/@fallback', 'localhost');
    is($st, 200, 'a named location is not reachable by URI (/@fallback goes to /)');
    my (undef, $body) = get($P[0], '/@fallback', 'localhost');
    is($body, 'B', '/@fallback: location /');
}

###########################################################################
# server_name precedence

for my $case (
    [ 'www.example.com', 'exact host=www.example.com', 'exact name beats both wildcards' ],
    [ 'foo.example.com', 'wild-start', 'leading wildcard' ],
    [ 'a.sub.example.com', 'wild-start-longer', 'the longest leading wildcard' ],
    [ 'www.example.org', 'wild-end', 'trailing wildcard' ],
    [ 'www.example.net', 'wild-end', 'trailing wildcard beats the regexes' ],
    [ 'mail.example.net', 'regex-first', 'regexes: the first in config order' ],
    [ 'mail.other', 'regex-first', 'regex' ],
    [ 'first.test', 'first', 'exact, first server' ],
    [ 'special.test', 'special', '.special.test matches special.test' ],
    [ 'a.b.special.test', 'special', '.special.test matches *.special.test' ],
    [ 'unknown.test', 'default', 'no match: the default_server' ],
    [ 'WWW.EXAMPLE.COM', 'exact host=www.example.com', 'upper case Host matches, $host lower-cased' ],
    [ 'www.example.com.', 'exact host=www.example.com', 'trailing dot ignored' ],
    [ "www.example.com:$P[1]", 'exact host=www.example.com', 'Host with the port' ],
    [ 'Www.Example.Com.:8080', 'exact host=www.example.com', 'mixed case, trailing dot and port' ],
    [ 'FOO.Example.COM', 'wild-start', 'upper case against a wildcard' ],
) {
    body_is($P[1], '/', $case->[0], $case->[1], "server_name: $case->[2] ($case->[0])");
}
body_is($P[1], '/', undef, 'default', 'server_name: no Host (HTTP/1.0): the default_server');
body_is($P[1], 'http://www.example.com/', 'unknown.test', 'exact host=www.example.com',
        'server_name: the absolute-form host is used');

###########################################################################
# the first server is the default without default_server

body_is($P[2], '/', 'two.test', 'two', 'port 2: two.test');
body_is($P[2], '/', 'three.test', 'one', 'port 2: an unknown host goes to the first server');
body_is($P[2], '/', undef, 'one', 'port 2: no Host goes to the first server');

###########################################################################
# auto_redirect (nginx: a location with proxy_pass, fastcgi_pass, ... whose
# name ends in '/' answers the name without it with a 301 to the name; it
# is decided before the regexes and over a shorter prefix, but not when
# the URI is a location of its own)

sub location_of {
    my ($port, $path) = @_;
    my ($r) = Test::Ringx::parse_responses(
        $t->http($port, "GET $path HTTP/1.0\r\nHost: localhost\r\n\r\n", timeout => 2) // '');
    return $r ? "$r->{status} " . ($r->{headers}{location} // 'no Location') : 'none';
}
for my $case (
    [ '/app', "301 http://localhost:$P[3]/app/", 'proxy_pass location' ],
    [ '/app?x=1&y', "301 http://localhost:$P[3]/app/?x=1&y", 'arguments kept' ],
    [ '/exactp', "301 http://localhost:$P[3]/exactp/", 'an exact location' ],
    [ '/fcgi', "301 http://localhost:$P[3]/fcgi/", 'fastcgi_pass location' ],
    [ '/rx', "301 http://localhost:$P[3]/rx/", 'before a matching regex' ],
    [ '/sp%20ace', "301 http://localhost:$P[3]/sp%20ace/", 'the name escaped' ],
    [ '/nest/in', "301 http://localhost:$P[3]/nest/in/", 'a nested location' ],
) {
    is(location_of($P[3], $case->[0]), $case->[1], "auto_redirect: $case->[2] ($case->[0])");
}
body_is($P[3], '/app/x', 'localhost', 'one', 'auto_redirect: the location itself proxies');
body_is($P[3], '/both', 'localhost', 'both-prefix', 'auto_redirect: not over a location of that name');
body_is($P[3], '/plain', 'localhost', 'root', 'auto_redirect: not without proxy_pass');
body_is($P[3], '/ap', 'localhost', 'ap-prefix', 'auto_redirect: a shorter prefix location');
body_is($P[3], '/nest/x', 'localhost', 'nest', 'auto_redirect: the nesting location');

$t->stop;

###########################################################################
# regex captures as variables: each in its own instance, so that a config
# error does not take the rest of the file down

sub capture_case {
    my ($name, $server, @checks) = @_;
    my $t2 = Test::Ringx->new;
    $t2->write_config(<<"EOF");
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
$server
    }
}
EOF
    my $ok = eval { $t2->run; 1 };
    ok($ok, "$name: starts") or diag($@);
    return unless $ok;
    for my $c (@checks) {
        my ($host, $path, $want) = @$c;
        my $raw = $t2->http($t2->port(0), "GET $path HTTP/1.0\r\nHost: $host\r\n\r\n");
        my ($r) = Test::Ringx::parse_responses($raw // '');
        is($r && $r->{body}, $want, "$name: $host$path");
    }
    $t2->stop;
}

capture_case('server_name named capture',
    '        server_name ~^(?<sub>[a-z]+)\\.captures\\.test$;
        return 200 "captured=$sub";',
    [ 'abc.captures.test', '/', 'captured=abc' ]);

capture_case('location regex numbered capture',
    '        server_name localhost;
        location ~ ^/cap/(\\w+)/(\\w+)$ { return 200 "one=$1 two=$2"; }',
    [ 'localhost', '/cap/x/yz', 'one=x two=yz' ]);

capture_case('location regex named capture',
    '        server_name localhost;
        location ~ ^/named/(?<item>\\w+)$ { return 200 "item=$item"; }',
    [ 'localhost', '/named/abc', 'item=abc' ]);

done_testing;
