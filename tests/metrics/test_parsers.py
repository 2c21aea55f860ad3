"""Parsers: every format of docs/formats.md, encodings, and specific errors."""

import pytest

from evaluation.metrics import InputError
from evaluation.metrics.judgment_parsers import parse_judgments_csv, parse_qrels
from evaluation.metrics.parsers import (
    detect_run_format,
    parse_flat_answers,
    parse_qa_run,
    parse_questions_csv,
    parse_run,
    parse_trec_run,
)


def errors(fn, data, **kw):
    with pytest.raises(InputError) as e:
        fn(data, **kw)
    return [(i.line, i.message) for i in e.value.issues]


JUDGMENTS = (
    "question_id,synset_id,answer,level,question\n"
    "Q1,1,Paul McCartney,S,Who played in the Beatles?\n"
    "Q1,1,Paul,B,\n"
    "Q1,2,John Lennon,S,\n"
    "Q1,,Yoko Ono,,\n"
    "Q2,1,NIL,A,What is love?\n"
)


def test_judgments_csv_round_trip_fields():
    j = parse_judgments_csv(JUDGMENTS.encode(), filename="j.csv")
    assert list(j.questions) == ["Q1", "Q2"]
    assert list(j.synset_counts()) == [2, 1]
    assert list(j.str_synset) == [0, 0, 1, -1, 2]
    assert j.syn_nil.tolist() == [False, False, True]


@pytest.mark.parametrize("prefix,newline", [(b"", b"\n"), (b"\xef\xbb\xbf", b"\r\n")])
def test_bom_and_crlf_and_blank_lines(prefix, newline):
    data = prefix + JUDGMENTS.replace("\n", "\n\n").encode().replace(b"\n", newline)
    j = parse_judgments_csv(data, filename="j.csv")
    assert j.nq == 2 and len(j.str_text) == 5
    assert "Paul McCartney" in list(j.str_text)


def test_judgments_errors_have_lines_and_reasons():
    bad = (
        "question_id,synset_id,answer,level\n"
        "Q1,1,Paul,S\n"
        "Q1,2,paul,S\n"  # same normalized string in a second synset
        "Q1,3,Ringo,X\n"  # unknown level
        ",1,George,S\n"  # no question id
        "Q1,4,,S\n"  # no answer
        "Q1,5,John,\n"  # synset without level
    )
    errs = errors(parse_judgments_csv, bad.encode(), filename="j.csv")
    lines = [ln for ln, _ in errs]
    assert lines == [3, 4, 5, 6, 7]  # every error at once: the rows' and the cross-row ones
    assert errs[0][0] == 3 and 'matches "Paul" on line 2 (synset 1, level S)' in errs[0][1]
    assert "unknown level 'X'" in errs[1][1]


def _judgment_columns(j):
    return (
        j.questions.tolist(),
        j.str_q.tolist(),
        j.str_text.tolist(),
        j.str_key.tolist(),
        j.str_synset.tolist(),
        j.str_level.tolist(),
        j.str_nil.tolist(),
        j.syn_label.tolist(),
    )


@pytest.mark.parametrize(
    "body",
    [
        JUDGMENTS,
        "Answer,LEVEL,question_id,synset_id,extra\n Paul ,S, Q1,1,x\npaul.,S,Q1,1,\nnil,A,Q2,a,\n",
        "question_id,synset_id,answer,level\nQ1,1,Ｐａｕｌ,S\nQ1,1,paul,S\nQ1,,Yoko,\n",
        "question_id,synset_id,answer,level\nQ1,1,O'Brien,S\nQ1,1,o'brien',S\n",
    ],
)
def test_plain_judgments_read_as_the_line_reader_reads_them(body):
    """A plain judgments file (no quotes, one good row per line) is read by whole-column
    operations; the same file in another form (CRLF: the csv line reader) gives the same."""
    from evaluation.metrics.judgment_parsers import _plain_judgments

    assert _plain_judgments(body, ("S", "A", "B")) is not None
    assert _plain_judgments(body.replace("\n", "\r\n"), ("S", "A", "B")) is None
    plain = parse_judgments_csv(body.encode(), filename="j.csv")
    crlf = parse_judgments_csv(body.replace("\n", "\r\n").encode(), filename="j.csv")
    assert _judgment_columns(plain) == _judgment_columns(crlf)


