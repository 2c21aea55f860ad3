"""``qa-reliability`` and ``manage.py reliability``: how reliably a collection's metrics rank
its runs (DESIGN.md section 10) from judgments/qrels and run files, like ``qa-score``.

Needs no database and no Django.  Writes one CSV table (with its configuration preamble) to
stdout or ``--output``; ``--samples-out`` writes the drawn samples (only when asked: a
compressed numpy archive when the name ends in ``.npz``, else the CSV) and ``--samples-in``
reads either back, so that anyone recomputes the very same figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from . import InputError, parse_gains, parse_metrics
from .cli import PRECISIONS, UsageError, add_scoring_options, console, parse_inputs, read_file
from .data import check_unique_names
from .gains import GainProfile, check_parameters
from .reliability.figures import reliability_report, score_matrices
from .reliability.samples import Samples, draw_samples
from .reliability.samples_csv import iter_samples_csv, read_samples, samples_to_npz
from .reliability.tables import TABLES

DEFAULT_TRIALS = 1000
#: the options that draw samples: a samples file read with --samples-in fixes them
SAMPLING_OPTIONS = {"trials": "--trials", "subset_size": "--subset-size", "seed": "--seed"}

DESCRIPTION = (
    "Reliability of metrics over a set of runs: stability, swap rates, bootstrap "
    "discriminative power and the bootstrap difference required for significance, "
    "confidence intervals, Holm and Tukey HSD tests. Prints a CSV table with a "
    "'# key=value' configuration preamble."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--judgments", metavar="J.csv", help="judgments CSV: question_id,synset_id,answer,level"
    )
    src.add_argument("--qrels", metavar="QRELS", help="TREC qrels: qid 0 docno grade")
    parser.add_argument(
        "runs", nargs="+", metavar="RUN", help="two or more run files (QA TSV/CSV or TREC 6-column)"
    )
    parser.add_argument(
        "--metrics", default="q_measure", help="comma list of metric columns (default: %(default)s)"
    )
    parser.add_argument(
        "--gains",
        default="default",
        help="gain profiles separated by ';', the first the reference of "
        "Kendall's tau, e.g. 'default;1:1:1;10:5:1;adjusted' "
        "(default: the judgments' own gains)",
    )
    parser.add_argument(
        "--table",
        choices=sorted(TABLES),
        default="summary",
        help="which table to print (default summary)",
    )
    parser.add_argument("--output", metavar="FILE", help="write the table here")
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="readable",
        help="digits of the figures: readable (6 significant) or full (every digit of "
        "the double: Python's repr, which reads back to the same number)",
    )
    parser.add_argument("--trials", type=int, default=None, help=f"B (default {DEFAULT_TRIALS})")
    parser.add_argument(
        "--subset-size",
        type=int,
        default=None,
        dest="subset_size",
        help="c (default: half the questions)",
    )
    parser.add_argument("--seed", type=int, default=None, help="sampling seed (default 0)")
    parser.add_argument(
        "--tukey-trials",
        type=int,
        default=None,
        dest="tukey_trials",
        help="permutations of the randomised Tukey HSD (default: B, or the samples "
        "file's); they are most of the time on many runs and questions",
    )
    parser.add_argument(
        "--samples-out",
        metavar="FILE",
        dest="samples_out",
        help="write the drawn samples: FILE.npz a compressed numpy archive of the "
        "question positions (compact), any other name the CSV (trial, subset, question ids)",
    )
    parser.add_argument(
        "--samples-in",
        metavar="FILE",
        dest="samples_in",
        help="use these samples (either form) instead of drawing (B, c, the seed and the Tukey "
        "permutations are the file's: --trials, --subset-size and --seed are refused, "
        "--tukey-trials overrides the file's)",
    )
    add_scoring_options(parser)


def reliability(opts: dict, stdout: TextIO, stderr: TextIO) -> None:
    """Compute the report of ``opts`` (the parsed options) and write the chosen table;
    UsageError (returncode 2 for options and files, 1 for input errors) otherwise."""
    metrics, profiles, levels = _checked_options(opts)
    path = opts["judgments"] or opts["qrels"]
    run_files = [(p, read_file(p)) for p in opts["runs"]]
    data = read_file(path)
    samples_data = read_file(opts["samples_in"]) if opts["samples_in"] else None
    try:
        judgments, runs = parse_inputs(data, path, run_files, opts, levels)
        check_unique_names(runs)
        matrices = score_matrices(
            judgments, runs, metrics, profiles, beta=opts["beta"], rbp_p=opts["rbp_p"]
        )
        questions = [str(q) for q in judgments.questions]
        samples = _samples(opts, questions, samples_data)
        order = samples.column_order(questions)
        matrices = {key: X[:, order] for key, X in matrices.items()}
        config = {
            "source": Path(path).name,
            "runs_files": len(runs),
            "metrics": ",".join(metrics),
            "gains": ";".join(p.label for p in profiles),
            "beta": opts["beta"],
            "rbp_p": opts["rbp_p"],
        }
        report = reliability_report(
            matrices,
            [r.name for r in runs],
            samples,
            config=config,
        )
    except InputError as e:
        stderr.write(e.format(limit=None))
        raise UsageError(
            f"{len(e.issues)} error(s) in the input; nothing was computed", returncode=1
        ) from e
    except ValueError as e:
        raise UsageError(str(e)) from e
    if opts["samples_out"]:
        _write_samples(opts["samples_out"], samples)
    text = TABLES[opts["table"]](report, precision=opts["precision"])
    if opts["output"]:
        _write(opts["output"], text)
    else:
        stdout.write(text)


def _checked_options(opts: dict) -> tuple[list[str], list[GainProfile], tuple[str, ...]]:
    """(metrics, gain profiles, level codes) of the options, checked before any file is
    read; UsageError for the first option that is not allowed."""
    try:
        metrics = parse_metrics(opts["metrics"])
        profiles = [parse_gains(g) for g in opts["gains"].split(";") if g.strip()]
        if not profiles:
            raise ValueError("--gains names no gain profile")
        if len({p.label for p in profiles}) != len(profiles):
            raise ValueError("--gains names a profile twice")
        check_parameters(beta=opts["beta"], rbp_p=opts["rbp_p"])
        levels = tuple(x.strip() for x in opts["levels"].split(",") if x.strip())
        if not levels or len(set(levels)) != len(levels):
            raise ValueError(f"--levels {opts['levels']!r}: give distinct level codes")
        if opts["tukey_trials"] is not None and opts["tukey_trials"] < 1:
            raise ValueError("--tukey-trials must be at least 1")
        if len(opts["runs"]) < 2:
            raise ValueError("reliability compares runs: give at least two run files")
        given = [flag for key, flag in SAMPLING_OPTIONS.items() if opts[key] is not None]
        if opts["samples_in"] and given:
            raise ValueError(
                f"--samples-in cannot be combined with {', '.join(given)}: the samples "
                "file fixes the trials, the subset size and the seed"
            )
    except ValueError as e:
        raise UsageError(str(e)) from e
    return metrics, profiles, levels


def _samples(opts: dict, questions: list[str], samples_data: bytes | None) -> Samples:
    """The samples file read back (``--tukey-trials`` overriding its own), or samples
    drawn with the options' trials, subset size and seed."""
    if samples_data is not None:
        samples = read_samples(samples_data)
        if opts["tukey_trials"] is not None:  # overrides the file's
            samples = dataclasses.replace(samples, tukey_trials=opts["tukey_trials"])
        return samples
    return draw_samples(
        questions,
        trials=DEFAULT_TRIALS if opts["trials"] is None else opts["trials"],
        subset_size=opts["subset_size"],
        seed=0 if opts["seed"] is None else opts["seed"],
        tukey_trials=opts["tukey_trials"],
    )


def _write_samples(path: str, samples: Samples) -> None:
    """The samples file: the compressed numpy archive for a name ending in .npz, else
    the CSV."""
    if not path.lower().endswith(".npz"):
        _write(path, iter_samples_csv(samples))
        return
    try:
        with open(path, "wb") as f:
            samples_to_npz(samples, f)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from e


def _write(path: str, text: str | Iterable[str]) -> None:
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                f.writelines(text)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from e


def main(argv: list[str] | None = None) -> int:
    """The ``qa-reliability`` console script."""
    parser = argparse.ArgumentParser(prog="qa-reliability", description=DESCRIPTION)
    add_arguments(parser)
    return console(parser, reliability, argv)


if __name__ == "__main__":
    sys.exit(main())
