"""The application's own source files, for tests that read the code: the packages the layers
contract names (pyproject.toml, [tool.importlinter]); tests/, bench/ and migrations are not
application code (they build rows as they need them)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.conftest import REPO

APPS: list[str] = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]


def app_files() -> list[Path]:
    return sorted(path for app in APPS for path in (REPO / app).rglob("*.py")
                  if "migrations" not in path.relative_to(REPO).parts)
