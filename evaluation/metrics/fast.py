"""Reading large, regular files through the optional C tokenizer (``_fastparse``).

``read_inputs`` returns the same Judgments and Rankings as the Python parsers, plus
integer ids into shared string tables so that marking compares integers instead of
hashing strings again.  It returns None whenever the accelerator is missing (not built, or
switched off by ``QASYNSET_NO_ACCEL``: see ``accel``) or any file is not in the strict form
it handles; callers then use the Python parsers, which accept the rest and explain errors
with line numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .accel import TREC_RUN, Reading, start_reading
from .accel import fastparse as _fastparse
from .arrays import factorize
from .data import Interned, Judgments, Ranking, StringTable
from .judgment_parsers import qrels_judgments
from .parsers import Data, _default_name


def available() -> bool:
    return _fastparse is not None


def read_inputs(
    *,
    qrels: Data | None,
    runs: Sequence[tuple[str, Data]],
    judgments: Judgments | None = None,
    reading: Reading | None = None,
) -> tuple[Judgments, list[Ranking]] | None:
    """Judgments (from ``qrels``, or the given ``judgments``) and one Ranking per
    ``(filename, data)`` in ``runs``; None if the fast path cannot read them all.
    ``reading`` is the C reader already started on the same files (``start_reading``)."""
    if _fastparse is None or (qrels is None) == (judgments is None):
        return None
    if reading is None:
        reading = start_reading(qrels, runs)
    kinds = reading.kinds
    parsed = reading.result()
    if parsed is None or any(r is None for r in parsed[4]):
        return None
    qid_strings, blob, offsets, item_q, results = parsed
    interned = Interned(
        np.asarray(qid_strings, dtype=object),
        StringTable(blob, np.frombuffer(offsets, dtype=np.int64), _fastparse.take),
        np.frombuffer(item_q, dtype=np.int32),
    )
    cols = [
        (
            np.frombuffer(q, dtype=np.int32),
            np.frombuffer(i, dtype=np.int32),
            np.frombuffer(v, dtype=np.float64),
            tag,
        )
        for q, i, v, tag in results
    ]
    if qrels is not None:
        q_ids, d_ids, grade, _ = cols.pop(0)
        codes, uniques = factorize(q_ids)  # questions in order of first appearance
        judgments = qrels_judgments(
            codes.astype(np.int64),
            interned.qids[uniques],
            lambda: interned.items.take(d_ids),
            grade.astype(np.int64),
            key_ids=d_ids,
            interned=interned,
        )
    rankings = []
    for (filename, _), kind, (q_ids, t_ids, value, tag) in zip(
        runs, kinds[-len(runs) :], cols, strict=True
    ):
        # rows come grouped by question and ordered as the Python parsers order them
        name = (tag or _default_name(filename)) if kind == TREC_RUN else _default_name(filename)
        rankings.append(
            Ranking(name, score=value, qid_ids=q_ids, text_ids=t_ids, interned=interned)
        )
    return judgments, rankings
