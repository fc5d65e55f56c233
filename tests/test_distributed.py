"""Every engine on a 2-worker Dask LocalCluster: the same results as one machine, whatever the
partitioning; a killed worker loses and duplicates nothing; bad input fails the same way."""

import gzip
import os
import signal

import distributed
import numpy as np
import pytest

import seqsift
from seqsift import distributed as cluster
from seqsift.alignment import Database, matrix, search_database
from seqsift.cli import main
from seqsift.fmindex import cluster as fmindex_cluster
from seqsift.fmindex.api import FMIndex
from seqsift.fmindex.query import SearchOptions
from seqsift.fmindex.read_search import Encoded, run_batch
from seqsift.fmindex.reference import encode_reads
from seqsift import runner
from seqsift.runner import by_source
from tests import naive
from tests.conftest import LAMBDA, data_file


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as lc, distributed.Client(lc) as c:
        yield c


@pytest.fixture(scope="module")
def lambda_index(tmp_path_factory):
    path = tmp_path_factory.mktemp("index") / "lambda.ssx"
    assert main(["index", str(LAMBDA), "-o", str(path), "-q"]) == 0
    return path


def run_cli(argv, out):
    """Exit status and output bytes of one `seqsift` run writing to out."""
    code = main([*argv, "-o", str(out)])
    return code, out.read_bytes() if out.exists() else None


def both(tmp_path, argv, address):
    """The local run and the cluster run of the same command: (status, output) of each."""
    local = run_cli(argv, tmp_path / "local.out")
    dask = run_cli([*argv, "--dask", address], tmp_path / "dask.out")
    return local, dask


# -- the generic mechanism -----------------------------------------------------------------------
def test_by_source_yields_every_input_in_order_with_empty_ones():
    tagged = [(1, "a"), (1, "b"), (3, "c")]
    assert [(k, list(r)) for k, r in by_source(5, tagged)] == [
        (0, []), (1, ["a", "b"]), (2, []), (3, ["c"]), (4, [])]


def test_files_are_read_by_path_when_seen_and_sent_otherwise(client, lambda_index, rng):
    assert cluster.workers_see(client, [str(lambda_index)])
    assert not cluster.workers_see(client, [str(lambda_index) + ".missing"])
    reads = [bytes(rng.choice(list(b"ACGT"), 20)) for _ in range(50)]
    expected = FMIndex.load(lambda_index).locate(reads, 5)
    codes, bounds = encode_reads(reads)
    for send in (False, True):
        shared = cluster.share_files(client, fmindex_cluster.load, [str(lambda_index)],
                                     (SearchOptions(), "cpu", 5, "hits"), send=send)
        assert (shared.payload is not None) == send
        got = list(runner.on_client(client, shared, run_batch, [Encoded(codes, bounds)]))
        assert [hits for hits, _ in got] == [expected]


def test_a_database_edited_in_the_middle_is_never_answered_from_before(tmp_path, client, rng):
    """Issue item 5: a database edited in the middle keeps its size and its first and last MiB; the
    workers of a long-lived cluster must not scan with what they built from it before, and the
    'workers see the same file' check must tell the two apart as well."""
    old, new = bytes(rng.integers(0, 256, 16).astype(np.uint8)), bytes(rng.integers(0, 256, 16).astype(np.uint8))
    padding = "# " + "x" * 60 + "\n"
    db = tmp_path / "sigs.ndb"
    body = padding * 25_000 + "Middle:0:*:{}\n" + padding * 25_000  # 3.2 MB: the signature 1.6 MB in
    db.write_text(body.format(old.hex()))
    data = tmp_path / "data.bin"
    data.write_bytes(b"\0" * 100 + new + b"\0" * 100)
    size, first = cluster.fingerprint(str(db))
    assert cluster.scan(client, [str(data)], str(db))[0].matches == []
    db.write_text(body.format(new.hex()))
    assert cluster.fingerprint(str(db)) != (size, first) and db.stat().st_size == size
    (result,) = cluster.scan(client, [str(data)], str(db))
    assert [(m.name, m.offsets) for m in result.matches] == [("Middle", [100])]
    assert cluster.workers_see(client, [str(db)])