@pytest.mark.parametrize(
    "body",
    [
        "question_id,synset_id,answer,level\nQ1,1,Paul,S\n\nQ1,2,paul,S\n",  # blank line
        "question_id,synset_id,answer,level\nQ1,1,Paul,S\nQ1,2,paul\n",  # short row
        "question_id,synset_id,answer,level\nQ1,1,Paul,S\nQ1,2,Ringo,X\n",  # level
        "question_id,synset_id,answer,level\nQ1,1,Paul,S\nQ1,2,,S\n",  # no answer
        "question_id,synset_id,answer,level\nQ1,1,Paul,S\n,2,John,S\n",  # no question
        "question_id,synset_id,answer,level\nQ1,1,Paul,S\nQ1,2,John,\n",  # no level
        "question_id,synset_id,answer,level\nQ1,1,'=Paul,S\n",  # a formula escape
        "question_id,synset_id,answer,level\n'Q1,1,Paul,S\n",  # a quote first
        "question_id,synset_id,answer,answer,level\nQ1,1,Paul,x,S\n",  # a column twice
        "question_id,synset_id,answer,level\n",  # no rows
    ],
)
def test_other_judgments_files_go_to_the_line_reader(body):
    from evaluation.metrics.judgment_parsers import _plain_judgments

    assert _plain_judgments(body, ("S", "A", "B")) is None


def test_plain_judgments_errors_have_lines():
    """A conflict found when the judgments are built names the lines of a plain file."""
    bad = "question_id,synset_id,answer,level\nQ1,1,Paul,S\nQ2,1,x,S\nQ1,2,paul,S\n"
    errs = errors(parse_judgments_csv, bad.encode(), filename="j.csv")
    assert errs == errors(parse_judgments_csv, bad.replace("\n", "\r\n").encode(), filename="j.csv")
    assert errs[0][0] == 4 and 'matches "Paul" on line 2 (synset 1, level S)' in errs[0][1]


def test_judgments_missing_header_column():
    errs = errors(parse_judgments_csv, b"question_id,answer,level\nQ1,x,S\n", filename="j.csv")
    assert errs[0][0] == 1 and "synset_id" in errs[0][1]


def test_at_least_20_errors_are_reported():
    body = "question_id,synset_id,answer,level\n" + "".join(f"Q{i},1,a,Z\n" for i in range(50))
    with pytest.raises(InputError) as e:
        parse_judgments_csv(body.encode(), filename="j.csv")
    assert len(e.value.issues) == 50
    text = e.value.format()
    assert text.count("j.csv:") == 20 and "30 more" in text


def test_invalid_utf8_names_the_line():
    data = b"question_id,synset_id,answer,level\nQ1,1,ok,S\n" + b"Q1,2,\xff\xfe,S\n"
    errs = errors(parse_judgments_csv, data, filename="j.csv")
    assert errs[0][0] == 3 and "UTF-8" in errs[0][1]


def test_nul_byte_is_an_error():
    errs = errors(parse_qa_run, b"Q1\t1\tab\x00c\n", filename="r.tsv")
    assert errs == [(1, "contains a NUL byte")]


def test_questions_csv():
    rows = parse_questions_csv(
        b'question_id,question,topic\nQ1,"Who, really?",music\n', filename="q.csv"
    )
    assert rows[0].question_id == "Q1" and rows[0].text == "Who, really?"
    assert rows[0].extra == {"topic": "music"}
    errs = errors(parse_questions_csv, b"question_id,question\nQ1,a\nQ1,b\n", filename="q.csv")
    assert errs == [(3, "question_id 'Q1' repeats line 2")]


