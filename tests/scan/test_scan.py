"""Signature scanning against the regex oracle in tests/naive.py: parser, filters, verification,
buffers and their boundaries, offsets, thresholds."""

from __future__ import annotations

import gzip
import random

import ahocorasick

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqsift.errors import FormatError
from seqsift.scan.kernels import PAD
from seqsift.scan._gpu import GpuConfig
from seqsift.scan.api import objects_of, scan
from seqsift.scan.engine import Engine, FilterCount
from seqsift.scan.pipeline import Scanner
from seqsift.scan.signatures import FROM_EOF, FROM_START, from_strings, load_databases, parse_hex_signature
from seqsift.scan.table import build_key_tag_table
from tests import naive
from tests.conftest import data_file

TINY_GPU = GpuConfig(threads_per_block=16, blocks=4, capacity=8)  # the simulator runs each GPU thread in Python

def random_signature(rng: random.Random, data: bytes, length: int) -> str:
    """A signature that occurs in data: a window of it written with exact bytes, nibble and
    whole-byte wildcards, alternatives, bounded gaps and, now and then, *."""
    a = rng.randrange(0, len(data) - length)
    window = data[a : a + length]
    out, i = [], 0
    while i < len(window):
        roll = rng.random()
        inner = 0 < i < len(window) - 3
        if inner and roll < 0.04:
            k = rng.randint(1, 3)
            lo, hi = rng.randint(0, k), k + rng.randint(0, 2)
            out.append(rng.choice([f"{{{lo}-{hi}}}", f"{{{k}}}", f"{{-{hi}}}"]))
            i += k
            continue
        if inner and roll < 0.05:
            out.append("*")
            i += rng.randint(0, 3)
            continue
        b = window[i]
        if roll < 0.08:
            out.append("??")
        elif roll < 0.10:
            out.append(f"{b >> 4:x}?")
        elif roll < 0.12:
            out.append(f"?{b & 15:x}")
        elif roll < 0.15:
            other = rng.randrange(256)
            out.append(f"({b:02x}|{other:02x})" if rng.random() < 0.5 else f"({other:02x}|{b:02x})")
        else:
            out.append(f"{b:02x}")
        i += 1
    return "".join(out)


def corpus(seed: int, files: int, size: int, alphabet: int = 256) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, alphabet, int(rng.integers(0, size)), dtype=np.uint8).tobytes() for _ in range(files)]


def oracle(objects: list[bytes], sigs: list[tuple[str, str]]) -> list[dict[str, list[int] | None]]:
    """Per object: signature name -> every start (one-piece signatures) or None (matched, with *)."""
    out = []
    for data in objects:
        found = {}
        for name, body in sigs:
            starts = naive.signature_starts(data, body)
            if starts:
                found[name] = None if ("*" in body or "-}" in body) else starts
        out.append(found)
    return out


def engine_view(results) -> list[dict[str, list[int] | None]]:
    return [{m.name: m.offsets for m in r.matches} for r in results]


def assert_same(got, want) -> None:
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert set(g) == set(w), f"object {k}: extra {set(g) - set(w)}, missing {set(w) - set(g)}"
        for name, starts in w.items():
            if starts is not None:
                assert g[name] == starts[:100], f"object {k} {name}"


def make_case(seed: int, alphabet: int = 256, n_sigs: int = 40):
    rng = random.Random(seed)
    objects = corpus(seed, 6, 3000, alphabet)
    source = b"".join(objects) or b"\x00" * 64
    sigs = []
    for k in range(n_sigs):
        length = rng.randint(3, 40)
        if rng.random() < 0.7 and len(source) > length + 1:
            sigs.append((f"S{k}", random_signature(rng, source, length)))
        else:
            sigs.append((f"R{k}", bytes(rng.randrange(alphabet) for _ in range(length)).hex()))
    return objects, sigs


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("filter", ["stride", "table"])
def test_random_corpus_matches_oracle(seed, filter):
    objects, sigs = make_case(seed, alphabet=4 if seed % 2 else 256)
    want = oracle(objects, sigs)
    for buffer_size, buffers, threads in ((1 << 20, 3, 1), (512, 3, 2), (256, 1, 1)):
        got = scan(objects, from_strings(sigs), buffer_size=buffer_size, filter=filter, threads=threads)
        assert_same(engine_view(got), want)


