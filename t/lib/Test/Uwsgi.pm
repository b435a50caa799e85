package Test::Uwsgi;

# Test::Uwsgi: a real uWSGI server (Debian's uwsgi-core with
# uwsgi-plugin-python3) running a small WSGI application for t/uwsgi.t,
# on a free port of 127.0.0.1. The application answers as PATH_INFO asks:
#
#   /u/status/NNN  that status and "status NNN"
#   /u/redirect    302 with Location: /elsewhere
#   /u/len/N       N bytes with Content-Length
#   /u/stream/N    N bytes in 4 KiB pieces, no length (the close ends it)
#   anything else  the request as text: "NAME=VALUE" for the CGI variables
#                  the test looks at, then "len=N sha=SHA1" of the body
#                  read from wsgi.input
#
#   my $bin = Test::Uwsgi::binary();   # or the test skips, saying why
#   my $u = Test::Uwsgi->start($t);    # $u->port; stopped when the test ends

use strict;
use warnings;

use IO::Socket::IP;
use POSIX ();
use Test::More ();
use Test::Ringx;

my @running;

my $APP = <<'EOF';
import hashlib

VARS = ('REQUEST_METHOD', 'REQUEST_URI', 'QUERY_STRING', 'CONTENT_TYPE',
        'CONTENT_LENGTH', 'PATH_INFO', 'SERVER_PROTOCOL', 'HTTP_HOST',
        'HTTP_X_TEST', 'HTTP_COOKIE', 'X_PARAM')

def application(env, start):
    path = env.get('PATH_INFO', '')
    body = env['wsgi.input'].read()
    parts = path.split('/')
    if path.startswith('/u/status/'):
        start(parts[3] + ' Text', [('Content-Type', 'text/plain')])
        return [('status %s\n' % parts[3]).encode()]
    if path == '/u/redirect':
        start('302 Found', [('Location', '/elsewhere')])
        return [b'']
    if path.startswith('/u/len/'):
        n = int(parts[3])
        start('200 OK', [('Content-Type', 'text/plain'),
                         ('Content-Length', str(n))])
        return [b'x' * n]
    if path.startswith('/u/stream/'):
        n = int(parts[3])
        start('200 OK', [('Content-Type', 'application/octet-stream')])
        def gen(n):
            i = 0
            while n > 0:
                k = min(n, 4096)
                yield (('%08d' % i) * 512)[:k].encode()
                i += 1
                n -= k
        return gen(n)
    text = ''.join('%s=%s\n' % (k, env.get(k, '')) for k in VARS)
    text += 'len=%d sha=%s\n' % (len(body), hashlib.sha1(body).hexdigest())
    start('200 OK', [('Content-Type', 'text/plain')])
    return [text.encode()]
EOF

sub binary {
    my ($bin) = grep { -x $_ } ($ENV{RINGX_UWSGI} // (), '/usr/bin/uwsgi-core',
                                '/usr/bin/uwsgi');
    my $plugin = -e '/usr/lib/uwsgi/plugins/python3_plugin.so';
    Test::More::plan(skip_all => 'uWSGI with its python3 plugin not found '
        . '(Debian: apt-get install uwsgi-core uwsgi-plugin-python3, or '
        . '"auto/deps test")')
        unless $bin && ($plugin || $ENV{RINGX_UWSGI});
    return $bin;
}

sub free_port {
    my $s = IO::Socket::IP->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                Listen => 1) or die "listen: $!";
    my $p = $s->sockport;
    close $s;
    return $p;
}

sub start {
    my ($class, $t) = @_;
    my $bin = binary();
    my $prefix = $t->prefix;
    my $port = free_port();
    $t->write_file_raw('app.py', $APP);
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', "$prefix/logs/uwsgi.out";
        open STDERR, '>&', \*STDOUT;
        { exec $bin, '--plugin', 'python3', '--socket', "127.0.0.1:$port",
               '--wsgi-file', "$prefix/app.py", '--master', '--die-on-term',
               '--processes', '2', '--buffer-size', '32768',
               '--disable-logging' };
        POSIX::_exit(127);
    }
    push @running, $pid;
    Test::Ringx::wait_for(sub { IO::Socket::IP->new(PeerAddr => "127.0.0.1:$port") }, 15)
        or Test::More::BAIL_OUT("uWSGI did not start: "
                                . ($t->read_file('logs/uwsgi.out') // ''));
    return bless { pid => $pid, port => $port }, $class;
}

sub port { $_[0]{port} }

END {
    local $?;
    for my $pid (@running) {
        kill 'INT', $pid;
        waitpid($pid, 0);
    }
}

1;
