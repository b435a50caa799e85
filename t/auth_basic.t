#!/usr/bin/perl
# auth_basic.t: auth_basic and auth_basic_user_file: every hash format
# (crypt(3) DES/MD5/SHA-256/SHA-512/yescrypt, apr1, {PLAIN}, {SHA},
# {SSHA}), wrong password, unknown user, missing and malformed
# credentials, the challenge and its realm (variables, quoting), `off`
# (nested, and from a variable), a user file named by variables, a
# missing or unreadable file, the per-second re-read of a changed file,
# $remote_user, and satisfy all/any with allow/deny. Log lines are
# nginx's.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use MIME::Base64 qw(encode_base64);
use Time::HiRes qw(sleep);
use Test::Ringx;

sub openssl_passwd {
    my ($opt, $pw) = @_;
    my $out = `openssl passwd $opt '$pw' 2>/dev/null`;
    chomp $out;
    return $? == 0 && $out =~ /^\$/ ? $out : undef;
}

my $have_sha = eval { require Digest::SHA; 1 };

# user => [password, hash or undef (skipped), what]
my @users = (
    ['plain',   'pw-plain',  '{PLAIN}pw-plain',                   '{PLAIN}'],
    ['md5',     'pw-md5',    openssl_passwd('-1', 'pw-md5'),      'crypt MD5 ($1$, openssl passwd -1)'],
    ['sha256',  'pw-sha256', openssl_passwd('-5', 'pw-sha256'),   'crypt SHA-256 ($5$, openssl passwd -5)'],
    ['sha512',  'pw-sha512', openssl_passwd('-6', 'pw-sha512'),   'crypt SHA-512 ($6$, openssl passwd -6)'],
    ['apr1',    'pw-apr1',   openssl_passwd('-apr1', 'pw-apr1'),  'Apache apr1 (openssl passwd -apr1)'],
    ['apr1long', 'a much longer password of 40 characters!',
        openssl_passwd('-apr1', 'a much longer password of 40 characters!'),
        'apr1 with a password longer than 16 bytes'],
    ['des',     'pw-des',    crypt('pw-des', 'Xy'),               'crypt DES (Perl crypt)'],
    ['yescrypt', 'pw-yes',   do {
        my $h = crypt('pw-yes', '$y$j9T$F5Jx5fExrKuPp53xLKQ..1$');
        defined $h && $h =~ /^\$y\$/ ? $h : undef }, 'crypt yescrypt ($y$, Perl crypt)'],
    ['sha',     'pw-sha',    $have_sha
        ? '{SHA}' . encode_base64(Digest::SHA::sha1('pw-sha'), '') : undef,
        '{SHA} (Digest::SHA)'],
    ['ssha',    'pw-ssha',   $have_sha
        ? '{SSHA}' . encode_base64(Digest::SHA::sha1('pw-ssha' . 'salt1234')
                                   . 'salt1234', '') : undef,
        '{SSHA} (Digest::SHA)'],
);

my $file = "# users\r\n"
    . join('', map { defined $_->[2] ? "$_->[0]:$_->[2]\n" : '' } @users)
    . "#commented:{PLAIN}x\n"
    . "crlf:{PLAIN}pw-crlf\r\n"
    . "comment:{PLAIN}pw-comment:Full Name\n"
    . "nohash:\n"
    . "badhash:\$9\$nonsense\n"
    . "last:{PLAIN}pw-last";          # no newline at the end

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
        server_name localhost;
        root html;
        auth_basic "Restricted";
        auth_basic_user_file htpasswd;
        location / { }
        location /open/ { auth_basic off; }
        location /nested/ {
            auth_basic "Nested \"quoted\" \\ realm";
            location /nested/off/ { auth_basic off; }
        }
        location /var/ { auth_basic "Realm of $host $arg_r"; }
        location /varoff/ { auth_basic $arg_realm; }
        location /team/ { auth_basic_user_file htpasswd_$arg_team; }
        location /missing/ { auth_basic_user_file %%PREFIX%%/conf/nonexistent; }
        location /unreadable/ { auth_basic_user_file htpasswd_locked; }
        location /changing/ { auth_basic_user_file htpasswd_changing; }
        location /errpage/ { error_page 401 /e401.html; }
        location /errloop/ { error_page 401 /errloop/e401.html; }
        location = /e401.html { auth_basic off; }
        location /who/ { auth_basic off; return 200 "user=[$remote_user]\n"; }

        location /any_allow/ { satisfy any; allow 127.0.0.1; deny all; }
        location /any_deny/  { satisfy any; deny all; }
        location /any_nomatch/ { satisfy any; deny 10.0.0.0/8; }
        location /any_noauth/ { satisfy any; auth_basic off; deny all; }
        location /any_nofile/ { satisfy any; deny all;
                                auth_basic_user_file %%PREFIX%%/conf/nonexistent; }
        location /all_allow/ { satisfy all; allow 127.0.0.1; deny all; }
        location /all_deny/  { deny all; }
    }
}
EOF
$t->write_file_raw('conf/htpasswd', $file);
$t->write_file_raw('html/e401.html', "custom 401\n");
$t->write_file_raw('html/errloop/e401.html', "protected 401 page\n");
$t->write_file_raw('conf/htpasswd_red', "ann:{PLAIN}red\n");
$t->write_file_raw('conf/htpasswd_blue', "ann:{PLAIN}blue\n");
$t->write_file_raw('conf/htpasswd_locked', "plain:{PLAIN}pw-plain\n");
chmod 0000, $t->prefix . '/conf/htpasswd_locked';
$t->write_file_raw('conf/htpasswd_changing', "ann:{PLAIN}old\n");
for my $d ('', qw(errpage errloop open nested nested/off var varoff team missing unreadable
                  changing any_allow any_deny any_nomatch any_noauth any_nofile
                  all_allow all_deny)) {
    $t->write_file_raw("html/$d/f", "secret\n");
}
$t->expect_log(qr/\[crit\] .*open\(\) ".*htpasswd_locked" failed \(13: Permission denied\)/);
$t->expect_log(qr/\[crit\] .*crypt\(\) failed/);
$t->run;
my $P = $t->port(0);

