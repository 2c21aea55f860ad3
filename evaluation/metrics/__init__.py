"""The scoring engine: pure Python + numpy/pandas, no Django (DESIGN.md sections 5-6).

Typical use::

    judgments = parse_judgments_csv(data, filename="j.csv")
    run = parse_run(run_bytes, filename="run.tsv")
    scores = evaluate(judgments, [run], ["q_measure", "rr"])
    scores.per_question[run.name]      # DataFrame: question id x metric
    scores.marked.frame()              # why each answer earned what it earned
"""

from .data import DEFAULT_LEVELS, Judgments, Ranking, default_gains
from .engine import (
    BASE_METRICS,
    DEFAULT_METRICS,
    STATUS_NAMES,
    Marked,
    Scorer,
    Scores,
    evaluate,
    mark,
    parse_metrics,
)
from .errors import InputError, Issue
from .gains import GainProfile, parse_gains
from .normalize import MATCH_MODES, NIL, is_nil, normalize_answer

__all__ = [
    "BASE_METRICS", "DEFAULT_LEVELS", "DEFAULT_METRICS", "MATCH_MODES", "NIL", "STATUS_NAMES",
    "GainProfile", "InputError", "Issue", "Judgments", "Marked", "Ranking", "Scorer", "Scores",
    "default_gains", "evaluate", "is_nil", "mark", "normalize_answer", "parse_gains",
    "parse_metrics",
]
