"""The compiled reads parser against the general FASTA/FASTQ reader, on awkward layouts, block
boundaries anywhere, and malformed records (each error names its line); both ways of reading:
batches parsed at once (read_reads), and raw blocks framed here and parsed elsewhere
(read_blocks + parse_block, as Dask workers do)."""

import gzip
import re
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqsift.errors import FormatError
from seqsift.io import reads as reads_module
from seqsift.io.fastx import read_batches
from seqsift.io.reads import parse_block, read_blocks, read_reads
from tests.conftest import data_file


@pytest.fixture(params=["batches", "blocks", "located blocks"])
def way(request):
    return request.param


def parsed(path, batch_reads=5, way="batches", code_table=None):
    """(names, sequences) read one of three ways: parsed at once; framed into blocks and parsed
    from their bytes; or (plain files) from where the blocks say they lie. Every batch's codes
    must be its bases through code_table (the fold table when None)."""
    names, seqs = [], []
    if way == "batches":
        batches = read_reads(path, batch_reads, code_table)
    else:
        blocks = list(read_blocks(path, batch_reads, by_path=way == "located blocks"))
        if way == "located blocks":  # plain files are located, compressed ones carry their bytes
            assert all((b.data is None) != str(path).endswith(".gz") for b in blocks)
        batches = (parse_block(block, code_table) for block in blocks)
    table = reads_module._FOLD if code_table is None else code_table
    for batch in batches:
        assert batch.codes.tolist() == table[batch.seq].tolist()
        for i in range(len(batch)):
            names.append(batch.name(i))
            seqs.append(batch.seq[batch.bounds[i] : batch.bounds[i + 1]].tobytes())
            if batch.qual_lo[i] >= 0:
                qual = batch.raw[batch.qual_lo[i] : batch.qual_lo[i] + len(seqs[-1])].tobytes()
                assert len(qual) == len(seqs[-1])
    return names, seqs


def reference(path):
    names, seqs = [], []
    for batch in read_batches(path):
        names += batch.names
        seqs += [batch.seq[batch.bounds[i] : batch.bounds[i + 1]].tobytes() for i in range(len(batch))]
    return names, seqs


