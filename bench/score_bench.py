"""Scoring throughput: this engine against pytrec_eval and ranx, end to end from files.

    .venv/bin/python bench/score_bench.py            # all workloads, min of 3 runs each
    .venv/bin/python bench/score_bench.py --quick    # smaller data, one run (a smoke test)

Workloads (seeded):
  W1    1,000 topics x 1,000-deep TREC run; graded qrels, 500 judged documents per topic
  W2    5,000 topics x 5 answers x 50 TREC runs; graded qrels
  W2qa  the same shape as QA runs (TSV) against answer-synset judgments (CSV) with
        duplicates, strings of one synset, judged-incorrect strings and NIL questions
Each tool runs in a fresh subprocess: parse the files, mark, compute the default metrics
(ours: q_measure, r_measure, rr, ap, ndcg@5 -- the peers: AP, RR, nDCG@5, which they have)
and the means.  Reported: min wall time of that over the runs, the ratio to pytrec_eval,
the time to import the tool's libraries (not in "seconds"), and the subprocess's peak
resident memory.  The engine uses its C reader when it was built (pip install -e .).
"""

from __future__ import annotations

import argparse
import json
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


# -- data -----------------------------------------------------------------------------------
def _grades(rng, n):
    return rng.choice([0, 1, 2, 3], size=n, p=[0.6, 0.25, 0.1, 0.05])


def make_w1(d: Path, topics: int, depth: int, judged: int) -> None:
    rng = np.random.default_rng(1)
    with open(d / "w1.qrels", "w") as q, open(d / "w1.run", "w") as r:
        for t in range(topics):
            pool = rng.permutation(depth * 2)
            jd = pool[:judged] if judged <= len(pool) else pool
            g = _grades(rng, len(jd))
            g[0] = max(g[0], 1)
            q.writelines(f"{700 + t} 0 DOC-{t}-{x} {gr}\n" for x, gr in zip(jd, g, strict=True))
            ret = rng.permutation(depth * 2)[:depth]
            sc = np.sort(np.round(rng.random(depth) * 100, 4))[::-1]  # as a system writes it
            r.writelines(
                f"{700 + t} Q0 DOC-{t}-{x} {i + 1} {s} w1run\n"
                for i, (x, s) in enumerate(zip(ret, sc, strict=True))
            )


def make_w2(d: Path, topics: int, runs: int, answers: int = 5) -> None:
    rng = np.random.default_rng(2)
    with open(d / "w2.qrels", "w") as q:
        for t in range(topics):
            g = _grades(rng, 20)
            g[0] = max(g[0], 1)
            q.writelines(f"T{t} 0 D{t}-{x} {gr}\n" for x, gr in enumerate(g))
    for k in range(runs):
        with open(d / f"w2.run{k:02d}", "w") as r:
            for t in range(topics):
                ret = rng.permutation(40)[:answers]
                r.writelines(
                    f"T{t} Q0 D{t}-{x} {i + 1} {answers - i} run{k:02d}\n"
                    for i, x in enumerate(ret)
                )


def make_w2qa(d: Path, topics: int, runs: int, answers: int = 5) -> None:
    rng = np.random.default_rng(3)
    levels = np.array(["S", "A", "B"])
    strings: list[list[str]] = []
    with open(d / "w2qa.judgments.csv", "w") as f:
        f.write("question_id,synset_id,answer,level\n")
        for t in range(topics):
            qs = []
            if rng.random() < 0.05:
                f.write(f"Q{t},1,NIL,A\n")
                qs.append("NIL")
            else:
                for s in range(1 + rng.integers(0, 4)):
                    for k in range(1 + rng.integers(0, 3)):
                        text = f"Answer {t}-{s}" + ("" if k == 0 else f" variant {k}")
                        f.write(f"Q{t},{s + 1},{text},{levels[min(k, 2)]}\n")
                        qs.append(text)
            for w in range(2):
                f.write(f"Q{t},,Wrong {t}-{w},\n")
                qs.append(f"Wrong {t}-{w}")
            qs += [f"unjudged {t}-{u}" for u in range(3)] + ["NIL"]
            strings.append(qs)
    for k in range(runs):
        with open(d / f"w2qa.run{k:02d}.tsv", "w") as r:
            for t in range(topics):
                pool = strings[t]
                pick = rng.choice(len(pool), size=min(answers, len(pool)), replace=False)
                r.writelines(
                    f"Q{t}\t{i + 1}\t{pool[p].lower() if i % 2 else pool[p]}\n"
                    for i, p in enumerate(pick)
                )


def ensure_data(d: Path, quick: bool) -> None:
    stamp = d / ("stamp-quick" if quick else "stamp-full")
    if stamp.exists():
        return
    d.mkdir(parents=True, exist_ok=True)
    if quick:
        make_w1(d, 100, 1000, 500)
        make_w2(d, 500, 10)
        make_w2qa(d, 500, 10)
    else:
        make_w1(d, 1000, 1000, 500)
        make_w2(d, 5000, 50)
        make_w2qa(d, 5000, 50)
    stamp.write_text("ok")


def workload_files(d: Path, name: str) -> tuple[Path, list[Path]]:
    if name == "W1":
        return d / "w1.qrels", [d / "w1.run"]
    if name == "W2":
        return d / "w2.qrels", sorted(d.glob("w2.run*"))
    return d / "w2qa.judgments.csv", sorted(d.glob("w2qa.run*.tsv"))


