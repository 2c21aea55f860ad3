"""The scoring engine: pure Python + numpy, no Django (DESIGN.md sections 5-6); pandas is
imported only for the DataFrames some callers ask for (``Scores.per_question``).

Typical use::

    judgments = parse_judgments_csv(data, filename="j.csv")
    run = parse_run(run_bytes, filename="run.tsv")
    scores = evaluate(judgments, [run], ["q_measure", "rr"])
    scores.per_question[run.name]      # DataFrame: question id x metric
    scores.marked.frame()              # why each answer earned what it earned
"""

from importlib import import_module
from typing import TYPE_CHECKING

# Names are imported on first use (PEP 562), so that ``qa-score --help`` and the other
# light users of a submodule do not pay for numpy.
_WHERE = {
    "DEFAULT_LEVELS": "data",
    "Judgments": "data",
    "Ranking": "data",
    "default_gains": "data",
    "BASE_METRICS": "columns",
    "DEFAULT_METRICS": "columns",
    "STATUS_NAMES": "engine",
    "Marked": "engine",
    "Scorer": "engine",
    "Scores": "engine",
    "evaluate": "engine",
    "mark": "engine",
    "parse_metrics": "columns",
    "InputError": "errors",
    "Issue": "errors",
    "GainProfile": "gains",
    "parse_gains": "gains",
    "MATCH_MODES": "normalize",
    "NIL": "normalize",
    "is_nil": "normalize",
    "normalize_answer": "normalize",
}

if TYPE_CHECKING:
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


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BASE_METRICS",
    "DEFAULT_LEVELS",
    "DEFAULT_METRICS",
    "MATCH_MODES",
    "NIL",
    "STATUS_NAMES",
    "GainProfile",
    "InputError",
    "Issue",
    "Judgments",
    "Marked",
    "Ranking",
    "Scorer",
    "Scores",
    "default_gains",
    "evaluate",
    "is_nil",
    "mark",
    "normalize_answer",
    "parse_gains",
    "parse_metrics",
]
