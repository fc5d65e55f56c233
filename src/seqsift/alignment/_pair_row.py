"""One row of the DNA pairs traceback DP for LANES pairs, written as LLVM vector IR.

The same loop written in Numba keeps each lane's running values (the diagonal, the cell to the
left, the horizontal gap, the row's best) in arrays, because Numba cannot tell LLVM the arrays do
not alias: every column then loads and stores them. Here they are SSA vectors carried from one
column to the next in registers, 18% more pairs per second on AVX2 (docs/benchmarks.md). The
arithmetic is the reference kernel's, in 16-bit saturating lanes: every value and every direction
byte equals what _pairs' callers checked against the 32-bit kernel.

Per cell (i, j), lane by lane:
  I = max(H[i-1][j] - open_extend, I[i-1][j] - extend)       (vertical gap, carried in D's rows)
  E = max(H[i][j-1] - open_extend, E[i][j-1] - extend)       (horizontal gap, in a register)
  H = max(H[i-1][j-1] + (match if q == t else mismatch), I, E, 0)
  direction byte: 0 stop, 1 diagonal, 2 from I, 3 from E (first that equals H, in that order),
  | 4 when I opened here, | 8 when E opened here.

Numba's cache keys a compiled function by its own file only: after editing this module, clear
the __pycache__ entries of _pairs (its fill compiles this in).
"""

from __future__ import annotations

from llvmlite import binding, ir
from numba import types
from numba.extending import intrinsic

from seqsift.alignment.pairs import PAIR_LANES as LANES  # pairs side by side
from seqsift.intrinsics import splat, vector_call

_WIDTH = 16  # lanes per vector
_I8, _I16, _I32, _I64 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
_V16 = ir.VectorType(_I16, _WIDTH)
_V8 = ir.VectorType(_I8, _WIDTH)
NARROW_BY_PACK = binding.get_process_triple().startswith(("x86_64", "i686", "i386"))  # SSE2 is in every x86-64


def _lanes(value):
    return ir.Constant(_V16, [value] * _WIDTH)


def _direction(builder, cell, from_diag, i_gap, i_open, i_ext, e_open, e_ext):
    """The direction bytes as 16-bit lanes, from all-ones masks: 3 - (2 if diagonal, else 1 if
    from I, else 0) where the cell is positive (0 there stops a traceback), | 4 | 8 as opened."""
    mask = lambda condition: builder.sext(condition, _V16)
    diagonal = mask(builder.icmp_signed("==", cell, from_diag))
    vertical = builder.and_(mask(builder.icmp_signed("==", cell, i_gap)), builder.not_(diagonal))
    back = builder.or_(builder.and_(diagonal, _lanes(2)), builder.and_(vertical, _lanes(1)))
    source = builder.and_(builder.sub(_lanes(3), back), mask(builder.icmp_signed(">", cell, _lanes(0))))
    source = builder.or_(source, builder.and_(builder.not_(mask(builder.icmp_signed("<", i_open, i_ext))), _lanes(4)))
    return builder.or_(source, builder.and_(builder.not_(mask(builder.icmp_signed("<", e_open, e_ext))), _lanes(8)))