# -- workers (each in its own process) ------------------------------------------------------
def work_engine(judg: Path, runs: list[Path]) -> dict:
    from evaluation.metrics import DEFAULT_METRICS, evaluate
    from evaluation.metrics.fast import read_inputs
    from evaluation.metrics.judgment_parsers import parse_judgments_csv, parse_qrels
    from evaluation.metrics.parsers import parse_run

    files = [(str(p), p.read_bytes()) for p in runs]
    if judg.suffix == ".csv":
        j = parse_judgments_csv(judg.read_bytes(), filename=str(judg))
        fast = read_inputs(qrels=None, judgments=j, runs=files)
    else:
        qrels = judg.read_bytes()
        fast = read_inputs(qrels=qrels, runs=files)
        j = fast[0] if fast else parse_qrels(qrels, filename=str(judg))
    rankings = fast[1] if fast else [parse_run(data, filename=p) for p, data in files]
    scores = evaluate(j, rankings, DEFAULT_METRICS)
    means = scores.means()
    return {
        "ap": float(means["ap"].mean()),
        "rr": float(means["rr"].mean()),
        "ndcg@5": float(means["ndcg@5"].mean()),
        "q": float(means["q_measure"].mean()),
    }


def work_pytrec(judg: Path, runs: list[Path]) -> dict:
    import pytrec_eval

    with open(judg) as f:
        qrel = pytrec_eval.parse_qrel(f)
    ev = pytrec_eval.RelevanceEvaluator(qrel, {"map", "recip_rank", "ndcg_cut_5"})
    totals = {"ap": [], "rr": [], "ndcg@5": []}
    for p in runs:
        with open(p) as f:
            res = ev.evaluate(pytrec_eval.parse_run(f))
        # -c: topics absent from a run count as zeros
        n = len(qrel)
        totals["ap"].append(sum(v["map"] for v in res.values()) / n)
        totals["rr"].append(sum(v["recip_rank"] for v in res.values()) / n)
        totals["ndcg@5"].append(sum(v["ndcg_cut_5"] for v in res.values()) / n)
    return {k: float(np.mean(v)) for k, v in totals.items()}


def work_ranx(judg: Path, runs: list[Path]) -> dict:
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_file(str(judg), kind="trec")
    totals = {"ap": [], "rr": [], "ndcg@5": []}
    for p in runs:
        run = Run.from_file(str(p), kind="trec")
        res = evaluate(qrels, run, ["map", "mrr", "ndcg@5"], make_comparable=True)
        totals["ap"].append(res["map"])
        totals["rr"].append(res["mrr"])
        totals["ndcg@5"].append(res["ndcg@5"])
    return {k: float(np.mean(v)) for k, v in totals.items()}


WORKERS = {"engine": work_engine, "pytrec_eval": work_pytrec, "ranx": work_ranx}


IMPORTS = {
    "engine": [
        "pandas",
        "evaluation.metrics",
        "evaluation.metrics.fast",
        "evaluation.metrics.parsers",
    ],
    "pytrec_eval": ["pytrec_eval"],
    "ranx": ["ranx"],
}


def worker_main(tool: str, judg: str, runs: list[str]) -> None:
    # libraries are imported first and timed apart: the timed part is the whole scoring
    # job -- from files to means (parse + mark + metrics + means)
    import importlib

    t_imp = time.perf_counter()
    for module in IMPORTS[tool]:
        importlib.import_module(module)
    import_s = time.perf_counter() - t_imp
    t0 = time.perf_counter()
    values = WORKERS[tool](Path(judg), [Path(r) for r in runs])
    elapsed = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps({"seconds": elapsed, "import_s": import_s, "peak_mb": peak_mb, "values": values})
    )


def run_tool(tool: str, judg: Path, runs: list[Path], repeat: int) -> dict | None:
    best = None
    for _ in range(repeat):
        proc = subprocess.run(
            [sys.executable, __file__, "--worker", tool, str(judg), *map(str, runs)],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if proc.returncode != 0:
            return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if best is None or res["seconds"] < best["seconds"]:
            best = res
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small data, one run per tool")
    ap.add_argument("--repeat", type=int, default=None, help="runs per tool (default 3)")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "qasynset-bench"))
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker_main(args.worker[0], args.worker[1], args.worker[2:])
        return
    repeat = args.repeat or (1 if args.quick else 3)
    data = Path(args.data) / ("quick" if args.quick else "full")
    t0 = time.perf_counter()
    ensure_data(data, args.quick)
    print(f"data in {data} (ready after {time.perf_counter() - t0:.1f}s); min of {repeat} run(s)")
    print(
        f"{'workload':8} {'tool':12} {'seconds':>8} {'x pytrec':>9} {'import s':>8} "
        f"{'peak MB':>8}  means"
    )
    for wl in ("W1", "W2", "W2qa"):
        judg, runs = workload_files(data, wl)
        tools = ["engine"] if wl == "W2qa" else ["engine", "pytrec_eval", "ranx"]
        results = {t: run_tool(t, judg, runs, repeat) for t in tools}
        base = results.get("pytrec_eval") or {}
        for tool, res in results.items():
            if "error" in res:
                print(f"{wl:8} {tool:12} {'--':>8} {'--':>9} {'--':>8} {'--':>8}  {res['error']}")
                continue
            ratio = f"{res['seconds'] / base['seconds']:.2f}" if base.get("seconds") else "--"
            vals = " ".join(f"{k}={v:.4f}" for k, v in res["values"].items())
            print(
                f"{wl:8} {tool:12} {res['seconds']:8.3f} {ratio:>9} {res['import_s']:8.2f} "
                f"{res['peak_mb']:8.0f}  {vals}"
            )


if __name__ == "__main__":
    main()
