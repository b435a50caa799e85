package Test::SlowFs;
# Test::SlowFs: an LD_PRELOAD shim that makes chosen file-system calls on
# paths containing a marker slow (as a disk that stalls) and records which
# thread made each: the worker's own thread ("main": its tid is its pid)
# or another ("thread": io_uring's workers, the epoll backend's pool).
#
#   my ($shim, $log) = Test::SlowFs::build(
#       match => '/slowdisk/', seconds => 2,
#       calls => 'int unlink(const char *p)
#                 { slow("unlink", p); return made(p, REAL(unlink)(p)); }');
#   $t->run({ env => { LD_PRELOAD => $shim } });
#   my @lines = Test::SlowFs::calls($log);   # "unlink main /path", "made 0 /path"
#
# calls is C: wrappers that call slow(name, path) before the real call
# (REAL(name)) and may pass its result through made(path, rc), which logs
# "made RC PATH" once the call is done. Without a C compiler, or when the
# shim does not build, the test is skipped (plan skip_all), saying why.
# Workers keep no environment and run as another user: the log's path is
# compiled in and the log is made writable by everyone.

use strict;
use warnings;
use Test::More;
use Test::Ringx;

my @keep;        # the prefixes must live as long as the test

sub build {
    my (%a) = @_;
    my ($cc) = map { "$_/cc" } grep { -x "$_/cc" } qw(/usr/bin /bin);
    plan skip_all => 'no C compiler for the shim' unless $cc;
    my $dir = Test::Ringx->new;
    push @keep, $dir;
    my $so = $dir->prefix . '/slowfs.so';
    my $log = $dir->prefix . '/calls';
    my $secs = int($a{seconds} // 2);
    my $match = $a{match} // '/slowdisk/';
    $dir->write_file_raw('slowfs.c', <<"C" . $a{calls} . "\n");
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
slow(const char *what, const char *path)
{
    FILE *f;

    if (path == NULL || strstr(path, "$match") == NULL) {
        return;
    }
    if ((f = fopen(SLOWFS_LOG, "a")) != NULL) {
        fprintf(f, "%s %s %s\\n", what,
                gettid() == getpid() ? "main" : "thread", path);
        fclose(f);
    }
    sleep($secs);
}

static int
made(const char *path, int rc)
{
    FILE *f;

    if (path && strstr(path, "$match") && (f = fopen(SLOWFS_LOG, "a"))) {
        fprintf(f, "made %d %s\\n", rc, path);
        fclose(f);
    }
    return rc;
}

#define REAL(name) ((__typeof__(&name)) dlsym(RTLD_NEXT, #name))

C
    system($cc, '-shared', '-fPIC', "-DSLOWFS_LOG=\"$log\"", '-o', $so,
           $dir->prefix . '/slowfs.c', '-ldl') == 0
        or plan skip_all => 'the shim does not build';
    chmod 0755, $dir->prefix;
    open(my $lf, '>', $log) or die "$log: $!";
    close $lf;
    chmod 0666, $log;
    return ($so, $log);
}

# The lines the shim logged so far.
sub calls {
    my ($log) = @_;
    open(my $f, '<', $log) or return ();
    my @l = <$f>;
    chomp @l;
    return @l;
}

1;
