"""Small builders shared by the metric tests (no Django, no database)."""

from __future__ import annotations

from evaluation.metrics import Judgments, Ranking, evaluate

BEATLES = [
    ("1", "Sir Paul McCartney", "S"),
    ("1", "Paul McCartney", "S"),
    ("1", "McCartney", "A"),
    ("1", "Paul", "B"),
    ("2", "John Lennon", "S"),
    ("2", "Lennon", "A"),
    ("2", "John", "B"),
    ("3", "George Harrison", "S"),
    ("3", "Harrison", "A"),
    ("3", "George", "B"),
    ("4", "Ringo Starr", "S"),
    ("4", "Starr", "A"),
    ("4", "Ringo", "B"),
]


def judgments(questions: dict[str, list[tuple[str | None, str, str | None]]], **kw) -> Judgments:
    """``{qid: [(synset, answer, level), ...]}`` -> Judgments (synset None = incorrect)."""
    rows = [(q, s, a, lv) for q, items in questions.items() for s, a, lv in items]
    return Judgments.from_rows(rows, **kw)


def score(j: Judgments, answers: dict[str, list[str]], metrics, **kw) -> dict[str, dict]:
    """Scores of one run given as ``{qid: [answers by rank]}``: ``{qid: {metric: value}}``."""
    s = evaluate(j, [Ranking.from_lists("run", answers)], metrics, **kw)
    return s.per_question["run"].to_dict(orient="index")


def binary_question(r: int, ranking: str) -> tuple[Judgments, dict[str, list[str]]]:
    """A question with ``r`` one-string S synsets and a ranking like "10100" (1 = the
    next not-yet-returned correct answer, 0 = a wrong answer)."""
    items = [(str(i), f"answer{i}", "S") for i in range(r)]
    items.append((None, "wrong", None))
    j = judgments({"q": items}) if items else judgments({"q": [(None, "wrong", None)]})
    ranked, k, w = [], 0, 0
    for ch in ranking:
        if ch == "1":
            ranked.append(f"answer{k}")
            k += 1
        else:
            ranked.append(f"wrong{w}")
            w += 1
    return j, {"q": ranked}
