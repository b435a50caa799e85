#!/usr/bin/perl
# proxy_rewrite.t: the rewriting of proxied response headers (proxy_redirect
# on Location and Refresh; proxy_cookie_domain, proxy_cookie_path and
# proxy_cookie_flags on Set-Cookie) and proxy_set_body, against
# Test::Upstream's /headers and /echo modes; configuration errors with
# nginx's messages.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::Upstream;

my $up = Test::Upstream->new;
$up->start;
my $UP = $up->addr;

my $t = Test::Ringx->new;
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name proxy.test;
        proxy_redirect http://srv.test/ /from-server/;
        proxy_cookie_path /srv/ /s/;

        # proxy_redirect default, with and without a URI part
        location /one/ { proxy_pass http://$UP/headers/; proxy_redirect default; }
        location /plain/ { proxy_pass http://$UP; proxy_redirect default; }
        # inherited rules replace the default one
        location /inherit/ { proxy_pass http://$UP/headers/; }
        location /off/ { proxy_pass http://$UP/headers/; proxy_redirect off; }
        location /rel/ { proxy_pass http://$UP; proxy_redirect / /; }
        location /pair/ {
            proxy_pass http://$UP;
            proxy_redirect http://localhost:8000/two/ /;
            proxy_redirect http://other:8000/two/ http://frontend/one/;
        }
        location /re/ {
            proxy_pass http://$UP;
            proxy_redirect ~^http://([^:/]+):\\d+(/.+)\$ https://\$1\$2;
            proxy_redirect ~*/USER/([^/]+)/(.+)\$ http://\$1.example.com/\$2;
            proxy_redirect ~^named://(?<who>[a-z]+)/ /named/\$who/;
        }
        location /vars/ {
            proxy_pass http://$UP;
            proxy_redirect http://\$host:8000/ http://\$host:\$server_port/v/;
            proxy_redirect http://\$proxy_host/ /px/;
        }
        location /order/ {
            proxy_pass http://$UP;
            proxy_redirect http://a.test/ /first/;
            proxy_redirect http://a.test/x/ /second/;
            proxy_redirect http://b.test/x/ /second/;
        }
        location /combo/ {
            proxy_pass http://$UP/headers/;
            proxy_redirect default;
            proxy_redirect http://other.test/ /o/;
        }

        # cookies
        location /cd/ {
            proxy_pass http://$UP;
            proxy_cookie_domain localhost example.org;
            proxy_cookie_domain .dot.test .repl.test;
            proxy_cookie_domain www.\$host \$host;
            proxy_cookie_domain ~\\.(?P<sl>[-0-9a-z]+\\.[a-z]+)\$ \$sl;
        }
        location /cp/ {
            proxy_pass http://$UP;
            proxy_cookie_path /two/ /;
            proxy_cookie_path ~*^/user/([^/]+) /u/\$1;
            proxy_cookie_path ~^/Case/ /matched/;
            proxy_cookie_path /\$arg_p/ /from-arg/;
            proxy_cookie_path / /three/;
        }
        location /cpinherit/ { proxy_pass http://$UP; }
        location /cpoff/ { proxy_pass http://$UP; proxy_cookie_path off; }
        location /cf/ {
            proxy_pass http://$UP;
            proxy_cookie_flags one httponly;
            proxy_cookie_flags ~^sess secure httponly samesite=lax;
            proxy_cookie_flags strip nosecure nohttponly nosamesite;
            proxy_cookie_flags none samesite=none;
            proxy_cookie_flags v \$arg_f;
            proxy_cookie_flags ~ nosecure samesite=strict;
        }
        location /all/ {
            proxy_pass http://$UP;
            proxy_cookie_domain localhost example.org;
            proxy_cookie_path /two/ /;
            proxy_cookie_flags ~ secure;
        }

        # proxy_set_body
        location /body/ {
            proxy_pass http://$UP/echo/;
            proxy_set_body "a=\$arg_a&b=2";
        }
        location /emptybody/ {
            proxy_pass http://$UP/echo/;
            proxy_set_body "";
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);
my $HOST = "http://proxy.test:$P";

sub enc {
    my ($s) = @_;
    $s =~ s/([^A-Za-z0-9_.~\/:-])/sprintf('%%%02X', ord $1)/ge;
    return $s;
}

# A GET through ringx of PATH with the response headers given as pairs.
sub get {
    my ($path, @pairs) = @_;
    my @q;
    while (my ($k, $v) = splice @pairs, 0, 2) {
        push @q, enc($k) . '=' . enc($v);
    }
    my $uri = $path . (@q ? ($path =~ /\?/ ? '&' : '?') . join('&', @q) : '');
    my $c = $t->raw($P);
    $c->send("GET $uri HTTP/1.1\r\nHost: proxy.test\r\nConnection: close\r\n\r\n");
    return $c->read_response;
}

sub location {
    my ($path, $loc) = @_;
    my $r = get($path, Location => $loc);
    return $r ? $r->{headers}{location} : undef;
}

sub refresh {
    my ($path, $val) = @_;
    my $r = get($path, Refresh => $val);
    return $r ? $r->{headers}{refresh} : undef;
}

sub cookies {
    my ($path, @values) = @_;
    my $r = get($path, map { ('Set-Cookie' => $_) } @values);
    return [ map { $_->[1] } grep { lc $_->[0] eq 'set-cookie' } @{ $r->{header_list} } ];
}

sub cookie { return cookies(@_)->[0] }

# --- proxy_redirect ---------------------------------------------------------

is location('/one/302', "http://$UP/headers/next"), "$HOST/one/next",
    'default: the proxy_pass URL becomes the location, made absolute';
is location('/plain/headers/302', "http://$UP/plain/next"), "$HOST/plain/next",
    'default without a URI part: "URL/" becomes "/"';
is location('/plain/headers/302', '/relative/x'), '/relative/x',
    'a relative Location no rule rewrote stays relative, as nginx';
is location('/plain/headers/302', 'http://elsewhere.test/x'), 'http://elsewhere.test/x',
    'no rule applies: unchanged';
is location('/rel/headers/302', '/relative/x'), "$HOST/relative/x",
    'proxy_redirect / /: a relative redirect gets the host name';

is location('/inherit/302', "http://$UP/headers/next"), "http://$UP/headers/next",
    'rules inherited from the server: no implicit default';
is location('/inherit/302', 'http://srv.test/a'), "$HOST/from-server/a",
    'the server\'s rule applies in the location';
is location('/off/302', 'http://srv.test/a'), 'http://srv.test/a',
    'proxy_redirect off cancels inherited rules';

is location('/pair/headers/302', 'http://localhost:8000/two/some/uri/'),
    "$HOST/some/uri/", 'replacement without scheme and host: made absolute';
is location('/pair/headers/302', 'http://other:8000/two/some/uri/'),
    'http://frontend/one/some/uri/', 'an absolute replacement';
is location('/pair/headers/302', 'http://LOCALHOST:8000/two/x'),
    'http://LOCALHOST:8000/two/x', 'a text rule matches case-sensitively';

is location('/re/headers/302', 'http://host.test:8080/path/x?a=1'),
    'https://host.test/path/x?a=1', 'regex with captures replaces the whole value';
is location('/re/headers/302', 'http://h/user/Bob/page'),
    'http://Bob.example.com/page', '~* matches case-insensitively';
is location('/re/headers/302', 'NAMED://who/x'), 'NAMED://who/x',
    '~ is case-sensitive';
is location('/re/headers/302', 'named://alice/x'), "$HOST/named/alice/",
    'named captures are variables in the replacement';

is location('/vars/headers/302', 'http://proxy.test:8000/a'), "http://proxy.test:$P/v/a",
    'variables in redirect and replacement';
is location('/vars/headers/302', "http://$UP/b"), "$HOST/px/b",
    '$proxy_host in the redirect';

is location('/order/headers/302', 'http://a.test/x/y'), "$HOST/first/x/y",
    'several rules: the first that matches wins';
is location('/order/headers/302', 'http://b.test/x/y'), "$HOST/second/y",
    'several rules: a later one when the first ones do not match';

is location('/combo/302', "http://$UP/headers/z"), "$HOST/combo/z",
    'default combined with explicit rules: default';
is location('/combo/302', 'http://other.test/z'), "$HOST/o/z",
    'default combined with explicit rules: the explicit one';

is refresh('/pair/headers', '5; url=http://localhost:8000/two/x'), '5; url=/x',
    'Refresh: the part after url= is rewritten (and stays relative)';
is refresh('/pair/headers', '0;URL=http://other:8000/two/y'), '0;URL=http://frontend/one/y',
    'Refresh: URL= found case-insensitively';
is refresh('/pair/headers', 'http://localhost:8000/two/x'), 'http://localhost:8000/two/x',
    'Refresh without url= is left alone';
is refresh('/re/headers', '3; url=http://h.test:81/p'), '3; url=https://h.test/p',
    'Refresh: a regex sees only the URL';
is refresh('/one/', "1; url=http://$UP/headers/n"), '1; url=/one/n',
    'Refresh: default rule';

# --- proxy_cookie_domain ----------------------------------------------------

is cookie('/cd/headers', 'a=1; Domain=localhost; Path=/'), 'a=1; Domain=example.org; Path=/',
    'domain replaced';
is cookie('/cd/headers', 'a=1; domain=LocalHost'), 'a=1; domain=example.org',
    'domain matched case-insensitively';
is cookie('/cd/headers', 'a=1; Domain=.localhost'), 'a=1; Domain=.example.org',
    'the attribute\'s leading dot is kept';
is cookie('/cd/headers', 'a=1; Domain=dot.test'), 'a=1; Domain=repl.test',
    'dots at the start of domain and replacement are ignored';
is cookie('/cd/headers', 'a=1; Domain=.DOT.test'), 'a=1; Domain=.repl.test',
    'dotted on both sides';
is cookie('/cd/headers', 'a=1;Domain=localhost.x ;  path=/'), 'a=1;Domain=localhost.x ;  path=/',
    'a domain is matched whole, not as a prefix; an unchanged cookie keeps its bytes';
is cookie('/cd/headers', 'a=1; Domain=www.proxy.test'), 'a=1; Domain=proxy.test',
    'variables in domain and replacement';
is cookie('/cd/headers', 'a=1; Domain=www.Site.test'), 'a=1; Domain=Site.test',
    'regex with a named capture';
is cookie('/cd/headers', 'a=1;Domain=localhost;HttpOnly'), 'a=1; Domain=example.org; HttpOnly',
    'a rewritten cookie is written with "; " between its parts';
is_deeply cookies('/cd/headers', 'a=1; domain=localhost', 'b=2', 'c=3; Domain=.localhost'),
    ['a=1; domain=example.org', 'b=2', 'c=3; Domain=.example.org'],
    'each Set-Cookie header is rewritten';
is cookie('/cd/headers', 'novalue; Domain=localhost'), 'novalue; Domain=localhost',
    'a cookie without name=value is left alone';

# --- proxy_cookie_path ------------------------------------------------------

is cookie('/cp/headers', 'a=1; path=/two/some/uri/'), 'a=1; path=/some/uri/',
    'path prefix replaced';
is cookie('/cp/headers', 'a=1; Path=/USER/bob/x'), 'a=1; Path=/u/bob',
    '~* regex: case-insensitive, the whole value replaced';
is cookie('/cp/headers', 'a=1; Path=/case/x'), 'a=1; Path=/three/case/x',
    '~ regex is case-sensitive (a later rule applied)';
is cookie('/cp/headers', 'a=1; Path=/Case/x'), 'a=1; Path=/matched/',
    '~ regex matches';
is cookie('/cp/headers?p=dyn', 'a=1; Path=/dyn/x'), 'a=1; Path=/from-arg/x',
    'variables in the path';
is cookie('/cp/headers', 'a=1; Path=/two'), 'a=1; Path=/three/two',
    'several rules: the first that matches';
is cookie('/cpinherit/headers', 'a=1; Path=/srv/x'), 'a=1; Path=/s/x',
    'rules inherited from the server';
is cookie('/cpoff/headers', 'a=1; Path=/srv/x'), 'a=1; Path=/srv/x',
    'proxy_cookie_path off cancels them';

# --- proxy_cookie_flags -----------------------------------------------------

is cookie('/cf/headers', 'one=1; Secure'), 'one=1; Secure; HttpOnly',
    'httponly added';
is cookie('/cf/headers', 'ONE=1; httponly'), 'ONE=1; httponly',
    'the cookie name matches case-insensitively; a flag present is kept once';
is cookie('/cf/headers', 'Session=x; Path=/'), 'Session=x; Path=/; Secure; HttpOnly; SameSite=Lax',
    'regex cookie name; several flags added';
is cookie('/cf/headers', 'session=x; samesite=Strict'), 'session=x; samesite=Lax; Secure; HttpOnly',
    'samesite= replaces the value of an existing attribute';
is cookie('/cf/headers', 'strip=1; Secure; HttpOnly; SameSite=None; path=/'), 'strip=1; path=/',
    'nosecure, nohttponly, nosamesite remove the attributes';
is cookie('/cf/headers', 'none=1'), 'none=1; SameSite=None', 'samesite=none';
is cookie('/cf/headers?f=secure', 'v=1'), 'v=1; Secure', 'a flag from a variable';
is cookie('/cf/headers?f=bogus', 'v=1'), 'v=1', 'an unknown flag from a variable is ignored';
ok $t->log_contains(qr/\[error\].*invalid "proxy_cookie_flags" flag "bogus"/),
    'and logged';
is cookie('/cf/headers', 'other=1; Secure; SameSite=Lax'), 'other=1; SameSite=Strict',
    'the catch-all rule ("~") for the other cookies';

is cookie('/all/headers', 'a=1; Domain=localhost; Path=/two/x'),
    'a=1; Domain=example.org; Path=/x; Secure', 'domain, path and flags together';

# --- proxy_set_body ---------------------------------------------------------

{
    my $c = $t->raw($P);
    $c->send("POST /body/x?a=one HTTP/1.1\r\nHost: proxy.test\r\nConnection: close\r\n"
             . "Content-Length: 8\r\n\r\noriginal");
    my $r = $c->read_response;
    is $r->{status}, 200, 'proxy_set_body: proxied';
    my $e = Test::Upstream::parse_echo($r->{body});
    is $e->{body}, 'a=one&b=2', 'the body sent is proxy_set_body\'s';
    my @cl = map { $_->[1] } grep { lc $_->[0] eq 'content-length' } @{ $e->{headers} };
    is_deeply \@cl, [9], 'with its Content-Length';

    my $g = get('/body/y?a=xyz');
    $e = Test::Upstream::parse_echo($g->{body});
    is $e->{body}, 'a=xyz&b=2', 'a GET without a body gets it too';

    $g = get('/emptybody/y');
    $e = Test::Upstream::parse_echo($g->{body});
    @cl = map { $_->[1] } grep { lc $_->[0] eq 'content-length' } @{ $e->{headers} };
    is_deeply [$e->{body}, @cl], ['', 0], 'an empty proxy_set_body: Content-Length: 0';
}

$t->stop;

# --- configuration errors ---------------------------------------------------

sub conf_error {
    my ($name, $body, $msg) = @_;
    my $c = Test::Ringx->new;
    my $text = $c->write_config(<<"EOF");
events { worker_connections 64; }
http {
    server {
        listen 127.0.0.1:%%PORT_0%%;
$body
    }
}
EOF
    my @lines = split /\n/, $text;
    my ($line) = grep { $lines[$_ - 1] =~ /# <-/ } 1 .. @lines;
    my ($rc, $out, $err) = $c->ringx('-t');
    is($rc, 1, "$name: -t fails");
    my $file = $c->conf_file;
    like($err, qr/\[emerg\] \Q$msg\E in \Q$file\E:$line$/m, "$name: $msg")
        or diag($err);
}

conf_error('default with variables',
    "location / { proxy_pass http://\$arg_x;\n proxy_redirect default; # <-\n }",
    '"proxy_redirect default" cannot be used with "proxy_pass" directive with variables');
conf_error('default before proxy_pass',
    "location / { proxy_redirect default; # <-\n proxy_pass http://$UP; }",
    '"proxy_redirect default" should be placed after the "proxy_pass" directive');
conf_error('default at server level', "proxy_redirect default; # <-",
    '"proxy_redirect default" should be placed after the "proxy_pass" directive');
conf_error('off after rules', "proxy_redirect / /;\nproxy_redirect off; # <-",
    '"proxy_redirect" directive is duplicate');
conf_error('rules after off', "proxy_redirect off;\nproxy_redirect / /; # <-",
    '"proxy_redirect" directive is duplicate');
conf_error('bad single parameter', "proxy_redirect sometimes; # <-",
    'invalid parameter "sometimes"');
conf_error('bad regex', "proxy_redirect ~(x /; # <-",
    'pcre2_compile() failed: missing closing parenthesis in "(x"');
conf_error('cookie_domain one parameter', "proxy_cookie_domain localhost; # <-",
    'invalid parameter "localhost"');
conf_error('cookie_path off after rules', "proxy_cookie_path / /a/;\nproxy_cookie_path off; # <-",
    '"proxy_cookie_path" directive is duplicate');
conf_error('cookie_domain rules after off', "proxy_cookie_domain off;\nproxy_cookie_domain a b; # <-",
    '"proxy_cookie_domain" directive is duplicate');
conf_error('cookie_flags unknown flag', "proxy_cookie_flags one secure bogus; # <-",
    'invalid parameter "bogus"');
conf_error('cookie_flags without flags', "proxy_cookie_flags one; # <-",
    'invalid parameter "one"');
conf_error('cookie_flags off twice', "proxy_cookie_flags off;\nproxy_cookie_flags off; # <-",
    '"proxy_cookie_flags" directive is duplicate');
conf_error('set_body twice', "proxy_set_body a;\nproxy_set_body b; # <-",
    '"proxy_set_body" directive is duplicate');

done_testing;
