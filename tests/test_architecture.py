"""Dependencies point one way: api -> evaluation -> annotate -> engine (evaluation.metrics).

The contracts live in pyproject.toml (``[tool.importlinter]``); ``lint-imports`` checks them
here, so ``make test`` enforces them as CI does.  Every service and selector signature is
typed (STYLE.md)."""

import importlib
import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; "
    "sys.exit(lint_imports_command())",
    "--no-cache",
    "--no-logo",
]


def lint(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(LINT, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_import_contracts_are_kept():
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.fixture
def tree(tmp_path):
    """A copy of the apps, the settings package and the contracts, to break on purpose."""
    for package in ("annotate", "evaluation", "api", "config", "jobs"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    ("path", "code", "broken"),
    [
        # annotate reaching into the evaluation app, at module level or inside a function
        ("annotate/odd.py", "from evaluation.models import Run\n", "annotate is not allowed"),
        (
            "annotate/odd.py",
            "def f():\n    from evaluation import services\n",
            "annotate is not allowed",
        ),
        # the engine importing Django or an app module
        ("evaluation/metrics/odd.py", "import django\n", "evaluation.metrics is not allowed"),
        (
            "evaluation/metrics/odd.py",
            "from annotate import models\n",
            "evaluation.metrics is not allowed",
        ),
        (
            "evaluation/metrics/odd.py",
            "from evaluation import services\n",
            "evaluation.metrics is not allowed",
        ),
        # any module of the evaluation app outside the engine, even a Django-free one
        (
            "evaluation/metrics/odd.py",
            "from evaluation.analysis.significance import TestConfig\n",
            "evaluation.metrics is not allowed",
        ),
        (
            "evaluation/metrics/odd.py",
            "import evaluation.odd2\n",
            "evaluation.metrics is not allowed",
        ),
        # the statistics beside the engine: no Django, no ORM module of the app
        ("evaluation/analysis/odd.py", "import django.db\n", "evaluation.analysis is not allowed"),
        (
            "evaluation/analysis/odd.py",
            "from evaluation import selectors\n",
            "evaluation.analysis is not allowed",
        ),
        # config (settings, middleware, helpers) imports no app
        (
            "config/odd.py",
            "from annotate.permissions import navigation_for\n",
            "config is not allowed",
        ),
        ("config/odd.py", "import evaluation.metrics.normalize\n", "config is not allowed"),
        # the API app is the outermost layer: no app (nor the settings package) imports it
        ("evaluation/odd.py", "from api.models import ApiToken\n", "evaluation is not allowed"),
        ("annotate/odd.py", "import api.auth\n", "annotate is not allowed"),
        ("config/odd.py", "from api import endpoints\n", "config is not allowed"),
    ],
)
def test_an_import_against_the_direction_breaks_a_contract(tree, path, code, broken):
    assert lint(tree).returncode == 0  # the copy is clean
    (tree / "evaluation/odd2.py").write_text("")  # a new module of the evaluation app
    (tree / path).write_text(code)
    done = lint(tree)
    assert done.returncode != 0 and broken in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("path", "code", "broken"),
    [
        # the data model reaching up into the scorer (which imports it), a matching rule
        # into the command line, the samples into the figures computed on them
        (
            "evaluation/metrics/data.py",
            "\nfrom . import engine\n",
            "evaluation.metrics.data is not allowed to import evaluation.metrics.engine",
        ),
        (
            "evaluation/metrics/normalize.py",
            "\nfrom .cli import console\n",
            "evaluation.metrics.normalize is not allowed to import evaluation.metrics.cli",
        ),
        (
            "evaluation/metrics/reliability/samples.py",
            "\nfrom . import figures\n",
            "evaluation.metrics.reliability.samples is not allowed to import",
        ),
    ],
)
def test_a_cycle_inside_the_engine_breaks_its_layers_contracts(tree, path, code, broken):
    with open(tree / path, "a") as f:
        f.write(code)
    done = lint(tree)
    assert done.returncode != 0 and broken in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("path", "code", "broken"),
    [
        # a cycle inside annotate, even hidden in a function: a gold write importing the
        # layer writes (which build on it), a read importing a write, a write importing a page
        (
            "annotate/judging.py",
            "\n\ndef _hidden():\n    from .layers import layer_judge\n",
            "annotate.judging is not allowed to import annotate.layers",
        ),
        (
            "annotate/layer_selectors.py",
            "\nfrom .adjudication import adjudicate_take\n",
            "annotate.layer_selectors is not allowed to import annotate.adjudication",
        ),
        (
            "annotate/layer_views.py",
            "\nfrom .views import question_judge\n",
            "annotate.layer_views is not allowed to import annotate.views",
        ),
    ],
)
def test_a_cycle_inside_annotate_breaks_its_layers_contract(tree, path, code, broken):
    with open(tree / path, "a") as f:
        f.write(code)
    done = lint(tree)
    assert done.returncode != 0 and broken in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("path", "code", "broken"),
    [
        # a read importing a write, a write importing a page, at module level or hidden
        # inside a function: the cycle is broken by the app's layers contract
        ("evaluation/selectors.py", "from evaluation import services\n", "evaluation's layers"),
        (
            "evaluation/services.py",
            "def f():\n    from evaluation import run_views\n",
            "evaluation's layers",
        ),
        # two page families import none of each other: what they share is score_pages
        ("evaluation/run_views.py", "from .compare_views import compare\n", "evaluation's layers"),
        ("api/models.py", "from api import endpoints\n", "api's layers"),
        ("api/services.py", "def f():\n    from api import views\n", "api's layers"),
    ],
)
def test_a_cycle_inside_an_app_breaks_its_layers(tree, path, code, broken):
    target = tree / path
    target.write_text(target.read_text() + code)
    done = lint(tree)
    assert done.returncode != 0 and broken in done.stdout, done.stdout + done.stderr


def test_the_engine_may_be_imported_by_annotate(tree):
    (tree / "annotate/odd.py").write_text("from evaluation.metrics.gains import check_gain\n")
    assert lint(tree).returncode == 0


# the writes (services, the imports) and reads (selectors) of every app
TYPED_MODULES = [
    "annotate.edits",
    "annotate.judging",
    "annotate.organizing",
    "annotate.matching",
    "annotate.layers",
    "annotate.adjudication",
    "annotate.layer_state",
    "annotate.layer_selectors",
    "annotate.agreement_report",
    "annotate.selectors",
    "annotate.imports",
    "annotate.import_plans",
    "annotate.judgments_plan",
    "annotate.exports",
    "evaluation.services",
    "evaluation.selectors",
    "evaluation.archive.exporting",
    "evaluation.archive.importing",
    "api.services",
    "evaluation.access",
]


@pytest.mark.parametrize("name", TYPED_MODULES)
def test_every_service_and_selector_signature_is_typed(name):
    module = importlib.import_module(name)
    missing = []
    functions = [
        (n, fn)
        for n, fn in inspect.getmembers(module, inspect.isfunction)
        if fn.__module__ == module.__name__
    ]
    assert functions, name
    for n, fn in functions:
        sig = inspect.signature(fn)
        missing += [
            f"{n}({p})"
            for p, param in sig.parameters.items()
            if param.annotation is inspect.Parameter.empty
        ]
        if sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{n} -> ?")
    assert missing == []


def test_jobs_may_not_import_an_app(tree):
    (tree / "jobs" / "odd.py").write_text("from annotate import models\n")
    result = lint(tree)
    assert result.returncode == 1
    assert "jobs is not allowed to import annotate" in result.stdout
