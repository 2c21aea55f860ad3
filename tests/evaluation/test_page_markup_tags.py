# ruff: noqa: E501 -- the reference templates are quoted as they were, one line each
"""The tags that write the score pages' long per-question markup in Python (the marks
lists of the run and compare pages, the difference plot's marks and columns) write what
the template loops they replace wrote: the same markup, the same escaping, the same
translations (whitespace aside)."""

import re

import numpy as np
import pandas as pd
import pytest
from django.template import engines
from django.utils import translation

from evaluation.analysis.plots import difference_plot

# the template the ``marks_list`` tag replaces (templates/evaluation/_marks.html)
MARKS_TEMPLATE = """<ol class="marks">
  {% for m in marks %}
    <li value="{{ m.rank }}" class="mark-{{ m.status }}"><span class="answer">{{ m.answer }}</span>
      {% if m.status == "correct" %}<span class="badge">{{ m.level }}</span> {% blocktranslate with synset=m.synset %}synset {{ synset }}{% endblocktranslate %}{% if m.label %} ({{ m.label }}){% endif %}
      {% elif m.status == "duplicate" %}{% blocktranslate with synset=m.synset %}duplicate of synset {{ synset }}{% endblocktranslate %}{% if m.label %} ({{ m.label }}){% endif %} {% translate "(no credit)" %}
      {% elif m.status == "incorrect" %}{% translate "incorrect" %}
      {% elif m.status == "nil_not_first" %}{% translate "NIL below rank 1" %} {% translate "(no credit)" %}
      {% else %}{% translate "unjudged" %}{% endif %}</li>
  {% empty %}<li class="muted">{% translate "no answers (scored as an empty ranking)" %}</li>
  {% endfor %}
</ol>"""

# the loop the ``unjudged_rows`` tag replaces (evaluation/run_detail.html)
UNJUDGED_TEMPLATE = """{% for u in unjudged %}<tr><td class="qid">{{ u.question_id }}</td><td class="num">{{ u.rank }}</td><td>{{ u.answer }}</td><td>{% if u.pooled %}{% translate "in the pool" %}{% elif u.poolable %}{% translate "not pooled" %}{% elif u.empty_key %}{% translate "matches nothing (empty key)" %}{% else %}{% translate "beyond L'" %}{% endif %}</td></tr>{% endfor %}"""

# the loops the ``plot_marks`` and ``plot_columns`` tags replace (evaluation/compare.html)
PLOT_TEMPLATE = """{% for s in plot.series %}<g>{% for x, y in s.marks %}<use href="#mk-{{ s.shape }}" x="{{ x }}" y="{{ y }}"/>{% endfor %}</g>{% endfor %}
<svg>{% for p in plot.points %}<a href="{{ p.href }}" data-qid="{{ p.qid }}"><title>{{ p.title }}</title><rect class="hit" x="{{ p.column }}" width="1" height="1" fill="transparent"/></a>{% endfor %}</svg>"""

PLOT_TAGS = """{% load plot_svg %}{% for s in plot.series %}<g>{% plot_marks s %}</g>{% endfor %}
<svg>{% plot_columns plot %}</svg>"""


def render(source: str, **context) -> str:
    return engines["django"].from_string(source).render(context)


def squeeze(html: str) -> str:
    return re.sub(r">\s+<", "><", re.sub(r"\s+", " ", html)).strip()


MARKS = [
    {"rank": 1, "answer": "Mount <Fuji> & 'co'", "status": "correct", "level": "A",
     "synset": 2, "label": 'S"7'},
    {"rank": 2, "answer": "Fuji", "status": "correct", "level": "B", "synset": 3,
     "label": ""},
    {"rank": 3, "answer": "fuji-san", "status": "duplicate", "level": "", "synset": 2,
     "label": "S<7>"},
    {"rank": 4, "answer": "Fujii", "status": "duplicate", "level": "", "synset": 1,
     "label": ""},
    {"rank": 5, "answer": "Everest", "status": "incorrect", "level": "", "synset": None,
     "label": ""},
    {"rank": 6, "answer": "NIL", "status": "nil_not_first", "level": "", "synset": None,
     "label": ""},
    {"rank": 1234, "answer": "K2", "status": "unjudged", "level": "", "synset": None,
     "label": ""},
]  # fmt: skip


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("marks", [MARKS, []], ids=["marks", "none"])
def test_the_marks_tag_writes_what_the_template_wrote(language, marks):
    with translation.override(language):
        want = render(MARKS_TEMPLATE, marks=marks)
        got = render("{% load run_answers %}{% marks_list marks %}", marks=marks)
    assert squeeze(got) == squeeze(want)
    assert "&lt;Fuji&gt; &amp; &#x27;co&#x27;" in got or not marks
    assert language == "en" or not marks or "シンセット" in got


UNJUDGED = [
    {"question_id": "Q<1>", "rank": 1, "answer": "a & b", "pooled": True, "poolable": False,
     "empty_key": False},
    {"question_id": "Q2", "rank": 12, "answer": "'quoted'", "pooled": False, "poolable": True,
     "empty_key": False},
    {"question_id": "Q3", "rank": 2, "answer": "?", "pooled": False, "poolable": False,
     "empty_key": True},
    {"question_id": "Q4", "rank": 1001, "answer": "<i>far</i>", "pooled": False,
     "poolable": False, "empty_key": False},
]  # fmt: skip


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_unjudged_rows_tag_writes_what_the_template_wrote(language):
    with translation.override(language):
        want = render(UNJUDGED_TEMPLATE, unjudged=UNJUDGED)
        got = render("{% load run_answers %}{% unjudged_rows unjudged %}", unjudged=UNJUDGED)
    assert got == want
    assert "beyond L'" in got or language == "ja"


def test_the_plot_tags_write_what_the_template_loops_wrote():
    qids = ["Q<1>", "Q&2", 'Q"3', "Q4"]
    diffs = pd.DataFrame(
        {"q_measure": [0.5, -0.25, 0.0, np.nan], "rr": [1.0, 0.0, -1.0, 0.5]}, index=qids
    )
    plot = difference_plot(
        diffs,
        qids,
        labels={"q_measure": "Q-measure", "rr": "R<R>"},
        texts={"Q<1>": "What is <b>bold</b> & 'quoted'?"},
        href=lambda q: f"?a=1&b=2&question={q}#side-{q}",
        name_a="A",
        name_b="B",
    )
    want = render(PLOT_TEMPLATE, plot=plot)
    got = render(PLOT_TAGS, plot=plot)
    assert got == want
    assert "&lt;b&gt;bold&lt;/b&gt;" in got and "?a=1&amp;b=2" in got
