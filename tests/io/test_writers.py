"""Outputs by name: gzip and BAM written atomically and read back with gzip and pysam (htslib), the
BGZF framing checked block by block, a refused .bam where the output is not SAM, modes kept."""

import gzip
import os
import struct

import numpy as np
import pysam
import pytest

from seqsift.cli import main
from seqsift.errors import FormatError, UsageError
from seqsift.io.bgzf import BLOCK_MAX, EOF_BLOCK
from seqsift.io.provenance import Provenance, sam_header
from seqsift.io.writers import open_output, output_kind


def write_in_pieces(path, data: bytes, rng, sam=False):
    """Write data through open_output in random-sized pieces (lines split anywhere)."""
    cuts = np.sort(rng.integers(0, len(data) + 1, 1 + len(data) // 5000))
    with open_output(path, sam=sam) as out:
        for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(data)]):
            out.write(data[a:b])


def bgzf_blocks(raw: bytes) -> list[bytes]:
    """The BGZF blocks of a file, split by each block's BSIZE field, every header checked."""
    blocks, k = [], 0
    while k < len(raw):
        head = raw[k : k + 18]
        assert head[:4] == b"\x1f\x8b\x08\x04" and head[10:16] == b"\x06\x00BC\x02\x00", head
        size = struct.unpack("<H", head[16:18])[0] + 1
        assert size <= BLOCK_MAX
        blocks.append(raw[k : k + size])
        k += size
    assert k == len(raw)
    return blocks


def random_sam(rng, n_records: int, n_refs: int = 3) -> bytes:
    """A SAM text with mapped and unmapped records, every field form the encoder handles."""
    refs = [(f"chr{k}", int(rng.integers(1000, 100000))) for k in range(n_refs)]
    lines = [b"@HD\tVN:1.6\tSO:unsorted"] + [f"@SQ\tSN:{n}\tLN:{ln}".encode() for n, ln in refs]
    lines.append(b"@CO\ta comment: with colons")
    lines.append(sam_header([], [], Provenance("cpu", ["seqsift", "test"])).split(b"\n")[1])
    for i in range(n_records):
        length = int(rng.integers(1, 160))
        seq = "".join(rng.choice(list("ACGTN"), length))
        qual = "*" if rng.random() < 0.3 else "".join(chr(33 + q) for q in rng.integers(0, 42, length))
        tags = [f"AS:i:{int(rng.integers(-70000, 70000))}", f"NM:i:{int(rng.integers(0, 300))}",
                f"XZ:Z:text {i}", f"XF:f:{rng.random():.4f}", "XA:A:y", "XH:H:1AE301",
                f"XB:B:s,{','.join(str(int(v)) for v in rng.integers(-300, 300, 3))}",
                f"XI:i:{int(rng.integers(2**31, 2**32 - 1))}"]
        if rng.random() < 0.2:
            lines.append(f"u{i}\t4\t*\t0\t0\t*\t*\t0\t0\t{seq}\t{qual}\t{tags[0]}".encode())
            continue
        ref, ref_len = refs[int(rng.integers(0, n_refs))]
        soft = int(rng.integers(0, length))
        aligned = length - soft
        cigar = (f"{soft}S" if soft else "") + (f"{aligned // 2}M2D1I{aligned - aligned // 2 - 1}M"
                                                 if aligned > 3 and rng.random() < 0.5 else f"{aligned}M")
        no_seq = rng.random() < 0.1
        pos = int(rng.integers(1, ref_len - 400))
        flag = int(rng.choice([0, 16, 256, 272]))
        lines.append("\t".join([f"r{i}", str(flag), ref, str(pos), str(int(rng.integers(0, 61))), cigar, "=",
                                str(pos + 100), "250", "*" if no_seq else seq,
                                "*" if no_seq or rng.random() < 0.1 else qual, *tags[: int(rng.integers(0, 9))]]).encode())
    return b"\n".join(lines) + b"\n"


def records_of(path, mode):
    with pysam.AlignmentFile(str(path), mode, check_sq=False) as f:
        return str(f.header), [r.to_string() for r in f]


