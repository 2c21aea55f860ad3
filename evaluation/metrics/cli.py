"""``qa-score``: score run files against judgments or qrels, like trec_eval (DESIGN.md
sections 7 and 11).  ``manage.py score`` is the same command inside Django: both build
their options with ``add_arguments`` and score with ``score``.

Start-up is kept short: this module imports only the standard library until the options
are parsed (``qa-score --help`` never loads numpy), and nothing here imports Django or
pandas.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import TextIO

from .columns import DEFAULT_BETA, DEFAULT_METRICS, DEFAULT_RBP_P
from .normalize import MATCH_MODES

DESCRIPTION = (
    "Score QA or TREC runs against answer-synset judgments (--judgments) or TREC "
    "qrels (--qrels). Prints per-question and mean scores."
)
FORMAT_NAMES = ("csv", "table", "trec")  # report.FORMATS (a test checks they agree)
PRECISIONS = ("readable", "full")


class UsageError(Exception):
    """A problem with the options or the files; ``returncode`` 2 for options and files
    that cannot be read, 1 for input errors (nothing is scored)."""

    def __init__(self, message: str, returncode: int = 2):
        super().__init__(message)
        self.returncode = returncode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``qa-score`` and ``manage.py score``."""
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--judgments", metavar="J.csv", help="judgments CSV: question_id,synset_id,answer,level"
    )
    src.add_argument("--qrels", metavar="QRELS", help="TREC qrels: qid 0 docno grade")
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="run files (QA TSV/CSV or TREC 6-column; detected)"
    )
    parser.add_argument(
        "--metrics",
        default=",".join(DEFAULT_METRICS),
        help="comma list of metric columns (default: %(default)s)",
    )
    parser.add_argument(
        "--gains",
        default=None,
        help="gain profile: 3:2:1, 1:1:1, 10:5:1, S=3,A=2,B=1, adjusted "
        "(default: 3:2:1 for judgments, the grade for qrels)",
    )
    add_scoring_options(parser)
    parser.add_argument("--format", choices=FORMAT_NAMES, default="table")
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="readable",
        help="digits of the scores: readable (table and trec 4, csv 6) or "
        "full (every digit of the double: Python's repr, which reads "
        "back to the same number)",
    )


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    """The options that say how files are read and scored, shared with ``qa-reliability``:
    --levels, --beta, --rbp-p, --match."""
    parser.add_argument(
        "--levels",
        default="S,A,B",
        help="level codes in a judgments file, highest first (default S,A,B)",
    )
    parser.add_argument(
        "--beta", type=float, default=DEFAULT_BETA, help=f"Q/R-measure beta ({DEFAULT_BETA:g})"
    )
    parser.add_argument(
        "--rbp-p",
        type=float,
        default=DEFAULT_RBP_P,
        dest="rbp_p",
        help=f"RBP persistence p ({DEFAULT_RBP_P:g})",
    )
    parser.add_argument(
        "--match",
        choices=MATCH_MODES,
        default="normalized",
        help="answer matching for judgments (default normalized)",
    )


def keep_freed_memory() -> None:
    """Ask the C library (glibc; elsewhere nothing happens) to keep memory the process
    frees for its next allocations instead of giving it back to the system at once:
    scoring makes and drops many arrays of millions of rows, and each fresh page costs
    a page fault (84,000 -> 50,000 faults, 0.45 -> 0.25 s of system time, on the QAu
    bench).  For console scripts only: the process exits when done."""
    try:
        import ctypes  # the console script alone tunes malloc: off every importer's path

        mallopt = ctypes.CDLL(None).mallopt
    except (ImportError, OSError, AttributeError):
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: blocks up to 32 MB come from the heap
    mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: keep up to 1 GB freed at the heap's top
    mallopt(-2, 64 << 20)  # M_TOP_PAD: grow the heap 64 MB at a time


def console(parser: argparse.ArgumentParser, run, argv: list[str] | None) -> int:
    """Run ``run(opts, stdout, stderr)`` as a console script: 0 when done, the
    UsageError's code (1 input errors, 2 bad options or unreadable files) otherwise."""
    opts = vars(parser.parse_args(argv))
    keep_freed_memory()
    collecting = gc.isenabled()
    gc.disable()  # a run makes few cycles and then exits: no collections over its objects
    try:
        run(opts, sys.stdout, sys.stderr)
    except UsageError as e:
        sys.stderr.write(f"{parser.prog}: error: {e}\n")
        return e.returncode
    except BrokenPipeError:  # `qa-score ... | head`
        sys.stderr.close()
    finally:
        if collecting:
            gc.enable()
    return 0


def build_parser(prog: str = "qa-score") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    add_arguments(parser)
    return parser


