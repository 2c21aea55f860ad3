"""The C reader gives exactly what the Python parsers give, or steps aside; the last tests
(what every reader refuses, line ends) also run with the C reader off or not built."""

import os

import numpy as np
import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from evaluation.metrics import BASE_METRICS, InputError, evaluate
from evaluation.metrics.accel import why_unused
from evaluation.metrics.fast import available, read_inputs
from evaluation.metrics.judgment_parsers import parse_judgments_csv, parse_qrels
from evaluation.metrics.normalize import normalize_answer
from evaluation.metrics.parsers import parse_qa_run, parse_run

# tests of the C reader itself (the parsers' tests below run with or without it)
needs_c = pytest.mark.skipif(not available(), reason=str(why_unused()))
METRICS = [*BASE_METRICS, "p@5", "ndcg@10"]


def both(qrels: bytes | None, runs: list[tuple[str, bytes]], judgments_csv: bytes | None = None):
    if qrels is not None:
        fast = read_inputs(qrels=qrels, runs=runs)
        slow_j = parse_qrels(qrels, filename="q")
    else:
        slow_j = parse_judgments_csv(judgments_csv, filename="j")
        fast = read_inputs(qrels=None, judgments=slow_j, runs=runs)
    slow_r = [parse_run(data, filename=name) for name, data in runs]
    return fast, slow_j, slow_r


def same_scores(fast, slow_j, slow_r):
    assert fast is not None
    fj, fr = fast
    a = evaluate(fj, fr, METRICS)
    b = evaluate(slow_j, slow_r, METRICS)
    assert a.runs == b.runs
    for name in a.runs:
        pa, pb = a.per_question[name], b.per_question[name]
        assert list(pa.index) == list(pb.index)
        np.testing.assert_allclose(pa.to_numpy(), pb.to_numpy(), atol=1e-12)
    fa, fb = a.marked.frame(), b.marked.frame()
    assert fa.equals(fb)


@needs_c
def test_spaces_inside_a_field_are_text_for_both_readers():
    """A no-break, ideographic or odd ASCII space inside an answer is text (the line reader
    strips the edges only): the C reader reads such runs, with the same answers."""
    j = parse_judgments_csv(
        "question_id,synset_id,answer,level\nQ1,1,ＴＯＫＹＯ　ＤＯＭＥ,S\n".encode()
    )
    body = "Q1\t1\tＴＯＫＹＯ　ＤＯＭＥ\nQ1\t2\tPaul\u00a0McCartney\n".encode()
    fast = read_inputs(qrels=None, judgments=j, runs=[("r.tsv", body)])
    assert fast is not None
    slow = parse_qa_run(body, filename="r.tsv")
    expected = ["ＴＯＫＹＯ　ＤＯＭＥ", "Paul\u00a0McCartney"]
    assert list(fast[1][0].text) == list(slow.text) == expected
    # a vertical tab is a control character the forms refuse, so the line reader refuses
    # it too (issue 27) rather than reading it as a space
    with pytest.raises(InputError, match=r"r.tsv:3: contains the control character U\+000B"):
        parse_qa_run(body + b"Q1\t3\ta\x0bb\n", filename="r.tsv")


@needs_c
@pytest.mark.parametrize(
    ("qrels", "run"),
    [
        ("qrels.test", "results.test"),
        ("qrels.test.with-comments", "results.trunc"),
        ("qrels.rel_level", "results.test"),
        ("qrels.comment.test", "results.comment.test"),
    ],
)
def test_trec_eval_files(trec_data, qrels, run):
    runs = [(run, (trec_data / run).read_bytes())]
    same_scores(*both((trec_data / qrels).read_bytes(), runs))


