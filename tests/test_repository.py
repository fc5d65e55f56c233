"""The checkout's own text: no merge left its conflict markers in a document (Python files would
not import; Markdown, the Makefile and data notes would pass every other test)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKERS = ("<<<<<<< ", ">>>>>>> ", "=======\n")


def text_files():
    for pattern in ("*.md", "docs/*.md", "tests/data/*.md", "Makefile", "pyproject.toml", ".ci/run"):
        yield from ROOT.glob(pattern)


def test_no_conflict_markers_in_documents():
    found = [f"{path.relative_to(ROOT)}:{number}" for path in text_files()
             for number, line in enumerate(path.read_text().splitlines(keepends=True), 1)
             if line.startswith(MARKERS)]
    assert found == []


def test_the_check_sees_the_documents():
    names = {path.relative_to(ROOT).as_posix() for path in text_files()}
    assert {"README.md", "docs/benchmarks.md", "Makefile"} <= names
