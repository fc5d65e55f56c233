"""The .ssx index file: round trip, and every kind of damage a clear error (exit 2) rather than a
crash, a hang or a wrong answer."""

import json
import mmap
import os
import struct
import time
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqsift.cli import main
from seqsift.errors import InputError
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.ssx import ALIGN, PREAMBLE, load_index
from tests.conftest import LAMBDA


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    path = tmp_path_factory.mktemp("ssx") / "lambda.ssx"
    FMIndex.build(LAMBDA, kmer=5).save(path)
    return path.read_bytes()


def parts(data: bytes):
    _, _, header_len, _ = PREAMBLE.unpack(data[: PREAMBLE.size])
    header = json.loads(data[PREAMBLE.size : PREAMBLE.size + header_len])
    start = -(-(PREAMBLE.size + header_len) // ALIGN) * ALIGN
    return header, start


def rewrite_header(data: bytes, header: dict) -> bytes:
    """A header edited and re-checksummed, arrays kept in place (the header is padded to its old size)."""
    _, version, old_len, _ = PREAMBLE.unpack(data[: PREAMBLE.size])
    text = json.dumps(header, separators=(",", ":")).encode()
    assert len(text) <= old_len
    text = text + b" " * (old_len - len(text))
    return PREAMBLE.pack(b"SSXFMIDX", version, old_len, zlib.crc32(text)) + text + data[PREAMBLE.size + old_len :]


def test_round_trip_answers_the_same(tmp_path, good):
    path = tmp_path / "x.ssx"
    path.write_bytes(good)
    loaded = FMIndex.load(path)
    built = FMIndex.build(LAMBDA, kmer=5)
    reads = ["GAATTC", "GGATCC", "ACGTTT", "GGGCGGCGACCTCGCGGG"]
    assert loaded.locate(reads) == built.locate(reads)
    assert (loaded.arrays.kmer, loaded.arrays.sa_sample, loaded.arrays.repeat_sample) == (5, 32, 4)
    assert loaded.arrays.repeat_window == 12


def test_the_mapped_index_asks_for_huge_pages(tmp_path, good):
    """Its rank blocks are read at random: the map carries MADV_HUGEPAGE (the "hg" flag) wherever
    the kernel takes the advice, and the index answers as built."""
    from tests.io.test_mapped import vm_flags

    path = tmp_path / "x.ssx"
    path.write_bytes(good)
    loaded = FMIndex.load(path)
    if loaded.watch is None:
        pytest.skip("no read lease here: the index is read into memory, not mapped")
    flags = vm_flags(loaded.arrays.blocks.ctypes.data)
    if flags is None or not hasattr(mmap, "MADV_HUGEPAGE") or not os.path.isdir("/sys/kernel/mm/transparent_hugepage"):
        pytest.skip("no /proc/self/smaps, MADV_HUGEPAGE or transparent huge pages on this system")
    assert "hg" in flags
    reads = ["GAATTC", "GGATCC", "ACGTTT", "GGGCGGCGACCTCGCGGG"]
    assert loaded.locate(reads) == FMIndex.build(LAMBDA, kmer=5).locate(reads)


def test_the_mapped_index_is_read_ahead(tmp_path, monkeypatch, good):
    """Its rank blocks and samples are read at random: the whole map is read ahead where it is
    mapped (a cold index otherwise comes in a fault at a time), and the index answers as built."""
    from seqsift.io.mapped import MappedFile

    asked = []
    real = MappedFile.read_ahead
    monkeypatch.setattr(MappedFile, "read_ahead", lambda self: asked.append(self.fd) or real(self))
    path = tmp_path / "x.ssx"
    path.write_bytes(good)
    loaded = FMIndex.load(path)
    if loaded.watch is None:
        pytest.skip("no read lease here: the index is read into memory, not mapped")
    assert len(asked) == 1
    reads = ["GAATTC", "GGATCC", "ACGTTT", "GGGCGGCGACCTCGCGGG"]
    assert loaded.locate(reads) == FMIndex.build(LAMBDA, kmer=5).locate(reads)


@pytest.mark.parametrize("limit, dropped", [(0, True), (None, False)])
def test_a_large_written_index_leaves_the_page_cache(tmp_path, monkeypatch, limit, dropped):
    """Past ssx.DROP_BEHIND bytes the written file is synced and its cached pages dropped (so the
    first search reads it back in huge pages); below, left alone. The same index either way."""
    from seqsift.fmindex import ssx

    if limit is not None:
        monkeypatch.setattr(ssx, "DROP_BEHIND", limit)
    advised = []
    real = os.posix_fadvise
    monkeypatch.setattr(os, "posix_fadvise", lambda fd, start, length, advice: (
        advised.append((os.fstat(fd).st_size, advice)), real(fd, start, length, advice)))
    path = tmp_path / "x.ssx"
    built = FMIndex.build(LAMBDA, kmer=5)
    built.save(path)
    assert advised == ([(path.stat().st_size, os.POSIX_FADV_DONTNEED)] if dropped else [])
    reads = ["GAATTC", "GGATCC", "ACGTTT", "GGGCGGCGACCTCGCGGG"]
    assert FMIndex.load(path).locate(reads) == built.locate(reads)


def test_an_index_without_repeat_sampling_keys_loads(tmp_path, good):
    """Indexes written before repeat sampling: their marks are all multiples of sa_sample."""
    header, _ = parts(good)
    del header["repeat_sample"], header["repeat_window"]
    (tmp_path / "old.ssx").write_bytes(rewrite_header(good, header))
    (tmp_path / "new.ssx").write_bytes(good)
    old, new = FMIndex.load(tmp_path / "old.ssx"), FMIndex.load(tmp_path / "new.ssx")
    assert (old.arrays.repeat_sample, old.arrays.repeat_window) == (0, 0)
    reads = ["GAATTC", "GGATCC", "GGGCGGCGACCTCGCGGG"]
    assert old.locate(reads) == new.locate(reads) and any(count for count, _ in old.locate(reads))


def damaged(good):
    header, start = parts(good)
    blocks = header["arrays"]["blocks"]
    flip = bytearray(good)
    flip[start + blocks["offset"] + 100] ^= 0x10
    yield "checksum", bytes(flip), "corrupt (checksum mismatch)"
    yield "magic", b"NOTANIDX" + good[8:], "wrong magic"
    yield "version", good[:8] + struct.pack("<I", 99) + good[12:], "version 99"
    yield "truncated", good[: len(good) // 2], "truncated"
    yield "tiny", good[:10], "wrong magic"
    yield "empty", b"", "wrong magic"
    yield "header crc", good[: PREAMBLE.size + 3] + b"#" + good[PREAMBLE.size + 4 :], "header is corrupt"
    h = json.loads(json.dumps(header))
    h["arrays"]["blocks"]["dtype"] = "|O"
    yield "object dtype", rewrite_header(good, h), "describes array 'blocks' wrongly"
    h = json.loads(json.dumps(header))
    h["n"] = h["n"] + 64
    yield "inconsistent n", rewrite_header(good, h), "inconsistent"
    h = json.loads(json.dumps(header))
    h["C"][1] += 1
    yield "bad C", rewrite_header(good, h), "inconsistent: C"
    h = json.loads(json.dumps(header))
    h["sa_sample"] = 1  # the file's samples are every 32nd: walks would run past the bound
    yield "bad sa_sample", rewrite_header(good, h), "inconsistent"
    h = json.loads(json.dumps(header))
    h["repeat_window"] = -1
    yield "bad repeat_window", rewrite_header(good, h), "repeat_window"


@pytest.mark.parametrize("case", range(12))
def test_damaged_index_is_a_clear_error(tmp_path, good, case, capsys):
    what, data, message = list(damaged(good))[case]
    path = tmp_path / "bad.ssx"
    path.write_bytes(data)
    with pytest.raises(InputError, match="bad.ssx") as info:
        index = FMIndex.load(path)
        index.locate(["GAATTC", "ACGTACGTAAAC"])  # a load that slipped through must fail on use
    assert message in str(info.value), (what, str(info.value))
    reads = tmp_path / "r.fa"
    reads.write_text(">r\nGAATTC\n")
    assert main(["search", str(path), str(reads)]) == 2
    assert "bad.ssx" in capsys.readouterr().err


def test_crafted_samples_past_the_text_are_refused(tmp_path, good):
    """Checksums recomputed over a tampered array: the invariant checks still refuse it."""
    header, start = parts(good)
    spec = header["arrays"]["samples"]
    data = bytearray(good)
    at = start + spec["offset"]
    samples = np.frombuffer(bytes(data[at : at + 4 * spec["shape"][0]]), "<u4").copy()
    samples[3] = 10**9
    data[at : at + samples.nbytes] = samples.tobytes()
    spec["crc32"] = zlib.crc32(samples.tobytes())
    path = tmp_path / "crafted.ssx"
    path.write_bytes(rewrite_header(bytes(data), header))
    with pytest.raises(InputError, match="SA samples"):
        load_index(path)


def _tampered(blocks, n):
    """Each way a rank block can break an invariant the kernels rely on: (what, block, word,
    new value, the message)."""
    bit = np.uint64(1) << np.uint64(5)
    block = blocks[3]
    base = next(c for c in range(2, 6) if block[c] & bit)  # the base of the block's row 5
    other = 2 + (base - 1) % 4
    last = blocks.shape[0] - 1
    past = np.uint64(1) << np.uint64(n % 64)  # the row after the text's last, in the last block
    return [("a count", 3, 0, block[0] + np.uint64(1), "rank counts"),
            ("a row with two bases", 3, other, block[other] | bit, "base bitmaps overlap"),
            ("a row with no base", 3, base, block[base] & ~bit, "neither a base nor a mark"),
            ("a mark rank", 3, 7, block[7] + np.uint64(1), "mark ranks"),
            ("a bit past the text", last, 2, blocks[last, 2] | past, "bits past the last row")]


@pytest.mark.parametrize("case", range(5))
def test_crafted_rank_blocks_are_refused(tmp_path, good, case):
    """Checksums recomputed over tampered rank blocks: the one-pass invariant check refuses each."""
    header, start = parts(good)
    spec = header["arrays"]["blocks"]
    at = start + spec["offset"]
    nbytes = 8 * spec["shape"][0] * spec["shape"][1]
    blocks = np.frombuffer(good[at : at + nbytes], "<u8").reshape(spec["shape"]).copy()
    what, row, word, value, message = _tampered(blocks, header["n"])[case]
    blocks[row, word] = value
    data = bytearray(good)
    data[at : at + nbytes] = blocks.tobytes()
    spec["crc32"] = zlib.crc32(blocks.tobytes())
    path = tmp_path / "crafted.ssx"
    path.write_bytes(rewrite_header(bytes(data), header))
    with pytest.raises(InputError, match="inconsistent") as info:
        load_index(path)
    assert message in str(info.value), what


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1, exclude_max=True), value=st.integers(1, 255))
def test_any_flipped_byte_is_caught_or_harmless(tmp_path, good, where, value):
    """Every byte is under a checksum except alignment padding: a flip is an InputError, or (in
    padding) changes no answer."""
    data = bytearray(good)
    data[int(where * len(data))] ^= value
    path = tmp_path / "flip.ssx"
    path.write_bytes(bytes(data))
    try:
        index = FMIndex.load(path)
    except InputError:
        return
    original = tmp_path / "good.ssx"
    original.write_bytes(good)
    reads = ["GAATTC", "GGGCGGCGACCT", "ACGTTT"]
    assert index.locate(reads) == FMIndex.load(original).locate(reads)


