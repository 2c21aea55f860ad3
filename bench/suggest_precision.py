"""Precision and recall of the judging page's synset suggestions, old rule against new.

    .venv/bin/python bench/suggest_precision.py [--seed 14] [--n 1200] [--show-errors]

old: same key, else rapidfuzz ``fuzz.ratio`` >= 90 against the keys of the judged strings
(annotate/selectors.py before annotate/suggest.py).  new: annotate/suggest.py.

(a) the demo collection (evaluation/demo.py), leave-one-out: each judged string (in a synset
    or judged incorrect) is taken out and suggested against what is left; right when the
    suggestion is its own synset (an incorrect string should get none).
(b) a generated set (fixed seed): typos, article, punctuation, accent and word-order
    variants of an answer (should be suggested), and confusers of the same shape -- numbers,
    chemical prefixes and suffixes, names and countries one or two letters apart (should
    not), some with the confuser judged in another synset or incorrect.

precision = right suggestions / suggestions; recall = right suggestions / cases whose answer
is a synset.  No database (Django is set up only because the demo's data module names
the users' roles with the models' Role enum).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rapidfuzz import fuzz, process

from annotate.suggest import Suggester
from evaluation.metrics.normalize import normalize_answer


@dataclass
class Case:
    category: str
    groups: dict[int, list[str]]
    incorrect: list[str]
    candidate: str
    truth: int | None  # the synset the candidate belongs to; None: none of them


def old_rule(case: Case) -> int | None:
    """The suggestion before annotate/suggest.py: same key, else the best fuzz.ratio >= 90."""
    keys = {normalize_answer(t): g for g, ts in case.groups.items() for t in ts}
    key = normalize_answer(case.candidate)
    if key in keys:
        return keys[key]
    hit = process.extractOne(key, list(keys), scorer=fuzz.ratio, score_cutoff=90)
    return keys[hit[0]] if hit else None


def new_rule(case: Case) -> int | None:
    hit = Suggester(case.groups, incorrect=case.incorrect).suggest(case.candidate)
    return None if hit is None else hit.synset


# ---------------------------------------------------------------- (a) the demo, leave-one-out


def demo_cases() -> list[Case]:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from evaluation.demo import QUESTIONS

    cases = []
    for qid, _text, synsets, incorrect, _unjudged in QUESTIONS:
        groups = {i: [t for t, _level in syn] for i, syn in enumerate(synsets)}
        for g, texts in groups.items():
            for t in texts:
                rest = {h: [u for u in ts if not (h == g and u == t)] for h, ts in groups.items()}
                cases.append(
                    Case(
                        f"demo synset ({qid})" if len(texts) > 1 else "demo synset, alone",
                        rest,
                        list(incorrect),
                        t,
                        g if len(texts) > 1 else None,
                    )
                )
        for t in incorrect:
            cases.append(Case("demo incorrect", groups, [u for u in incorrect if u != t], t, None))
    return cases


# ---------------------------------------------------------------- (b) the generated set

ANSWERS = [
    "Yasunari Kawabata",
    "Hideki Yukawa",
    "Shinichiro Tomonaga",
    "Leo Esaki",
    "Paul McCartney",
    "John Lennon",
    "George Harrison",
    "Ringo Starr",
    "Stuart Sutcliffe",
    "Marie Curie",
    "Albert Einstein",
    "Isaac Newton",
    "Charles Darwin",
    "Gregor Mendel",
    "Niels Bohr",
    "Werner Heisenberg",
    "Erwin Schrodinger",
    "Richard Feynman",
    "Rosalind Franklin",
    "Alexander Fleming",
    "Louis Pasteur",
    "Dmitri Mendeleev",
    "Ludwig van Beethoven",
    "Wolfgang Amadeus Mozart",
    "Johann Sebastian Bach",
    "Pablo Picasso",
    "Vincent van Gogh",
    "Leonardo da Vinci",
    "Michelangelo",
    "William Shakespeare",
    "Charles Dickens",
    "Jane Austen",
    "Leo Tolstoy",
    "Fyodor Dostoevsky",
    "Haruki Murakami",
    "Natsume Soseki",
    "epidermis",
    "mitochondria",
    "photosynthesis",
    "chlorophyll",
    "hemoglobin",
    "deoxyribonucleic acid",
    "ribosome",
    "cytoplasm",
    "Golgi apparatus",
    "endoplasmic reticulum",
    "Pacific Ocean",
    "Atlantic Ocean",
    "Mount Everest",
    "Kilimanjaro",
    "Amazon River",
    "Sahara Desert",
    "Chiba prefecture",
    "Urayasu",
    "Switzerland",
    "Argentina",
    "Portugal",
    "Philippines",
    "Madagascar",
    "Canberra",
    "Wellington",
    "Reykjavik",
    "Copenhagen",
    "Stockholm",
    "Helsinki",
    "Budapest",
    "Bucharest",
    "Edinburgh",
    "Barcelona",
    "Marseille",
    "Tokyo Disneyland",
    "United Nations",
    "European Union",
    "Red Cross",
    "Nobel Prize",
    "Magna Carta",
    "Declaration of Independence",
    "Industrial Revolution",
    "Renaissance",
    "Digital Versatile Disk",
    "Central Processing Unit",
    "World Health Organization",
]
ACCENTED = [
    "Kurt Gödel",
    "Paul Erdős",
    "Antonín Dvořák",
    "Henri Poincaré",
    "São Paulo",
    "Zürich",
    "Gabriel García Márquez",
    "Frédéric Chopin",
    "Émile Durkheim",
    "Pokémon",
    "Bogotá",
    "Malmö",
]
ARTICLE_NOUNS = [
    "epidermis",
    "mitochondria",
    "Pacific Ocean",
    "Sahara Desert",
    "Amazon River",
    "United Nations",
    "European Union",
    "Red Cross",
    "Magna Carta",
    "Renaissance",
    "Industrial Revolution",
    "Golgi apparatus",
    "Nobel Prize",
    "ribosome",
    "cytoplasm",
    "Philippines",
    "Declaration of Independence",
]
# (an answer, another answer of the same shape)
CONFUSERS = {
    "number": [
        ("1968", "1969"),
        ("December 10, 1968", "December 10, 1969"),
        ("July 14, 1789", "July 4, 1789"),
        ("July 14, 1789", "July 14, 1798"),
        ("Apollo 11", "Apollo 13"),
        ("Boeing 747", "Boeing 737"),
        ("uranium-235", "uranium-238"),
        ("World War I", "World War II"),
        ("Henry VII", "Henry VIII"),
        ("Louis XVII", "Louis XVIII"),
        ("Elizabeth I", "Elizabeth II"),
        ("3.5 billion years", "35 billion years"),
        ("October 1, 1999", "October 1, 1998"),
        ("1,000 meters", "1,500 meters"),
        ("Chanel No. 5", "Chanel No. 9"),
        ("Windows 95", "Windows 98"),
        ("Route 66", "Route 67"),
        ("Catch-22", "Catch-23"),
        ("1492", "1429"),
        ("Pope John Paul II", "Pope John Paul I"),
    ],
    "prefix": [
        ("adenosine diphosphate", "adenosine triphosphate"),
        ("adenosine monophosphate", "adenosine diphosphate"),
        ("hypothyroidism", "hyperthyroidism"),
        ("hypoglycemia", "hyperglycemia"),
        ("intracellular", "intercellular"),
        ("exothermic", "endothermic"),
        ("carbon monoxide", "carbon dioxide"),
        ("monosaccharide", "disaccharide"),
        ("bicycle", "tricycle"),
        ("unilateral", "bilateral"),
        ("hypertension", "hypotension"),
        ("prenatal", "postnatal"),
        ("intranational", "international"),
        ("monoxide", "dioxide"),
        ("sulfur dioxide", "sulfur trioxide"),
        ("microeconomics", "macroeconomics"),
        ("endoderm", "ectoderm"),
        ("hyperopia", "hypopia"),
        ("unable", "inable"),
        ("dinitrogen tetroxide", "dinitrogen pentoxide"),
    ],
    "suffix": [
        ("sodium chloride", "sodium chlorite"),
        ("sodium sulfate", "sodium sulfite"),
        ("lactose", "lactase"),
        ("ethane", "ethene"),
        ("ethene", "ethyne"),
        ("potassium nitrate", "potassium nitrite"),
        ("sucrose", "sucrase"),
        ("calcium sulfide", "calcium sulfite"),
        ("propane", "propene"),
        ("maltose", "maltase"),
    ],
    "name": [
        ("Austria", "Australia"),
        ("Iran", "Iraq"),
        ("Slovakia", "Slovenia"),
        ("Niger", "Nigeria"),
        ("Gambia", "Zambia"),
        ("Mali", "Malawi"),
        ("John", "Joan"),
        ("Monet", "Manet"),
        ("Ben Jonson", "Ben Johnson"),
        ("Stephenson", "Stevenson"),
        ("Peterson", "Petersen"),
        ("Sweden", "Swede"),
        ("Mars", "Mark"),
        ("Colombia", "Columbia"),
        ("Georgia", "Georgina"),
        ("Paris", "Parish"),
        ("Dominica", "Dominican Republic"),
        ("Guinea", "Guyana"),
        ("Kawabata", "Kawahara"),
        ("Yukawa", "Yokawa"),
        ("Tomonaga", "Tomonago"),
        ("Leo Esaki", "Leo Osaki"),
        ("Ringo Starr", "Ringo Stark"),
        ("Strauss", "Straus"),
        ("Haydn", "Handel"),
        ("Carolina", "Caroline"),
        ("Hanson", "Hansen"),
        ("Lennon", "Lenin"),
        ("Mendel", "Mandel"),
    ],
}
KEYS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
NEIGHBOURS = {
    ch: [
        KEYS[r2][c2]
        for r2 in (r - 1, r, r + 1)
        if 0 <= r2 < 3
        for c2 in (c - 1, c, c + 1)
        if 0 <= c2 < len(KEYS[r2]) and (r2, c2) != (r, c)
    ]
    for r, row in enumerate(KEYS)
    for c, ch in enumerate(row)
}


def typo(rng: random.Random, text: str) -> str | None:
    """``text`` with one slip of the finger in one of its words of 4 letters or more: an
    adjacent key, a letter dropped, doubled or added, two letters swapped, or (1 in 10) any
    other letter."""
    words = text.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not long:
        return None
    i = rng.choice(long)
    w = words[i]
    p = rng.randrange(len(w))
    ch = w[p].lower()
    op = rng.choices(
        ["adjacent", "drop", "double", "add", "swap", "any"], weights=[30, 20, 10, 10, 20, 10]
    )[0]
    if op == "adjacent" and ch in NEIGHBOURS:
        w = w[:p] + rng.choice(NEIGHBOURS[ch]) + w[p + 1 :]
    elif op == "drop":
        w = w[:p] + w[p + 1 :]
    elif op == "double":
        w = w[:p] + w[p] + w[p:]
    elif op == "add" and ch in NEIGHBOURS:
        w = w[:p] + rng.choice(NEIGHBOURS[ch]) + w[p:]
    elif op == "swap" and p + 1 < len(w) and w[p] != w[p + 1]:
        w = w[:p] + w[p + 1] + w[p] + w[p + 2 :]
    else:
        w = w[:p] + rng.choice([x for x in "abcdefghijklmnopqrstuvwxyz" if x != ch]) + w[p + 1 :]
    words[i] = w
    out = " ".join(words)
    return out if out != text else None


def punctuate(rng: random.Random, text: str) -> str:
    words = text.split(" ")
    kind = rng.choice(["hyphen", "comma", "quotes", "dots", "parens"])
    if kind == "hyphen" and len(words) > 1:
        i = rng.randrange(len(words) - 1)
        return (
            " ".join(words[:i])
            + (" " if i else "")
            + "-".join(words[i : i + 2])
            + ("" if i + 2 >= len(words) else " " + " ".join(words[i + 2 :]))
        )
    if kind == "comma" and len(words) > 1:
        i = rng.randrange(len(words) - 1)
        words[i] += ","
        return " ".join(words)
    if kind == "dots":
        return text.replace(" ", ". ") if len(words) > 1 else text[:1] + "." + text[1:]
    if kind == "parens" and len(words) > 1:
        return f"{words[0]} ({' '.join(words[1:])})"
    return f'"{text}"' if len(words) == 1 else f'{words[0]} "{" ".join(words[1:])}"'


def unaccent(text: str) -> str:
    import unicodedata

    return "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))


def generated_cases(seed: int = 14, n: int = 1200) -> list[Case]:
    """``n`` cases drawn with ``seed``: each a question of 2-5 synsets (one to three strings
    each, some strings judged incorrect) and one candidate with the synset it belongs to."""
    rng = random.Random(seed)
    pool = ANSWERS + ACCENTED
    cases: list[Case] = []

    def question(answer: str, *others: str, avoid: str = "") -> tuple[dict[int, list[str]], int]:
        # no filler answer shares a word with the answers of the case (Tomonaga)
        taken = {w.lower() for a in (answer, *others, avoid) for w in a.split()}
        fill = rng.sample(
            [a for a in pool if not taken & {w.lower() for w in a.split()}], rng.randint(1, 4)
        )
        synsets = [answer, *others, *fill]
        rng.shuffle(synsets)
        groups = {}
        for g, a in enumerate(synsets):
            words = a.split()
            extra = [words[-1]] if len(words) > 1 and rng.random() < 0.5 else []
            groups[g] = [a, *extra]
        return groups, synsets.index(answer)

    while len(cases) < n:
        kind = rng.choices(
            [
                "typo",
                "typo near a confuser",
                "article",
                "punctuation",
                "accents",
                "word order",
                "confuser",
                "confuser judged",
                "typo of an incorrect string",
            ],
            weights=[20, 10, 8, 8, 4, 5, 25, 12, 8],
        )[0]
        if kind == "typo":
            answer = rng.choice(pool)
            cand = typo(rng, answer)
            if cand is None:
                continue
            groups, truth = question(answer)
            cases.append(Case(kind, groups, [], cand, truth))
        elif kind == "typo near a confuser":
            cat = rng.choice(list(CONFUSERS))
            a, b = rng.sample(rng.choice(CONFUSERS[cat]), 2)
            cand = typo(rng, a)
            if cand is None or cand == b:
                continue
            groups, truth = question(a, b)
            cases.append(Case(f"{kind} ({cat})", groups, [], cand, truth))
        elif kind == "article":
            answer = rng.choice(ARTICLE_NOUNS)
            art = rng.choice(["the ", "The ", "a " if answer[0].lower() not in "aeiou" else "an "])
            groups, truth = question(answer)
            cases.append(Case(kind, groups, [], art + answer, truth))
        elif kind == "punctuation":
            answer = rng.choice(pool)
            groups, truth = question(answer)
            cases.append(Case(kind, groups, [], punctuate(rng, answer), truth))
        elif kind == "accents":
            answer = rng.choice(ACCENTED)
            groups, truth = question(answer)
            cases.append(Case(kind, groups, [], unaccent(answer), truth))
        elif kind == "word order":
            answer = rng.choice([a for a in pool if len(a.split()) == 2])
            groups, truth = question(answer)
            first, last = answer.split()
            cases.append(
                Case(kind, groups, [], rng.choice([f"{last} {first}", f"{last}, {first}"]), truth)
            )
        elif kind in ("confuser", "confuser judged"):
            cat = rng.choice(list(CONFUSERS))
            a, b = rng.sample(rng.choice(CONFUSERS[cat]), 2)
            if kind == "confuser":
                groups, _ = question(a, avoid=b)
                cases.append(Case(f"{kind} ({cat})", groups, [], b, None))
            else:  # b is known: judged incorrect, or its own synset (then it is the answer)
                if rng.random() < 0.5:
                    groups, _ = question(a, avoid=b)
                    cases.append(
                        Case(f"{kind} ({cat})", groups, [b], b + rng.choice(["", "."]), None)
                    )
                else:
                    c = typo(rng, b)
                    if c is None:
                        continue
                    groups, truth = question(b, a)
                    cases.append(Case(f"typo near a confuser ({cat})", groups, [], c, truth))
        else:
            cat = rng.choice(list(CONFUSERS))
            a, b = rng.sample(rng.choice(CONFUSERS[cat]), 2)
            cand = typo(rng, b)
            if cand is None or cand == a:
                continue
            groups, _ = question(a, avoid=b)
            cases.append(Case(f"{kind} ({cat})", groups, [b], cand, None))
    return cases


# ---------------------------------------------------------------- measuring


@dataclass
class Score:
    cases: int = 0
    positives: int = 0
    suggested: int = 0
    right: int = 0

    @property
    def precision(self) -> float:
        return self.right / self.suggested if self.suggested else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.positives if self.positives else 1.0


def measure(cases: list[Case], rule, errors: list | None = None) -> dict[str, Score]:
    """Scores per category and in all (``"all"``); wrong suggestions appended to ``errors``."""
    out: dict[str, Score] = {}
    for case in cases:
        got = rule(case)
        for name in ("all", case.category.split(" (")[0]):
            s = out.setdefault(name, Score())
            s.cases += 1
            s.positives += case.truth is not None
            s.suggested += got is not None
            s.right += got is not None and got == case.truth
        if errors is not None and got is not None and got != case.truth:
            errors.append(
                (
                    case.category,
                    case.candidate,
                    case.groups[got],
                    None if case.truth is None else case.groups[case.truth],
                )
            )
    return out


def _fmt(x: float, n: int) -> str:
    return f"{x:6.3f}" if n else "     -"


def table(title: str, cases: list[Case], show_errors: bool = False) -> None:
    """Print the scores of both rules on ``cases``, per category."""
    old_err: list = []
    new_err: list = []
    old, new = measure(cases, old_rule, old_err), measure(cases, new_rule, new_err)
    print(
        f"\n{title}: {len(cases)} cases, {sum(c.truth is not None for c in cases)} "
        "whose answer is a synset"
    )
    head = "  sugg right wrong  prec recall"
    print(f"{'':<28}{'':>6}{'':>6}  {'old rule':<{len(head) - 2}}  new rule")
    print(f"{'category':<28}{'cases':>6}{'pos':>6}{head}{head}")
    for name in sorted(old, key=lambda k: (k != "all", k)):
        row = f"{name:<28}{old[name].cases:>6}{old[name].positives:>6}"
        for s in (old[name], new[name]):
            row += (
                f"{s.suggested:>6}{s.right:>6}{s.suggested - s.right:>6}"
                f"{_fmt(s.precision, s.suggested)}{_fmt(s.recall, s.positives)}"
            )
        print(row)
    if show_errors:
        for label, errs in (("old", old_err), ("new", new_err)):
            print(f"  wrong {label} suggestions ({len(errs)}):")
            for cat, cand, got, truth in errs:
                print(f"    [{cat}] {cand!r} -> {got} (answer: {truth})")


def show_demo_suggestions() -> None:
    """The new rule's suggestions on the demo, with their reasons."""
    for case in demo_cases():
        hit = Suggester(case.groups, incorrect=case.incorrect).suggest(case.candidate)
        if hit is not None:
            ok = "right" if hit.synset == case.truth else "WRONG"
            print(
                f"  {ok}: {case.candidate!r} -> {case.groups[hit.synset]} "
                f"({hit.score}%: {hit.reason})"
            )


