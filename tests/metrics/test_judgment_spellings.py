"""The scorer reads a judgments file that spells one string several ways (an export writes
every variant as a row): rows with the same judgment fold, rows that disagree are refused
naming both lines and both judgments (DESIGN.md section 4)."""

import pytest

from evaluation.metrics import InputError, Ranking, evaluate
from evaluation.metrics.judgment_parsers import parse_judgments_csv

HEADER = "question_id,synset_id,answer,level\n"


def test_agreeing_spellings_fold():
    data = (
        HEADER + "Q1,gold,Richard Nixon,S\nQ1,b,Nixon,A\nQ1,gold,Richard Nixon.,S\n"
        "Q1,,Ford,\nQ1,,ford.,\n"
    )
    j = parse_judgments_csv(data.encode())
    assert list(j.str_text) == ["Richard Nixon", "Nixon", "Ford"] and len(j.syn_q) == 2
    run = Ranking.from_lists("r", {"Q1": ["richard nixon", "FORD", "Richard Nixon."]})
    marked = evaluate(j, [run]).marked.frame()
    assert list(marked["status"]) == ["correct", "incorrect", "duplicate"]


@pytest.mark.parametrize(
    "row, judgment",
    [
        ("Q1,b,Richard Nixon.,S", "synset b, level S"),
        ("Q1,gold,Richard Nixon.,A", "synset gold, level A"),
        ("Q1,,Richard Nixon.,", "judged incorrect"),
    ],
)
def test_disagreeing_spellings_are_refused_naming_both(row, judgment):
    data = HEADER + "Q1,gold,Richard Nixon,S\nQ1,b,Nixon,A\n" + row + "\n"
    with pytest.raises(InputError) as e:
        parse_judgments_csv(data.encode())
    assert [(i.line, i.message) for i in e.value.issues] == [
        (
            4,
            (
                f'question \'Q1\': "Richard Nixon." ({judgment}) matches "Richard Nixon" on line 2 '
                "(synset gold, level S) under normalized matching; one string has one judgment"
            ),
        )
    ]
