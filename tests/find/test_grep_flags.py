"""`seqsift find` with the flags a grep user types: -l, -L, -i, -e, -f, -r, --null, and -c's
meaning, each against the naive oracle on seeded random data."""

import os

import pytest

from seqsift.cli import main
from tests import naive


def run(capsysbinary, *argv):
    code = main(["find", "-q", *argv])
    out, err = capsysbinary.readouterr()
    return code, out.decode("utf-8", "surrogateescape"), err.decode()


def random_bytes(rng, n, letters=b"aAbB\n"):
    return bytes(rng.choice(list(letters), n).astype("uint8"))


@pytest.fixture
def tree(tmp_path, rng):
    """A directory of small and chunk-sized files, a subdirectory, and symlinks inside it."""
    top = tmp_path / "top"
    (top / "sub").mkdir(parents=True)
    files = {
        "top/one.txt": random_bytes(rng, 300),
        "top/sub/two.txt": random_bytes(rng, 50_000),  # over --chunk-size 4096 below: streamed in chunks
        "top/sub/three.txt": b"no letters of the patterns here: 123",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    os.symlink(tmp_path / "top/one.txt", top / "sub/link.txt")  # a file symlink inside the tree
    os.symlink(top, top / "sub/loop")  # a directory symlink: never followed
    return tmp_path, files


def oracle_rows(tmp_path, files, patterns, fold=False):
    rows = []
    for name in sorted(files):
        data = files[name].lower() if fold else files[name]
        hits = sorted((o, k) for k, p in enumerate(patterns) for o in naive.find_all(data, p.lower() if fold else p))
        rows += [(str(tmp_path / name), o, k) for o, k in hits]
    return rows


def test_ignore_case_matches_the_folded_oracle(tmp_path, rng, capsysbinary, backend):
    path = tmp_path / "mixed.txt"
    data = random_bytes(rng, 60_000 if backend == "cpu" else 10_000)  # the CUDA simulator: a small launch
    path.write_bytes(data)
    # one buffer, and several chunks with their overlaps; on the GPU too (issue 25)
    for flags in (["--backend", backend], ["--backend", backend, "--chunk-size", "4096"]):
        code, out, _ = run(capsysbinary, "-i", "aBa", str(path), *flags)
        assert code == 0
        assert out == "".join(f"{path}\t{o}\n" for o in naive.find_all(data.lower(), b"aba"))
        code, out, _ = run(capsysbinary, "aBa", str(path), *flags)  # without -i: exact case
        assert out == "".join(f"{path}\t{o}\n" for o in naive.find_all(data, b"aBa"))


def test_several_patterns_from_e_and_f(tree, capsysbinary):
    tmp_path, files = tree
    listed = tmp_path / "patterns.txt"
    listed.write_text("bAb\n\nAAa\n")
    patterns = [b"ab", b"bAb", b"AAa"]
    names = sorted(files)
    paths = [str(tmp_path / n) for n in names]
    code, out, _ = run(capsysbinary, "-e", "ab", "-f", str(listed), *paths, "--chunk-size", "4096")
    assert code == 0
    want = oracle_rows(tmp_path, files, patterns)
    assert out == "".join(f"{p}\t{o}\t{patterns[k].decode()}\n" for p, o, k in want)
    code, out, _ = run(capsysbinary, "-c", "-i", "-e", "ab", "-f", str(listed), *paths)
    counts = {str(tmp_path / n): 0 for n in names}
    for p, _, _ in oracle_rows(tmp_path, files, patterns, fold=True):
        counts[p] += 1
    assert out == "".join(f"{p}\t{counts[p]}\n" for p in paths)


def test_several_patterns_from_standard_input():
    import subprocess
    import sys

    run_ = subprocess.run([sys.executable, "-m", "seqsift", "find", "-q", "-e", "ab", "-e", "ba"], input=b"xabax",
                          capture_output=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert run_.returncode == 0 and run_.stdout == b"-\t1\tab\n-\t2\tba\n"


def test_files_with_and_without_matches_and_null(tree, capsysbinary):
    tmp_path, files = tree
    paths = [str(tmp_path / n) for n in sorted(files)]
    with_ = [p for p, n in zip(paths, sorted(files)) if naive.find_all(files[n], b"aB")]
    without = [p for p in paths if p not in with_]
    assert with_ and without
    code, out, _ = run(capsysbinary, "-l", "aB", *paths)
    assert code == 0 and out == "".join(p + "\n" for p in with_)
    code, out, _ = run(capsysbinary, "-L", "aB", *paths)
    assert code == 0 and out == "".join(p + "\n" for p in without)
    code, out, _ = run(capsysbinary, "-L", "a", str(tmp_path / "top/one.txt"))
    assert code == 1 and out == ""  # grep -L: nothing listed, exit 1
    code, out, _ = run(capsysbinary, "-l", "--null", "aB", *paths)
    assert out == "".join(p + "\0" for p in with_)
    code, out, _ = run(capsysbinary, "--null", "-c", "aB", paths[0])
    assert out == f"{paths[0]}\0{len(naive.find_all(files[sorted(files)[0]], b'aB'))}\n"
    assert run(capsysbinary, "-l", "-L", "a", paths[0])[0] == 2


def test_recursive_walk_follows_the_scan_rules(tree, capsysbinary, monkeypatch):
    tmp_path, files = tree
    code, out, err = run(capsysbinary, "-r", "-c", "b", str(tmp_path / "top"))
    assert code == 0 and err == ""
    want = [(str(tmp_path / n), len(naive.find_all(files[n], b"b"))) for n in sorted(files)]
    # sorted walk: top/one.txt, then top/sub/three.txt, top/sub/two.txt; link.txt and loop skipped
    assert out == "".join(f"{p}\t{c}\n" for p, c in sorted(want))
    monkeypatch.chdir(tmp_path / "top")
    code, out, _ = run(capsysbinary, "-r", "-l", "aa")  # no FILE with -r: the current directory
    assert out == "".join(f"{n[4:]}\n" for n in sorted(files) if naive.find_all(files[n], b"aa"))  # as grep -r
    code, _, err = run(capsysbinary, "b", str(tmp_path / "top"))
    assert code == 2 and "top" in err  # a directory without -r is an error, named


def test_help_says_what_count_counts(capsys):
    assert main(["find", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "the number of occurrences, overlapping ones included (grep -c counts matching lines instead)" in text


def test_a_missing_pattern_or_pattern_file_is_a_usage_error(tmp_path, capsysbinary):
    assert run(capsysbinary)[0] == 2
    code, _, err = run(capsysbinary, "-f", str(tmp_path / "none.txt"), str(tmp_path))
    assert code == 2 and "none.txt" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    code, _, err = run(capsysbinary, "-f", str(empty), str(empty))
    assert code == 2 and "no pattern" in err


@pytest.mark.parametrize("scan_from", [3, 99])  # through the scan engine, and one search per pattern
def test_counts_and_listings_of_several_patterns(tree, capsysbinary, monkeypatch, scan_from):
    from seqsift.find import command

    monkeypatch.setattr(command, "SCAN_FROM", scan_from)
    tmp_path, files = tree
    patterns = [b"ab", b"bA", b"a\nB", b"AAa", b"b"]  # overlapping each other, one a single byte
    names = sorted(files)
    paths = [str(tmp_path / n) for n in names]
    flags = [arg for p in patterns for arg in ("-e", p.decode())]
    code, out, _ = run(capsysbinary, "-c", *flags, *paths)
    counts = [sum(len(naive.find_all(files[n], p)) for p in patterns) for n in names]
    assert code == 0 and out == "".join(f"{p}\t{c}\n" for p, c in zip(paths, counts))
    code, out, _ = run(capsysbinary, "-L", *flags, *paths)
    assert out == "".join(f"{p}\n" for p, c in zip(paths, counts) if c == 0)
    code, out, _ = run(capsysbinary, "-l", *flags, *paths)
    assert out == "".join(f"{p}\n" for p, c in zip(paths, counts) if c > 0)


def test_several_patterns_in_records(tmp_path, rng, capsysbinary, backend):
    """-e and -f with --fasta (issue 25): each pattern counted in each record as it is alone, in
    records cut into pieces (a small --chunk-size) whose overlap is the longest pattern's, so the
    shorter ones must not report the head of a continued piece twice."""
    # the CUDA simulator runs each GPU thread as a Python thread, and every batch, pattern and
    # strand is a launch: fewer, shorter records there
    sizes = rng.integers(0, 700 if backend == "cpu" else 150, 12 if backend == "cpu" else 4)
    sizes[3] = max(sizes[3], 40)  # record 3 gives the long pattern
    seqs = ["".join(rng.choice(list("ACGT"), int(size))) for size in sizes]
    path = tmp_path / "r.fa"
    path.write_text("".join(f">r{i} d\n" + "\n".join(s[j : j + 60] for j in range(0, len(s), 60)) + "\n"
                            for i, s in enumerate(seqs)))
    records = [(f"r{i}", s) for i, s in enumerate(seqs)]
    listed = tmp_path / "patterns.txt"
    listed.write_text(seqs[3][10:25] + "\n")  # one long pattern: the batches' overlap is 14 bases
    patterns = ["a", "CG", "gtA", seqs[3][10:25]]
    order = {name: k for k, (name, _) in enumerate(records)}
    want = sorted(((*hit, k) for k, p in enumerate(patterns) for hit in naive.record_hits(records, p, revcomp=True)),
                  key=lambda h: (order[h[0]], h[1], h[2], h[3]))
    flags = ["-e", "a", "-e", "CG", "-e", "gtA", "-f", str(listed), str(path), "--fasta", "--revcomp",
             "--backend", backend]
    for chunk in ([], ["--chunk-size", "60"]):  # one batch; records cut into pieces of 60 bases
        code, out, _ = run(capsysbinary, *flags, *chunk)
        assert code == 0
        assert out == "".join(f"{path}\t{r}\t{p}\t{s}\t{patterns[k]}\n" for r, p, s, k in want)
        if backend == "cpu":  # the count is the same code above the searchers
            code, out, _ = run(capsysbinary, "-c", *flags, *chunk)
            assert out == f"{path}\t{len(want)}\n"


def test_e_takes_a_pattern_that_starts_with_a_dash(tmp_path, capsysbinary):
    """As grep: the word after -e (or --pattern, -f) is its value, whatever it looks like."""
    path = tmp_path / "dashes.txt"
    data = b"a -wor -e x --pattern -wor"
    path.write_bytes(data)
    code, out, _ = run(capsysbinary, "-e", "-wor", str(path))
    assert code == 0 and out == "".join(f"{path}\t{o}\n" for o in naive.find_all(data, b"-wor"))
    code, out, _ = run(capsysbinary, "-c", "--pattern", "-e", "-e", "--pattern", str(path))
    assert code == 0 and out == f"{path}\t{len(naive.find_all(data, b'-e')) + len(naive.find_all(data, b'--pattern'))}\n"
    code, out, _ = run(capsysbinary, "-c", "--", "-e", str(path))  # after --, words are operands
    assert code == 0 and out == f"{path}\t{len(naive.find_all(data, b'-e'))}\n"


def test_recursive_modes_over_many_files_with_failures_among_them(tmp_path, rng, capsysbinary, monkeypatch):
    """-r over more files than one buffer holds (searched in batches, io.gather), with a large
    file, a fifo and a file gone between the walk and the search among them: -c, -l, -L and
    offsets as the oracle gives them for every readable file, in the walk's order, each failing
    file named once on stderr (exit 2), none of the others lost."""
    from seqsift.find.api import PACK_FILE_MAX

    top = tmp_path / "t"
    files = {}
    for k in range(300):
        name = top / f"d{k % 7}" / f"f{k:03d}"
        name.parent.mkdir(parents=True, exist_ok=True)
        size = PACK_FILE_MAX + 5000 if k == 150 else int(rng.choice([0, 5, 900, 20_000]))
        files[str(name)] = random_bytes(rng, size)
        name.write_bytes(files[str(name)])
    os.mkfifo(top / "d3" / "f100-fifo")
    order = sorted(files)  # one level of directories, files only: the walk's order is the names'
    from seqsift.io import tree as walker

    real_walk = walker.walk

    def walk_then_lose_one(*args, **kwargs):  # a file the walk saw, gone before it is opened
        for k, found in enumerate(real_walk(*args, **kwargs)):
            yield found
            if k == 200:
                yield str(top / "d0" / "gone"), str(top / "d0" / "gone")

    monkeypatch.setattr(walker, "walk", walk_then_lose_one)
    want_counts = {p: len(naive.find_all(files[p], b"aB")) for p in order}
    code, out, err = run(capsysbinary, "-r", "-c", "aB", str(top))
    assert code == 2 and err.count("f100-fifo") == 1 and "fifo" in err and err.count("d0/gone") == 1
    assert out == "".join(f"{p}\t{want_counts[p]}\n" for p in order)
    code, out, _ = run(capsysbinary, "-r", "-l", "aB", str(top))
    assert out == "".join(f"{p}\n" for p in order if want_counts[p])
    code, out, _ = run(capsysbinary, "-r", "-L", "aB", str(top))
    assert out == "".join(f"{p}\n" for p in order if not want_counts[p])
    code, out, _ = run(capsysbinary, "-r", "aB", str(top))
    assert out == "".join(f"{p}\t{o}\n" for p in order for o in naive.find_all_fast(files[p], b"aB"))
