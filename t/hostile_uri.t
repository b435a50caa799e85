#!/usr/bin/perl

# Path traversal in every encoding, end to end (t/lib/Test/Hostile.pm):
# against a static root (/static/), an alias (/al/), a proxy_pass with a
# URI part (/p/ -> /base/: the upstream must get a normalised URI under
# /base/) and the proxy_pass without one (location /: the client's URI as
# sent, which ringx has already checked cannot climb above the root).
# Encodings: ../, %2e%2e, %2f, double encoding (%252e), backslashes,
# NUL (%00), overlong UTF-8 (%c0%ae), ";" parameters. No response may
# carry a file from outside the root. The choices are in
# docs/reliability.md, "Hostile input".

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Hostile;

my $h = Test::Hostile->new(server => <<'EOF');
        location /ap { alias %%PREFIX%%/html/aliased/; }
        location /up/ { proxy_pass http://pool/base; }
EOF
my $t = $h->t;
$t->write_file('html/aliased/sub/in.txt', "alias sub\n");
$t->write_file('html/static/sub/in.txt', "static sub\n");
$t->write_file('html/static/dotdot..txt', "dots\n");
$t->write_file('html/static/back\\slash.txt', "backslash file\n");

my $H = "Host: localhost\r\n";

# Runs one traversal: GET $uri; $want is a status; $up the URI the
# upstream must receive (undef: nothing), $body the expected body.
sub trav {
    my ($uri, $want, %o) = @_;
    my @up = defined $o{up} ? (up => [['GET', $o{up}, '']]) : ();
    my $r = $h->case("GET $uri", "GET $uri HTTP/1.1\r\n$H\r\n", $want, @up,
                     keep => $want == 404 || $want == 403, check => sub {
        my ($r) = @_;
        unlike($r->{body}, qr/SECRET/, "GET $uri: no secret");
        is($r->{body}, $o{body}, "GET $uri: body") if defined $o{body};
    });
    return $r;
}

###########################################################################
# a static root: html/static/ under html/, which holds secret.txt;
# prefix/secret.txt is outside html/

trav('/static/ok.txt', 200, body => "static ok\n");
trav('/static/sub/../ok.txt', 200, body => "static ok\n");
trav('/static/sub/%2e%2e/ok.txt', 200, body => "static ok\n");
trav('/static/sub/%2E%2E%2Fok.txt', 200, body => "static ok\n");
trav('/static/./ok.txt', 200, body => "static ok\n");
trav('/static/%2e/ok.txt', 200, body => "static ok\n");
trav('/static//ok.txt', 200, body => "static ok\n");
trav('/static/dotdot..txt', 200, body => "dots\n");
trav('/static/back\\slash.txt', 200, body => "backslash file\n");
trav('/static/back%5cslash.txt', 200, body => "backslash file\n");

# climbing above the root of the URI: 400, whatever the encoding
for my $u ('/static/../../secret.txt', '/static/%2e%2e/%2e%2e/secret.txt',
           '/static/%2E%2E/%2E%2E/secret.txt', '/static/..%2f..%2fsecret.txt',
           '/static/%2e%2e%2f%2e%2e%2fsecret.txt', '/static/.%2e/.%2e/secret.txt',
           '/static/%2e./%2e./secret.txt', '/static/%2f..%2f..%2fsecret.txt',
           '/static/sub/../../../secret.txt', '/..', '/../secret.txt', '/%2e%2e',
           '/%2e%2e%2fsecret.txt', '/./../secret.txt', '/x/../../secret.txt') {
    trav($u, 400);
}
$h->logged(qr/client sent invalid request target/, 'log: invalid request target');

# NUL and broken escapes: 400
for my $u ('/static/ok.txt%00', '/static/ok.txt%00.jpg', '/static/%00/../ok.txt',
           '/static/%', '/static/%2', '/static/%zz', '/static/%g0', '/%00') {
    trav($u, 400);
}

# one level up from /static/ is the root's /: no longer /static/, so
# location / proxies it (the client's URI as sent, nginx's rule for a
# proxy_pass without a URI); the file is never served
trav('/static/../secret.txt', 200, up => '/static/../secret.txt');
trav('/static/%2e%2e/secret.txt', 200, up => '/static/%2e%2e/secret.txt');
trav('/static/..%2fsecret.txt', 200, up => '/static/..%2fsecret.txt');
trav('/static/%2e%2e', 200, up => '/static/%2e%2e');

# what only looks like a traversal: a name with dots, a backslash, a
# double encoding, an overlong UTF-8 dot: no such file, 404
for my $u ('/static/%252e%252e/secret.txt', '/static/%252e%252e%252fsecret.txt',
           '/static/..\\secret.txt', '/static/..%5csecret.txt', '/static/..%5c..%5csecret.txt',
           '/static/%c0%ae%c0%ae/secret.txt', '/static/%c0%ae%c0%ae%c0%afsecret.txt',
           '/static/%e0%80%ae%e0%80%ae/secret.txt', '/static/%c0%2e%c0%2e/secret.txt',
           '/static/....//secret.txt', '/static/...', '/static/..;/secret.txt',
           '/static/%u002e%u002e/secret.txt') {
    trav($u, $u =~ /%u0/ ? 400 : 404);
}

###########################################################################
# alias: /al/ -> html/aliased/, and /ap -> html/aliased/ (nginx's
# "off-by-slash": /ap../x would map to html/aliased/../x)

trav('/al/ok.txt', 200, body => "alias ok\n");
trav('/al/sub/in.txt', 200, body => "alias sub\n");
trav('/al/sub/../ok.txt', 200, body => "alias ok\n");
trav('/al/sub/%2e%2e%2fok.txt', 200, body => "alias ok\n");
trav('/ap/ok.txt', 200, body => "alias ok\n");
for my $u ('/al/../../secret.txt', '/al/%2e%2e/%2e%2e/secret.txt',
           '/al/..%2f..%2fsecret.txt', '/al/%2e%2e%2f%2e%2e%2fsecret.txt',
           '/al/ok.txt%00', '/ap/../../secret.txt', '/ap/%2e%2e%2f%2e%2e%2fsecret.txt') {
    trav($u, 400);
}
for my $u ('/al/%252e%252e/secret.txt', '/al/..\\secret.txt', '/al/..%5c..%5csecret.txt',
           '/al/%c0%ae%c0%ae/secret.txt', '/al/....//secret.txt',
           '/ap/..%5csecret.txt', '/ap/%252e%252e%252fsecret.txt') {
    trav($u, 404);
}
# the off-by-slash: the remainder after /ap starts with "..": refused
# (nginx would serve html/secret.txt)
for my $u ('/ap../secret.txt', '/ap..', '/ap../', '/ap../static/ok.txt', '/ap%2e%2e/secret.txt',
           '/ap.%2e/secret.txt') {
    trav($u, 404);
}
$h->logged(qr/\[error\] .*URI "\/ap\.\.\/secret.txt" would leave the alias of location "\/ap"/,
           'log: would leave the alias');
trav('/ap.../x', 404);
trav('/ap..x', 404);
# "/ap/../secret.txt" resolves to /secret.txt: proxied by location /
trav('/ap/../secret.txt', 200, up => '/ap/../secret.txt');
trav('/al/%2e%2e/secret.txt', 200, up => '/al/%2e%2e/secret.txt');

###########################################################################
# proxy_pass with a URI part: the upstream gets the normalised path under
# /base/, re-escaped, never a dot segment

my %p = (
    '/p/ok.txt'                       => '/base/ok.txt',
    '/p/sub/../ok.txt'                => '/base/ok.txt',
    '/p/sub/%2e%2e/ok.txt'            => '/base/ok.txt',
    '/p/sub/%2e%2e%2fok.txt'          => '/base/ok.txt',
    '/p/sub/.%2e/./ok.txt'            => '/base/ok.txt',
    '/p/a%2fb'                        => '/base/a/b',
    '/p/%252e%252e/secret.txt'        => '/base/%252e%252e/secret.txt',
    '/p/%252e%252e%252fsecret.txt'    => '/base/%252e%252e%252fsecret.txt',
    '/p/..\\secret.txt'               => '/base/..%5Csecret.txt',
    '/p/..%5c..%5csecret.txt'         => '/base/..%5C..%5Csecret.txt',
    '/p/%c0%ae%c0%ae/secret.txt'      => '/base/%C0%AE%C0%AE/secret.txt',
    '/p/%c0%ae%c0%ae%c0%afsecret.txt' => '/base/%C0%AE%C0%AE%C0%AFsecret.txt',
    '/p/....//secret.txt'             => '/base/..../secret.txt',
    '/p/..;/secret.txt'               => '/base/..;/secret.txt',
    '/p/x%3f..%2f..%2fy?a=../b'       => '/base/y?a=../b',
    '/p/x%3f../y'                     => '/base/x%3F../y',
    '/p/%23/..%2f'                    => '/base/',
    '/p/%20..%20/x'                   => '/base/%20..%20/x',
    '/up/x'                           => '/basex',
);
for my $u (sort keys %p) {
    trav($u, 200, up => $p{$u});
}
# a resolved path: the upstream never sees a "." or ".." segment
{
    my @bad;
    $h->up->reset;
    for my $u ('/p/a/./b/../../c', '/p/q/%2e/%2e%2e/p2/x', '/p//.//x') {
        my $c = $t->raw($t->port(0));
        $c->send("GET $u HTTP/1.1\r\n${H}Connection: close\r\n\r\n");
        my $r = $c->read_response(timeout => 3);
        push @bad, $u unless $r && $r->{status} == 200;
        $c->close;
    }
    my @uris = map { $_->{uri} } $h->up->requests;
    is_deeply(\@uris, ['/base/c', '/base/p2/x', '/base/x'], 'dot segments resolved before /base/')
        or diag(explain(\@uris, \@bad));
}
# out of /p/ by "..": another location takes it (here location /)
trav('/p/../secret.txt', 200, up => '/p/../secret.txt');
trav('/p/%2e%2e/p/x', 200, up => '/base/x');
for my $u ('/p/../../secret.txt', '/p/%2e%2e%2f%2e%2e%2fsecret.txt', '/p/%2E%2E/%2E%2E/secret.txt',
           '/p/ok.txt%00.jpg', '/p/%00', '/p/%zz') {
    trav($u, 400);
}

$h->done;
done_testing;
