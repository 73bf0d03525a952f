"""The browser tests and .ci/run find Chromium the same way: `chromium`, then `chromium-browser`, on
the PATH; with neither, a message that says what was looked for."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import chromium_path


def fake_binaries(folder: Path, *names: str) -> str:
    folder.mkdir()
    for name in names:
        binary = folder / name
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    return str(folder)


def ci_lookup(path: str) -> subprocess.CompletedProcess[str]:
    """The lookup function of .ci/run, run on its own with this PATH."""
    source = (REPO / ".ci" / "run").read_text()
    function = re.search(r"^find_chromium\(\) \{.*\}$", source, re.MULTILINE)
    assert function, ".ci/run defines find_chromium"
    return subprocess.run(["/bin/bash", "-c", f"{function.group(0)}\nfind_chromium"], env={"PATH": path},
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    ("present", "found"),
    [(("chromium",), "chromium"), (("chromium-browser",), "chromium-browser"),
     (("chromium", "chromium-browser"), "chromium")],
)
def test_tests_and_ci_pick_the_same_chromium(tmp_path, monkeypatch, present, found):
    path = fake_binaries(tmp_path / "bin", *present)
    monkeypatch.setenv("PATH", path)

    assert chromium_path() == os.path.join(path, found)
    assert ci_lookup(path).stdout.strip() == os.path.join(path, found)


def test_no_chromium_is_a_clear_failure(tmp_path, monkeypatch):
    path = fake_binaries(tmp_path / "empty")
    monkeypatch.setenv("PATH", path)

    looked = r"Chromium not found on the PATH \(looked for chromium, then chromium-browser\)"
    with pytest.raises(RuntimeError, match=looked):
        chromium_path()
    assert ci_lookup(path).returncode != 0
