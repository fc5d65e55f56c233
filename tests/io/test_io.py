"""The streaming layer: FASTA/FASTQ batches, compression, malformed input, byte chunks."""

import bz2
import gzip
import io
import lzma
import zlib

import numpy as np
import pytest

from seqsift.errors import FormatError, InputError
from seqsift.io.chunks import ArrayStream, ChunkReader, iter_chunks
from seqsift.io import fastx
from seqsift.io.fastx import read_batches
from tests import naive
from tests.conftest import LAMBDA, data_file

FASTA = b">chr1 first\nACGTn\nacg\r\n>chr2\n\n>chr3 x y\nTTTT\nGG\n"


def records_of(path, **kw):
    """Reassemble (name, sequence) from batches, checking piece starts along the way."""
    out = {}
    order = []
    for batch in read_batches(path, **kw):
        for i, name in enumerate(batch.names):
            piece = batch.seq[batch.bounds[i] : batch.bounds[i + 1]].tobytes().decode()
            if name not in out:
                order.append(name)
                out[name] = ""
            start = int(batch.start[i])
            assert out[name][start:] == piece[: len(out[name]) - start]  # overlap repeats what came before
            out[name] = out[name][:start] + piece
    return [(n, out[n]) for n in order]


@pytest.mark.parametrize("compress", [lambda b: b, gzip.compress, bz2.compress, lzma.compress], ids=["plain", "gz", "bz2", "xz"])
def test_fasta_any_compression(tmp_path, compress):
    path = tmp_path / "x.fa"
    path.write_bytes(compress(FASTA))
    assert records_of(path) == [("chr1", "ACGTNACG"), ("chr2", ""), ("chr3", "TTTTGG")]


def test_long_records_are_cut_with_overlap(tmp_path, rng):
    seqs = ["".join(rng.choice(list("ACGT"), int(rng.integers(0, 5000)))) for _ in range(20)]
    text = "".join(f">s{i}\n" + "\n".join(s[j : j + 70] for j in range(0, len(s), 70)) + "\n" for i, s in enumerate(seqs))
    path = tmp_path / "y.fa"
    path.write_text(text)
    for cap, overlap in ((50, 0), (50, 7), (1000, 99), (1 << 20, 3)):
        assert records_of(path, batch_bases=cap, overlap=overlap) == [(f"s{i}", s) for i, s in enumerate(seqs)]


def test_real_files_parse_like_the_oracle():
    for path in (LAMBDA, *map(data_file, ("klebsiella_HS11286.fa.gz", "lambda_reads_1.fq.gz", "lambda_longreads.fq.gz"))):
        want = naive.read_records(path)
        assert records_of(path, batch_bases=1 << 14, overlap=31) == want, path


def test_fastq(tmp_path):
    path = tmp_path / "r.fq"
    path.write_bytes(b"@r1 desc\nACGT\n+\nIIII\n@r2\nggn\n+r2\n!!!\n\n")
    assert records_of(path) == [("r1", "ACGT"), ("r2", "GGN")]


