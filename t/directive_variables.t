#!/usr/bin/perl
# directive_variables.t: directives nginx lets hold variables, here
# "expires $var" (with a map, and after "modified") and "index $var.html":
# the value is made for each request and read by the directive's own
# grammar, as nginx 1.22 does on the same config (checked by hand: the
# same Expires/Cache-Control for each value, none for a bad one).

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
    map $arg_kind $expires {
        default  off;
        img      1h;
        old      -1h;
        never    epoch;
        forever  max;
        daily    @23h59m;
        empty    "";
        bad      bogus;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        root html;
        location = /e { expires $expires; return 200 "e\n"; }
        location /m/ { expires modified $arg_e; }
        location /ix/ { index $arg_i.html default.html; }
        location /abs/ { alias html/ix/; index $arg_i /ix/default.html; }
    }
}
EOF
$t->write_file('html/m/f.txt', "m\n");
$t->write_file('html/ix/a.html', "A\n");
$t->write_file('html/ix/b.html', "B\n");
$t->write_file('html/ix/default.html', "D\n");
$t->write_file('html/secret.html', "S\n");
$t->run;
my $P = $t->port(0);

sub head_of {
    my ($path) = @_;
    my $r = $t->http_get($P, $path) // '';
    my ($exp) = $r =~ /\r\nExpires: ([^\r]*)/;
    my ($cc) = $r =~ /\r\nCache-Control: ([^\r]*)/;
    my ($st) = $r =~ m{^HTTP/1.1 (\d+)};
    return ($st // 0, $exp, $cc, $r);
}

my ($st, $exp, $cc) = head_of('/e?kind=img');
is $st, 200, 'expires $var: 200';
is $cc, 'max-age=3600', 'expires $var = 1h: max-age=3600';
ok defined $exp, '... and an Expires';
(undef, $exp, $cc) = head_of('/e?kind=old');
is $cc, 'no-cache', 'expires $var = -1h: no-cache';
(undef, $exp, $cc) = head_of('/e?kind=never');
is $exp, 'Thu, 01 Jan 1970 00:00:01 GMT', 'expires $var = epoch';
(undef, $exp, $cc) = head_of('/e?kind=forever');
is $cc, 'max-age=315360000', 'expires $var = max';
(undef, $exp, $cc) = head_of('/e?kind=daily');
like $cc // '', qr/^max-age=\d+$/, 'expires $var = @23h59m: a max-age';
for my $k (qw(none empty bad)) {
    (undef, $exp, $cc) = head_of("/e?kind=$k");
    ok !defined $exp && !defined $cc, "expires \$var = $k: no Expires";
}
ok $t->log_contains(qr/\[error\].*invalid "expires" value "bogus"/),
    'a bad value is logged by name';

(undef, $exp, $cc) = head_of('/m/f.txt?e=2h');
like $cc // '', qr/^max-age=(?:7200|71\d\d)$/,
    'expires modified $var: from the Last-Modified time';   # the file was written a moment ago
(undef, $exp, $cc) = head_of('/m/f.txt?e=@1h');
ok !defined $exp, 'expires modified $var = @1h: none (daily with modified)';

sub body_of { my $r = $t->http_get($P, $_[0]) // ''; $r =~ s/^.*?\r\n\r\n//s; $r }
is body_of('/ix/?i=a'), "A\n", 'index $arg_i.html: a.html';
is body_of('/ix/?i=b'), "B\n", 'index $arg_i.html: b.html';
is body_of('/ix/?i=zz'), "D\n", 'index $arg_i.html missing: the next name';
is body_of('/ix/'), "D\n", 'index $arg_i.html with no arg: the next name';
is body_of('/ix/?i=../secret'), "D\n",
    'a name with a ".." segment is no candidate';
ok $t->log_contains(qr/\[error\].*index "\.\.\/secret\.html" is unsafe/),
    '... and is logged';
is body_of('/abs/?i=b.html'), "B\n", 'index $arg_i: a file by name';
is body_of('/abs/?i='), "D\n", 'index $arg_i empty: skipped, the absolute last';

$t->stop;

# nginx loads a certificate named by variables at each handshake; ringx
# refuses it by name at -t instead of looking for a file called "$..."
my $u = Test::Ringx->new;
$u->write_config(<<'EOF');
events { }
http {
    server {
        listen 127.0.0.1:%%PORT_0%% ssl;
        ssl_certificate conf/$ssl_server_name.crt;
        ssl_certificate_key conf/a.key;
    }
}
EOF
my ($rc, undef, $err) = $u->ringx('-t');
isnt $rc, 0, 'ssl_certificate with a variable: -t fails';
like $err, qr/\[emerg\] variables in "ssl_certificate" are not supported by ringx in \S+:5/,
    '... naming the directive, with file:line';

done_testing;
