"""The package's layers (docs/architecture: data flows down the list, imports only point up it).

A module may import its own package, any package above its own in ``LAYERS``, and the root modules
(``errors.py``, ``stopping.py``), which import nothing of the project. ``tasks/``, ``llm/`` and ``execution/``
import no other package; ``cli/`` may import everything, ``view/`` included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import autoenvscaling

PACKAGE = Path(autoenvscaling.__file__).parent
LAYERS = [
    "tasks", "images", "execution", "sandbox", "verify", "validate", "llm", "agent", "roles", "pool", "export",
    "train", "flywheel", "cli", "view",
]  # fmt: skip
SELF_CONTAINED = {"tasks", "llm", "execution"}


def _project_imports(path: Path) -> list[str]:
    """The ``autoenvscaling.X`` names a module imports (anywhere in it, lazy imports included)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n.split(".")[1] for n in names if n.startswith("autoenvscaling.")]
    return found


def test_every_package_is_a_known_layer() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(LAYERS)


def test_imports_only_point_up_the_layers() -> None:
    wrong: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        own = rel.parts[0] if len(rel.parts) > 1 else None
        for target in _project_imports(path):
            if target not in LAYERS or target == own:
                continue  # a root module, or the module's own package
            if own is None:
                wrong.append(f"{rel} (a root module) imports {target}/")
            elif own in SELF_CONTAINED or (own != "cli" and LAYERS.index(target) > LAYERS.index(own)):
                wrong.append(f"{rel} imports {target}/, which is below {own}/")
    assert wrong == []