sub basic { return 'Basic ' . encode_base64(join(':', @_), '') }

sub req {
    my ($uri, $auth) = @_;
    my $c = $t->raw($P);
    $c->send("GET $uri HTTP/1.1\r\nHost: localhost\r\n"
             . (defined $auth ? "Authorization: $auth\r\n" : '')
             . "Connection: close\r\n\r\n");
    my $r = $c->read_response(timeout => 3);
    $c->close;
    return $r // { status => 0, headers => {}, body => '' };
}

sub status { return req(@_)->{status} }

# ---- every hash format --------------------------------------------------

for my $u (@users) {
    my ($user, $pw, $hash, $what) = @$u;
    SKIP: {
        skip "$what: cannot make the hash here", 2 unless defined $hash;
        is(status('/f', basic($user, $pw)), 200, "$what: right password");
        is(status('/f', basic($user, "$pw-wrong")), 401, "$what: wrong password");
    }
}
is(status('/f', basic('crlf', 'pw-crlf')), 200, 'a CRLF line');
is(status('/f', basic('comment', 'pw-comment')), 200, 'a third field (comment) is ignored');
is(status('/f', basic('last', 'pw-last')), 200, 'the last line without a newline');
is(status('/f', basic('#commented', 'x')), 401, 'a # line is a comment');
is(status('/f', basic('plain', 'pw-plain:more')), 401, 'the password runs to the end: ":more" is part of it');

ok($t->log_contains(qr/\[error\] .*user "md5": password mismatch, client: 127\.0\.0\.1, server: localhost, request: "GET \/f HTTP\/1\.1"/),
   'password mismatch logged in nginx\'s words');

# ---- unknown user, missing and malformed credentials ---------------------

my $r = req('/f', basic('ghost', 'x'));
is($r->{status}, 401, 'unknown user: 401');
like($r->{headers}{'www-authenticate'}, qr/^Basic realm="Restricted"$/, 'unknown user: challenge');
my $path = $t->prefix . '/conf/htpasswd';
ok($t->log_contains(qr/\[error\] .*user "ghost" was not found in "\Q$path\E"/),
   'unknown user logged with the file\'s full path');

$r = req('/f');
is($r->{status}, 401, 'no credentials: 401');
is($r->{headers}{'www-authenticate'}, 'Basic realm="Restricted"', 'no credentials: the challenge');
like($r->{body}, qr/<title>401 Authorization Required<\/title>/, 'nginx\'s 401 page');
is($r->{reason}, 'Unauthorized', 'status line: 401 Unauthorized');
ok($t->log_contains(qr/\[info\] .*no user\/password was provided for basic authentication, client: 127\.0\.0\.1/),
   'no credentials: logged at info');