@pytest.mark.parametrize("size", [0, 100, 3 << 20])
def test_gzip_round_trip(tmp_path, rng, size):
    data = rng.integers(0, 4, size).astype(np.uint8).tobytes()  # compressible, many gzip blocks when large
    path = tmp_path / "out.txt.gz"
    write_in_pieces(path, data, rng)
    assert gzip.decompress(path.read_bytes()) == data
    assert os.listdir(tmp_path) == ["out.txt.gz"]


@pytest.mark.parametrize("n_records", [0, 1, 300])
def test_bam_equals_the_same_sam_read_by_htslib(tmp_path, rng, n_records):
    text = random_sam(rng, n_records)
    sam, bam = tmp_path / "out.sam", tmp_path / "out.bam"
    write_in_pieces(sam, text, rng, sam=True)
    assert sam.read_bytes() == text  # .sam is plain text
    write_in_pieces(bam, text, rng, sam=True)
    header, records = records_of(bam, "rb")
    assert (header, records) == records_of(sam, "r")
    assert len(records) == n_records
    assert bgzf_blocks(bam.read_bytes())[-1] == EOF_BLOCK


def test_empty_bam_without_header(tmp_path):
    bam = tmp_path / "empty.bam"
    with open_output(bam, sam=True):
        pass
    assert bgzf_blocks(bam.read_bytes())[-1] == EOF_BLOCK
    assert gzip.decompress(bam.read_bytes()) == b"BAM\1" + struct.pack("<ii", 0, 0)
    header, records = records_of(bam, "rb")
    assert header.strip() == "" and records == []


def test_large_bam_spans_many_bgzf_blocks(tmp_path, rng):
    text = random_sam(rng, 20000, n_refs=40)
    bam = tmp_path / "large.bam"
    write_in_pieces(bam, text, rng, sam=True)
    blocks = bgzf_blocks(bam.read_bytes())
    assert len(blocks) > 20 and blocks[-1] == EOF_BLOCK and EOF_BLOCK not in blocks[:-1]
    assert records_of(bam, "rb") == records_of(_as_sam(tmp_path, text), "r")
    with pysam.AlignmentFile(str(bam), "rb") as f:  # htslib's own reader checks each block's CRC and size
        assert sum(1 for _ in f.fetch(until_eof=True)) == 20000


def _as_sam(tmp_path, text):
    path = tmp_path / "same.sam"
    path.write_bytes(text)
    return path


