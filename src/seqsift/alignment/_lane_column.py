"""Two columns of the database-search lanes kernel for a chunk of lanes, written as LLVM vector IR.

Written in Numba, the values carried down a column (the diagonal, the cell above, the vertical
gap, each lane's best) live in arrays that every cell loads and stores, because Numba cannot tell
LLVM the arrays do not alias. Here they are SSA vectors in registers, CHUNK_VECTORS independent
vectors advance together so their dependency chains overlap, and two columns are computed per
pass down the rows: column j's new H and horizontal gap E feed column j + 1 in registers, so H and
D are loaded and stored once per two cells. About 3x the cells per second of the Numba loop on
AVX2 (docs/benchmarks.md). The scores are the reference kernel's, in signed 8- or 16-bit lanes
chosen by the type of the gap arguments.

Per cell (row i, column j), lane by lane, as SWIPE's inner loop (Rognes 2011, "Faster
Smith-Waterman database searches with inter-sequence SIMD parallelisation"): E, the horizontal
gap entering the cell from column j - 1, comes from memory (D[i]); F, the vertical gap entering
it from row i - 1, from a register:
  H = max(diag + profile_j[q[i]], E, F)
  N = H - open_extend                                     (once, for both gaps)
  E' = max(N, E - extend)       (entering column j + 1)    F' = max(N, F - extend)  (row i + 1)
and column j + 1 the same from column j's H and E'; H[i] and D[i] then hold column j + 1's H and
its E'. Nine vector operations a cell (with the lane's best), where computing each gap from the
neighbour's H took eleven, which decides the speed: the loop is bound by the vector ALU ports.

Lanes are signed (8 or 16 bits) and every gap value is floored at 0 by unsigned saturating
subtraction (values are never negative, so the unsigned and signed readings agree). That floor
is exact for local scores (H = max(..., 0) takes a floored gap wherever it takes the true one,
since max(true gap, 0) is what the floor gives), and it makes H's own floor free: E >= 0, so
max(diag + score, E, F) is never negative. The diagonal step is a signed saturating add, so a lane
clipped at the width's top shows that top as its best (lanes.saturated).

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
def lane_column_pair(typingctx, h, d, profile_row, profile_step, q, rows, above, corner, top, lanes, open_extend, extend):
    """Rows 0..rows-1 of columns j and j + 1 for chunk_lanes(bits) lanes, given addresses (uint64)
    of: h and d, row 0 of the strip's H and E for these lanes (a row's chunk lanes contiguous,
    rows one after another: CHUNK_VECTORS vectors a row; column j - 1's on entry,
    column j + 1's H and the E entering column j + 2 on return); profile_row, column j's scores
    (lanes elements per residue code), column j + 1's profile_step bytes later; q, the strip's
    query codes (uint8); above, the (2 columns, H and the F entering the next row, lanes) block of
    the row above the strip (replaced by the strip's last row's); corner, H of the row above in
    column j - 1 (replaced by column j + 1's); top, each lane's best so far (raised).
    open_extend and extend are int8 or int16, which sets the lanes' width."""
    width = open_extend.bitwidth
    sig = types.void(types.uint64, types.uint64, types.uint64, types.int64, types.uint64, types.int64, types.uint64,
                     types.uint64, types.uint64, types.int64, open_extend, extend)

    def codegen(context, builder, signature, args):
        h, d, profile_row, profile_step, q, rows, above, corner, top, lanes, open_extend, extend = args
        per_vector = _VECTOR_BITS // width
        vec = ir.VectorType(ir.IntType(width), per_vector)
        size = width // 8
        row_bytes = builder.mul(lanes, _I64(size))
        next_profile = builder.add(profile_row, profile_step)
        above_h0, above_f0 = above, builder.add(above, row_bytes)
        above_h1, above_f1 = builder.add(above, builder.mul(row_bytes, _I64(2))), builder.add(above, builder.mul(row_bytes, _I64(3)))

        def op(name, a, b):
            return vector_call(builder, name, vec, a, b)

        def at(base, offset, v):
            return builder.inttoptr(builder.add(builder.add(base, offset), _I64(v * per_vector * size)), vec.as_pointer())

        def cell(diag, score, e, f):
            """(H, E entering the next column, F entering the next row) of one cell."""
            cell_h = op("smax", op("smax", op("sadd.sat", diag, score), e), f)
            n = op("usub.sat", cell_h, oe)
            return cell_h, op("smax", n, op("usub.sat", e, ext)), op("smax", n, op("usub.sat", f, ext))

        vectors = range(CHUNK_VECTORS)
        oe, ext = (splat(builder, v, vec) for v in (open_extend, extend))
        sources = (corner, above_h0, above_f0, above_h1, above_f1, top)
        entry_values = [[builder.load(at(address, _I64(0), v), align=1) for address in sources] for v in vectors]
        entry = builder.block
        loop = builder.append_basic_block("lane_columns_row")
        done = builder.append_basic_block("lane_columns_done")
        builder.cbranch(builder.icmp_signed(">", rows, _I64(0)), loop, done)

        # phis first: the row, then per vector the diagonal of column j, the row above's H and the
        # F entering this row in each column, and the lane's best
        builder.position_at_end(loop)
        i = builder.phi(_I64)
        running = [[builder.phi(vec) for _ in sources] for _ in vectors]
        code = builder.zext(builder.load(builder.inttoptr(builder.add(q, i), ir.IntType(8).as_pointer())), _I64)
        scores_at = builder.mul(code, row_bytes)
        row_at = builder.mul(i, _I64(CHUNK_VECTORS * per_vector * size))  # H and D: one chunk's lanes a row
        following = []
        for v in vectors:
            diag, up0, f0, _, f1, best = running[v]
            h_at, d_at = at(h, row_at, v), at(d, row_at, v)
            left = builder.load(h_at, align=1)
            h0, e1, next_f0 = cell(diag, builder.load(at(profile_row, scores_at, v), align=1), builder.load(d_at, align=1), f0)
            h1, e2, next_f1 = cell(up0, builder.load(at(next_profile, scores_at, v), align=1), e1, f1)
            builder.store(h1, h_at, align=1)
            builder.store(e2, d_at, align=1)
            following.append([left, h0, next_f0, h1, next_f1, op("smax", best, op("smax", h0, h1))])
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
