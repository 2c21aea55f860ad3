"""``manage.py score``: score run files against judgments or qrels, like trec_eval.

Needs no database: it reads files, runs the pure engine and prints the scores.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.metrics import (
    DEFAULT_METRICS,
    InputError,
    evaluate,
    parse_gains,
    parse_metrics,
)
from evaluation.metrics.data import check_unique_names
from evaluation.metrics.fast import read_inputs
from evaluation.metrics.gains import check_parameters
from evaluation.metrics.parsers import parse_judgments_csv, parse_qrels, parse_run
from evaluation.metrics.report import FORMATS


class Command(BaseCommand):
    help = ("Score QA or TREC runs against answer-synset judgments (--judgments) or TREC "
            "qrels (--qrels). Prints per-question and mean scores.")
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        src = parser.add_mutually_exclusive_group(required=True)
        src.add_argument("--judgments", metavar="J.csv",
                         help="judgments CSV: question_id,synset_id,answer,level")
        src.add_argument("--qrels", metavar="QRELS", help="TREC qrels: qid 0 docno grade")
        parser.add_argument("runs", nargs="+", metavar="RUN",
                            help="run files (QA TSV/CSV or TREC 6-column; detected)")
        parser.add_argument("--metrics", default=",".join(DEFAULT_METRICS),
                            help="comma list of metric columns (default: %(default)s)")
        parser.add_argument("--gains", default=None,
                            help="gain profile: 3:2:1, 1:1:1, 10:5:1, S=3,A=2,B=1, adjusted "
                                 "(default: 3:2:1 for judgments, the grade for qrels)")
        parser.add_argument("--levels", default="S,A,B",
                            help="level codes in a judgments file, highest first (default S,A,B)")
        parser.add_argument("--beta", type=float, default=1.0, help="Q/R-measure beta (1)")
        parser.add_argument("--rbp-p", type=float, default=0.5, dest="rbp_p",
                            help="RBP persistence p (0.5)")
        parser.add_argument("--match", choices=["exact", "normalized"], default="normalized",
                            help="answer matching for judgments (default normalized)")
        parser.add_argument("--format", choices=sorted(FORMATS), default="table")

    def handle(self, *args, **opts):
        try:
            metrics = parse_metrics(opts["metrics"])
            gains = parse_gains(opts["gains"])
            check_parameters(beta=opts["beta"], rbp_p=opts["rbp_p"])
            levels = tuple(x.strip() for x in opts["levels"].split(",") if x.strip())
            if not levels or len(set(levels)) != len(levels):
                raise ValueError(f"--levels {opts['levels']!r}: give distinct level codes")
        except ValueError as e:
            raise CommandError(str(e), returncode=2) from e
        run_files = [(p, _read(p)) for p in opts["runs"]]
        path = opts["judgments"] or opts["qrels"]
        data = _read(path)
        try:
            judgments, runs = _parse(data, path, run_files, opts, levels)
            check_unique_names(runs)
            scores = evaluate(judgments, runs, metrics, gains=gains, beta=opts["beta"],
                              rbp_p=opts["rbp_p"])
        except InputError as e:
            self.stderr.write(e.format(limit=None))
            raise CommandError(f"{len(e.issues)} error(s) in the input; nothing was scored",
                               returncode=1) from e
        except ValueError as e:
            raise CommandError(str(e), returncode=2) from e
        for run, n in scores.unknown.items():
            if n:
                self.stderr.write(f"warning: run {run!r}: {n} answer(s) for questions the "
                                  "judgments do not know were ignored")
        self.stdout.write(FORMATS[opts["format"]](scores), ending="")


def _parse(data: bytes, path: str, run_files, opts, levels):
    """The judgments (or qrels) and the runs; every file is read, so that an InputError
    names every error of every file (each file's in line order)."""
    fast = None
    issues: list = []
    judgments = None
    try:
        if opts["judgments"]:
            judgments = parse_judgments_csv(data, filename=path, levels=levels,
                                            match=opts["match"])
            fast = read_inputs(qrels=None, judgments=judgments, runs=run_files)
        else:
            fast = read_inputs(qrels=data, runs=run_files)
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


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise CommandError(f"cannot read {path}: {e.strerror}", returncode=2) from e
