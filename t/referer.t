#!/usr/bin/perl
# referer.t: valid_referers and $invalid_referer (nginx's referer module):
# none, blocked, server_names (names, wildcards, regexes), exact names,
# "*." and ".*" wildcards, ".name", a URI prefix, regexes (caseless, after
# the scheme), case and ports in the Referer, inheritance, the usual
# "if ($invalid_referer) { return 403; }", referer_hash_* accepted, and
# nginx's configuration errors.

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
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost *.srv.test ~^re\d+\.test$;
        referer_hash_max_size 4096;
        referer_hash_bucket_size 128;
        valid_referers inherited.test;
        location /a/ {
            valid_referers none blocked server_names *.example.com example.*
                           www.exact.org/galleries/ ~\.GOOGLE\. .dot.net;
            return 200 "[$invalid_referer]";
        }
        location /b/ {
            valid_referers example.com;
            return 200 "[$invalid_referer]";
        }
        location /c/ {
            valid_referers *.wild.test;
            return 200 "[$invalid_referer]";
        }
        location /inherit/ { return 200 "[$invalid_referer]"; }
        location /guard/ {
            valid_referers none site.test;
            if ($invalid_referer) { return 403; }
            return 200 "in";
        }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        location / { return 200 "[$invalid_referer]"; }
    }
}
EOF
$t->run;

sub get {
    my ($uri, $referer, $port) = @_;
    my $c = $t->raw($port // $t->port(0)) or return '';
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n"
             . (defined $referer ? "Referer: $referer\r\n" : '')
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r ? ($r->{status} == 200 ? $r->{body} : $r->{status}) : '';
}

my @cases = (
    ['/a/', undef,                                  '[]',  'none: no Referer'],
    ['/a/', 'foo',                                  '[]',  'blocked: a Referer without a scheme'],
    ['/a/', 'ftp://www.example.com/',               '[]',  'blocked: another scheme'],
    ['/a/', 'http://i.r',                           '[]',  'blocked: shorter than "http://i.ru"'],
    ['/a/', 'http://www.example.com/x',             '[]',  '*.example.com: a subdomain'],
    ['/a/', 'http://a.b.example.com/x',             '[]',  '*.example.com: deeper'],
    ['/a/', 'http://example.com/x',                 '[]',  'example.* holds example.com'],
    ['/c/', 'http://wild.test/',                    '[1]', '*.wild.test: not the name itself'],
    ['/c/', 'http://a.wild.test/',                  '[]',  '*.wild.test: a subdomain'],
    ['/a/', 'http://example.org/',                  '[]',  'example.*'],
    ['/a/', 'http://example.co.uk',                 '[]',  'example.*: any tail'],
    ['/a/', 'http://WWW.Example.COM:8080/x',        '[]',  'host case and port ignored'],
    ['/a/', 'HTTPS://www.example.com/',             '[]',  'scheme case ignored'],
    ['/a/', 'http://www.exact.org/galleries/1.jpg', '[]',  'name with a URI prefix'],
    ['/a/', 'http://www.exact.org:81/galleries/',   '[]',  'URI prefix after a port'],
    ['/a/', 'http://www.exact.org/other/',          '[1]', 'name with another URI'],
    ['/a/', 'http://www.exact.org',                 '[1]', 'name without the URI'],
    ['/a/', 'http://localhost/page',                '[]',  'server_names: a name'],
    ['/a/', 'http://x.srv.test/',                   '[]',  'server_names: a wildcard'],
    ['/a/', 'http://re12.test/',                    '[]',  'server_names: a regex on the host'],
    ['/a/', 'http://rex.test/',                     '[1]', 'server_names: the regex does not match'],
    ['/a/', 'https://www.google.com/search?q=1',    '[]',  'a regex, caseless'],
    ['/a/', 'http://dot.net/',                      '[]',  '.dot.net: the name'],
    ['/a/', 'http://a.dot.net/',                    '[]',  '.dot.net: a subdomain'],
    ['/a/', 'http://evil.test/www.example.com/',    '[1]', 'an unlisted host'],
    ['/a/', 'http://' . ('a' x 300) . '.example.com/', '[1]', 'a host over 256 bytes'],
    ['/b/', undef,                                  '[1]', 'no "none": no Referer is invalid'],
    ['/b/', 'foo',                                  '[1]', 'no "blocked": a bare Referer is invalid'],
    ['/b/', 'http://example.com/',                  '[]',  'an exact name'],
    ['/b/', 'http://www.example.com/',              '[1]', 'an exact name is not a wildcard'],
    ['/inherit/', 'http://inherited.test/',         '[]',  'the server\'s list is inherited'],
    ['/inherit/', 'http://example.com/',            '[1]', 'the server\'s list only'],
    ['/guard/', 'http://site.test/',                'in',  'if ($invalid_referer): a valid one passes'],
    ['/guard/', 'http://other.test/',               403,   'if ($invalid_referer): return 403'],
);
for my $c (@cases) {
    my ($uri, $ref, $want, $name) = @$c;
    is(get($uri, $ref), $want, "$uri " . ($ref // '(none)') . ": $name");
}
is(get('/', 'http://any.test/', $t->port(1)), '[]',
   'no valid_referers: $invalid_referer is empty');

$t->stop;

# ---- configuration errors -------------------------------------------------

my @bad = (
    ['valid_referers none blocked;',
     qr/\[emerg\] the "none" or "blocked" referers are specified in the "valid_referers" directive without any valid referer/,
     'none and blocked alone'],
    ['valid_referers none ~x;',
     qr/\[emerg\] the "none" or "blocked" referers/, 'a regex is not a valid referer for that'],
    ['valid_referers www.*.com;',
     qr/\[emerg\] invalid hostname or wildcard "www\.\*\.com" in \S+:\d+/, 'a star inside'],
    ['valid_referers a.com A.com;',
     qr/\[emerg\] conflicting parameter "A\.com"/, 'the same name twice'],
    ['valid_referers a.com .a.com;',
     qr/\[emerg\] conflicting parameter "\.a\.com"/, '.name after the name'],
    ['valid_referers ~;',  qr/\[emerg\] empty regex in "~"/, 'an empty regex'],
    ['valid_referers "~(";', qr/\[emerg\] pcre2_compile\(\) failed/, 'a bad regex'],
    ['valid_referers "";', qr/\[emerg\] invalid referer ""/, 'an empty referer'],
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
my $u = Test::Ringx->new;
$u->write_config(<<'EOF');
events { }
http { valid_referers a.com; server { listen 127.0.0.1:%%PORT_0%%; } }
EOF
my ($code, undef, $err) = $u->ringx('-t');
like($err, qr/"valid_referers" directive is not allowed here/, 'not at http level');

done_testing;
