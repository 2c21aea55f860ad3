"""QASYNSET_NO_ACCEL switches the C accelerator off: the module is never imported and the
Python line readers give the same scores (CI runs tests/metrics once each way)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREC = ROOT / "tests" / "data" / "trec_eval"

PROBE = """
import json, sys
from evaluation.metrics import accel, fast, normalize
from evaluation.metrics.judgment_parsers import parse_judgments_csv
j = parse_judgments_csv(
    b"question_id,synset_id,answer,level\\nQ1,1,Paul,S\\nQ2,1,Caf\\xc3\\xa9,A\\n")
got = fast.read_inputs(qrels=None, judgments=j,
                       runs=[("r.tsv", b"Q1\\t1\\tpaul.\\nQ2\\t1\\tCAFE\\n")])
keys = normalize.normalize_many(["  Sir  Paul.", "\\uff30\\uff41\\uff55\\uff4c"])
print(json.dumps({"loaded": "evaluation.metrics._fastparse" in sys.modules,
                  "available": fast.available(), "switched_off": accel.switched_off,
                  "ascii_keys": normalize._ascii_keys is not None, "fast_read": got is not None,
                  "keys": keys, "why": accel.why_unused()}))
"""

SCORE = """
import io, sys
from django.core.management import call_command
out = io.StringIO()
for args in sys.argv[1:]:
    call_command("score", *args.split("|"), "--format", "csv", stdout=out)
print(out.getvalue(), end="")
"""

BUILT = importlib.util.find_spec("evaluation.metrics._fastparse") is not None


def python(code: str, *args: str, switch: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "QASYNSET_NO_ACCEL"}
    if switch is not None:
        env["QASYNSET_NO_ACCEL"] = switch
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if "django" in code:
        code = "import django; django.setup()\n" + code
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("switch", ["1", "yes"])
def test_switch_keeps_the_c_module_out(switch):
    probe = json.loads(python(PROBE, switch=switch))
    assert probe == {
        "loaded": False,
        "available": False,
        "switched_off": True,
        "ascii_keys": False,
        "fast_read": False,
        "keys": ["sir paul", "paul"],
        "why": "the C accelerator is switched off (QASYNSET_NO_ACCEL is set)",
    }


@pytest.mark.skipif(
    not BUILT,
    reason="the C accelerator was not built (no C compiler at install time): nothing to switch on",
)
@pytest.mark.parametrize("switch", [None, "", "0"])
def test_accelerator_used_without_the_switch(switch):
    probe = json.loads(python(PROBE, switch=switch))
    assert probe == {
        "loaded": True,
        "available": True,
        "switched_off": False,
        "ascii_keys": True,
        "fast_read": True,
        "keys": ["sir paul", "paul"],
        "why": None,
    }


@pytest.mark.slow
def test_manage_score_prints_the_same_both_ways(tmp_path):
    """The C reader and the Python line readers give the same scores, TREC and QA."""
    judgments = tmp_path / "judgments.csv"
    judgments.write_text(
        "question_id,synset_id,answer,level\nQ1,1,Paul McCartney,S\n"
        "Q1,1,Paul,B\nQ1,2,John Lennon,A\nQ2,1,Café,S\nQ3,1,NIL,A\n",
        encoding="utf-8",
    )
    run = tmp_path / "run.tsv"
    run.write_text(
        "Q1\t1\tjohn  lennon\nQ1\t2\tPAUL.\nQ2\t1\tＣａｆé\nQ3\t1\tnil\nQ9\t1\tx\n",
        encoding="utf-8",
    )
    args = [
        f"--qrels|{TREC / 'qrels.test'}|{TREC / 'results.test'}",
        f"--judgments|{judgments}|{run}",
        f"--judgments|{judgments}|--match|exact|{run}",
    ]
    off = python(SCORE, *args, switch="1")
    on = python(SCORE, *args, switch=None)
    assert off == on
    assert off.count("run,question_id,") == 3 and "STANDARD,301," in off
