"""One column of the database-search lanes kernel for a chunk of lanes, written as LLVM vector IR.

Written in Numba, the values carried down a column (the diagonal, the cell above, the vertical
gap, each lane's best) live in arrays that every cell loads and stores, because Numba cannot tell
LLVM the arrays do not alias. Here they are SSA vectors in registers, and CHUNK_VECTORS
independent vectors advance together so their dependency chains overlap: 2.3x the cells per
second of the Numba loop on AVX2 (docs/benchmarks.md). The arithmetic is the reference kernel's
in saturating 8- or 16-bit lanes, chosen by the type of the gap arguments.

Per cell (row i, this column), lane by lane, with H[i] and D[i] holding the previous column:
  D = max(H[i] - open_extend, D[i] - extend)              (horizontal gap, stored back in D[i])
  I = max(up - open_extend, I_up - extend)                (vertical gap, in a register)
  H = max(diag + profile[q[i]], D, I, 0)                  (stored back in H[i])
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

CHUNK_VECTORS = 4  # vectors advanced together: 2 left chains exposed, 8 spilled registers (both slower)
_VECTOR_BITS = 256  # AVX2; LLVM splits or joins for other vector units
_I32, _I64 = ir.IntType(32), ir.IntType(64)


def chunk_lanes(bits: int) -> int:
    """Lanes one call covers at this width."""
    return CHUNK_VECTORS * _VECTOR_BITS // bits


@intrinsic
def lane_column(typingctx, h, d, profile_row, q, rows, above_h, above_i, corner, top, lanes, open_extend, extend):
    """Rows 0..rows-1 of one column for chunk_lanes(bits) lanes, given addresses (uint64) of: h and
    d, row 0 of the strip's H and D (lanes elements a row; updated in place); profile_row, this
    column's scores (lanes elements per residue code); q, the strip's query codes (uint8); above_h
    and above_i, H and the vertical gap of the row above the strip (replaced by the last row's);
    corner, H of the row above in the previous column (replaced by this column's); top, each
    lane's best so far (raised). open_extend and extend are int8 or int16: the lane width."""
    width = open_extend.bitwidth
    sig = types.void(types.uint64, types.uint64, types.uint64, types.uint64, types.int64, types.uint64, types.uint64,
                     types.uint64, types.uint64, types.int64, open_extend, extend)

    def codegen(context, builder, signature, args):
        h, d, profile_row, q, rows, above_h, above_i, corner, top, lanes, open_extend, extend = args
        per_vector = _VECTOR_BITS // width
        vec = ir.VectorType(ir.IntType(width), per_vector)
        size = width // 8
        row_bytes = builder.mul(lanes, _I64(size))

        def op(name, a, b):
            full = f"llvm.{name}.v{per_vector}i{width}"
            fn = builder.module.globals.get(full) or ir.Function(builder.module, ir.FunctionType(vec, [vec, vec]), full)
            return builder.call(fn, [a, b])

        def splat(value):
            lane0 = builder.insert_element(ir.Constant(vec, ir.Undefined), value, _I32(0))
            return builder.shuffle_vector(lane0, ir.Constant(vec, ir.Undefined),
                                          ir.Constant(ir.VectorType(_I32, per_vector), [0] * per_vector))

        def at(base, offset, v):
            return builder.inttoptr(builder.add(builder.add(base, offset), _I64(v * per_vector * size)), vec.as_pointer())

        vectors = range(CHUNK_VECTORS)
        oe, ext, zero = splat(open_extend), splat(extend), ir.Constant(vec, [0] * per_vector)
        entry_values = [[builder.load(at(address, _I64(0), v), align=1) for address in (corner, above_h, above_i, top)]
                        for v in vectors]
        entry = builder.block
        loop = builder.append_basic_block("lane_column_row")
        done = builder.append_basic_block("lane_column_done")
        builder.cbranch(builder.icmp_signed(">", rows, _I64(0)), loop, done)

        builder.position_at_end(loop)  # phis first: the row, then per vector diag, up, vertical gap, best
        i = builder.phi(_I64)
        running = [[builder.phi(vec) for _ in range(4)] for _ in vectors]
        code = builder.zext(builder.load(builder.inttoptr(builder.add(q, i), ir.IntType(8).as_pointer())), _I64)
        scores_at = builder.mul(code, row_bytes)
        row_at = builder.mul(i, row_bytes)
        following = []
        for v in vectors:
            diag, up, i_gap, best = running[v]
            h_at, d_at = at(h, row_at, v), at(d, row_at, v)
            left = builder.load(h_at, align=1)
            d_gap = op("smax", op("ssub.sat", left, oe), op("ssub.sat", builder.load(d_at, align=1), ext))
            next_i_gap = op("smax", op("ssub.sat", up, oe), op("ssub.sat", i_gap, ext))
            from_diag = op("sadd.sat", diag, builder.load(at(profile_row, scores_at, v), align=1))
            cell = op("smax", op("smax", from_diag, d_gap), op("smax", next_i_gap, zero))
            builder.store(cell, h_at, align=1)
            builder.store(d_gap, d_at, align=1)
            following.append([left, cell, next_i_gap, op("smax", best, cell)])
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
        for v in vectors:  # up, vertical gap and best leave the loop; an empty strip keeps the entry values
            for k in (1, 2, 3):
                phi = builder.phi(vec)
                phi.add_incoming(entry_values[v][k], entry)
                phi.add_incoming(following[v][k], body_end)
                finals.append(phi)
        for v in vectors:
            up, i_gap, best = finals[3 * v : 3 * v + 3]
            builder.store(entry_values[v][1], at(corner, _I64(0), v), align=1)  # this column's row above: the next diagonal
            builder.store(up, at(above_h, _I64(0), v), align=1)
            builder.store(i_gap, at(above_i, _I64(0), v), align=1)
            builder.store(best, at(top, _I64(0), v), align=1)
        return context.get_dummy_value()

    return sig, codegen
