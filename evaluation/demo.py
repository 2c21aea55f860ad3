"""The demo collection: the worked examples of Sakai's QA paper and two runs in the spirit
of its AF and noAF runs (q-measure-for-question-answering.txt, Examples 1-3, section 4.3)."""

from __future__ import annotations

from annotate.models import Role
from evaluation.metrics import NIL

# (qid, question, synsets [[(answer, level), ...], ...], incorrect strings, unjudged strings)
QUESTIONS = [
    (
        "EX1-BEATLES",
        "Who played in the Beatles?",
        [
            [
                ("Sir Paul McCartney", "S"),
                ("Paul McCartney", "S"),
                ("McCartney", "A"),
                ("Paul", "B"),
            ],
            [("John Lennon", "S"), ("Lennon", "A"), ("John", "B")],
            [("George Harrison", "S"), ("Harrison", "A"), ("George", "B")],
            [("Ringo Starr", "S"), ("Starr", "A"), ("Ringo", "B")],
        ],
        ["Yoko Ono"],
        [],
    ),
    (
        "EX1-BEATLES-5",
        "Who played in the Beatles, counting early members?",
        [
            [
                ("Sir Paul McCartney", "S"),
                ("Paul McCartney", "S"),
                ("McCartney", "A"),
                ("Paul", "B"),
            ],
            [("John Lennon", "S"), ("Lennon", "A"), ("John", "B")],
            [("George Harrison", "S"), ("Harrison", "A"), ("George", "B")],
            [("Ringo Starr", "S"), ("Starr", "A"), ("Ringo", "B")],
            [("Stuart Sutcliffe", "B"), ("Sutcliffe", "B"), ("Stuart", "B")],
        ],
        [],
        [],
    ),
    (
        "EX2-DVD",
        "What does DVD stand for?",
        [
            [("Digital Versatile Disk", "S"), ("Digital Video Disk", "A")],
        ],
        ["Digital Vinyl Disk"],
        [],
    ),
    ("EX3-LOVE", "What is love?", [[(NIL, "A")]], [], []),
    (
        "QAC1-1012",
        "When did Yasunari Kawabata become the first Japanese to receive the Nobel "
        "Prize in Literature?",
        [[("December 10, 1968", "S"), ("1968", "B")]],
        ["1969"],
        [],
    ),
    (
        "QAC1-1058",
        "Japanese who received the Nobel Prize in Physics",
        [
            [("Hideki Yukawa", "S"), ("Doctor Hideki Yukawa", "S"), ("Yukawa", "B")],
            [("Shinichiro Tomonaga", "S"), ("Tomonaga", "B")],
            [("Leo Esaki", "S"), ("Esaki", "B")],
        ],
        ["Kyoto University", "1949"],
        [],
    ),
    (
        "TDL-1",
        "Where is Tokyo Disneyland?",
        [
            [("Chiba prefecture", "S"), ("Urayasu, Chiba", "S"), ("Chiba", "A"), ("Japan", "B")],
        ],
        ["Tokyo"],
        [],
    ),
    (
        "BASTILLE",
        "When did French revolutionaries storm the Bastille?",
        [
            [("July 14, 1789", "S"), ("14 July 1789", "S"), ("July 14", "B"), ("1789", "B")],
        ],
        ["1790"],
        [],
    ),
    (
        "SWISS-LANG",
        "What is the official language in Switzerland?",
        [
            [("German", "S"), ("Deutsch", "A")],
            [("French", "S")],
            [("Italian", "S")],
            [("Romansh", "A")],
        ],
        ["English"],
        [],
    ),
    (
        "QAC1-1006",
        "When will NTT Communications take over NTT International Network?",
        [
            [("October 1", "S"), ("October 1, 1999", "S")],
        ],
        ["October", "1998"],
        [],
    ),
    (
        "QAC1-1021",
        "How was Prime Minister Obuchi criticized just after inauguration?",
        [
            [("ordinary man", "S")],
            [("cold pizza", "S")],
        ],
        [],
        [],
    ),
    (
        "JA-TDL",
        "東京ディズニーランドは何県にありますか？",
        [
            [("千葉県", "S"), ("千葉", "A"), ("Chiba", "A")],
        ],
        ["東京都"],
        [],
    ),
    (
        "SNOW-COUNTRY",
        "Who wrote the novel 'Snow Country'?",
        [],
        [],
        ["Yasunari Kawabata", "Kawabata", "Yukio Mishima"],
    ),
]