# -- exact search --------------------------------------------------------------------------------
@pytest.mark.parametrize("partition", [1, 29, 4096])
def test_find_matches_the_oracle_at_any_partition(client, rng, partition):
    text = bytes(rng.choice(list(b"ab"), 50 if partition == 1 else 2000).astype(np.uint8))
    for pattern in (b"a", b"abab", b"aaaaaaa", bytes(text[20:45])):
        expected = naive.find_all(text, pattern)
        assert cluster.find(client, pattern, text, partition=partition).tolist() == expected
        assert cluster.find_count(client, pattern, text, partition=partition) == len(expected)


def test_find_command_is_byte_identical(tmp_path, client, rng):
    files = []
    for i, size in enumerate([0, 1, 50, 3000, 120_000, 7]):
        path = tmp_path / f"f{i}"
        path.write_bytes(bytes(rng.choice(list(b"ACGT"), size).astype(np.uint8)))
        files.append(str(path))
    expected = seqsift.find("ACG", files[4])
    assert cluster.find(client, "ACG", files[4], partition=1000).tolist() == expected.tolist() and expected.size
    assert cluster.find_count(client, "ACG", open(files[4], "rb"), partition=999) == expected.size  # a stream: sent
    address = client.scheduler.address
    outputs = {}
    for extra in ([], ["-c"], ["--json"], ["-i"]):  # -i: the pattern in lower case (issue 25)
        pattern = "acg" if extra == ["-i"] else "ACG"
        local, dask = both(tmp_path, ["find", *extra, pattern, *files, "--partition", "1000"], address)
        if extra == ["--json"]:  # the provenance line names the command, which differs by --dask
            local = (local[0], local[1].split(b"\n", 1)[1])
            dask = (dask[0], dask[1].split(b"\n", 1)[1])
        assert local == dask and local[0] == 0
        outputs[" ".join(extra)] = dask
    assert outputs["-i"] == outputs[""]  # upper-case data: acg in any case is ACG
    for extra in ([], ["-c"], ["-l", "-e", "TTTTTTTTTTTT"]):  # several patterns (issue 25)
        local, dask = both(tmp_path, ["find", *extra, "-e", "ACG", "-e", "GTA", "-e", "A", *files,
                                      "--partition", "1000"], address)
        assert local == dask and local[0] == 0 and local[1]


def test_find_on_the_cluster_skips_a_failing_file(tmp_path, client, rng):
    """Issue 30: a file that fails (a malformed FASTQ) is named and skipped, the files after it
    searched, as on one machine; exit 2 as grep."""
    good = tmp_path / "good.fa"
    good.write_text(">r1\n" + "".join(rng.choice(list("ACGT"), 5000)) + "\n")
    bad = tmp_path / "bad.fq"
    bad.write_text("@r1\nACGT\n+\nII\n")
    address = client.scheduler.address
    for argv in (["find", "--fasta", "ACG", str(good), str(bad), str(good)],
                 ["find", "--fasta", "-c", "ACG", str(bad), str(good), str(bad)]):
        alone = run_cli([a for a in argv if a != str(bad)], tmp_path / "alone.out")
        local, dask = both(tmp_path, [*argv, "--partition", "1000"], address)
        assert alone[0] == 0 and alone[1]
        assert local == dask == (2, alone[1])


def test_find_on_the_cluster_reports_procfs_pagemap_and_goes_on(tmp_path, client):
    """Issue 30: /proc/self/pagemap (a regular file whose size reads 0, 256 GiB of zeros when read
    in multiples of 8 bytes) used to be streamed to the workers until they were lost, and the run
    never ended. It is named as failing, the files around it searched (exit 2). Run in a bounded
    child, so a hang fails the test rather than stopping the suite."""
    from tests.bounded import run_bounded, text

    good = tmp_path / "good"
    good.write_bytes(b"aaXbbX\n")
    alone = run_bounded(["find", "X", str(good), str(good)])
    run = run_bounded(["find", "X", str(good), "/proc/self/pagemap", str(good), "--dask", client.scheduler.address])
    out, err = text(run)
    assert alone.returncode == 0 and alone.stdout.count(b"\t") == 4
    assert run.returncode == 2, err
    assert run.stdout == alone.stdout
    assert "/proc/self/pagemap: " in err and "internal error" not in err, err


