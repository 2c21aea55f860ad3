"""Peak memory and wall time of ``manage.py import_collection`` on hostile archives: a
small zip whose members unpack to nearly ``ARCHIVE_MAX_MB`` (the red team's case of issue
27: 1.7 MB unpacking to 480 MB), and one with deeply nested JSON.

    .venv/bin/python bench/archive_memory.py                 # 480 MB unpacked
    .venv/bin/python bench/archive_memory.py --mb 48         # smoke

Builds each archive under $TMPDIR (a valid version 4 manifest, one question, one run, and
``run_answers.csv`` holding ``--mb`` MB of rows: ``repeated``, one row over and over, the
red team's bomb, refused for its repeated ranks; ``distinct``, rows with distinct ranks;
or the largest tables the default budget admits: ``strings``, 490,000 strings of one
question (``--mb`` 35 or more), ``events``, 30 MB of small events (``--mb`` 30 or more)),
migrates a throw-away SQLite database and runs the command under ``/usr/bin/time -v``,
printing the compressed size, the unpacked size, peak RSS, wall time, the exit status and
the command's last line of output.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(ROOT / ".venv" / "bin" / "python")

MANIFEST = {
    "format": "qasynset-collection",
    "version": 4,
    "exported_at": "2026-11-23T10:00:00+00:00",
    "collection": {
        "name": "Bomb",
        "description": "",
        "guidelines": "",
        "matching_mode": "normalized",
        "max_output_size": 100,
        "open_for_submissions": True,
        "leaderboard_published": False,
        "judgment_version": 1,
        "slug": "bomb",
        "judgments_changed_at": "",
    },
    "levels": [{"code": "S", "label": "Sound", "gain": 1, "order": 0, "examples": ""}],
    "members": [{"username": "org", "role": "organizer"}],
}
RUN = {
    "name": "R1",
    "owner": "org",
    "description": "",
    "uploaded_at": "2026-11-23T10:00:00+00:00",
    "source_name": "r1.txt",
    "sha256": "",
    "format": "trec",
}
HEADERS = {
    "questions.csv": "question_id,question,status,notes,version,assessors\n",
    "synsets.csv": "id,question_id,synset_id,label,note\n",
    "strings.csv": (
        "id,question_id,synset_id,answer,variants,key,level,source,judged_by,judged_at,created_at\n"
    ),
    "layers.csv": (
        "question_id,assessor,k,adjudicator,gold_at,version,started_at,done_at,seconds\n"
    ),
    "layer_judgments.csv": "question_id,assessor,string_id,synset_id,level,judged_at\n",
}


_ANSWERS = ("repeated", "distinct")


def _answers(mb: int, kind: str):
    """Chunks of run_answers.csv text, ``mb`` MB in all."""
    yield "run,question_id,rank,answer,key,score\n"
    total, rank, target = 0, 0, mb * 1024 * 1024
    line = "R1,Q1,1,the answer,the answer,\n"
    while total < target:
        if kind == "repeated":
            chunk = line * 10_000
        else:
            chunk = "".join(
                f"R1,Q1,{r},answer {r},answer {r},\n" for r in range(rank + 1, rank + 10_001)
            )
            rank += 10_000
        total += len(chunk)
        yield chunk


def _strings(rows: int):
    """Chunks of strings.csv: ``rows`` unjudged strings of one question."""
    yield HEADERS["strings.csv"]
    for start in range(1, rows + 1, 10_000):
        yield "".join(
            f"{i},Q1,,answer {i},,answer {i},,flat,,,2026-11-23T10:00:00+00:00\n"
            for i in range(start, min(start + 10_000, rows + 1))
        )


def _events(mb: int):
    """Chunks of events.jsonl, ``mb`` MB of small events."""
    total, i, target = 0, 0, mb * 1024 * 1024
    while total < target:
        chunk = "".join(
            json.dumps(
                {
                    "id": n,
                    "question_id": "Q1",
                    "user": "org",
                    "action": "note",
                    "before": {},
                    "after": {},
                    "created_at": "2026-11-23T10:00:00+00:00",
                    "layer": None,
                }
            )
            + "\n"
            for n in range(i + 1, i + 10_001)
        )
        i += 10_000
        total += len(chunk)
        yield chunk


def build(path: Path, *, mb: int, kind: str) -> int:
    """Write the archive; returns its unpacked size in bytes."""
    unpacked = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        members = {
            "manifest.json": json.dumps(MANIFEST),
            "questions.csv": HEADERS["questions.csv"] + "Q1,What?,todo,,0,\n",
            "synsets.csv": HEADERS["synsets.csv"],
            "strings.csv": HEADERS["strings.csv"],
            "events.jsonl": "",
            "runs.json": json.dumps([RUN]),
            "layers.csv": HEADERS["layers.csv"],
            "layer_judgments.csv": HEADERS["layer_judgments.csv"],
        }
        streams = {"run_answers.csv": _answers(mb if kind in _ANSWERS else 0, kind)}
        if kind == "nested":
            members["events.jsonl"] = "[" * 100_000 + "]" * 100_000 + "\n"
        elif kind == "strings":
            streams["strings.csv"] = _strings(min(mb * 1024 * 1024 // 70, 490_000))
        elif kind == "events":
            streams["events.jsonl"] = _events(min(mb, 30))
        for name, text in members.items():
            if name not in streams:
                z.writestr(name, text)
                unpacked += len(text.encode())
        for name, chunks in streams.items():
            with z.open(name, "w") as f:
                for chunk in chunks:
                    body = chunk.encode()
                    f.write(body)
                    unpacked += len(body)
    return unpacked


def measure(archive: Path, env: dict, slug: str) -> dict:
    """Peak RSS (MB), wall time (s), exit status and last output line of the import."""
    start = time.perf_counter()
    command = [PYTHON, "manage.py", "import_collection", str(archive), "--slug", slug]
    proc = subprocess.run(
        ["/usr/bin/time", "-v", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    out = [
        line
        for line in (proc.stdout + proc.stderr).splitlines()
        if line.strip() and not line.startswith("\t")
    ]
    return {
        "peak_rss_mb": int(rss.group(1)) / 1024 if rss else float("nan"),
        "wall_s": wall,
        "status": proc.returncode,
        "last": out[-1][:160] if out else "",
        "first": out[0][:160] if out else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=480, help="MB of run answers (default 480)")
    parser.add_argument(
        "--kinds",
        default="repeated,distinct,nested,strings,events",
        help="comma list of archives to try",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # production settings: in debug, Django keeps the last 9,000 queries' text
        env = dict(
            os.environ,
            DATABASE_URL=f"sqlite:///{tmp}/bench.sqlite3",
            DJANGO_DEBUG="0",
            DJANGO_SECRET_KEY="bench-archive-memory-not-secret",
        )
        subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        for i, kind in enumerate(args.kinds.split(",")):
            archive = Path(tmp) / f"{kind}.zip"
            unpacked = build(archive, mb=args.mb, kind=kind)
            r = measure(archive, env, f"bomb-{i}")
            print(
                f"{kind:9} zip {archive.stat().st_size / 1048576:6.2f} MB  unpacked "
                f"{unpacked / 1048576:7.1f} MB  peak RSS {r['peak_rss_mb']:7.1f} MB  "
                f"wall {r['wall_s']:6.1f} s  exit {r['status']}"
            )
            print(f"          {r['first']}")
            if r["last"] != r["first"]:
                print(f"          {r['last']}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
