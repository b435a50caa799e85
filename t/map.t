#!/usr/bin/perl
# map.t: the map module: exact keys (without regard to case), hostnames
# wildcards and their priority, regexes in order with positional and named
# captures in the value, variables in values, default, include, the value
# cached per request unless `volatile`, and nginx's configuration errors.

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

    map $arg_k $exact {
        default    dflt;
        foo        FOO;
        Bar        bar-value;
        ""         empty;
        \default   literal-default;
        \~tilde    literal-tilde;
        "two words" spaced;
        *.example.com not-a-wildcard;
    }

    map $arg_h $hn {
        hostnames;
        default          none;
        example.com      exact;
        *.example.com    head;
        *.a.example.com  deeper;
        .example.org     org;
        www.example.*    tail;
        www.example.co.* longer-tail;
        ~^re\.           regex;
    }

    map $uri $re {
        default none;
        /exact                           exact-wins;
        ~^/exact                         regex-loses;
        ~^/user/(\d+)/(?<action>\w+)$    "user=$1 action=$action";
        ~*^/CASE/                        caseless;
        ~^/case/                         "never: the caseless regex is first";
        ~^/var/(.*)                      "host=$host rest=$1";
        ~^/first                         first;
        ~^/fir                           second;
    }

    map $arg_x $included {
        default none;
        include map.inc;
    }

    map $uri $setter {
        ~^/c/(?<word>[a-z]+) set;
        default none;
    }
    map $word $cached { default "[$word]"; }
    map $word $fresh { volatile; default "[$word]"; }

    map $arg_e $er { ~^$ never; ~.* any; default dflt; }

    map "$arg_a-$arg_b" $joined { a-b both; default "other:$arg_a"; }

    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name localhost;
        location /k { return 200 "$exact"; }
        location /h { return 200 "$hn"; }
        location /inc { return 200 "$included"; }
        location /j { return 200 "$joined"; }
        location /er { return 200 "$er"; }
        location /c/ {
            add_header X-Cached $cached;
            add_header X-Fresh $fresh;
            return 200 "$cached $fresh $setter";
        }
        location /hdr { add_header X-Map $re; return 200 "body"; }
        location / { return 200 "$re"; }
    }
}
EOF
$t->write_file('conf/map.inc', <<'EOF');
# lines of the map block, from a file
a   from-include;
b   "from include b";
EOF
$t->run;
my $P = $t->port(0);