# Candidates pooled from the runs that no assessor has judged yet (shown as unjudged).
POOLED = {"EX3-LOVE": ["a feeling"], "QAC1-1058": ["Nagoya"]}

# Questions an assessor has started but not finished; the others with judgments are done.
IN_PROGRESS = {"QAC1-1021"}

RUNS = {
    "noAF": {
        "description": "Without the Answer Formulator: duplicates are not consolidated.",
        "answers": {
            "EX1-BEATLES": ["McCartney", "Lennon", "Paul", "George Harrison", "Starr"],
            "EX1-BEATLES-5": ["Paul McCartney", "John Lennon", "Paul", "Stuart Sutcliffe"],
            "EX2-DVD": ["Digital Video Disk", "Digital Versatile Disk"],
            "EX3-LOVE": ["a feeling", NIL],
            "QAC1-1012": ["1969", "1968"],
            "QAC1-1058": [
                "Hideki Yukawa",
                "Kyoto University",
                "1949",
                "Doctor Hideki Yukawa",
                "Nagoya",
            ],
            "TDL-1": ["Japan", "Chiba prefecture"],
            "BASTILLE": ["1789", "July 14"],
            "SWISS-LANG": ["German", "Deutsch", "French"],
            "QAC1-1006": ["1998", "NTT", "October", "October 1"],
            "QAC1-1021": ["ordinary man", "cold pizza"],
            "JA-TDL": ["東京都", "千葉県"],
            "SNOW-COUNTRY": ["Kawabata", "Yukio Mishima"],
        },
    },
    "AF": {
        "description": "With the Answer Formulator: answer strings consolidated.",
        "answers": {
            "EX1-BEATLES": ["Paul McCartney", "John Lennon", "George Harrison", "Starr"],
            "EX1-BEATLES-5": [
                "John Lennon",
                "Paul McCartney",
                "George Harrison",
                "Ringo Starr",
                "Stuart Sutcliffe",
            ],
            "EX2-DVD": ["Digital Versatile Disk"],
            "EX3-LOVE": [NIL],
            "QAC1-1012": ["1968"],
            "QAC1-1058": [
                "Hideki Yukawa",
                "Kyoto University",
                "1949",
                "Nagoya",
                "Shinichiro Tomonaga",
            ],
            "TDL-1": ["Chiba prefecture"],
            "BASTILLE": ["July 14, 1789"],
            "SWISS-LANG": ["German", "French", "Italian"],
            "QAC1-1006": ["1998", "NTT", "October 1"],
            "QAC1-1021": ["ordinary man", "Obuchi is as uninspiring as cold pizza"],
            "JA-TDL": ["ＣＨＩＢＡ"],
            "SNOW-COUNTRY": ["Yasunari Kawabata"],
        },
    },
}

LEVELS = [  # code, label, gain, examples (one per line; shown in the judging guidelines)
    (
        "S",
        "Correct and complete",
        3.0,
        "Paul McCartney (Who played in the Beatles?)\n"
        "December 10, 1968 (When did Kawabata receive the Nobel Prize?)",
    ),
    (
        "A",
        "Correct, less specific",
        2.0,
        "McCartney (Who played in the Beatles?)\nDigital Video Disk (What does DVD stand for?)",
    ),
    (
        "B",
        "Partially correct",
        1.0,
        "Paul (Who played in the Beatles?)\n1968 (When did Kawabata receive the Nobel Prize?)",
    ),
]

USERS = [  # username, password, role, staff
    ("organizer", "demo-organizer", Role.ORGANIZER, False),
    ("assessor1", "demo-assessor1", Role.ASSESSOR, False),
    ("assessor2", "demo-assessor2", Role.ASSESSOR, False),
    ("participant", "demo-participant", Role.PARTICIPANT, False),
    ("admin", "demo-admin", None, True),
]

GUIDELINES = """Group the answer strings that mean the same answer into one synset.
Give every string its own level: S = correct and as specific as asked; A = correct but less
specific; B = partially correct. Judge a string incorrect when it does not answer the
question. A question with no answer has one synset holding the string NIL."""


