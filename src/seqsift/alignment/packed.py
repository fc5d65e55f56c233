"""16-bit pairs packed two to a 32-bit word, as the DPX kernel of "Smith-Waterman with DPX" computes, and
one local alignment of a query against TWO database sequences at once, one per half-word.

The arithmetic is written here in plain integer operations with the exact semantics of the
CUDA intrinsics it stands for (per half-word, two's complement, wrapping adds):
    vimax3_s16x2_relu(a, b, c)  max(a, b, c, 0)        (H: the local alignment's floor at 0)
    viaddmax_s16x2(a, b, c)     max(a + b, c)          (I and D: never clamped at 0)
    vadd_s16x2(a, b)            a + b
The same Python (register_jitable) compiles with numba for the CPU (tests) and with numba-cuda for
the GPU's portable path; on sm_90 the GPU kernel calls the hardware DPX instructions instead (_gpu.py). Scores never
reach the 16-bit limits: the caller sends a pair here only when min(m, n) * (largest score) stays
below GUARD, and every intermediate value then lies in [NEG - extend, GUARD + largest score].
"""

from __future__ import annotations

from numba.extending import register_jitable

NEG = -16384
GUARD = 32767 - 1024  # the best score a packed pair may reach; MAX_SCORE (1000) below 32767
MASK = 0xFFFF


@register_jitable
def lo16(w):
    x = int(w) & MASK
    return x - 0x10000 if x >= 0x8000 else x


@register_jitable
def hi16(w):
    x = (int(w) >> 16) & MASK
    return x - 0x10000 if x >= 0x8000 else x


@register_jitable
def pack(lo, hi):
    return (int(lo) & MASK) | ((int(hi) & MASK) << 16)


@register_jitable
def vimax3_s16x2_relu(a, b, c):
    return pack(max(lo16(a), lo16(b), lo16(c), 0), max(hi16(a), hi16(b), hi16(c), 0))


@register_jitable
def viaddmax_s16x2(a, b, c):
    return pack(max(lo16(lo16(a) + lo16(b)), lo16(c)), max(lo16(hi16(a) + hi16(b)), hi16(c)))


@register_jitable
def vadd_s16x2(a, b):
    return pack(lo16(a) + lo16(b), hi16(a) + hi16(b))


def make_pair_aligner(vimax3_relu, viaddmax, vadd):
    """The two-sequence local alignment over the given packed operations (emulated or DPX)."""

    def align_pair(profile, m, seq_a, len_a, seq_b, len_b, pad_letter, neg_oe, neg_e, H, D):
        """Best local scores of the query against seq_a and seq_b, packed (a in the low half).
        profile[letter * m + i] is query residue i's score against letter; H and D: scratch of
        m + 1 words."""
        zero = pack(0, 0)
        neg = pack(NEG, NEG)
        for i in range(m + 1):
            H[i] = zero
            D[i] = neg
        best = zero
        columns = max(len_a, len_b)
        for j in range(columns):
            ra = seq_a[j] if j < len_a else pad_letter
            rb = seq_b[j] if j < len_b else pad_letter
            diag = zero
            up = zero
            gap = neg
            for i in range(1, m + 1):
                s = pack(profile[int(ra) * m + i - 1], profile[int(rb) * m + i - 1])
                left = H[i]
                d = viaddmax(left, neg_oe, vadd(D[i], neg_e))
                gap = viaddmax(up, neg_oe, vadd(gap, neg_e))
                h = vimax3_relu(vadd(diag, s), d, gap)
                diag = left
                H[i] = h
                D[i] = d
                up = h
                best = vimax3_relu(best, h, zero)
        return best

    return align_pair
