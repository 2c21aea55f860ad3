"""The glossary (/help/glossary/): an entry with an anchor for every figure the pages show,
and every metric name in a score page's header a link to its entry (``config.glossary``,
the ``term`` tag), on the runs, run, compare, ranking, reliability, layer-scores and
agreement pages."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model

from config.glossary import ANCHORS, glossary_anchor
from evaluation.forms import CUTOFFS
from evaluation.metrics import BASE_METRICS
from evaluation.models import Run

pytestmark = pytest.mark.django_db


def _login(client, username="organizer"):
    client.force_login(get_user_model().objects.get(username=username))


def _ids(page: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page))


def test_every_metric_and_figure_has_an_entry_with_an_anchor_on_the_page(client, demo):
    _login(client)
    response = client.get("/help/glossary/")
    assert response.status_code == 200
    page = response.content.decode()
    ids = _ids(page)
    for key in (*BASE_METRICS, *CUTOFFS, "ndcg@20"):
        assert glossary_anchor(key) in ids, key
    assert set(ANCHORS.values()) <= ids
    for name in (
        "Q-measure",
        "R-measure",
        "RR′",
        "AP′",
        "nDCG′",
        "RBP′",
        "Cohen's kappa",
        "Krippendorff's alpha",
        "ARI",
        "B-cubed",
        "swap rate",
        "ASL",
        "discriminative power",
        "judgment version",
    ):
        assert name in page, name
    assert glossary_anchor("p@x") is None and glossary_anchor("nonsense") is None


def test_every_role_reads_the_glossary_and_anonymous_users_log_in_first(client, demo):
    assert client.get("/help/glossary/").status_code == 302
    for username in ("organizer", "assessor1", "participant"):
        _login(client, username)
        assert client.get("/help/glossary/").status_code == 200, username


def _links(page: str) -> set[str]:
    return set(re.findall(r'href="/help/glossary/#([^"]+)"', page))


def test_the_score_pages_link_each_metric_name_to_its_entry(client, demo):
    _login(client)
    runs = {r.name: r for r in Run.objects.filter(collection=demo)}
    base = f"/collections/{demo.slug}"
    metrics = "metric=q_measure&metric=rr_trunc&metric=ndcg@5"
    want = {"q-measure", "rr-trunc", "ndcg"}
    pages = {
        f"{base}/runs/?{metrics}": want,
        f"{base}/runs/{runs['AF'].pk}/?{metrics}": want | {"l", "r"},
        f"{base}/compare/?a={runs['noAF'].pk}&b={runs['AF'].pk}&{metrics}": want,
        f"{base}/ranking/?{metrics}": want,
        f"{base}/layer-scores/?{metrics}": want,
        f"{base}/reliability/?trials=20&metric=ap_trunc": {
            "ap-trunc",
            "q-measure",
            "asl",
            "tukey-hsd",
            "swap-rate",
            "discriminative-power",
            "t-interval",
        },
    }
    for url, anchors in pages.items():
        page = client.get(url).content.decode()
        assert anchors <= _links(page), (url, anchors - _links(page))
    # a sort link keeps its label and gets a "?" beside it, not a link inside a link
    page = client.get(f"{base}/runs/?{metrics}").content.decode()
    assert 'aria-label="Q-measure in the glossary">?</a>' in page


def test_the_agreement_page_links_its_figures(client, demo):
    from evaluation.management.commands.load_demo import load_agreement_demo

    c = load_agreement_demo()
    _login(client)
    page = client.get(f"/collections/{c.slug}/agreement/").content.decode()
    assert {"kappa", "alpha", "pairs-f1", "ari", "bcubed"} <= _links(page)
