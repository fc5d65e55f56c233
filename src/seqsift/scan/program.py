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
    def max_span(self) -> int:
        return int(self.piece_max.max()) if self.piece_max.size else 0

    @property
    def scratch_size(self) -> int:
        """Slots the verifier needs to hold the set of positions a piece can have reached."""
        widest = int(np.max(np.append(self.op_b[self.op_kind == ALT], 1)))
        return (self.max_span + 2) * widest


def compile_program(signatures: SignatureSet) -> Program:
    kind, a, b = [], [], []
    opt_lo, opt_len, opt_val, opt_mask = [], [], [], []
    piece_ops, piece_sig, piece_rank, piece_max = [0], [], [], []
    anchor_len, prefix_min, prefix_max, anchors = [], [], [], []
    sig_first, sig_pieces, gap_after, offset_kind, offset, shift = [], [], [], [], [], []
    for s, sig in enumerate(signatures.signatures):
        sig_first.append(len(piece_sig))
        sig_pieces.append(len(sig.pieces))
        offset_kind.append(sig.offset_kind)
        offset.append(sig.offset)
        shift.append(sig.shift)
        for k, piece in enumerate(sig.pieces):
            for e in piece.elements:
                if e[0] == "byte":
                    kind.append(BYTE), a.append(e[1]), b.append(e[2])
                elif e[0] == "gap":
                    kind.append(GAP), a.append(e[1]), b.append(e[2])
                else:
                    kind.append(ALT), a.append(len(opt_lo)), b.append(len(e[1]))
                    for option in e[1]:
                        opt_lo.append(len(opt_val))
                        opt_len.append(len(option))
                        opt_val.extend(v for v, _ in option)
                        opt_mask.extend(m for _, m in option)
            piece_ops.append(len(kind))
            piece_sig.append(s)
            piece_rank.append(k)
            piece_max.append(piece.max_len)
            run, lo, hi = _anchor(piece.elements)
            anchors.append(run)
            anchor_len.append(len(run))
            prefix_min.append(lo)
            prefix_max.append(hi)
            gap_after.append(sig.gaps[k] if k < len(sig.gaps) else 0)
    i32 = lambda x: np.asarray(x, np.int32)  # noqa: E731
    return Program(
        np.asarray(kind, np.uint8), i32(a), i32(b), i32(opt_lo), i32(opt_len),
        np.asarray(opt_val, np.uint8), np.asarray(opt_mask, np.uint8),
        i32(piece_ops), i32(piece_sig), i32(piece_rank), i32(piece_max), i32(anchor_len),
        i32(prefix_min), i32(prefix_max), anchors,
        i32(sig_first), i32(sig_pieces), np.asarray(gap_after, np.int64),
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
