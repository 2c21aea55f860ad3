"""The samples file: ``Samples`` written out (trial, subset, question ids, the Tukey HSD's
seed and number of permutations) and read back, so that anyone can recompute a result
exactly (DESIGN.md section 10).  Two forms: the CSV (the page's download, readable
anywhere) and a compressed numpy archive of the question positions (``qa-reliability
--samples-out FILE.npz``: 50 runs x 5,000 questions and B = 1,000 is 246 MB of CSV)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from ..csvio import CsvFormatError, cell, read_csv, restore, write_csv
from .samples import KINDS, Samples

if TYPE_CHECKING:
    import pandas as pd

SAMPLES_FORMAT = "qa-reliability-samples/1"


SAMPLES_HEADER = ("sample", "trial", "subset", "question_id")


def iter_samples_csv(samples: Samples) -> Iterator[str]:
    """The samples file in pieces (one per trial and kind; a big file is never held
    whole): a preamble (format, seed, trials, subset size, Tukey seed and permutations,
    the number of questions), then ``sample,trial,subset,question_id`` rows, one per
    drawn question (a bootstrap sample repeats a question drawn several times), then one
    ``question`` row per question in the matrix's order.  Cells as ``csvio.write_csv``
    writes them."""
    esc = np.asarray([cell(q) for q in samples.questions], dtype=object)
    B, c = samples.trials, samples.subset_size
    preamble = {
        "format": SAMPLES_FORMAT,
        "seed": "" if samples.seed is None else samples.seed,
        "trials": B,
        "subset_size": c,
        "tukey_seed": samples.tukey_seed,
        "tukey_trials": samples.tukey_trials,
        "questions": len(esc),
    }
    yield write_csv(SAMPLES_HEADER, [], preamble)

    def block(prefix: str, positions: np.ndarray) -> str:
        return prefix + ("\n" + prefix).join(esc[positions].tolist()) + "\n"

    for b in range(B):
        yield block(f"stability,{b},0,", samples.stability[b])
    for b in range(B):
        yield block(f"swap,{b},0,", samples.swap[b, 0]) + block(f"swap,{b},1,", samples.swap[b, 1])
    for b in range(B):
        yield block(f"bootstrap,{b},0,", samples.bootstrap[b])
    yield "".join(f"question,{i},0,{e}\n" for i, e in enumerate(esc.tolist()))


def samples_to_csv(samples: Samples) -> str:
    """The whole samples file as one string (see ``iter_samples_csv``)."""
    return "".join(iter_samples_csv(samples))


def samples_from_csv(text: str | bytes) -> Samples:
    """Read a file ``samples_to_csv`` wrote; CsvFormatError (a ValueError) when it is not
    one, or when its samples do not have the sizes its preamble states.  A file without
    ``tukey_trials`` (written before it was kept) gives B Tukey permutations.  The preamble and
    header are read by ``csvio.read_csv``, the rows by pandas' C reader (millions of rows
    for a big collection), then text cells are restored as ``csvio`` reads them."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    text = text.removeprefix("\ufeff")
    head_end, head = _head(text)
    B, c, nq = head["trials"], head["subset_size"], head["questions"]
    questions, cells = _cells(_rows(text[head_end:]), nq)
    stability = _grid(cells["stability"], "stability", (B, c))
    swap = _grid(cells["swap"], "swap", (B, 2, c))
    boot = _grid(cells["bootstrap"], "bootstrap", (B, nq))
    if any(len(np.unique(s)) != c for s in stability) or any(
        len(np.unique(s)) != 2 * c for s in swap.reshape(B, 2 * c)
    ):
        raise CsvFormatError(
            "a subset repeats a question (subsets are drawn without "
            "replacement, the two swap subsets are disjoint)"
        )
    return Samples(
        tuple(questions),
        c,
        stability,
        swap,
        boot,
        head["seed"],
        head["tukey_seed"],
        head["tukey_trials"],
    )


