"""Reliability of a collection and its metrics (DESIGN.md section 10).

From ``papers/graded-relevance-metric-reliability.txt`` (sections 3-4, Figures 1-2) and
``q-measure-reliability-ntcir.txt``, for a (runs x questions) matrix ``X`` of one metric's
per-question scores:

- **stability** (Buckley and Voorhees, the paper's Figure 1): for every run pair and each
  of B subsets Q_i of c questions drawn without replacement, GT/EQ counts with fuzziness
  f; the minority rate and the proportion of ties, over f;
- **swap rates** (Voorhees and Buckley in the paper's stricter form, Figure 2): B pairs of
  disjoint subsets, 21 bins of width 0.01 of |d(Q_i)| (the difference of the pair's means
  over Q_i), a swap when d(Q_i) d(Q'_i) <= 0: a zero difference counts as a swap, and so
  do two zero differences (both subsets tie the runs).  The 5% threshold is the lower
  edge of the lowest bin from which every non-empty bin has a swap rate <= 5%: stricter
  than the first bin at or below 5%, a later bin above 5% moves it past that bin (NaN when
  the last non-empty bin is above 5%).  ``share`` is the share of all comparisons with
  |d(Q_i)| at or above the threshold, ``relative`` the threshold over the mean, over
  every pair and trial, of max(M(x,Q_i), M(y,Q_i)) (the better run's mean over Q_i: the
  threshold relative to the metric's typical value, the paper's Tables 2-3);
- **discriminative power** by the paired bootstrap (Sakai 2006): the achieved
  significance level (ASL) per run pair, the ASL curve, the share of pairs with ASL < 0.05;
- Kendall's tau between rankings, 95% confidence intervals of every run's mean (t and
  bootstrap percentile), paired t-tests with Holm's correction, the randomised Tukey HSD.

Sampling is separate from counting: ``draw_samples`` makes every subset and bootstrap
sample from a seeded generator; ``samples_to_csv``/``samples_from_csv`` write and read
them (trial, subset, question ids, the Tukey HSD's seed and number of permutations), and
every figure is a function of the matrix, the run names and the samples only, so figures
recomputed from a read-back samples file are identical.  The Tukey permutations come from
``tukey_generator(seed)`` (a stream of the seed's own, the same for the ranking page) and
permute the runs in the order of their names; every figure is computed on the runs
sorted by name (``run_order``) and put back in the order given, so none depends on the
order of the runs.

Everything is vectorised over run pairs and trials: subset means are one matrix product
of the scores with the (trials x questions) subset indicator, bootstrap sums one product
of the pairs' differences with the (trials x questions) resampling counts.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import stats

from .columns import DEFAULT_BETA, DEFAULT_RBP_P
from .csvio import CsvFormatError, cell, read_csv, restore, write_csv
from .data import Judgments, Ranking
from .engine import evaluate
from .gains import GainProfile

#: fuzziness values of the stability curves (the paper varies f from 0.01 to 0.20)
FUZZINESS = tuple(round(0.01 * i, 2) for i in range(21))
BIN_WIDTH = 0.01
NBINS = 21  # [0, 0.01), [0.01, 0.02), ..., [0.20, inf)
SWAP_LEVEL = 0.05
ALPHA = 0.05
#: differences of means at most this far from zero are zero (rounding of sums of floats)
TOL = 1e-12
SAMPLES_FORMAT = "qa-reliability-samples/1"
KINDS = ("stability", "swap", "bootstrap")


# -- samples ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Samples:
    """Question positions (into ``questions``) drawn for every trial.

    ``stability[b]``: the c questions of subset Q_b (without replacement);
    ``swap[b, 0]`` and ``swap[b, 1]``: the disjoint subsets Q_b and Q'_b;
    ``bootstrap[b]``: n questions drawn with replacement;
    ``tukey_seed`` seeds the permutations of the randomised Tukey HSD (through
    ``tukey_generator``): drawn samples have the sampling seed itself, so the ranking
    page's Tukey HSD for a seed is the reliability page's; ``tukey_trials`` is the
    number of its permutations (B unless given).
    """

    questions: tuple[str, ...]
    subset_size: int
    stability: np.ndarray
    swap: np.ndarray
    bootstrap: np.ndarray
    seed: int | None = None
    tukey_seed: int = 0
    tukey_trials: int | None = None

    def __post_init__(self) -> None:
        if self.tukey_trials is None:
            object.__setattr__(self, "tukey_trials", len(self.stability))
        elif self.tukey_trials < 1:
            raise ValueError("the number of Tukey permutations must be at least 1")

    @property
    def trials(self) -> int:
        return len(self.stability)

    def __getstate__(self) -> dict:
        # the count matrices are rebuilt on use: a pickled (cached) copy stays small
        state = dict(self.__dict__)
        state.pop("indicators", None)
        return state

    def __setstate__(self, state: dict) -> None:
        state.setdefault("tukey_trials", len(state["stability"]))  # pickled before it was
        self.__dict__.update(state)

    @cached_property
    def indicators(self) -> dict[str, np.ndarray]:
        """(trials x questions) count matrices of the stability subsets, the two swap
        subsets and the bootstrap samples, made once for every metric."""
        n = len(self.questions)
        return {
            "stability": _indicator(self.stability, n),
            "swap0": _indicator(self.swap[:, 0], n),
            "swap1": _indicator(self.swap[:, 1], n),
            "bootstrap": _indicator(self.bootstrap, n),
        }

    def column_order(self, questions: Sequence[str]) -> np.ndarray:
        """Indices that put the columns of a matrix over ``questions`` in the order of the
        samples (``X[:, order]``), so that every figure, the Tukey permutations included,
        is the same whatever the matrix's order; ValueError when the ids differ."""
        questions = tuple(str(q) for q in questions)
        if questions == self.questions:
            return np.arange(len(questions))
        if sorted(questions) != sorted(self.questions):
            extra = sorted(set(self.questions) - set(questions))[:5]
            missing = sorted(set(questions) - set(self.questions))[:5]
            raise ValueError(
                "the samples were drawn for other questions "
                f"(only in the samples: {extra}; only in the scores: {missing})"
            )
        where = {q: i for i, q in enumerate(questions)}
        return np.array([where[q] for q in self.questions], dtype=np.int64)