@pytest.mark.parametrize(
    "content, line, message",
    [
        (b">a\nACGT\nAC1T\n", 3, "invalid character '1'"),
        (b"ACGT\n>a\nAC\n", 1, "neither '>' nor '@'"),
        (b">a\nAC\n>\nGG\n", 3, "no name"),
        (b"@r1\nACGT\n+\nIII\n", 4, "quality length 3 differs from sequence length 4"),
        (b"@r1\nACGT\n-\nIIII\n", 3, r"'\+' separator"),
        (b"@r1\nACGT\n+\nIIII\n@r2\nAC\n", 5, "ends inside FASTQ record 'r2'"),
        (b"@r1\nACGT\n+\nIIII\nr2\n", 5, "starting with '@'"),
        (b"hello\n", 1, "neither '>' nor '@'"),
        (b">a\nAC\x00GT\n", 2, "invalid character"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path, content, line, message):
    path = tmp_path / "bad.fa"
    path.write_bytes(content)
    with pytest.raises(FormatError, match=message) as info:
        list(read_batches(path))
    assert info.value.line == line and info.value.path == str(path)
    assert f"{path}:{line}:" in str(info.value)


def test_corrupt_and_truncated_compression(tmp_path):
    whole = gzip.compress(FASTA * 1000)
    (tmp_path / "trunc.fa.gz").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "corrupt.fa.gz").write_bytes(whole[:20] + b"\xff" * 50 + whole[70:])
    for name in ("trunc.fa.gz", "corrupt.fa.gz"):
        with pytest.raises(FormatError, match="decompress"):
            list(read_batches(tmp_path / name))


def test_truncated_gzip_fasta_names_the_line_it_broke_in(tmp_path, monkeypatch):
    """Near where the file was cut, within a read piece (256 KB) and ISA-L's last input chunk:
    not the first line of the block being read (here 1 MB; 4 MB by default)."""
    monkeypatch.setattr(fastx, "BLOCK", 1 << 20)
    rng = np.random.default_rng(5)
    seq = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, 3_000_000)].tobytes()
    text = b">chr1\n" + b"\n".join(seq[i : i + 60] for i in range(0, len(seq), 60)) + b"\n"
    whole = gzip.compress(text, compresslevel=1)
    cut = whole[: len(whole) * 6 // 10]
    (tmp_path / "cut.fa.gz").write_bytes(cut)
    survives = zlib.decompressobj(31).decompress(cut)  # what an inflater can recover from the cut file
    assert len(survives) % (1 << 20) > 500_000  # the block being read began far before the cut
    broke_in = survives.count(b"\n") + 1
    with pytest.raises(FormatError, match="decompress") as info:
        list(read_batches(tmp_path / "cut.fa.gz"))
    assert broke_in - survives[-400_000:].count(b"\n") <= info.value.line <= broke_in


def test_concatenated_gzip_members_read_whole(tmp_path):
    # bgzip and `cat a.gz b.gz` write several gzip members: every one is read, in order
    (tmp_path / "multi.fa.gz").write_bytes(gzip.compress(FASTA) + gzip.compress(b">z\nTTTA\n"))
    assert records_of(tmp_path / "multi.fa.gz") == [("chr1", "ACGTNACG"), ("chr2", ""), ("chr3", "TTTTGG"), ("z", "TTTA")]


def test_gzip_checksum_mismatch(tmp_path):
    whole = bytearray(gzip.compress(FASTA))
    whole[-8] ^= 0xFF  # the CRC-32 of the trailer
    (tmp_path / "crc.fa.gz").write_bytes(bytes(whole))
    with pytest.raises(FormatError, match="decompress"):
        list(read_batches(tmp_path / "crc.fa.gz"))


def test_missing_and_directory_inputs(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(read_batches(tmp_path / "nope.fa"))
    with pytest.raises(InputError, match="is a directory"):
        list(read_batches(tmp_path))


def test_empty_file_has_no_records(tmp_path):
    (tmp_path / "e.fa").write_bytes(b"")
    assert list(read_batches(tmp_path / "e.fa")) == []


@pytest.mark.parametrize("prefetch", [False, True])
def test_chunks_overlap_exactly(rng, prefetch):
    data = rng.integers(0, 256, 10_000).astype(np.uint8)
    for chunk, overlap in ((1, 0), (7, 3), (1000, 99), (20_000, 5)):
        reader = ChunkReader(ArrayStream(data), chunk, overlap)
        seen = np.zeros(data.size, bool)
        for offset, view in iter_chunks(reader, prefetch=prefetch):
            assert np.array_equal(view, data[offset : offset + view.size])
            assert view.size <= chunk + overlap
            seen[offset : offset + view.size] = True
        assert seen.all()


def test_chunk_reader_error_reaches_the_consumer():
    class Broken(io.RawIOBase):
        def readinto(self, b):
            raise OSError(5, "Input/output error")

    with pytest.raises(InputError, match="read failed"):
        list(iter_chunks(ChunkReader(Broken(), 16, 2, "broken.bin")))
