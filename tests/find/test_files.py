"""Many files through one job: small files packed into one buffer, large ones streamed."""

import os

import numpy as np
import pytest

from seqsift.errors import InputError
from seqsift.find import api as find_api
from seqsift.find.api import PACK_FILE_MAX, FindJob
from tests import naive


@pytest.fixture
def tree(tmp_path, rng):
    """Files of every kind of size: empty, shorter than the pattern, small, one past the packing limit."""
    sizes = [0, 3, 1, 700, 5000, 12_000, 64, PACK_FILE_MAX + 1, 2, 30_000, 9, 4096]
    paths = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"f{i:02d}"
        path.write_bytes(bytes(rng.integers(0, 3, size).astype(np.uint8) + 97))
        paths.append(str(path))
    return paths


def results(job, paths, count_only, regular=False):
    out = {}
    for path, parts in job.search_files(paths, count_only, regular=regular):
        parts = list(parts)
        out[path] = sum(parts) if count_only else np.concatenate(parts).tolist() if parts else []
    return out


@pytest.mark.parametrize("regular", [False, True])
@pytest.mark.parametrize("chunk_size", [40_000, 1 << 22])
def test_packed_and_streamed_files_match_the_oracle(tree, threads, chunk_size, regular):
    """regular=True: the files of a walk, each opened once and its descriptor read into the pack."""
    for pattern in (b"a", b"abca", b"cc" * 5):
        want = {p: naive.find_all_fast(open(p, "rb").read(), pattern) for p in tree}
        with FindJob(pattern, backend="cpu", threads=threads, chunk_size=chunk_size) as job:
            assert results(job, tree, count_only=False, regular=regular) == want
            assert results(job, tree, count_only=True, regular=regular) == {p: len(v) for p, v in want.items()}
            assert [p for p, _ in job.search_files(tree, True, regular=regular)] == tree  # input order, every file once


def test_a_walked_file_swapped_for_a_fifo_or_gone_is_an_error_naming_it(tree):
    """The walk saw regular files; by the time they are opened one is a fifo (opened without
    blocking: the compiled read loop cannot size it, the caller's fstat refuses it) and one is gone: each is an InputError naming it,
    after the files before it were searched."""
    want = {p: len(naive.find_all_fast(open(p, "rb").read(), b"ab")) for p in tree}
    os.unlink(tree[5])
    os.mkfifo(tree[5])
    with FindJob(b"ab", backend="cpu") as job:
        done = {}
        with pytest.raises(InputError, match=f"{tree[5]}.*fifo"):
            for path, parts in job.search_files(tree, True, regular=True):
                done[path] = sum(parts)
        assert done == {p: want[p] for p in tree[:5]}
    os.unlink(tree[5])
    with FindJob(b"ab", backend="cpu") as job, pytest.raises(InputError, match=tree[5]):
        results(job, tree, count_only=True, regular=True)


