"""Agreement between assessors who judged the same questions independently (DESIGN.md
section 9).  Pure numpy: no Django, importable by the annotation app.

A *layer* is one assessor's judgments of one question: a mapping from a string id to a
``Mark`` -- ``group`` (the layer's synset, any hashable; None when judged incorrect) and
``value`` (the ordinal level: 0 for incorrect, 1 for the lowest correct level, higher is
better).  Strings a layer has not judged are absent from it.

Figures for two layers (``pair_agreement``) and for several (``alpha_nominal`` /
``alpha_ordinal`` over a reliability matrix):

- correctness (correct vs incorrect): Cohen's kappa (Cohen 1960) and Krippendorff's alpha,
  nominal (Krippendorff 2011, "Computing Krippendorff's alpha-reliability");
- levels: Krippendorff's alpha, ordinal, incorrect counted as the lowest value;
- grouping, over the strings correct in both layers: pairwise precision, recall and F1 of
  "same synset" (layer ``a`` as the reference), the adjusted Rand index (Hubert and Arabie
  1985) and B-cubed precision, recall and F1 (Bagga and Baldwin 1998; Amigó et al. 2009).

Pooled over a collection, units are (question, string) and a synset is (question, group),
so two strings of different questions are never "the same synset" in any layer.

Between system rankings: Kendall's tau-b and Spearman's rho (average ranks for ties), and
the largest change of a run's mean.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

NAN = float("nan")


@dataclass(frozen=True)
class Mark:
    """One string's judgment in one layer: ``group`` None means judged incorrect."""

    group: Hashable | None
    value: int

    @property
    def correct(self) -> bool:
        return self.group is not None


Layer = Mapping[Hashable, Mark]


# -- chance-corrected agreement on labels ----------------------------------------------------
def cohen_kappa(a: Sequence, b: Sequence) -> float:
    """Cohen's kappa of two label sequences of equal length: (p_o - p_e) / (1 - p_e).
    1.0 when both use one and the same label throughout (no disagreement possible);
    nan when there are no units."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError("two label sequences of one length are needed")
    n = a.size
    if n == 0:
        return NAN
    labels, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
    ia, ib = inv[:n], inv[n:]
    k = len(labels)
    table = np.zeros((k, k))
    np.add.at(table, (ia, ib), 1)
    po = np.trace(table) / n
    pe = float(table.sum(1) @ table.sum(0)) / n / n
    if pe == 1.0:
        return 1.0 if po == 1.0 else NAN
    return float((po - pe) / (1 - pe))


def _coincidences(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The coincidence matrix o[c, k] of Krippendorff's alpha from ``data`` (coders x
    units, nan = missing) and the sorted values.  Units with fewer than two values are
    not pairable and are dropped."""
    data = np.asarray(data, dtype=float)
    if data.ndim != 2:
        raise ValueError("a coders x units matrix is needed")
    present = ~np.isnan(data)
    values = np.unique(data[present])
    k = len(values)
    if k == 0:
        return np.zeros((0, 0)), values
    idx = np.where(present, np.searchsorted(values, np.where(present, data, values[0])), -1)
    # counts[u, c] = how many coders gave unit u value c
    n_units = data.shape[1]
    counts = np.zeros((n_units, k))
    units = np.broadcast_to(np.arange(n_units), data.shape)
    np.add.at(counts, (units[present], idx[present]), 1)
    m = counts.sum(1)
    keep = m >= 2
    counts, m = counts[keep], m[keep]
    # o_ck = sum_u n_uc (n_uk - [c == k]) / (m_u - 1)
    weighted = counts / (m - 1)[:, None]
    o = weighted.T @ counts - np.diag(weighted.sum(0))
    return o, values


def _alpha(data, kind: str) -> float:
    o, values = _coincidences(data)
    n_c = o.sum(1)
    n = n_c.sum()
    if n == 0:
        return NAN
    k = len(values)
    if kind == "nominal":
        delta = 1.0 - np.eye(k)
    elif kind == "ordinal":
        # delta^2(c, k) = (sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2 (Krippendorff 2011, p. 6)
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[hi + 1] - cum[lo]
        delta = (between - (n_c[:, None] + n_c[None, :]) / 2) ** 2
    elif kind == "interval":
        delta = np.subtract.outer(values, values) ** 2
    else:
        raise ValueError(f"unknown level of measurement {kind!r}")
    d_o = float((o * delta).sum())
    d_e = float((np.outer(n_c, n_c) * delta).sum()) / (n - 1)
    if d_e == 0:
        return 1.0 if d_o == 0 else NAN
    return 1.0 - d_o / d_e