LAYOUTS = {
    "fastq": b"@r1 desc\nACGT\n+\nIIII\n@r2\nacgtn\n+r2\n!!!!!\n\n@r3\n\n+\n\n",
    "fastq crlf no final newline": b"@r1\r\nACGT\r\n+\r\nIIII\r\n@r2\r\nGG\r\n+\r\nII",
    "fasta wrapped": b">r1 x\nAC\nGT\n\n>r2\n>r3\nnnnACGT\nA",
    "fasta leading blank lines": b"\n\n>r1\tdesc\nACGT\n",
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_same_records_as_the_general_reader(tmp_path, monkeypatch, layout, block, way):
    monkeypatch.setattr(reads_module, "BLOCK", block)
    path = tmp_path / "in.fq"
    path.write_bytes(LAYOUTS[layout])
    assert parsed(path, way=way) == reference(path)


def test_real_reads_gzipped(way):
    path = data_file("lambda_reads_1.fq.gz")
    assert parsed(path, 40, way)  # 10 batches of the 400 reads == reference(path)


def test_blocks_are_the_batches_unparsed():
    path = data_file("lambda_longreads.fq.gz")
    for batch, block in zip(read_reads(path, 37), read_blocks(path, 37), strict=True):
        again = parse_block(block)
        assert block.data == batch.raw.tobytes() and again.first == batch.first == block.first_read
        for field in ("seq", "bounds", "name_lo", "name_hi", "qual_lo"):
            assert getattr(again, field).tolist() == getattr(batch, field).tolist()


@pytest.mark.parametrize("text,line,message", [
    (b"@r1\nACGT\n+\nIII\n", 4, "quality length 3"),
    (b"@r1\nACGT\n-\nIIII\n", 3, "'+' separator"),
    (b"@r1\nACGT\n+\nIIII\nr2\n", 5, "starting with '@'"),
    (b"@r1\nAC1T\n+\nIIII\n", 2, "invalid character '1'"),
    (b"@r1\nACGT\n+\n", 1, "ends inside"),
    (b"@ \nACGT\n+\nIIII\n", 1, "no name"),
    (b">r1\nACGT\nAC GT\nA.C\n", 4, "invalid character '.'"),
    (b"ACGT\n>r1\nAC\n", 1, "not FASTA or FASTQ"),
    (b"\n>r1\nAC\nxx\n>\nA\n", 5, "no name"),
])
@pytest.mark.parametrize("block", [5, 1 << 20])
def test_malformed_records_name_their_line(tmp_path, monkeypatch, text, line, message, block, way):
    monkeypatch.setattr(reads_module, "BLOCK", block)
    path = tmp_path / "bad.fq.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"@r0\nA\n+\nI\n" * 3 + text if text.startswith(b"@") else text)
    if text.startswith(b"@"):
        line += 12
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        parsed(path, 2, way)
    assert info.value.line == line and "bad.fq.gz" in str(info.value)


def test_truncated_gzip_names_the_line_it_broke_in(tmp_path, monkeypatch, way):
    """Not the first line of the block being read: a cut download is reported near where it was
    cut. ISA-L drops what it had inflated from its last input chunk, so "near" is within one such
    chunk (tens of KB); the first unparsed line, named before, lay about a block (here 1 MB) back."""
    monkeypatch.setattr(reads_module, "BLOCK", 1 << 20)
    monkeypatch.setattr(reads_module, "PARTITION_BLOCKS", 1)
    text = b"".join(b"@r%d\nACGTACGTAC\n+\nIIIIIIIIII\n" % i for i in range(100_000))
    whole = gzip.compress(text, compresslevel=1)
    cut = whole[: len(whole) * 3 // 4]
    (tmp_path / "cut.fq.gz").write_bytes(cut)
    survives = zlib.decompressobj(31).decompress(cut)  # what an inflater can recover from the cut file
    broke_in = survives.count(b"\n") + 1
    with pytest.raises(FormatError, match="decompress") as info:
        parsed(tmp_path / "cut.fq.gz", 1000, way)
    assert broke_in - survives[-300_000:].count(b"\n") <= info.value.line <= broke_in
    assert "cut.fq.gz" in str(info.value)


def test_empty_file_has_no_reads(tmp_path):
    path = tmp_path / "empty.fq"
    path.write_bytes(b"")
    assert parsed(path) == ([], [])


def test_codes_are_the_bases_through_the_table(tmp_path):
    from seqsift.fmindex.reference import READ_CODE

    path = tmp_path / "r.fq"
    path.write_bytes(LAYOUTS["fastq"])
    for batch in read_reads(path, 2, READ_CODE):
        assert batch.codes.tolist() == READ_CODE[batch.seq].tolist()


_LINES = st.one_of(st.text("ACGTNRYacgt", max_size=40), st.text("ACGTacgt", min_size=30, max_size=100),
                   st.builds(lambda a, odd, b: a + odd + b, st.text("ACGTacgt", max_size=60), st.sampled_from("NnRy. "),
                             st.text("ACGTacgt", max_size=60)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.tuples(st.text("ACGTNacgtn", min_size=1, max_size=6), _LINES, st.sampled_from(["\n", "\r\n"])),
                        min_size=0, max_size=12),
       fastq=st.booleans(), wrap=st.integers(1, 80), block=st.integers(3, 256), batch=st.integers(1, 5),
       dna=st.booleans())
def test_fuzzed_files_parse_as_the_general_reader(tmp_path, monkeypatch, records, fastq, wrap, block, batch, dna):
    """Random FASTQ, or FASTA wrapped at any width, with any line endings, read through blocks
    and batches of any size, give the general reader's records, or its error. Lines of ACGTacgt
    only, 32 bases or more, take the vector path when the code table is the reads' (dna): mixed
    with one other letter, a space or a bad byte anywhere, they must not."""
    from seqsift.fmindex.reference import READ_CODE

    monkeypatch.setattr(reads_module, "BLOCK", block)
    table = READ_CODE if dna else None
    text = ""
    for name, seq, eol in records:
        if fastq:
            text += f"@{name} x{eol}{seq}{eol}+{eol}{'I' * len(seq)}{eol}"
        else:
            text += f">{name}{eol}" + "".join(seq[k : k + wrap] + eol for k in range(0, len(seq), wrap))
    path = tmp_path / "fuzz.txt"
    path.write_bytes(text.encode())
    try:
        expected = reference(path)
    except FormatError as exc:
        for way in ("batches", "blocks", "located blocks"):
            with pytest.raises(FormatError) as info:
                parsed(path, batch, way, table)
            assert (info.value.line, str(info.value)) == (exc.line, str(exc))
        return
    assert all(parsed(path, batch, way, table) == expected for way in ("batches", "blocks", "located blocks"))


def test_batches_kept_by_the_caller_stay_intact(tmp_path, monkeypatch, rng):
    """Batches live in reused buffers: one the caller keeps must never be overwritten by the
    ones read after it, whether the caller keeps a few or more than the pool holds."""
    monkeypatch.setattr(reads_module, "BLOCK", 4096)
    path = tmp_path / "many.fq"
    seqs = ["".join(rng.choice(list("ACGTN"), int(rng.integers(1, 120)))) for _ in range(3000)]
    path.write_text("".join(f"@r{i}\n{s}\n+\n{'I' * len(s)}\n" for i, s in enumerate(seqs)))
    kept, snapshots = [], []
    for n, batch in enumerate(read_reads(path, 50)):
        snapshots.append((batch.raw.tobytes(), batch.seq.tobytes(), batch.codes.tobytes()))
        if n % 3 == 0 or n > 40:  # some dropped at once (their buffers reused), the rest kept
            kept.append((n, batch))
    assert len(kept) > 16 + 10
    for n, batch in kept:
        assert (batch.raw.tobytes(), batch.seq.tobytes(), batch.codes.tobytes()) == snapshots[n]
    assert b"".join(s[1] for s in snapshots) == "".join(seqs).encode()


@pytest.mark.parametrize("reader", ["reads", "fastx"])
@pytest.mark.parametrize("form,line", [("fasta", 3), ("fastq", 5)])
def test_names_with_control_characters_are_refused_naming_the_line(tmp_path, reader, form, line):
    """Issue item 9: a name holding ESC, ^A or another control byte would reach TSV and SAM outputs
    raw (a forged field, a terminal escape); both readers refuse it, naming the header's line."""
    path = tmp_path / f"r.{form}"
    if form == "fasta":
        path.write_bytes(b">good desc\r\nACGT\r\n>b\x1bad\nACGT\n")
    else:
        path.write_bytes(b"@good\nACGT\n+\nIIII\n@b\x01ad x\nACGT\n+\nIIII\n")
    read = (lambda: list(read_reads(path))) if reader == "reads" else (lambda: list(read_batches(path)))
    with pytest.raises(FormatError, match="control character") as info:
        read()
    assert info.value.line == line and str(path) in str(info.value)


def _long_record(path, fastq: bool, quality_short: bool = False) -> None:
    """Two short reads around one of 640 MiB (2.5 MiB gzipped), written in pieces."""
    chunk = 1 << 24
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(b"@short1\nGAATTC\n+\nIIIIII\n@huge\n" if fastq else b">short1\nGAATTC\n>huge\n")
        for _ in range(40):
            f.write(b"A" * chunk if fastq else (b"A" * 79 + b"\n") * (chunk // 80))
        if fastq:
            f.write(b"\n+\n")
            for _ in range(40):
                f.write(b"I" * (chunk - (1 if quality_short else 0)))
            f.write(b"\n")
        f.write(b"@short2\nGGATCC\n+\nIIIIII\n" if fastq else b">short2\nGGATCC\n")


@pytest.mark.parametrize("fastq", [True, False], ids=["fastq", "fasta"])
def test_a_record_past_any_reference_is_read_past_not_held(tmp_path, fastq):
    """Issue item 9: one 640 MiB read in a 2.5 MB gzip is read through, streaming, and searched as
    an empty read (count 0: longer than any reference); the reads around it are whole, and the
    run fits in 1.5 GiB (holding it cost three times its size)."""
    from tests.bounded import run_bounded, text

    path = tmp_path / ("r.fq.gz" if fastq else "r.fa.gz")
    _long_record(path, fastq)
    code = ("import sys\n"
            "from seqsift.io.reads import read_reads\n"
            "for batch in read_reads(sys.argv[1]):\n"
            "    for i in range(len(batch)):\n"
            "        print(batch.name(i), batch.bounds[i + 1] - batch.bounds[i], batch.first + i)\n")
    run = run_bounded([str(path)], code=code, memory=3 << 29)
    out, err = text(run)
    assert run.returncode == 0, err
    assert out.split("\n") == ["short1 6 0", "huge 0 1", "short2 6 2", ""]


def test_a_long_record_with_a_short_quality_is_named(tmp_path):
    from tests.bounded import run_bounded, text

    path = tmp_path / "r.fq.gz"
    _long_record(path, True, quality_short=True)
    code = "import sys\nfrom seqsift.io.reads import read_reads\nlist(read_reads(sys.argv[1]))\n"
    run = run_bounded([str(path)], code=code, memory=3 << 29)
    assert run.returncode == 1 and "r.fq.gz:8: quality length" in text(run)[1]


@pytest.mark.parametrize("fastq", [True, False], ids=["fastq", "fasta"])
def test_a_read_longer_than_longest_is_read_past_at_any_size(tmp_path, fastq):
    """Issue 30: the cutoff follows the reference (longest: its longest record), not only the
    fixed MAX_RECORD: a read of more than a block (16 MiB, Dask's) is held when it could match,
    given empty when it has more bases than that (FASTA's line breaks are not bases)."""
    from seqsift.io import reads

    n = 2 * reads.PARTITION_BLOCKS * reads.BLOCK + 1000  # past two blocks: never held whole unasked
    path = tmp_path / ("r.fq" if fastq else "r.fa")
    with open(path, "wb") as f:
        f.write(b"@a\nACGT\n+\nIIII\n@big\n" if fastq else b">a\nACGT\n>big\n")
        if fastq:
            f.write(b"A" * n + b"\n+\n" + b"I" * n + b"\n@b\nGG\n+\nII\n")
        else:
            for k in range(0, n, 60):
                f.write(b"C" * min(60, n - k) + b"\n")
            f.write(b">b\nGG\n")
    for longest, held in ((n, n), (n // 2, 0), (None, n)):
        got = [(b.name(i), int(b.bounds[i + 1] - b.bounds[i])) for b in reads.read_reads(path, longest=longest)
               for i in range(len(b))]
        assert got == [("a", 4), ("big", held), ("b", 2)]
        blocks = list(reads.read_blocks(path, longest=longest))
        got = [(b.name(i), int(b.bounds[i + 1] - b.bounds[i])) for block in blocks
               for b in [reads.parse_block(block)] for i in range(len(b))]
        assert got == [("a", 4), ("big", held), ("b", 2)]


def whole_records(path, residues=None, code_table=None):
    """(names, sequences, batch sizes) from read_records, every batch's codes checked against
    its letters through the table."""
    from seqsift.io.reads import read_records

    table = reads_module._FOLD if code_table is None else code_table
    names, seqs, sizes = [], [], []
    for records in read_records(path, table, residues):
        assert records.codes.tolist() == table[records.letters].tolist()
        assert records.bounds[0] == 0 and records.bounds[-1] == records.letters.size == records.codes.size
        names += records.names
        seqs += [records.letters[records.bounds[i] : records.bounds[i + 1]].tobytes() for i in range(len(records))]
        sizes.append(len(records))
    return names, seqs, sizes


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.tuples(st.text("ACGTNacgtn", min_size=1, max_size=6), _LINES, st.integers(0, 3)),
                        min_size=0, max_size=12),
       fastq=st.booleans(), wrap=st.integers(1, 80), block=st.integers(3, 256), residues=st.integers(1, 300))
def test_whole_records_are_the_general_readers_joined(tmp_path, monkeypatch, records, fastq, wrap, block, residues):
    """read_records (a database's reader) against fastx.record_batches, the Python reader that
    joins the pieces it cuts: the same records, whole, however small the blocks (a record held
    across many, its buffer doubling), batched by bases as record_batches batches them; the same
    error where the general reader has one. Some records are repeated up to 3 times over, so one
    outgrows the block."""
    from seqsift.io.fastx import record_batches

    monkeypatch.setattr(reads_module, "BLOCK", block)
    text = ""
    for name, seq, repeat in records:
        seq *= 1 + repeat * (block // max(1, len(seq)))
        if fastq:
            text += f"@{name} x\n{seq}\n+\n{'I' * len(seq)}\n"
        else:
            text += f">{name}\n" + "".join(seq[k : k + wrap] + "\n" for k in range(0, len(seq), wrap))
    path = tmp_path / "fuzz.txt"
    path.write_bytes(text.encode())
    try:
        batches = list(record_batches(path, residues))
    except FormatError as exc:
        with pytest.raises(FormatError) as info:
            whole_records(path, residues)
        assert (info.value.line, str(info.value)) == (exc.line, str(exc))
        return
    names, seqs, sizes = whole_records(path, residues)
    assert (names, seqs) == ([n for b in batches for n, _ in b], [s for b in batches for _, s in b])
    assert sizes == [len(b) for b in batches]
    assert whole_records(path)[:2] == (names, seqs)
    assert whole_records(path)[2] == ([len(names)] if names else [])


def test_whole_records_batch_by_bases(tmp_path, monkeypatch):
    """A batch closes with the record that brings it to `residues` bases, wherever read_reads'
    batches end, so a database part is bounded by its size, one long record aside."""
    monkeypatch.setattr(reads_module, "BLOCK", 64)
    path = tmp_path / "db.fa"
    lengths = [10, 10, 500, 3, 3, 3, 3, 3, 3, 40]
    path.write_text("".join(f">s{k}\n{'ACDEFGHIKL'[k] * n}\n" for k, n in enumerate(lengths)))
    names, seqs, sizes = whole_records(path, 30)
    assert names == [f"s{k}" for k in range(10)] and [len(s) for s in seqs] == lengths
    assert sizes == [3, 7]  # 10 + 10 + 500, then the rest (read in one block with the long record)
    assert whole_records(path, 9)[2] == [1, 1, 1, 3, 3, 1]


def test_a_whole_record_far_past_the_block_is_held(tmp_path, monkeypatch):
    """Where read_reads reads past a record longer than MAX_RECORD (a read no reference could
    hold), read_records keeps it: a chromosome is a database sequence like any other."""
    monkeypatch.setattr(reads_module, "BLOCK", 1 << 10)
    monkeypatch.setattr(reads_module, "MAX_RECORD", 1 << 12)
    path = tmp_path / "genome.fa"
    big = b"ACGT" * 25_000
    path.write_bytes(b">a\nAC\n>chr1 long\n" + b"\n".join(big[k : k + 61] for k in range(0, len(big), 61)) + b"\n>b\nGG\n")
    names, seqs, _ = whole_records(path)
    assert names == ["a", "chr1", "b"] and seqs == [b"AC", big, b"GG"]
    assert [len(s) for s in parsed(path)[1]] == [2, 0, 2]  # read_reads, for contrast


def test_a_header_line_past_a_mebibyte_is_refused_naming_it(tmp_path, monkeypatch):
    """Held whole, a record is still bounded where it has no bases to hold: its header line, once
    it outgrows the blocks read (in one block it is held as any line is)."""
    monkeypatch.setattr(reads_module, "BLOCK", 1 << 16)
    path = tmp_path / "db.fa"
    path.write_bytes(b">a\nAC\n>" + b"x" * (3 << 20) + b"\nACGT\n")
    with pytest.raises(FormatError, match="header line longer than 1 MiB") as info:
        whole_records(path)
    assert info.value.line == 3 and str(path) in str(info.value)
