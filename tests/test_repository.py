"""A fresh clone tests on its own: nothing under tests/ reads data from outside the repository, and
every data file shipped for the tests is described (origin, licence, checksum) in its SOURCE.md."""

from __future__ import annotations

import hashlib
import re

from tests.conftest import EVAL_DATA, REPO

# `../shared/eval-data` in any spelling: a path string, or `/ "shared"` / `/ "eval-data"` joins.
OUTSIDE = re.compile(r"""\.\./shared|/\s*["'](shared|eval-data)["']|["']eval-data["']""")


def test_no_test_reads_data_from_outside_the_repository():
    offenders = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if OUTSIDE.search(line) and not line.lstrip().startswith("#") and path.name != "test_repository.py"
    ]
    assert not offenders, "tests must read tests/data (EVAL_DATA), not ../shared:\n" + "\n".join(offenders)


def test_every_shipped_data_file_is_in_source_md_with_its_checksum():
    source = (EVAL_DATA / "SOURCE.md").read_text(encoding="utf-8")
    files = [path for path in sorted(EVAL_DATA.rglob("*")) if path.is_file() and path.suffix == ".jsonl"]
    assert files, "tests/data holds the samples the tests read"
    for path in files:
        name = str(path.relative_to(EVAL_DATA))
        assert f"`{name}`" in source, f"{name} is not described in tests/data/SOURCE.md"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest in source, f"{name}: its sha256 {digest} is not the one in tests/data/SOURCE.md"
