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
  significance level (ASL) per run pair, the ASL curve, the share of pairs with ASL < 0.05,
  and Sakai's estimate of the difference required for significance at 0.05 (the largest,
  over the significant pairs, |mean(w*_b)| of the bootstrap sample at the threshold);
- Kendall's tau between rankings, 95% confidence intervals of every run's mean (t and
  bootstrap percentile), paired t-tests with Holm's correction, the randomised Tukey HSD.
  Resampling p-values (the ASL, the Tukey HSD) are (count + 1) / (T + 1), never 0
  (Phipson and Smyth 2010; ``bootstrap.tail_p``).

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

The modules, from the bottom up (import-linter's ``layers`` contract keeps this order):
``samples`` (the seeded samples and their count matrices), ``samples_csv`` (the samples
file), ``pairs`` (run pairs, the canonical run order, subset means), ``swaps``,
``stability``, ``bootstrap`` (discriminative power), ``comparisons`` (intervals, Holm,
the randomised Tukey HSD, Kendall's tau), ``figures`` (one metric's figures, the report
over metrics and gain profiles, robustness to gains) and ``tables`` (the report as CSV).
The command line is ``evaluation.metrics.reliability_cli`` (``qa-reliability``).
"""
