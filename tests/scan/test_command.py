"""`seqsift scan` end to end: clamscan's output form, JSON offsets, exit codes, files it must skip,
bad databases."""

import json
import os
import subprocess
import sys

import pytest

from seqsift.cli import main

SIG = bytes(range(0x30, 0x50))


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    (root / "sub").mkdir(parents=True)
    (root / "clean.bin").write_bytes(b"\x00" * 1000)
    (root / "sub" / "bad.bin").write_bytes(b"\x01" * 50 + SIG + b"\x02" * 10 + SIG)
    (root / "sub" / "empty").write_bytes(b"")
    db = tmp_path / "sigs.ndb"
    db.write_text(f"# test database\nTest.Sig-1:0:*:{SIG.hex()}\nTest.Wild:0:*:{SIG[:8].hex()}??{SIG[9:20].hex()}\n"
                  "Test.Absent:0:*:ffeeddccbbaa99887766\n")
    return root, db


def test_clamscan_form_and_exit_codes(tree, capsys):
    root, db = tree
    assert main(["scan", "--db", str(db), "-r", str(root), "-q"]) == 1
    out = capsys.readouterr().out
    bad = os.path.join(str(root), "sub", "bad.bin")
    assert f"{bad}: Test.Sig-1 FOUND\n{bad}: Test.Wild FOUND\n" in out
    assert "Scanned files: 3\n" in out and "Infected files: 1\n" in out and "Known viruses: 3\n" in out
    assert main(["scan", "--db", str(db), "--no-summary", str(root / "clean.bin")]) == 0
    assert capsys.readouterr().out == ""


def test_json_offsets(tree, capsys):
    root, db = tree
    assert main(["scan", "--db", str(db), "--json", "-q", str(root / "sub" / "bad.bin")]) == 1
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0]["signatures"] == 3
    assert {"path": str(root / "sub" / "bad.bin"), "signature": "Test.Sig-1", "count": 2, "offsets": [50, 92]} in lines
    assert lines[-1]["summary"]["infected_files"] == 1


def test_directory_without_r_and_files_to_skip(tree, capsys, tmp_path):
    root, db = tree
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    code = main(["scan", "--db", str(db), "--no-summary", str(root), str(fifo), str(loop), str(tmp_path / "missing"),
                 str(root / "sub" / "bad.bin")])
    captured = capsys.readouterr()
    assert code == 1  # clamscan's rule: something found wins over the errors reported beside it
    assert "is a directory (use -r" in captured.err
    assert "is a fifo" in captured.err and "symlink loop" in captured.err and "no such file" in captured.err
    assert "bad.bin: Test.Sig-1 FOUND" in captured.out
    assert main(["scan", "--db", str(db), "--no-summary", str(fifo), str(root / "clean.bin")]) == 2  # nothing found


def test_stats_report_stages_and_table(tree, capsys):
    root, db = tree
    main(["scan", "--db", str(db), "--stats", "-r", str(root)])
    err = capsys.readouterr().err
    for word in ("key+tag table", "largest bucket", "one-entry-per-key table would lose", "fill", "filter", "verify"):
        assert word in err


def test_malformed_database_is_exit_2_and_no_output(tree, tmp_path, capsys):
    root, db = tree
    bad = tmp_path / "bad.ndb"
    bad.write_text("Ok:0:*:4d5a9000\nBroken:0:*:4d5az0\n")
    out = tmp_path / "out.txt"
    assert main(["scan", "--db", str(db), "--db", str(bad), "-o", str(out), str(root / "clean.bin")]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".out.txt*"))


def test_standard_input_and_eof_offset(tmp_path):
    db = tmp_path / "eof.ndb"
    db.write_text(f"Tail:0:EOF-{len(SIG)}:{SIG.hex()}\n")
    run = subprocess.run([sys.executable, "-m", "seqsift", "scan", "--db", str(db), "--no-summary", "-"],
                         input=b"xyz" + SIG, capture_output=True)
    assert run.returncode == 1 and run.stdout == b"-: Tail FOUND\n"  # '-' as in find, grep and clamscan
    run = subprocess.run([sys.executable, "-m", "seqsift", "scan", "--db", str(db), "--no-summary"],
                         input=b"xyz" + SIG + b"!", capture_output=True)
    assert run.returncode == 0 and run.stdout == b""