def _narrow(builder, source):
    """16-bit direction lanes to bytes. On x86 through SSE2's saturating pack of the two halves:
    left to a plain truncation, LLVM narrows every compare before combining them, one pack each
    (11% slower here). Elsewhere a truncation."""
    if not NARROW_BY_PACK:
        return builder.trunc(source, _V8)
    half, bytes_ = ir.VectorType(_I16, _WIDTH // 2), ir.VectorType(_I8, _WIDTH)
    name = "llvm.x86.sse2.packsswb.128"
    pack = builder.module.globals.get(name) or ir.Function(builder.module, ir.FunctionType(bytes_, [half, half]), name)
    halves = [builder.shuffle_vector(source, ir.Constant(_V16, ir.Undefined), ir.Constant(ir.VectorType(_I32, _WIDTH // 2), lanes))
              for lanes in (list(range(_WIDTH // 2)), list(range(_WIDTH // 2, _WIDTH)))]
    return builder.call(pack, halves)


@intrinsic
def dp_row(typingctx, h, d, t, dirs, q, row_best, row_j, n, match, mismatch, open_extend, extend):
    """Cells (i, 1..n) of every lane, given addresses (uint64) of: h and d, the H and I values of
    row i-1 for columns 0..n (int16, LANES per column; overwritten with row i's); t, the target
    codes (uint8, LANES per column, from column 1); dirs, row i's direction bytes (LANES per
    column, from column 0); q, the lanes' query codes of row i (uint8). Writes each lane's best H
    in the row to row_best and its first column to row_j (int16, LANES each). Target codes must
    never equal query codes where either is N or padding, and past a target's end the scores only
    fall (mismatch <= 0), so no per-lane length check is needed here."""
    sig = types.void(types.uint64, types.uint64, types.uint64, types.uint64, types.uint64, types.uint64,
                     types.uint64, types.int64, types.int16, types.int16, types.int16, types.int16)

    def codegen(context, builder, signature, args):
        h, d, t, dirs, q, row_best, row_j, n, match, mismatch, open_extend, extend = args
        vectors = range(LANES // _WIDTH)
        smax = lambda a, b: vector_call(builder, "smax", _V16, a, b)
        ssub = lambda a, b: vector_call(builder, "ssub.sat", _V16, a, b)
        at = lambda base, offset, vec: builder.inttoptr(builder.add(base, offset), vec.as_pointer())
        oe, ext, hit, miss = (splat(builder, v, _V16) for v in (open_extend, extend, match, mismatch))
        q_codes = [builder.load(at(q, _I64(v * _WIDTH), _V8), align=1) for v in vectors]

        entry = builder.block
        loop = builder.append_basic_block("dp_row_column")
        done = builder.append_basic_block("dp_row_done")
        builder.cbranch(builder.icmp_signed(">=", n, _I64(1)), loop, done)

        builder.position_at_end(loop)  # phis first: the column, then each vector's running values
        j = builder.phi(_I64)
        j_lanes = builder.phi(_V16)
        running = [[builder.phi(_V16) for _ in range(5)] for _ in vectors]
        carried, bests = [], []
        for v in vectors:
            diag, left, gap, best, best_j = running[v]
            h_at = at(h, builder.add(builder.mul(j, _I64(2 * LANES)), _I64(2 * v * _WIDTH)), _V16)
            d_at = at(d, builder.add(builder.mul(j, _I64(2 * LANES)), _I64(2 * v * _WIDTH)), _V16)
            t_at = at(t, builder.add(builder.mul(builder.sub(j, _I64(1)), _I64(LANES)), _I64(v * _WIDTH)), _V8)
            up = builder.load(h_at, align=1)
            i_open, i_ext = ssub(up, oe), ssub(builder.load(d_at, align=1), ext)
            i_gap = smax(i_open, i_ext)
            e_open, e_ext = ssub(left, oe), ssub(gap, ext)
            e_gap = smax(e_open, e_ext)
            same = builder.icmp_unsigned("==", q_codes[v], builder.load(t_at, align=1))
            from_diag = vector_call(builder, "sadd.sat", _V16, diag, builder.select(same, hit, miss))
            cell = smax(smax(from_diag, i_gap), smax(e_gap, _lanes(0)))
            dirs_at = at(dirs, builder.add(builder.mul(j, _I64(LANES)), _I64(v * _WIDTH)), _V8)
            builder.store(_narrow(builder, _direction(builder, cell, from_diag, i_gap, i_open, i_ext, e_open, e_ext)),
                          dirs_at, align=1)
            builder.store(cell, h_at, align=1)
            builder.store(i_gap, d_at, align=1)
            # the first column of the row's best, as maxima: columns only grow along the row
            next_best_j = smax(best_j, builder.select(builder.icmp_signed(">", cell, best), j_lanes, _lanes(0)))
            next_best = smax(best, cell)
            carried += [(diag, up), (left, cell), (gap, e_gap), (best, next_best), (best_j, next_best_j)]
            bests.append((next_best, next_best_j))
        next_j = builder.add(j, _I64(1))
        carried = [(j, next_j), (j_lanes, builder.add(j_lanes, _lanes(1)))] + carried
        firsts = [_I64(1), _lanes(1)] + [_lanes(0), _lanes(0), _lanes(-32768), _lanes(0), _lanes(0)] * len(vectors)
        body_end = builder.block
        for (phi, value), first in zip(carried, firsts):
            phi.add_incoming(first, entry)
            phi.add_incoming(value, body_end)
        builder.cbranch(builder.icmp_signed("<=", next_j, n), loop, done)

        builder.position_at_end(done)
        finals = []
        for v, pair in zip(vectors, bests):
            for value, out in zip(pair, (row_best, row_j)):
                final = builder.phi(_V16)
                final.add_incoming(_lanes(0), entry)
                final.add_incoming(value, body_end)
                finals.append((final, out, v))
        for final, out, v in finals:
            builder.store(final, at(out, _I64(2 * v * _WIDTH), _V16), align=1)
        return context.get_dummy_value()

    return sig, codegen
