"""The reliability report as CSV tables (summary, curves, pairs, runs), each with a
preamble naming its configuration and samples."""

from __future__ import annotations

from ..csvio import write_csv
from .figures import Report
from .pairs import run_pairs


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
    "bootstrap_difference",
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
