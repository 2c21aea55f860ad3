"""``qa-score`` (evaluation.metrics.cli) as a whole process: the same output as
``manage.py score`` on the same files, and a start-up that loads neither Django nor
pandas (DESIGN.md sections 7 and 11)."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.metrics.cli import FORMAT_NAMES
from evaluation.metrics.report import FORMATS

from .test_score_command import JUDGMENTS, NOAF

# qa-score and manage.py score in subprocesses
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 2\n2 0 d 3\n"
TREC_RUN = "1 Q0 b 1 2.0 mine\n1 Q0 a 2 1.0 mine\n2 Q0 c 1 1.0 mine\n2 Q0 d 2 0.5 mine\n"


def _env() -> dict:
    env = dict(os.environ)
    env.pop("DJANGO_SETTINGS_MODULE", None)  # the pytest-django setting: not the CLI's
    return env


def qa_score(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evaluation.metrics.cli", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )


def manage_score(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "score", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )


@pytest.fixture
def files(tmp_path):
    j = tmp_path / "judgments.csv"
    j.write_text(JUDGMENTS)
    r1 = tmp_path / "noAF.tsv"
    r1.write_text(NOAF)
    r2 = tmp_path / "second.tsv"
    r2.write_text("beatles\t1\tRingo\nbeatles\t2\tthe beatles\nkawabata\t1\t1968\n")
    q = tmp_path / "qrels"
    q.write_text(QRELS)
    t = tmp_path / "run.trec"
    t.write_text(TREC_RUN)
    return j, r1, r2, q, t


def test_format_names_are_the_reports():
    assert sorted(FORMAT_NAMES) == sorted(FORMATS)


@pytest.mark.parametrize(
    "extra",
    [
        ["--format", "csv"],
        ["--format", "trec"],
        ["--format", "table"],
        ["--format", "csv", "--precision", "full"],
        ["--format", "trec", "--precision", "full"],
        ["--format", "table", "--precision", "full", "--metrics", "q_measure,rbp_trunc,p@2"],
        ["--match", "exact", "--gains", "adjusted", "--beta", "2", "--format", "csv"],
        ["--match", "squad", "--format", "csv"],
    ],
)
def test_the_same_output_as_manage_py_score(files, extra):
    j, r1, r2, _, _ = files
    a = qa_score("--judgments", j, r1, r2, *extra)
    b = manage_score("--judgments", j, r1, r2, *extra)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout
    assert "1 answer(s) for questions the judgments do not know" in a.stderr
    assert a.stderr == b.stderr


# one test per case (not a loop): pytest-xdist spreads them over the workers
@pytest.mark.parametrize("fmt", sorted(FORMAT_NAMES))
def test_the_same_output_on_qrels(files, fmt):
    _, _, _, q, t = files
    a = qa_score("--qrels", q, t, "--format", fmt, "--metrics", "ap,ndcg,rr")
    b = manage_score("--qrels", q, t, "--format", fmt, "--metrics", "ap,ndcg,rr")
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout


def test_errors_alike(files, tmp_path):
    j, r1, *_ = files
    bad = tmp_path / "bad.tsv"
    bad.write_text("beatles\t1\tPaul\nbeatles\tx\tJohn\nbeatles\t1\tGeorge\n")
    a = qa_score("--judgments", j, r1, bad)
    b = manage_score("--judgments", j, r1, bad)
    assert a.returncode == b.returncode == 1
    assert a.stdout == b.stdout == ""
    listed = [line for line in a.stderr.splitlines() if line.startswith(str(bad))]
    assert listed == [
        f"{bad}:2: rank 'x' is not a positive integer",
        f"{bad}:3: question 'beatles' has rank 1 twice (line 1)",
    ]
    assert listed == [line for line in b.stderr.splitlines() if line.startswith(str(bad))]
    assert "2 error(s) in the input; nothing was scored" in a.stderr
    assert "2 error(s) in the input; nothing was scored" in b.stderr
    assert qa_score("--judgments", j, r1, "--metrics", "rbp", "--rbp-p", "0.995").returncode == 0
    a = qa_score("--judgments", tmp_path / "missing.csv", r1)
    assert a.returncode == 2 and "cannot read" in a.stderr
    a = qa_score(r1)  # neither --judgments nor --qrels: argparse's usage error
    assert a.returncode == 2 and "one of the arguments --judgments --qrels is required" in a.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--metrics", "nope"],
        ["--beta", "-1"],
        ["--levels", "S,S"],
        ["--rbp-p", "1"],
        ["--gains", "S=4,A=2,B=1,C=0"],  # the judgments' levels are S, A, B
    ],
)
def test_option_errors_alike(files, args):
    j, r1, *_ = files
    a = qa_score("--judgments", j, r1, *args)
    b = manage_score("--judgments", j, r1, *args)
    assert a.returncode == b.returncode == 2, (args, a.stderr, b.stderr)
    # one message: "qa-score: error: ..." and "CommandError: ..."
    assert a.stderr.splitlines()[-1].split("error: ", 1)[1] in b.stderr, args
    if args[0] == "--gains":
        assert "names level(s) C that the judgments do not have (their levels: S, A, B)" in a.stderr


def test_no_django_no_pandas(files):
    j, r1, r2, q, t = files
    probe = (
        "import sys\n"
        "from evaluation.metrics.cli import main\n"
        f"assert main({['--judgments', str(j), str(r1), str(r2), '--format', 'csv']!r}) == 0\n"
        f"assert main({['--qrels', str(q), str(t), '--format', 'trec']!r}) == 0\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'pandas')]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_help_loads_no_numpy():
    probe = (
        "import sys\n"
        "from evaluation.metrics.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit as e:\n    assert e.code == 0\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'django', 'pandas')]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "--precision" in done.stdout and "--match" in done.stdout


# -- docs/cli.md: every example prints what the page shows ---------------------------------
_BLOCK = re.compile(r"^```\w+ title=(\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_EXAMPLE = re.compile(
    r"^```sh\n(qa-score [^\n]*)\n```\n\n```text\n(.*?)^```$", re.MULTILINE | re.DOTALL
)
_CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def _doc_files(tmp_path: Path) -> Path:
    for doc in ("formats.md", "cli.md"):
        for name, body in _BLOCK.findall((ROOT / "docs" / doc).read_text(encoding="utf-8")):
            if "/" not in name:
                (tmp_path / name).write_text(body, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("command", "shown"), _EXAMPLE.findall(_CLI_DOC), ids=[c for c, _ in _EXAMPLE.findall(_CLI_DOC)]
)
def test_docs_cli_examples(command, shown, tmp_path):
    where = _doc_files(tmp_path)
    env = _env()
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "evaluation.metrics.cli", *shlex.split(command)[1:]],
        cwd=where,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown


def test_docs_cli_has_examples():
    assert len(_EXAMPLE.findall(_CLI_DOC)) >= 6
