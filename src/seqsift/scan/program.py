"""Signatures flattened into arrays the kernels read: the verifier's program, and each piece's anchor.

Each piece becomes a run of ops (BYTE value/mask, GAP lo/hi, ALT first-option/count); its anchor
is its longest run of exact bytes, the part the filters index. `prefix_min/max` give how far
before the anchor the piece may start (fixed unless a gap or an uneven alternative precedes it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from seqsift.scan.signatures import ALT, BYTE, GAP, SignatureSet, element_span


@dataclass
class Program:
    # ops
    op_kind: np.ndarray  # uint8
    op_a: np.ndarray  # int32
    op_b: np.ndarray  # int32
    opt_lo: np.ndarray  # int32: first byte of each alternative option in opt_val/opt_mask
    opt_len: np.ndarray  # int32
    opt_val: np.ndarray  # uint8
    opt_mask: np.ndarray  # uint8
    # pieces
    piece_ops: np.ndarray  # int32 [n_pieces + 1]: ops of piece p are piece_ops[p]:piece_ops[p+1]
    piece_sig: np.ndarray  # int32
    piece_rank: np.ndarray  # int32: k of the k-th piece of its signature
    piece_max: np.ndarray  # int32: longest span
    anchor_len: np.ndarray  # int32: bytes in the exact run (0: none)
    prefix_min: np.ndarray  # int32: bytes from the piece start to the run start
    prefix_max: np.ndarray  # int32
    anchors: list[bytes]  # each piece's exact run
    literal: np.ndarray  # uint8: 1 when the piece is exact bytes only (its anchor is the whole piece)
    # signatures
    sig_first: np.ndarray  # int32: first piece
    sig_pieces: np.ndarray  # int32
    gap_after: np.ndarray  # int64 per piece: minimum gap before the next piece of its signature
    offset_kind: np.ndarray  # int8
    offset: np.ndarray  # int64
    shift: np.ndarray  # int64

    @property
    def n_pieces(self) -> int:
        return int(self.piece_sig.size)

    @property
    def fixed(self) -> np.ndarray:
        """int32 per piece: 1 when its ops are all single bytes (some masked: ??, 4?) and none is a
        literal's, so it has one start and one length as a literal has, and is compared at that
        start (verify_rows) instead of by verify_groups' pass over its candidates' bytes (a pass
        per piece: 5,000 such pieces sharing an anchor paid 5,000 passes over the data)."""
        if self.piece_ops.size < 2:
            return np.zeros(0, np.int32)
        not_byte = np.concatenate(([0], np.cumsum(self.op_kind != BYTE)))
        ops_not_bytes = not_byte[self.piece_ops[1:]] - not_byte[self.piece_ops[:-1]]
        return ((ops_not_bytes == 0) & (self.literal == 0)).astype(np.int32)

    @property
    def arrays(self) -> tuple:
        """What the kernels read (_cpu.verify_rows and verify_groups index it by position): the ops, and
        per piece one row of PIECE_INFO columns, so a candidate's piece costs one cache line (the
        last: 1 a literal, 2 a fixed piece, 0 one with gaps or alternatives)."""
        info = np.stack([self.piece_ops[:-1], self.piece_ops[1:], self.prefix_min, self.prefix_max,
                         self.anchor_len, self.literal.astype(np.int32) + 2 * self.fixed], axis=1).astype(np.int32)
        op_byte = (self.op_a & 0xFF).astype(np.uint8)  # a literal's bytes, 4x denser than op_a
        return (self.op_kind, self.op_a, self.op_b, self.opt_lo, self.opt_len, self.opt_val, self.opt_mask,
                np.ascontiguousarray(info), op_byte)

    def alt_index(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per alternatives op, its options grouped by the byte they may start with, so the verifier
        tries at a position only the options whose first byte fits it (a 10,000-way alternative
        costs a few options a position, not 10,000): (row of each op, -1 but for alternatives;
        bucket starts, 256 + 1 per row; the options of each bucket)."""
        alts = np.flatnonzero(self.op_kind == ALT)
        row = np.full(self.op_kind.size, -1, np.int32)
        row[alts] = np.arange(alts.size, dtype=np.int32)
        values = np.arange(256)
        starts, options = [np.zeros(1, np.int64)], []
        for j in alts.tolist():
            first, count = int(self.op_a[j]), int(self.op_b[j])
            opts = np.arange(first, first + count)
            head = self.opt_lo[opts]
            val, mask = self.opt_val[head].astype(np.int64), self.opt_mask[head].astype(np.int64)
            fits = (values[:, None] & mask[None, :]) == val[None, :]  # byte x, option o
            x, o = np.nonzero(fits)  # row-major: grouped by byte, options in order
            options.append(opts[o].astype(np.int32))
            starts.append(starts[-1][-1] + np.cumsum(np.bincount(x, minlength=256)))
        bucket_start = np.concatenate(starts).astype(np.int64)
        bucket_opt = np.concatenate(options) if options else np.zeros(0, np.int32)
        return row, bucket_start, bucket_opt

    @property
    def max_span(self) -> int:
        return int(self.piece_max.max()) if self.piece_max.size else 0