def test_incompressible_data_still_fits_bgzf_blocks(tmp_path, rng):
    from seqsift.io.bgzf import BgzfWriter

    data = rng.integers(0, 256, 1 << 20, dtype=np.uint8).tobytes()
    path = tmp_path / "random.bgzf"
    with open(path, "wb") as raw:
        writer = BgzfWriter(raw)
        writer.write(data)
        writer.close()
    assert len(bgzf_blocks(path.read_bytes())) == -(-len(data) // 0xFF00) + 1
    assert gzip.decompress(path.read_bytes()) == data


@pytest.mark.parametrize("line,why", [
    (b"r1\t0\tchrX\t5\t60\t4M\t*\t0\t0\tACGT\t*\n", "'chrX' is not in the header"),
    (b"r1\t0\tchr0\t5\t60\t4Q\t*\t0\t0\tACGT\t*\n", "CIGAR '4Q' is malformed"),
    (b"r1\t0\tchr0\t5\t60\t4M\t*\t0\t0\tACGT\tII\n", "QUAL has 2 characters, SEQ 4"),
    (b"r1\t0\tchr0\t5\n", "11 mandatory fields"),
    (b"r1\t0\tchr0\t5\t60\t4M\t*\t0\t0\tACGT\t*\tXX:q:1\n", "type 'q'"),
    (b"r1\t0\tchr0\t5\t60\t4M\t*\t0\t0\tAC T\t*\n", "SEQ has a letter outside"),
    (b"r1\t0\tchr0\t5\t60\t4M\t*\t0\t0\tACGT\tII I\n", "QUAL has a character outside"),
    (b"r1\t0\tchr0\t5\t60\tM4\t*\t0\t0\tACGT\t*\n", "CIGAR 'M4' is malformed"),
])
def test_malformed_sam_is_a_format_error_naming_the_line_and_no_file_is_left(tmp_path, line, why):
    bam = tmp_path / "bad.bam"
    with pytest.raises(FormatError, match=why) as info:
        with open_output(bam, sam=True) as out:
            out.write(b"@SQ\tSN:chr0\tLN:100\n" + line)
    assert "bad.bam:2" in str(info.value)
    assert os.listdir(tmp_path) == []


def test_bam_is_refused_where_the_output_is_not_sam(tmp_path):
    with pytest.raises(UsageError, match="-o .*out.bam: BAM holds SAM records"):
        with open_output(tmp_path / "out.bam"):
            pass
    assert os.listdir(tmp_path) == []


def test_output_kind_by_name():
    assert [output_kind(n) for n in (None, "-", "a.txt", "a.TSV.GZ", "x.bam", "bam")] == \
        ["plain", "plain", "plain", "gzip", "bam", "plain"]


@pytest.mark.parametrize("name", ["out.txt", "out.txt.gz"])
def test_an_existing_files_mode_is_kept(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"old")
    path.chmod(0o640)
    with open_output(path) as out:
        out.write(b"new\n")
    assert path.stat().st_mode & 0o777 == 0o640
    assert (gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()) == b"new\n"


def test_commands_write_gzip_and_bam_by_name(tmp_path, rng, capsys):
    genome = "".join(rng.choice(list("ACGT"), 3000))
    reads = tmp_path / "reads.fa"
    reads.write_text("".join(f">r{i}\n{genome[p : p + 60]}\n" for i, p in enumerate(rng.integers(0, 2900, 6))))
    targets = tmp_path / "targets.fa"
    targets.write_text(f">left\n{genome[:1500]}\n>right\n{genome[1400:]}\n")
    common = ["align", "-q", str(reads), str(targets), "--dna", "--top", "2"]
    assert main([*common, "--outfmt", "sam", "-o", str(tmp_path / "a.sam")]) == 0
    assert main([*common, "--outfmt", "sam", "-o", str(tmp_path / "a.bam")]) == 0
    header, records = records_of(tmp_path / "a.bam", "rb")
    assert (header, records) == records_of(tmp_path / "a.sam", "r") and len(records) == 12
    assert "@PG\tID:seqsift" in header and "\tCL:seqsift" in header and "DS:backend=cpu" in header
    assert main([*common, "-o", str(tmp_path / "a.tsv")]) == 0
    assert main([*common, "-o", str(tmp_path / "a.tsv.gz")]) == 0
    assert gzip.decompress((tmp_path / "a.tsv.gz").read_bytes()) == (tmp_path / "a.tsv").read_bytes()
    assert main([*common, "-o", str(tmp_path / "b.bam")]) == 2
    assert "-o" in capsys.readouterr().err and not (tmp_path / "b.bam").exists()
    assert main(["find", "-q", "ACGT", str(targets), "-o", str(tmp_path / "c.bam")]) == 2
    assert "BAM holds SAM records" in capsys.readouterr().err


def test_rows_are_held_and_written_in_blocks_in_order(monkeypatch):
    """RowWriter writes a block once BLOCK_ROWS rows are held, and the rest on flush(); a name
    with a tab or newline inside a block is escaped whatever block it falls in, its neighbours
    written as they are."""
    import io

    from seqsift.io.writers import RowWriter, printable

    monkeypatch.setattr(RowWriter, "BLOCK_ROWS", 3)
    out = io.BytesIO()
    writer = RowWriter(out, ("path", "count"))
    rows = [(f"f{k}", k) for k in range(7)]
    rows[4] = ("forged\tname\nf9\t9", 4)
    written = []
    for row in rows:
        writer.write_rows(iter([row]))
        written.append(out.getvalue())
    want = "".join(f"{printable(name)}\t{n}\n" for name, n in rows).encode()
    lines = want.splitlines(keepends=True)
    assert written[:2] == [b"", b""] and written[2] == b"".join(lines[:3])  # the first block at its third row
    assert written[5] == b"".join(lines[:6]) and written[6] == written[5]  # the seventh held
    writer.flush()
    assert out.getvalue() == want and b"forged\\tname\\nf9\\t9\t4\n" in want
    writer.flush()  # nothing held: nothing written
    assert out.getvalue() == want


@pytest.mark.parametrize("name", ["plain", "tab\there", "new\nline", "cr\r", "esc\x1b[31m", "del\x7f", "back\\slash",
                                  "c1\x9b", "é-plain", "é\x1b", os.fsdecode(b"raw\xff"), os.fsdecode(b"raw\xff\n")])
def test_every_block_is_written_as_printable_makes_each_cell(name, rng):
    """Whichever way a block is checked (all ASCII: by bytes; else by a regex), the output is
    printable() of every text cell, so no name can forge a field or a line."""
    import io

    from seqsift.io.writers import RowWriter, printable

    rows = [(f"f{k}", int(k)) for k in rng.integers(0, 99, 5)] + [(name, 7)] + [("a", 1), ("b", 1)]
    out = io.BytesIO()
    writer = RowWriter(out, ("path", "count"))
    for row in rows:
        writer.write_row(row)
    writer.flush()
    want = "".join(f"{printable(n)}\t{c}\n" for n, c in rows).encode(errors="surrogateescape")
    assert out.getvalue() == want and out.getvalue().count(b"\n") == len(rows)


@pytest.mark.parametrize("width", [1, 2, 3])
def test_tsv_lines_are_each_cell_as_str_gives_it(width, rng):
    """The f-string forms of one- and two-cell rows write what joining str() of each cell does,
    for every kind of cell a command writes; a row of another width among them (or a row that
    is a string) sends the block to the general form, which writes it as it is."""
    import numpy as np

    from seqsift.io.writers import _tsv_lines

    cells = ["a", "é", os.fsdecode(b"x\xff"), 0, -3, 2**70, 1.5, True, np.int64(7), np.uint8(200), b"raw", None]
    rows = [tuple(cells[int(k)] for k in rng.integers(0, len(cells), width)) for _ in range(200)]
    general = lambda rows: "".join("\t".join(str(c) for c in row) + "\n" for row in rows)
    assert _tsv_lines(rows, width) == general(rows)
    odd = rows[:5] + [rows[0] + ("extra",)] + [("z",) * (width + 1)] + rows[5:9]
    assert _tsv_lines(odd, width) == general(odd)
    assert _tsv_lines(["ab", "c"], width) == general(["ab", "c"])


def test_a_terminal_gets_every_row_at_once():
    """On a terminal (the _Terminal wrapper atomic_output gives one) no row is held."""
    import io

    from seqsift.io.writers import RowWriter, _Terminal

    out = io.BytesIO()
    writer = RowWriter(_Terminal(out), ("path", "count"))
    writer.write_rows([("a", 1)])
    assert out.getvalue() == b"a\t1\n"


def test_find_writes_every_row_of_many_files(tmp_path):
    """`find -c -r` over more files than a block holds: one row each, in the walk's order."""
    import subprocess
    import sys

    from seqsift.io.writers import RowWriter

    n = RowWriter.BLOCK_ROWS + 5
    for k in range(n):
        (tmp_path / f"f{k:05d}").write_bytes(b"xxABxAB" if k % 7 == 0 else b"xx")
    run = subprocess.run([sys.executable, "-m", "seqsift", "find", "-q", "-c", "-r", "AB", str(tmp_path)],
                         capture_output=True, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert run.returncode == 0, run.stderr
    want = "".join(f"{tmp_path / f'f{k:05d}'}\t{2 if k % 7 == 0 else 0}\n" for k in range(n))
    assert run.stdout == want
