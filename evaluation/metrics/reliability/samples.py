"""The samples every reliability figure is counted on (DESIGN.md section 10): B subsets of
c questions, B pairs of disjoint subsets and B bootstrap samples, drawn from a seeded
generator, with the (trials x questions) count matrices the figures multiply by."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

#: the kinds of samples, in the order the samples file lists them
KINDS = ("stability", "swap", "bootstrap")


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
            "stability": count_matrix(self.stability, n),
            "swap0": count_matrix(self.swap[:, 0], n),
            "swap1": count_matrix(self.swap[:, 1], n),
            "bootstrap": count_matrix(self.bootstrap, n),
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
        "bootstrap": count_matrix(boot, n),
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
        for s in chunks(trials, chunk):
            rng.random((s.stop - s.start, n))
    return rng.integers(0, n, size=(trials, n))


def count_matrix(subsets: np.ndarray, n: int) -> np.ndarray:
    """(trials x n) matrix counting how often each question is in each trial's sample."""
    B = len(subsets)
    flat = (np.arange(B)[:, None] * n + subsets.reshape(B, -1)).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(float)


def chunks(n: int, size: int):
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))
