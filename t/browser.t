#!/usr/bin/perl
# browser.t: nginx's browser module: modern_browser (versions compared
# component by component, the first listed browser found decides, Opera
# before MSIE), modern_browser unlisted, ancient_browser (substrings,
# netscape4), the *_value directives, inheritance, $msie, and the
# configuration errors.

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
    default_type text/plain;
    modern_browser_value "modern.";
    server {
        listen 127.0.0.1:%%PORT_0%%;
        location /listed/ {
            modern_browser msie 6.0;
            modern_browser gecko 1.9.2;
            modern_browser safari 525.0;
            ancient_browser Links Lynx netscape4;
            ancient_browser_value old;
            return 200 "[$modern_browser][$ancient_browser][$msie]";
        }
        location /unlisted/ {
            modern_browser unlisted;
            ancient_browser Lynx netscape4;
            return 200 "[$modern_browser][$ancient_browser]";
        }
        location /opera/ {
            modern_browser opera 9.0;
            modern_browser msie 5.0;
            return 200 "[$modern_browser][$ancient_browser]";
        }
        location /default/ { return 200 "[$modern_browser][$ancient_browser][$msie]"; }
    }
}
EOF
$t->run;

sub get {
    my ($uri, $ua) = @_;
    my $c = $t->raw($t->port(0)) or return '';
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n"
             . (defined $ua ? "User-Agent: $ua\r\n" : '')
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r ? $r->{body} : '';
}

my $ie6 = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)';
my $ie5 = 'Mozilla/4.0 (compatible; MSIE 5.5; Windows NT 5.0)';
my $ff = 'Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.9.2.13) Gecko/20101203 Firefox/3.6.13';
my $ff_old = 'Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.9.1) Gecko/20090624 Firefox/3.5';
my $ff_new = 'Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0';
my $safari = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
my $opera_ie = 'Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; en) Opera 8.50';

my @cases = (
    ['/listed/', $ie6,     '[modern.][][1]', 'MSIE 6.0 >= 6.0'],
    ['/listed/', $ie5,     '[][old][1]',     'MSIE 5.5 < 6.0'],
    ['/listed/', $ff,      '[modern.][][]',  'rv:1.9.2.13 >= 1.9.2'],
    ['/listed/', $ff_old,  '[][old][]',      'rv:1.9.1 < 1.9.2'],
    ['/listed/', $ff_new,  '[modern.][][]',  'rv:109.0: the first component above decides'],
    ['/listed/', $safari,  '[modern.][][]',  'Safari/605.1.15 >= 525.0'],
    ['/listed/', 'Lynx/2.8.9rel.1 libwww-FM/2.14', '[][old][]', 'not listed, modern_browser without unlisted: ancient'],
    ['/listed/', undef,    '[][old][]',      'no User-Agent: ancient without unlisted'],
    ['/listed/', $opera_ie, '[][old][1]',    'Opera saying MSIE: Opera, not listed, is never modern'],
    ['/unlisted/', 'curl/8.0', '[modern.][]', 'unlisted: modern'],
    ['/unlisted/', 'Lynx/2.8.9rel.1', '[][1]', 'an ancient_browser substring'],
    ['/unlisted/', 'Mozilla/4.72 [en] (X11; U; Linux)', '[][1]', 'netscape4: Mozilla/1-4'],
    ['/unlisted/', 'Mozilla/5.0 (X11; Linux)', '[modern.][]', 'netscape4: not Mozilla/5'],
    ['/unlisted/', undef,  '[modern.][]',    'no User-Agent: modern with unlisted'],
    ['/opera/', $opera_ie, '[][1]',          'Opera 8.50 < 9.0 although MSIE 6.0 >= 5.0'],
    ['/opera/', 'Opera/9.80 (X11; Linux x86_64) Presto/2.12.388 Version/12.16', '[modern.][]', 'Opera/9.80 >= 9.0'],
    ['/default/', $ie6,    '[][1][1]',       'no lists: ancient, value "1"; $msie'],
    ['/default/', 'curl/8.0', '[][1][]',     '$msie empty for others'],
);
for my $c (@cases) {
    my ($uri, $ua, $want, $name) = @$c;
    is(get($uri, $ua), $want, "$uri: $name");
}
$t->stop;

my @bad = (
    ['modern_browser netscape 4.0;', qr/\[emerg\] unknown browser name "netscape"/, 'an unknown browser'],
    ['modern_browser msie 6.x;', qr/\[emerg\] invalid browser version "6\.x"/, 'a bad version'],
    ['modern_browser listed;', qr/\[emerg\] invalid parameter "listed"/, 'one argument other than unlisted'],
    ['modern_browser_value a; modern_browser_value b;', qr/"modern_browser_value" directive is duplicate/, 'a value twice'],
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
