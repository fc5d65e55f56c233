"""io.gather, the compiled read loop of `find -r`: every file it takes comes back byte for byte
where it says, in order, every file past the size limit is passed over, and every file it must
not take (standard input, a missing file, a fifo, a directory, a device, one that does not fit)
stops it there, as an obvious Python loop over the same files decides."""

import os

import numpy as np
import pytest

from seqsift.io.gather import ALONE, DONE, ROOM, Names, gather


def _tree(tmp_path, rng, n=60):
    """Regular files of random sizes (empty, small, around the limit), named in ASCII and not,
    with every kind of path the loop must leave alone among them; (paths, what each one is)."""
    os.makedirs(tmp_path / "dir")
    os.mkfifo(tmp_path / "fifo")
    kinds = {str(tmp_path / "dir"): "other", str(tmp_path / "fifo"): "other", str(tmp_path / "gone"): "other",
             "-": "other", "/dev/zero": "endless"}
    paths = list(kinds)
    for k in range(n):
        size = int(rng.choice([0, 1, 7, 300, 999, 1000, 1001, 2500]))
        name = f"f{k:02d}" + ("-é" if k % 5 == 0 else "") + (os.fsdecode(b"\xff") if k % 7 == 0 else "")
        path = tmp_path / name
        path.write_bytes(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        paths.append(str(path))
        kinds[str(path)] = "file"
    link = tmp_path / "link"
    link.symlink_to(paths[-1])  # the loop opens what a link names, as the walk's own opens do
    paths.append(str(link))
    kinds[str(link)] = "file"
    order = rng.permutation(len(paths))
    return [paths[k] for k in order], kinds


def _sized(path: str) -> int:
    """What lseek(SEEK_END) says of a path that is not a regular file (-1: it cannot be opened,
    or lseek fails): a directory on ext4 seems huge, and is passed over as large."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return -1
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    except OSError:
        return -1
    finally:
        os.close(fd)


def _expected(paths, kinds, room, largest):
    """The loop's calls as a slow loop decides them: per call (first, next, why), and the files
    passed over as large."""
    calls, k, used, first, large = [], 0, 0, 0, set()
    while k < len(paths):
        path = paths[k]
        size = os.path.getsize(path) if kinds[path] == "file" else 0
        why = None
        if size > largest or (kinds[path] == "other" and _sized(path) > largest):
            large.add(path)
            k += 1
            continue
        if kinds[path] == "other" or size >= room:
            why = ALONE
        elif kinds[path] == "endless":  # /dev/zero: sized 0 by lseek, and gives more
            why = ALONE
        elif used + size >= room:
            why = ROOM
        if why is None:
            used += size
            k += 1
            continue
        calls.append((first, k, why))
        used = 0
        if why == ALONE:
            k += 1
        first = k
    calls.append((first, k, DONE))
    return calls, large


def _run(paths, room, largest):
    """gather called as find's _search_opened calls it: per call (first, next, why), the bytes
    of every file read, and the files passed over."""
    names = Names(paths)
    buffer = bytearray(room)
    los, his = np.zeros(len(paths), np.int64), np.zeros(len(paths), np.int64)
    calls, read, passed, k = [], {}, set(), 0
    while True:
        first = k
        k, used, why = gather(names, first, buffer, 0, largest, los, his)
        calls.append((first, k, why))
        taken = [j for j in range(first, k) if los[j] >= 0]
        passed |= {paths[j] for j in range(first, k) if los[j] == his[j] == -1}
        assert len(taken) + len({paths[j] for j in range(first, k)} & passed) == k - first
        assert used == (his[taken[-1]] if taken else 0)
        for j in taken:
            read[paths[j]] = bytes(buffer[los[j] : his[j]])
        assert [los[j] for j in taken] == [0] + [his[j] for j in taken[:-1]] if taken else True  # back to back
        if why == DONE:
            return calls, read, passed
        k += why == ALONE


@pytest.mark.parametrize("room,largest", [(1 << 16, 1000), (2600, 2500), (1500, 1000), (64, 1 << 20)])
def test_every_file_read_whole_and_every_other_left_alone(tmp_path, rng, room, largest):
    paths, kinds = _tree(tmp_path, rng)
    calls, read, passed = _run(paths, room, largest)
    assert (calls, passed) == _expected(paths, kinds, room, largest)
    for path, data in read.items():
        assert kinds[path] == "file" and data == open(path, "rb").read(), path


def test_names_are_the_bytes_os_fsencode_gives(tmp_path):
    paths = ["a", "-", "b-é", os.fsdecode(b"c\xff"), ""]
    names = Names(paths)
    assert [names.names[s : names.names.index(b"\0", s)] if s >= 0 else None for s in names.starts] == [
        b"a", None, "b-é".encode(), b"c\xff", b""]
    assert list(Names([]).starts) == []


def test_an_empty_name_or_a_name_of_a_directory_is_left_alone(tmp_path):
    (tmp_path / "x").write_bytes(b"xyz")
    paths = ["", str(tmp_path), str(tmp_path / "x")]
    calls, read, passed = _run(paths, 1 << 12, 1 << 10)
    assert (calls, passed) == _expected(paths, {"": "other", str(tmp_path): "other", paths[2]: "file"}, 1 << 12, 1 << 10)
    assert calls[0] == (0, 0, ALONE) and read == {str(tmp_path / "x"): b"xyz"}  # a directory: alone or passed over