def test_find_records_on_real_data(tmp_path, client):
    genome = data_file("klebsiella_HS11286.fa.gz")
    local = seqsift.find_records("GATCAAC", genome, revcomp=True)
    got = cluster.find_records(client, "GATCAAC", genome, revcomp=True, partition=20_000)
    assert list(got) == list(local) and len(local) > 0
    records = naive.read_records(genome)
    assert list(local) == naive.record_hits(records, "GATCAAC", True)
    local, dask = both(tmp_path, ["find", "--fasta", "--revcomp", "GATCAAC", str(genome), "--partition", "30K"],
                       client.scheduler.address)
    assert local == dask
    several = ["find", "--fasta", "--revcomp", "-e", "GATCAAC", "-e", "GAATTC", str(genome), "--partition", "30K"]
    local, dask = both(tmp_path, several, client.scheduler.address)  # several patterns (issue 25)
    assert local == dask and local[0] == 0 and b"\tGAATTC\n" in local[1] and b"\tGATCAAC\n" in local[1]


# -- signature scanning --------------------------------------------------------------------------
def test_scan_is_the_same_as_one_machine(tmp_path, client, rng):
    signatures = [bytes(rng.integers(0, 256, 12).astype(np.uint8)).hex() for _ in range(40)]
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(25):
        data = bytearray(rng.integers(0, 256, int(rng.integers(0, 5000))).astype(np.uint8).tobytes())
        for s in rng.choice(len(signatures), 3):
            at = int(rng.integers(0, max(len(data) - 12, 1)))
            data[at : at + 12] = bytes.fromhex(signatures[s])
        (tree / f"obj{i:02}").write_bytes(bytes(data))
    db = tmp_path / "sigs.txt"
    db.write_text("\n".join(signatures) + "\n")
    local = seqsift.scan([str(tree)], str(db), recursive=True)
    got = cluster.scan(client, [str(tree)], str(db), recursive=True, partition=6000)
    assert [(r.path, [(m.name, m.count, m.offsets) for m in r.matches]) for r in got] == \
        [(r.path, [(m.name, m.count, m.offsets) for m in r.matches]) for r in local]
    for r in local:  # and both are the oracle's
        data = open(r.path, "rb").read()
        assert {m.name: m.offsets for m in r.matches} == {
            f"sigs.txt:{k + 1}": naive.signature_starts(data, s) for k, s in enumerate(signatures)
            if naive.signature_starts(data, s)}
    in_memory = [open(r.path, "rb").read() for r in local]
    assert [len(r.matches) for r in cluster.scan(client, in_memory, signatures)] == [len(r.matches) for r in local]
    local, dask = both(tmp_path, ["scan", "-r", str(tree), "--db", str(db), "--no-summary", "--partition", "7K"],
                       client.scheduler.address)
    assert local == dask and local[0] == 1


# -- FM-index search -----------------------------------------------------------------------------
@pytest.mark.parametrize("form", ["tsv", "sam", "tsv from a plain file", "tsv within 2 edits",
                                  "sam within 2 mismatches"])
def test_search_command_is_byte_identical(tmp_path, client, lambda_index, form):
    reads = str(data_file("lambda_reads_1.fq.gz"))
    extra = []
    if form == "tsv from a plain file":  # blocks travel as (path, offset, length), read by the workers
        plain = tmp_path / "reads.fq"
        plain.write_bytes(gzip.decompress(open(reads, "rb").read()))
        reads, form = str(plain), "tsv"
    elif " within " in form:  # the approximate search, its ReadSearch made on each worker
        form, _, errors, kind = form.split()
        extra = ["--errors", errors, "--distance", "edit" if kind == "edits" else "hamming"]
    local, dask = both(tmp_path, ["search", str(lambda_index), reads, "--format", form, "--partition", "30", *extra],
                       client.scheduler.address)
    if form == "sam":  # the @PG line holds the command line, which differs by --dask
        local = (local[0], b"\n".join(line for line in local[1].split(b"\n") if not line.startswith(b"@PG")))
        dask = (dask[0], b"\n".join(line for line in dask[1].split(b"\n") if not line.startswith(b"@PG")))
    assert local == dask and local[0] == 0 and local[1].count(b"\n") >= len(naive.read_records(reads))