def test_a_file_that_grew_after_it_was_measured_is_searched_whole(tree, monkeypatch):
    """If a file is longer than its size said, packing refuses it and it is streamed whole."""
    real = find_api.regular_size
    monkeypatch.setattr(find_api, "regular_size", lambda p: max(0, real(p) // 2) if real(p) else real(p))
    want = {p: len(naive.find_all_fast(open(p, "rb").read(), b"ab")) for p in tree}
    with FindJob(b"ab", backend="cpu", threads=2) as job:
        assert results(job, tree, count_only=True) == want


def test_an_abandoned_single_file_search_leaves_the_pack_empty(tree):
    """offsets() on one small file borrows the job's pack; stopping halfway must not leave that
    file in it for the next search_files."""
    want = {p: len(naive.find_all_fast(open(p, "rb").read(), b"ab")) for p in tree}
    with FindJob(b"ab", backend="cpu") as job:
        gen = job.offsets(tree[3], count_only=True)
        next(gen)
        gen.close()
        assert results(job, tree, count_only=True) == want


def test_a_large_file_is_searched_through_a_map(tmp_path, rng, monkeypatch):
    """Past the packing limit a file is memory-mapped (io.mapped) in chunks laid out as an
    in-memory source's: counts and offsets as the oracle's, a match across each chunk cut included."""
    pattern = b"abcab"
    data = bytearray(rng.integers(97, 100, 3 * PACK_FILE_MAX + 777, dtype=np.uint8).tobytes())
    for cut in (PACK_FILE_MAX, 2 * PACK_FILE_MAX):
        data[cut - 2 : cut + 3] = pattern
    path = tmp_path / "big"
    path.write_bytes(bytes(data))
    used = []
    real = find_api.open_mapped
    monkeypatch.setattr(find_api, "open_mapped", lambda *a: used.append(real(*a)) or used[-1])
    with FindJob(pattern, backend="cpu", threads=2, chunk_size=PACK_FILE_MAX) as job:
        assert results(job, [str(path)], False)[str(path)] == naive.find_all(bytes(data), pattern)
        assert results(job, [str(path)], True)[str(path)] == len(naive.find_all(bytes(data), pattern))
    if None in used:
        pytest.skip("no read lease in this directory: the file was read, not mapped")
    assert len(used) == 2


def test_a_file_truncated_while_mapped_is_read_on_without_a_crash(tmp_path, rng, monkeypatch):
    """Another process truncates the file after the first chunk: its truncate waits on the lease,
    the map is given up before the next chunk, and the rest is read from the file, truncated or
    about to be (the truncate goes on once the lease is released): the bytes before the new end
    are there either way, and nothing that is not a match of the file is reported."""
    import subprocess
    import sys

    from tests.io.test_mapped import TRUNCATE, wait_until_broken

    pattern = b"abc"
    data = rng.integers(97, 100, 4 * PACK_FILE_MAX, dtype=np.uint8).tobytes()
    path = tmp_path / "big"
    path.write_bytes(data)
    keep = PACK_FILE_MAX + PACK_FILE_MAX // 2  # the truncated file ends inside the second chunk
    maps, children = [], []
    real = find_api.open_mapped
    monkeypatch.setattr(find_api, "open_mapped", lambda *a: maps.append(real(*a)) or maps[-1])
    try:
        with FindJob(pattern, backend="cpu", threads=1, chunk_size=PACK_FILE_MAX) as job:
            found = []
            for part in job.offsets(str(path), False):
                found += part.tolist()
                if not children:
                    if maps[0] is None:
                        pytest.skip("no read lease in this directory: the file was read, not mapped")
                    children.append(subprocess.Popen([sys.executable, "-c", TRUNCATE, str(path), str(keep)]))
                    wait_until_broken(maps[0], children[0])
    finally:
        for child in children:
            child.wait(timeout=120)
    assert children and children[0].returncode == 0
    assert found == sorted(set(found))
    assert set(naive.find_all(data[:keep], pattern)) <= set(found) <= set(naive.find_all(data, pattern))


@pytest.fixture
def small_tree(tmp_path, rng):
    """Many small files read by the walk's path: empty, shorter than the pattern, holding the
    pattern at their first and last bytes, and enough of them to fill several buffers."""
    paths = []
    for i in range(60):
        size = int(rng.choice([0, 1, 2, 3, 17, 300, 4000]))
        data = bytearray(rng.integers(97, 100, size, dtype=np.uint8).tobytes())
        if size >= 6 and i % 3 == 0:
            data[:3] = data[-3:] = b"abc"  # a match at both ends of the file
        path = tmp_path / f"s{i:02d}"
        path.write_bytes(bytes(data))
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("chunk_size", [64, 5000, 1 << 22])
def test_walked_small_files_match_the_oracle_across_buffers(small_tree, chunk_size):
    """Files packed one read each, the buffer searched when the next does not fit (chunk_size
    bounds the buffer: 64 bytes leaves most files to be searched alone), counts and offsets."""
    for pattern in (b"abc", b"a", b"abcabcabcabcabcabc"):
        want = {p: naive.find_all(open(p, "rb").read(), pattern) for p in small_tree}
        with FindJob(pattern, backend="cpu", chunk_size=chunk_size) as job:
            assert results(job, small_tree, False, regular=True) == want
            assert results(job, small_tree, True, regular=True) == {p: len(v) for p, v in want.items()}
        with FindJob(pattern.upper(), backend="cpu", chunk_size=chunk_size, ignore_case=True) as job:
            assert results(job, small_tree, True, regular=True) == {p: len(v) for p, v in want.items()}


def test_a_walked_path_that_is_a_device_now_is_an_error_naming_it(small_tree):
    """A device reads for ever (the compiled read loop gives up on it when it fills the buffer,
    io.gather): it is an InputError naming it, after the files before it were searched."""
    paths = small_tree[:9] + ["/dev/zero"] + small_tree[9:]
    assert counts_until_error(paths, "/dev/zero.*device") == counts(small_tree[:9], b"ab")


def _kernel_stops_at(bad: str, monkeypatch) -> None:
    """io.gather's loop made to leave `bad` to the caller, as it does a file whose open or read
    fails (the failures below are the Python path's, which then opens the file itself)."""
    real = find_api.gather

    def gather(names, first, buffer, used, largest, los, his):
        k, used, why = real(names, first, buffer, used, largest, los, his)
        if bad in names.paths[first:k]:
            j = names.paths.index(bad, first)
            return j, his[j - 1] if j > first else 0, find_api.ALONE
        return k, used, why

    monkeypatch.setattr(find_api, "gather", gather)


def test_a_walked_file_whose_read_fails_is_an_error_naming_it(small_tree, monkeypatch):
    """A read error ends the search with an InputError naming the file, after the files
    before it were given their counts."""
    from seqsift.io import pack

    bad = small_tree[7]
    _kernel_stops_at(bad, monkeypatch)
    real_open = pack.open_regular_fd
    fds = set()

    def opened(path):
        fd, size = real_open(path)
        if path == bad:
            fds.add(fd)
        return fd, size

    def read(fd, view):
        if fd in fds:
            raise OSError(5, "Input/output error")
        return os.readv(fd, (view,))

    class Failing:
        def readinto(self, view):
            raise OSError(5, "Input/output error")

        def close(self):
            pass

    monkeypatch.setattr(pack, "open_regular_fd", opened)
    monkeypatch.setattr(pack, "read_fd", read)
    monkeypatch.setattr(find_api, "open_binary", lambda path: Failing() if path == bad else open(path, "rb"))
    assert counts_until_error(small_tree, f"{bad}.*Input/output error") == counts(small_tree[:7], b"ab")


def counts(paths, pattern):
    return {p: len(naive.find_all(open(p, "rb").read(), pattern)) for p in paths}


def counts_until_error(paths, match):
    """The counts of b"ab" the walk's path gave before the InputError it must raise (matching `match`)."""
    done = {}
    with FindJob(b"ab", backend="cpu") as job, pytest.raises(InputError, match=match):
        for path, parts in job.search_files(paths, True, regular=True):
            done[path] = sum(parts)
    return done


def _open_refused(bad: str, monkeypatch) -> None:
    """`bad` made a file whose open is refused (EACCES) on every path that opens it: the compiled
    loop leaves it to the caller (_kernel_stops_at), and Python's opens raise PermissionError."""
    from seqsift.io import pack

    _kernel_stops_at(bad, monkeypatch)

    def refusing(real):
        def opened(path):
            if str(path) == bad:
                raise PermissionError(13, "Permission denied", str(path))
            return real(path)
        return opened

    monkeypatch.setattr(find_api, "open_regular_fd", refusing(find_api.open_regular_fd))
    monkeypatch.setattr(pack, "open_regular_fd", refusing(pack.open_regular_fd))


def test_a_walked_file_that_cannot_be_opened_is_an_error_naming_it(small_tree, monkeypatch):
    """`find -r` leaves read permission to the open (io.tree's check_readable=False): a file
    whose open is refused is an InputError naming it and why, after the files before it."""
    bad = small_tree[4]
    _open_refused(bad, monkeypatch)
    assert counts_until_error(small_tree, f"{bad}.*Permission denied") == counts(small_tree[:4], b"ab")


def test_a_named_file_that_cannot_be_opened_is_named_and_the_others_counted(small_tree, monkeypatch, capsys):
    """Files named on the command line are stat'ed once (io.openers.named_regular), their read
    permission left to the open as a walk's are: a file whose open is refused is named on stderr
    with why, every other file is counted, and the exit status is 2 (grep's rule)."""
    from seqsift.cli import main

    bad = small_tree[4]
    _open_refused(bad, monkeypatch)
    assert main(["find", "-q", "-t", "1", "-c", "ab", *small_tree]) == 2
    out, err = capsys.readouterr()
    rows = dict(line.rsplit("\t", 1) for line in out.splitlines())
    assert rows == {p: str(n) for p, n in counts([p for p in small_tree if p != bad], b"ab").items()}
    assert bad in err and "Permission denied" in err and err.count("\n") == 1
