"""The product's one CSV writer and reader: write -> read is the identity, and no cell or
line of the written text starts with a spreadsheet formula."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics.csvio import (
    CsvFormatError,
    neutralise,
    read_csv,
    read_csv_lines,
    read_records,
    restore,
    write_csv,
)

SPECIAL = [
    "\r",
    "\n",
    "\r\n",
    '"',
    ",",
    ";",
    "#",
    "=",
    "+",
    "-",
    "@",
    "'",
    "\t",
    " ",
    "%",
    "%0D",
    "|",
    "!",
]
# random unicode text, with the characters that matter over-represented
text = st.lists(st.one_of(st.sampled_from(SPECIAL), st.text(max_size=4)), max_size=6).map("".join)
FORMULA = tuple("=+-@\t\r")
ATTACK = "Berlin\r=cmd|' /C calc'!A0"


def lines_outside_quotes(written: str) -> list[str]:
    """``written`` split at the LFs that are not inside a quoted cell."""
    lines, start, quoted = [], 0, False
    for i, c in enumerate(written):
        if c == '"':
            quoted = not quoted
        elif c == "\n" and not quoted:
            lines.append(written[start:i])
            start = i + 1
    assert not quoted
    return lines


@settings(max_examples=300, deadline=None)
@given(
    header=st.lists(text, min_size=1, max_size=4),
    rows=st.lists(st.lists(text, min_size=1, max_size=4), max_size=5),
    preamble=st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), text, max_size=3),
)
def test_write_then_read_is_the_identity(header, rows, preamble):
    written = write_csv(header, rows, preamble)
    assert read_csv(written) == (preamble, header, rows)
    for line in lines_outside_quotes(written):
        assert not line.startswith(FORMULA)
        if line.startswith("#"):
            assert "\r" not in line and '"' not in line
    # what a spreadsheet (or pandas) sees: no cell starts with a formula
    for record in csv.reader(io.StringIO(written, newline="")):
        for c in record:
            assert not c.startswith(FORMULA), c


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_restore_undoes_neutralise(s):
    assert restore(neutralise(s)) == s
    assert not neutralise(s).startswith(FORMULA)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(text, min_size=2, max_size=2), max_size=5))
def test_crlf_line_ends_and_a_bom_read_the_same(rows):
    written = write_csv(["a", "b"], rows, {"k": "v,=x"})
    # CRLF only between rows: a CR/LF inside a quoted cell is data
    crlf = "\r\n".join(lines_outside_quotes(written)) + "\r\n"
    assert read_csv(b"\xef\xbb\xbf" + crlf.encode()) == ({"k": "v,=x"}, ["a", "b"], rows)


def test_the_attack_is_quoted_and_neutralised():
    written = write_csv(["answer"], [[ATTACK], ["=1+1"], ["'=1+1"], ["'Tis"], ["+81"]])
    assert written == ("answer\n\"Berlin\r=cmd|' /C calc'!A0\"\n'=1+1\n''=1+1\n'Tis\n'+81\n")
    assert read_csv(written)[2] == [[ATTACK], ["=1+1"], ["'=1+1"], ["'Tis"], ["+81"]]


def test_numbers_are_not_escaped_and_text_numbers_are():
    written = write_csv(
        ["x", "y", "z"], [[-1, -0.5, "-1"], [None, float("nan"), True]], float_format=".3f"
    )
    assert written.splitlines()[1:] == ["-1,-0.500,'-1", ",,True"]


def test_preamble_is_one_line_per_key_and_keeps_readable_values():
    written = write_csv(["a"], [], {"gains": "S=3,A=2,B=1", "run": ATTACK + ',=x;@y,"q"%'})
    lines = written.splitlines()
    assert lines[0] == "# gains=S=3,A=2,B=1"
    assert lines[1] == "# run=Berlin%0D=cmd|' /C calc'!A0%2C=x%3B@y,%22q%22%25"
    assert read_csv(written)[0]["run"] == ATTACK + ',=x;@y,"q"%'
    # pandas reads the table under the preamble as the docs say
    frame = pd.read_csv(
        io.StringIO(write_csv(["run", "v"], [["a#b", 1.0], [ATTACK, 2.0]], {"run": "x#y"})),
        comment="#",
    )
    assert frame["run"].tolist() == ["a#b", ATTACK]


def test_a_single_empty_cell_row_is_kept():
    assert read_csv(write_csv(["a"], [[""], ["x"]]))[2] == [[""], ["x"]]


def test_a_cell_starting_with_a_bom_is_not_taken_for_the_files_bom():
    """U+FEFF at the start of the file is dropped as a byte-order mark by every reader:
    a cell starting with it is quoted, wherever it is."""
    for header, rows in (
        (["\ufeff"], []),
        (["\ufeff", ""], []),
        (["\ufeffa", "b"], [["c", "d"]]),
        (["a"], [["\ufeff"]]),
    ):
        written = write_csv(header, rows)
        assert read_csv(written) == ({}, header, rows)
        assert read_csv(("\ufeff" + written).encode()) == ({}, header, rows)
    assert write_csv(["\ufeffa", "b"], []) == '"\ufeffa",b\n'


def test_malformed_text_is_a_value_error_with_its_line():
    with pytest.raises(CsvFormatError, match="line 3"):
        read_csv('# k=v\na,b\n"x,y\n')
    with pytest.raises(ValueError, match="line 2"):
        read_csv("a,b\nx\ry,z\n")
    with pytest.raises(CsvFormatError, match="row 1 has 1 cells"):
        read_records("a,b\nx\n")
    with pytest.raises(ValueError):
        write_csv(["a"], [], {"bad key": 1})


def test_the_parsers_read_back_what_the_writer_wrote():
    from evaluation.metrics.judgment_parsers import parse_judgments_csv, read_judgment_rows

    answers = ["=1+1", "'=1+1", "+81", "'Tis", "''quoted''", "-40", "@home", "a,b", 'say "x"']
    rows = [
        [f"Q{i}", "1", f"{a}" if j == 0 else f"{a} {j}", "S"]
        for i in range(600)
        for j, a in enumerate(answers)
    ]
    data = write_csv(["question_id", "synset_id", "answer", "level"], rows).encode()
    assert len(data) > 1 << 16 and b"'=1+1" in data
    slow = read_judgment_rows(data)
    assert [r.answer for r in slow] == [r[2] for r in rows]
    assert list(parse_judgments_csv(data).str_text) == [r[2] for r in rows]


def _read_either(reader, text):
    try:
        return reader(text)
    except CsvFormatError as e:
        return ("refused", str(e), e.line)


def _read_lines(text):
    preamble, header, rows = read_csv_lines(io.StringIO(text, newline="\n"))
    return preamble, header, list(rows)


@settings(max_examples=400)
@given(st.lists(st.sampled_from(["a", ",", '"', "\n", "\r", "\r\n", "#", "'=", "\ufeff", "x=1"])))
def test_reading_line_by_line_reads_as_read_csv(parts):
    """The streaming reader (collection archives) reads every text, and refuses every
    malformed one at the same line, as read_csv does."""
    text = "".join(parts)
    assert _read_either(_read_lines, text) == _read_either(read_csv, text)