def test_search_api_matches_locate(client, lambda_index):
    reads = str(data_file("lambda_reads_1.fq.gz"))
    index = FMIndex.load(lambda_index)
    expected = index.locate(reads, 3)
    assert cluster.search(client, str(lambda_index), reads, max_hits=3, partition=40) == expected
    listed = ["ACGTTGCA", "GGGCGGCGACCTCGCGGGTTTTCGCTATTTATGAAAATTTTCCGGTTTAAGGCGTTTCCG", "NACG", ""]
    assert cluster.search(client, index, listed, partition=2) == index.locate(listed)


# -- Smith-Waterman ------------------------------------------------------------------------------
def protein_files(tmp_path, queries=6, targets=60):
    def head(name, n, out):
        lines, count = [], 0
        with gzip.open(data_file(name), "rt") as f:
            for line in f:
                count += line.startswith(">")
                if count > n:
                    break
                lines.append(line)
        out.write_text("".join(lines))
        return str(out)

    return head("proteins_query.fa.gz", queries, tmp_path / "q.fa"), head("proteins_db.fa.gz", targets, tmp_path / "db.fa")


def test_align_command_and_api_are_the_same_as_one_machine(tmp_path, client):
    queries, db = protein_files(tmp_path)
    for form in ("6", "pair", "7"):  # 7: each query's '# Database:' line too (issue 25)
        local, dask = both(tmp_path, ["align", queries, db, "--top", "4", "--outfmt", form, "--partition", "2"],
                           client.scheduler.address)
        assert local == dask and local[0] == 0 and local[1]
    assert f"# Database: {db}\n".encode() in dask[1]
    names, seqs = zip(*naive.read_records(db))
    database = Database(names, seqs, matrix("BLOSUM62", 11, 1))
    qs = [s for _, s in naive.read_records(queries)]
    expected = search_database(qs, database, top=3)
    assert cluster.search_database(client, qs, database, top=3, partition=4) == expected



def test_map_on_dask_writes_the_local_records(tmp_path, client, lambda_index):
    from seqsift.fmindex.simulate import simulate

    reads = simulate(LAMBDA, 200, 90, 150, error_rate=0.01, seed=3)
    path = tmp_path / "reads.fq"
    path.write_text("".join(f"@{h}\n{s.decode()}\n+\n{'I' * len(s)}\n" for h, s in reads))
    local, dask = both(tmp_path, ["map", str(lambda_index), str(path), "--partition", "37"], client.scheduler.address)
    assert local[0] == dask[0] == 0
    drop_pg = [lambda out: [line for line in out.splitlines() if not line.startswith(b"@PG")]][0]
    assert drop_pg(local[1]) == drop_pg(dask[1]) and len(drop_pg(local[1])) > 200
    # pairs: fragments of 300 bases, the first 100 forward and the last 100 reverse-complemented
    genome = naive.read_records(LAMBDA)[0][1]
    rng = np.random.default_rng(9)
    starts = rng.integers(0, len(genome) - 300, 150)
    one, two = tmp_path / "r1.fq", tmp_path / "r2.fq"
    one.write_text("".join(f"@p{k}/1\n{genome[s : s + 100]}\n+\n{'I' * 100}\n" for k, s in enumerate(starts)))
    two.write_text("".join(f"@p{k}/2\n{naive.reverse_complement(genome[s + 200 : s + 300])}\n+\n{'I' * 100}\n"
                           for k, s in enumerate(starts)))
    local, dask = both(tmp_path, ["map", str(lambda_index), str(one), str(two), "--batch-reads", "40"],
                       client.scheduler.address)
    assert local[0] == dask[0] == 0
    assert drop_pg(local[1]) == drop_pg(dask[1]) and b"\t99\t" in local[1]

