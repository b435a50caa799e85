package Test::QueueWindow;
# Test::QueueWindow: what t/upstream_queue_{race,size,place}.t share. Each
# holds worker A of two with gdb in a window of the upstream queue (between
# two reads of the counts the workers share) while worker B changes them.
#
#   my $q = Test::QueueWindow::setup(queue => 1, why => 'the window');
#       # skips (plan skip_all, saying why) without gdb or ptrace; starts a
#       # php-fpm pool of 2 and ringx: upstream php { server unix max_conns=1;
#       # queue N timeout=20s; }, /pid, /m (metrics), /q/ (sleep.php ?ms=; X-Queue-Time)
#       # returns { t, prefix, sock, port, gdb }
#   my $pid = Test::QueueWindow::hold($q, $worker, $gdb_commands);
#       # gdb runs $gdb_commands (a script: it may touch files to signal)
#       # attached to $worker; its output in logs/gdb.out; returns gdb's pid

use strict;
use warnings;
use POSIX ();
use Test::More;
use Test::Ringx;
use Test::PhpFpm;

sub setup {
    my (%o) = @_;
    my ($gdb) = grep { -x $_ } map { "$_/gdb" } split /:/, $ENV{PATH} // '';
    plan(skip_all => 'gdb not found (Debian: apt-get install gdb): it holds a '
        . "worker $o{why}") unless $gdb;
    my $scope = 0;
    if (open my $fh, '<', '/proc/sys/kernel/yama/ptrace_scope') {
        $scope = <$fh> // 0;
        chomp $scope;
    }
    plan(skip_all => "ptrace not allowed (kernel.yama.ptrace_scope=$scope, not root)")
        if $scope > 0 && $> != 0 || $scope > 2;

    my $t = Test::Ringx->new;
    my $prefix = $t->prefix;
    my $sock = "$prefix/php.sock";
    Test::PhpFpm->start($t, [
        { name => 'pool', sock => $sock, pm => "pm = static\npm.max_children = 2" },
    ]);
    $t->write_config(<<"EOF2");
daemon off;
master_process on;
worker_processes 2;
error_log logs/error.log info;
events { worker_connections 64; }
http {
    upstream php {
        server unix:$sock max_conns=1;
        queue $o{queue} timeout=20s;
    }
    server {
        listen 127.0.0.1:%%PORT_0%% reuseport;
        root html;
        location = /pid { return 200 "\$pid"; }
        location = /m { metrics; }
        location /q/ {
            fastcgi_pass php;
            fastcgi_param SCRIPT_FILENAME \$document_root/sleep.php;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param QUERY_STRING \$query_string;
            add_header X-Queue-Time \$upstream_queue_time;
        }
    }
}
EOF2
    $t->run;
    my $probe = `$gdb -nx -batch -p ${\ $t->master_pid} -ex detach 2>&1`;
    if ($? != 0 || $probe =~ /ptrace: |could not attach|not permitted/i) {
        plan(skip_all => "gdb cannot attach to a process here: "
            . (grep { /ptrace|attach|permit/i } split /\n/, $probe)[0] // $probe);
    }
    return { t => $t, prefix => $prefix, sock => $sock, port => $t->port(0),
             gdb => $gdb };
}

sub hold {
    my ($q, $worker, $commands) = @_;
    my $prefix = $q->{prefix};
    $q->{t}->write_file_raw('gdb.cmd', $commands);
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        open STDOUT, '>', "$prefix/logs/gdb.out";
        open STDERR, '>&', \*STDOUT;
        { exec $q->{gdb}, '-nx', '-batch', '-x', "$prefix/gdb.cmd", '-p', $worker };
        POSIX::_exit(127);
    }
    return $pid;
}

1;
