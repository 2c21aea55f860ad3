"""The engine is framework-free: nothing under evaluation/metrics imports Django."""

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "evaluation" / "metrics"


def test_no_module_under_metrics_imports_django():
    offenders = []
    for path in sorted(ENGINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "django"]
    assert not offenders
    assert len(list(ENGINE.rglob("*.py"))) >= 5


def test_engine_imports_without_django_loaded():
    code = (
        "import sys, evaluation.metrics, evaluation.metrics.parsers, "
        "evaluation.metrics.report; "
        "print(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ENGINE.parents[1],
        text=True,
        capture_output=True,
        check=True,
    )
    assert out.stdout.strip() == "False"