def timing(seed: int = 14) -> None:
    """Time both rules on one question of 1,000 strings: 100 synsets of 4 strings, 100
    incorrect, 500 candidates (half of them typos), as the workspace computes them."""
    import time

    rng = random.Random(seed)
    words = [w for a in ANSWERS for w in a.split()]

    def answer() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))

    groups = {g: [answer() for _ in range(4)] for g in range(100)}
    incorrect = [answer() for _ in range(100)]
    cands = [
        (typo(rng, rng.choice(groups[rng.randrange(100)])) if rng.random() < 0.5 else None)
        or answer()
        for _ in range(500)
    ]
    best_old = best_new = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        keys = {normalize_answer(t): g for g, ts in groups.items() for t in ts}
        choices = list(keys)
        for c in cands:
            k = normalize_answer(c)
            if k not in keys:
                process.extractOne(k, choices, scorer=fuzz.ratio, score_cutoff=90)
        t1 = time.perf_counter()
        hits = Suggester(groups, incorrect=incorrect).suggest_many(cands)
        t2 = time.perf_counter()
        best_old, best_new = min(best_old, t1 - t0), min(best_new, t2 - t1)
    print(
        f"\none question of 1,000 strings (500 candidates), best of 3: old rule "
        f"{best_old * 1000:.0f} ms, new rule {best_new * 1000:.0f} ms "
        f"({sum(h is not None for h in hits)} suggestions)"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--n", type=int, default=1200)
    ap.add_argument("--show-errors", action="store_true")
    args = ap.parse_args(argv)
    table("(a) demo, leave-one-out", demo_cases(), args.show_errors)
    show_demo_suggestions()
    cases = generated_cases(args.seed, args.n)
    table(f"(b) generated, seed {args.seed}", cases, args.show_errors)
    print("\ncategories of (b):", dict(Counter(c.category.split(" (")[0] for c in cases)))
    timing(args.seed)


if __name__ == "__main__":
    main()
