"""Everything a kernel needs to know about one pattern, computed once on the host."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_PROBES = 4
_COMPLEMENT = bytes.maketrans(b"ACGTUNRYKMSWBDHVacgtunrykmswbdhv", b"TGCAANYRMKSWVHDBtgcaanyrmkswvhdb")


@dataclass(frozen=True)
class SearchPlan:
    """pattern: the bytes sought; fail: the KMP failure table (fail[q] = length of the longest
    proper border of pattern[:q+1]); probes: positions of the pattern bytes the CPU filter tests."""

    pattern: np.ndarray
    fail: np.ndarray
    probes: np.ndarray

    @property
    def length(self) -> int:
        return int(self.pattern.size)


def failure_table(pattern: bytes) -> np.ndarray:
    m = len(pattern)
    fail = np.zeros(max(m, 1), np.int32)
    k = 0
    for q in range(1, m):
        while k > 0 and pattern[k] != pattern[q]:
            k = int(fail[k - 1])
        if pattern[k] == pattern[q]:
            k += 1
        fail[q] = k
    return fail


def choose_probes(pattern: bytes, sample: np.ndarray | None) -> np.ndarray:
    """One position per quarter of the pattern, each the rarest byte of its quarter in `sample`
    (the start of the data): spread out and rare, so few positions survive all four tests."""
    m = len(pattern)
    freq = np.ones(256) if sample is None or sample.size == 0 else np.bincount(sample, minlength=256) + 1.0
    pat = np.frombuffer(pattern, np.uint8)
    edges = np.linspace(0, m, N_PROBES + 1).astype(np.int64)
    probes = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi <= lo:
            probes.append(probes[-1] if probes else 0)
            continue
        probes.append(int(lo + np.argmin(freq[pat[lo:hi]])))
    return np.asarray(probes, np.int64)


def make_plan(pattern: bytes, sample: np.ndarray | None = None) -> SearchPlan:
    if not pattern:
        raise ValueError("empty pattern")
    return SearchPlan(
        pattern=np.frombuffer(bytes(pattern), np.uint8).copy(),
        fail=failure_table(pattern),
        probes=choose_probes(pattern, sample),
    )


def reverse_complement(seq: bytes) -> bytes:
    """IUPAC-aware reverse complement; other letters map to themselves."""
    return seq.translate(_COMPLEMENT)[::-1]
