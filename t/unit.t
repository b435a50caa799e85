#!/usr/bin/perl
# t/unit.t: runs the C unit tests and checks their TAP.
#
# Every objs/t/test_* binary (built by "make unit" from t/unit/test_*.c) is
# run from the source root, one subtest each. A binary passes when it exits
# 0 (not killed: a sanitizer or a crash fails it), prints exactly one plan
# line "1..N" (a "1..0 # SKIP why" plan skips it), prints N test lines, none
# of them "not ok" (unless marked # TODO), numbered in order where numbered,
# and no "Bail out!". Failing lines are shown with diag; the whole output is
# shown with note (prove -v). A t/unit/test_*.c without its binary fails, and
# so does having no binary at all: this file never passes on nothing.
#
# Environment: RINGX_UNIT_DIR (default objs/t), RINGX_UNIT_TIMEOUT seconds per
# binary (default 60).

use strict;
use warnings;
use Test::More;
use FindBin;
use Cwd qw(abs_path);

my $root = abs_path("$FindBin::Bin/..");
chdir $root or die "chdir $root: $!";

my $dir     = $ENV{RINGX_UNIT_DIR}     // "$root/objs/t";
my $timeout = $ENV{RINGX_UNIT_TIMEOUT} // 60;

my %src = map { m{/(test_[^/]+)\.c\z} ? ($1 => $_) : () } glob("$root/t/unit/test_*.c");
my %bin = map { m{/(test_[^/.]+)\z} ? ($1 => $_) : () }
          grep { -f $_ && -x _ } glob("$dir/test_*");

if (!%bin) {
    fail("unit test binaries in $dir");
    diag(%src ? "none built: run make unit" : "there is no t/unit/test_*.c yet");
    done_testing();
    exit;
}

for my $name (sort keys %src) {
    next if $bin{$name};
    fail("$name is built");
    diag("t/unit/$name.c has no binary $dir/$name: run make unit");
}

for my $name (sort keys %bin) {
    if (%src && !$src{$name}) {
        note("$dir/$name: t/unit/$name.c is gone, not running this stale binary");
        next;
    }
    subtest $name => sub { check_tap($name, $bin{$name}) };
}

done_testing();

sub check_tap {
    my ($name, $bin) = @_;

    my (@out, $timed_out);
    my $pid = open(my $fh, '-|', $bin);
    if (!$pid) {
        fail("$name runs");
        diag("cannot run $bin: $!");
        return;
    }
    eval {
        local $SIG{ALRM} = sub { die "timeout\n" };
        alarm $timeout;
        while (my $line = <$fh>) {
            push @out, $line;
        }
        alarm 0;
        1;
    } or do {
        die $@ unless $@ eq "timeout\n";
        $timed_out = 1;
        kill 'KILL', $pid;
    };
    close $fh;
    my $status = $?;
    chomp @out;
    note("$name: $_") for @out;

    ok(!$timed_out, "$name finishes within ${timeout}s")
        or diag("$name was killed after ${timeout}s");

    my $how = $status == -1 ? "could not be run"
            : $status & 127 ? "was killed by signal " . ($status & 127)
                              . (($status & 128) ? " (core dumped)" : "")
            : $status >> 8  ? "exited " . ($status >> 8)
            : "";
    ok($how eq '', "$name exits 0") or diag("$name $how");

    my (@plans, @tests, @bad, $bail, $skip_all);
    my ($n, $failed) = (0, 0);
    for my $line (@out) {
        # nested TAP (indented) and comments belong to the binary
        if ($line =~ /^1\.\.(\d+)\s*(?:#\s*(.*))?$/) {
            push @plans, $1;
            $skip_all = $2 // 'no reason given' if $1 == 0;
        } elsif ($line =~ /^(not )?ok\b\s*(\d+)?\s*(.*)$/) {
            my ($not, $num, $rest) = ($1, $2, $3);
            $n++;
            push @tests, $line;
            if (defined $num && $num != $n) {
                push @bad, "$line    <- expected test number $n";
            }
            if ($not && $rest !~ /#\s*TODO\b/i) {
                push @bad, $line;
                $failed++;
            }
        } elsif ($line =~ /^Bail out!/) {
            $bail = $line;
        }
    }

    if (@plans == 1 && $plans[0] == 0 && !@tests && $how eq '') {
        pass("$name skipped: $skip_all");
        return;
    }

    ok(@plans == 1, "$name prints one plan line 1..N")
        or diag(@plans ? "$name printed " . @plans . " plan lines"
                       : "$name printed no plan line");
    ok(!defined $bail, "$name does not bail out") or diag($bail);
    if (@plans) {
        is(scalar @tests, $plans[0], "$name runs the $plans[0] tests it planned");
    }
    ok(!@bad, "$name: " . (@tests - $failed) . " of " . @tests . " tests ok")
        or diag(join("\n", "failing lines of $name:", @bad));

    if (!$timed_out && ($how ne '' || @bad || @plans != 1)) {
        my @tail = @out > 20 ? @out[-20 .. -1] : @out;
        diag(join("\n", "last lines of $name:", @tail)) if @tail;
    }
}