def test_small_buffers_and_every_boundary():
    """A signature placed across every buffer boundary of a long file is found at each place."""
    sig = bytes(range(100, 132))
    span = len(sig)
    buffer_size = 4 * span
    data = bytearray(np.random.default_rng(1).integers(0, 50, 40 * buffer_size, dtype=np.uint8).tobytes())
    places = [0, len(data) - span]
    for cut in range(buffer_size, len(data) - span, buffer_size - (span - 1)):
        places.append(cut - span // 2)
    for p in places:
        data[p : p + span] = sig
    data = bytes(data)
    want = naive.find_all_fast(data, sig)
    results = scan([data], from_strings([("X", sig.hex())]), buffer_size=buffer_size)
    assert results[0].matches[0].count == len(want)
    assert results[0].matches[0].offsets == want[:100]


def test_offset_zero_last_byte_and_empty_objects():
    sigs = from_strings([("first", "00112233445566778899"), ("last", "aabbccddeeff0102")])
    tail = b"\x09" * 100 + bytes.fromhex("aabbccddeeff0102")
    results = scan([bytes.fromhex("00112233445566778899") + b"\x09" * 50, b"", tail], sigs)
    assert [[(m.name, m.offsets) for m in r.matches] for r in results] == [[("first", [0])], [], [("last", [100])]]


def test_matches_never_span_two_objects():
    sig = bytes(range(1, 21))
    results = scan([b"abc" + sig[:10], sig[10:] + b"xyz"], from_strings([sig.hex()]), buffer_size=1 << 16)
    assert all(not r.matches for r in results)


@pytest.mark.parametrize("offset,want", [("*", [True, True]), ("3", [True, False]), ("2,1", [True, False]),
                                         ("5,4", [False, True]), ("EOF-22", [True, False]), ("EOF-15,10", [False, True])])
def test_offset_rules(offset, want):
    body = "0102030405060708090a"
    objects = [b"abc" + bytes.fromhex(body) + b"x" * 12, b"abcdefg" + bytes.fromhex(body) + b"y" * 3]
    sigs = from_strings([f"Sig:0:{offset}:{body}"])
    got = [bool(r.matches) for r in scan(objects, sigs)]
    assert got == want == [naive.signature_matches(o, body, offset) for o in objects]


def test_unbounded_gaps_chain_in_order():
    sig = "41414141414141*4242424242424242{3-}4343434343"
    a, b, c = b"A" * 7, b"B" * 8, b"C" * 5
    objects = [a + b"..." + b + b"xyz" + c, c + b + a, a + b + b"xy" + c, a + b"-" * 20000 + b + b"ab" * 3000 + c]
    got = [bool(r.matches) for r in scan(objects, from_strings([sig]), buffer_size=4096)]
    assert got == [naive.signature_matches(o, sig) for o in objects] == [True, False, False, True]


def test_one_per_key_table_statistics():
    """Signatures sharing every key position fill one bucket; a one-entry-per-key table would keep one."""
    sigs = from_strings([("k%d" % i, (bytes([i]) + b"ZZZZZZ").hex()) for i in range(30)])
    eng = Engine(sigs, filter="table")
    stats = eng.seed_table.stats
    assert stats.entries == 30 and stats.keys_used == 1 and stats.largest_bucket == 30
    assert stats.one_per_key_lost == 29


def test_key_choice_balances_buckets():
    rng = np.random.default_rng(5)
    sigs = from_strings([rng.integers(0, 256, 24, dtype=np.uint8).tobytes().hex() for _ in range(3000)])
    stats = Engine(sigs, filter="table").seed_table.stats
    assert stats.largest_bucket <= 2
    assert stats.keys_used >= 2900


def test_stride_and_table_filters_verify_the_same():
    data = np.random.default_rng(3).integers(0, 8, 200_000, dtype=np.uint8).tobytes()
    rng = random.Random(3)
    sigs = from_strings([(f"s{k}", random_signature(rng, data, rng.randint(6, 40))) for k in range(300)])
    a = engine_view(scan([data], sigs, filter="stride"))
    b = engine_view(scan([data], sigs, filter="table"))
    assert a == b and a[0]


def test_table_candidates_are_the_seed_filter():
    """The key+tag kernel reports exactly the (tag position, entry) pairs a direct reading of the
    key + tag loop (GPU Gems 3, ch. 35) gives."""
    rng = np.random.default_rng(9)
    data = rng.integers(0, 4, 5000, dtype=np.uint8)
    sigs = from_strings([data[i : i + 10].tobytes().hex() for i in rng.integers(0, 4990, 50)])
    eng = Engine(sigs, filter="table")
    table = eng.seed_table
    buf = np.zeros(PAD + data.size + PAD, np.uint8)
    buf[PAD : PAD + data.size] = data
    pos, entry = eng.table_candidates(table, buf, PAD, PAD + data.size)
    want = []
    for i in range(PAD, PAD + data.size - 1):
        key = int(buf[i]) | int(buf[i + 1]) << 8
        tag = int.from_bytes(buf[i - 4 : i].tobytes(), "little")
        for e in range(table.starts[key], table.starts[key + 1]):
            if tag & int(table.masks[e]) == int(table.tags[e]):
                want.append((i - 4, e))
    assert sorted(zip(pos.tolist(), entry.tolist())) == want


def test_no_verify_reports_a_superset():
    objects, sigs = make_case(11, alphabet=4)
    verified = engine_view(scan(objects, from_strings(sigs)))
    raw = engine_view(scan(objects, from_strings(sigs), verify=False))
    for v, r in zip(verified, raw):
        assert set(v) <= set(r)


def test_thresholds_fall_back_to_the_full_pass_with_the_same_hits():
    objects, sigs = make_case(12, alphabet=4, n_sigs=60)
    want = engine_view(scan(objects, from_strings(sigs)))
    for block, obj in ((0, None), (10**9, 0), (10**9, 5)):
        with Scanner(from_strings(sigs), filter="table", block_threshold=block, object_threshold=obj) as scanner:
            got = engine_view(list(scanner.scan(objects_of(objects), lambda p, w: None)))
            assert got == want
            assert scanner.stats.block_fallbacks + scanner.stats.object_fallbacks > 0


@pytest.mark.parametrize("block_threshold", [10**9, 0])
def test_pipeline_matches_the_oracle(backend, block_threshold):
    """The whole pipeline with each backend's key + tag table filter; block_threshold 0 sends every
    buffer down the full pass."""
    objects, sigs = make_case(4, alphabet=4, n_sigs=12)
    objects = [o[:300] for o in objects]
    want = oracle(objects, sigs)
    with Scanner(from_strings(sigs), backend=backend, filter="table", buffer_size=512,
                 gpu_config=TINY_GPU if backend == "cuda" else None, block_threshold=block_threshold) as scanner:
        got = list(scanner.scan(objects_of(objects), lambda p, w: None))
    assert_same(engine_view(got), want)
    assert (scanner.stats.block_fallbacks > 0) == (block_threshold == 0)


def test_signatures_without_a_fixed_run_are_kept():
    sigs = [("nib", "4?5?6?7?"), ("one", "41??42??43"), ("two", "4142{1-2}4344")]
    objects = [b"xxAyBzC--AB.CD--ABxyCD", b"@P`p"]
    assert_same(engine_view(scan(objects, from_strings(sigs))), oracle(objects, sigs))


@pytest.mark.parametrize("name", ["klebsiella_HS11286.fa.gz", "proteins_db.fa.gz"])
def test_real_files_against_oracle(name):
    """Signatures cut from the real (compressed) files, scanned as raw bytes, checked by regex."""
    data = data_file(name).read_bytes()[: 1 << 20]
    rng = random.Random(name)
    sigs = [(f"s{k}", random_signature(rng, data, rng.randint(16, 48)).replace("*", "??")) for k in range(200)]
    sigs += [(f"r{k}", rng.randbytes(20).hex()) for k in range(50)]
    got = engine_view(scan([data], from_strings(sigs), buffer_size=1 << 12, threads=2))
    want = oracle([data], sigs)
    assert_same(got, want)


def test_against_pyahocorasick_on_real_bytes():
    data = gzip.decompress(data_file("proteins_db.fa.gz").read_bytes())[: 2 << 20]
    rng = random.Random(7)
    literals = {data[a : a + rng.randint(16, 40)] for a in (rng.randrange(len(data) - 64) for _ in range(400))}
    literals = sorted(literals)
    automaton = ahocorasick.Automaton()
    for k, lit in enumerate(literals):
        automaton.add_word(lit.decode("latin-1"), k)
    automaton.make_automaton()
    want = {k for _, k in automaton.iter(data.decode("latin-1"))}
    got = scan([data], from_strings([(f"L{k}", lit.hex()) for k, lit in enumerate(literals)]), threads=2)
    assert {int(m.name[1:]) for m in got[0].matches} == want


# -- the parser -------------------------------------------------------------------------------------
def test_parser_forms():
    pieces, gaps = parse_hex_signature("4d5a??4?{2}?f(aa|bbcc){-3}01*0203{4-}04{1-2}05")
    assert len(pieces) == 3 and gaps == (0, 4)
    assert pieces[0].min_len == 2 + 1 + 1 + 2 + 1 + 1 + 0 + 1
    assert pieces[0].max_len == 2 + 1 + 1 + 2 + 1 + 2 + 3 + 1


@pytest.mark.parametrize("line,message", [
    ("Bad:0:*:4d5", "not a hex byte"),
    ("Bad:0:*:*4d5a", "start or end with a gap"),
    ("Bad:0:*:4d{3-1}5a", "maximum below"),
    ("Bad:0:*:4d(aa|)5a", "empty alternative"),
    ("Bad:0:*:4d(aa5a", "not closed"),
    ("Bad:0:EP+4:4d5a", "offset"),
    ("Bad:x:*:4d5a", "target type"),
    ("Bad:0:*", "fields"),
    ("Bad:0:*:4d!(aa|bb)5a", "not supported"),
    ("Bad:0:*:{2}", "at least one byte"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, message):
    db = tmp_path / "x.ndb"
    db.write_text(f"# comment\n\nGood:0:*:4d5a9000\n{line}\n")
    with pytest.raises(FormatError, match=message) as info:
        load_databases([db])
    assert info.value.line == 4 and str(db) in str(info.value)


def test_plain_hex_lists_and_comments(tmp_path):
    db = tmp_path / "list.txt"
    db.write_text("# one per line\n4d5a9000\n\n  0102030405  \n")
    sigs = load_databases([db])
    assert sigs.names() == ["list.txt:2", "list.txt:4"]
    ndb = from_strings(["Sig:1:EOF-10,5:0102"]).signatures[0]
    assert (ndb.offset_kind, ndb.offset, ndb.shift) == (FROM_EOF, 10, 5)
    assert from_strings(["Sig:0:7:0102"]).signatures[0].offset_kind == FROM_START


_TOKENS = st.sampled_from(["4d", "5a", "??", "4?", "?a", "*", "{2}", "{1-3}", "{-2}", "{3-}", "(aa|bb)",
                           "(0102|03)", "(", ")", "|", "{", "}", "-", "zz", "!", "0", ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS, max_size=12))
def test_parser_fuzz_never_crashes(tokens):
    body = "".join(tokens)
    try:
        sigs = from_strings([("F", body)])
    except FormatError:
        return
    data = b"\x4d\x5a\xaa\xbb\x01\x02\x03" * 20 + b"\x4d\x5a\x4a\xaa\x4d\x5a"
    got = bool(scan([data], sigs, buffer_size=4096)[0].matches)
    assert got == naive.signature_matches(data, body)


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=400), st.integers(0, 2**32))
def test_random_literals_fuzz(data, seed):
    rng = random.Random(seed)
    sigs = []
    for k in range(5):
        if len(data) >= 8 and rng.random() < 0.7:
            a = rng.randrange(len(data) - 7)
            sigs.append((f"s{k}", data[a : a + rng.randint(2, min(30, len(data) - a))].hex()))
        else:
            sigs.append((f"r{k}", rng.randbytes(rng.randint(2, 12)).hex()))
    assert_same(engine_view(scan([data], from_strings(sigs), buffer_size=256)), oracle([data], sigs))


def test_filter_count_stats_are_counted():
    sigs = from_strings(["0102030405060708090a0b0c0d0e0f10"])
    eng = Engine(sigs)
    buf = np.zeros(PAD + 64 + PAD, np.uint8)
    buf[PAD + 5 : PAD + 21] = np.arange(1, 17, dtype=np.uint8)
    count = FilterCount()
    found = eng.scan(buf, np.array([PAD]), np.array([PAD + 64]), count)
    assert count.candidates >= 1 and found.start.tolist() == [PAD + 5]
    assert len(build_key_tag_table(eng.program, eng.seed_pieces)) == 1


@pytest.mark.parametrize("filter", ["stride", "table"])
def test_threads_split_a_buffer_the_same(filter):
    """A buffer large enough to be cut between threads gives what one thread gives."""
    data = np.random.default_rng(8).integers(0, 16, 600_000, dtype=np.uint8).tobytes()
    rng = random.Random(8)
    sigs = from_strings([(f"s{k}", random_signature(rng, data, rng.randint(8, 40))) for k in range(200)])
    one = engine_view(scan([data], sigs, filter=filter, threads=1, buffer_size=1 << 20))
    two = engine_view(scan([data], sigs, filter=filter, threads=2, buffer_size=1 << 20))
    assert one == two and one[0]


def test_candidates_past_the_row_buffer_are_verified_in_turns(monkeypatch):
    """Dense true hits overflow a thread's candidate rows many times; memory stays at the row
    buffer and nothing is lost."""
    from seqsift.scan import engine as engine_module

    monkeypatch.setattr(engine_module, "ROW_BUFFER", 4)
    data = b"AB" * 4000 + b"xyz" + b"AB" * 3000
    sigs = [("ab", ("AB" * 10).encode().hex()), ("ba", ("BA" * 9).encode().hex()), ("x", b"BxyzAB".hex())]
    for verify in (True, False):
        got = scan([data], from_strings(sigs), threads=1, verify=verify)[0]
        counts = {m.name: m.count for m in got.matches}
        if verify:
            assert counts == {name: len(naive.signature_starts(data, body)) for name, body in sigs}
        else:
            assert counts["ab"] >= len(naive.signature_starts(data, sigs[0][1]))


@pytest.mark.parametrize("start_bits, key_bits", [(20, 20), (40, 30)])  # packed in one int64, and too wide to pack
def test_collector_distinct_starts_both_ways(start_bits, key_bits):
    """The collector's (key, start) deduplication equals a lexsort's, packed or not."""
    from seqsift.scan.results import _distinct_sorted

    rng = np.random.default_rng(start_bits)
    key = rng.integers(0, 1 << key_bits, 5000)[rng.integers(0, 300, 5000)]
    start = rng.integers(0, 1 << start_bits, 5000)
    key[::4], start[::4] = key[1::4], start[1::4]  # repeated pairs
    want = sorted(set(zip(key.tolist(), start.tolist())))
    got_key, got_start = _distinct_sorted(key, start)
    assert list(zip(got_key.tolist(), got_start.tolist())) == want
