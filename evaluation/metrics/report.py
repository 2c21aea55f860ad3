"""Text renderings of scores: table, CSV (``run,question_id,<metrics>,unjudged``) and
trec_eval -q.

50 runs of 5,000 questions are over a million numbers, so nothing here formats them one
by one: ``_texts`` formats each *distinct* rounded value once and looks the rest up, and
each rendering is one ``str.join`` over a grid of cells.  ``digits=None`` writes every
value in full precision: Python's ``repr``, the shortest text that reads back to the same
double."""

from __future__ import annotations

import numpy as np

from .csvio import cell
from .engine import Scores


def _csv_field(text: str) -> str:
    """``text`` as the product's CSV writer writes a text cell (quoted, formula-safe)."""
    return cell(str(text))


def _texts(values: np.ndarray, digits: int | None) -> np.ndarray:
    """Object array (the shape of ``values``) of ``format(v, f".{digits}f")``, or of
    ``repr(v)`` when ``digits`` is None, for every value."""
    flat = np.ascontiguousarray(values, dtype=float).ravel()
    out = np.empty(len(flat), dtype=object)
    if digits is None:
        out[:] = list(map(float.__repr__, flat.tolist()))
        return out.reshape(values.shape)
    scale = 10**digits
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = flat * scale
        n = np.rint(scaled)
        # rint(v * 10**digits) is v rounded as format() rounds it unless v * 10**digits
        # lies near a half (the product itself is rounded): those, negative values
        # (-0.0 included) and large or odd ones are formatted one by one
        fast = (np.abs(scaled - n) < 0.5 - 1e-6) & (n >= 0) & (n < 1e9) & ~np.signbit(flat)
    k = n[fast].astype(np.int64)
    if len(k):
        table = np.empty(int(k.max()) + 1, dtype=object)
        present = np.zeros(len(table), dtype=bool)
        present[k] = True
        for v in np.flatnonzero(present).tolist():
            whole, frac = divmod(v, scale)
            table[v] = f"{whole}.{frac:0{digits}d}" if digits else str(whole)
        out[fast] = table[k]
    slow = np.flatnonzero(~fast)
    if len(slow):
        spec = f".{digits}f"
        out[slow] = [format(v, spec) for v in flat[slow].tolist()]
    return out.reshape(values.shape)


def _join(columns: list, rows: int) -> str:
    """The cells of a grid read row by row, joined: each column is one string (the same
    in every row) or an array of ``rows`` strings."""
    grid = np.empty((rows, len(columns)), dtype=object)
    for c, column in enumerate(columns):
        grid[:, c] = column
    return "".join(grid.ravel().tolist())


def _values_with_means(scores: Scores) -> np.ndarray:
    """Every value: (run, question + 1, metric), the last row the run's means."""
    nr, nm, nq = scores.values.shape
    table = np.empty((nr, nq + 1, nm))
    table[:, :nq, :] = scores.values.transpose(0, 2, 1)
    table[:, nq, :] = scores.mean_values()
    return table


def _with_means(scores: Scores, digits: int | None) -> np.ndarray:
    """Texts of every value: (run, question + 1, metric), the last row the run's means."""
    return _texts(_values_with_means(scores), digits)


