"""Hypothesis cases for the scan engine and its database parser, run by test_hostile.py in a child
process held to a memory limit (tests/bounded.py), each case also held to CPU seconds of its own
(ITIMER_PROF): random signatures with masked bytes, bounded gaps, alternatives and unbounded gaps
against random data drawn from their own bytes, checked against the regex oracle (tests/naive.py)."""

from __future__ import annotations

import functools
import signal
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqsift import scan
from seqsift.errors import FormatError
from seqsift.scan.signatures import from_strings
from tests import naive

CASE_CPU_SECONDS = 30  # one case: far above a linear verifier's need, far below a quadratic one's

_BYTES = [0x41, 0x42, 0x43, 0x4D, 0x5A, 0x00]
_byte = st.sampled_from(_BYTES)
_noise = st.lists(st.sampled_from(_BYTES + [0x01, 0x44]), max_size=8).map(bytes)


@st.composite
def _element(draw):
    """(text, one instance of its bytes): a byte, a masked byte or alternatives."""
    kind = draw(st.sampled_from(["byte", "byte", "byte", "masked", "alt"]))
    if kind == "byte":
        v = draw(_byte)
        return f"{v:02x}", bytes([v])
    if kind == "masked":
        text = draw(st.sampled_from(["??", "4?", "?1", "?2"]))
        v = draw(_byte)
        hi = v >> 4 if text[0] == "?" else int(text[0], 16)
        lo = v & 15 if text[1] == "?" else int(text[1], 16)
        return text, bytes([hi << 4 | lo])
    options = draw(st.lists(st.lists(_byte, min_size=1, max_size=3).map(bytes), min_size=1, max_size=4))
    return "(" + "|".join(o.hex() for o in options) + ")", draw(st.sampled_from(options))


@st.composite
def bodies(draw):
    """(signature, an instance of it): elements with gaps between some (bounded, or '*')."""
    v = draw(_byte)
    text, instance = [f"{v:02x}"], bytearray([v])
    for _ in range(draw(st.integers(1, 6))):
        sep = draw(st.sampled_from(["", "", "", "gap", "*"]))
        if sep == "gap":
            lo, hi = sorted((draw(st.integers(0, 6)), draw(st.integers(0, 6))))
            text.append(f"{{{lo}-{hi}}}")
            instance += draw(_noise.filter(lambda b, lo=lo, hi=hi: lo <= len(b) <= hi) | st.just(b"\x01" * lo))
        elif sep == "*":
            text.append("*")
            instance += draw(_noise)
        element, fill = draw(_element())
        text.append(element)
        instance += fill
    return "".join(text), bytes(instance)


@st.composite
def corpora(draw, instances):
    """Noise with the instances (and pieces of them) laid in at random."""
    out = bytearray(draw(_noise))
    for _ in range(draw(st.integers(0, 12))):
        item = draw(st.sampled_from(instances))
        if draw(st.booleans()):
            a, b = sorted((draw(st.integers(0, len(item))), draw(st.integers(0, len(item)))))
            item = item[a:b]
        out += item + draw(_noise)
    return bytes(out)


def _over_budget(signum, frame):
    raise TimeoutError(f"a case used more than {CASE_CPU_SECONDS} s of CPU")


def _bounded_case(fn):
    """Each case under its own CPU-time alarm (ITIMER_PROF counts this process's CPU time)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        signal.signal(signal.SIGPROF, _over_budget)
        signal.setitimer(signal.ITIMER_PROF, CASE_CPU_SECONDS)
        try:
            fn(*args, **kwargs)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    return run


@st.composite
def cases(draw):
    signatures = draw(st.lists(bodies(), min_size=1, max_size=4))
    return [body for body, _ in signatures], draw(corpora([inst for _, inst in signatures]))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(cases(), st.sampled_from([64, 128, 4096]))
@_bounded_case
def engine_against_the_oracle(case, buffer_size):
    signatures, data = case
    named = [(f"s{k}", body) for k, body in enumerate(signatures)]
    sigs = from_strings(named)
    span = max(p.max_len for s in sigs.signatures for p in s.pieces)
    buffer_size = max(buffer_size, 4 * span)
    (result,) = scan([data], sigs, buffer_size=buffer_size)
    got = {m.name: (m.count, m.offsets) for m in result.matches}
    for name, body in named:
        starts = naive.signature_starts(data, body)
        if "*" in body:
            assert (name in got) == bool(starts), (body, data)
        elif starts:
            assert got.get(name) == (len(starts), starts[:100]), (body, data)
        else:
            assert name not in got, (body, data)


_TOKENS = st.sampled_from(["4d", "5a", "??", "4?", "?a", "*", "{2}", "{1-3}", "{-2}", "{3-}", "(aa|bb)", "(0102|03)",
                           "(", ")", "|", "{", "}", "-", "zz", "!", "0", "", ":", "EOF-", "99999999999999999999",
                           "{0-65535}", "{9999999999999999999-}", "\n", "\u00e9"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(_TOKENS, max_size=14), st.sampled_from(["*", "0", "EOF-3", "2,4", "18446744073709551616", "x"]))
@_bounded_case
def parser_never_crashes(tokens, offset):
    """Any line is a signature or a FormatError naming it; one that parses scans like its regex."""
    body = "".join(tokens)
    try:
        sigs = from_strings([f"F:0:{offset}:{body}"])
    except FormatError:
        return
    data = b"\x4d\x5a\xaa\xbb\x01\x02\x03" * 20 + b"\x4d\x5a\x4a\xaa\x4d\x5a"
    got = bool(scan([data], sigs, buffer_size=max(4096, 4 * max(p.max_len for p in sigs.signatures[0].pieces)))[0].matches)
    assert got == naive.signature_matches(data, body, offset)


if __name__ == "__main__":
    {"engine": engine_against_the_oracle, "parser": parser_never_crashes}[sys.argv[1]]()
    print("ok")
