"""Issue 27, item 3: the compiled run reader (``_fastparse``, used by ``qa-score`` when
built) applies the one text rule of the Python line readers
(``text_rules.CONTROL_CHARACTERS``): it steps aside for a file holding a character the rule
refuses, so that the line reader refuses it naming the file, the line and the character.
Before, it read a run holding a vertical tab, ESC, DEL, U+0085, U+2028 or U+FEFF inside a
field (or in a TREC comment) and scored it, while ``QASYNSET_NO_ACCEL=1`` gave an error.

The in-process test runs with the reader in use and with it off (``make test-noaccel``);
the ``qa-score`` test runs the command both ways, whatever the switch of this process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import InputError
from evaluation.metrics.fast import available, read_inputs
from evaluation.metrics.judgment_parsers import parse_judgments_csv, parse_qrels
from evaluation.metrics.parsers import parse_run
from evaluation.metrics.text_rules import CONTROL_CHARACTERS

from .test_accel_switch import BUILT

ROOT = Path(__file__).resolve().parents[2]
REFUSED = [chr(i) for i in range(0x110000) if CONTROL_CHARACTERS.search(chr(i))]
# the new members of the rule and some of its old ones, for the command
SOME = ["\x0b", "\x01", "\x1b", "\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\ufeff"]
# what the rule leaves as text, which the readers read alike (or the C reader leaves)
KEPT = ["\xa0", "\xa9", "\u2027", "\u202a", "\u200b", "\ufefe", "\ufffd", "\u3000", "é"]

JUDGMENTS = b"question_id,synset_id,answer,level\nQ1,1,Paul,S\nQ1,2,John,A\n"
QRELS = "1 0 a 1\n1 0 b 2\n1 0 c 0\n"
# run files whose line 2 holds the character {c}, in each place a reader looks at
RUNS = {
    "qa inside an answer": "Q1\t1\tPaul\nQ1\t2\tJo{c}hn\n",
    "qa answer edge": "Q1\t1\tPaul\nQ1\t2\tJohn{c}\n",
    "qa question id": "Q1\t1\tPaul\nQ{c}1\t2\tJohn\n",
    "qa long line": "Q1\t1\tPaul\nQ1\t2\t" + "x" * 13 + "{c}" + "y" * 13 + "\n",
    "qa score": "Q1\t1\tPaul\t1\nQ1\t2\tJohn\t0.{c}5\n",
    "trec docno": "1 Q0 a 1 2.0 t\n1 Q0 b{c} 2 1.0 t\n",
    "trec tag": "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t{c}\n",
    "trec comment": "1 Q0 a 1 2.0 t\n# a note{c}\n1 Q0 b 2 1.0 t\n",
    "trec field after the tag": "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t x{c}y\n",
}


def _judgments(name: str):
    return (None, parse_judgments_csv(JUDGMENTS)) if name.startswith("qa") else (QRELS, None)


def _run(template: str, c: str) -> bytes:
    return template.replace("{c}", c).encode()


@pytest.mark.parametrize("name", sorted(RUNS))
def test_every_refused_character_is_left_to_the_line_reader(name):
    """Every character of the rule in each place: the line reader refuses the file on line
    2 naming the character, and the C reader (when in use) does not read it."""
    qrels, judgments = _judgments(name)
    for c in REFUSED:
        data = _run(RUNS[name], c)
        with pytest.raises(InputError) as e:
            parse_run(data, filename="r")
        assert [(i.file, i.line) for i in e.value.issues][:1] == [("r", 2)], (name, c)
        code = "NUL" if c == "\x00" else f"U+{ord(c):04X}"
        assert code in e.value.issues[0].message, (name, c)
        if available():
            got = read_inputs(qrels=qrels, judgments=judgments, runs=[("r", data)])
            assert got is None, f"{name}: the C reader read a run holding U+{ord(c):04X}"


def test_every_refused_character_at_every_offset_of_a_long_answer():
    """The C reader looks at 8 bytes at a time: a refused character (of 1 to 3 bytes) at
    every offset from the start of such a block, and across two, is still seen."""
    judgments = parse_judgments_csv(JUDGMENTS)
    for pad in range(17):
        for c in REFUSED:
            data = f"Q1\t1\tPaul\nQ1\t2\t{'ｘ' * (pad % 3)}{'x' * pad}{c}{'y' * 20}\n".encode()
            with pytest.raises(InputError, match="r:2: contains "):
                parse_run(data, filename="r")
            if available():
                assert read_inputs(qrels=None, judgments=judgments, runs=[("r", data)]) is None


# characters around the refused ones, byte by byte: other characters of the lead bytes
# 0xc2, 0xe2 and 0xef, and characters whose UTF-8 holds 0xbb, 0x80, 0xa8 or 0xbf
ALPHABET = [
    *SOME,
    *KEPT,
    "\u2000",
    "\u2080",
    "\u20a8",
    "\ufebb",
    "\uff1f",
    "\u30fb",
    "Ｃ",
    "\u00bb",
    "\u00bf",
    "\x80",
    "\x9f",
    "a",
    "b",
    " ",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(st.sampled_from(ALPHABET), min_size=1, max_size=12), min_size=1, max_size=6)
)
def test_random_answers_are_read_alike_or_left_to_the_line_reader(answers):
    data = "".join(f"Q1\t{i}\t{a}\n" for i, a in enumerate(answers, start=1)).encode()
    try:
        slow = list(parse_run(data, filename="r").text)
    except InputError:
        slow = None
    if not available():
        return
    got = read_inputs(qrels=None, judgments=parse_judgments_csv(JUDGMENTS), runs=[("r", data)])
    if slow is None:
        assert got is None
    elif got is not None:
        assert list(got[1][0].text) == slow


@pytest.mark.parametrize("name", sorted(RUNS))
def test_characters_the_rule_keeps_read_alike(name):
    """Neighbours of the refused characters (other UTF-8 lead bytes 0xc2, 0xe2 and 0xef,
    spaces) are text, or the C reader steps aside: never an error of one reader only."""
    qrels, judgments = _judgments(name)
    for c in KEPT:
        data = _run(RUNS[name], c)
        try:
            slow = parse_run(data, filename="r")
        except InputError:
            slow = None
        if not available():
            continue
        got = read_inputs(qrels=qrels, judgments=judgments, runs=[("r", data)])
        if slow is None:
            assert got is None, (name, c)
        elif got is not None:
            assert list(got[1][0].text) == list(slow.text), (name, c)


def test_a_bom_opens_a_run_for_both_readers():
    data = "\ufeffQ1\t1\tPaul\nQ1\t2\tJohn\n".encode()
    assert list(parse_run(data, filename="r").text) == ["Paul", "John"]
    if available():
        got = read_inputs(qrels=None, judgments=parse_judgments_csv(JUDGMENTS), runs=[("r", data)])
        assert got is not None and list(got[1][0].text) == ["Paul", "John"]
    # a second one is inside the first field
    with pytest.raises(InputError, match="r:1: contains U\\+FEFF"):
        parse_run(b"\xef\xbb\xbf" + data, filename="r")


def test_qrels_holding_a_refused_character_are_refused_alike():
    for c in SOME:
        data = f"1 0 a 1\n1 0 b{c} 2\n".encode()
        with pytest.raises(InputError, match=f"q:2: contains .*U\\+{ord(c):04X}"):
            parse_qrels(data, filename="q")
        if available():
            assert read_inputs(qrels=data, runs=[("r", b"1 Q0 a 1 1 t\n")]) is None


SCORE = """
import contextlib, io, json, sys
from evaluation.metrics import accel
from evaluation.metrics.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    out.append([code, stdout.getvalue(), stderr.getvalue()])
print(json.dumps({"accelerated": accel.fastparse is not None, "results": out}))
"""


def qa_score(calls: list[list[str]], *, accelerated: bool) -> dict:
    """``qa-score`` (its ``main``) on each argument list, in one process with the C reader
    on or off: the exit code, the output and the errors of each."""
    env = {k: v for k, v in os.environ.items() if k not in ("QASYNSET_NO_ACCEL",)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    if not accelerated:
        env["QASYNSET_NO_ACCEL"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", SCORE, json.dumps(calls)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
@pytest.mark.skipif(not BUILT, reason="the C accelerator was not built: one reader only")
def test_qa_score_gives_the_same_errors_with_and_without_the_accelerator(tmp_path):
    judgments, qrels = tmp_path / "j.csv", tmp_path / "qrels"
    judgments.write_bytes(JUDGMENTS)
    qrels.write_text(QRELS)
    calls, expected = [], []
    for name, template in sorted(RUNS.items()):
        for i, c in enumerate(SOME):
            run = tmp_path / f"{name.replace(' ', '-')}-{i}.run"
            run.write_bytes(_run(template, c))
            given = (
                ["--judgments", str(judgments)]
                if name.startswith("qa")
                else ["--qrels", str(qrels)]
            )
            calls.append([*given, str(run)])
            expected.append(f"{run}:2: contains ")
    on = qa_score(calls, accelerated=True)
    off = qa_score(calls, accelerated=False)
    assert (on["accelerated"], off["accelerated"]) == (True, False)
    assert on["results"] == off["results"]
    for (code, stdout, stderr), where in zip(on["results"], expected, strict=True):
        assert code == 1 and stdout == "" and where in stderr, (where, stderr)
