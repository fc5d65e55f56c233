"""Two columns of the database-search lanes kernel for a chunk of lanes, written as LLVM vector IR.

Written in Numba, the values carried down a column (the diagonal, the cell above, the vertical
gap, each lane's best) live in arrays that every cell loads and stores, because Numba cannot tell
LLVM the arrays do not alias. Here they are SSA vectors in registers, CHUNK_VECTORS independent
vectors advance together so their dependency chains overlap, and two columns are computed per
pass down the rows: column j's new H and horizontal gap feed column j + 1 in registers, so H and
D are loaded and stored once per two cells. About 3x the cells per second of the Numba loop on
AVX2 (docs/benchmarks.md). The arithmetic is the reference kernel's in saturating unsigned
8-bit or signed 16-bit lanes, chosen by the type of the gap arguments.

Per cell (row i, column j), lane by lane, with H[i] and D[i] holding column j - 1:
  D = max(H[i] - open_extend, D[i] - extend)              (horizontal gap)
  I = max(up - open_extend, I_up - extend)                (vertical gap, in a register)
  H = max(diag + profile_j[q[i]], D, I, 0)
and column j + 1 the same from column j's H and D; H[i] and D[i] then hold column j + 1.

Numba's cache keys a compiled function by its own file only: after editing this module, clear
the __pycache__ entries of _lanes (its score_batch compiles this in).
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from seqsift.alignment.lanes import CHUNK_VECTORS
from seqsift.alignment.lanes import VECTOR_BITS as _VECTOR_BITS
from seqsift.intrinsics import splat, vector_call
_I64 = ir.IntType(64)


@intrinsic
def lane_column_pair(typingctx, h, d, profile_row, profile_step, q, rows, above, corner, top, lanes, open_extend, extend,
                     bias):
    """Rows 0..rows-1 of columns j and j + 1 for chunk_lanes(bits) lanes, given addresses (uint64)
    of: h and d, row 0 of the strip's H and D (lanes elements a row; updated in place);
    profile_row, column j's scores (lanes elements per residue code), column j + 1's profile_step
    bytes later; q, the strip's query codes (uint8); above, the (2 columns, H and vertical gap,
    lanes) block of the row above the strip (replaced by the strip's last row's); corner, H of the
    row above in column j - 1 (replaced by column j + 1's); top, each lane's best so far (raised).
    open_extend, extend and bias are uint8 or int16, which sets the lanes: uint8 lanes hold scores
    0..255 and profile scores plus bias (gap values floor at 0, exact for local scores since
    H = max(..., 0): a floored gap is max(true gap, 0) at every cell); a lane whose best reaches
    255 - bias may have saturated. int16 lanes are signed and ignore bias."""
    width = open_extend.bitwidth
    unsigned = not open_extend.signed
    sig = types.void(types.uint64, types.uint64, types.uint64, types.int64, types.uint64, types.int64, types.uint64,
                     types.uint64, types.uint64, types.int64, open_extend, extend, bias)

    def codegen(context, builder, signature, args):
        h, d, profile_row, profile_step, q, rows, above, corner, top, lanes, open_extend, extend, bias = args
        per_vector = _VECTOR_BITS // width
        vec = ir.VectorType(ir.IntType(width), per_vector)
        size = width // 8
        row_bytes = builder.mul(lanes, _I64(size))
        next_profile = builder.add(profile_row, profile_step)
        above_h0, above_i0 = above, builder.add(above, row_bytes)
        above_h1, above_i1 = builder.add(above, builder.mul(row_bytes, _I64(2))), builder.add(above, builder.mul(row_bytes, _I64(3)))

        def op(name, a, b):
            return vector_call(builder, name, vec, a, b)

        def at(base, offset, v):
            return builder.inttoptr(builder.add(builder.add(base, offset), _I64(v * per_vector * size)), vec.as_pointer())

        maximum, minus = ("umax", "usub.sat") if unsigned else ("smax", "ssub.sat")

        def cell(diag, score, left, left_gap, up, up_gap):
            """(H, horizontal gap, vertical gap) of one cell."""
            d_gap = op(maximum, op(minus, left, oe), op(minus, left_gap, ext))
            i_gap = op(maximum, op(minus, up, oe), op(minus, up_gap, ext))
            if unsigned:  # diag + (score + bias) - bias, floored at 0 by the unsigned saturation
                return op("umax", op("umax", op("usub.sat", op("uadd.sat", diag, score), shift), d_gap), i_gap), d_gap, i_gap
            return op("smax", op("smax", op("sadd.sat", diag, score), d_gap), op("smax", i_gap, zero)), d_gap, i_gap

        vectors = range(CHUNK_VECTORS)
        oe, ext, shift = (splat(builder, v, vec) for v in (open_extend, extend, bias))
        zero = ir.Constant(vec, [0] * per_vector)
        sources = (corner, above_h0, above_i0, above_h1, above_i1, top)
        entry_values = [[builder.load(at(address, _I64(0), v), align=1) for address in sources] for v in vectors]
        entry = builder.block
        loop = builder.append_basic_block("lane_columns_row")
        done = builder.append_basic_block("lane_columns_done")
        builder.cbranch(builder.icmp_signed(">", rows, _I64(0)), loop, done)

        # phis first: the row, then per vector the diagonal of column j, the cell above and the
        # vertical gap in each column, and the lane's best
        builder.position_at_end(loop)
        i = builder.phi(_I64)
        running = [[builder.phi(vec) for _ in sources] for _ in vectors]
        code = builder.zext(builder.load(builder.inttoptr(builder.add(q, i), ir.IntType(8).as_pointer())), _I64)
        scores_at = builder.mul(code, row_bytes)
        row_at = builder.mul(i, row_bytes)
        following = []
        for v in vectors:
            diag, up0, up_gap0, up1, up_gap1, best = running[v]
            h_at, d_at = at(h, row_at, v), at(d, row_at, v)
            left = builder.load(h_at, align=1)
            h0, d_gap0, i_gap0 = cell(diag, builder.load(at(profile_row, scores_at, v), align=1), left,
                                      builder.load(d_at, align=1), up0, up_gap0)
            h1, d_gap1, i_gap1 = cell(up0, builder.load(at(next_profile, scores_at, v), align=1), h0, d_gap0, up1, up_gap1)
            builder.store(h1, h_at, align=1)
            builder.store(d_gap1, d_at, align=1)
            following.append([left, h0, i_gap0, h1, i_gap1, op(maximum, best, op(maximum, h0, h1))])
        next_row = builder.add(i, _I64(1))
        body_end = builder.block
        i.add_incoming(_I64(0), entry)
        i.add_incoming(next_row, body_end)
        for v in vectors:
            for phi, first, later in zip(running[v], entry_values[v], following[v]):
                phi.add_incoming(first, entry)
                phi.add_incoming(later, body_end)
        builder.cbranch(builder.icmp_signed("<", next_row, rows), loop, done)

        builder.position_at_end(done)
        finals = []
        for v in vectors:  # all but the diagonal leave the loop; an empty strip keeps the entry values
            for k in range(1, len(sources)):
                phi = builder.phi(vec)
                phi.add_incoming(entry_values[v][k], entry)
                phi.add_incoming(following[v][k], body_end)
                finals.append(phi)
        for v in vectors:
            builder.store(entry_values[v][3], at(corner, _I64(0), v), align=1)  # column j + 1's row above: the next diagonal
            for address, value in zip(sources[1:], finals[5 * v : 5 * v + 5]):
                builder.store(value, at(address, _I64(0), v), align=1)
        return context.get_dummy_value()

    return sig, codegen
