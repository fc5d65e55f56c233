"""One file's failure never loses another file's matches (issue 30): the failing file is named on
stderr, every other file is searched as if it had been given alone, and the exit status is grep's
(2 when an error occurred, even beside matches)."""

import errno
import io
import os

import pytest

from seqsift.cli import main
from seqsift.find import api
from seqsift.io import pack
from seqsift.scan import cluster as scan_cluster

PAGEMAP = "/proc/self/pagemap"  # stat says 0 bytes, a read fails with EINVAL: the packed small-file path


def run(capsysbinary, argv):
    code = main(["find", "-q", *argv])
    out, err = capsysbinary.readouterr()
    return code, out.decode(), err.decode()


class FailingStream(io.RawIOBase):
    """A file whose reads fail with EIO past its first `good` bytes (a disk error in the middle)."""

    def __init__(self, path, good: int):
        self.f, self.good = open(path, "rb", buffering=0), good

    def readable(self):
        return True

    def fileno(self):
        return self.f.fileno()

    def close(self):
        self.f.close()
        super().close()

    def readinto(self, b):
        at = self.f.tell()
        if at >= self.good:
            raise OSError(errno.EIO, "Input/output error")
        return self.f.readinto(memoryview(b)[: self.good - at])


@pytest.fixture
def files(tmp_path, rng, monkeypatch):
    """Good files (small ones packed together, a large one mapped or streamed in chunks) around a
    missing file, a file whose stream fails part-way (over 1 MiB, not mapped) and procfs's pagemap."""
    letters = list(b"abAB")
    small = tmp_path / "small.txt"
    small.write_bytes(bytes(rng.choice(letters, 5000).astype("uint8")))
    large = tmp_path / "large.txt"
    large.write_bytes(bytes(rng.choice(letters, 3 << 20).astype("uint8")))
    failing = tmp_path / "failing.txt"
    failing.write_bytes(bytes(rng.choice(letters, 3 << 20).astype("uint8")))
    for module in (api, pack, scan_cluster):  # every way find opens a file: streamed, packed, by scan
        for name in ("open_binary", "open_regular"):
            if hasattr(module, name):
                real = getattr(module, name)
                monkeypatch.setattr(module, name, lambda path, real=real: (
                    FailingStream(path, 1 << 20) if os.fspath(path) == str(failing) else real(path)))
    real_read = pack.read_fd  # the packer's reads of a descriptor (find -r, and files of one chunk)

    def read_fd(fd, view):
        if os.readlink(f"/proc/self/fd/{fd}") == str(failing):
            at = os.lseek(fd, 0, os.SEEK_CUR)
            if at >= 1 << 20:
                raise OSError(errno.EIO, "Input/output error")
            view = memoryview(view)[: (1 << 20) - at]
        return real_read(fd, view)

    monkeypatch.setattr(pack, "read_fd", read_fd)
    real_map = api.open_mapped  # the failing file streamed, as a file whose lease cannot be had is
    monkeypatch.setattr(api, "open_mapped", lambda path, *a: (
        None if os.fspath(path) == str(failing) else real_map(path, *a)))
    good = [str(small), str(large), str(small)]
    bad = [str(tmp_path / "missing.txt"), str(failing)]
    if os.path.exists(PAGEMAP):
        bad.append(PAGEMAP)
    mixed = [bad[-1], good[0], bad[0], good[1], bad[1], good[2], *bad]
    return good, bad, mixed


@pytest.mark.parametrize("flags", [["abA"], ["-c", "abA"], ["-l", "abA"], ["-L", "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"],
                                   ["-e", "abA", "-e", "Bb"], ["-c", "-e", "abA", "-e", "Bb", "-e", "aaa"],
                                   ["-l", "-e", "abA", "-e", "Bb", "-e", "aaa"], ["-i", "aba"],
                                   ["--chunk-size", "65536", "abA"]], ids=" ".join)
def test_every_other_file_is_searched(files, capsysbinary, flags):
    good, bad, mixed = files
    code, alone, err = run(capsysbinary, [*flags, *good])
    assert code == 0 and alone and not err
    code, out, err = run(capsysbinary, [*flags, *mixed])
    assert code == 2  # grep: an error occurred, even though lines were selected
    # the occurrences the failing stream gave before its error stay, as grep prints the lines it
    # read first; with -c, -l or -L, a file that failed has no line (its count is not known)
    if {"-c", "-l", "-L"} & set(flags):
        assert out == alone
    else:
        assert "".join(line for line in out.splitlines(True) if "failing.txt" not in line) == alone
    assert "internal error" not in err
    for path in bad:
        assert path in err


def test_fasta_records_after_a_malformed_file(tmp_path, capsysbinary):
    good = tmp_path / "good.fa"
    good.write_text(">r1\nACGTACGT\n>r2\nTTACGTAA\n")
    bad = tmp_path / "bad.fq"
    bad.write_text("@r1\nACGTACGT\n+\nII\n")
    code, alone, _ = run(capsysbinary, ["--fasta", "--revcomp", "ACGT", str(good), str(good)])
    assert code == 0 and alone.count("good.fa") == 12
    code, out, err = run(capsysbinary, ["--fasta", "--revcomp", "ACGT", str(good), str(bad), str(good)])
    assert (code, out) == (2, alone)
    assert "bad.fq:4: quality length 2 differs from sequence length 8" in err


def test_nothing_found_beside_an_error_is_still_2(tmp_path, capsysbinary):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"nothing")
    code, out, err = run(capsysbinary, ["xyz", str(tmp_path / "missing"), str(empty)])
    assert (code, out) == (2, "")
