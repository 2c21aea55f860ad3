# ruff: noqa: E501 -- the reference templates are quoted as they were, one line each
"""The tags that write the difference plot's per-question markup (its marks and columns,
2,000 of each at size M) write what the template loops they replace wrote: the same
markup, the same escaping."""

import numpy as np
import pandas as pd
from django.template import engines

from evaluation.analysis.plots import difference_plot

PLOT_TEMPLATE = """{% for s in plot.series %}<g>{% for x, y in s.marks %}<use href="#mk-{{ s.shape }}" x="{{ x }}" y="{{ y }}"/>{% endfor %}</g>{% endfor %}
<svg>{% for p in plot.points %}<a href="{{ p.href }}" data-qid="{{ p.qid }}"><title>{{ p.title }}</title><rect class="hit" x="{{ p.column }}" width="1" height="1" fill="transparent"/></a>{% endfor %}</svg>"""

PLOT_TAGS = """{% load plot_svg %}{% for s in plot.series %}<g>{% plot_marks s %}</g>{% endfor %}
<svg>{% plot_columns plot %}</svg>"""


def render(source: str, **context) -> str:
    return engines["django"].from_string(source).render(context)


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
