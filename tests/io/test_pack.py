"""io.pack, the one packer of small files both `find` and `scan` use, and io.tree's walk: every
object's bytes come back whole and once, across buffer cuts, with padding zeroed."""

import os

import numpy as np
import pytest

from seqsift.errors import InputError
from seqsift.find.api import FindJob
from seqsift.io.pack import PackedObject, Packer, regular_size
from seqsift.io.tree import walk
from tests import naive


def random_objects(tmp_path, rng, n=40):
    objects, contents = [], []
    for k in range(n):
        data = rng.integers(0, 256, int(rng.choice([0, 1, 5, 60, 300, 2000]))).astype(np.uint8).tobytes()
        if rng.random() < 0.3:
            objects.append(PackedObject(k, f"<memory:{k}>", None, data=data))
        else:
            path = tmp_path / f"f{k}"
            path.write_bytes(data)
            objects.append(PackedObject(k, str(path), str(path)))
        contents.append(data)
    return objects, contents


@pytest.mark.parametrize("size,carry,pad", [(7, 3, 0), (64, 0, 4), (500, 9, 16), (1 << 16, 5, 0)])
def test_packed_objects_come_back_whole(tmp_path, rng, size, carry, pad):
    objects, contents = random_objects(tmp_path, rng)
    packer = Packer(iter(objects), size, carry, pad=pad)
    rebuilt = {k: bytearray() for k in range(len(objects))}
    buf = np.full(pad + size + pad, 7, np.uint8)
    while (filled := packer.fill(buf)) is not None:
        assert filled.n <= size and not buf[pad + filled.n : pad + filled.n + pad].any()
        for s in filled.segments:
            piece = buf[s.lo : s.hi].tobytes()
            have = rebuilt[s.obj.index]
            assert s.new_from == len(have) and s.file_offset <= len(have)
            assert bytes(have[s.file_offset :]) == piece[: len(have) - s.file_offset]  # the carried bytes repeat
            have += piece[s.new_from - s.file_offset :]
            assert s.new_from - s.file_offset <= carry
    assert [bytes(rebuilt[k]) for k in range(len(objects))] == contents
    assert [o.size for o in objects] == [len(c) for c in contents]


def test_an_unopenable_file_is_reported_or_raised(tmp_path):
    good = tmp_path / "good"
    good.write_bytes(b"abc")
    objects = [PackedObject(0, "missing", str(tmp_path / "missing")), PackedObject(1, str(good), str(good))]
    seen = []
    filled = Packer(iter(objects), 100, 0, lambda p, why: seen.append((p, why))).fill(np.empty(100, np.uint8))
    assert [s.obj.index for s in filled.segments] == [1] and seen[0][0] == "missing" and "skipped" in seen[0][1]
    with pytest.raises(InputError, match="missing"):
        Packer(iter(objects), 100, 0).fill(np.empty(100, np.uint8))


def test_find_packs_files_cut_across_tiny_buffers(tmp_path, rng, threads):
    paths = []
    for k in range(60):
        path = tmp_path / f"f{k:02d}"
        path.write_bytes(bytes(rng.integers(0, 2, int(rng.integers(0, 200))).astype(np.uint8) + 97))
        paths.append(str(path))
    for pattern in (b"a", b"abab", b"aabba"):
        with FindJob(pattern, backend="cpu", threads=threads, chunk_size=16) as job:
            got = {p: np.concatenate(list(parts)).tolist() for p, parts in job.search_files(paths, False)}
            counts = {p: sum(parts) for p, parts in job.search_files(paths, True)}
        want = {p: naive.find_all(open(p, "rb").read(), pattern) for p in paths}
        assert got == want and counts == {p: len(v) for p, v in want.items()}


def test_walk_skips_what_is_not_a_readable_regular_file(tmp_path):
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "b.txt").write_bytes(b"b")
    (tmp_path / "d" / "e" / "a.txt").write_bytes(b"a")
    os.symlink(tmp_path / "d", tmp_path / "d" / "e" / "up")  # a directory link: not followed, no loop
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    os.mkfifo(tmp_path / "d" / "fifo")
    reported = []
    got = list(walk([str(tmp_path / "d"), str(tmp_path / "loop"), "-"], True, lambda p, why: reported.append(why)))
    assert got == [(str(tmp_path / "d" / "b.txt"),) * 2, (str(tmp_path / "d" / "e" / "a.txt"),) * 2, ("-", "-")]
    assert any("fifo" in why for why in reported) and any("loop" in why for why in reported)
    assert list(walk([str(tmp_path / "d")], False, lambda p, why: reported.append(why))) == []
    assert "use -r" in reported[-1]
    assert regular_size(str(tmp_path / "d" / "b.txt")) == 1 and regular_size(str(tmp_path / "d" / "fifo")) is None