@pytest.fixture
def counted_checks(tmp_path, monkeypatch):
    """A private cache directory, and the number of array checksums each load computes."""
    from seqsift.fmindex import ssx

    monkeypatch.setenv("SEQSIFT_CACHE_DIR", str(tmp_path / "cache"))
    calls = []
    real = ssx._crc
    monkeypatch.setattr(ssx, "_crc", lambda array: calls.append(1) or real(array))
    return calls


def test_an_unchanged_checked_file_loads_without_reading_its_arrays(tmp_path, good, counted_checks, monkeypatch):
    from seqsift import filestatus

    monkeypatch.setattr(filestatus, "SETTLED_NS", 0)
    path = tmp_path / "x.ssx"
    path.write_bytes(good)
    reads = ["GAATTC", "GGGCGGCGACCT", "ACGTTT"]
    want = FMIndex.load(path).locate(reads)
    assert len(counted_checks) == 7  # every array's checksum
    counted_checks.clear()
    assert FMIndex.load(path).locate(reads) == want
    assert counted_checks == []
    header, start = parts(good)
    data = bytearray(good)
    data[start + header["arrays"]["blocks"]["offset"] + 100] ^= 0xFF  # the same size, in place
    path.write_bytes(bytes(data))
    status = path.stat()
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 10**9))  # a later tick, as any later write has
    with pytest.raises(InputError, match="corrupt"):
        FMIndex.load(path)


