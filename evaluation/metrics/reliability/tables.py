"""The reliability report as CSV tables (summary, curves, pairs, runs), each with a
preamble naming its configuration and samples.  Floats have 6 significant digits, or with
``precision="full"`` every digit (``repr``, as ``qa-score --precision full`` and the
pages' ``precision=full`` downloads write them; the preamble then says
``precision=full``)."""

from __future__ import annotations

from ..csvio import write_csv
from .figures import Report
from .pairs import run_pairs

READABLE_FLOAT_FORMAT = ".6g"  # significant digits: ASLs and p-values span decades


def _write(report: Report, table: str, header, rows, precision: str) -> str:
    """The table's CSV: its preamble, then the rows with floats as ``precision`` says."""
    full = precision == "full"
    preamble = _preamble(report, table) | ({"precision": "full"} if full else {})
    return write_csv(header, rows, preamble, float_format=None if full else READABLE_FLOAT_FORMAT)


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


def summary_csv(report: Report, *, precision: str = "readable") -> str:
    """One row per (metric, gains): ``Report.summary``'s figures."""
    rows = [[row[k] for k in SUMMARY_COLUMNS] for row in report.summary()]
    return _write(report, "summary", SUMMARY_COLUMNS, rows, precision)


def curves_csv(report: Report, *, precision: str = "readable") -> str:
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
    return _write(report, "curves", ["metric", "gains", "curve", "x", "y", "z"], rows, precision)


def pairs_csv(report: Report, *, precision: str = "readable") -> str:
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
    return _write(
        report,
        "pairs",
        ["metric", "gains", "run_x", "run_y", "difference", "asl", "p_t", "p_holm", "p_tukey"],
        rows,
        precision,
    )


def runs_csv(report: Report, *, precision: str = "readable") -> str:
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
    return _write(
        report,
        "runs",
        ["metric", "gains", "run", "mean", "t_low", "t_high", "boot_low", "boot_high"],
        rows,
        precision,
    )


TABLES = {"summary": summary_csv, "curves": curves_csv, "pairs": pairs_csv, "runs": runs_csv}
