#!/usr/bin/perl
# hpack_interop.t: ringx's own HPACK codec (http/http_v2_hpack.c, not yet
# used: #20) against a real peer, python3-hpack: blocks it encodes (with
# and without Huffman, indexing, never-indexed fields, table size changes
# with evictions, arbitrary bytes) decode in ringx to the same fields and
# table size, and the fields ringx encodes decode in python3-hpack.
# Driven by t/lib/hpack_interop.py over objs/t/test_hpack's interop mode
# (make unit builds it).

use strict;
use warnings;

use FindBin;
use Test::More;

my $root = "$FindBin::Bin/..";
my $bin  = ($ENV{RINGX_UNIT_DIR} // "$root/objs/t") . '/test_hpack';

plan(skip_all => 'no python3-hpack (Debian: python3-hpack)')
    if system('/usr/bin/python3 -c "import hpack" 2>/dev/null');
if (!-x $bin) {
    fail("$bin is built");
    diag('run make unit');
    done_testing();
    exit;
}

my @out = `/usr/bin/python3 -I $FindBin::Bin/lib/hpack_interop.py $bin 2>&1`;
is($?, 0, 'the interop script ran to its end') or diag(@out);
for (@out) {
    chomp;
    if (/^ok (.*)/) {
        pass($1);
    } elsif (/^not ok (.*)/) {
        fail($1);
    } else {
        diag($_);
    }
}
ok(@out >= 9, 'every check ran');
done_testing();