def default_subset_size(nq: int) -> int:
    """c = half the questions (so two disjoint subsets fit), at least 1."""
    return max(1, nq // 2)


def draw_samples(
    questions: Sequence[str],
    *,
    trials: int = 1000,
    subset_size: int | None = None,
    seed: int = 0,
    tukey_trials: int | None = None,
) -> Samples:
    """B subsets of size c, B pairs of disjoint subsets of size c and B bootstrap samples
    of the questions, from ``numpy.random.default_rng(seed)``.  c defaults to half the
    questions; it must be at most half of them (the swap test needs disjoint subsets).
    The randomised Tukey HSD is to make ``tukey_trials`` permutations (default B) from
    ``tukey_generator(seed)``."""
    questions = tuple(str(q) for q in questions)
    n = len(questions)
    if len(set(questions)) != n:
        raise ValueError("question ids must be distinct")
    if n < 2:
        raise ValueError("reliability needs at least 2 questions")
    if trials < 1:
        raise ValueError("the number of trials must be at least 1")
    if tukey_trials is not None and tukey_trials < 1:
        raise ValueError("the number of Tukey permutations must be at least 1")
    c = default_subset_size(n) if subset_size is None else int(subset_size)
    if not 1 <= c <= n // 2:
        raise ValueError(
            f"the subset size must be from 1 to {n // 2} (half of the {n} "
            "questions: the swap test draws two disjoint subsets)"
        )
    rng = np.random.default_rng(seed)
    # the questions of the c smallest of n random keys are a uniform random subset (the
    # next c the disjoint second subset); masks give them in question order
    keys = rng.random((trials, n))
    mask = keys <= np.partition(keys, c - 1, axis=1)[:, c - 1 : c]
    stability = np.nonzero(mask)[1].reshape(trials, c)
    keys = rng.random((trials, n))
    part = np.partition(keys, [c - 1, 2 * c - 1], axis=1)
    first = keys <= part[:, c - 1 : c]
    second = (keys <= part[:, 2 * c - 1 : 2 * c]) & ~first
    swap = np.stack(
        [np.nonzero(first)[1].reshape(trials, c), np.nonzero(second)[1].reshape(trials, c)], axis=1
    )
    boot = rng.integers(0, n, size=(trials, n))
    # the Tukey HSD draws from a stream of its own of the same seed (tukey_generator)
    samples = Samples(questions, c, stability, swap, boot, seed, seed, tukey_trials)
    # the count matrices are at hand: keep them rather than rebuild them from positions
    samples.__dict__["indicators"] = {
        "stability": mask.astype(float),
        "swap0": first.astype(float),
        "swap1": second.astype(float),
        "bootstrap": _indicator(boot, n),
    }
    return samples


def draw_bootstrap(n: int, *, trials: int = 1000, seed: int = 0, chunk: int = 128) -> np.ndarray:
    """The (trials x n) bootstrap samples ``draw_samples`` draws for n questions, the same
    trials and seed, without its subsets: the random keys it draws first for them (two
    (trials x n) matrices) are drawn and dropped ``chunk`` rows at a time, which leaves
    the generator where ``draw_samples`` leaves it, in a fraction of the memory (a page's
    intervals need only the bootstrap; ``test_draw_bootstrap_is_draw_samples_bootstrap``
    keeps the two in step)."""
    if n < 2:
        raise ValueError("reliability needs at least 2 questions")
    if trials < 1:
        raise ValueError("the number of trials must be at least 1")
    rng = np.random.default_rng(seed)
    for _ in range(2):  # the stability keys, then the swap keys
        for s in _chunks(trials, chunk):
            rng.random((s.stop - s.start, n))
    return rng.integers(0, n, size=(trials, n))


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
        B, c = int(preamble["trials"]), int(preamble["subset_size"])
        nq, tukey_seed = int(preamble["questions"]), int(preamble["tukey_seed"])
        seed = int(preamble["seed"]) if preamble.get("seed") else None
        tukey_trials = int(preamble["tukey_trials"]) if preamble.get("tukey_trials") else None
    except (KeyError, ValueError) as e:
        raise CsvFormatError(
            "the preamble needs trials, subset_size, questions and tukey_seed as integers "
            f"(and tukey_trials, if given) ({e})"
        ) from e
    if tukey_trials is not None and tukey_trials < 1:
        raise CsvFormatError("tukey_trials must be at least 1")
    try:
        frame = pd.read_csv(
            io.StringIO(text[head_end:]),
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
    # categories hold each distinct kind and id once: everything else works on codes
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

    def grid(kind: str, shape: tuple[int, ...]) -> np.ndarray:
        a = cells[kind]
        size = int(np.prod(shape))
        if len(a) != size:
            raise CsvFormatError(f"{kind}: {len(a)} rows, expected {size}")
        a = a[np.lexsort((a[:, 1], a[:, 0]))]  # stable: a subset keeps its file order
        per = shape[-1]
        nsub = shape[1] if len(shape) == 3 else 1
        want_t = np.repeat(np.arange(B), nsub * per)
        want_s = np.tile(np.repeat(np.arange(nsub), per), B)
        if not (np.array_equal(a[:, 0], want_t) and np.array_equal(a[:, 1], want_s)):
            raise CsvFormatError(
                f"{kind}: trials must be 0..{B - 1}, each with {per} questions per subset"
            )
        return a[:, 2].reshape(shape)

    stability = grid("stability", (B, c))
    swap = grid("swap", (B, 2, c))
    boot = grid("bootstrap", (B, nq))
    if any(len(np.unique(s)) != c for s in stability) or any(
        len(np.unique(s)) != 2 * c for s in swap.reshape(B, 2 * c)
    ):
        raise CsvFormatError(
            "a subset repeats a question (subsets are drawn without "
            "replacement, the two swap subsets are disjoint)"
        )
    return Samples(tuple(questions), c, stability, swap, boot, seed, tukey_seed, tukey_trials)


# -- helpers ------------------------------------------------------------------------------
def run_pairs(nruns: int) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) indices of every run pair x < y, in row-major order."""
    return np.triu_indices(nruns, 1)


def run_order(runs: Sequence[str]) -> np.ndarray:
    """The canonical order of the runs: the indices that sort their names (``X[order]``
    has the rows by name).  Every figure is computed in this order, so none depends on
    the order the runs were given in (the randomised Tukey HSD's permutations would);
    ValueError when two runs share a name."""
    names = [str(r) for r in runs]
    if len(set(names)) != len(names):
        raise ValueError("run names must be distinct")
    return np.array(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)


def _pair_map(order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each run pair of the given order (``run_pairs``), the index of the same two
    runs among the pairs of the canonical order ``X[order]``, and whether the pair is
    turned round there (its first run comes second by name)."""
    m = len(order)
    pos = np.empty(m, dtype=np.int64)
    pos[order] = np.arange(m)  # pos[i]: the canonical row of run i
    index = np.zeros((m, m), dtype=np.int64)
    cx, cy = run_pairs(m)
    index[cx, cy] = np.arange(len(cx))
    x, y = run_pairs(m)
    a, b = pos[x], pos[y]
    return index[np.minimum(a, b), np.maximum(a, b)], a > b


def _indicator(subsets: np.ndarray, n: int) -> np.ndarray:
    """(trials x n) matrix counting how often each question is in each trial's sample."""
    B = len(subsets)
    flat = (np.arange(B)[:, None] * n + subsets.reshape(B, -1)).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(float)


def _zero_small(d: np.ndarray) -> np.ndarray:
    return np.where(np.abs(d) <= TOL, 0.0, d)


def _subset_means(
    X: np.ndarray, subsets: np.ndarray, indicator: np.ndarray | None = None
) -> np.ndarray:
    """(runs x trials) means of each run over each trial's questions."""
    X = np.asarray(X, dtype=float)
    if indicator is None:
        indicator = _indicator(subsets, X.shape[1])
    return X @ indicator.T / subsets.shape[-1]


# -- stability (Figure 1) -----------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Stability:
    """Counts per run pair (rows, ``run_pairs`` order) and fuzziness (columns): ``gt_xy``,
    ``gt_yx``, ``eq``; and per fuzziness the minority rate and the proportion of ties."""

    fuzziness: np.ndarray
    gt_xy: np.ndarray
    gt_yx: np.ndarray
    eq: np.ndarray

    @property
    def minority_rate(self) -> np.ndarray:
        """sum over pairs of min(GT(x,y), GT(y,x)) / (pairs x B), per f (paper eq. 8)."""
        total = (self.gt_xy + self.gt_yx + self.eq).sum(axis=0)
        return _ratio(np.minimum(self.gt_xy, self.gt_yx).sum(axis=0), total)

    @property
    def ties(self) -> np.ndarray:
        """sum over pairs of EQ(x,y) / (pairs x B), per f (paper eq. 9)."""
        return _ratio(self.eq.sum(axis=0), (self.gt_xy + self.gt_yx + self.eq).sum(axis=0))

    def ties_at_minority(self, level: float = SWAP_LEVEL) -> float:
        """The proportion of ties at the smallest f whose minority rate is at most
        ``level`` (the paper's Table 1 slices the curves at 5%); NaN if none is."""
        ok = np.flatnonzero(self.minority_rate <= level)
        return float(self.ties[ok[0]]) if len(ok) else float("nan")


def _ratio(num, den):
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    return np.divide(num, den, out=np.full(np.broadcast(num, den).shape, np.nan), where=den > 0)


def stability(
    X: np.ndarray,
    subsets: np.ndarray,
    fuzziness: Sequence[float] = FUZZINESS,
    *,
    indicator: np.ndarray | None = None,
) -> Stability:
    """Buckley-Voorhees counts (paper Figure 1): for each pair x < y and subset Q_b,
    margin = f max(M(x,Q_b), M(y,Q_b)); EQ if |M(x,Q_b) - M(y,Q_b)| < margin or the two
    means are equal (both within TOL: a difference that equals the margin but for
    floating-point rounding is at the margin, not below it), else GT(x,y) if
    M(x,Q_b) > M(y,Q_b), else GT(y,x)."""
    means = _subset_means(X, subsets, indicator)
    x, y = run_pairs(len(means))
    mx, my = means[x], means[y]
    d = _zero_small(mx - my)
    absd, margin = np.abs(d), np.maximum(mx, my)
    zero, ahead = d == 0, d > 0
    f = np.asarray(fuzziness, dtype=float)
    eq = np.empty((len(x), len(f)), dtype=np.int64)
    gt_xy = np.empty_like(eq)
    for k, fk in enumerate(f):
        # strictly below the margin: a difference within TOL of it is at the margin (0.5 -
        # 0.4 is 0.09999999999999998 in floating point, 0.2 x 0.5 is 0.1: no tie)
        tie = (absd < fk * margin - TOL) | zero
        eq[:, k] = tie.sum(axis=1)
        gt_xy[:, k] = (ahead & ~tie).sum(axis=1)
    gt_yx = means.shape[1] - eq - gt_xy
    return Stability(f, gt_xy, gt_yx, eq)


# -- swap rates (Figure 2) ----------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Swaps:
    """Per difference bin: ``counter`` (comparisons whose |d(Q_b)| fall in it), ``swaps``
    and ``rate`` (NaN for an empty bin); ``threshold`` is the smallest difference (a bin's
    lower edge) from which every non-empty bin's swap rate is at most 5% (NaN: none),
    ``share`` the share of comparisons with |d(Q_b)| >= threshold and ``relative`` the
    threshold over the mean of max(M(x,Q_b), M(y,Q_b)) (the paper's Tables 2-3)."""

    counter: np.ndarray
    swaps: np.ndarray
    threshold: float
    share: float
    relative: float

    @property
    def rate(self) -> np.ndarray:
        return _ratio(self.swaps, self.counter)

    @property
    def edges(self) -> np.ndarray:
        return np.round(np.arange(NBINS) * BIN_WIDTH, 2)


def difference_bin(d: np.ndarray) -> np.ndarray:
    """BIN(d): 0 for 0 <= d < 0.01, ..., 20 for d >= 0.20 (a tiny slack so that 0.03 is in
    bin 3 although 0.03/0.01 < 3 in floating point)."""
    return np.minimum(np.floor(np.abs(d) / BIN_WIDTH + 1e-9), NBINS - 1).astype(np.int64)


def swap_rates(
    X: np.ndarray,
    swap_subsets: np.ndarray,
    *,
    level: float = SWAP_LEVEL,
    indicators: tuple[np.ndarray, np.ndarray] | None = None,
) -> Swaps:
    """Voorhees-Buckley swap rates in the paper's stricter form: for each pair and trial,
    counter(BIN(|d(Q_b)|))++ and, when d(Q_b) d(Q'_b) <= 0, swap_counter(same bin)++."""
    X = np.asarray(X, dtype=float)
    i0, i1 = indicators or (None, None)
    first = _subset_means(X, swap_subsets[:, 0], i0)
    second = _subset_means(X, swap_subsets[:, 1], i1)
    x, y = run_pairs(len(X))
    d1 = _zero_small(first[x] - first[y])
    d2 = _zero_small(second[x] - second[y])
    bins = difference_bin(d1).ravel()
    counter = np.bincount(bins, minlength=NBINS)
    swapped = (d1 * d2 <= 0).ravel()
    swaps = np.bincount(bins[swapped], minlength=NBINS)
    rate = _ratio(swaps, counter)
    bad = np.flatnonzero((counter > 0) & (rate > level))
    start = bad[-1] + 1 if len(bad) else 0
    nonempty = np.flatnonzero(counter[start:] > 0)
    if not len(nonempty) or counter.sum() == 0:
        return Swaps(counter, swaps, float("nan"), 0.0, float("nan"))
    b = start + int(nonempty[0])
    threshold = round(b * BIN_WIDTH, 2)
    share = float(counter[b:].sum() / counter.sum())
    scale = float(np.maximum(first[x], first[y]).mean()) if len(x) else 0.0
    relative = threshold / scale if scale > 0 else float("nan")
    return Swaps(counter, swaps, threshold, share, relative)


# -- paired bootstrap (Sakai 2006) --------------------------------------------------------
def t_statistic(mean, sd, n: int):
    """mean / (sd / sqrt(n)); 0 when both are zero, +-inf when only sd is."""
    mean = np.asarray(mean, dtype=float)
    se = np.asarray(sd, dtype=float) / np.sqrt(n)
    small = se <= TOL
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(
            small,
            np.where(np.abs(mean) <= TOL, 0.0, np.sign(mean) * np.inf),
            mean / np.where(small, 1.0, se),
        )
    return t


@dataclass(frozen=True, eq=False)
class Discrimination:
    """ASL per run pair (``run_pairs`` order), the share of pairs with ASL < alpha and
    the ASL curve (ASLs sorted ascending, the paper's Figure of ASL by run pair)."""

    asl: np.ndarray
    alpha: float = ALPHA

    @property
    def curve(self) -> np.ndarray:
        return np.sort(self.asl)

    @property
    def share_significant(self) -> float:
        return float(np.mean(self.asl < self.alpha)) if len(self.asl) else float("nan")


def _chunks(n: int, size: int):
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def bootstrap_asl(
    X: np.ndarray,
    boot: np.ndarray,
    *,
    alpha: float = ALPHA,
    chunk: int = 512,
    indicator: np.ndarray | None = None,
) -> Discrimination:
    """Paired bootstrap test per run pair (Sakai 2006, Figure 1): z = per-question
    differences, w = z - mean(z); ASL = #{b : |t(w*_b)| >= |t(z)|} / B with w*_b the
    bootstrap sample b of w (the same question draws for every pair); a mean, observed
    or bootstrap, within TOL of zero is zero (so a zero difference has ASL 1)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    # resampling counts, trials x questions; rows sum to n
    K = _indicator(boot, n) if indicator is None else indicator
    R = X @ K.T  # resampled sums of each run: the pairs' sums are differences of these
    x, y = run_pairs(len(X))
    asl = np.empty(len(x))
    for s in _chunks(len(x), chunk):
        z = X[x[s]] - X[y[s]]
        zbar = z.mean(axis=1, keepdims=True)
        # a mean within TOL of zero is zero, as the bootstrap means below: else rounding
        # (its sign and size depend on the order of the questions) decides the ASL
        t_obs = t_statistic(_zero_small(zbar[:, 0]), z.std(axis=1, ddof=1), n)
        w = z - zbar
        w[np.abs(w) <= TOL] = 0.0
        total = R[x[s]] - R[y[s]] - zbar * n  # sum of w over each bootstrap sample
        mean = _zero_small(total / n)
        var = np.maximum((w * w) @ K.T - n * mean * mean, 0.0) / (n - 1)
        t = t_statistic(mean, np.sqrt(var), n)
        asl[s] = (np.abs(t) >= np.abs(t_obs)[:, None] * (1 - 1e-9)).mean(axis=1)
    return Discrimination(asl, alpha)


# -- confidence intervals and multiple comparisons ----------------------------------------
@dataclass(frozen=True, eq=False)
class Intervals:
    """Per run: ``mean``, the t interval (``t_low``, ``t_high``) and the bootstrap
    percentile interval (``boot_low``, ``boot_high``) at ``level``."""

    mean: np.ndarray
    t_low: np.ndarray
    t_high: np.ndarray
    boot_low: np.ndarray
    boot_high: np.ndarray
    level: float = 0.95


def t_intervals(X: np.ndarray, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per run: mean +- t_{(1+level)/2, n-1} s/sqrt(n) over the questions."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    mean = X.mean(axis=1)
    half = stats.t.ppf((1 + level) / 2, n - 1) * X.std(axis=1, ddof=1) / np.sqrt(n)
    return mean - half, mean + half


def bootstrap_intervals(
    X: np.ndarray, boot: np.ndarray, *, level: float = 0.95, indicator: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per run: the percentiles (1-level)/2 and (1+level)/2 of the run's means
    over the bootstrap samples ``boot`` (trials x n question positions)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    bmeans = X @ (_indicator(boot, n) if indicator is None else indicator).T / n
    lo, hi = np.quantile(bmeans, [(1 - level) / 2, (1 + level) / 2], axis=1)
    return lo, hi


def mean_intervals(
    X: np.ndarray, boot: np.ndarray, *, level: float = 0.95, indicator: np.ndarray | None = None
) -> Intervals:
    """95% confidence intervals of each run's mean: the t interval (``t_intervals``) and
    the bootstrap percentile interval (``bootstrap_intervals``)."""
    X = np.asarray(X, dtype=float)
    t_low, t_high = t_intervals(X, level=level)
    lo, hi = bootstrap_intervals(X, boot, level=level, indicator=indicator)
    return Intervals(X.mean(axis=1), t_low, t_high, lo, hi, level)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: p_(i) (m - i + 1), made monotone, capped at 1."""
    p = np.asarray(p, dtype=float)
    m = len(p)
    if not m:
        return p.copy()
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adj
    return out


def paired_t(X: np.ndarray) -> np.ndarray:
    """Two-sided paired t-test p-value per run pair (1 when the runs' scores are equal on
    every question)."""
    X = np.asarray(X, dtype=float)
    x, y = run_pairs(len(X))
    z = _zero_small(X[x] - X[y])
    n = X.shape[1]
    t = t_statistic(z.mean(axis=1), z.std(axis=1, ddof=1), n)
    return np.where(np.isinf(t), 0.0, 2 * stats.t.sf(np.abs(t), n - 1))


def tukey_generator(seed: int) -> np.random.Generator:
    """The generator of the randomised Tukey HSD's permutations for ``seed``, the one of
    every page and command (the ranking page's seed, the samples' ``tukey_seed``): the
    first child of the seed's ``numpy.random.SeedSequence``, a stream independent of
    ``default_rng(seed)``, which draws the samples."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])


def draw_permutations(
    nquestions: int, nruns: int, *, trials: int = 1000, seed: int = 0
) -> Iterator[np.ndarray]:
    """The randomised Tukey HSD's permutations, one (nquestions x nruns) array per trial
    from ``tukey_generator(seed)``: row q is a permutation of the runs 0..nruns-1 (in the
    order of their names), and in that trial run j is given question q's score of run
    ``perm[q, j]``; each question's scores are permuted on their own, never across
    questions.  These are the permutations ``tukey_hsd`` applies: it shuffles the scores
    themselves with the same generator calls (``Generator.permuted`` shuffles a row alike
    whatever the array's type), twice as fast as gathering them by these indices; the
    reference test, which deals the scores by these indices, keeps the two in step."""
    rng = tukey_generator(seed)
    identity = np.broadcast_to(np.arange(nruns, dtype=np.intp), (nquestions, nruns))
    for _ in range(trials):
        yield rng.permuted(identity, axis=1)


def tukey_hsd(
    X: np.ndarray, runs: Sequence[str], *, trials: int = 1000, seed: int = 0
) -> np.ndarray:
    """Randomised Tukey HSD p-value per run pair (Carterette 2012; Sakai 2014): in each
    trial every question's scores are permuted across the runs; p(x, y) = #{trials whose
    largest difference of run means >= |mean(x) - mean(y)|} / trials.  The permutations
    act on the runs in the order of their names ``runs`` (``run_order``), so the p-value
    of two named runs does not depend on the order of the rows of X; pairs in
    ``run_pairs`` order of X's rows.  The permutations are ``draw_permutations``' (from
    ``tukey_generator(seed)``)."""
    X = np.asarray(X, dtype=float)
    if len(runs) != len(X):
        raise ValueError(f"{len(X)} rows of scores but {len(runs)} run names")
    XT = np.ascontiguousarray(X[run_order(runs)].T)  # questions x runs (by name)
    rng = tukey_generator(seed)
    spread = np.empty(trials)
    for b in range(trials):  # draw_permutations' permutations, applied to the scores
        means = rng.permuted(XT, axis=1).mean(axis=0)
        spread[b] = means.max() - means.min()
    mean = X.mean(axis=1)
    x, y = run_pairs(len(X))
    d = np.abs(_zero_small(mean[x] - mean[y]))
    spread = np.sort(spread)
    # the count of spreads >= d (with the same slack as the bootstrap)
    return (trials - np.searchsorted(spread, d * (1 - 1e-9) - TOL, side="left")) / trials


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b between two rankings of the same runs given by their scores."""
    if len(a) < 2:
        return float("nan")
    return float(stats.kendalltau(a, b).statistic)


# -- the report ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class MetricReliability:
    """Everything of section 10 for one metric under one gain profile."""

    metric: str
    gains: str
    stability: Stability
    swaps: Swaps
    discrimination: Discrimination
    intervals: Intervals
    p_t: np.ndarray
    p_holm: np.ndarray
    p_tukey: np.ndarray
    tau: float = float("nan")


def metric_reliability(
    X: np.ndarray,
    samples: Samples,
    *,
    runs: Sequence[str],
    metric: str = "",
    gains: str = "",
    fuzziness: Sequence[float] = FUZZINESS,
    tests: bool = True,
) -> MetricReliability:
    """Stability, swap rates, bootstrap ASLs, intervals and all-pairs tests of ``X``
    (runs x questions, rows named by ``runs``, columns in ``samples.questions`` order);
    with ``tests=False`` the paired t, Holm and Tukey p-values are left NaN (a summary
    over many metrics; the Tukey HSD makes ``samples.tukey_trials`` permutations from
    ``samples.tukey_seed``).  Everything is computed on the rows sorted by run name
    (``run_order``), then put back in the order given: the figures of a named run or
    pair are the same, to the last bit, whatever the order of the runs."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != len(samples.questions):
        raise ValueError(
            f"the score matrix has shape {X.shape}; the samples are for "
            f"{len(samples.questions)} questions"
        )
    if len(runs) != len(X):
        raise ValueError(f"{len(X)} rows of scores but {len(runs)} run names")
    if not np.isfinite(X).all():
        raise ValueError("the scores must be finite")
    order = run_order(runs)
    names = [str(runs[i]) for i in order]
    X = X[order]
    nan = np.full(len(X) * (len(X) - 1) // 2, np.nan)
    p_t = paired_t(X) if tests else nan
    ind = samples.indicators
    r = MetricReliability(
        metric,
        gains,
        stability(X, samples.stability, fuzziness, indicator=ind["stability"]),
        swap_rates(X, samples.swap, indicators=(ind["swap0"], ind["swap1"])),
        bootstrap_asl(X, samples.bootstrap, indicator=ind["bootstrap"]),
        mean_intervals(X, samples.bootstrap, indicator=ind["bootstrap"]),
        p_t,
        holm(p_t) if tests else nan,
        tukey_hsd(X, names, trials=samples.tukey_trials, seed=samples.tukey_seed) if tests else nan,
    )
    return _in_order(r, order)


def _in_order(r: MetricReliability, order: np.ndarray) -> MetricReliability:
    """``r``, computed on the rows ``X[order]``, for the rows of X: per-run figures
    moved back, per-pair figures picked (GT counts exchanged for a pair turned round);
    the swap rates are over every pair and stay."""
    pos = np.empty(len(order), dtype=np.int64)
    pos[order] = np.arange(len(order))
    k, turned = _pair_map(order)
    st, iv = r.stability, r.intervals
    t = turned[:, None]
    return MetricReliability(
        r.metric,
        r.gains,
        Stability(
            st.fuzziness,
            np.where(t, st.gt_yx[k], st.gt_xy[k]),
            np.where(t, st.gt_xy[k], st.gt_yx[k]),
            st.eq[k],
        ),
        r.swaps,
        Discrimination(r.discrimination.asl[k], r.discrimination.alpha),
        Intervals(
            iv.mean[pos],
            iv.t_low[pos],
            iv.t_high[pos],
            iv.boot_low[pos],
            iv.boot_high[pos],
            iv.level,
        ),
        r.p_t[k],
        r.p_holm[k],
        r.p_tukey[k],
        r.tau,
    )


@dataclass(frozen=True, eq=False)
class Report:
    """Per (metric, gain label): a MetricReliability; ``runs`` and ``samples`` used."""

    runs: tuple[str, ...]
    samples: Samples
    results: dict[tuple[str, str], MetricReliability] = field(default_factory=dict)
    config: dict[str, object] = field(default_factory=dict)

    def summary(self) -> list[dict[str, object]]:
        """One row per (metric, gains), sorted by discrimination as in the paper's
        Tables 2-3: the share of comparisons reaching the 5%-swap difference, then the
        share of pairs significant by the bootstrap (both descending)."""
        rows = []
        for (metric, gains), r in self.results.items():
            rows.append(
                {
                    "metric": metric,
                    "gains": gains,
                    "swap_threshold": r.swaps.threshold,
                    "swap_relative": r.swaps.relative,
                    "swap_share": r.swaps.share,
                    "significant_share": r.discrimination.share_significant,
                    "ties_at_5pct_minority": r.stability.ties_at_minority(),
                    "tau_vs_default": r.tau,
                }
            )
        return sorted(
            rows,
            key=lambda row: (
                -_num(row["swap_share"]),
                -_num(row["significant_share"]),
                row["metric"],
                row["gains"],
            ),
        )


def _num(v) -> float:
    v = float(v)  # type: ignore[arg-type]
    return -1.0 if np.isnan(v) else v


def reliability_report(
    matrices: Mapping[tuple[str, str], np.ndarray],
    runs: Sequence[str],
    samples: Samples,
    *,
    fuzziness: Sequence[float] = FUZZINESS,
    tests: bool = True,
    config: Mapping[str, object] | None = None,
) -> Report:
    """The report over every (metric, gain label) matrix; Kendall's tau of each metric's
    ranking (by mean) under each gain profile against its first gain profile (the
    collection's default)."""
    results: dict[tuple[str, str], MetricReliability] = {}
    first: dict[str, np.ndarray] = {}
    for (metric, gains), X in matrices.items():
        r = metric_reliability(
            X,
            samples,
            runs=runs,
            metric=metric,
            gains=gains,
            fuzziness=fuzziness,
            tests=tests,
        )
        means = r.intervals.mean
        tau = kendall_tau(first.setdefault(metric, means), means)
        results[(metric, gains)] = MetricReliability(
            r.metric,
            r.gains,
            r.stability,
            r.swaps,
            r.discrimination,
            r.intervals,
            r.p_t,
            r.p_holm,
            r.p_tukey,
            tau,
        )
    return Report(tuple(runs), samples, results, dict(config or {}))


# -- CSV tables ---------------------------------------------------------------------------
def _preamble(report: Report, table: str) -> dict[str, object]:
    s = report.samples
    return {
        "table": table,
        **report.config,
        "trials": s.trials,
        "subset_size": s.subset_size,
        "seed": "" if s.seed is None else s.seed,
        "tukey_seed": s.tukey_seed,
        "tukey_trials": s.tukey_trials,
        "questions": len(s.questions),
        "runs": len(report.runs),
    }


SUMMARY_COLUMNS = (
    "metric",
    "gains",
    "swap_threshold",
    "swap_relative",
    "swap_share",
    "significant_share",
    "ties_at_5pct_minority",
    "tau_vs_default",
)


def summary_csv(report: Report) -> str:
    rows = [[row[k] for k in SUMMARY_COLUMNS] for row in report.summary()]
    return write_csv(SUMMARY_COLUMNS, rows, _preamble(report, "summary"), float_format=".6g")


def curves_csv(report: Report) -> str:
    """``metric,gains,curve,x,y,z``: the stability curve (x = f, y = minority rate, z =
    proportion of ties), the swap curve (x = bin lower edge, y = swap rate, z = number of
    comparisons in the bin) and the ASL curve (x = pair rank, y = ASL)."""
    rows: list[list] = []
    for (metric, gains), r in report.results.items():
        st = r.stability
        for f, mr, ties in zip(st.fuzziness, st.minority_rate, st.ties, strict=True):
            rows.append([metric, gains, "stability", float(f), float(mr), float(ties)])
        sw = r.swaps
        for e, rate, cnt in zip(sw.edges, sw.rate, sw.counter, strict=True):
            rows.append([metric, gains, "swap", float(e), float(rate), int(cnt)])
        for i, a in enumerate(r.discrimination.curve):
            rows.append([metric, gains, "asl", i + 1, float(a), None])
    return write_csv(
        ["metric", "gains", "curve", "x", "y", "z"],
        rows,
        _preamble(report, "curves"),
        float_format=".6g",
    )


def pairs_csv(report: Report) -> str:
    """Per (metric, gains) and run pair: the difference of means, the bootstrap ASL, the
    paired t p-value, Holm's adjusted p-value and the randomised Tukey HSD p-value."""
    x, y = run_pairs(len(report.runs))
    rows: list[list] = []
    for (metric, gains), r in report.results.items():
        m = r.intervals.mean
        for k in range(len(x)):
            rows.append(
                [
                    metric,
                    gains,
                    report.runs[x[k]],
                    report.runs[y[k]],
                    float(m[x[k]] - m[y[k]]),
                    float(r.discrimination.asl[k]),
                    float(r.p_t[k]),
                    float(r.p_holm[k]),
                    float(r.p_tukey[k]),
                ]
            )
    return write_csv(
        ["metric", "gains", "run_x", "run_y", "difference", "asl", "p_t", "p_holm", "p_tukey"],
        rows,
        _preamble(report, "pairs"),
        float_format=".6g",
    )


def runs_csv(report: Report) -> str:
    """Per (metric, gains) and run: the mean and its 95% t and bootstrap intervals."""
    rows: list[list] = []
    for (metric, gains), r in report.results.items():
        iv = r.intervals
        for i, run in enumerate(report.runs):
            rows.append(
                [
                    metric,
                    gains,
                    run,
                    float(iv.mean[i]),
                    float(iv.t_low[i]),
                    float(iv.t_high[i]),
                    float(iv.boot_low[i]),
                    float(iv.boot_high[i]),
                ]
            )
    return write_csv(
        ["metric", "gains", "run", "mean", "t_low", "t_high", "boot_low", "boot_high"],
        rows,
        _preamble(report, "runs"),
        float_format=".6g",
    )


TABLES = {"summary": summary_csv, "curves": curves_csv, "pairs": pairs_csv, "runs": runs_csv}


# -- from judgments and runs ---------------------------------------------------------------------
def score_matrices(
    judgments: Judgments,
    rankings: Sequence[Ranking],
    metrics: Sequence[str],
    profiles: Sequence[GainProfile],
    *,
    beta: float = DEFAULT_BETA,
    rbp_p: float = DEFAULT_RBP_P,
) -> dict[tuple[str, str], np.ndarray]:
    """The (runs x questions) matrix of every metric under every gain profile (keys:
    (metric, profile label)), columns in judgment order, from the engine's ``evaluate``."""
    out: dict[tuple[str, str], np.ndarray] = {}
    for profile in profiles:
        scores = evaluate(judgments, rankings, metrics, gains=profile, beta=beta, rbp_p=rbp_p)
        for k, metric in enumerate(scores.metrics):
            out[(metric, profile.label)] = scores.values[:, k, :]
    return out