def alpha_nominal(data) -> float:
    """Krippendorff's alpha, nominal, of ``data``: coders x units, nan where a coder did
    not judge a unit.  1 - D_o / D_e over the coincidence matrix; 1.0 when only one value
    occurs (no disagreement possible), nan when no unit has two values."""
    return _alpha(data, "nominal")


def alpha_ordinal(data) -> float:
    """Krippendorff's alpha with the ordinal difference function, as ``alpha_nominal``."""
    return _alpha(data, "ordinal")


# -- agreement on a grouping ------------------------------------------------------------------
def _pairs(x: np.ndarray) -> np.ndarray:
    return x * (x - 1) / 2


@dataclass(frozen=True)
class Grouping:
    """Agreement of two groupings of the same items (``a`` the reference)."""

    n: int
    pair_precision: float
    pair_recall: float
    pair_f1: float
    ari: float
    bcubed_precision: float
    bcubed_recall: float
    bcubed_f1: float


def _f1(p: float, r: float) -> float:
    if np.isnan(p) or np.isnan(r):
        return NAN
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def grouping_agreement(a: Sequence, b: Sequence) -> Grouping:
    """Pairwise precision/recall/F1 of "same group" (pairs together in both / pairs
    together in ``b``, / pairs together in ``a``), the adjusted Rand index and B-cubed
    precision/recall/F1 of two labelings of the same items.  Labels are compared as
    strings.  Precision (recall) is 1.0 when ``b`` (``a``) puts no two items together and
    neither does the other; the ARI is 1.0 when both groupings are identical (including
    the trivial ones, as scikit-learn does).  Sparse: a collection pooled has tens of
    thousands of groups."""
    n = len(a)
    if len(b) != n:
        raise ValueError("two labelings of one length are needed")
    if n == 0:
        return Grouping(0, NAN, NAN, NAN, NAN, NAN, NAN, NAN)
    _, ia = np.unique(np.asarray(a, dtype=object).astype(str), return_inverse=True)
    _, ib = np.unique(np.asarray(b, dtype=object).astype(str), return_inverse=True)
    ia, ib = ia.ravel().astype(np.int64), ib.ravel().astype(np.int64)
    _, cell, cell_n = np.unique(
        ia * (int(ib.max()) + 1) + ib, return_inverse=True, return_counts=True
    )
    cell = cell.ravel()
    size_a, size_b = np.bincount(ia), np.bincount(ib)
    both = float(_pairs(cell_n.astype(float)).sum())
    in_a = float(_pairs(size_a.astype(float)).sum())
    in_b = float(_pairs(size_b.astype(float)).sum())
    precision = both / in_b if in_b else (1.0 if both == in_a else 0.0)
    recall = both / in_a if in_a else (1.0 if both == in_b else 0.0)
    total = n * (n - 1) / 2
    expected = in_a * in_b / total if total else 0.0
    top = (in_a + in_b) / 2
    ari = 1.0 if top == expected else (both - expected) / (top - expected)
    # B-cubed: for each item, |its b-group ∩ its a-group| / |its b-group| (precision)
    together = cell_n[cell].astype(float)
    bp = float((together / size_b[ib]).mean())
    br = float((together / size_a[ia]).mean())
    return Grouping(
        n, float(precision), float(recall), _f1(precision, recall), float(ari), bp, br, _f1(bp, br)
    )


# -- two layers -------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairAgreement:
    """The figures of section 9 for two layers (one question, or pooled)."""

    n_strings: int  # judged in both layers
    n_agree: int  # judged alike (``alike``, the rule that sends a string to gold)
    n_correct_both: int  # the strings the grouping figures are over
    kappa: float
    alpha_nominal: float
    alpha_ordinal: float
    grouping: Grouping
    confusion: np.ndarray = field(compare=False, repr=False)  # values x values, a rows

    @property
    def percent_agree(self) -> float:
        return 100.0 * self.n_agree / self.n_strings if self.n_strings else NAN