for my $bad (['Bearer abc',                      'not Basic'],
             ['Basic',                           'Basic without credentials'],
             ['Basic !!!not-base64!!!',          'not base64'],
             ['Basic ' . encode_base64('plainpw-plain', ''), 'no colon'],
             ['Basic ' . encode_base64(':pw-plain', ''),     'an empty user'],
             ['Basic ' . encode_base64('plain:pw-plain', '') . '=', 'a stray = after the padding']) {
    my ($auth, $what) = @$bad;
    $r = req('/f', $auth);
    is($r->{status}, 401, "malformed Authorization ($what): 401");
    ok(defined $r->{headers}{'www-authenticate'}, "malformed Authorization ($what): a challenge");
}
is(status('/f', 'basic ' . encode_base64('plain:pw-plain', '')), 200, '"basic" in any case');
is(status('/f', 'Basic    ' . encode_base64('plain:pw-plain', '')), 200, 'spaces before the credentials');
is(status('/f', 'Basic ' . encode_base64('Plain:pw-plain', '')), 401, 'user names are case-sensitive');
is(status('/f', basic('nohash', '')), 500, 'an empty hash: crypt() refuses it, 500 as nginx');
is(status('/f', basic('badhash', 'x')), 500, 'an unknown $9$ scheme: 500 as nginx');

# ---- realm, off ------------------------------------------------------------

is(status('/open/f'), 200, 'auth_basic off in a location');
$r = req('/nested/f');
is($r->{headers}{'www-authenticate'}, 'Basic realm="Nested \"quoted\" \\\\ realm"',
   'quotes and backslashes in the realm are escaped');
is(status('/nested/off/f'), 200, 'auth_basic off in a nested location');
is(status('/nested/f', basic('plain', 'pw-plain')), 200, 'the nested location inherits the user file');
$r = req('/var/f?r=two');
is($r->{headers}{'www-authenticate'}, 'Basic realm="Realm of localhost two"', 'variables in the realm');
is(status('/varoff/f?realm=off'), 200, 'a realm that evaluates to "off" turns auth off (nginx)');
$r = req('/varoff/f?realm=on');
is($r->{headers}{'www-authenticate'}, 'Basic realm="on"', 'a realm from a variable');

$r = req('/errpage/f');
is($r->{status}, 401, 'error_page 401: the status stays 401');
is($r->{body}, "custom 401\n", 'error_page 401: its page');
is($r->{headers}{'www-authenticate'}, 'Basic realm="Restricted"', 'error_page 401: the challenge stays');
$r = req('/errloop/f');
is($r->{status}, 401, 'error_page 401 into a protected location: 401');
is(scalar(grep { lc $_->[0] eq 'www-authenticate' } @{ $r->{header_list} }), 1,
   'error_page 401 into a protected location: one challenge, not two');

# ---- the user file ---------------------------------------------------------

is(status('/team/f?team=red', basic('ann', 'red')), 200, 'user file from a variable (red)');
is(status('/team/f?team=blue', basic('ann', 'red')), 401, 'user file from a variable (blue): red is wrong there');
is(status('/team/f?team=blue', basic('ann', 'blue')), 200, 'user file from a variable (blue)');
is(status('/team/f?team=red', basic('ann', 'red')), 200, 'back to red: the cache follows the path');

is(status('/missing/f', basic('plain', 'pw-plain')), 403, 'a missing user file: 403 (nginx)');
my $missing = $t->prefix . '/conf/nonexistent';
ok($t->log_contains(qr/\[error\] .*open\(\) "\Q$missing\E" failed \(2: No such file or directory\)/),
   'a missing user file: logged at error');
is(status('/missing/f'), 401, 'a missing user file: no credentials still get the challenge');

# mode 000: as root the workers run as nobody, otherwise as the owner
is(status('/unreadable/f', basic('plain', 'pw-plain')), 500,
   'an unreadable user file: 500 and [crit] (nginx)');

is(status('/changing/f', basic('ann', 'old')), 200, 'changing file: the first password');
sleep 1.2;
$t->write_file_raw('conf/htpasswd_changing.new', "ann:{PLAIN}new\n");
rename($t->prefix . '/conf/htpasswd_changing.new', $t->prefix . '/conf/htpasswd_changing');
sleep 1.2;
is(status('/changing/f', basic('ann', 'new')), 200, 'changing file: replaced, seen within a second');
is(status('/changing/f', basic('ann', 'old')), 401, 'changing file: the old password is gone');
sleep 1.2;
$t->write_file_raw('conf/htpasswd_changing', "ann:{PLAIN}newer-and-longer\n");
sleep 1.2;
is(status('/changing/f', basic('ann', 'newer-and-longer')), 200, 'changing file: rewritten in place, seen');

# ---- $remote_user ------------------------------------------------------------

is(req('/who/', basic('zoe', 'anything'))->{body}, "user=[zoe]\n", '$remote_user: the user sent');
is(req('/who/')->{body}, "user=[]\n", '$remote_user: empty without credentials');
is(req('/who/', 'Basic ???')->{body}, "user=[]\n", '$remote_user: empty for malformed credentials');

# ---- satisfy -----------------------------------------------------------------

