"""The approximate search's TSV formatter (approx_output.py calls it precompiled): the exact
search's (_output_cpu.format_tsv) with each hit's differences after its strand.

Numba's on-disk cache keys this kernel on this file alone: after editing _output_cpu.py's
helpers, delete this module's __pycache__/*.nbi (the precompiled cache keys on every source)."""

from numba import njit

from seqsift.fmindex._output_cpu import _put_bytes, _put_int


@njit(nogil=True, cache=True)
def format_approx_tsv(raw, name_lo, name_hi, counts, offsets, record, position, strand, differences, names, name_off,
                      out):
    at = 0
    for r in range(counts.size):
        at = _put_bytes(out, at, raw, name_lo[r], name_hi[r])
        out[at] = 9
        at = _put_int(out, at + 1, counts[r])
        out[at] = 9
        at += 1
        if offsets[r + 1] == offsets[r]:
            out[at] = 45
            at += 1
        for h in range(offsets[r], offsets[r + 1]):
            if h > offsets[r]:
                out[at] = 44
                at += 1
            at = _put_bytes(out, at, names, name_off[record[h]], name_off[record[h] + 1])
            out[at] = 58
            at = _put_int(out, at + 1, position[h])
            out[at] = 58
            out[at + 1] = 45 if strand[h] else 43
            out[at + 2] = 58
            at = _put_int(out, at + 3, differences[h])
        out[at] = 10
        at += 1
    return at
