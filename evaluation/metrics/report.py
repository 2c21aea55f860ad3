"""Text renderings of scores: table, CSV (``run,question_id,<metrics>``) and trec_eval -q."""

from __future__ import annotations

import csv
import io

from .engine import Scores


def _fmt(value: float, digits: int) -> str:
    return f"{value:.{digits}f}"


def to_csv(scores: Scores, *, digits: int = 6) -> str:
    """Header ``run,question_id,<metrics>``; one row per run and judged question, then a
    row with question_id ``all`` holding the run's means."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["run", "question_id", *scores.metrics])
    for row in scores.long().itertuples(index=False):
        w.writerow([row[0], row[1], *(_fmt(v, digits) for v in row[2:])])
    return out.getvalue()


def to_trec(scores: Scores, *, digits: int = 4) -> str:
    """``metric<TAB>question_id<TAB>value`` lines per question then ``all``, as trec_eval
    -q prints them; with several runs each block starts with ``runid<TAB>all<TAB>name``."""
    lines = []
    many = len(scores.runs) > 1
    for run in scores.runs:
        if many:
            lines.append(f"runid\tall\t{run}")
        pq = scores.per_question[run]
        for qid, row in zip(pq.index, pq.itertuples(index=False), strict=True):
            for metric, value in zip(scores.metrics, row, strict=True):
                lines.append(f"{metric}\t{qid}\t{_fmt(value, digits)}")
        means = scores.means().loc[run]
        for metric in scores.metrics:
            lines.append(f"{metric}\tall\t{_fmt(means[metric], digits)}")
    return "\n".join(lines) + "\n"


def to_table(scores: Scores, *, digits: int = 4) -> str:
    """A fixed-width table per run, questions then the mean row."""
    blocks = []
    for run in scores.runs:
        frame = scores.long()
        frame = frame[frame["run"] == run].drop(columns=["run"])
        blocks.append(f"run: {run}\n" + frame.to_string(
            index=False, float_format=lambda v: _fmt(v, digits)))
    return "\n\n".join(blocks) + "\n"


FORMATS = {"table": to_table, "csv": to_csv, "trec": to_trec}