my $good = basic('plain', 'pw-plain');
my $wrong = basic('plain', 'nope');
my @satisfy = (
    ['/any_allow/f',   undef,  200, 'any: allowed address, no credentials'],
    ['/any_allow/f',   $wrong, 200, 'any: allowed address, wrong password (auth not asked)'],
    ['/any_deny/f',    undef,  401, 'any: denied address, no credentials: 401'],
    ['/any_deny/f',    $good,  200, 'any: denied address, valid credentials'],
    ['/any_deny/f',    $wrong, 401, 'any: denied address, wrong password: 401'],
    ['/any_nomatch/f', undef,  401, 'any: no rule matches: auth decides (401)'],
    ['/any_nomatch/f', $good,  200, 'any: no rule matches: auth decides (200)'],
    ['/any_noauth/f',  $good,  403, 'any: denied, auth off: 403'],
    ['/any_nofile/f',  $good,  403, 'any: denied, user file missing: 403'],
    ['/all_allow/f',   undef,  401, 'all: allowed address, no credentials: 401'],
    ['/all_allow/f',   $good,  200, 'all: allowed address and valid credentials'],
    ['/all_allow/f',   $wrong, 401, 'all: allowed address, wrong password'],
    ['/all_deny/f',    $good,  403, 'all: denied address, valid credentials: 403'],
    ['/all_deny/f',    undef,  403, 'all: denied address, no credentials: 403 (access runs first)'],
);
for my $c (@satisfy) {
    my ($uri, $auth, $status, $what) = @$c;
    $r = req($uri, $auth);
    is($r->{status}, $status, "satisfy $what");
    if ($status == 401) {
        is($r->{headers}{'www-authenticate'}, 'Basic realm="Restricted"', "satisfy $what: challenge");
    } elsif ($status != 401) {
        ok(!defined $r->{headers}{'www-authenticate'}, "satisfy $what: no challenge");
    }
}
ok($t->log_contains(qr/\[error\] .*access forbidden by rule, .*"GET \/any_noauth\/f HTTP\/1\.1"/),
   'satisfy any: the refusal is logged once access fails');
my @l = $t->log_contains(qr/access forbidden by rule, .*"GET \/any_deny\/f /);
is(scalar @l, 0, 'satisfy any: no "forbidden" line when auth answered 401 or allowed');
@l = $t->log_contains(qr/access forbidden by rule, .*"GET \/all_deny\/f /);
is(scalar @l, 2, 'satisfy all: one line per refused request');

# ---- one connection: 401, then the credentials (keepalive) -----------------

{
    my $c = $t->raw($P);
    $c->send("GET /f HTTP/1.1\r\nHost: localhost\r\n\r\n");
    my $r1 = $c->read_response(timeout => 3);
    $c->send("GET /f HTTP/1.1\r\nHost: localhost\r\nAuthorization: $good\r\n"
             . "Connection: close\r\n\r\n");
    my $r2 = $c->read_response(timeout => 3);
    is($r1 && $r1->{status}, 401, 'keepalive: 401 first');
    is($r2 && "$r2->{status} $r2->{body}", "200 secret\n", 'keepalive: then 200 on the same connection');
    $c->close;
}

SKIP: {
    skip 'no curl', 2 unless `curl --version 2>/dev/null` =~ /^curl/;
    my $out = `curl -s -u plain:pw-plain http://127.0.0.1:$P/f`;
    is($out, "secret\n", 'curl -u: served');
    $out = `curl -s -o /dev/null -w '%{http_code}' -u plain:bad http://127.0.0.1:$P/f`;
    is($out, '401', 'curl -u with a wrong password: 401');
}

$t->stop;

# ---- configuration errors -------------------------------------------------

my @bad = (
    ['auth_basic;',                 qr/\[emerg\] invalid number of arguments in "auth_basic" directive/],
    ['auth_basic_user_file a b;',   qr/\[emerg\] invalid number of arguments in "auth_basic_user_file" directive/],
    ['auth_basic_user_file a; auth_basic_user_file b;', qr/\[emerg\] "auth_basic_user_file" directive is duplicate/],
    ['auth_basic a; auth_basic b;', qr/\[emerg\] "auth_basic" directive is duplicate/],
    ['satisfy maybe;',              qr/\[emerg\] invalid value "maybe" in "satisfy" directive, it must be "all" or "any"/],
    ['satisfy any; satisfy all;',   qr/\[emerg\] "satisfy" directive is duplicate/],
    ['auth_basic "${x";',           qr/\[emerg\] the closing bracket in "x" variable is missing/],
);
for my $c (@bad) {
    my ($line, $re) = @$c;
    my $u = Test::Ringx->new;
    $u->write_config(<<"EOF");
events { }
http { server { listen 127.0.0.1:%%PORT_0%%; location / { $line } } }
EOF
    my ($code, $out, $err) = $u->ringx('-t');
    isnt($code, 0, "-t fails: $line");
    like($err, $re, "-t error: $line");
}

done_testing;
