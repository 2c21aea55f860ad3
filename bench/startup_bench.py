"""Start-up time of ``manage.py`` over a bare ``python -c pass`` (issue 24 item 5: ``manage.py
help`` < 0.5 s over ``python -c pass``, and no scipy or pandas at start-up).

    .venv/bin/python bench/startup_bench.py            # 7 runs of each
    .venv/bin/python bench/startup_bench.py -n 15 --commands import_run,reliability

Runs each command ``-n`` times in a fresh interpreter and prints the minimum wall and CPU
(user + system, the child's own) seconds of each, and their difference from ``python -c
pass``: the minimum is the figure least disturbed by the other work of a shared machine.
``--commands`` adds ``manage.py <command> --help`` for each command named (it imports the
command's module, which ``help`` alone does not).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``, its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def best(argv: list[str], n: int) -> tuple[float, float]:
    """The minimum wall and the minimum CPU seconds of ``n`` runs of ``argv``."""
    runs = [_timed(argv) for _ in range(n)]
    return min(w for w, _ in runs), min(c for _, c in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=7, help="runs of each command (default 7)")
    parser.add_argument(
        "--commands", default="", help="comma list of management commands to time with --help"
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    python = sys.executable
    cases = [("python -c pass", [python, "-c", "pass"])]
    cases.append(("manage.py help", [python, "manage.py", "help"]))
    cases += [
        (f"manage.py {c} --help", [python, "manage.py", c, "--help"])
        for c in filter(None, args.commands.split(","))
    ]
    base_wall = base_cpu = 0.0
    print(f"{'':36} {'wall s':>8} {'CPU s':>8} {'+wall s':>8} {'+CPU s':>8}   (min of {args.n})")
    for name, argv in cases:
        wall, cpu = best(argv, args.n)
        if name == "python -c pass":
            base_wall, base_cpu = wall, cpu
        print(f"{name:36} {wall:8.3f} {cpu:8.3f} {wall - base_wall:8.3f} {cpu - base_cpu:8.3f}")


if __name__ == "__main__":
    main()