sub get {
    my ($uri, %h) = @_;
    my $c = $t->raw($P);
    my $host = delete $h{host} // 'localhost';
    my $extra = join '', map { "$_: $h{$_}\r\n" } sort keys %h;
    $c->send("GET $uri HTTP/1.1\r\nHost: $host\r\n${extra}Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r;
}

sub body_is {
    my ($uri, $want, $name) = @_;
    my $r = get($uri);
    is($r && $r->{status}, 200, "$name: 200");
    is($r && $r->{body}, $want, $name);
}

# exact keys
body_is('/k?k=foo', 'FOO', 'exact key');
body_is('/k?k=FoO', 'FOO', 'exact keys match without regard to case');
body_is('/k?k=BAR', 'bar-value', 'a key written with capitals matches');
body_is('/k', 'empty', 'an absent variable is the empty string: the "" key');
body_is('/k?k=', 'empty', 'an empty argument: the "" key');
body_is('/k?k=default', 'literal-default', '\default is a literal key');
body_is('/k?k=~tilde', 'literal-tilde', '\~ is a literal key, not a regex');
body_is('/k?k=two%20words', 'dflt', 'arguments are not decoded: no match');
body_is('/k?k=x.example.com', 'dflt', 'without hostnames, * is no wildcard');
body_is('/k?k=*.example.com', 'not-a-wildcard', '... but an exact key');
body_is('/k?k=nothing', 'dflt', 'no key: the default');

# hostnames: exact, longest head wildcard, longest tail wildcard, regex
body_is('/h?h=example.com', 'exact', 'hostnames: exact');
body_is('/h?h=EXAMPLE.com', 'exact', 'hostnames: without regard to case');
body_is('/h?h=example.com.', 'exact', 'hostnames: a trailing dot is dropped');
body_is('/h?h=www.example.com', 'head', '*.example.com beats www.example.*');
body_is('/h?h=x.y.example.com', 'head', '*.example.com: any depth');
body_is('/h?h=x.a.example.com', 'deeper', 'the longest head wildcard wins');
body_is('/h?h=a.example.com', 'head', '*.a.example.com needs a label more');
body_is('/h?h=example.org', 'org', '.example.org matches example.org');
body_is('/h?h=m.example.org', 'org', '.example.org matches its subdomains');
body_is('/h?h=www.example.net', 'tail', 'www.example.*');
body_is('/h?h=www.example.co.uk', 'longer-tail', 'the longest tail wildcard wins');
body_is('/h?h=www.example', 'none', 'www.example.* needs something after the dot');
body_is('/h?h=re.example.com', 'head', 'wildcards come before regexes');
body_is('/h?h=re.other', 'regex', 'then regexes');
body_is('/h?h=other.com', 'none', 'hostnames: default');

# regexes, in order, after exact keys; captures in the value
body_is('/exact', 'exact-wins', 'an exact key beats a regex');
body_is('/exactly', 'regex-loses', 'the regex when the exact key does not match');
body_is('/user/42/edit', 'user=42 action=edit',
        'positional and named captures in the value');
body_is('/Case/x', 'caseless', '~* is caseless');
body_is('/case/x', 'caseless', 'regexes are tried in order');
body_is('/var/a/b', 'host=localhost rest=a/b', 'variables and captures in a value');
body_is('/first', 'first', 'the first matching regex wins');
body_is('/firm', 'second', 'a later regex when the first does not match');
body_is('/zzz', 'none', 'nothing matches: the default');

body_is('/er?e=x', 'any', 'a regex on a value');
body_is('/er', 'dflt', 'regexes are not tried on an empty string (nginx)');

# include; a source with several variables
body_is('/inc?x=a', 'from-include', 'include: a key from the file');
body_is('/inc?x=b', 'from include b', 'include: a quoted value');
body_is('/inc?x=c', 'none', 'include: the default of the block');
body_is('/j?a=a&b=b', 'both', 'a source with two variables');
body_is('/j?a=z', 'other:z', 'a default with a variable');

# a map in a header (evaluated by the headers filter)
{
    my $r = get('/hdr/x');
    is($r->{headers}{'x-map'}, 'none', 'map value in add_header');
}

# cached per request: $cached is computed once, while $word is unset, and
# keeps that value; the volatile $fresh is computed again after $setter's
# regex has set $word
{
    my $r = get('/c/word');
    is($r->{body}, '[] [] set', 'return: values before and after the regex');
    is($r->{headers}{'x-cached'}, '[]', 'a map value is cached for the request');
    is($r->{headers}{'x-fresh'}, '[word]', 'a volatile map is computed again');
}

$t->stop;

###########################################################################
# configuration errors, in nginx's words, with file:line

sub conf_error {
    my ($name, $block, $msg, %o) = @_;
    my $e = Test::Ringx->new;
    my $conf = <<"EOF";
events { worker_connections 64; }
http {
$block
    server { listen 127.0.0.1:%%PORT_0%%; }
}
EOF
    $e->write_config($conf);
    $e->write_file($_, $o{files}{$_}) for keys %{ $o{files} || {} };
    my @lines = split /\n/, $conf;
    my ($line) = grep { $lines[$_ - 1] =~ /# <-/ } 1 .. @lines;
    my $file = $o{in} ? $e->prefix . "/$o{in}" : $e->conf_file;
    $line = $o{line} if $o{line};
    my ($rc, undef, $err) = $e->ringx('-t');
    is($rc, 1, "$name: -t fails");
    like($err, qr/\[emerg\] \Q$msg\E in \Q$file\E:$line$/m, "$name: message")
        or diag($err);
}

conf_error('duplicate default', <<'EOF', 'duplicate default map parameter');
    map $uri $m {
        default a;
        default b;   # <-
    }
EOF
conf_error('three parameters', <<'EOF', 'invalid number of the map parameters');
    map $uri $m {
        a b c;   # <-
    }
EOF
conf_error('unknown flag', <<'EOF', 'invalid number of the map parameters');
    map $uri $m {
        hostname;   # <-
    }
EOF
conf_error('duplicate key', <<'EOF', 'conflicting parameter "foo"');
    map $uri $m {
        foo 1;
        FOO 2;   # <-
    }
EOF
conf_error('dot wildcard and exact', <<'EOF', 'conflicting parameter ".example.com"');
    map $uri $m {
        hostnames;
        example.com 1;
        .example.com 2;   # <-
    }
EOF
conf_error('bad wildcard', <<'EOF', 'invalid hostname or wildcard "www.*.com"');
    map $uri $m {
        hostnames;
        www.*.com 1;   # <-
    }
EOF
conf_error('bad regex', <<'EOF', 'pcre2_compile() failed: missing closing parenthesis in "(abc"');
    map $uri $m {
        ~(abc 1;   # <-
    }
EOF
conf_error('variable name', <<'EOF', 'invalid variable name "m"');
    map $uri m {   # <-
    }
EOF
conf_error('core variable', <<'EOF', 'the duplicate "uri" variable');
    map $args $uri {   # <-
    }
EOF
conf_error('unknown variable in a value', <<'EOF', 'unknown "nosuch" variable');
    map $uri $m {
        a $nosuch;   # <-
    }
EOF
conf_error('error in an included file', <<'EOF', 'invalid number of the map parameters',
    map $uri $m {
        include bad.inc;
    }
EOF
    files => { 'conf/bad.inc' => "a 1;\nb;\n" }, in => 'conf/bad.inc', line => 2);
conf_error('not in server', <<'EOF', '"map" directive is not allowed here');
    server { map $uri $m { }   # <-
    }
EOF

# map_hash_* are accepted (and ignored: the tables grow as needed)
{
    my $e = Test::Ringx->new;
    $e->write_config(<<'EOF');
events { worker_connections 64; }
http {
    map_hash_max_size 4096;
    map_hash_bucket_size 128;
    server { listen 127.0.0.1:%%PORT_0%%; }
}
EOF
    my ($rc, undef, $err) = $e->ringx('-t');
    is($rc, 0, 'map_hash_max_size and map_hash_bucket_size are accepted');
}

done_testing;
