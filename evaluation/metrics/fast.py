"""Reading large, regular files through the optional C tokenizer (``_fastparse``).

``read_inputs`` returns the same Judgments and Rankings as the Python parsers, plus
integer ids into shared string tables so that marking compares integers instead of
hashing strings again.  It returns None whenever the accelerator is missing or any file is
not in the strict form it handles; callers then use the Python parsers, which accept the
rest and explain errors with line numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .data import Interned, Judgments, Ranking
from .parsers import Data, _default_name, detect_run_format, qrels_judgments, trec_order

try:
    from . import _fastparse
except ImportError:  # no C compiler when installed: the pandas reader does the work
    _fastparse = None

QRELS, TREC_RUN, QA_RUN = 0, 1, 2


def available() -> bool:
    return _fastparse is not None


def _as_bytes(data: Data) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def read_inputs(*, qrels: Data | None, runs: Sequence[tuple[str, Data]],
                judgments: Judgments | None = None
                ) -> tuple[Judgments, list[Ranking]] | None:
    """Judgments (from ``qrels``, or the given ``judgments``) and one Ranking per
    ``(filename, data)`` in ``runs``; None if the fast path cannot read them all."""
    if _fastparse is None or (qrels is None) == (judgments is None):
        return None
    files, kinds = [], []
    if qrels is not None:
        files.append(_as_bytes(qrels))
        kinds.append(QRELS)
    for filename, data in runs:
        raw = _as_bytes(data)
        fmt = detect_run_format(raw[:65536], filename=filename)
        files.append(raw)
        kinds.append(TREC_RUN if fmt == "trec" else QA_RUN)
    parsed = _fastparse.parse(files, kinds)
    if parsed is None or any(r is None for r in parsed[2]):
        return None
    qid_strings, item_strings, results = parsed
    interned = Interned(np.asarray(qid_strings, dtype=object),
                        np.asarray(item_strings, dtype=object))
    cols = [(np.frombuffer(q, dtype=np.int32).astype(np.int64),
             np.frombuffer(i, dtype=np.int32).astype(np.int64),
             np.frombuffer(v, dtype=np.float64), np.frombuffer(rk, dtype=np.int64), tag)
            for q, i, v, rk, tag in results]
    if qrels is not None:
        q_ids, d_ids, grade, _, _ = cols.pop(0)
        if _duplicated(q_ids, d_ids):
            return None
        codes, uniques = pd.factorize(q_ids)  # questions in order of first appearance
        judgments = qrels_judgments(
            codes.astype(np.int64), interned.qids[uniques], interned.items[d_ids],
            grade.astype(np.int64), key_ids=d_ids, interned=interned)
    rankings = []
    for (filename, _), kind, (q_ids, t_ids, value, rank, tag) in zip(runs, kinds[-len(runs):],
                                                                      cols, strict=True):
        if kind == TREC_RUN:
            if _duplicated(q_ids, t_ids):
                return None
            order = trec_order(q_ids, value, interned.items[t_ids])
            name = tag or _default_name(filename)
        else:
            if _duplicated(q_ids, rank):
                return None
            order = np.lexsort((rank, q_ids))
            name = _default_name(filename)
        q_ids, t_ids, value = q_ids[order], t_ids[order], value[order]
        rankings.append(Ranking(name, interned.qids[q_ids], interned.items[t_ids], value,
                                qid_ids=q_ids, text_ids=t_ids, interned=interned))
    return judgments, rankings


def _duplicated(a: np.ndarray, b: np.ndarray) -> bool:
    comb = a * (int(b.max()) + 1 if len(b) else 1) + b
    return bool(pd.Series(comb).duplicated().any())