def test_flat_answers():
    rows = parse_flat_answers(b"question_id,answer\nQ1,Paul\nQ1,John\n", filename="f.csv")
    assert [(r.question_id, r.answer, r.line) for r in rows] == [
        ("Q1", "Paul", 2),
        ("Q1", "John", 3),
    ]
    errs = errors(parse_flat_answers, b"question_id,answer\nQ1,\n", filename="f.csv")
    assert errs[0][0] == 2 and "empty answer" in errs[0][1]


def test_qa_run_tsv_orders_by_rank_and_keeps_question_groups():
    r = parse_qa_run(b"Q2\t2\tb\nQ1\t1\tx\nQ2\t1\ta\t0.5\n\n", filename="AF.tsv")
    assert r.name == "AF"
    assert list(zip(r.qid, r.text, strict=True)) == [("Q2", "a"), ("Q2", "b"), ("Q1", "x")]


def test_qa_run_csv_with_header_and_quotes():
    r = parse_qa_run(
        b'question_id,rank,answer,score\nQ1,2,"Lennon, John",\nQ1,1,Paul,0.9\n', filename="r.csv"
    )
    assert list(r.text) == ["Paul", "Lennon, John"]


def test_qa_run_errors():
    data = b"Q1\t1\ta\nQ1\t1\tb\nQ1\tx\tc\nQ1\t2\nQ1\t3\t\nQ1\t4\td\tnope\n"
    errs = errors(parse_qa_run, data, filename="r.tsv")
    assert [ln for ln, _ in errs] == [2, 3, 4, 5, 6]
    assert "rank 1 twice (line 1)" in errs[0][1]
    assert "not a positive integer" in errs[1][1]
    assert "found 2" in errs[2][1]
    assert "empty answer" in errs[3][1]
    assert "not a number" in errs[4][1]


def test_trec_run_order_is_score_then_docno_descending():
    data = b"1 Q0 a 1 0.5 t\n1 Q0 c 2 0.5 t\n1 Q0 b 3 0.9 t\n2 Q0 z 1 1 t\n# note\n"
    r = parse_trec_run(data, filename="run")
    assert r.name == "t"
    assert list(zip(r.qid, r.text, strict=True)) == [("1", "b"), ("1", "c"), ("1", "a"), ("2", "z")]


def test_trec_run_duplicate_docno_and_bad_fields():
    data = b"1 Q0 a 1 0.5 t\n1 Q0 a 2 0.4 t\n1 Q0 b x 0.4 t\n1 Q0 c 3 high t\n1 Q0 d\n"
    errs = errors(parse_trec_run, data, filename="run")
    assert [ln for ln, _ in errs] == [2, 4, 5]  # the rank column is ignored, as in trec_eval
    assert "appears twice" in errs[0][1] and "line 1" in errs[0][1]


def test_qrels_parse_and_errors():
    j = parse_qrels(b"# c\n1 0 a 2\n1 0 b 0\n1 0 c -1\n2 0 a 1\n", filename="qrels")
    assert j.levels == ("2", "1") and j.gains == (2.0, 1.0)
    assert list(j.synset_counts()) == [1, 1]
    errs = errors(parse_qrels, b"1 0 a 1\n1 0 a 2\n1 0 b x\n1 0 c\n", filename="qrels")
    assert [ln for ln, _ in errs] == [2, 3, 4]


def test_detect_run_format():
    assert detect_run_format(b"Q1\t1\tPaul McCartney\n") == "qa"
    assert detect_run_format(b"question_id,rank,answer\n") == "qa"
    assert detect_run_format(b"301\tQ0\tFR9-1\t1\t2.1\tSTANDARD\n") == "trec"
    assert detect_run_format(b"# c\n301 Q0 FR9-1 1 2.1 STANDARD junk\n") == "trec"
    assert parse_run(b"Q1\t1\tone two three four five six\n").text[0] == (
        "one two three four five six"
    )