def _head(text: str) -> tuple[int, dict]:
    """(where the rows start, the preamble's integers) of a samples file: its format, its
    header and trials, subset_size, questions, tukey_seed (seed and tukey_trials may be
    empty: None)."""
    pos = 0
    while text.startswith("#", pos) or text.startswith("\n", pos):
        nl = text.find("\n", pos)
        pos = len(text) if nl < 0 else nl + 1
    nl = text.find("\n", pos)
    head_end = len(text) if nl < 0 else nl + 1
    preamble, header, _ = read_csv(text[:head_end])
    if preamble.get("format") != SAMPLES_FORMAT:
        raise CsvFormatError(f"not a samples file (expected '# format={SAMPLES_FORMAT}')")
    if header != list(SAMPLES_HEADER):
        raise CsvFormatError("the header must be sample,trial,subset,question_id")
    try:
        head = {k: int(preamble[k]) for k in ("trials", "subset_size", "questions", "tukey_seed")}
        for k in ("seed", "tukey_trials"):
            head[k] = int(preamble[k]) if preamble.get(k) else None
    except (KeyError, ValueError) as e:
        raise CsvFormatError(
            "the preamble needs trials, subset_size, questions and tukey_seed as integers "
            f"(and tukey_trials, if given) ({e})"
        ) from e
    if head["tukey_trials"] is not None and head["tukey_trials"] < 1:
        raise CsvFormatError("tukey_trials must be at least 1")
    return head_end, head


def _rows(text: str) -> pd.DataFrame:
    """The sample rows, by pandas' C reader (kinds and question ids as categories)."""
    # pandas here, not at the top: ``manage.py reliability`` and the pages that import this
    # module start without it (tests/test_startup_imports.py)
    import pandas as pd

    try:
        return pd.read_csv(
            io.StringIO(text),
            header=None,
            names=list(SAMPLES_HEADER),
            engine="c",
            na_filter=False,
            dtype={
                "sample": "category",
                "trial": np.int64,
                "subset": np.int64,
                "question_id": "category",
            },
            skip_blank_lines=True,
        )
    except (ValueError, pd.errors.ParserError) as e:
        raise CsvFormatError(f"malformed samples rows: {e}") from e


