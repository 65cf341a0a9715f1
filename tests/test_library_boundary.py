"""The library (dpbench.algorithms, dpbench.privacy) is usable without the harness: it imports with numpy, scipy,
scikit-learn, joblib and dp-accounting only (interpret when a DP-EBM is fitted), and imports no harness module."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import dpbench

PACKAGE = Path(dpbench.__file__).resolve().parent
LIBRARY = ("algorithms", "privacy")
HEAVY = ("interpret", "pandas", "pyarrow", "hydra", "omegaconf", "optuna", "openml", "matplotlib", "dask")
INTERPRET_ALLOWED = {"algorithms/_interpret_patch.py"}  # imported when a DP-EBM is fitted, never at import

# Heavy packages are refused (as if not installed: scikit-learn imports pandas when it can, and must cope
# without it); an attempt from a dpbench module is recorded.  Then every registered algorithm but DP-EBM
# (interpret) is fitted on tiny data, and the dpbench modules loaded are listed.
SCRIPT = """
import json, sys
HEAVY = set(json.loads(sys.argv[1]))
attempts = []

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] not in HEAVY:
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        importer = frame.f_globals.get("__name__", "?") if frame is not None else "?"
        if importer.split(".")[0] == "dpbench":
            attempts.append(f"{importer} imports {name}")
        raise ModuleNotFoundError(f"No module named {name!r} (refused by the boundary test)", name=name)

sys.meta_path.insert(0, Refuse())
import numpy as np
import dpbench.algorithms, dpbench.privacy
from dpbench.algorithms import available, get_spec, make

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3)) / 3
y = X @ np.array([0.5, -0.3, 0.2]) + 0.05 * rng.normal(size=60)
fitted = []
for name in available():
    if name.startswith("dp_ebm"):
        continue
    spec = get_spec(name)
    target = (y > 0).astype(int) if spec.task == "classification" else y
    est = make(name, random_state=0) if spec.private else make(name)
    np.asarray(est.fit(X, target).predict(X), dtype=float)
    fitted.append(name)
print(json.dumps({"attempts": attempts, "fitted": fitted, "modules": sorted(sys.modules)}))
"""


def test_the_library_imports_and_fits_without_the_harness():
    out = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(HEAVY)], capture_output=True, text=True,
                         cwd=PACKAGE.parent, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["attempts"] == []
    assert len(report["fitted"]) >= 10 and "private_selection" in report["fitted"]
    heavy = [m for m in report["modules"] if m.split(".")[0] in HEAVY]
    assert heavy == []
    ours = [m for m in report["modules"] if m.split(".")[0] == "dpbench"]
    outside = [m for m in ours if m != "dpbench" and m.split(".")[1] not in LIBRARY]
    assert outside == [], f"harness modules imported by the library: {outside}"
    assert "dpbench.algorithms._interpret_patch" not in ours


def _imported(source: str, package: str) -> list[str]:
    """Every module `source` (a module of `package`) imports, anywhere in it (functions included), absolute."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            names += [f"{base}.{a.name}" if base == "dpbench" else base for a in node.names]
    return names


def test_no_library_module_imports_the_harness_or_a_heavy_package():
    problems = []
    files = [PACKAGE / "__init__.py"] + [f for part in LIBRARY for f in sorted((PACKAGE / part).rglob("*.py"))]
    for path in files:
        where = path.relative_to(PACKAGE).as_posix()
        package = ".".join(path.relative_to(PACKAGE.parent).parts[:-1])
        for name in _imported(path.read_text(), package):
            parts = name.split(".")
            if parts[0] == "dpbench" and len(parts) > 1 and parts[1] not in LIBRARY:
                problems.append(f"{where} imports {name}")
            if parts[0] in HEAVY and not (parts[0] == "interpret" and where in INTERPRET_ALLOWED):
                problems.append(f"{where} imports {name}")
    assert problems == []


def test_the_ast_check_sees_imports_inside_functions():
    """The check above has teeth: a harness import inside a function, or a relative one, is seen."""
    source = "def f():\n    from dpbench.tuning import spaces\n    from ..data import load_dataset\n    import pandas\n"
    assert _imported(source, "dpbench.algorithms") == ["dpbench.tuning", "dpbench.data", "pandas"]
    assert _imported("from dpbench import audit, privacy\n", "dpbench.privacy") == ["dpbench.audit", "dpbench.privacy"]
