#!/usr/bin/python3
# contrib/gen_hpack_tables.py: prints the two constant tables of RFC 7541
# that http/http_v2_huff.c (Appendix B, the Huffman code) and
# http/http_v2_hpack.c (Appendix A, the static table) hold, as C.
#
# The data are the RFC's; they are taken from Debian's python3-hpack
# (hpack.huffman_constants, hpack.table), which transcribes the same
# appendices, so that nobody types 257 codes by hand. Run it with
# /usr/bin/python3 and paste its output over the tables when they must
# change (they never should: the RFC is fixed).
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH
from hpack.table import HeaderTable

print("/* RFC 7541 Appendix B: code (right-aligned), bits; 256 is EOS */")
print("static const rx_hpack_huff_code_t rx_hpack_huff_codes[257] = {")
line = "   "
for i, (c, n) in enumerate(zip(REQUEST_CODES, REQUEST_CODES_LENGTH)):
    item = " { 0x%x, %d }," % (c, n)
    if len(line) + len(item) > 78:
        print(line)
        line = "   "
    line += item
print(line)
print("};")
print()
print("/* RFC 7541 Appendix A: index 1..61 */")
for i, (n, v) in enumerate(HeaderTable.STATIC_TABLE):
    print('    RX_HPACK_ST("%s", "%s"),  /* %d */' % (n.decode(), v.decode(), i + 1))