def _pooled(layer_a: Layer | Mapping, layer_b: Layer | Mapping, *, pooled: bool):
    """Aligned (unit, mark a, mark b) of the strings both layers judged."""
    if not pooled:
        return [((None, s), m, layer_b[s]) for s, m in layer_a.items() if s in layer_b]
    out = []
    for q, la in layer_a.items():
        lb = layer_b.get(q)
        if lb is None:
            continue
        out += [((q, s), m, lb[s]) for s, m in la.items() if s in lb]
    return out


def _codes(*columns: np.ndarray) -> np.ndarray:
    """Dense codes 0..k-1 of the rows of ``columns`` (equal rows, equal codes): a key of
    several labels -- (question, synset number) and the like -- that no arithmetic builds,
    so synset numbers of any size (docs/formats.md allows up to 999,999,999) cannot
    overflow int64 when combined."""
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(columns[::-1])
    step = np.zeros(n, dtype=bool)
    for col in columns:
        c = col[order]
        step[1:] |= c[1:] != c[:-1]
    out = np.empty(n, dtype=np.int64)
    out[order] = np.cumsum(step)
    return out


def _group_sizes(keys: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per entry of ``mask``: how many entries of ``mask`` share its key (0 outside)."""
    out = np.zeros(len(keys), dtype=np.int64)
    if mask.any():
        _, inv, counts = np.unique(keys[mask], return_inverse=True, return_counts=True)
        out[mask] = counts[inv.ravel()]
    return out


def group_sizes(q, g) -> np.ndarray:
    """Per entry (a string of question ``q`` in one layer, its group ``g`` there, negative
    when incorrect or not judged): how many entries of its question share its group, 0
    when it has none.  Given every string the layer judged, the size of each string's
    synset in the layer -- what ``alike`` compares."""
    q, g = np.asarray(q, dtype=np.int64), np.asarray(g, dtype=np.int64)
    return _group_sizes(_codes(q, g), g >= 0)


def alike(q, ga, va, gb, vb, *, size_a, size_b) -> np.ndarray:
    """The one rule of "judged alike" -- what goes to gold directly and what the figures
    count as agreement -- for two layers, per entry (a string of question ``q`` both
    layers judged, its group ``ga``/``gb``, -1 = incorrect, and value ``va``/``vb``): both
    incorrect, or both correct at one level with the same synset-mates in the *whole*
    layers.  ``size_a``/``size_b``: the size of the string's synset in all of each layer
    (``group_sizes`` over every string that layer judged, not only these entries), so a
    synset-mate that one layer has and the other did not judge makes them differ: the two
    synsets are equal exactly when both hold as many strings as they share here."""
    q = np.asarray(q, dtype=np.int64)
    ga, gb = np.asarray(ga, dtype=np.int64), np.asarray(gb, dtype=np.int64)
    va, vb = np.asarray(va, dtype=np.int64), np.asarray(vb, dtype=np.int64)
    size_a, size_b = np.asarray(size_a, dtype=np.int64), np.asarray(size_b, dtype=np.int64)
    ca, cb = ga >= 0, gb >= 0
    cell = _group_sizes(_codes(q, ga, gb), ca & cb)
    return (ca == cb) & (va == vb) & (~ca | ((size_a == cell) & (size_b == cell)))


def judged_alike(layers: Sequence[Layer]) -> set:
    """The strings every one of ``layers`` (of one question) judged and judged alike
    (``alike`` of the first layer with each other one, synset-mates over the whole
    layers): the strings that go to gold directly."""
    if not layers:
        return set()
    strings = [s for s in layers[0] if all(s in la for la in layers[1:])]
    if not strings:
        return set()

    def columns(layer: Layer):
        names = list(layer)
        codes: dict = {}
        g = np.array(
            [
                codes.setdefault(layer[s].group, len(codes)) if layer[s].correct else -1
                for s in names
            ],
            dtype=np.int64,
        )
        size = dict(
            zip(names, group_sizes(np.zeros(len(names), dtype=np.int64), g).tolist(), strict=True)
        )
        at = dict(zip(names, g.tolist(), strict=True))
        return (
            np.array([at[s] for s in strings], dtype=np.int64),
            np.array([layer[s].value for s in strings], dtype=np.int64),
            np.array([size[s] for s in strings], dtype=np.int64),
        )

    q = np.zeros(len(strings), dtype=np.int64)
    g0, v0, n0 = columns(layers[0])
    ok = np.ones(len(strings), dtype=bool)
    for layer in layers[1:]:
        g, v, n = columns(layer)
        ok &= alike(q, g0, v0, g, v, size_a=n0, size_b=n)
    return {s for s, yes in zip(strings, ok.tolist(), strict=True) if yes}


def pair_agreement_arrays(
    q, ga, va, gb, vb, *, size_a, size_b, n_values: int | None = None
) -> PairAgreement:
    """``pair_agreement`` of aligned arrays, one entry per (question, string) both layers
    judged: question index ``q``, group in each layer (``ga``/``gb``, -1 = incorrect) and
    value (``va``/``vb``), the size of its synset in the whole of each layer
    (``size_a``/``size_b``, see ``alike``).  What a page pooling a whole collection
    calls.  ``n_agree`` counts the strings judged alike (``alike``), so a collection's
    count is the sum of its questions'."""
    q = np.asarray(q, dtype=np.int64)
    ga, gb = np.asarray(ga, dtype=np.int64), np.asarray(gb, dtype=np.int64)
    va, vb = np.asarray(va, dtype=np.int64), np.asarray(vb, dtype=np.int64)
    ca, cb = ga >= 0, gb >= 0
    n = len(q)
    size = n_values if n_values is not None else (int(max(va.max(), vb.max())) + 1 if n else 1)
    confusion = (
        np.bincount(va * size + vb, minlength=size * size).reshape(size, size)
        if n
        else np.zeros((size, size), dtype=np.int64)
    )
    both = ca & cb
    return PairAgreement(
        n_strings=n,
        n_agree=int(alike(q, ga, va, gb, vb, size_a=size_a, size_b=size_b).sum()),
        n_correct_both=int(both.sum()),
        kappa=cohen_kappa(ca, cb),
        alpha_nominal=alpha_nominal(np.vstack([ca, cb]).astype(float)),
        alpha_ordinal=alpha_ordinal(np.vstack([va, vb]).astype(float)),
        grouping=grouping_agreement(_codes(q, ga)[both], _codes(q, gb)[both]),
        confusion=confusion,
    )


def pair_agreement(
    a: Layer | Mapping, b: Layer | Mapping, *, n_values: int | None = None, pooled: bool = False
) -> PairAgreement:
    """Agreement of layers ``a`` and ``b`` over the strings both judged.  With ``pooled``,
    ``a`` and ``b`` map question -> layer (a collection), and the figures are over all
    (question, string) units.  ``n_values`` sizes the level confusion table (values
    0..n_values-1; by default the highest value seen + 1)."""
    rows = _pooled(a, b, pooled=pooled)
    questions: dict = {}
    groups: dict = {}

    def code(table: dict, key) -> int:
        return table.setdefault(key, len(table))

    def sizes(layers: Mapping) -> Counter:
        """(question, group) -> how many strings the whole layer has in that synset."""
        items = layers.items() if pooled else [(None, layers)]
        return Counter((qk, m.group) for qk, la in items for m in la.values() if m.correct)

    size_of_a, size_of_b = sizes(a), sizes(b)
    q = [code(questions, u[0]) for u, _, _ in rows]
    ga = [code(groups, m.group) if m.correct else -1 for _, m, _ in rows]
    gb = [code(groups, m.group) if m.correct else -1 for _, _, m in rows]
    return pair_agreement_arrays(
        q,
        ga,
        [m.value for _, m, _ in rows],
        gb,
        [m.value for _, _, m in rows],
        size_a=[size_of_a[u[0], m.group] if m.correct else 0 for u, m, _ in rows],
        size_b=[size_of_b[u[0], m.group] if m.correct else 0 for u, _, m in rows],
        n_values=n_values,
    )


def reliability_matrix(layers: Sequence[Layer], *, what: str = "value") -> np.ndarray:
    """Coders x units (nan = not judged) of several layers of one question: ``what`` is
    ``value`` (the ordinal level) or ``correct`` (1/0)."""
    units = sorted({s for layer in layers for s in layer}, key=repr)
    out = np.full((len(layers), len(units)), np.nan)
    for i, layer in enumerate(layers):
        for j, s in enumerate(units):
            m = layer.get(s)
            if m is not None:
                out[i, j] = m.value if what == "value" else float(m.correct)
    return out


def synset_mates(layer: Layer) -> dict[Hashable, frozenset]:
    """string -> the set of strings in its synset in ``layer`` (correct strings only)."""
    by_group: dict[Hashable, set] = {}
    for s, m in layer.items():
        if m.correct:
            by_group.setdefault(m.group, set()).add(s)
    return {s: frozenset(by_group[m.group]) for s, m in layer.items() if m.correct}


# -- does disagreement change the conclusions? ---------------------------------------------
def _average_ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    xs = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks; nan with fewer than two
    systems or when one side is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y):
        raise ValueError("two score lists of one length are needed")
    if len(x) < 2:
        return NAN
    rx, ry = _average_ranks(x), _average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = np.sqrt((rx**2).sum() * (ry**2).sum())
    return float((rx * ry).sum() / den) if den else NAN


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b, (concordant - discordant) / sqrt((n0 - n1)(n0 - n2)), ties in
    either list excluded from its side of the denominator (as scipy's default)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y):
        raise ValueError("two score lists of one length are needed")
    if len(x) < 2:
        return NAN
    iu = np.triu_indices(len(x), 1)
    dx = np.sign(np.subtract.outer(x, x)[iu])
    dy = np.sign(np.subtract.outer(y, y)[iu])
    s = float((dx * dy).sum())
    den = np.sqrt(float((dx != 0).sum()) * float((dy != 0).sum()))
    return s / den if den else NAN


@dataclass(frozen=True)
class RankingChange:
    """How the system ranking under one set of judgments compares with another's."""

    n_runs: int
    kendall_tau: float
    spearman_rho: float
    largest_change: float  # the largest |mean_b - mean_a| of one run
    largest_change_run: Hashable | None
    swaps: int  # run pairs ordered one way by a and the other by b


def ranking_change(a: Mapping[Hashable, float], b: Mapping[Hashable, float]) -> RankingChange:
    """Compare the run means ``a`` and ``b`` (run -> mean) over the runs both score
    (Voorhees 2000: does assessor disagreement change the ranking of the systems?)."""
    runs = [r for r in a if r in b]
    x = np.array([a[r] for r in runs], dtype=float)
    y = np.array([b[r] for r in runs], dtype=float)
    if not runs:
        return RankingChange(0, NAN, NAN, NAN, None, 0)
    diff = np.abs(y - x)
    i = int(np.argmax(diff))
    iu = np.triu_indices(len(x), 1)
    dx = np.sign(np.subtract.outer(x, x)[iu])
    dy = np.sign(np.subtract.outer(y, y)[iu])
    return RankingChange(
        len(runs),
        kendall_tau(x, y),
        spearman_rho(x, y),
        float(diff[i]),
        runs[i],
        int(((dx * dy) < 0).sum()),
    )


# -- per question, fast (pure Python: thousands of small questions on one page) -------------
def _alpha_small(units: Sequence[Sequence[float]], kind: str) -> float:
    """Krippendorff's alpha of small data given as one list of values per unit (the
    values of the coders who judged it); equals ``alpha_nominal`` / ``alpha_ordinal``."""
    o: dict[tuple, float] = {}
    for vals in units:
        m = len(vals)
        if m < 2:
            continue
        for i, c in enumerate(vals):
            for j, k in enumerate(vals):
                if i != j:
                    o[c, k] = o.get((c, k), 0.0) + 1.0 / (m - 1)
    n_c: dict = {}
    for (c, _), w in o.items():
        n_c[c] = n_c.get(c, 0.0) + w
    n = sum(n_c.values())
    if n == 0:
        return NAN
    values = sorted(n_c)
    if kind == "nominal":

        def delta(c, k):
            return 0.0 if c == k else 1.0
    else:
        pos = {v: i for i, v in enumerate(values)}
        cum = [0.0]
        for v in values:
            cum.append(cum[-1] + n_c[v])

        def delta(c, k):
            lo, hi = sorted((pos[c], pos[k]))
            return (cum[hi + 1] - cum[lo] - (n_c[c] + n_c[k]) / 2) ** 2

    d_o = sum(w * delta(c, k) for (c, k), w in o.items())
    d_e = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n - 1)
    if d_e == 0:
        return 1.0 if d_o == 0 else NAN
    return 1.0 - d_o / d_e


