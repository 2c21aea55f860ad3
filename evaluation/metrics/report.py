"""Text renderings of scores: table, CSV (``run,question_id,<metrics>``) and trec_eval -q.

Each is built from the score matrix with one format call per question (50 runs of 5,000
questions print in well under a second).  ``digits=None`` writes every value in full
precision: Python's ``repr``, the shortest text that reads back to the same double."""

from __future__ import annotations

from .csvio import cell
from .engine import Scores


def _csv_field(text: str) -> str:
    """``text`` as the product's CSV writer writes a text cell (quoted, formula-safe)."""
    return cell(str(text))


def _rows(scores: Scores):
    """(run index, run, per-question value rows, mean row) for each run."""
    means = scores.mean_values()
    for i, run in enumerate(scores.runs):
        yield i, run, scores.values[i].T.tolist(), means[i].tolist()


def _spec(digits: int | None) -> str:
    """The format spec of one value: fixed ``digits`` decimals, or repr when None."""
    return "!r" if digits is None else f":.{digits}f"


def to_csv(scores: Scores, *, digits: int | None = 6) -> str:
    """Header ``run,question_id,<metrics>,unjudged``; one row per run and judged question,
    then a row with question_id ``all`` holding the run's means.  ``unjudged`` counts the
    run's answers to the question that no assessor judged (in the ``all`` row: the run's
    total).  Text cells as ``csvio.write_csv`` writes them (its reader reads this file
    back)."""
    values = ",".join([f"{{{_spec(digits)}}}"] * len(scores.metrics))
    qids = [_csv_field(str(q)) for q in scores.questions]
    unjudged = scores.unjudged()
    out = [",".join(["run", "question_id", *map(_csv_field, scores.metrics), "unjudged"])]
    for i, run, rows, mean in _rows(scores):
        row = (_csv_field(run).replace("{", "{{").replace("}", "}}") + ",{}," + values
               + ",{}").format
        counts = unjudged[i].tolist()
        out.extend(row(qid, *vals, n) for qid, vals, n in zip(qids, rows, counts, strict=True))
        out.append(row("all", *mean, sum(counts)))
    return "\n".join(out) + "\n"


def to_trec(scores: Scores, *, digits: int | None = 4) -> str:
    """``metric<TAB>question_id<TAB>value`` lines per question then ``all``, as trec_eval
    -q prints them; with several runs each block starts with ``runid<TAB>all<TAB>name``."""
    # one template per question id writes all of its metric lines at once
    template = "\n".join(
        f"{m.replace('{', '{{').replace('}', '}}')}\t{{q}}\t{{v[{k}]{_spec(digits)}}}"
        for k, m in enumerate(scores.metrics)).format
    qids = [str(q) for q in scores.questions]
    out = []
    many = len(scores.runs) > 1
    for _, run, rows, mean in _rows(scores):
        if many:
            out.append(f"runid\tall\t{run}")
        out.extend(template(q=qid, v=vals) for qid, vals in zip(qids, rows, strict=True))
        out.append(template(q="all", v=mean))
    return "\n".join(out) + "\n"


def to_table(scores: Scores, *, digits: int | None = 4) -> str:
    """A fixed-width table per run, questions then the mean row, columns right-aligned."""
    qids = [str(q) for q in scores.questions] + ["all"]
    qwidth = max(len("question_id"), *map(len, qids))
    blocks = []
    for i, run, rows, mean in _rows(scores):
        # the longest number of a column is its largest or its smallest value
        widths = []
        for k, name in enumerate(scores.metrics):
            col = [*scores.values[i, k].tolist(), mean[k]]
            if digits is None:
                widths.append(max(len(name), *(len(repr(v)) for v in col)))
            else:
                widths.append(max(len(name), len(f"{max(col):.{digits}f}"),
                                  len(f"{min(col):.{digits}f}")))
        row = "  ".join([f"{{:>{qwidth}}}"] + [
            f"{{!r:>{w}}}" if digits is None else f"{{:>{w}.{digits}f}}" for w in widths]).format
        head = "  ".join(["question_id".rjust(qwidth)]
                         + [m.rjust(w) for m, w in zip(scores.metrics, widths, strict=True)])
        lines = [f"run: {run}", head]
        lines.extend(row(qid, *vals) for qid, vals in zip(qids, [*rows, mean], strict=True))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


FORMATS = {"table": to_table, "csv": to_csv, "trec": to_trec}