@needs_c
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "3"]), st.sampled_from("abcdefgh"), st.integers(-1, 3)
        ),
        min_size=1,
        max_size=20,
        unique_by=lambda t: (t[0], t[1]),
    ),
    st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "4"]), st.sampled_from("abcdefghij"), st.integers(0, 3)
        ),
        min_size=1,
        max_size=25,
        unique_by=lambda t: (t[0], t[1]),
    ),
    st.sampled_from([" ", "\t", "  "]),
)
def test_random_trec(qrels, run, sep):
    qtext = "".join(f"{q}{sep}0{sep}{d}{sep}{g}\n" for q, d, g in qrels).encode()
    rtext = "".join(f"{q} Q0 {d} 0 {s / 2} tag\n" for q, d, s in run).encode()
    same_scores(*both(qtext, [("r", rtext)]))


@needs_c
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Q1", "Q2", "Q3"]),
            st.integers(1, 5),
            st.sampled_from(
                ["Paul", "paul", "John Lennon", "NIL", "千葉県", "ＣＨＩＢＡ", "x", "Ringo"]
            ),
        ),
        min_size=1,
        max_size=15,
        unique_by=lambda t: (t[0], t[1]),
    )
)
def test_random_qa(rows):
    judgments = (
        "question_id,synset_id,answer,level\nQ1,1,Paul,S\nQ1,2,John Lennon,A\n"
        "Q2,1,NIL,A\nQ3,1,Chiba,S\nQ3,1,千葉県,A\nQ3,,x,\n"
    ).encode()
    body = "".join(f"{q}\t{r}\t{a}\n" for q, r, a in rows).encode()
    same_scores(*both(None, [("run.tsv", body), ("other.tsv", body)], judgments))


@needs_c
@pytest.mark.parametrize(
    "body",
    [
        b"Q1\t1\t Paul\n",  # padded field: the Python reader strips it
        b"Q1\t1\tPaul\nQ1\t1\tJohn\n",  # duplicate rank: the Python reader reports it
        b"question_id,rank,answer\nQ1,1,Paul\n",
        b"Q1\t1\tPaul\xa0McCartney\n",  # not UTF-8
        b"Q1\t1\tPaul McCartney\xc2\xa0\n",  # a no-break space at an edge: stripped
        b"Q1\t1\t\xe3\x80\x80Paul\n",  # an ideographic space at an edge
        b"Q1\t1\tPaul\x0b\n",  # an odd ASCII space at an edge
        b"Q1\t1e0\tPaul\n",
    ],
)
def test_irregular_files_step_aside(body):
    j = parse_judgments_csv(b"question_id,synset_id,answer,level\nQ1,1,Paul,S\n")
    assert read_inputs(qrels=None, judgments=j, runs=[("r.tsv", body)]) is None


@needs_c
@pytest.mark.parametrize(
    ("qrels", "run"),
    [
        (b"1 0 a 1\n1 0 a 2\n", b"1 Q0 a 1 1 t\n"),  # a document judged twice
        (b"1 0 a 1\n", b"1 Q0 a 1 1 t\n1 Q0 a 2 0.5 t\n"),  # a document twice in a topic
        (b"1 0 a 1\n", b"# \x00 comment\n1 Q0 a 1 1 t\n"),  # NUL, even in a comment
        (b"1 0 a 1\n", b"# caf\xe9\n1 Q0 a 1 1 t\n"),  # not UTF-8, even in a comment
        (b"1 0 a 1\n", b"1 Q0 a 1 1e999 t\n"),  # a score that is not finite
        (b"1 0 a 1\n", b"1 Q0 a\x0bb 1 1 t\n"),  # a separator Python splits on
        (b"1 0 a 1\n", b"1 Q0 a\xe3\x80\x80b 1 1 t\n"),  # an ideographic space
    ],
)
def test_irregular_trec_files_step_aside(qrels, run):
    assert read_inputs(qrels=qrels, runs=[("r", run)]) is None


@needs_c
def test_topics_in_several_blocks_and_tied_scores():
    """Rows of a topic need not be together; ties are ordered by docno, descending."""
    qrels = b"1 0 a 1\n1 0 b 2\n2 0 c 1\n2 0 d 0\n"
    run = (
        b"2 Q0 c 1 0.5 t\n1 Q0 a 1 1 t\n2 Q0 d 2 0.5 t\n1 Q0 b 2 1 t\n1 Q0 z 3 2 t\n"
        b"2 Q0 e 3 0.25 t\n"
    )
    fast, slow_j, slow_r = both(qrels, [("r", run)])
    same_scores(fast, slow_j, slow_r)
    r = fast[1][0]
    assert list(zip(r.qid, r.text, strict=True)) == [
        ("2", "d"),
        ("2", "c"),
        ("2", "e"),
        ("1", "z"),
        ("1", "b"),
        ("1", "a"),
    ]
    assert list(r.score) == [0.5, 0.5, 0.25, 2.0, 1.0, 1.0]


