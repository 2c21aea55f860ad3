"""Background jobs: the heavy work of the other apps (run uploads, imports, pooling, the
matching-mode change, archives, reliability reports, large exports) run as tasks of
Django's task framework (``django_tasks``, the backport of ``django.tasks``), recorded here
as ``Job`` rows that the pages poll for progress (DESIGN.md section 8).

This app imports no other app of the project (as ``config``): the apps register their job
functions by dotted path and pass their errors in as plain dicts.
"""
