from __future__ import annotations

from django import forms
from django.conf import settings

from config.uploads import check_upload_size
from evaluation.analysis.significance import INTERVALS, MAX_TRIALS, TESTS
from evaluation.metrics import BASE_METRICS, parse_gains
from evaluation.metrics.gains import DEFAULT_BETA, DEFAULT_RBP_P, check_parameters
from evaluation.services import run_name_problem

METRIC_LABELS = {
    "q_measure": "Q-measure",
    "r_measure": "R-measure",
    "rr": "RR",
    "ap": "AP",
    "ap_rigid": "AP (rigid)",
    "awp": "AWP",
    "rwp": "R-WP",
    "r_prec": "R-prec",
    "ndcg": "nDCG",
    "rbp": "RBP",
    "rr_trunc": "RR′",
    "ap_trunc": "AP′",
    "ndcg_trunc": "nDCG′",
    "rbp_trunc": "RBP′",
}
CUTOFFS = ("p@1", "p@3", "p@5", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10")


def metric_label(name: str) -> str:
    if name in METRIC_LABELS:
        return METRIC_LABELS[name]
    base, _, k = name.partition("@")
    return f"{'P' if base == 'p' else 'nDCG'}@{k}"


METRIC_CHOICES = [(m, metric_label(m)) for m in (*BASE_METRICS, *CUTOFFS)]
GAIN_CHOICES = [
    ("default", "collection's gains"),
    ("3:2:1", "3:2:1"),
    ("1:1:1", "1:1:1 (binary)"),
    ("10:5:1", "10:5:1 (steep)"),
    ("adjusted", "adjusted (eq. 7)"),
    ("custom", "custom…"),
]


class ScoreConfigForm(forms.Form):
    """The score configuration of a page, read from the query string."""

    metric = forms.MultipleChoiceField(
        choices=METRIC_CHOICES, required=False, widget=forms.CheckboxSelectMultiple
    )
    gains = forms.ChoiceField(choices=GAIN_CHOICES, required=False)
    custom_gains = forms.CharField(
        required=False, max_length=200, help_text="e.g. S=4,A=2,B=1 or adjusted:10:5:1"
    )
    # ranges: the engine's one check (gains.check_parameters), as for the API and qa-score
    beta = forms.FloatField(required=False)
    rbp_p = forms.FloatField(required=False, label="RBP p")

    def clean_custom_gains(self):
        spec = (self.cleaned_data.get("custom_gains") or "").strip()
        try:
            parse_gains(spec or None)
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e
        return spec

    def _checked(self, name: str, default: float) -> float | None:
        """The field ``name``, in the engine's range (``check_parameters``: one rule for
        the pages, the API and qa-score); blank means ``default``."""
        value = self.cleaned_data.get(name)
        try:
            check_parameters(**{name: default if value is None else value})
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e
        return value

    def clean_beta(self):
        return self._checked("beta", DEFAULT_BETA)

    def clean_rbp_p(self):
        return self._checked("rbp_p", DEFAULT_RBP_P)

    @classmethod
    def showing(cls, config) -> ScoreConfigForm:
        """An unbound form showing what a page was computed with (``config``: a
        ``services.ScoreConfig``)."""
        named = config.gains in dict(GAIN_CHOICES)
        return cls(
            initial={
                "metric": list(config.metrics),
                "beta": config.beta,
                "rbp_p": config.rbp_p,
                "gains": config.gains if named else "custom",
                "custom_gains": "" if named else config.gains,
            }
        )

    def gain_spec(self) -> str:
        gains = self.cleaned_data.get("gains") or "default"
        if gains == "custom":
            return (self.cleaned_data.get("custom_gains") or "").strip() or "default"
        return gains


class TestConfigForm(forms.Form):
    """How the runs and ranking pages compute their 95% intervals and the ranking page its
    all-pairs tests (``significance.TestConfig``), read from the query string."""

    interval = forms.ChoiceField(choices=list(INTERVALS.items()), required=False, label="95% CI")
    test = forms.ChoiceField(choices=list(TESTS.items()), required=False, label="Pair test")
    # bootstrap samples / Tukey permutations (the template's label says which)
    trials = forms.IntegerField(required=False, min_value=1, max_value=MAX_TRIALS, label="Trials")
    seed = forms.IntegerField(required=False, min_value=0, max_value=2**63 - 1)

    @classmethod
    def showing(cls, config) -> TestConfigForm:
        """An unbound form showing ``config`` (a ``significance.TestConfig``)."""
        return cls(
            initial={
                "interval": config.interval,
                "test": config.test,
                "trials": config.trials,
                "seed": config.seed,
            }
        )


class RunUploadForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="the run tag, unique in the collection")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    format = forms.ChoiceField(
        choices=[("", "detect"), ("qa", "QA run (TSV or CSV)"), ("trec", "TREC run")],
        required=False,
    )
    # help texts are rendered as HTML by Django's form templates: no angle brackets here
    file = forms.FileField(
        help_text="QA TSV, tab-separated: question_id, rank, answer and an "
        "optional score; CSV with a header "
        "question_id,rank,answer[,score]; or TREC: "
        "qid Q0 docno rank score tag"
    )

    def clean_name(self):
        name = self.cleaned_data["name"]
        if problem := run_name_problem(name):
            raise forms.ValidationError(problem[0].upper() + problem[1:] + ".")
        return name

    def clean_file(self):
        return check_upload_size(self.cleaned_data["file"], settings.RUN_UPLOAD_MAX_MB, "runs")


class RunReplaceForm(forms.Form):
    """A new file for an existing run (its name and description stay)."""

    format = forms.ChoiceField(
        choices=[("", "detect"), ("qa", "QA run (TSV or CSV)"), ("trec", "TREC run")],
        required=False,
    )
    file = forms.FileField(help_text=RunUploadForm.base_fields["file"].help_text)

    def clean_file(self):
        return check_upload_size(self.cleaned_data["file"], settings.RUN_UPLOAD_MAX_MB, "runs")
