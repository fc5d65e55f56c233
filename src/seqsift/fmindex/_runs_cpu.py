"""The suffixes inside long runs of '#' (N in the FASTA), put in order directly instead of sorted:
the kernels pieces.py calls precompiled (precompiled.py).

Every suffix that starts with PREFIX '#' falls in one bucket of the piecewise sort (pieces.py):
on hg38, ~150 Mbp of N in runs of up to millions, a bucket of ~1.4 GB of positions, one piece
beyond any memory limit, and a sort that reads v symbols of each suffix to find them all alike.
Their order needs no sort. A suffix at p in a run [s, e) is '#' repeated a = e - p times, then
the suffix at e (a base, or the text's one '$'). Two such suffixes, a and b '#' long:
- a run that ends at the '$' comes first, its suffixes shortest first ('$' < '#');
- otherwise the longer run of '#' comes first (where the shorter one shows its base, '#' < base),
- and equal lengths are in the order of the suffixes after their runs, which the caller sorts
  (one suffix a run: few).
So the bucket is: the '$'-ended run's suffixes, a = PREFIX upwards; then for a from the longest
run down to PREFIX, p = e - a of every run at least a long, the runs in their followers' order.
It is written out a piece at a time, in that order, in time linear in the suffixes written.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(inline="always")
def _run_end(text, i):
    """Where the run of '#' (code 1) starting at i ends."""
    j = i
    while j < text.size and text[j] == 1:
        j += 1
    return j


@njit(cache=True)
def count_runs(text, shortest):
    """How many maximal runs of '#' are at least `shortest` long."""
    count = i = 0
    while i < text.size:
        if text[i] == 1:
            j = _run_end(text, i)
            count += j - i >= shortest
            i = j
        else:
            i += 1
    return count


@njit(cache=True)
def find_runs(text, shortest, starts, ends):
    """The starts and ends of the maximal runs of '#' at least `shortest` long, in text order
    (count_runs of them)."""
    k = i = 0
    while i < text.size:
        if text[i] == 1:
            j = _run_end(text, i)
            if j - i >= shortest:
                starts[k], ends[k] = i, j
                k += 1
            i = j
        else:
            i += 1


@njit(cache=True)
def write_runs(ends, lengths, groups, by_length, shortest, state, active, scratch, only_sample, v, member, out, tied):
    """Fills out (and tied) with the next suffixes of the runs followed by a base, in row order;
    returns how many (fewer than out.size only at the end). The runs are indexed in their
    followers' order, groups[r] the group of runs whose followers the caller could not tell apart
    (its suffixes of one length are tied: 1 in `tied` after the first); by_length: the runs
    longest first. state carries the walk from call to call: [a, next active run, runs made
    active, active runs, last a written, last group written]; active holds the runs at least a
    long in followers' order (scratch: room to merge newly active ones in). only_sample: only
    the positions in the difference cover (member[p % v] >= 0)."""
    a, j, k, na, last_a, last_group = state[0], state[1], state[2], state[3], state[4], state[5]
    w = 0
    while a >= shortest and w < out.size:
        if j == 0:
            k0 = k
            while k < by_length.size and lengths[by_length[k]] >= a:
                k += 1
            if k > k0:  # runs as long as a join the active ones, kept in followers' order
                fresh = np.sort(by_length[k0:k])
                x = y = t = 0
                while x < na or y < fresh.size:
                    if y == fresh.size or (x < na and active[x] < fresh[y]):
                        scratch[t] = active[x]
                        x += 1
                    else:
                        scratch[t] = fresh[y]
                        y += 1
                    t += 1
                active[:t] = scratch[:t]
                na = t
        while j < na and w < out.size:
            r = active[j]
            j += 1
            p = ends[r] - a
            if only_sample and member[p % v] < 0:
                continue
            out[w] = p
            tied[w] = a == last_a and groups[r] == last_group
            last_a, last_group = a, groups[r]
            w += 1
        if j == na:
            a -= 1
            j = 0
    state[0], state[1], state[2], state[3], state[4], state[5] = a, j, k, na, last_a, last_group
    return w


@njit(cache=True)
def prefix_codes(text, positions, prefix, codes):
    """The bucket of each position into codes: its first `prefix` symbols in base 6 ('$' and past
    the end 0)."""
    n = text.size
    for i in range(positions.size):
        code = 0
        for t in range(prefix):
            p = positions[i] + t
            code = code * 6 + (np.int64(text[p]) if p < n else 0)
        codes[i] = code