def score(opts: dict, stdout: TextIO, stderr: TextIO) -> None:
    """Read the files ``opts`` names, score them and write the report to ``stdout``
    (input errors and warnings to ``stderr``).  Raises UsageError."""
    # the engine's modules load numpy: imported once the options are parsed (module docstring)
    from .accel import start_reading

    # the files first: the C reader (when built) reads the runs in a thread while numpy
    # is imported and the options and judgments are read; an unreadable file is reported
    # after the options, as before
    try:
        run_files = [(p, read_file(p)) for p in opts["runs"]]
        path = opts["judgments"] or opts["qrels"]
        data = read_file(path)
        unreadable = None
    except UsageError as e:
        unreadable = e
    reading = None if unreadable else start_reading(None if opts["judgments"] else data, run_files)
    from .data import check_unique_names  # numpy-loading, as start_reading above
    from .engine import evaluate, parse_metrics
    from .errors import InputError
    from .gains import check_parameters, parse_gains
    from .report import FORMATS

    try:
        metrics = parse_metrics(opts["metrics"])
        gains = parse_gains(opts["gains"])
        check_parameters(beta=opts["beta"], rbp_p=opts["rbp_p"])
        levels = tuple(x.strip() for x in opts["levels"].split(",") if x.strip())
        if not levels or len(set(levels)) != len(levels):
            raise ValueError(f"--levels {opts['levels']!r}: give distinct level codes")
    except ValueError as e:
        raise UsageError(str(e)) from e
    if unreadable is not None:
        raise unreadable
    try:
        judgments, runs = parse_inputs(data, path, run_files, opts, levels, reading)
        check_unique_names(runs)
        scores = evaluate(
            judgments, runs, metrics, gains=gains, beta=opts["beta"], rbp_p=opts["rbp_p"]
        )
    except InputError as e:
        stderr.write(e.format(limit=None) + "\n")
        raise UsageError(
            f"{len(e.issues)} error(s) in the input; nothing was scored", returncode=1
        ) from e
    except ValueError as e:
        raise UsageError(str(e)) from e
    for run, n in scores.unknown.items():
        if n:
            stderr.write(
                f"warning: run {run!r}: {n} answer(s) for questions the "
                "judgments do not know were ignored\n"
            )
    options = {"digits": None} if opts.get("precision") == "full" else {}
    if _utf8_stream(stdout):  # the console script's stdout: bytes straight to the file
        from .report import render_utf8  # numpy-loading, as start_reading above

        stdout.flush()
        stdout.buffer.writelines(render_utf8(opts["format"], scores, **options))
        return
    stdout.write(FORMATS[opts["format"]](scores, **options))


def _utf8_stream(stream) -> bool:
    """True when ``stream`` is the process's stdout writing UTF-8 text unchanged (no
    newline translation), so that bytes may go to its buffer instead."""
    return (
        stream is sys.stdout
        and hasattr(stream, "buffer")
        and (getattr(stream, "encoding", "") or "").lower().replace("-", "") == "utf8"
        and getattr(stream, "errors", "") == "strict"
        and os.linesep == "\n"
    )


def parse_inputs(data: bytes, path: str, run_files, opts, levels, reading=None):
    """The judgments (or qrels) and the runs; every file is read, so that an InputError
    names every error of every file (each file's in line order).  ``reading``: the C
    reader started on the files (``accel.start_reading``), if it was."""
    from .errors import InputError  # numpy-loading modules, as in score()
    from .fast import read_inputs
    from .judgment_parsers import parse_judgments_csv, parse_qrels
    from .parsers import parse_run

    fast = None
    issues: list = []
    judgments = None
    try:
        if opts["judgments"]:
            judgments = parse_judgments_csv(data, filename=path, levels=levels, match=opts["match"])
            fast = read_inputs(qrels=None, judgments=judgments, runs=run_files, reading=reading)
        else:
            fast = read_inputs(qrels=data, runs=run_files, reading=reading)
            judgments = fast[0] if fast else parse_qrels(data, filename=path)
    except InputError as e:
        issues += e.issues
    if fast:
        return judgments, fast[1]
    runs = []
    for p, run in run_files:
        try:
            runs.append(parse_run(run, filename=p))
        except InputError as e:
            issues += e.issues
    if issues:
        raise InputError(issues)
    return judgments, runs


def read_file(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from e


def main(argv: list[str] | None = None) -> int:
    """The ``qa-score`` console script: 0 when scored, 1 for input errors, 2 for bad
    options or unreadable files."""
    # scoring does no linear algebra: numpy's BLAS need not start a thread per core
    # (they spin for a while, taking CPU from the reader's thread)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    return console(build_parser(), score, argv)


if __name__ == "__main__":
    sys.exit(main())