@dataclass(frozen=True)
class QuestionFigures:
    """Agreement of the layers of one question, over the strings every layer judged: the
    figures of ``PairAgreement`` for one question (two-coder figures -- kappa and the
    grouping's -- are means over the layer pairs when there are more than two layers)."""

    n_strings: int
    n_agree: int  # strings that would go to gold directly (``judged_alike``)
    kappa: float  # Cohen's kappa on correct vs incorrect
    alpha_nominal: float
    alpha_ordinal: float
    pair_f1: float  # pairwise F1 of the grouping
    ari: float  # adjusted Rand index of the grouping
    bcubed_f1: float  # B-cubed F1 of the grouping

    @property
    def percent_agree(self) -> float:
        return 100.0 * self.n_agree / self.n_strings if self.n_strings else NAN


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not np.isnan(x)]
    return sum(xs) / len(xs) if xs else NAN


def question_figures(layers: Sequence[Layer]) -> QuestionFigures:
    """The per-question figures the agreement page lists (lowest agreement first)."""
    if not layers:
        return QuestionFigures(0, 0, NAN, NAN, NAN, NAN, NAN, NAN)
    strings = [s for s in layers[0] if all(s in la for la in layers[1:])]
    agree = len(judged_alike(layers))
    nominal = [[float(la[s].correct) for la in layers] for s in strings]
    ordinal = [[float(la[s].value) for la in layers] for s in strings]
    kappas, groupings = _pairwise(layers, strings)
    return QuestionFigures(
        len(strings),
        agree,
        _mean(kappas),
        _alpha_small(nominal, "nominal"),
        _alpha_small(ordinal, "ordinal"),
        _mean([g.pair_f1 for g in groupings]),
        _mean([g.ari for g in groupings]),
        _mean([g.bcubed_f1 for g in groupings]),
    )