def _cells(frame: pd.DataFrame, nq: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """(the question ids in the matrix's order, per kind of sample its (trial, subset,
    question position) rows).  Categories hold each distinct kind and id once: everything
    else works on their codes."""
    kinds = [str(k) for k in frame["sample"].cat.categories]
    kcodes = frame["sample"].cat.codes.to_numpy()
    unknown = sorted(set(kinds) - {*KINDS, "question"})
    if unknown:
        raise CsvFormatError(f"unknown sample kind(s) {unknown[:3]}")
    code_of = {k: kinds.index(k) if k in kinds else -1 for k in (*KINDS, "question")}
    restored = [restore(str(q)) for q in frame["question_id"].cat.categories]
    qcodes = frame["question_id"].cat.codes.to_numpy()
    trial, subset = frame["trial"].to_numpy(), frame["subset"].to_numpy()
    is_q = kcodes == code_of["question"]
    questions = [restored[k] for k in qcodes[is_q].tolist()]
    if (
        len(questions) != nq
        or len(set(questions)) != nq
        or not np.array_equal(trial[is_q], np.arange(nq))
    ):
        raise CsvFormatError(f"expected {nq} distinct question rows numbered 0..{nq - 1}")
    where = {q: i for i, q in enumerate(questions)}
    positions = np.asarray([where.get(q, -1) for q in restored], dtype=np.int64)[qcodes]
    if (positions[~is_q] < 0).any():
        raise CsvFormatError("a sample names a question id that no question row lists")
    cells = {}
    for k in KINDS:
        rows = kcodes == code_of[k]
        cells[k] = np.stack([trial[rows], subset[rows], positions[rows]], axis=1)
    return questions, cells


def _grid(a: np.ndarray, kind: str, shape: tuple[int, ...]) -> np.ndarray:
    """The question positions of one kind of sample, shaped (trials, [subsets,] questions),
    from its (trial, subset, position) rows; CsvFormatError unless every trial and
    subset has its questions."""
    size = int(np.prod(shape))
    if len(a) != size:
        raise CsvFormatError(f"{kind}: {len(a)} rows, expected {size}")
    a = a[np.lexsort((a[:, 1], a[:, 0]))]  # stable: a subset keeps its file order
    B, per = shape[0], shape[-1]
    nsub = shape[1] if len(shape) == 3 else 1
    want_t = np.repeat(np.arange(B), nsub * per)
    want_s = np.tile(np.repeat(np.arange(nsub), per), B)
    if not (np.array_equal(a[:, 0], want_t) and np.array_equal(a[:, 1], want_s)):
        raise CsvFormatError(
            f"{kind}: trials must be 0..{B - 1}, each with {per} questions per subset"
        )
    return a[:, 2].reshape(shape)


#: the compact samples file: a zip of numpy arrays (``numpy.savez_compressed``)
SAMPLES_NPZ_FORMAT = "qa-reliability-samples-npz/1"
ZIP_MAGIC = b"PK\x03\x04"


def samples_to_npz(samples: Samples, file: BinaryIO) -> None:
    """Write ``samples`` to ``file`` as a compressed numpy archive: the question positions
    of every sample as the smallest unsigned integers that hold them (``stability`` B x c,
    ``swap`` B x 2 x c, ``bootstrap`` B x n), the question ids as UTF-8 JSON (any text,
    control characters included, comes back as it was) and the preamble's integers
    (``seed`` -1 when there is none).  A tenth of the CSV's size or less, and read back
    by ``read_samples`` to the very same samples."""
    dtype = np.min_scalar_type(max(len(samples.questions) - 1, 0))
    np.savez_compressed(
        file,
        format=np.frombuffer(SAMPLES_NPZ_FORMAT.encode(), dtype=np.uint8),
        questions=np.frombuffer(json.dumps(list(samples.questions)).encode(), dtype=np.uint8),
        head=np.array(
            [
                -1 if samples.seed is None else samples.seed,
                samples.subset_size,
                samples.tukey_seed,
                samples.tukey_trials,
            ],
            dtype=np.int64,
        ),
        stability=samples.stability.astype(dtype),
        swap=samples.swap.astype(dtype),
        bootstrap=samples.bootstrap.astype(dtype),
    )


def _npz_arrays(data: bytes) -> dict[str, np.ndarray]:
    """The arrays of a samples archive ``samples_to_npz`` wrote; CsvFormatError when it is
    no such archive."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as e:
        raise CsvFormatError(f"not a samples file: {e}") from e
    if bytes(arrays.get("format", b"")).decode("utf-8", "replace") != SAMPLES_NPZ_FORMAT:
        raise CsvFormatError(f"not a samples file (expected format {SAMPLES_NPZ_FORMAT})")
    return arrays


def _check_fit(
    questions: list,
    c: int,
    stability: np.ndarray,
    swap: np.ndarray,
    boot: np.ndarray,
    tukey_trials: int,
) -> None:
    """CsvFormatError unless a samples archive's arrays fit its questions and subset size
    ``c`` and no subset repeats a question."""
    n, B = len(questions), len(stability)
    if (
        not all(isinstance(q, str) for q in questions)
        or len(set(questions)) != n
        or stability.shape != (B, c)
        or swap.shape != (B, 2, c)
        or boot.shape != (B, n)
        or tukey_trials < 1
        or any(len(a) and a.max() >= n for a in (stability, swap, boot))
    ):
        raise CsvFormatError("malformed samples archive: the arrays do not fit together")
    if any(len(np.unique(s)) != c for s in stability) or any(
        len(np.unique(s)) != 2 * c for s in swap.reshape(B, 2 * c)
    ):
        raise CsvFormatError(
            "a subset repeats a question (subsets are drawn without "
            "replacement, the two swap subsets are disjoint)"
        )


def read_samples(data: bytes) -> Samples:
    """A samples file of either form: the compressed numpy archive ``samples_to_npz``
    writes (a zip) or the CSV ``samples_to_csv`` writes; CsvFormatError otherwise."""
    if not data.startswith(ZIP_MAGIC):
        return samples_from_csv(data)
    arrays = _npz_arrays(data)
    try:
        questions = json.loads(bytes(arrays["questions"]).decode("utf-8"))
        seed, c, tukey_seed, tukey_trials = (int(v) for v in arrays["head"])
        stability, swap, boot = (
            arrays[k].astype(np.int64) for k in ("stability", "swap", "bootstrap")
        )
    except (KeyError, ValueError, TypeError) as e:
        raise CsvFormatError(f"malformed samples archive ({e})") from e
    _check_fit(questions, c, stability, swap, boot, tukey_trials)
    return Samples(
        tuple(questions),
        c,
        stability,
        swap,
        boot,
        None if seed < 0 else seed,
        tukey_seed,
        tukey_trials,
    )
