#!/usr/bin/python3
# hpack_interop.py: ringx's HPACK codec against python3-hpack, a real peer
# (run by t/hpack_interop.t). Argument: the objs/t/test_hpack binary, run
# in its "interop" mode (t/unit/test_hpack.c). python3-hpack encodes
# blocks (Huffman or not, indexing, never-indexed, table size changes)
# that ringx's decoder must decode to the same fields with the same table
# size; ringx's encoder writes fields that python3-hpack must decode.
# Prints one line per check: "ok NAME" or "not ok NAME: why".
import random
import subprocess
import sys

from hpack import Decoder, Encoder, NeverIndexedHeaderTuple

binary = sys.argv[1]


class Ringx:
    def __init__(self, limit=4096, max_field=8192):
        self.p = subprocess.Popen([binary, 'interop', str(limit), str(max_field)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)

    def decode(self, block):
        self.p.stdin.write('d ' + block.hex() + '\n')
        self.p.stdin.flush()
        fields = []
        while True:
            line = self.p.stdout.readline().split()
            if line[0] == 'rc':
                rc = int(line[1])
                size = int(self.p.stdout.readline().split()[1])
                return rc, fields, size
            fields.append((bytes.fromhex(line[1][1:]), bytes.fromhex(line[2][1:]),
                           int(line[3])))

    def encode(self, name, value):
        self.p.stdin.write('e %s %s\n' % (name.hex(), value.hex()))
        self.p.stdin.flush()
        line = self.p.stdout.readline().split()
        return 'NULL' if len(line) > 2 else line[1][1:]

    def status(self, n):
        self.p.stdin.write('s %d\n' % n)
        self.p.stdin.flush()
        return self.p.stdout.readline().split()[1][1:]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def report(ok, name, why=''):
    print(('ok ' if ok else 'not ok ') + name + ('' if ok else ': ' + why))


def fields_of(headers):
    out = []
    for h in headers:
        n, v = h[0], h[1]
        n = n if isinstance(n, bytes) else n.encode()
        v = v if isinstance(v, bytes) else v.encode()
        out.append((n, v, 1 if isinstance(h, NeverIndexedHeaderTuple) else 0))
    return out


def decode_sequence(name, blocks_of_headers, huffman, table_sizes=None):
    enc = Encoder()
    r = Ringx()
    bad = []
    for i, headers in enumerate(blocks_of_headers):
        if table_sizes and table_sizes[i] is not None:
            enc.header_table_size = table_sizes[i]
        block = enc.encode(headers, huffman=huffman)
        rc, got, size = r.decode(block)
        want = fields_of(headers)
        if rc != 0 or got != want or size != enc.header_table._current_size:
            bad.append('block %d: rc %d, %d fields (%d wanted), size %d (%d wanted)'
                       % (i, rc, len(got), len(want), size,
                          enc.header_table._current_size))
    r.close()
    report(not bad, name, '; '.join(bad[:3]))


browser = [(':method', 'GET'), (':scheme', 'https'), (':authority', 'example.org'),
           (':path', '/index.html'),
           ('user-agent', 'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0'),
           ('accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'),
           ('accept-language', 'en-US,en;q=0.5'), ('accept-encoding', 'gzip, deflate, br'),
           ('cookie', 'session=0123456789abcdef0123456789abcdef')]


def requests(n, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        h = list(browser)
        h[3] = (':path', '/p/%d?q=%x' % (i, rnd.getrandbits(40)))
        for k in range(rnd.randint(0, 4)):
            h.append(('x-r%d' % rnd.randint(0, 20),
                      ''.join(chr(rnd.randint(0x20, 0x7e)) for _ in range(rnd.randint(0, 120)))))
        if rnd.random() < 0.2:
            h.append(NeverIndexedHeaderTuple('authorization', 'Bearer %x' % rnd.getrandbits(64)))
        out.append(h)
    return out


decode_sequence('python3-hpack blocks with Huffman and indexing', requests(50, 1), True)
decode_sequence('python3-hpack blocks without Huffman', requests(50, 2), False)
decode_sequence('python3-hpack blocks, table shrunk to 256 then 0 then 4096 (evictions)',
                requests(30, 3), True,
                [None] * 5 + [256] + [None] * 10 + [0] + [None] * 3 + [4096] + [None] * 10)

# bytes above 0x7f and every printable one, as raw and Huffman strings
rnd = random.Random(4)
binary_headers = [[('x-b', bytes(rnd.randint(1, 255) for _ in range(rnd.randint(0, 200))))
                   for _ in range(3)] for _ in range(30)]
decode_sequence('python3-hpack blocks of arbitrary bytes, Huffman', binary_headers, True)
decode_sequence('python3-hpack blocks of arbitrary bytes, raw', binary_headers, False)

# ringx's encoder, python3-hpack's decoder
r = Ringx()
dec = Decoder()
bad = []
cases = [(b'Content-Type', b'text/html; charset=utf-8'), (b'SERVER', b'ringx'),
         (b'x-Custom', b''), (b'set-cookie', b'a=b; Path=/; HttpOnly'),
         (b'content-length', b'1234567'), (b'x-bin', bytes(range(14, 256))),
         (b'location', b'https://example.org/' + b'x' * 500),
         (b'etag', b'"5f3a-4c1d"'), (b'last-modified', b'Mon, 21 Oct 2013 20:13:21 GMT')]
for i in range(40):
    cases.append((b'x-rand-%d' % i, bytes(rnd.randint(0x20, 0xff) for _ in range(rnd.randint(0, 300)))))
for n, v in cases:
    got = dec.decode(bytes.fromhex(r.encode(n, v)), raw=True)
    if got != [(n.lower(), v)]:
        bad.append(repr(n))
report(not bad, 'ringx-encoded fields decode in python3-hpack', ', '.join(bad[:5]))
bad = []
for s in [200, 204, 206, 304, 400, 404, 500, 100, 101, 201, 302, 307, 403, 499, 502, 503, 599, 999]:
    got = dec.decode(bytes.fromhex(r.status(s)), raw=True)
    if got != [(b':status', b'%d' % s)]:
        bad.append(str(s))
report(not bad, 'ringx-encoded :status decodes in python3-hpack', ', '.join(bad))
report(len(dec.header_table.dynamic_entries) == 0,
       'ringx\'s encoder never indexes (python3-hpack\'s table stays empty)')
report(r.encode(b'x', b'a\r\nb') == 'NULL', 'ringx refuses to encode CRLF in a value')
r.close()
