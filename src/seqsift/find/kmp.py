"""The KMP automaton step, written once and compiled for both the CPU (njit) and the GPU (cuda.jit)."""


def kmp_step(q, c, pattern, fail):
    """State after reading byte c in state q (q = length of the pattern prefix matched so far).
    The caller resets q to fail[m-1] after a full match (q == m)."""
    while q > 0 and pattern[q] != c:
        q = fail[q - 1]
    if pattern[q] == c:
        q += 1
    return q
