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


def test_every_package_the_code_imports_is_pinned_in_pyproject():
    """What the source, tests, benchmarks and demo import is a dependency of its own with an exact
    version (babel came into tests/test_translations.py before it came into pyproject.toml): a
    package that only arrives through another one changes version when that one does."""
    import ast
    import sys
    import tomllib
    from importlib.metadata import packages_distributions

    files = [path for path in REPO.rglob("*.py")
             if not {".venv", ".data", "spravka.egg-info", ".git"} & set(path.relative_to(REPO).parts)]
    # Our own: top-level packages, and scripts that import their siblings (bench/, tests/).
    ours = {path.name for path in REPO.iterdir() if (path / "__init__.py").exists()} | {"manage"}
    ours |= {path.stem for folder in ("bench", "tests", "demo") for path in (REPO / folder).glob("*.py")}
    imported: dict[str, str] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                     else [])
            for name in names:
                imported.setdefault(name.split(".")[0], str(path.relative_to(REPO)))
    third_party = {name: where for name, where in imported.items()
                   if name not in sys.stdlib_module_names and name not in ours and name != "__future__"}
    assert {"django", "babel", "playwright"} <= set(third_party)

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"].values()
    requirements = [*project["dependencies"], *(r for extra in extras for r in extra)]

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    pinned = {norm(re.split(r"[\[=<>~!; ]", r, maxsplit=1)[0]) for r in requirements if "==" in r}
    distributions = packages_distributions()
    unpinned = {name: where for name, where in sorted(third_party.items())
                if not any(norm(dist) in pinned for dist in distributions.get(name, []))}
    assert unpinned == {}, f"imported but not pinned in pyproject.toml (module: first file): {unpinned}"