_DECIMAL = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{frac}{exp}",
    st.sampled_from(["", "-", "+"]),
    st.text("0123456789", min_size=1, max_size=20),
    st.one_of(st.just(""), st.text("0123456789", max_size=20).map(lambda s: "." + s)),
    st.one_of(st.just(""), st.integers(-330, 330).map(lambda e: f"e{e}")),
)


@needs_c
@settings(max_examples=300, deadline=None)
@given(st.lists(_DECIMAL, min_size=1, max_size=30))
def test_scores_read_exactly_as_float_reads_them(scores):
    """The C reader's decimal parsing (exact fast path, else strtod) equals float()."""
    scores = [s for s in scores if abs(float(s)) != float("inf")] or ["1"]
    run = "".join(f"1 Q0 d{i} 1 {s} t\n" for i, s in enumerate(scores)).encode()
    fast, _, slow_r = both(b"1 0 d0 1\n", [("r", run)])
    assert fast is not None
    got = dict(zip(fast[1][0].text, fast[1][0].score, strict=True))
    want = {f"d{i}": float(s) for i, s in enumerate(scores)}
    assert {k: (v, np.signbit(v)) for k, v in got.items()} == {
        k: (v, np.signbit(v)) for k, v in want.items()
    }
    assert list(fast[1][0].text) == list(slow_r[0].text)


@needs_c
def test_many_runs_at_once(trec_data):
    """More files than one batch of anything: every run is read."""
    body = (trec_data / "results.test").read_bytes()
    runs = [(f"run{i}", body.replace(b"STANDARD", b"S%d" % i)) for i in range(80)]
    fast, _, slow_r = both((trec_data / "qrels.test").read_bytes(), runs)
    assert fast is not None and len(fast[1]) == 80
    assert [r.name for r in fast[1]] == [r.name for r in slow_r]


@needs_c
@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.characters(max_codepoint=127), max_size=15), max_size=20))
def test_ascii_keys_equal_normalize_answer(texts):
    from evaluation.metrics import _fastparse
    from evaluation.metrics.normalize import normalize_answer

    keys = _fastparse.ascii_keys([*texts, "Ｐａｕｌ", "café"])
    assert keys[-2:] == [None, None]  # not ASCII: left to Python (NFKC, case folding)
    assert keys[:-2] == [normalize_answer(t) for t in texts]


# characters whose keys depend on their neighbours or expand: combining marks, Hangul
# syllables and jamo, half-width katakana and its voiced marks, ligatures, final sigma,
# dotted I, odd spaces, punctuation, the widest NFKC expansion (U+FDFA)
TRICKY = (
    "aAzZ09 \t\x1c.,!?()-'\"éÉe\u0301\u0308\u0345\u0344ßẞİıΣσςﬁﬃ¨½²Ⅻ"
    "가각\u1100\u1161\u11a8ㄱㅏｶﾞﾟか\u3099\u309aガ\u3000\u00a0\u2028\u200b"
    "Ｐａｕｌ１２。、「」・～〜\ufdfa\u0915\u093c\u09be\u09c7\u0b47\u0b3e东京都ǅ\u1e9b\U0001d400"
)
item_texts = st.lists(
    st.text(st.sampled_from(TRICKY) | st.characters(blacklist_categories=("Cs",)), max_size=12),
    max_size=25,
)