def test_a_file_changed_just_now_is_checked_at_every_load(tmp_path, good, counted_checks, monkeypatch):
    """Its times might not change again on a write within the same clock tick (checked.py). The
    window is widened to days, so a slow first load (a kernel compiled) cannot outlast it."""
    from seqsift import filestatus

    monkeypatch.setattr(filestatus, "SETTLED_NS", 10**15)
    path = tmp_path / "x.ssx"
    path.write_bytes(good)
    FMIndex.load(path)
    FMIndex.load(path)
    assert len(counted_checks) == 14


def test_an_unwritable_cache_means_a_full_check_every_time(tmp_path, good, counted_checks, monkeypatch):
    from seqsift import filestatus

    monkeypatch.setattr(filestatus, "SETTLED_NS", 0)
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv("SEQSIFT_CACHE_DIR", str(tmp_path / "file" / "cache"))
    path = tmp_path / "x.ssx"
    path.write_bytes(good)
    FMIndex.load(path)
    FMIndex.load(path)
    assert len(counted_checks) == 14


@pytest.mark.parametrize("where", ["open directory", "open marker"])
def test_markers_others_may_write_do_not_skip_the_check(tmp_path, good, counted_checks, monkeypatch, where):
    """Issue item 6: in a cache directory anyone may write, a planted 'checked' marker would let a
    crafted index skip validation; such a directory is not used, and a marker others may write
    does not count."""
    from seqsift import filestatus

    monkeypatch.setattr(filestatus, "SETTLED_NS", 0)
    path = tmp_path / "x.ssx"
    path.write_bytes(good)
    FMIndex.load(path)  # remembered: its marker is made
    (marker,) = (tmp_path / "cache" / "checked-indexes").iterdir()
    if where == "open directory":
        (tmp_path / "cache").chmod(0o777)
    else:
        marker.chmod(0o666)
    counted_checks.clear()
    FMIndex.load(path)
    assert len(counted_checks) == 7  # checked in full again


