"""Signals of the annotation app, for apps that build on it (evaluation) without annotate
importing them: dependencies point one way, evaluation -> annotate -> engine."""

from django.dispatch import Signal

# sent inside the transaction that changed a collection's matching mode, after its strings
# were re-keyed; arguments: collection, mode.  evaluation re-keys its run answers on it.
matching_mode_changed = Signal()