def test_empty_files_are_errors():
    for fn in (parse_qa_run, parse_trec_run, parse_qrels):
        assert errors(fn, b"\n\n", filename="f")
    assert errors(parse_judgments_csv, b"", filename="f")


def test_large_judgments_file():
    from evaluation.metrics.judgment_parsers import read_judgment_rows

    lines = ["question_id,synset_id,answer,level"]
    for q in range(3000):
        lines += [
            f'Q{q},1,"Answer {q}, one",S',
            f"Q{q},1, answer {q} b ,B",
            f"Q{q},,wrong {q},",
            f"Q{q},2,=formula {q},A",
        ]
    data = ("\n".join(lines) + "\n\n").encode()
    rows = read_judgment_rows(data)
    assert [r.answer for r in rows][:4] == ["Answer 0, one", "answer 0 b", "wrong 0", "=formula 0"]
    j1 = parse_judgments_csv(data)
    assert list(j1.str_text) == [r.answer for r in rows]
    # a conflict between rows is reported with its line number
    bad = data + b'Q7,2,"answer 7,  ONE",A\n'
    errs = errors(parse_judgments_csv, bad, filename="j.csv")
    assert errs[0][0] == len(lines) + 2 and "(synset 1, level S)" in errs[0][1]


def test_overlong_lines_are_refused():
    from evaluation.metrics.parsers import MAX_LINE

    long_answer = "x" * (MAX_LINE + 1)
    errs = errors(parse_qa_run, f"Q1\t1\tok\nQ1\t2\t{long_answer}\n".encode(), filename="r")
    assert errs[0][0] == 2 and "characters long" in errs[0][1]
    errs = errors(
        parse_judgments_csv,
        (f"question_id,synset_id,answer,level\nQ1,1,{long_answer},S\n").encode(),
        filename="j",
    )
    assert errs[0][0] == 2 and "characters long" in errs[0][1]


def test_trec_docnos_with_double_quotes_are_read_as_they_are():
    """trec_eval splits lines on blanks; a quote is part of the docno."""
    run = parse_trec_run(b'Q1 Q0 "a 1 9 tag\nQ1 Q0 b" 2 8 tag\nQ1 Q0 "c" 3 7 tag\n')
    assert list(run.text) == ['"a', 'b"', '"c"']


def test_a_qa_answer_reads_the_same_whatever_the_other_lines():
    """Blanks around an answer (U+3000 too) go whichever reader reads the file."""
    alone = parse_qa_run("Q1\t1\ta\u3000\n".encode())
    with_padded_line = parse_qa_run("Q1\t1\ta\u3000\nQ1\t2\tb \n".encode())
    assert list(alone.text) == list(with_padded_line.text)[:1]


def test_run_answer_lines_counts_what_the_line_reader_reads_or_refuses():
    from evaluation.metrics.parsers import run_answer_lines

    tsv = "\ufeffQ1\t1\ta\n\n  \t \r\nQ1\tx\tbad\r\nQ2\t1\t\u3000b\n\u3000\n"
    assert run_answer_lines(tsv.encode(), fmt="qa") == 3
    assert run_answer_lines(tsv, fmt="qa") == 3
    # a TREC run's comments and blank lines are no answers
    trec = "# a comment\nQ1 Q0 d1 1 1.0 t\n\n   # indented comment\nQ1 Q0 d2 2 0.5 t\nbad\n"
    assert run_answer_lines(trec.encode(), fmt="trec") == 3
    # a CSV run: its header is none, a quoted answer over two lines is one, blank records
    # (commas only) are none
    csv = 'question_id,rank,answer\nQ1,1,"two\nlines"\n,,\n\nQ1,2,b\n'
    assert run_answer_lines(csv.encode(), fmt="qa") == 2
    # not counted when the file cannot have more lines than asked about; None if not UTF-8
    assert run_answer_lines(tsv.encode(), fmt="qa", more_than=10) == 0
    assert run_answer_lines(b"Q1\t1\t\xff\n", fmt="qa") is None