CYCLE = ("import sys\n"
         "import numpy as np\n"
         "from seqsift.fmindex.layout import IndexArrays\n"
         "from seqsift.fmindex.reference import Reference\n"
         "from seqsift.fmindex.ssx import write_index\n"
         "n = 3  # BWT rows '$', 'A', 'A': LF(1) = C[A] + rank(A, 1) = 1, a cycle that meets no mark\n"
         "blocks = np.zeros((1, 8), np.uint64)\n"
         "blocks[0, 2] = 0b110  # rows 1 and 2 hold A\n"
         "blocks[0, 6] = 0b001  # row 0 ('$') is the only mark\n"
         "arrays = IndexArrays(blocks=blocks, C=np.array([1, 3, 3, 3]), samples=np.array([2], np.uint32),\n"
         "    kmer_table=np.array([[0, n]], np.uint32), packed=np.zeros(1, np.uint8),\n"
         "    gaps=np.array([[2, 3]]), n=n, sa_sample=int(sys.argv[2]), repeat_sample=0, repeat_window=0, kmer=0)\n"
         "reference = Reference(text=None, names=['crafted'], starts=np.array([0]), lengths=np.array([2]))\n"
         "write_index(sys.argv[1], reference, arrays)\n")


@pytest.mark.parametrize("sa_sample", [2**62, 32])
def test_an_lf_cycle_with_valid_checksums_is_an_error_not_a_hang(tmp_path, sa_sample):
    """Issue item 7: a crafted index (valid checksums and invariants) whose LF walk cycles without
    a mark, and an sa_sample of 2^62: search and stats stop with a named error. Every walk is
    bounded by min(sa_sample, n) steps (ssx._check), the stats walks by 65 as well."""
    from tests.bounded import run_bounded, text

    index, reads = tmp_path / "cycle.ssx", tmp_path / "reads.fa"
    build = run_bounded([str(index), str(sa_sample)], code=CYCLE)
    assert build.returncode == 0, text(build)[1]
    reads.write_text(">r\nA\n")
    for command in (["search", str(index), str(reads), "-q"], ["stats", str(index)]):
        run = run_bounded(command, cpu=120)
        out, err = text(run)
        assert run.returncode == 2, (command, err)
        assert "cycle.ssx: the index is inconsistent" in err and "internal error" not in err, err


def _odd_headers(header):
    for edit in ("n", "sa_sample", "C", "shape", "offset", "list"):
        h = json.loads(json.dumps(header))
        h["source"] = ""  # room for the longer values in the header's old length
        if edit == "list":
            yield edit, [1, 2, 3]
            continue
        if edit in ("shape", "offset"):
            h["arrays"]["packed"][edit] = [float("inf")] if edit == "shape" else float("inf")
        elif edit == "C":
            h["C"][2] = float("inf")
        else:
            h[edit] = float("inf")  # written as Infinity, which Python's json reads (1e400 reads the same)
        yield edit, h