def _digit_table(digits: int) -> np.ndarray:
    """Row k: the ASCII codes of ``k / 10**digits`` written with ``digits`` decimals, for
    k from 0 to 10 * 10**digits - 1."""
    scale = 10**digits
    k = np.arange(10 * scale, dtype=np.int64)
    out = np.empty((len(k), 2 + digits), dtype=np.uint8)
    out[:, 0] = 48 + k // scale
    out[:, 1] = ord(".")
    for j in range(digits):
        out[:, 2 + j] = 48 + (k // 10 ** (digits - 1 - j)) % 10
    return out


def _fixed_digits(values: np.ndarray, digits: int | None) -> np.ndarray | None:
    """The characters of ``format(v, f".{digits}f")`` for every value as a (values, 2 +
    digits) array of ASCII codes, when every text is one digit, a point and ``digits``
    digits (values in [0, 10)); None otherwise.  As in ``_texts``, values away from a half
    are rounded by ``rint``, the others formatted one by one."""
    if digits is None or digits < 1 or digits > 15:
        return None
    flat = np.ascontiguousarray(values, dtype=float).ravel()
    width = 2 + digits
    scale = 10**digits
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = flat * scale
        n = np.rint(scaled)
        fast = (np.abs(scaled - n) < 0.5 - 1e-6) & (n >= 0) & (n < 10 * scale)
        fast &= ~np.signbit(flat)
    k = np.where(fast, n, 0).astype(np.int64)
    if digits <= 5:  # the text of every k at once, then one lookup per value
        out = _digit_table(digits)[k]
    else:
        out = np.empty((len(flat), width), dtype=np.uint8)
        out[:, 0] = 48 + k // scale
        out[:, 1] = ord(".")
        for j in range(digits):
            out[:, 2 + j] = 48 + (k // 10 ** (digits - 1 - j)) % 10
    slow = np.flatnonzero(~fast)
    if len(slow):
        spec = f".{digits}f"
        texts = [format(v, spec) for v in flat[slow].tolist()]
        if any(len(t) != width or not "0" <= t[0] <= "9" for t in texts):
            return None
        out[slow] = np.frombuffer("".join(texts).encode(), dtype=np.uint8).reshape(-1, width)
    return out


def _trec_fixed(scores: Scores, digits: int | None) -> bytes | None:
    """``to_trec``'s text as UTF-8 (``_trec_chunks`` joined), or None."""
    chunks = _trec_chunks(scores, digits)
    return b"".join(chunks) if chunks is not None else None


def _trec_chunks(scores: Scores, digits: int | None) -> list[bytes] | None:
    """``to_trec``'s text made as bytes, in pieces: the lines of one run are the same for every run
    but for the values, which all have one width (``_fixed_digits``), so a template of
    them is made once and the value bytes put in place for each run (UTF-8); None when a
    value needs ``format``."""
    table = _values_with_means(scores)
    chars = _fixed_digits(table, digits)
    if chars is None:
        return None
    nr, rows, nm = table.shape
    width = chars.shape[1]
    qids = [str(q) for q in scores.questions] + ["all"]
    heads = [f"{m}\t{q}\t".encode() for q in qids for m in scores.metrics]
    head_len = np.fromiter(map(len, heads), dtype=np.int64, count=len(heads))
    starts = np.cumsum(head_len + width + 1) - (head_len + width + 1)
    # every head, then its value's slot and a newline
    template = np.frombuffer(("\x00" * width + "\n").encode().join([*heads, b""]), np.uint8)
    template = template.copy()
    slots = (starts + head_len)[:, None] + np.arange(width)
    chars = chars.reshape(nr, rows * nm, width)
    out = []
    for i, run in enumerate(scores.runs):
        if nr > 1:
            out.append(f"runid\tall\t{run}\n".encode())
        template[slots] = chars[i]
        out.append(template.tobytes())
    return out


def to_csv(scores: Scores, *, digits: int | None = 6) -> str:
    """Header ``run,question_id,<metrics>,unjudged``; one row per run and judged question,
    then a row with question_id ``all`` holding the run's means.  ``unjudged`` counts the
    run's answers to the question that no assessor judged (in the ``all`` row: the run's
    total).  Text cells as ``csvio.write_csv`` writes them (its reader reads this file
    back)."""
    texts = _with_means(scores, digits)
    qids = np.asarray([_csv_field(str(q)) + "," for q in scores.questions] + ["all,"], dtype=object)
    unjudged = scores.unjudged()
    out = [",".join(["run", "question_id", *map(_csv_field, scores.metrics), "unjudged"]) + "\n"]
    nm = len(scores.metrics)
    for i, run in enumerate(scores.runs):
        counts = unjudged[i].tolist()
        ends = np.asarray([f",{n}\n" for n in [*counts, sum(counts)]], dtype=object)
        columns = [_csv_field(run) + ",", qids]
        for k in range(nm):
            columns += [texts[i, :, k], "," if k < nm - 1 else ends]
        out.append(_join(columns, len(qids)))
    return "".join(out)


def to_trec(scores: Scores, *, digits: int | None = 4) -> str:
    """``metric<TAB>question_id<TAB>value`` lines per question then ``all``, as trec_eval
    -q prints them; with several runs each block starts with ``runid<TAB>all<TAB>name``."""
    fixed = _trec_fixed(scores, digits)
    if fixed is not None:
        return fixed.decode()
    texts = _with_means(scores, digits)
    qids = [str(q) for q in scores.questions] + ["all"]
    # the start of every line, shared by all runs: (question, metric)
    heads = [np.asarray([f"{m}\t{q}\t" for q in qids], dtype=object) for m in scores.metrics]
    out = []
    many = len(scores.runs) > 1
    for i, run in enumerate(scores.runs):
        if many:
            out.append(f"runid\tall\t{run}\n")
        columns = []
        for k in range(len(scores.metrics)):
            columns += [heads[k], texts[i, :, k], "\n"]
        out.append(_join(columns, len(qids)))
    return "".join(out)


def to_table(scores: Scores, *, digits: int | None = 4) -> str:
    """A fixed-width table per run, questions then the mean row, columns right-aligned."""
    texts = _with_means(scores, digits)
    qids = [str(q) for q in scores.questions] + ["all"]
    qwidth = max(len("question_id"), *map(len, qids))
    qcol = np.asarray([q.rjust(qwidth) for q in qids], dtype=object)
    blocks = []
    for i, run in enumerate(scores.runs):
        columns: list = [qcol]
        heads = ["question_id".rjust(qwidth)]
        for k, name in enumerate(scores.metrics):
            col = texts[i, :, k]
            distinct, inverse = np.unique(col.astype(str), return_inverse=True)
            width = max(len(name), *map(len, distinct.tolist()))
            padded = np.asarray([t.rjust(width) for t in distinct.tolist()], dtype=object)
            columns += ["  ", padded[inverse.ravel()]]
            heads.append(name.rjust(width))
        columns.append("\n")
        blocks.append(f"run: {run}\n" + "  ".join(heads) + "\n" + _join(columns, len(qids)))
    return "\n".join(blocks)


FORMATS = {"table": to_table, "csv": to_csv, "trec": to_trec}


def render_utf8(fmt: str, scores: Scores, **options) -> list[bytes]:
    """``FORMATS[fmt](scores, **options)`` encoded as UTF-8, in pieces to write one after
    the other (the trec text of one-width values is made as bytes, never as a str)."""
    if fmt == "trec":
        chunks = _trec_chunks(scores, options.get("digits", 4))
        if chunks is not None:
            return chunks
    return [FORMATS[fmt](scores, **options).encode()]
