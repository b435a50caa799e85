#!/usr/bin/perl
# fastcgi.t: fastcgi_pass end to end against a real php-fpm started here
# (a generated php-fpm.conf in the test's prefix, a TCP pool and a unix
# socket pool), plus a small scripted FastCGI server in Perl for what PHP
# never sends (records cut byte by byte, unknown record types, a header
# that never ends, a non-zero protocolStatus) and to look at the records
# ringx sends (BEGIN_REQUEST flags, PARAMS, STDIN framing and padding).
# Skips, saying why, only when no php-fpm binary can be found.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use Digest::SHA qw(sha256_hex);
use IO::Socket::IP;
use POSIX qw(WNOHANG);
use Test::More;
use Test::Ringx;
use Test::PhpFpm;
use Time::HiRes qw(sleep time);

my ($FPM_BIN) = grep { -x $_ } ($ENV{RINGX_PHP_FPM} // (),
    '/usr/sbin/php-fpm8.2', glob('/usr/sbin/php-fpm*'),
    map { "$_/php-fpm" } split /:/, $ENV{PATH} // '');
plan skip_all => 'php-fpm not found (Debian: apt-get install php-fpm, or '
    . '"auto/deps test"; RINGX_PHP_FPM names another binary)' unless $FPM_BIN;

sub free_port { Test::PhpFpm::free_port() }

my $t = Test::Ringx->new;
my $PREFIX = $t->prefix;
my $FPM = free_port();
my $DEAD = free_port();
my $FAKE = free_port();
my $SOCK = "$PREFIX/php.sock";

# --- php-fpm ------------------------------------------------------------------

my $as_root = $> == 0;
my $owner = $as_root ? "user = root\ngroup = root\n" : '';
$t->write_file_raw('php-fpm.conf', <<"EOF");
[global]
daemonize = no
error_log = $PREFIX/logs/php-fpm.log
pid = $PREFIX/logs/php-fpm.pid

[tcp]
${owner}listen = 127.0.0.1:$FPM
pm = static
pm.max_children = 3
pm.status_path = /fpm-status
clear_env = no
php_admin_value[display_errors] = 0
php_admin_value[log_errors] = 1
php_admin_value[post_max_size] = 8M

[unix]
${owner}listen = $SOCK
listen.mode = 0666
pm = static
pm.max_children = 2
clear_env = no
php_admin_value[display_errors] = 0
php_admin_value[log_errors] = 1
EOF

my $fpm_pid = fork // die "fork: $!";
if (!$fpm_pid) {
    open STDOUT, '>', "$PREFIX/logs/php-fpm.out";
    open STDERR, '>&', \*STDOUT;
    # -n: no php.ini, the pool's settings are the whole configuration
    { exec $FPM_BIN, '-n', '-F', '-y', "$PREFIX/php-fpm.conf", $as_root ? '-R' : () };
    POSIX::_exit(127);
}
my $fpm_up = Test::Ringx::wait_for(sub {
    -S $SOCK && IO::Socket::IP->new(PeerAddr => "127.0.0.1:$FPM") ? 1 : 0
}, 10);
if (!$fpm_up) {
    diag($t->read_file('logs/php-fpm.out') // '', $t->read_file('logs/php-fpm.log') // '');
    BAIL_OUT("php-fpm ($FPM_BIN) did not start");
}

sub stop_fpm {
    return unless $fpm_pid;
    kill 'QUIT', $fpm_pid;
    for (1 .. 100) {
        last if waitpid($fpm_pid, WNOHANG) == $fpm_pid;
        sleep 0.05;
    }
    kill 'KILL', $fpm_pid if kill 0, $fpm_pid;
    waitpid($fpm_pid, 0);
    $fpm_pid = undef;
}

# --- the scripted FastCGI server ---------------------------------------------

my $fake_pid = start_fake();

END {
    local $?;               # waitpid must not become the test's exit status
    stop_fpm();
    if ($fake_pid) { kill 'KILL', $fake_pid; waitpid($fake_pid, 0); }
}

# --- PHP scripts --------------------------------------------------------------

my %php = (
    'info.php' => <<'EOF',
<?php
header('Content-Type: text/plain');
foreach (['REQUEST_METHOD', 'QUERY_STRING', 'SCRIPT_NAME', 'SCRIPT_FILENAME',
          'PATH_INFO', 'REQUEST_URI', 'DOCUMENT_URI', 'SERVER_LEVEL',
          'HTTP_X_FOO_BAR', 'HTTP_X_MULTI', 'HTTP_COOKIE', 'HTTP_X_OVERRIDE',
          'HTTP_HOST', 'CONTENT_TYPE', 'CONTENT_LENGTH', 'GATEWAY_INTERFACE']
         as $k) {
    echo $k, '=', $_SERVER[$k] ?? '(unset)', "\n";
}
echo 'HTTPS=', isset($_SERVER['HTTPS']) ? 'set' : '(unset)', "\n";
echo 'GET_a=', $_GET['a'] ?? '', "\n";
EOF
    'post.php' => <<'EOF',
<?php
header('Content-Type: text/plain');
$in = file_get_contents('php://input');
echo 'len=', strlen($in), "\n";
echo 'sha=', hash('sha256', $in), "\n";
echo 'a=', $_POST['a'] ?? '', "\n";
echo 'b=', $_POST['b'] ?? '', "\n";
EOF
    'status.php' => "<?php http_response_code(404); echo \"nope\\n\";\n",
    'teapot.php' => "<?php header('Status: 418 I Am A Teapot'); echo \"short\\n\";\n",
    'local.php' => <<'EOF',
<?php
header('Location: /target.txt?from=php');
http_response_code(200);    // PHP sends no Status line for 200: a bare Location
echo "the script's body\n";
EOF
    'open.php' => <<'EOF',
<?php
header('Location: ' . ($_GET['next'] ?? '/'));   // an open redirect
http_response_code(200);
EOF
    'xaccel.php' => <<'EOF',
<?php
header('X-Accel-Redirect: ' . $_GET['to']);
echo "not this\n";
EOF
    'absolute.php' => <<'EOF',
<?php
header('Location: http://example.com/elsewhere');
http_response_code(200);    // no Status: an absolute URL is a 302
EOF
    'found.php' => "<?php header('Location: http://example.com/f'); echo \"moved\\n\";\n",
    'cookies.php' => <<'EOF',
<?php
setcookie('one', '1');
setcookie('two', '2');
header('Set-Cookie: three=3', false);
echo "cookies\n";
EOF
    'stderr.php' => <<'EOF',
<?php
error_log('something went wrong in stderr.php');
echo "still answered\n";
EOF
    'catch.php' => <<'EOF',
<?php
error_log('FATAL-MARKER: the database is gone');
echo "should not be seen\n";
EOF
    'length.php' => "<?php header('Content-Length: 5'); echo 'hello';\n",
    'early.php' => "<?php echo \"partial output\\n\"; flush(); exit(3); echo 'never';\n",
    'big.php' => <<'EOF',
<?php
header('Content-Type: application/octet-stream');
for ($i = 0; $i < 10 * 1024; $i++) {
    echo str_pad("$i:", 1024, 'x');
    if ($i % 64 == 0) flush();
}
EOF
    'bigstderr.php' => "<?php for (\$i = 0; \$i < 10; \$i++) error_log(str_repeat('e', 900));\n"
                       . "echo \"after a long stderr\\n\";\n",
    'bigheader.php' => "<?php header('X-Big: ' . str_repeat('h', 5000)); echo \"x\\n\";\n",
    'slow.php' => "<?php sleep(3); echo \"late\\n\";\n",
    'pid.php' => "<?php echo getmypid(), \"\\n\";\n",
    # a bodyless status with the length of the body the client has
    'nobody.php' => <<'EOF',
<?php
http_response_code((int) ($_GET['s'] ?? 304));
header('Content-Length: 10');
header('X-Pid: ' . getmypid());
EOF
    'idx/index.php' => "<?php echo 'index ', \$_SERVER['SCRIPT_NAME'], \"\\n\";\n",
);
$t->write_file_raw("html/$_", $php{$_}) for keys %php;
$t->write_file_raw('html/target.txt', "the static target\n");
$t->write_file_raw('html/private/secret.txt', "internal only\n");
for my $f (qw(fastcgi.conf fastcgi_params)) {
    open my $fh, '<', "$Test::Ringx::ROOT/conf/$f" or die "conf/$f: $!";
    $t->write_file_raw("conf/$f", do { local $/; <$fh> });
}

$t->write_config(<<"EOF");
daemon off;
master_process on;
worker_processes 1;
error_log logs/error.log info;
events { worker_connections 128; }
http {
    upstream php_ka { server 127.0.0.1:$FPM; keepalive 2; }
    upstream php_unix { server unix:$SOCK; }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        server_name fcgi.test;
        root html;

        # inherited only by locations without fastcgi_param of their own
        fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
        fastcgi_param SCRIPT_NAME \$fastcgi_script_name;
        fastcgi_param SERVER_LEVEL yes;
        fastcgi_param REQUEST_METHOD \$request_method;

        location ~ [^/]\\.php(/|\$) {
            fastcgi_split_path_info ^(.+?\\.php)(/.*)\$;
            include fastcgi.conf;
            fastcgi_param PATH_INFO \$fastcgi_path_info;
            fastcgi_param HTTP_X_OVERRIDE fixed;
            fastcgi_pass 127.0.0.1:$FPM;
        }
        location /idx/ {
            include fastcgi.conf;
            fastcgi_index index.php;
            fastcgi_pass unix:$SOCK;
        }
        location /inherit/ {
            rewrite ^ /info.php break;
            fastcgi_pass php_unix;
        }
        location /ka/ {
            rewrite ^ /pid.php break;
            include fastcgi.conf;
            fastcgi_keep_conn on;
            fastcgi_pass php_ka;
        }
        location /kanb/ {
            rewrite ^ /nobody.php break;
            include fastcgi.conf;
            fastcgi_keep_conn on;
            fastcgi_read_timeout 30s;
            fastcgi_pass php_ka;
        }
        location = /fpm-status {
            include fastcgi.conf;
            fastcgi_pass 127.0.0.1:$FPM;
        }
        location /catch/ {
            rewrite ^ /catch.php break;
            include fastcgi.conf;
            fastcgi_catch_stderr FATAL-MARKER;
            fastcgi_pass 127.0.0.1:$FPM;
        }
        location /slow/ {
            rewrite ^ /slow.php break;
            include fastcgi.conf;
            fastcgi_read_timeout 1s;
            fastcgi_pass php_unix;
        }
        location /dead/ { fastcgi_pass 127.0.0.1:$DEAD; }
        location /private/ { internal; }
        location /fakefile/ {
            include fastcgi_params;
            client_body_buffer_size 16k;
            fastcgi_pass 127.0.0.1:$FAKE;
        }
        location /fakestream/ {
            include fastcgi_params;
            fastcgi_request_buffering off;
            fastcgi_pass 127.0.0.1:$FAKE;
        }
        location /bigpost/ {
            rewrite ^ /post.php break;
            include fastcgi.conf;
            client_body_buffer_size 16k;
            client_max_body_size 8m;
            fastcgi_pass unix:$SOCK;
        }
        location /fake/ {
            include fastcgi_params;
            fastcgi_keep_conn on;
            fastcgi_pass 127.0.0.1:$FAKE;
        }
    }
}
EOF
$t->run;
my $P = $t->port(0);

sub req {
    my ($raw, %o) = @_;
    my $c = $t->raw($P, timeout => $o{timeout} // 10);
    $c->send($raw);
    return $c->read_response(%o);
}

sub get {
    my ($uri, $extra) = @_;
    return req("GET $uri HTTP/1.1\r\nHost: fcgi.test\r\n" . ($extra // '')
               . "Connection: close\r\n\r\n");
}

sub post {
    my ($uri, $body, $type) = @_;
    return req("POST $uri HTTP/1.1\r\nHost: fcgi.test\r\nContent-Length: "
               . length($body) . "\r\nContent-Type: $type\r\n"
               . "Connection: close\r\n\r\n$body");
}

sub field {
    my ($body, $name) = @_;
    return $body =~ /^\Q$name\E=(.*)$/m ? $1 : undef;
}

# --- the request: params, headers, body -------------------------------------

my $r = get('/info.php?a=1&b=two', "X-Foo-Bar: baz\r\nX-Multi: m1\r\nX-Multi: m2\r\n"
            . "Cookie: c1=1\r\nCookie: c2=2\r\nX-Override: client\r\n");
is $r->{status}, 200, 'GET a PHP script';
is $r->{headers}{'content-type'}, 'text/plain;charset=UTF-8', 'its Content-Type'
    or diag explain $r->{headers};
my $info = $r->{body};
is field($info, 'REQUEST_METHOD'), 'GET', 'REQUEST_METHOD';
is field($info, 'QUERY_STRING'), 'a=1&b=two', 'QUERY_STRING';
is field($info, 'GET_a'), '1', 'PHP parsed the query string';
is field($info, 'SCRIPT_NAME'), '/info.php', 'SCRIPT_NAME is $fastcgi_script_name';
is field($info, 'SCRIPT_FILENAME'), "$PREFIX/html/info.php", 'SCRIPT_FILENAME from fastcgi.conf';
is field($info, 'REQUEST_URI'), '/info.php?a=1&b=two', 'REQUEST_URI';
is field($info, 'GATEWAY_INTERFACE'), 'CGI/1.1', 'a constant param';
is field($info, 'HTTP_X_FOO_BAR'), 'baz', 'a request header as HTTP_X_FOO_BAR';
is field($info, 'HTTP_X_MULTI'), 'm1, m2', 'headers of one name joined with ", "';
is field($info, 'HTTP_COOKIE'), 'c1=1; c2=2', 'Cookie headers joined with "; "';
is field($info, 'HTTP_X_OVERRIDE'), 'fixed', 'a fastcgi_param HTTP_* wins over the header';
is field($info, 'HTTP_HOST'), 'fcgi.test', 'Host as HTTP_HOST';
is field($info, 'HTTPS'), '(unset)', 'if_not_empty leaves out an empty param';
is field($info, 'SERVER_LEVEL'), '(unset)', 'a location with its own params inherits none';
ok !exists $r->{headers}{status}, 'the CGI Status header is not passed';

$r = get('/info.php/some/path/info?x=1');
is field($r->{body}, 'SCRIPT_NAME'), '/info.php', 'fastcgi_split_path_info: the script';
is field($r->{body}, 'PATH_INFO'), '/some/path/info', 'and PATH_INFO';
is field($r->{body}, 'DOCUMENT_URI'), '/info.php/some/path/info', 'DOCUMENT_URI is the whole URI';

$r = get('/idx/');
is $r->{status}, 200, 'fastcgi_index: a directory URI';
is $r->{body}, "index /idx/index.php\n", '$fastcgi_script_name has the index appended';

$r = get('/inherit/x');
is field($r->{body}, 'SERVER_LEVEL'), 'yes', 'a location without fastcgi_param inherits the server\'s';
is field($r->{body}, 'SCRIPT_NAME'), '/info.php', 'through the unix socket, by an upstream block';

$r = post('/post.php', 'a=hello+world&b=%C3%A9t%C3%A9', 'application/x-www-form-urlencoded');
is $r->{status}, 200, 'POST urlencoded';
is field($r->{body}, 'a'), 'hello world', 'PHP decoded the form';
is field($r->{body}, 'b'), "\xc3\xa9t\xc3\xa9", 'with its escapes';

my $mb = join '', map { chr(($_ * 31 + 7) % 256) } 0 .. 1024 * 1024 - 1;
$r = post('/post.php', $mb, 'application/octet-stream');
is $r->{status}, 200, 'POST of 1 MB';
is field($r->{body}, 'len'), 1024 * 1024, 'every byte reached PHP';
is field($r->{body}, 'sha'), sha256_hex($mb), 'in order (sha256)';

# --- the response: CGI headers ------------------------------------------------

$r = get('/status.php');
is $r->{status}, 404, 'Status: 404 from PHP';
is $r->{body}, "nope\n", 'with the script\'s body';

$r = get('/teapot.php');
is $r->{status}, 418, 'a Status header with a code ringx has no reason for';

# nginx never makes CGI's "local redirect" of a bare Location: it would
# let a script's open redirect reach internal locations
$r = get('/local.php');
is $r->{status}, 302, 'Location: /path without Status: 302 (nginx)';
is $r->{headers}{location}, '/target.txt?from=php', 'the Location goes out as sent';
is $r->{body}, "the script's body\n", 'with the script\'s body';
$r = get('/open.php?next=/private/secret.txt');
is $r->{status}, 302, 'an open redirect to an internal location: 302';
is $r->{headers}{location}, '/private/secret.txt', 'an open redirect: the Location';
unlike $r->{body}, qr/internal only/, 'an open redirect: not the internal file';

# X-Accel-Redirect from a script: its URI is checked, a POST goes on as GET
$r = post('/xaccel.php?to=/private/secret.txt', 'a=1', 'application/x-www-form-urlencoded');
is $r->{status}, 200, 'X-Accel-Redirect after a POST: the static file (a GET)';
is $r->{body}, "internal only\n", 'X-Accel-Redirect reaches the internal location';
$r = get('/xaccel.php?to=/private/../local.php');
is $r->{status}, 404, 'X-Accel-Redirect with "..": 404';
ok $t->log_contains(qr/\[error\] .*unsafe URI "\/private\/\.\.\/local\.php" was detected/),
    'X-Accel-Redirect with "..": nginx\'s log line';

$r = get('/absolute.php');
is $r->{status}, 302, 'an absolute Location without Status: 302';
is $r->{headers}{location}, 'http://example.com/elsewhere', 'the Location goes out';

$r = get('/found.php');
is $r->{status}, 302, 'PHP\'s own 302 with Location';

$r = get('/cookies.php');
my @cookies = map { $_->[1] } grep { lc $_->[0] eq 'set-cookie' } @{ $r->{header_list} };
is_deeply \@cookies, ['one=1', 'two=2', 'three=3'], 'several Set-Cookie headers kept';

$r = get('/length.php');
is $r->{headers}{'content-length'}, 5, 'the script\'s Content-Length is honoured';
ok !$r->{chunked}, 'and the response is not chunked';
is $r->{body}, 'hello', 'with the body';

$r = req("HEAD /length.php HTTP/1.1\r\nHost: fcgi.test\r\nConnection: close\r\n\r\n",
         head => 1);
is $r->{status}, 200, 'HEAD';
is $r->{headers}{'content-length'}, 5, 'with the script\'s length';
is $r->{body}, '', 'and no body';

$r = get('/bigheader.php');
is $r->{status}, 502, 'a CGI header beyond fastcgi_buffer_size: 502';
ok $t->log_contains(qr/upstream sent too big header while reading response header from upstream/),
    'with nginx\'s line';

$r = get('/early.php');
is $r->{status}, 200, 'a script that exits early';
is $r->{body}, "partial output\n", 'what it wrote before exit() arrives, the response ends cleanly';

$r = get('/big.php');
is $r->{status}, 200, '10 MB streamed';
ok $r->{chunked}, 'without a length: chunked to an HTTP/1.1 client';
my $want = join '', map { sprintf('%-1024s', "$_:") =~ tr/ /x/r } 0 .. 10 * 1024 - 1;
is length($r->{body}), 10 * 1024 * 1024, 'all of it';
is sha256_hex($r->{body}), sha256_hex($want), 'byte for byte (sha256)';

$r = req("GET /big.php HTTP/1.0\r\nHost: fcgi.test\r\n\r\n");
is length($r->{body}), 10 * 1024 * 1024, 'to an HTTP/1.0 client: the close ends it';

# --- stderr ---------------------------------------------------------------------

$r = get('/stderr.php');
is $r->{status}, 200, 'a script writing to stderr still answers';
ok Test::Ringx::wait_for(sub { $t->log_contains(qr/\[error\] .*FastCGI sent in stderr: "PHP message: something went wrong in stderr\.php" while reading response header from upstream, client: 127\.0\.0\.1, server: fcgi\.test, request: "GET \/stderr\.php HTTP\/1\.1", upstream: "fastcgi:\/\/127\.0\.0\.1:$FPM", host: "fcgi\.test"/) }, 3),
    'the stderr line, in nginx\'s words';

$r = get('/bigstderr.php');
is $r->{body}, "after a long stderr\n",
    'a STDERR record larger than fastcgi_buffer_size before the header is fine';
my @long = $t->log_contains(qr/FastCGI sent in stderr: ".*e{100}/);
cmp_ok scalar(@long), '>=', 2, 'logged in lines of a bounded length';

$r = get('/catch/');
is $r->{status}, 502, 'fastcgi_catch_stderr: a match before the header is 502';
ok $t->log_contains(qr/FastCGI sent in stderr: "PHP message: FATAL-MARKER: the database is gone"/),
    'the stderr text is logged too';

# --- keepalive ------------------------------------------------------------------

# ringx's connections to php-fpm's TCP port, by their local port, from
# /proc/net/tcp (php-fpm's "accepted conn" counts requests, not
# connections)
sub fpm_conns {
    my @ports;
    for my $file ('/proc/net/tcp', '/proc/net/tcp6') {
        open my $fh, '<', $file or next;
        while (<$fh>) {
            my (undef, $local, $remote, $state) = split ' ';
            next unless $remote && $state eq '01';     # established
            my ($rport) = $remote =~ /:([0-9A-F]{4})$/ or next;
            my ($lport) = $local =~ /:([0-9A-F]{4})$/;
            push @ports, hex $lport if hex($rport) == $FPM;
        }
    }
    return sort { $a <=> $b } @ports;
}

is_deeply [fpm_conns()], [], 'no connection to php-fpm is left open without keepalive'
    or diag explain [fpm_conns()];
my (%pids, @conns);
for (1 .. 6) {
    my $k = get("/ka/$_");
    is $k->{status}, 200, "keepalive request $_" if $_ == 1;
    $pids{$k->{body}}++;
    push @conns, join ',', fpm_conns();
}
my %distinct = map { $_ => 1 } @conns;
is scalar(@{[ fpm_conns() ]}), 1, 'fastcgi_keep_conn on and keepalive: one connection stays open'
    or diag explain [fpm_conns()];
is scalar(keys %distinct), 1, 'the same one after each of six requests'
    or diag explain \@conns;
is scalar(keys %pids), 1, 'so one php-fpm child served all of them';

# A 304 or 204 with a Content-Length (the length of what the client has)
# ends with its header: the client gets it at once (fastcgi_read_timeout is
# 30 s here), a 304 with the length relayed as nginx relays it, and the pooled
# connection then serves the next request with that request's own answer.
for my $st (304, 204) {
    my @before = fpm_conns();
    my $c = $t->raw($P, timeout => 10);
    $c->send("GET /kanb/?s=$st HTTP/1.1\r\nHost: fcgi.test\r\n\r\n");
    my $nb = $c->read_response(timeout => 2);
    ok $nb, "Status: $st with Content-Length: 10 from PHP: the response arrives at once"
        or next;
    is $nb->{status}, $st, "the $st";
    is $nb->{headers}{'content-length'}, $st == 304 ? 10 : undef,
        $st == 304 ? 'its Content-Length relayed as it came (nginx)'
                   : 'a 204 carries no Content-Length (RFC 9110 8.6; nginx relays it)';
    is $nb->{body}, '', 'no body';
    ok $nb->{complete} && $c->still_open(0.2), 'the client connection stays open';
    $c->send("GET /ka/ HTTP/1.1\r\nHost: fcgi.test\r\nConnection: close\r\n\r\n");
    my $next = $c->read_response(timeout => 5);
    is $next && $next->{status}, 200, 'the next request on the same client connection';
    is $next && $next->{body}, "$nb->{headers}{'x-pid'}\n",
        'has its own answer, from the same php-fpm child';
    is_deeply [fpm_conns()], \@before,
        'over the same pooled connection to php-fpm'
        or diag explain [\@before, [fpm_conns()]];
}

my $s = get('/fpm-status');
like $s->{body}, qr/^accepted conn:\s+\d+/m, 'php-fpm\'s status page through ringx';

# --- the scripted server: records php-fpm never sends ---------------------------

$r = get('/fake/split');
is $r->{status}, 200, 'a response sent byte by byte, with an unknown record type';
is $r->{headers}{'x-fake'}, 'yes', 'its header';
is $r->{body}, "hello world", 'its body, padding dropped';
ok $t->log_contains(qr/FastCGI sent in stderr: "fake warning" while reading response header/),
    'a STDERR record that arrived in pieces is one log line';

$r = get('/fake/echo', "X-Long: " . ('L' x 300) . "\r\n");
my %seen = map { /^(\w+)=(.*)$/ ? ($1 => $2) : () } split /\n/, $r->{body};
is $seen{role}, 1, 'BEGIN_REQUEST: the responder role';
is $seen{flags}, 1, 'with FCGI_KEEP_CONN under fastcgi_keep_conn on';
is $seen{long}, 300, 'a param longer than 127 (4-byte length) arrives whole';
is $seen{params_end}, 1, 'PARAMS ends with an empty record';
is $seen{stdin_records}, 1, 'no body: just the empty STDIN';

my $body = 'B' x 100_001;
$r = req("POST /fake/echo HTTP/1.1\r\nHost: fcgi.test\r\nContent-Length: "
         . length($body) . "\r\nConnection: close\r\n\r\n$body");
%seen = map { /^(\w+)=(.*)$/ ? ($1 => $2) : () } split /\n/, $r->{body};
is $seen{stdin_len}, 100_001, 'STDIN carries the body';
is $seen{stdin_sha}, sha256_hex($body), 'unchanged';
is $seen{stdin_records}, 5, 'in records of at most 32 KiB, then an empty one';
is $seen{stdin_max}, 32768, 'the largest is 32 KiB';
is $seen{aligned}, 1, 'every record padded to a multiple of 8';

# a body beyond client_body_buffer_size waits in client_body_temp_path and
# goes to the application from there
$body = join '', map { chr(($_ * 7 + 3) % 251) } 0 .. 300_000 - 1;
$r = req("POST /fakefile/echo HTTP/1.1\r\nHost: fcgi.test\r\nContent-Length: "
         . length($body) . "\r\nConnection: close\r\n\r\n$body");
%seen = map { /^(\w+)=(.*)$/ ? ($1 => $2) : () } split /\n/, $r->{body};
is $seen{stdin_len}, 300_000, 'a body spilled to its temporary file reaches the application';
is $seen{stdin_sha}, sha256_hex($body), 'unchanged and in order';
is $seen{stdin_records}, 11, 'in records of at most 32 KiB across memory and file';
is $seen{aligned}, 1, 'every record padded';

my $big = join '', map { chr(($_ * 13 + 5) % 256) } 0 .. 5 * 1024 * 1024 - 1;
$r = req("POST /bigpost/ HTTP/1.1\r\nHost: fcgi.test\r\nContent-Length: "
         . length($big) . "\r\nContent-Type: application/octet-stream\r\n"
         . "Connection: close\r\n\r\n$big");
is field($r->{body}, 'len'), length($big), '5 MB through a 16k body buffer reach PHP';
is field($r->{body}, 'sha'), sha256_hex($big), 'every byte in order (sha256)';

# fastcgi_request_buffering off: records leave as the body arrives
for my $case (['/fakestream/echo', 1], ['/fake/echo', 0]) {
    my ($uri, $streamed) = @$case;
    my $half = 'S' x 100_000;
    my $c = $t->raw($P, timeout => 10);
    $c->send("POST $uri HTTP/1.1\r\nHost: fcgi.test\r\nContent-Length: "
             . (2 * length $half) . "\r\nConnection: close\r\n\r\n$half");
    sleep 1.5;
    $c->send($half);
    my $resp = $c->read_response;
    my %got = map { /^(\w+)=(.*)$/ ? ($1 => $2) : () } split /\n/, $resp->{body};
    is $got{stdin_len}, 200_000, "$uri: the whole body arrives";
    if ($streamed) {
        cmp_ok $got{stdin_span}, '>=', 1.0,
            'request buffering off: the first half reached the application before the client sent the rest';
    } else {
        cmp_ok $got{stdin_span}, '<', 1.0, 'request buffering on: the body goes once whole';
    }
}

$r = get('/fake/teapot');
is $r->{status}, 418, 'Status: 418 with a reason';
like $r->{head}, qr{^HTTP/1\.1 418 I Am A Teapot\r\n}, 'the reason is kept';

$r = get('/fake/noheader');
is $r->{status}, 502, 'stdout ends before the header does: 502';
ok $t->log_contains(qr/upstream prematurely closed FastCGI stdout while reading response header from upstream/),
    'with nginx\'s line';

$r = get('/fake/protostatus');
is $r->{status}, 502, 'END_REQUEST with a protocolStatus before any header: 502';
ok $t->log_contains(qr/non-zero protocolStatus while reading response header/), 'logged';

$r = get('/fake/toolong');
is $r->{body}, 'abc', 'bytes beyond Content-Length are dropped';
ok $t->log_contains(qr/\[warn\] .*upstream sent more data than specified in "Content-Length" header/),
    'and logged';

# --- failures ---------------------------------------------------------------------

$r = get('/dead/x');
is $r->{status}, 502, 'nothing listening: 502';
ok $t->log_contains(qr/connect\(\) failed \(111: Connection refused\) while connecting to upstream, client: 127\.0\.0\.1, server: fcgi\.test, request: "GET \/dead\/x HTTP\/1\.1", upstream: "fastcgi:\/\/127\.0\.0\.1:$DEAD"/),
    'with nginx\'s connect() line';

$r = get('/slow/');
is $r->{status}, 504, 'a script slower than fastcgi_read_timeout: 504';
ok $t->log_contains(qr/upstream timed out \(110: Connection timed out\) while reading response header from upstream.*upstream: "fastcgi:\/\/unix:\Q$SOCK\E"/),
    'with nginx\'s timeout line';

stop_fpm();
$r = get('/info.php');
is $r->{status}, 502, 'php-fpm stopped: 502';
ok $t->log_contains(qr/connect\(\) failed \(111: Connection refused\) while connecting to upstream.*request: "GET \/info\.php HTTP\/1\.1"/),
    'connect() failed once php-fpm is gone';
$r = get('/idx/');
is $r->{status}, 502, 'its unix socket gone: 502';
ok $t->log_contains(qr/connect\(\) to unix:\Q$SOCK\E failed \(\d+: [^)]+\) while connecting to upstream/),
    'nginx\'s line for a unix socket names its path';

$t->stop;
done_testing;

# A FastCGI server that answers by REQUEST_URI (see the tests above). It
# reads records until the empty STDIN, then writes its canned response.
sub start_fake {
    my $srv = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => $FAKE,
                                  Listen => 16, ReuseAddr => 1) or die "fake: $!";
    my $pid = fork // die "fork: $!";
    if ($pid) {
        close $srv;
        return $pid;
    }
    while (my $c = $srv->accept) {
        while (my $req = read_request($c)) {
            answer($c, $req) or last;
        }
        close $c;
    }
    POSIX::_exit(0);
}

sub read_exact {
    my ($c, $n) = @_;
    my $buf = '';
    while (length($buf) < $n) {
        my $got = sysread($c, $buf, $n - length($buf), length($buf));
        return undef unless $got;
    }
    return $buf;
}

sub read_request {
    my ($c) = @_;
    my %q = (params => '', stdin => '', stdin_records => 0, stdin_max => 0,
             aligned => 1);
    while (1) {
        my $h = read_exact($c, 8) // return undef;
        my ($ver, $type, $id, $len, $pad) = unpack('CCnnC', $h);
        my $content = read_exact($c, $len + $pad) // return undef;
        $q{aligned} = 0 if ($len + $pad) % 8;
        $content = substr($content, 0, $len);
        if ($type == 1) {
            @q{qw(role flags)} = unpack('nC', $content);
        } elsif ($type == 4) {
            $q{params_end} = 1 if $len == 0;
            $q{params} .= $content;
        } elsif ($type == 5) {
            $q{stdin_records}++;
            $q{t_first} //= time if $len > 0;
            $q{t_last} = time if $len == 0;
            $q{stdin_max} = $len if $len > $q{stdin_max};
            $q{stdin} .= $content;
            last if $len == 0;
        }
    }
    my $p = $q{params};
    while (length $p) {
        my @l;
        for (1, 2) {
            my $n = unpack('C', $p);
            if ($n & 0x80) { $n = unpack('N', $p) & 0x7fffffff; substr($p, 0, 4, ''); }
            else { substr($p, 0, 1, ''); }
            push @l, $n;
        }
        my $name = substr($p, 0, $l[0], '');
        $q{env}{$name} = substr($p, 0, $l[1], '');
    }
    return \%q;
}

sub rec {
    my ($type, $content, $pad) = @_;
    $pad //= (8 - length($content) % 8) % 8;
    return pack('CCnnCC', 1, $type, 1, length $content, $pad, 0) . $content
           . ("\0" x $pad);
}

sub answer {
    my ($c, $q) = @_;
    my $uri = $q->{env}{REQUEST_URI} // '';
    my $end = rec(3, pack('NCx3', 0, 0));
    my $out;
    if ($uri =~ m{^/fake/split}) {
        $out = rec(7, "fake warning\n") . rec(20, "ignore me", 3)
             . rec(6, "Content-Type: text/plain\r\nX-Fake: yes\r\n\r\nhello ", 5)
             . rec(6, "world") . rec(6, '') . $end;
        for my $byte (split //, $out) {
            syswrite($c, $byte);
            sleep 0.001;
        }
        return 1;
    } elsif ($uri =~ m{^/fake\w*/echo}) {
        my $e = $q->{env};
        my $text = "role=$q->{role}\nflags=$q->{flags}\n"
            . "long=" . length($e->{HTTP_X_LONG} // '') . "\n"
            . "params_end=" . ($q->{params_end} // 0) . "\n"
            . "stdin_records=$q->{stdin_records}\nstdin_max=$q->{stdin_max}\n"
            . "stdin_len=" . length($q->{stdin}) . "\n"
            . "stdin_sha=" . sha256_hex($q->{stdin}) . "\n"
            . "aligned=$q->{aligned}\n"
            . sprintf("stdin_span=%.3f\n", ($q->{t_last} // 0) - ($q->{t_first} // 0));
        $out = rec(6, "Content-Type: text/plain\r\n\r\n$text") . rec(6, '') . $end;
    } elsif ($uri =~ m{^/fake/teapot}) {
        $out = rec(6, "Status: 418 I Am A Teapot\r\n\r\n") . rec(6, '') . $end;
    } elsif ($uri =~ m{^/fake/noheader}) {
        $out = rec(6, "X-A: 1\r\n") . rec(6, '') . $end;
    } elsif ($uri =~ m{^/fake/protostatus}) {
        $out = rec(3, pack('NCx3', 0, 1));
    } elsif ($uri =~ m{^/fake/toolong}) {
        $out = rec(6, "Content-Length: 3\r\n\r\nabcdef") . rec(6, '') . $end;
    } else {
        $out = rec(6, "Status: 404\r\n\r\n") . rec(6, '') . $end;
    }
    syswrite($c, $out);
    return 1;
}