@pytest.mark.parametrize("case", range(6))
def test_odd_header_values_are_named_errors(tmp_path, good, case, capsys):
    """Issue item 9: header values that are no whole number in range (infinity, a list for the
    header) are an error naming the file, not an internal error (OverflowError)."""
    header, _ = parts(good)
    what, h = list(_odd_headers(header))[case]
    path = tmp_path / "bad.ssx"
    path.write_bytes(rewrite_header(good, h))
    reads = tmp_path / "r.fa"
    reads.write_text(">r\nGAATTC\n")
    assert main(["search", str(path), str(reads), "-q"]) == 2, what
    err = capsys.readouterr().err
    assert "bad.ssx: " in err and "internal error" not in err, (what, err)


# A search (`seqsift search`, or the Python API with `api`) in a bounded child whose first batch
# starts another process that truncates the index (or overwrites it in place) and waits until that
# writer waits on the index's lease, or has done its work (a plain map: the kernel then reads
# vanished pages, SIGBUS), before the batch's kernel runs; `hold` keeps the file open for writing
# from load to the writer's start, so no lease can be had and the index is read into memory.
DURING_A_BATCH = """
import os, subprocess, sys, time
from seqsift.fmindex import read_search
from seqsift.cli import main
path, how, hold = sys.argv[1], sys.argv[2], sys.argv[3] == 'hold'
WRITE = {'truncated': 'import os, sys; os.truncate(sys.argv[1], 4096)',
         'same size': 'import sys; f = open(sys.argv[1], "r+b"); f.seek(2000); f.write(bytes(5000))'}
held = open(path, 'r+b') if hold else None
exact = read_search.ReadSearch._exact
writer = []
def during(self, batch):
    if not writer:
        held and held.close()
        writer.append(subprocess.Popen([sys.executable, '-c', WRITE[how], path]))
        deadline = time.monotonic() + 120  # a guard against a hang only
        watch = self.index.watch
        while writer[0].poll() is None and (watch is None or watch.mapped.intact):
            assert time.monotonic() < deadline, 'the writer neither ran nor waited'
            time.sleep(0.01)
    return exact(self, batch)
read_search.ReadSearch._exact = during
code = main(sys.argv[4:])
sys.stdout.flush(), sys.stderr.flush()
os._exit(code)  # the map and its lease go with the process; the writer then goes on
"""


def _truncated_during_a_search(tmp_path, good, how, hold):
    from tests.bounded import run_bounded, text

    path, reads, out = tmp_path / "x.ssx", tmp_path / "r.fa", tmp_path / "out.tsv"
    path.write_bytes(good)
    reads.write_text(">a\nGAATTC\n>b\nGGATCC\n")
    expected = FMIndex.load(path).locate(["GAATTC", "GGATCC"])
    run = run_bounded([str(path), how, hold, "search", str(path), str(reads), "-q", "-t", "1", "-o", str(out)],
                      code=DURING_A_BATCH)
    deadline = time.monotonic() + 120  # the writer goes on once the search is gone (a guard only)
    while os.stat(path).st_size != (4096 if how == "truncated" else len(good)) or (
            how == "same size" and open(path, "rb").read()[2000:7000] != bytes(5000)):
        assert time.monotonic() < deadline, "the writer never finished"
        time.sleep(0.01)
    return run, text(run)[1], out, expected


@pytest.mark.parametrize("how", ["truncated", "same size"])
def test_an_index_truncated_during_a_search_is_an_error_not_a_crash(tmp_path, good, how):
    """Issue 30 item 9: an index truncated (or rewritten) in place by another process while a
    batch's kernel reads it used to end the search with SIGBUS or SIGSEGV. Mapped under a read
    lease, the writer waits until the search lets go of the map; the check after the batch sees
    it waiting and the search stops with an error naming the file (exit 2), no output written."""
    if FMIndex.load(_copy(tmp_path, good)).watch is None:
        pytest.skip("no read lease on this filesystem: the index is read into memory (the next test)")
    run, err, out, _ = _truncated_during_a_search(tmp_path, good, how, "map")
    assert run.returncode == 2, err
    assert f"{tmp_path / 'x.ssx'}: the index file was rewritten in place while in use" in err, err
    assert not out.exists()