@pytest.mark.slow
@needs_c
@settings(max_examples=300, deadline=None)
@given(item_texts)
def test_item_keys_in_c_equal_normalize_answer(texts):
    """match_items keys each item in C exactly as normalize_answer does, or leaves it to
    Python: item i is the only item of question i, whose one judged key is its own (and
    matches it unless it is empty)."""
    from evaluation.metrics import _fastparse
    from evaluation.metrics.normalize import NIL_KEY, char_table, normalize_answer, normalize_many

    texts = [*texts, "NIL", " nil.", "ｎｉｌ"]
    raw = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = np.concatenate(([0], np.cumsum([len(r) for r in raw]))).astype(np.int64)
    blob = b"".join(raw)
    points = np.frombuffer(_fastparse.code_points(blob), dtype=np.int32).tolist()
    assert points == sorted({ord(c) for t in texts for c in t if ord(c) > 127})
    keys = [normalize_answer(t) for t in texts]
    n = len(texts)
    found, nil, rest = _fastparse.match_items(
        blob,
        offsets,
        np.arange(n, dtype=np.int32),
        np.arange(n, dtype=np.int32),
        *char_table(points),
        keys,
        np.arange(n, dtype=np.int64),
    )
    found = np.frombuffer(found, dtype=np.int32)
    nil = np.frombuffer(nil, dtype=bool)
    rest = set(np.frombuffer(rest, dtype=np.int64).tolist())
    str_points = np.frombuffer(_fastparse.str_code_points("".join(texts)), dtype=np.int32)
    assert str_points.tolist() == points
    str_keys = _fastparse.str_keys(texts, *char_table(points))
    for i, key in enumerate(keys):
        if i in rest:  # a character whose key depends on its neighbours
            assert found[i] == -1 and not nil[i]
            assert str_keys[i] is None
        else:  # an empty key matches nothing, not even its own judged key
            assert found[i] == (i if key else -1), (texts[i], key)
            assert nil[i] == (key == NIL_KEY)
            assert str_keys[i] == key
    assert not rest & {n - 3, n - 2, n - 1}
    assert normalize_many(texts) == keys


@needs_c
def test_item_keys_in_c_leave_composing_characters_to_python():
    """Half-width katakana and its voiced mark compose (ｶﾞ is ガ), as do Hangul jamo:
    such items are keyed in Python, and match their judged spellings."""
    from evaluation.metrics.normalize import char_table

    table = dict(char_table(map(ord, "ｶﾞ가ㄱㅏé\u0301東"))[0])
    assert table[ord("ﾞ")] is None and table[ord("가")] is None and table[ord("ㅏ")] is None
    assert table[ord("\u0301")] is None
    assert table[ord("ｶ")] == "カ" and table[ord("東")] == "東" and table[ord("é")] == "é"
    judgments = "question_id,synset_id,answer,level\nQ1,1,ガ,S\nQ1,2,각,S\nQ2,1,é,S\n".encode()
    run = "Q1\t1\tｶﾞ\nQ1\t2\t\u1100\u1161\u11a8\nQ2\t1\te\u0301\n".encode()
    fast, slow_j, slow_r = both(None, [("r", run)], judgments)
    same_scores(fast, slow_j, slow_r)
    marked = evaluate(fast[0], fast[1], ["ap"]).marked
    assert marked.status.tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"Q1\tTrue\tPaul\n", "rank 'True' is not a positive integer"),
        (b"Q1\t1.0\tPaul\n", "rank '1.0' is not a positive integer"),
        (b"Q1\t1.\tPaul\n", "rank '1.' is not a positive integer"),
        (b"Q1\t1e3\tPaul\n", "rank '1e3' is not a positive integer"),
        (b"Q1\t10e-1\tPaul\n", "rank '10e-1' is not a positive integer"),
        (b"Q1\t1\xd9\xa3\tPaul\n", "rank '1\u0663' is not a positive integer"),
        (b"Q1\t1000000001\tPaul\n", "rank 1000000001 is too large (at most 1000000000)"),
        (b"Q1\t1\t\xc2\xa0\n", "empty answer for question 'Q1' at rank 1"),
        (b"Q1\t1\t\xe3\x80\x80\n", "empty answer for question 'Q1' at rank 1"),
        (b"Q1\t1\tPaul\rQ1\t1\tJohn\r", "question 'Q1' has rank 1 twice (line 1)"),
    ],
)
def test_every_reader_refuses_what_the_line_reader_refuses(body, error):
    """The C reader refuses these runs too (the C reader steps aside and
    the line reader names the error); a long file goes through the same readers."""
    j = parse_judgments_csv(b"question_id,synset_id,answer,level\nQ1,1,Paul,S\n")
    pad = b"".join(b"P%d\t1\tx\n" % i for i in range(5000))
    for data in (body, body + pad):
        with pytest.raises(InputError) as e:
            parse_run(data, filename="r.tsv")
        first = e.value.issues[0]
        assert (first.line, first.message) == (2 if body.endswith(b"\r") else 1, error)
        assert read_inputs(qrels=None, judgments=j, runs=[("r.tsv", data)]) is None