# A second, small collection for an agreement study (DESIGN.md section 9): every question
# judged independently by assessor1 and assessor2 in layers of their own, then the strings
# they agree on go to gold and the others wait for adjudication.  Each assessor's
# judgments: answer -> (synset number in their layer, level), or None for incorrect.
AGREEMENT_SLUG = "demo-agreement"
AGREEMENT_QUESTIONS = [
    (
        "AG-NOBEL-LIT",
        "Who was the first Japanese Nobel laureate in literature?",
        {
            "Yasunari Kawabata": (1, "S"),
            "Kawabata": (1, "A"),
            "Kawabata Yasunari": (1, "S"),
            "Kenzaburo Oe": None,
        },
        {
            "Yasunari Kawabata": (1, "S"),
            "Kawabata": (1, "B"),
            "Kawabata Yasunari": (1, "S"),
            "Kenzaburo Oe": None,
        },
    ),
    (
        "AG-EVEREST",
        "What is the highest mountain on Earth?",
        {"Mount Everest": (1, "S"), "Everest": (1, "A"), "Chomolungma": (1, "S"), "K2": None},
        {"Mount Everest": (1, "S"), "Everest": (1, "A"), "Chomolungma": (2, "S"), "K2": None},
    ),
    (
        "AG-MOON",
        "Who first walked on the Moon?",
        {"Neil Armstrong": (1, "S"), "Armstrong": (1, "A"), "Buzz Aldrin": None, "Apollo 11": None},
        {
            "Neil Armstrong": (1, "S"),
            "Armstrong": (1, "A"),
            "Buzz Aldrin": None,
            "Apollo 11": (2, "B"),
        },
    ),
    (
        "AG-DNA",
        "Who proposed the double-helix structure of DNA?",
        {
            "Watson and Crick": (1, "S"),
            "James Watson": (2, "A"),
            "Francis Crick": (3, "A"),
            "Rosalind Franklin": None,
        },
        {
            "Watson and Crick": (1, "S"),
            "James Watson": (2, "A"),
            "Francis Crick": (3, "A"),
            "Rosalind Franklin": None,
        },
    ),
    (
        "AG-CAPITAL-AU",
        "What is the capital of Australia?",
        {"Canberra": (1, "S"), "Sydney": None, "Canberra, ACT": (1, "S")},
        {"Canberra": (1, "S"), "Sydney": None, "Canberra, ACT": (1, "A")},
    ),
    (
        "AG-WATER",
        "What is the chemical formula of water?",
        {"H2O": (1, "S"), "HOH": (1, "B"), "HO2": None, "dihydrogen monoxide": (1, "A")},
        {"H2O": (1, "S"), "HOH": (1, "B"), "HO2": None, "dihydrogen monoxide": None},
    ),
]
# Seconds each assessor of the agreement study spends per string judged.  The demo judges
# through the layer services within a fraction of a second; its layers are then dated as if
# judged at this pace, one after another (load_demo.agreement_demo_dates), so the
# agreement page's "median time per question" shows a believable figure, not "0 s".
AGREEMENT_PACE = {"assessor1": 14, "assessor2": 23}
# The questions the organizer has already adjudicated, taking the named assessor's layer
# for the strings the two layers judged differently; the others wait in the queue.
AGREEMENT_ADJUDICATED = {
    "AG-NOBEL-LIT": "assessor1",
    "AG-EVEREST": "assessor2",
    "AG-CAPITAL-AU": "assessor1",
}
AGREEMENT_RUNS = {
    "sysA": {
        "AG-NOBEL-LIT": ["Yasunari Kawabata"],
        "AG-EVEREST": ["Everest", "K2"],
        "AG-MOON": ["Neil Armstrong"],
        "AG-DNA": ["James Watson", "Francis Crick"],
        "AG-CAPITAL-AU": ["Sydney", "Canberra"],
        "AG-WATER": ["H2O"],
    },
    "sysB": {
        "AG-NOBEL-LIT": ["Kawabata"],
        "AG-EVEREST": ["Chomolungma", "Mount Everest"],
        "AG-MOON": ["Apollo 11", "Armstrong"],
        "AG-DNA": ["Watson and Crick"],
        "AG-CAPITAL-AU": ["Canberra, ACT"],
        "AG-WATER": ["dihydrogen monoxide", "H2O"],
    },
}