@pytest.mark.parametrize("how", ["truncated", "same size"])
def test_an_index_that_cannot_be_leased_is_read_and_answers_right_when_truncated(tmp_path, good, how):
    """Where no lease can be had (here: the file open for writing while it loads) the index is
    read into private memory: a truncation during the search changes nothing it reads, and the
    answer is the one the file gave at load."""
    run, err, out, expected = _truncated_during_a_search(tmp_path, good, how, "hold")
    assert run.returncode == 0, err
    lines = out.read_text().splitlines()
    assert [int(line.split("\t")[1]) for line in lines] == [count for count, _ in expected]
    assert all(count > 0 for count, _ in expected)


def _copy(tmp_path, good):
    path = tmp_path / "probe.ssx"
    path.write_bytes(good)
    return path


def test_the_api_stops_a_search_whose_index_waits_on_a_writer(tmp_path, good):
    """FMIndex.locate after another process began to truncate the mapped index: an InputError
    naming the file, before any kernel reads it again."""
    from tests.bounded import run_bounded, text

    path = tmp_path / "x.ssx"
    path.write_bytes(good)
    if FMIndex.load(_copy(tmp_path, good)).watch is None:
        pytest.skip("no read lease on this filesystem: the index is read into memory")
    code = ("import os, subprocess, sys, time\n"
            "from seqsift.errors import InputError\n"
            "from seqsift.fmindex.api import FMIndex\n"
            "index = FMIndex.load(sys.argv[1])\n"
            "print(index.locate(['GAATTC'])[0][0])\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import os, sys; os.truncate(sys.argv[1], 4096)', sys.argv[1]])\n"
            "deadline = time.monotonic() + 120\n"
            "while index.watch.mapped.intact:\n"
            "    assert child.poll() is None and time.monotonic() < deadline\n"
            "    time.sleep(0.01)\n"
            "try:\n"
            "    index.locate(['GAATTC', 'GGATCC'])\n"
            "except InputError as exc:\n"
            "    print(exc)\n"
            "sys.stdout.flush()\n"
            "os._exit(0)\n")
    run = run_bounded([str(path)], code=code)
    out, err = text(run)
    assert run.returncode == 0, err
    count, message = out.splitlines()
    assert int(count) > 0 and message.startswith(f"{path}: the index file was rewritten in place while in use")


@pytest.mark.parametrize("craft", ["everywhere", "swapped", "outside"])
def test_a_crafted_kmer_table_with_valid_checksums_is_refused(tmp_path, craft):
    """Issue 30 item 7: a k-mer table rewritten and its checksums recomputed used to load and give
    false hits (every k-mer in [0, n)); the BWT's order of the intervals is checked on load."""
    import dataclasses

    index = FMIndex.build(LAMBDA, kmer=5)
    table = index.arrays.kmer_table.copy()
    present = np.flatnonzero(table[:, 0] < table[:, 1])
    if craft == "everywhere":
        table[:] = (0, index.arrays.n)
    elif craft == "swapped":  # two k-mers' intervals exchanged: out of code order
        a, b = present[10], present[-10]
        table[[a, b]] = table[[b, a]]
    else:  # an A... k-mer claiming the rows of suffixes that start with T
        table[present[0]] = (index.arrays.C[3], index.arrays.n)
    crafted = FMIndex(index.reference, dataclasses.replace(index.arrays, kmer_table=table), "crafted")
    path = tmp_path / "crafted.ssx"
    crafted.save(path)
    with pytest.raises(InputError, match="k-mer intervals overlap, are out of order"):
        FMIndex.load(path)
    index.save(tmp_path / "sound.ssx")
    FMIndex.load(tmp_path / "sound.ssx")  # the sound table passes


def test_an_index_too_large_to_read_without_a_lease_is_a_named_error(tmp_path):
    """Without a lease (here: the file open for writing) the index is read into memory; a file
    larger than the memory the process may take (a sparse 8 GiB file under a 2 GiB limit) is an
    error naming it, not an internal MemoryError."""
    from tests.bounded import run_bounded, text

    path = tmp_path / "huge.ssx"
    with open(path, "wb") as f:
        f.truncate(8 << 30)
    code = ("import sys\n"
            "from seqsift.errors import InputError\n"
            "from seqsift.fmindex.api import FMIndex\n"
            "held = open(sys.argv[1], 'r+b')\n"
            "try:\n"
            "    FMIndex.load(sys.argv[1])\n"
            "except InputError as exc:\n"
            "    print(exc)\n")
    run = run_bounded([str(path)], code=code)
    out, err = text(run)
    assert run.returncode == 0, err
    assert out.startswith(f"{path}: no read lease could be had on the index file"), out