def test_standard_input_redirected_from_a_file_is_read_as_the_file(tmp_path):
    """`< file`: read through /dev/fd/0 instead of a spool copy; output as through a pipe, EOF-n
    offsets included, and input part read before is not taken as the whole file."""
    db = tmp_path / "eof.ndb"
    db.write_text(f"Tail:0:EOF-{len(SIG)}:{SIG.hex()}\nAny:0:*:{SIG[:12].hex()}\n")
    data = tmp_path / "in.bin"
    data.write_bytes(b"xyz" * 1000 + SIG)
    argv = [sys.executable, "-m", "seqsift", "scan", "--db", str(db), "--no-summary", "-"]
    piped = subprocess.run(argv, input=data.read_bytes(), capture_output=True)
    with open(data, "rb") as f:
        redirected = subprocess.run(argv, stdin=f, capture_output=True)
    assert piped.returncode == redirected.returncode == 1
    assert redirected.stdout == piped.stdout == b"-: Tail FOUND\n-: Any FOUND\n"
    with open(data, "rb") as f:
        f.seek(3000 + 5)  # the signature cut: no match in what is left
        part = subprocess.run(argv, stdin=f, capture_output=True)
    assert part.returncode == 0 and part.stdout == b""


def test_no_verify_and_filter_switches(tree, capsys):
    root, db = tree
    bad = str(root / "sub" / "bad.bin")
    assert main(["scan", "--db", str(db), "--no-summary", "--no-verify", bad]) == 1
    assert "Test.Sig-1 CANDIDATE" in capsys.readouterr().out
    assert main(["scan", "--db", str(db), "--no-summary", "--filter", "table", "--buffers", "1",
                 "--buffer-size", "1K", bad]) == 1
    assert "Test.Sig-1 FOUND" in capsys.readouterr().out
    assert main(["scan", "--db", str(db), "--buffer-size", "16", bad]) == 2
    assert "too small" in capsys.readouterr().err


def test_an_early_stop_leaves_no_pipeline_thread_behind():
    """A consumer that stops early (an error, Ctrl-C) wakes both stages wherever they wait."""
    import threading

    from seqsift.scan.api import objects_of
    from seqsift.scan.pipeline import Scanner
    from seqsift.scan.signatures import from_strings

    with Scanner(from_strings([SIG.hex()]), buffer_size=1024) as scanner:
        results = scanner.scan(objects_of([bytes(1000)] * 200), lambda p, w: None)
        next(results)
        results.close()
    alive = [t.name for t in threading.enumerate() if t.name in ("seqsift-fill", "seqsift-filter")]
    assert alive == []


def test_objects_without_a_report_callback_raise_on_a_bad_path(tmp_path):
    from seqsift.errors import InputError
    from seqsift.scan.api import objects_of

    with pytest.raises(InputError, match="no such file"):
        list(objects_of([str(tmp_path / "missing")]))


def test_symlinks_inside_a_tree_are_not_followed_unless_asked(tmp_path, capsys):
    """clamscan's defaults (--follow-dir-symlinks=1 --follow-file-symlinks=1): a link named on the
    command line is followed, one met inside a directory is not; 2 follows those too, 0 none."""
    db = tmp_path / "sigs.txt"
    db.write_text("6d61726b6572\n")  # 'marker'
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "hit.bin").write_bytes(b"..marker..")
    top = tmp_path / "top"
    top.mkdir()
    (top / "own.bin").write_bytes(b"marker")
    os.symlink(outside / "deep" / "hit.bin", top / "file_link")
    os.symlink(outside, top / "dir_link")
    os.symlink(top, top / "loop")

    def found(*flags):
        code = main(["scan", "-q", "--no-summary", "-r", "--db", str(db), *flags, str(top)])
        out = capsys.readouterr().out
        return code, sorted(line.split(": ")[0] for line in out.splitlines())

    assert found() == (1, [str(top / "own.bin")])
    assert found("--follow-file-symlinks=2") == (1, [str(top / "file_link"), str(top / "own.bin")])
    code, files = found("--follow-dir-symlinks", "2")
    assert files == [str(top / "dir_link" / "deep" / "hit.bin"), str(top / "own.bin")]  # the loop walked once
    assert main(["scan", "-q", "--no-summary", "--db", str(db), str(top / "file_link")]) == 1  # named: followed
    assert main(["scan", "-q", "--no-summary", "--db", str(db), "--follow-file-symlinks=0",
                 str(top / "file_link")]) == 2
    assert "not followed (--follow-file-symlinks=0)" in capsys.readouterr().err
