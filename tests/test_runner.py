"""runner.py: results in input order, bounded parts in flight, threads=1 in the calling thread, one
pool per process; and every public entry point checking threads= and backend= by name."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import seqsift
import seqsift.distributed
from seqsift import runner
from seqsift.alignment import Database, align_pairs, dna, search_database
from seqsift.errors import BackendUnavailable, UsageError
from seqsift.fmindex.api import FMIndex
from tests import naive


def _sleepy(rng, n):
    return rng.random(n) / 500  # up to 2 ms a part: finishing order differs from input order


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_ordered_keeps_input_order(rng, threads):
    delays = _sleepy(rng, 60)
    work = runner.Work(lambda scale, k: (time.sleep(delays[k]), k * scale)[1], lambda: 3)
    assert list(runner.ordered(work, range(60), threads)) == [3 * k for k in range(60)]


def test_ordered_bounds_parts_in_flight(rng):
    threads, taken, read = 3, [], []

    def parts():
        for k in range(100):
            read.append(k)
            yield k

    for result in runner.ordered(runner.Work(lambda _, k: k, lambda: None), parts(), threads):
        taken.append(result)
        assert len(read) - len(taken) <= runner.IN_FLIGHT_PER_THREAD * threads + 1
    assert taken == list(range(100))


def test_ordered_runs_at_most_threads_parts_at_once(rng):
    delays = _sleepy(rng, 80)
    running, most, lock = [0], [0], threading.Lock()

    def one(_, k):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(delays[k])
        with lock:
            running[0] -= 1
        return k

    assert list(runner.ordered(runner.Work(one, lambda: None), range(80), 3)) == list(range(80))
    assert 1 < most[0] <= 3


def test_threads_1_runs_in_the_calling_thread():
    here = threading.get_ident()
    seen = list(runner.ordered(runner.Work(lambda _, k: threading.get_ident(), lambda: None), range(5), 1))
    seen += runner.split(lambda k: threading.get_ident(), list(range(5)), 1)
    assert set(seen) == {here}


def test_an_error_comes_after_every_earlier_result():
    def one(_, k):
        if k == 7:
            raise ValueError("part 7")
        return k

    got = []
    with pytest.raises(ValueError, match="part 7"):
        for result in runner.ordered(runner.Work(one, lambda: None), range(20), 4):
            got.append(result)
    assert got == list(range(7))

    def parts():
        yield from range(5)
        raise UsageError("bad input after part 4")

    got = []
    with pytest.raises(UsageError):
        for result in runner.ordered(runner.Work(lambda _, k: k, lambda: None), parts(), 3):
            got.append(result)
    assert got == list(range(5))


def test_a_single_part_runs_in_the_calling_thread_whatever_the_threads(monkeypatch):
    """No pool is started for one part (a tiny input's start-up); two or more go to the pool,
    and an error reading the second part still comes after the first part's result."""
    here = threading.get_ident()
    work = runner.Work(lambda _, k: (k, threading.get_ident()), lambda: None)
    real = runner.pool
    monkeypatch.setattr(runner, "pool", lambda threads: pytest.fail("a pool for one part"))
    assert list(runner.ordered(work, [5], 4)) == [(5, here)]
    assert list(runner.ordered(work, [], 4)) == []

    def one_then_bad():
        yield 1
        raise UsageError("bad input after part 1")

    got = []
    monkeypatch.setattr(runner, "pool", real)
    with pytest.raises(UsageError):
        for result, _ in runner.ordered(work, one_then_bad(), 4):
            got.append(result)
    assert got == [1]
    assert [k for k, _ in runner.ordered(work, iter(range(9)), 3)] == list(range(9))


@pytest.mark.parametrize("threads", [1, 2, 4, 7])
def test_split_keeps_item_order_and_gives_each_running_item_its_own_slot(rng, threads):
    delays = _sleepy(rng, 50)
    busy = [False] * threads

    def one(k, slot):
        assert not busy[slot]  # no two items running at once share a slot
        busy[slot] = True
        time.sleep(delays[k])
        busy[slot] = False
        return k * k

    assert runner.split(one, list(range(50)), threads, slot=True) == [k * k for k in range(50)]


def test_split_raises_an_item_error():
    def one(k):
        if k == 3:
            raise ValueError("item 3")
        return k

    with pytest.raises(ValueError, match="item 3"):
        runner.split(one, list(range(10)), 3)


def test_split_inside_ordered_parts_never_waits_on_itself():
    """Every pool thread busy with parts that split again: the splitting threads do the items."""
    work = runner.Work(lambda _, k: sum(runner.split(lambda i: i + k, list(range(20)), 4)), lambda: None)
    threads = runner.pool(1)._max_workers + 8  # more parts at once than the pool has threads
    assert list(runner.ordered(work, range(100), threads)) == [190 + 20 * k for k in range(100)]


def test_one_pool_per_process():
    assert runner.pool(2) is runner.pool(3)
    assert runner.pool(runner.pool(1)._max_workers + 1)._max_workers > 1


def test_cuts_tile_the_range():
    assert runner.cuts(10, 20, 3) == [(10, 13), (13, 16), (16, 20)]
    assert runner.cuts(0, 100, 4, step=8) == [(0, 24), (24, 48), (48, 72), (72, 100)]
    assert runner.cuts(0, 2, 4) == [(0, 1), (1, 2)]


def test_find_counts_the_same_on_any_threads(rng):
    text = rng.choice(np.frombuffer(b"ACGT", np.uint8), 3 << 20)  # past MIN_STARTS_TO_SPLIT: split among threads
    pattern = text[1000:1008].tobytes()
    expected = naive.find_all_fast(text.tobytes(), pattern)
    for threads in (1, 2, 3):
        assert seqsift.find(pattern, text, threads=threads, backend="cpu").tolist() == expected


# -- every public entry point checks threads= and backend=, naming the parameter -------------------
@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    path = tmp_path_factory.mktemp("index") / "ref.fa"
    path.write_text(">r\n" + "ACGTTGCAAGGCTTACCGATAGG" * 40 + "\n")
    return FMIndex.build(path, kmer=3), str(path)


def entry_points(small):
    index, fasta = small or (None, None)
    db = Database(["t"], ["ACGT"], dna())
    return {
        "find": lambda **kw: seqsift.find(b"AC", b"ACGT", **kw),
        "find_count": lambda **kw: seqsift.find_count(b"AC", b"ACGT", **kw),
        "find_records": lambda **kw: seqsift.find_records("AC", fasta, **kw),
        "scan": lambda **kw: seqsift.scan([b"ACGT"], ["4143"], **kw),
        "FMIndex.count": lambda **kw: index.count(["ACGT"], **kw),
        "FMIndex.locate": lambda **kw: index.locate(["ACGT"], **kw),
        "align": lambda **kw: seqsift.align("ACGT", "ACGA", "dna", **kw),
        "align_pairs": lambda **kw: align_pairs(["ACGT"], ["ACGA"], **kw),
        "search_database": lambda **kw: search_database(["ACGT"], db, **kw),
        # the Dask functions check before they touch the client
        "distributed.find": lambda **kw: seqsift.distributed.find(None, b"AC", b"ACGT", **kw),
        "distributed.find_records": lambda **kw: seqsift.distributed.find_records(None, "AC", fasta, **kw),
        "distributed.scan": lambda **kw: seqsift.distributed.scan(None, [b"ACGT"], ["4143"], **kw),
        "distributed.search": lambda **kw: seqsift.distributed.search(None, index, ["ACGT"], **kw),
        "distributed.search_database": lambda **kw: seqsift.distributed.search_database(None, ["ACGT"], db, **kw),
    }


NAMES = list(entry_points(None))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("threads", [0, -2, 1.5, "2", True])
def test_bad_threads_is_named(small_index, name, threads):
    with pytest.raises(UsageError, match=r"threads="):
        entry_points(small_index)[name](threads=threads)


@pytest.mark.parametrize("name", NAMES)
def test_bad_backend_is_named(small_index, name):
    with pytest.raises(UsageError, match=r"backend 'gpu' is not one of auto, cpu, cuda"):
        entry_points(small_index)[name](backend="gpu")


@pytest.mark.parametrize("name", [n for n in NAMES if not n.startswith("distributed.")])
def test_good_threads_and_backend_run(small_index, name):
    entry_points(small_index)[name](threads=2, backend="cpu")


def test_cuda_without_a_gpu_names_the_fix(small_index, monkeypatch):
    monkeypatch.setattr("seqsift.backend.cuda_status", lambda: (False, "no CUDA driver (libcuda) was found"))
    for name, call in entry_points(small_index).items():
        if name.startswith("distributed."):
            continue  # the workers decide where a named backend runs
        with pytest.raises(BackendUnavailable, match="use --backend cpu or auto"):
            call(backend="cuda")


def test_fmindex_threads_and_backend_give_the_same_hits(small_index, rng):
    small_index, fasta = small_index
    reads = ["".join(rng.choice(list("ACGT"), 5)) for _ in range(300)] + ["ACGTTGCAAGG", "NNA", ""]
    want = small_index.locate(reads, threads=1, backend="cpu")
    assert small_index.locate(reads, threads=3) == want
    assert small_index.count(reads, threads=3).tolist() == [c for c, _ in want]
    records = naive.read_records(fasta)
    assert [len(naive.dna_hits(records, r)) for r in reads] == [c for c, _ in want]


@pytest.mark.cuda
def test_fmindex_backend_cuda_takes_the_gpu_search(small_index):
    """backend="cuda" routes FMIndex.count/locate to the FM-index GPU search (the simulator under
    NUMBA_ENABLE_CUDASIM=1), with the CPU's results."""
    from seqsift.fmindex._gpu import GpuSearcher

    index, _ = small_index
    reads = ["ACGTTGCAAGG", "GATAGGACGT", "CCTATCGG", "ACGTN", ""]
    assert index.locate(reads, 20, backend="cuda", threads=2) == index.locate(reads, 20, backend="cpu")
    assert index.count(reads, backend="cuda").tolist() == index.count(reads, backend="cpu").tolist()
    assert any(isinstance(s, GpuSearcher) for s in index._searchers.values())