def test_lone_cr_ends_a_line_on_every_path():
    body = b"Q1\t1\tPaul\rQ1\t2\tJohn\rQ2\t1\tx"
    for data in (body, body.replace(b"\r", b"\r\n"), body.replace(b"\r", b"\n")):
        r = parse_run(data, filename="r.tsv")
        assert list(zip(r.qid, r.text, strict=True)) == [
            ("Q1", "Paul"),
            ("Q1", "John"),
            ("Q2", "x"),
        ]
    qrels = b"1 0 a 1\r1 0 b 0\r# note\r2 0 c 2\r"
    j = parse_qrels(qrels, filename="q")
    assert list(j.questions) == ["1", "2"] and len(j.str_text) == 3


# several runs at once: the C reader reads a question block of every run in turn, so runs
# that hold other questions, in other orders, with blocks of different lengths, must still
# each read as the line reader reads them alone
POOL = [
    "Paris",
    "paris.",
    "ＴＯＫＹＯ",
    "tokyo",
    "Café",
    "CAFE",
    "東京",
    "とうきょう",
    "NIL",
    "x y",
]
QIDS = ["Q1", "Q2", "Q3", "Q4", "Q5"]


@st.composite
def qa_run(draw) -> bytes:
    qids = draw(st.lists(st.sampled_from(QIDS), unique=True, min_size=1, max_size=5))
    lines = []
    for q in qids:
        answers = draw(
            st.lists(st.sampled_from([*POOL, "other", "Ｏｔｈｅｒ"]), max_size=6, unique=True)
        )
        lines += [f"{q}\t{rank}\t{a}" for rank, a in enumerate(answers, start=1)]
    if draw(st.booleans()):  # interleave the questions' lines
        lines = draw(st.permutations(lines))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return "".join(line + end for line in lines).encode()


@pytest.mark.slow
@needs_c
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", 200)), deadline=None)
@given(
    judged=st.lists(
        st.tuples(st.sampled_from(QIDS[:4]), st.sampled_from(POOL), st.sampled_from("SAB")),
        min_size=1,
        max_size=12,
        unique_by=lambda t: (t[0], normalize_answer(t[1])),
    ),
    runs=st.lists(qa_run(), min_size=2, max_size=5),
)
def test_several_runs_read_as_each_alone(judged, runs):
    rows = "".join(f"{q},{i % 3 + 1},{a},{lv}\n" for i, (q, a, lv) in enumerate(judged))
    judgments_csv = ("question_id,synset_id,answer,level\n" + rows).encode()
    try:
        judgments = parse_judgments_csv(judgments_csv, filename="j")
    except InputError:
        judgments = None
    assume(judgments is not None)  # each key is judged once (unique_by): read as drawn
    named = [(f"r{i}.tsv", body) for i, body in enumerate(runs)]
    try:
        for name, body in named:
            parse_qa_run(body, filename=name)
    except InputError:
        # a run repeating an answer: the C reader steps aside, for the line reader to say why
        event("refused by the line reader")
        assert read_inputs(qrels=None, judgments=judgments, runs=named) is None
    else:
        fast, slow_j, slow_r = both(None, named, judgments_csv)
        assume(fast is not None)  # the C reader may step aside: the line readers read these
        event("read by both")
        same_scores(fast, slow_j, slow_r)
