#!/usr/bin/perl
# static_symlinks.t: disable_symlinks. A link that escapes the root is
# served with off and refused (403, nginx's log line) with on, wherever it
# sits in the path; from= trusts an initial part of the path; if_not_owner
# allows a link whose owner owns its target (needs root to chown); the
# policy also holds through open_file_cache; gzip_static's .gz goes
# through the same check. And the config errors.

use strict;
use warnings;

use Cwd qw(abs_path);
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;

my $t = Test::Ringx->new;
my $pre = $t->prefix;
plan skip_all => "the test prefix $pre itself holds a symlink"
    if abs_path($pre) ne $pre;

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
        location /s/ { root html; disable_symlinks on; }
        location /o/ { alias html/s/; disable_symlinks off; }
        location /d/ { alias html/s/; }
        location /v/ { alias html/viadir/; disable_symlinks on; }
        location /vf/ {
            alias html/viadir/;
            disable_symlinks on from=%%PREFIX%%/html/viadir;
        }
        location /vw/ {
            alias html/viadir/;
            disable_symlinks on from=%%PREFIX%%/html/via;
        }
        location /c/ {
            alias html/s/;
            disable_symlinks on;
            open_file_cache max=10;
            open_file_cache_errors on;
        }
        location /co/ {
            alias html/s/;
            open_file_cache max=10;
        }
        location /io/ { alias html/s/; disable_symlinks if_not_owner; }
    }
}
EOF
$t->write_file('outside/secret.txt', "secret\n");
$t->write_file('outside/other.txt', "other\n");
$t->write_file('html/s/real.txt', "real\n");
symlink("$pre/outside/secret.txt", "$pre/html/s/escape.txt") or die "symlink: $!";
symlink("../../outside", "$pre/html/s/linkdir") or die "symlink: $!";
symlink("s", "$pre/html/viadir") or die "symlink: $!";
symlink("real.txt", "$pre/html/s/same.txt") or die "symlink: $!";
$t->run;
my $P = $t->port(0);

sub get {
    my ($path) = @_;
    my $r = $t->http_get($P, $path) // '';
    my ($code) = $r =~ m{^HTTP/1\.1 (\d+)};
    my ($body) = $r =~ /\r\n\r\n(.*)\z/s;
    return ($code // 0, $body // '');
}

# off (the default) follows links, even out of the root
is_deeply([get('/o/escape.txt')], [200, "secret\n"], 'off: a link escaping the root is served');
is_deeply([get('/d/escape.txt')], [200, "secret\n"], 'default (off): served');
is_deeply([get('/o/linkdir/other.txt')], [200, "other\n"], 'off: through a linked directory');

# on refuses a link in any component
is_deeply([get('/s/real.txt')], [200, "real\n"], 'on: a plain file is served');
is((get('/s/escape.txt'))[0], 403, 'on: a link escaping the root is refused (403)');
ok($t->log_contains(qr/\[error\] .*openat\(\) "\Q$pre\E\/html\/s\/escape\.txt" failed \(40: Too many levels of symbolic links\)/),
   'on: logged as nginx does');
is((get('/s/linkdir/other.txt'))[0], 403, 'on: a linked directory in the middle is refused');
is((get('/s/same.txt'))[0], 403, 'on: even a link within the root');
is((get('/v/real.txt'))[0], 403, 'on: a link at the start of the alias is refused');

# from=: the initial part is trusted, the rest checked
is_deeply([get('/vf/real.txt')], [200, "real\n"], 'from=: a link in the trusted part is followed');
is((get('/vf/escape.txt'))[0], 403, 'from=: a link after it is still refused');
is((get('/vw/real.txt'))[0], 403, 'from= not ending at a component: the whole path is checked');

# open_file_cache keeps the policy: what on refused is not served from a
# cache entry that off would make
is_deeply([get('/co/escape.txt')], [200, "secret\n"], 'cache, off: served (and cached)');
is((get('/c/escape.txt'))[0], 403, 'cache, on: refused though the path is cached under off');
is((get('/c/escape.txt'))[0], 403, 'cache, on: refused again (a cached error)');

# if_not_owner
is_deeply([get('/io/same.txt')], [200, "real\n"], 'if_not_owner: a link owned like its target is served');
SKIP: {
    skip 'chown needs root', 3 if $> != 0;
    chown(65534, 65534, "$pre/outside/secret.txt") or die "chown: $!";
    is((get('/io/escape.txt'))[0], 403, 'if_not_owner: a link to another owner\'s file is refused');
    ok($t->log_contains(qr/openat\(\) "\Q$pre\E\/html\/s\/escape\.txt" failed \(40: /),
       'if_not_owner: logged as nginx does');
    chown(65534, 65534, "$pre/outside") or die "chown: $!";
    is((get('/io/linkdir/other.txt'))[0], 403,
       'if_not_owner: a linked directory of another owner is refused');
}

# config errors
for my $case (['disable_symlinks maybe;', 'invalid parameter "maybe"'],
              ['disable_symlinks off from=/x;', '"from=" cannot be used with "off" parameter'],
              ['disable_symlinks from=/x;', '"off", "on" or "if_not_owner" parameter expected']) {
    Test::Ringx::http_line_refused_ok(@$case, 1);
}

$t->stop;
done_testing;
