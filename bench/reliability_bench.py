"""Speed of the reliability report (DESIGN.md section 10).

    .venv/bin/python bench/reliability_bench.py            # 50 runs x 5,000 questions, B=1000
    .venv/bin/python bench/reliability_bench.py --quick    # 10 runs x 500 questions (smoke)
    .venv/bin/python bench/reliability_bench.py --cli      # also the whole qa-reliability command

Generates (seeded, once, under ``$TMPDIR/qasynset-bench/reliability``) graded qrels for
5,000 topics and 50 TREC runs of 5 answers per topic whose quality differs from run to run,
then times, in this process: reading and scoring the runs with one metric (q_measure),
drawing the samples (B = 1,000 trials, c = half the questions), and every figure of the
report over all 1,225 run pairs: stability over 21 fuzziness values, swap rates, the
paired bootstrap ASLs, 95% intervals, paired t with Holm, the randomised Tukey HSD (B
permutations), then the summary table.  Reported: each phase and the whole, wall and CPU
time (process time: all threads, so BLAS products count twice on 2 cores), min over
--repeat runs, and the load average (the target is < 10 s wall on the project's 2-core
machine when it is quiet).  With --cli, the ``qa-reliability`` command itself, in a
child process (wall and CPU time, the samples file's size): without a samples file, with
``--samples-out samples.npz`` (the compact form) and ``--samples-out samples.csv``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.metrics import evaluate  # noqa: E402
from evaluation.metrics.fast import read_inputs  # noqa: E402
from evaluation.metrics.judgment_parsers import parse_qrels  # noqa: E402
from evaluation.metrics.parsers import parse_run  # noqa: E402
from evaluation.metrics.reliability.bootstrap import bootstrap_asl  # noqa: E402
from evaluation.metrics.reliability.comparisons import holm, mean_intervals, paired_t, tukey_hsd  # noqa: E402
from evaluation.metrics.reliability.figures import MetricReliability, Report  # noqa: E402
from evaluation.metrics.reliability.samples import draw_samples  # noqa: E402
from evaluation.metrics.reliability.stability import stability  # noqa: E402
from evaluation.metrics.reliability.swaps import swap_rates  # noqa: E402
from evaluation.metrics.reliability.tables import summary_csv  # noqa: E402


def make_data(d: Path, topics: int, runs: int, answers: int = 5) -> None:
    rng = np.random.default_rng(16)
    grades = np.zeros((topics, 20), dtype=int)
    with open(d / "qrels", "w") as q:
        for t in range(topics):
            g = rng.choice([0, 1, 2, 3], size=20, p=[0.6, 0.25, 0.1, 0.05])
            g[0] = max(g[0], 1)
            grades[t] = g
            q.writelines(f"T{t} 0 D{t}-{x} {gr}\n" for x, gr in enumerate(g))
    for k in range(runs):
        skill = k / max(runs - 1, 1)  # run 49 finds relevant documents most often
        with open(d / f"run{k:02d}", "w") as r:
            for t in range(topics):
                rel_docs = np.flatnonzero(grades[t] > 0)
                others = rng.permutation(40)
                take = rel_docs[rng.random(len(rel_docs)) < 0.2 + 0.5 * skill]
                ret = list(dict.fromkeys([*take.tolist(), *others.tolist()]))[:answers]
                ret = rng.permutation(ret)
                r.writelines(
                    f"T{t} Q0 D{t}-{x} {i + 1} {answers - i} run{k:02d}\n"
                    for i, x in enumerate(ret)
                )


def ensure_data(topics: int, runs: int) -> Path:
    d = (
        Path(os.environ.get("TMPDIR", tempfile.gettempdir()))
        / "qasynset-bench"
        / f"reliability-{topics}x{runs}"
    )
    if not (d / f"run{runs - 1:02d}").exists():
        d.mkdir(parents=True, exist_ok=True)
        make_data(d, topics, runs)
    return d


def once(d: Path, trials: int) -> tuple[dict[str, float], dict[str, float]]:
    t: dict = {}
    cpu: dict[str, float] = {}
    start, cpu_start = time.perf_counter(), time.process_time()
    qrels = (d / "qrels").read_bytes()
    files = [(str(p), p.read_bytes()) for p in sorted(d.glob("run*"))]
    fast = read_inputs(qrels=qrels, runs=files)
    j = fast[0] if fast else parse_qrels(qrels, filename="qrels")
    rankings = fast[1] if fast else [parse_run(b, filename=p) for p, b in files]
    X = evaluate(j, rankings, ["q_measure"]).values[:, 0, :]
    t["read+score"] = time.perf_counter() - start
    cpu["read+score"] = time.process_time() - cpu_start

    def timed(name, fn):
        mark, cpu_mark = time.perf_counter(), time.process_time()
        out = fn()
        t[name] = time.perf_counter() - mark
        cpu[name] = time.process_time() - cpu_mark
        return out

    samples = timed(
        "samples", lambda: draw_samples([str(q) for q in j.questions], trials=trials, seed=0)
    )

    ind = samples.indicators
    stab = timed("stability", lambda: stability(X, samples.stability, indicator=ind["stability"]))
    swaps = timed(
        "swap", lambda: swap_rates(X, samples.swap, indicators=(ind["swap0"], ind["swap1"]))
    )
    disc = timed(
        "bootstrap", lambda: bootstrap_asl(X, samples.bootstrap, indicator=ind["bootstrap"])
    )
    iv = timed(
        "intervals", lambda: mean_intervals(X, samples.bootstrap, indicator=ind["bootstrap"])
    )
    p_t = timed("t+holm", lambda: paired_t(X))
    p_holm = holm(p_t)
    names = tuple(r.name for r in rankings)
    p_tukey = timed("tukey", lambda: tukey_hsd(X, names, trials=trials, seed=samples.tukey_seed))
    result = MetricReliability("q_measure", "default", stab, swaps, disc, iv, p_t, p_holm, p_tukey)
    report = Report(names, samples, {("q_measure", "default"): result})
    summary = timed("summary", lambda: summary_csv(report))
    t["report"] = time.perf_counter() - start - t["read+score"]
    t["whole"] = time.perf_counter() - start
    cpu["report"] = time.process_time() - cpu_start - cpu["read+score"]
    cpu["whole"] = time.process_time() - cpu_start
    t["_summary"] = summary  # type: ignore[assignment]
    t["_pairs"] = len(disc.asl)  # type: ignore[assignment]
    t["_shape"] = X.shape  # type: ignore[assignment]
    return t, cpu


def cli_once(d: Path, samples: str | None) -> tuple[float, float, int]:
    """(wall s, CPU s, bytes of the samples file) of one ``qa-reliability`` on ``d``."""
    out = d / "out"
    out.mkdir(exist_ok=True)
    args = [sys.executable, "-m", "evaluation.metrics.reliability_cli", "--qrels", str(d / "qrels")]
    args += [str(p) for p in sorted(d.glob("run*"))] + ["--output", str(out / "summary.csv")]
    target = out / samples if samples else None
    if target:
        args += ["--samples-out", str(target)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    size = target.stat().st_size if target else 0
    if target:
        target.unlink()
    return wall, cpu, size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--cli", action="store_true", help="also time the qa-reliability command")
    args = ap.parse_args()
    topics, runs, trials = (500, 10, 200) if args.quick else (5000, 50, 1000)
    d = ensure_data(topics, runs)
    best: dict[str, float] = {}
    best_cpu: dict[str, float] = {}
    for _ in range(args.repeat):
        t, cpu = once(d, trials)
        for k, v in t.items():
            if not k.startswith("_"):
                best[k] = min(best.get(k, float("inf")), v)
                best_cpu[k] = min(best_cpu.get(k, float("inf")), cpu[k])
    print(
        f"runs x questions = {t['_shape'][0]} x {t['_shape'][1]}, pairs = {t['_pairs']}, "
        f"B = {trials}, metric q_measure; load average {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} cores; min of {args.repeat}"
    )
    print(f"{'phase':12s} {'wall s':>8s} {'cpu s':>8s}")
    for k, v in best.items():
        print(f"{k:12s} {v:8.3f} {best_cpu[k]:8.3f}")
    print(t["_summary"], end="")
    if args.cli:
        print(f"\n{'qa-reliability':28s} {'wall s':>8s} {'cpu s':>8s} {'samples MB':>11s}")
        for samples in (None, "samples.npz", "samples.csv"):
            wall, cpu, size = min(cli_once(d, samples) for _ in range(args.repeat))
            label = f"--samples-out {samples}" if samples else "(no samples file)"
            print(f"{label:28s} {wall:8.3f} {cpu:8.3f} {size / 1e6:11.1f}")


if __name__ == "__main__":
    main()
