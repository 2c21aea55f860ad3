"""``qa-score`` as a whole process against pytrec_eval as a whole process, in one run.

    .venv/bin/python bench/qa_score_bench.py            # min of 3 runs of each process
    .venv/bin/python bench/qa_score_bench.py --quick    # smaller data, one run (smoke test)

Each measurement is one fresh process, from interpreter start to exit, with its output
written to a file: ``qa-score --format trec`` (per-question and mean lines, like
``trec_eval -q``; default metrics q_measure, r_measure, rr, ap, ndcg@5) against a small
pytrec_eval script that parses the same files, evaluates map, recip_rank and ndcg_cut_5
and writes the same kind of lines.  Reported: wall seconds and CPU seconds (user + sys of
the child; steadier than wall time on a shared machine), min over the runs, and the ratio
to pytrec_eval.  Workloads (seeded, written once under $TMPDIR/qasynset-bench):

  W1    1,000 topics x 1,000-deep TREC run, graded qrels     (bench/score_bench.py)
  W2    5,000 topics x 5 answers x 50 TREC runs               (bench/score_bench.py)
  QAu   5,000 questions x 5 answers x 50 QA runs against answer-synset judgments whose
        strings are Japanese, accented Latin and full-width forms; runs answer with
        other spellings (full-width/half-width, case, brackets and full stops)
  help  ``qa-score --help`` (start-up), next to ``python -c pass``

Targets: W1 and W2 <= 0.5 x pytrec_eval's process time; QAu <= 1 s.
``--qa-score CMD`` measures an installed console script instead of
``python -m evaluation.metrics.cli`` run from this tree.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

JP = ["東京都", "大阪府", "京都市", "ディズニーランド", "富士山", "北海道", "川端康成", "雪国"]
LATIN = ["Café", "Zürich", "São Paulo", "Ångström", "Crème Brûlée", "Málaga", "Kraków", "Dvořák"]


def _fullwidth(text: str) -> str:
    """ASCII letters, digits and signs as full-width forms, the space as U+3000."""
    return "".join(
        "\u3000" if c == " " else chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text
    )


def make_qau(d: Path, topics: int, runs: int, answers: int = 5) -> None:
    import numpy as np

    rng = np.random.default_rng(4)
    levels = ["S", "A", "B"]
    pools: list[list[str]] = []
    with open(d / "qau.judgments.csv", "w", encoding="utf-8") as f:
        f.write("question_id,synset_id,answer,level\n")
        for t in range(topics):
            pool = []
            for s in range(1 + int(rng.integers(0, 4))):
                base = (JP if (t + s) % 2 else LATIN)[int(rng.integers(0, 8))]
                for k in range(1 + int(rng.integers(0, 3))):
                    text = f"{base} {t}-{s}" + ("" if k == 0 else f" 第{k}")
                    f.write(f"Q{t},{s + 1},{text},{levels[min(k, 2)]}\n")
                    pool.append(text)
            for w in range(2):
                text = f"{LATIN[(t + w) % 8]} ≠ {t}-{w}"
                f.write(f"Q{t},,{text},\n")
                pool.append(text)
            pool += [f"{JP[(t + u) % 8]}？ {t}-{u}" for u in range(3)]
            pools.append(pool)
    variants = [
        lambda x: x,
        _fullwidth,
        str.upper,
        lambda x: f"「{x}」",
        lambda x: x + "。",
        lambda x: _fullwidth(x.upper()),
    ]
    for k in range(runs):
        with open(d / f"qau.run{k:02d}.tsv", "w", encoding="utf-8") as r:
            for t in range(topics):
                pool = pools[t]
                pick = rng.choice(len(pool), size=min(answers, len(pool)), replace=False)
                vs = rng.integers(0, len(variants), size=len(pick))
                r.writelines(
                    f"Q{t}\t{i + 1}\t{variants[v](pool[p])}\n"
                    for i, (p, v) in enumerate(zip(pick, vs, strict=True))
                )


def ensure_data(d: Path, quick: bool) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import score_bench

    score_bench.ensure_data(d, quick)
    stamp = d / ("stamp-qau-quick" if quick else "stamp-qau")
    if not stamp.exists():
        make_qau(d, 500 if quick else 5000, 10 if quick else 50)
        stamp.write_text("ok")


def workloads(d: Path) -> dict[str, tuple[str, Path, list[Path]]]:
    return {
        "W1": ("--qrels", d / "w1.qrels", [d / "w1.run"]),
        "W2": ("--qrels", d / "w2.qrels", sorted(d.glob("w2.run*"))),
        "QAu": ("--judgments", d / "qau.judgments.csv", sorted(d.glob("qau.run*.tsv"))),
    }


# -- the pytrec_eval process ----------------------------------------------------------------
def pytrec_main(qrels_path: str, run_paths: list[str]) -> None:
    import pytrec_eval

    with open(qrels_path) as f:
        qrel = pytrec_eval.parse_qrel(f)
    measures = {"map": "map", "recip_rank": "recip_rank", "ndcg_cut_5": "ndcg_cut_5"}
    ev = pytrec_eval.RelevanceEvaluator(qrel, set(measures))
    out = []
    for path in run_paths:
        with open(path) as f:
            res = ev.evaluate(pytrec_eval.parse_run(f))
        out.append(f"runid\tall\t{Path(path).name}")
        for qid, values in res.items():
            out.extend(f"{m}\t{qid}\t{values[m]:.4f}" for m in measures)
        n = len(qrel)  # -c: topics absent from a run count as zeros
        out.extend(f"{m}\tall\t{sum(v[m] for v in res.values()) / n:.4f}" for m in measures)
    sys.stdout.write("\n".join(out) + "\n")


# -- measuring ------------------------------------------------------------------------------
def measure(cmd: list[str], repeat: int) -> dict:
    """Min wall and CPU seconds of ``cmd`` as a fresh process, and its output."""
    best: dict = {}
    with tempfile.TemporaryFile() as out:
        for _ in range(repeat):
            out.seek(0)
            out.truncate()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            done = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.PIPE)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                return {"error": done.stderr.decode(errors="replace").strip()[-300:]}
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best["wall"] = min(best.get("wall", wall), wall)
            best["cpu"] = min(best.get("cpu", cpu), cpu)
        out.seek(0)
        best["out"] = out.read().decode()
    return best


def mean_of(output: str, metric: str) -> float | None:
    """The mean over runs of ``metric``'s ``all`` lines."""
    vals = [
        float(line.split("\t")[2])
        for line in output.splitlines()
        if line.startswith(metric + "\tall\t")
    ]
    return sum(vals) / len(vals) if vals else None


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="small data, one run per process")
    ap.add_argument("--repeat", type=int, default=None, help="runs per process (default 3)")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "qasynset-bench"))
    ap.add_argument(
        "--qa-score",
        default=None,
        metavar="CMD",
        help="the command to measure (default: python -m evaluation.metrics.cli)",
    )
    ap.add_argument("--pytrec", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.pytrec:
        pytrec_main(args.pytrec[0], args.pytrec[1:])
        return
    repeat = args.repeat or (1 if args.quick else 3)
    data = Path(args.data) / ("quick" if args.quick else "full")
    t0 = time.perf_counter()
    ensure_data(data, args.quick)
    qa_score = (
        shlex.split(args.qa_score)
        if args.qa_score
        else [sys.executable, "-m", "evaluation.metrics.cli"]
    )
    print(
        f"data in {data} (ready after {time.perf_counter() - t0:.1f}s); min of {repeat} "
        f"run(s); qa-score = {' '.join(qa_score)}"
    )
    print(
        f"{'workload':8} {'process':12} {'wall s':>7} {'cpu s':>7} {'x pytrec':>9} "
        f"{'x (cpu)':>8}  means (ap, rr)"
    )
    for name, (flag, judg, runs) in workloads(data).items():
        ours = measure([*qa_score, flag, str(judg), *map(str, runs), "--format", "trec"], repeat)
        results = {"qa-score": ours}
        if flag == "--qrels":
            results["pytrec_eval"] = measure(
                [sys.executable, __file__, "--pytrec", str(judg), *map(str, runs)], repeat
            )
        base = results.get("pytrec_eval", {})
        for tool, res in results.items():
            if "error" in res:
                print(f"{name:8} {tool:12} failed: {res['error']}")
                continue
            ratio = f"{res['wall'] / base['wall']:.2f}" if base.get("wall") else "--"
            cpu_ratio = f"{res['cpu'] / base['cpu']:.2f}" if base.get("cpu") else "--"
            ap_m = mean_of(res["out"], "ap" if tool == "qa-score" else "map")
            rr_m = mean_of(res["out"], "rr" if tool == "qa-score" else "recip_rank")
            means = f"ap={ap_m:.4f} rr={rr_m:.4f}" if ap_m is not None else ""
            print(
                f"{name:8} {tool:12} {res['wall']:7.3f} {res['cpu']:7.3f} {ratio:>9} "
                f"{cpu_ratio:>8}  {means}"
            )
        target = "<= 1 s" if name == "QAu" else "<= 0.5 x pytrec_eval"
        met = (
            ours.get("wall", 99) <= 1.0
            if name == "QAu"
            else bool(base.get("wall")) and ours.get("wall", 99) <= 0.5 * base["wall"]
        )
        print(f"{'':8} target {target}: {'met' if met else 'NOT met'} (wall)")
    helps = measure([*qa_score, "--help"], max(repeat, 5))
    bare = measure([sys.executable, "-c", "pass"], max(repeat, 5))
    print(
        f"{'help':8} {'qa-score':12} {helps['wall']:7.3f} {helps['cpu']:7.3f}   "
        f"(python -c pass: {bare['wall']:.3f} wall, {bare['cpu']:.3f} cpu)"
    )


if __name__ == "__main__":
    main()