# -- faults and bad input ------------------------------------------------------------------------
def test_a_killed_worker_loses_and_duplicates_nothing(lambda_index, rng):
    reads = [bytes(rng.choice(list(b"ACGT"), 24)) for _ in range(3000)]
    index = FMIndex.load(lambda_index)
    reads += [b""] + [b"GGGCGGCGACCTCGCGGGTTTTCG"] * 10
    expected = index.locate(reads, 4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as lc, distributed.Client(lc) as client:
        shared = cluster.share_files(client, fmindex_cluster.load, [str(lambda_index)], (SearchOptions(), "cpu", 4, "hits"))
        client.run(cluster._checkout, shared.spec, None)  # both workers hold the index before the clock starts
        pids = client.run(os.getpid)
        killed = []

        def kill_one(_):
            if killed:
                return
            holding = {w: len(keys) for w, keys in client.processing().items()}
            for w, keys in client.has_what().items():
                holding[w] = holding.get(w, 0) + len(keys)
            victim = max(holding, key=holding.get)
            killed.append((victim, holding[victim]))
            os.kill(pids[victim], signal.SIGKILL)

        per = 25
        parts = [Encoded(*encode_reads(reads[k : k + per])) for k in range(0, len(reads), per)]
        got = [hit for hits, _ in runner.on_client(client, shared, run_batch, parts, kill_one, window=40)
               for hit in hits]
        assert killed and killed[0][1] > 0  # the victim was working or holding results when it died
        assert set(client.run(os.getpid).values()) != set(pids.values())  # its process is gone
    assert got == expected


def test_bad_input_fails_the_same_way(tmp_path, client, lambda_index, capsys):
    bad = tmp_path / "bad.fq"
    bad.write_text("@r1\nACGT\n+\nIIII\n@r2\nACGT\nIIII\n")
    # A bad base (found by the worker parsing its block) before a bad separator (found by the
    # client framing blocks ahead): the first in the file is the error, as locally.
    worse = tmp_path / "worse.fq"
    worse.write_text("@r1\nACGT\n+\nIIII\n@r2\nAC1T\n+\nIIII\n@r3\nAC\n+\nII\n@r4\nAC\n-\nII\n")
    address = client.scheduler.address
    for reads, where in ((bad, "bad.fq:5: file ends inside a FASTQ record"), (worse, "worse.fq:6: invalid character '1'")):
        messages = []
        for extra in ([], ["--dask", address, "--partition", "1"]):
            out = tmp_path / "out.tsv"
            assert main(["search", str(lambda_index), str(reads), "-o", str(out), *extra]) == 2
            assert not out.exists()
            messages.append(capsys.readouterr().err.splitlines()[-1])
        assert messages[0] == messages[1] and where in messages[0]
    broken = tmp_path / "broken.ssx"
    data = bytearray(lambda_index.read_bytes())
    data[len(data) // 2] ^= 0xFF
    broken.write_bytes(bytes(data))
    assert main(["search", str(broken), str(data_file("lambda_reads_1.fq.gz")), "--dask", address]) == 2
    assert "broken.ssx" in capsys.readouterr().err


def test_no_scheduler_is_a_clear_error(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["find", "x", __file__, "--dask", "tcp://127.0.0.1:9", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no Dask scheduler answered" in err and "local:N" in err and not out.exists()
    assert main(["find", "x", __file__, "--dask", "local:0"]) == 2
    assert "at least one worker" in capsys.readouterr().err


def test_local_cluster_option_starts_and_stops_its_workers(tmp_path, capsys):
    path = tmp_path / "t.txt"
    path.write_bytes(b"xyzxyz" * 1000)
    assert main(["find", "-c", "zx", str(path), "--dask", "local:2", "-o", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o").read_text() == f"{path}\t1999\n"
    assert "dashboard http" in capsys.readouterr().err


@pytest.mark.parametrize("engine", ["find", "scan", "align"])
def test_bad_input_of_every_engine_fails_as_locally(tmp_path, client, capsys, engine):
    good = tmp_path / "good.fa"
    good.write_text(">a\nACGTACGT\n")
    if engine == "find":
        argv = ["find", "ACG", str(good), str(tmp_path / "missing.txt")]
    elif engine == "scan":
        db = tmp_path / "bad.ndb"
        db.write_text("Good:0:*:414243\nBroken:0:*:41zz\n")
        argv = ["scan", str(good), "--db", str(db)]
    else:
        bad = tmp_path / "bad.fa"
        bad.write_text(">q\nMKV\nnot a sequence: 123\n")
        argv = ["align", str(bad), str(good)]
    seen = []
    for extra in ([], ["--dask", client.scheduler.address]):
        out = tmp_path / f"out{len(seen)}"
        code = main([*argv, "-o", str(out), *extra])
        err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
        seen.append((code, err, out.exists() and engine != "find"))
    assert seen[0] == seen[1] and seen[0][0] == 2 and seen[0][1] and not seen[0][2]
