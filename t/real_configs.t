#!/usr/bin/perl
# real_configs.t: configurations as people write them. Debian's /etc/nginx
# tree (nginx.conf, sites-enabled/default, snippets, mime.types,
# fastcgi.conf, koi-utf ...) copied from this machine into the prefix with
# only the paths that must point there rewritten, and a WordPress, a
# Laravel and a reverse-proxy-with-WebSocket site written as their own
# docs give them: -t accepts each, and requests through them get what
# nginx gives (php-fpm runs small front controllers standing in for the
# apps; Test::Upstream is the WebSocket echo origin).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Test::Upstream;
use File::Copy qw(copy);
use File::Find;
use IO::Select;

plan skip_all => 'no /etc/nginx on this machine (Debian: apt-get install nginx-common)'
    unless -f '/etc/nginx/nginx.conf' && -f '/etc/nginx/sites-available/default';

sub body_of { my ($r) = @_; $r //= ''; $r =~ s/^.*?\r\n\r\n//s; $r }
sub status_of { my ($r) = @_; ($r // '') =~ m{^HTTP/1\.\d (\d+)} ? $1 : 0 }

# ---- Debian's tree ------------------------------------------------------

my $d = Test::Ringx->new;
my $dp = $d->prefix;
# a dynamic module of nginx (modules-enabled/*.conf: load_module) is
# machine-specific; ringx ignores load_module, and the copy leaves them
# out so that the test sees the same tree on every machine
mkdir "$dp/nginx";
find({ no_chdir => 1, wanted => sub {
    (my $rel = $File::Find::name) =~ s{^/etc/nginx/?}{};
    return if $rel eq '' || $rel =~ m{^modules-(?:enabled|available)/.};
    if (-d $File::Find::name) { mkdir "$dp/nginx/$rel"; return; }
    my $real = -l $File::Find::name
        ? do { my $l = readlink $File::Find::name;
               $l =~ m{^/} ? $l : "/etc/nginx/" . ($rel =~ s{[^/]*$}{}r) . $l }
        : $File::Find::name;
    copy($real, "$dp/nginx/$rel") or die "copy $rel: $!";
} }, '/etc/nginx');

my $port = $d->port(0);
sub edit {
    my ($file, $code) = @_;
    local $_ = $d->read_file("nginx/$file") // die "no nginx/$file";
    $code->();
    $d->write_file_raw("nginx/$file", $_);
}
# only paths that must point into the prefix, the port, and the user
edit('nginx.conf', sub {
    s{/etc/nginx}{$dp/nginx}g;
    s{/var/log/nginx}{$dp/logs}g;
    s{/run/nginx\.pid}{$dp/logs/ringx.pid}g;   # where the harness looks
    s{^user\s+www-data;}{daemon off;}m;
});
edit('sites-enabled/default', sub {
    s{listen 80 default_server;}{listen 127.0.0.1:$port default_server;};
    s{listen \[::\]:80 default_server;}{# (no IPv6 in the test)};
    s{/var/www/html}{$dp/html}g;
});
$d->write_file('html/index.nginx-debian.html', "<h1>Welcome</h1>\n" x 4);
$d->write_file('html/dir/a.txt', "a\n");

{
    my ($rc, undef, $err) = $d->ringx('-c', "$dp/nginx/nginx.conf", '-t');
    is $rc, 0, "Debian's /etc/nginx: ringx -t accepts it" or diag $err;
    like $err, qr/test is successful/, '... and says so';
}
SKIP: {
    skip 'no /usr/sbin/nginx to compare with', 1 unless -x '/usr/sbin/nginx';
    my $out = `/usr/sbin/nginx -p $dp/ -c $dp/nginx/nginx.conf -t 2>&1`;
    is $?, 0, '... as nginx -t does on the same tree' or diag $out;
}
# nginx's own koi-utf, koi-win and win-utf (Debian ships them, unused by
# its nginx.conf): ringx reads their charset_map blocks
{
    my $u = Test::Ringx->new;
    $u->write_config("events { }\nhttp {\n"
        . join('', map { "    include $dp/nginx/$_;\n" } qw(koi-utf koi-win win-utf))
        . "}\n");
    my ($rc, undef, $err) = $u->ringx('-t');
    is $rc, 0, "Debian's koi-utf, koi-win, win-utf: -t accepts their charset_map blocks"
        or diag $err;
}
$d->run({ ports => [$port] }, '-c', "$dp/nginx/nginx.conf");
my $r = $d->http($port, "GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n"
                        . "Connection: close\r\n\r\n");
is status_of($r), 200, 'GET /: the Debian welcome page (third index name)';
like $r, qr/\r\nContent-Type: text\/html\r\n/, '... text/html from mime.types';
like $r, qr/\r\nContent-Encoding: gzip\r\n/, '... gzipped (gzip on)';
is status_of($d->http_get($port, '/missing')), 404, 'try_files $uri $uri/ =404: 404';
is body_of($d->http_get($port, '/dir/a.txt')), "a\n", 'a file below the root';
is status_of($d->http_get($port, '/dir/')), 403,
    '/dir/ without an index: 403, as nginx 1.22 on the same tree';
is status_of($d->http_get($port, '/dir')), 301, '/dir: 301 to /dir/, as nginx';
ok -s "$dp/logs/access.log", 'the access log is where nginx.conf says';
$d->stop;

# ---- WordPress, Laravel, a WebSocket reverse proxy -----------------------

my $t = Test::Ringx->new;
my $p = $t->prefix;
my $fpm_bin = Test::PhpFpm::binary();        # skips when there is none
my $up = Test::Upstream->new;
$up->start;
my $UP = $up->url =~ s{^http://}{}r;
my $FRONT = <<'EOF';
<?php
header('Content-Type: text/plain');
echo "app=", basename(dirname(__FILE__)), "\n",
     "script=", $_SERVER['SCRIPT_NAME'], "\n",
     "uri=", $_SERVER['REQUEST_URI'], "\n",
     "query=", $_SERVER['QUERY_STRING'], "\n",
     "filename=", $_SERVER['SCRIPT_FILENAME'], "\n",
     "status=", http_response_code(), "\n";
EOF
$t->write_file_raw('html/wp/index.php', $FRONT);
$t->write_file_raw('html/wp/wp-login.php', $FRONT);
$t->write_file('html/wp/style.css', "body {}\n");
$t->write_file_raw('html/laravel/public/index.php', $FRONT);
$t->write_file('html/laravel/public/app.js', "1;\n");
$t->write_file('html/laravel/public/.env', "SECRET=1\n");
$t->write_file('html/laravel/public/.well-known/x.txt', "wk\n");
my $fpm = Test::PhpFpm->start($t, [
    { name => 'www', sock => "$p/php.sock",
      pm => "pm = static\npm.max_children = 2" } ]);
copy("$dp/nginx/$_", "$p/conf/$_") for qw(fastcgi.conf fastcgi_params mime.types);
$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    include mime.types;
    default_type application/octet-stream;
    upstream php { server unix:$p/php.sock; }

    # WordPress (developer.wordpress.org, "Nginx")
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name _;
        root $p/html/wp;
        index index.php;
        location = /favicon.ico { log_not_found off; access_log off; }
        location = /robots.txt { allow all; log_not_found off; access_log off; }
        location / {
            try_files \$uri \$uri/ /index.php?\$args;
        }
        location ~ \\.php\$ {
            include fastcgi_params;
            fastcgi_intercept_errors on;
            fastcgi_pass php;
            fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
        }
        location ~* \\.(js|css|png|jpg|jpeg|gif|ico)\$ {
            expires max;
            log_not_found off;
        }
    }

    # Laravel (laravel.com/docs, "Deployment", Nginx)
    server {
        listen 127.0.0.1:%%PORT_1%%;
        server_name example.com;
        root $p/html/laravel/public;
        add_header X-Frame-Options "SAMEORIGIN";
        add_header X-Content-Type-Options "nosniff";
        index index.php;
        charset utf-8;
        location / {
            try_files \$uri \$uri/ /index.php?\$query_string;
        }
        location = /favicon.ico { access_log off; log_not_found off; }
        location = /robots.txt  { access_log off; log_not_found off; }
        error_page 404 /index.php;
        location ~ ^/index\\.php(/|\$) {
            fastcgi_pass unix:$p/php.sock;
            fastcgi_param SCRIPT_FILENAME \$realpath_root\$fastcgi_script_name;
            include fastcgi_params;
            fastcgi_hide_header X-Powered-By;
        }
        location ~ /\\.(?!well-known).* {
            deny all;
        }
    }

    # WebSocket proxying (nginx.org/en/docs/http/websocket.html)
    map \$http_upgrade \$connection_upgrade {
        default upgrade;
        ''      close;
    }
    server {
        listen 127.0.0.1:%%PORT_2%%;
        location / {
            proxy_pass http://$UP;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_set_header Host \$host;
        }
    }
}
EOF
{
    my ($rc, undef, $err) = $t->ringx('-t');
    is $rc, 0, 'WordPress, Laravel and WebSocket sites: -t accepts them' or diag $err;
}
$t->run;
my ($WP, $LV, $WS) = map { $t->port($_) } 0 .. 2;

my $b = body_of($t->http_get($WP, '/2024/05/hello-world/?p=1'));
like $b, qr/^script=\/index\.php$/m, 'WordPress permalink: the front controller';
like $b, qr/^uri=\/2024\/05\/hello-world\/\?p=1$/m, '... REQUEST_URI as sent';
like $b, qr/^query=p=1$/m, '... the args passed on';
like $b, qr/^filename=\Q$p\E\/html\/wp\/\/?index\.php$/m, '... SCRIPT_FILENAME';
$b = body_of($t->http_get($WP, '/wp-login.php?action=x'));
like $b, qr/^script=\/wp-login\.php$/m, 'WordPress: a .php file runs itself';
$r = $t->http_get($WP, '/style.css');
like $r, qr/\r\nExpires: Thu, 31 Dec 2037 23:55:55 GMT\r\n/, 'WordPress: assets expires max';
like $r, qr/\r\nContent-Type: text\/css\r\n/, '... text/css';
is status_of($t->http_get($WP, '/missing.png')), 404, 'WordPress: a missing asset 404s';
is status_of($t->http_get($WP, '/missing.php')), 404,
    'WordPress: a missing .php is php-fpm\'s 404 (fastcgi_intercept_errors: nginx\'s page)';

$r = $t->http($LV, "GET /users/7?sort=name HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
$b = body_of($r);
like $b, qr/^script=\/index\.php$/m, 'Laravel route: the front controller';
like $b, qr/^query=sort=name$/m, '... $query_string passed on';
like $b, qr/^filename=\Q$p\E\/html\/laravel\/public\/index\.php$/m,
    '... SCRIPT_FILENAME from $realpath_root';
like $r, qr/\r\nX-Frame-Options: SAMEORIGIN\r\n/, '... add_header';
like $r, qr/\r\nContent-Type: text\/plain;\s*charset=UTF-8\r\n/i,
    '... PHP\'s own charset kept (charset utf-8 adds no second one)';
unlike $r, qr/X-Powered-By/i, '... fastcgi_hide_header X-Powered-By';
$r = $t->http_get($LV, '/app.js');
like $r, qr/\r\nContent-Type: application\/javascript; charset=utf-8\r\n/,
    'Laravel: a static asset, with the charset';
is status_of($t->http_get($LV, '/.env')), 403, 'Laravel: dotfiles are denied';
is body_of($t->http_get($LV, '/.well-known/x.txt')), "wk\n", '... but .well-known is served';
$b = body_of($t->http_get($LV, '/index.php/users'));
like $b, qr/^app=public\nscript=\/index\.php\/users$/m,
    'Laravel: /index.php/PATH runs index.php (SCRIPT_NAME whole, no split_path_info)';

{
    my $c = $t->raw($WS);
    $c->send("GET /ws HTTP/1.1\r\nHost: ws.test\r\nUpgrade: websocket\r\n"
             . "Connection: Upgrade\r\n\r\n");
    my $head = '';
    my $sel = IO::Select->new($c->sock);
    while ($head !~ /\r\n\r\n/ && $sel->can_read(5)) {
        sysread($c->sock, my $buf, 1) or last;
        $head .= $buf;
    }
    like $head, qr/^HTTP\/1\.1 101 /, 'WebSocket: 101 through the proxy';
    $c->send('ping');
    my $got = '';
    while (length($got) < 4 && $sel->can_read(5)) {
        sysread($c->sock, $got, 4 - length $got, length $got) or last;
    }
    is $got, 'ping', '... the tunnel echoes';
    my $req = (grep { $_->{uri} eq '/ws' } $up->requests)[-1];
    my %h = map { lc($_->[0]) => $_->[1] } @{ $req->{headers} || [] };
    is $h{connection}, 'upgrade', '... Connection: $connection_upgrade = upgrade';
    is $h{host}, 'ws.test', '... Host: $host';
    $c->close;
}
{
    $t->http_get($WS, '/echo');
    my $req = (grep { $_->{uri} eq '/echo' } $up->requests)[-1];
    my %h = map { lc($_->[0]) => $_->[1] } @{ $req->{headers} || [] };
    is $h{connection}, 'close', 'a plain request: Connection: close (the map\'s \'\')';
}
$t->stop;
done_testing;
