"""The two-layer study the tests of annotate/layers.py and annotate/adjudication.py share,
and the helpers that judge it."""

from annotate import layers
from annotate.models import JudgingLayer, LayerJudgment
from tests.factories import add_member, make_collection, make_question, make_user


def layer_study():
    """A collection, its organizer, two assessors and Q1 (five unjudged strings) in two
    layers: (collection, question, organizer, ann, bob, layer a, layer b, string ids)."""
    c = make_collection()
    org, a, b = make_user(), make_user(), make_user()
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    q = make_question(
        collection=c, qid="Q1", unjudged=["Lennon", "John Lennon", "McCartney", "Ringo", "Yoko"]
    )
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org)
    la, lb = (JudgingLayer.objects.get(question=q, assessor=u) for u in (a, b))
    ids = {s.text: s.pk for s in q.strings.all()}
    return c, q, org, a, b, la, lb, ids


def judge(layer, user, ids, plan):
    """``plan``: list of (text, group or None, level code)."""
    for text, group, level in plan:
        have = set(LayerJudgment.objects.filter(layer=layer).values_list("group", flat=True))
        if group is None:
            layers.layer_judge(layer=layer, string=ids[text], by=user)
        elif group in have:
            layers.layer_judge(layer=layer, string=ids[text], group=group, level=level, by=user)
        else:
            layers.layer_judge(layer=layer, string=ids[text], new_group=True, level=level, by=user)


PLAN_A = [
    ("Lennon", 1, "S"),
    ("John Lennon", 1, "S"),
    ("McCartney", 2, "S"),
    ("Ringo", 3, "A"),
    ("Yoko", None, None),
]
PLAN_B = [
    ("Lennon", 1, "S"),
    ("John Lennon", 1, "S"),
    ("McCartney", 2, "A"),
    ("Ringo", None, None),
    ("Yoko", None, None),
]


def both_done(study):
    _c, _q, _org, a, b, la, lb, ids = study
    judge(la, a, ids, PLAN_A)
    judge(lb, b, ids, PLAN_B)
    layers.layer_mark_done(layer=la, by=a)
    layers.layer_mark_done(layer=lb, by=b)


def gold(q):
    return {
        s.text: (
            s.synset.ordinal if s.synset else None,
            s.level.code if s.level else None,
            s.judged_at is not None,
        )
        for s in q.strings.select_related("synset", "level")
    }