def compile_program(signatures: SignatureSet) -> Program:
    a_parts: list[np.ndarray] = []  # op_a per piece; literal pieces are their bytes, viewed, not copied
    coded: list[tuple[int, list, list]] = []  # (piece, kinds, op_b) of the pieces that are not literal
    opt_lo, opt_len, opt_val, opt_mask = [], [], [], []
    piece_sig, piece_rank, piece_max, prefix_min, prefix_max, anchors, gap_after = [], [], [], [], [], [], []
    sig_pieces, offset_kind, offset, shift = [], [], [], []
    for s, sig in enumerate(signatures.signatures):
        sig_pieces.append(len(sig.pieces))
        offset_kind.append(sig.offset_kind)
        offset.append(sig.offset)
        shift.append(sig.shift)
        for k, piece in enumerate(sig.pieces):
            if piece.literal is not None:
                a_parts.append(np.frombuffer(piece.literal, np.uint8))
                run, lo, hi = piece.literal, 0, 0
            else:
                kinds, op_a, op_b = [], [], []
                for e in piece.elements:
                    if e[0] == "alt":
                        kinds.append(ALT), op_a.append(len(opt_lo)), op_b.append(len(e[1]))
                        for option in e[1]:
                            opt_lo.append(len(opt_val))
                            opt_len.append(len(option))
                            opt_val.extend(v for v, _ in option)
                            opt_mask.extend(m for _, m in option)
                    else:
                        kinds.append(BYTE if e[0] == "byte" else GAP), op_a.append(e[1]), op_b.append(e[2])
                coded.append((len(piece_sig), kinds, op_b))
                a_parts.append(np.asarray(op_a, np.int64))
                run, lo, hi = _anchor(piece.elements)
            piece_sig.append(s)
            piece_rank.append(k)
            piece_max.append(piece.max_len)
            anchors.append(run)
            prefix_min.append(lo)
            prefix_max.append(hi)
            gap_after.append(sig.gaps[k] if k < len(sig.gaps) else 0)
    i32 = lambda x: np.asarray(x, np.int32)  # noqa: E731
    lengths = np.fromiter(map(len, a_parts), np.int64, len(a_parts))
    piece_ops = np.zeros(len(a_parts) + 1, np.int32)
    np.cumsum(lengths, out=piece_ops[1:])
    op_a = np.concatenate(a_parts).astype(np.int32) if a_parts else np.zeros(0, np.int32)
    op_kind = np.full(op_a.size, BYTE, np.uint8)
    op_b = np.full(op_a.size, 0xFF, np.int32)
    for p, kinds, bs in coded:
        op_kind[piece_ops[p] : piece_ops[p + 1]] = kinds
        op_b[piece_ops[p] : piece_ops[p + 1]] = bs
    sig_first = np.zeros(len(sig_pieces), np.int32)
    np.cumsum(sig_pieces[:-1], out=sig_first[1:])
    return Program(
        op_kind, op_a, op_b, i32(opt_lo), i32(opt_len), np.asarray(opt_val, np.uint8), np.asarray(opt_mask, np.uint8),
        piece_ops, i32(piece_sig), i32(piece_rank), i32(piece_max), np.fromiter(map(len, anchors), np.int32, len(anchors)),
        i32(prefix_min), i32(prefix_max), anchors,
        np.asarray([p.literal is not None for sig in signatures.signatures for p in sig.pieces], np.uint8),
        sig_first, i32(sig_pieces), np.asarray(gap_after, np.int64),
        np.asarray(offset_kind, np.int8), np.asarray(offset, np.int64), np.asarray(shift, np.int64),
    )


def _anchor(elements: tuple) -> tuple[bytes, int, int]:
    """The longest run of exact bytes, and the least and most bytes before it in the piece."""
    best, best_at = b"", (0, 0)
    run, run_at = bytearray(), (0, 0)
    lo = hi = 0
    for e in elements:
        if e[0] == "byte" and e[2] == 0xFF:
            if not run:
                run_at = (lo, hi)
            run.append(e[1])
            if len(run) > len(best):
                best, best_at = bytes(run), run_at
        else:
            run = bytearray()
        a, b = element_span(e)
        lo, hi = lo + a, hi + b
    return best, best_at[0], best_at[1]
