#!/usr/bin/perl
# charset.t: charset, charset_types, source_charset, override_charset.
# "; charset=NAME" is added to the Content-Type of static files, return,
# error pages and proxied responses whose type is listed; a charset the
# response already has is kept (override_charset off) or, where nginx
# would recode without a charset_map, kept with nginx's "no charset_map"
# error (recoding itself: t/charset_map.t).

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
events { worker_connections 64; }
http {
    access_log off;
    types {
        text/html html;
        text/plain txt;
        text/css css;
        application/javascript js;
    }
    default_type application/octet-stream;
    root html;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        charset utf-8;
        location / { }
        location /off/ { charset off; alias html/; }
        location /css/ { alias html/; charset_types text/css; }
        location /any/ { alias html/; charset_types *; }
        location = /ret { default_type text/plain; return 200 "text\n"; }
        location = /json { default_type application/json; return 200 "{}\n"; }
        location = /r301 { return 301 /a.html; }
        location = /r302 { return 302 /a.html; }
        location = /r307 { return 307 /a.html; }
        location /src-ok/ { alias html/; source_charset UTF-8; }
        location /src-koi/ { alias html/; source_charset koi8-r; }
        location /var/ { alias html/; charset $arg_cs; }
        location /p/ { proxy_pass http://127.0.0.1:%%PORT_1%%/; }
        location /po/ { override_charset on; proxy_pass http://127.0.0.1:%%PORT_1%%/; }
        location /if/ {
            alias html/;
            if ($arg_x) { charset koi8-r; }
        }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        location = /koi { default_type "text/html; charset=koi8-r"; return 200 "koi\n"; }
        location = /utf { default_type "text/html; Charset=UTF-8"; return 200 "utf\n"; }
        location = /none { default_type text/plain; return 200 "none\n"; }
        location = /img { default_type image/png; return 200 "png\n"; }
    }
}
EOF
$t->write_file('html/a.html', "<p>a</p>\n");
$t->write_file('html/a.txt', "a\n");
$t->write_file('html/a.css', "p {}\n");
$t->write_file('html/a.js', "1;\n");
$t->write_file('html/a.bin', "bin\n");
$t->write_file('html/sub/a.html', "<p>sub</p>\n");
$t->run;
my $P = $t->port(0);

sub ctype {
    my ($path) = @_;
    my $r = $t->http_get($P, $path) // '';
    my ($ct) = $r =~ /\r\nContent-Type: ([^\r]*)\r\n/i;
    return $ct // '(none)';
}

is(ctype('/a.html'), 'text/html; charset=utf-8', 'static text/html: charset added');
is(ctype('/a.txt'), 'text/plain; charset=utf-8', 'static text/plain: added');
is(ctype('/a.js'), 'application/javascript; charset=utf-8', 'application/javascript: in the default types');
is(ctype('/a.css'), 'text/css', 'text/css: not in the default types');
is(ctype('/a.bin'), 'application/octet-stream', 'application/octet-stream: not added');
is(ctype('/off/a.html'), 'text/html', 'charset off: nothing added');
is(ctype('/css/a.css'), 'text/css; charset=utf-8', 'charset_types text/css: added');
is(ctype('/css/a.html'), 'text/html; charset=utf-8', 'charset_types: text/html is always in');
is(ctype('/css/a.txt'), 'text/plain', 'charset_types replaces the default list');
is(ctype('/any/a.bin'), 'application/octet-stream; charset=utf-8', 'charset_types *: any type');
is(ctype('/ret'), 'text/plain; charset=utf-8', 'return: added');
is(ctype('/json'), 'application/json', 'return with an unlisted type: not added');
# nginx: no charset on a 301 or 302 (old browsers took it for the next
# page's); other redirects get one
is(ctype('/r301'), 'text/html', '301 page: not added');
is(ctype('/r302'), 'text/html', '302 page: not added');
is(ctype('/r307'), 'text/html; charset=utf-8', '307 page: added');
is(ctype('/sub'), 'text/html', 'the static directory 301: not added');
is(ctype('/nothere.html'), 'text/html; charset=utf-8', 'an error page (text/html): added');
is(ctype('/src-ok/a.html'), 'text/html; charset=utf-8', 'source_charset equal to charset (any case): added');
is(ctype('/src-koi/a.html'), 'text/html', 'source_charset differs: nothing added (no recoding)');
ok($t->log_contains(qr/\[error\] .*no "charset_map" between the charsets "koi8-r" and "utf-8"/),
   'source_charset differs: nginx\'s error');
is(ctype('/var/a.html?cs=windows-1251'), 'text/html; charset=windows-1251', 'charset from a variable');
is(ctype('/var/a.html'), 'text/html', 'charset from an empty variable: nothing added');
is(ctype('/if/a.html?x=1'), 'text/html; charset=koi8-r', 'charset in if in location');
is(ctype('/if/a.html'), 'text/html; charset=utf-8', 'outside the if: inherited');

# proxied responses
is(ctype('/p/koi'), 'text/html; charset=koi8-r', 'proxied with a charset: kept (override_charset off)');
is(ctype('/p/none'), 'text/plain; charset=utf-8', 'proxied without a charset: added');
is(ctype('/p/img'), 'image/png', 'proxied unlisted type: not added');
is(ctype('/po/utf'), 'text/html; Charset=UTF-8', 'override_charset on, the same charset: kept as is');
ok(!$t->log_contains(qr/between the charsets "UTF-8"/), 'the same charset: no error');
is(ctype('/po/koi'), 'text/html; charset=koi8-r', 'override_charset on, another charset: kept (no recoding)');
ok($t->log_contains(qr/\[error\] .*no "charset_map" between the charsets "koi8-r" and "utf-8"/),
   'override_charset on, another charset: nginx\'s error');

# config
for my $case (['charset;', 'invalid number of arguments in "charset" directive'],
              ['charset_types text/css; charset_types text/xml;', '"charset_types" directive is duplicate'],
              ['override_charset maybe;', 'invalid value "maybe"']) {
    Test::Ringx::http_line_refused_ok(@$case);
}

$t->stop;
done_testing;