def _pairwise(layers: Sequence[Layer], strings: list) -> tuple[list[float], list[Grouping]]:
    """Cohen's kappa and the grouping's agreement of every pair of ``layers`` over
    ``strings`` (the grouping over those both layers judged correct)."""
    kappas, groupings = [], []
    for i in range(len(layers)):
        for j in range(i + 1, len(layers)):
            a, b = layers[i], layers[j]
            kappas.append(
                cohen_kappa([a[s].correct for s in strings], [b[s].correct for s in strings])
            )
            both = [s for s in strings if a[s].correct and b[s].correct]
            groupings.append(
                grouping_agreement([a[s].group for s in both], [b[s].group for s in both])
            )
    return kappas, groupings


@dataclass(frozen=True)
class QuestionTable:
    """``question_figures`` of many questions at once, one array per figure."""

    n_strings: np.ndarray
    n_agree: np.ndarray
    kappa: np.ndarray
    alpha_nominal: np.ndarray
    alpha_ordinal: np.ndarray
    pair_f1: np.ndarray
    ari: np.ndarray
    bcubed_f1: np.ndarray


def question_figures_two(q, ga, va, gb, vb, n_questions: int, *, size_a, size_b) -> QuestionTable:
    """``question_figures`` of two layers for many questions at once (vectorized): one
    entry per string both layers judged -- its question index ``q`` (0..n_questions-1),
    its group in each layer (``ga``/``gb``, -1 when incorrect) and value (``va``/``vb``),
    the size of its synset in the whole of each layer (``size_a``/``size_b``, ``alike``).
    Two coders and no missing value make Krippendorff's alpha per question a sum over
    units: D_o = 2 sum_u delta(a_u, b_u), D_e = sum_ck n_c n_k delta(c, k) / (n - 1);
    Cohen's kappa, the pair counts of the grouping (pairwise F1, ARI) and the B-cubed
    means are sums per question too."""
    q = np.asarray(q, dtype=np.int64)
    ga, gb = np.asarray(ga, dtype=np.int64), np.asarray(gb, dtype=np.int64)
    va, vb = np.asarray(va, dtype=np.int64), np.asarray(vb, dtype=np.int64)
    nq = int(n_questions)
    n_strings = np.bincount(q, minlength=nq)
    ca, cb = ga >= 0, gb >= 0
    both = ca & cb
    n_agree = np.bincount(
        q, weights=alike(q, ga, va, gb, vb, size_a=size_a, size_b=size_b), minlength=nq
    ).astype(np.int64)
    # Cohen's kappa on correct vs incorrect, as ``cohen_kappa``
    n = n_strings.astype(float)
    n_a1 = np.bincount(q[ca], minlength=nq).astype(float)
    n_b1 = np.bincount(q[cb], minlength=nq).astype(float)
    same = np.bincount(q[ca == cb], minlength=nq).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = same / n
        pe = ((n - n_a1) * (n - n_b1) + n_a1 * n_b1) / n / n
        kappa = np.where(pe == 1.0, np.where(po == 1.0, 1.0, NAN), (po - pe) / (1 - pe))
    kappa = np.where(n_strings > 0, kappa, NAN)
    # the grouping, over the strings correct in both layers: clusters are (question, group)
    key_a, key_b, key_c = _codes(q, ga), _codes(q, gb), _codes(q, ga, gb)

    def pair_counts(keys):
        _, first, counts = np.unique(keys[both], return_index=True, return_counts=True)
        return np.bincount(q[both][first], weights=counts * (counts - 1) / 2, minlength=nq)

    t_a, t_b, t_c = pair_counts(key_a), pair_counts(key_b), pair_counts(key_c)
    n_both = np.bincount(q[both], minlength=nq)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(t_b > 0, t_c / np.where(t_b > 0, t_b, 1), np.where(t_a == 0, 1.0, 0.0))
        r = np.where(t_a > 0, t_c / np.where(t_a > 0, t_a, 1), np.where(t_b == 0, 1.0, 0.0))
        f1 = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
        # adjusted Rand index, as ``grouping_agreement``
        total = n_both * (n_both - 1) / 2
        expected = np.where(total > 0, t_a * t_b / np.where(total > 0, total, 1), 0.0)
        top = (t_a + t_b) / 2
        ari = np.where(top == expected, 1.0, (t_c - expected) / (top - expected))
        # B-cubed: per string, |its cell| / |its group in b| (precision), / in a (recall)
        cell = _group_sizes(key_c, both)[both]
        bp = np.bincount(
            q[both], weights=cell / _group_sizes(key_b, both)[both], minlength=nq
        ) / np.where(n_both > 0, n_both, 1)
        br = np.bincount(
            q[both], weights=cell / _group_sizes(key_a, both)[both], minlength=nq
        ) / np.where(n_both > 0, n_both, 1)
        bcubed = 2 * bp * br / (bp + br)
    f1, ari, bcubed = (np.where(n_both > 0, x, NAN) for x in (f1, ari, bcubed))

    def alpha(a_vals, b_vals, ordinal: bool) -> np.ndarray:
        values = int(max(a_vals.max(initial=0), b_vals.max(initial=0))) + 1
        n_c = (
            (
                np.bincount(q * values + a_vals, minlength=nq * values)
                + np.bincount(q * values + b_vals, minlength=nq * values)
            )
            .reshape(nq, values)
            .astype(float)
        )
        idx = np.arange(values)
        if ordinal:
            cum = np.concatenate([np.zeros((nq, 1)), np.cumsum(n_c, axis=1)], axis=1)
            lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
            between = cum[:, hi + 1] - cum[:, lo]
            delta = (between - (n_c[:, :, None] + n_c[:, None, :]) / 2) ** 2
        else:
            delta = np.broadcast_to(1.0 - np.eye(values), (nq, values, values))
        d_o = 2 * np.bincount(q, weights=delta[q, a_vals, b_vals], minlength=nq)
        n = n_c.sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            d_e = np.einsum("qc,qk,qck->q", n_c, n_c, delta) / (n - 1)
            out = 1.0 - d_o / d_e
        out = np.where(d_e == 0, np.where(d_o == 0, 1.0, NAN), out)
        return np.where(n_strings > 0, out, NAN)

    return QuestionTable(
        n_strings,
        n_agree,
        kappa,
        alpha(ca.astype(np.int64), cb.astype(np.int64), False),
        alpha(va, vb, True),
        f1,
        ari,
        bcubed,
    )
