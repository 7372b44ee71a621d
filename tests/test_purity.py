"""app/modelling is the pure core: standard library and numpy only."""

import ast
import sys
from pathlib import Path

MODELLING = Path(__file__).resolve().parents[1] / "app" / "modelling"
ALLOWED_THIRD_PARTY = {"numpy"}


def _imports(path: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
    return found


def test_modelling_imports_only_stdlib_and_numpy() -> None:
    files = sorted(MODELLING.rglob("*.py"))
    assert files, "app/modelling has no modules"
    bad = []
    for path in files:
        for module, line in _imports(path):
            top = module.split(".")[0]
            inside = module == "app.modelling" or module.startswith("app.modelling.")
            if inside or top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY:
                continue
            bad.append(f"{path.relative_to(MODELLING.parents[1])}:{line} imports {module}")
    assert not bad, "app/modelling must stay pure:\n" + "\n".join(bad)


def test_the_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("import numpy\nfrom sqlalchemy import select\nfrom app.db import Base\n")
    modules = [m for m, _ in _imports(sample)]
    assert modules == ["numpy", "sqlalchemy", "app.db"]
