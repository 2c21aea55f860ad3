"""A whole collection in one zip archive and back (levels, members, questions, synsets,
strings with their judgments, audit events, runs with their answers, the assessors'
layers).

Users are referred to by username and levels by code.  Synsets, strings and events carry
archive ids (1, 2, ... in export order) instead of database ids, and the snapshots of the
audit trail name them by these ids; an import gives them new database ids of the new
collection, so that undo works there and no id of an archive ever names a row outside the
collection it creates.  Importing validates the whole archive first (format, every field,
every reference, sizes) and then writes everything in one transaction; a round trip gives
identical judgments, audit trail and scores for every run.  Version 1 archives (database
ids in the audit trail) are still read; their snapshots are kept without ids, so the
actions they record cannot be undone.  Version 3 adds the assessors' independent layers
(``layers.csv``, ``layer_judgments.csv``; DESIGN.md section 9) and names the layer of each
layer event; version 1 and 2 archives have no layers.  Version 4 adds each level's
``examples`` (earlier archives' levels have none).

The modules: ``format`` (members, columns by version, how values are written),
``exporting`` (``collection_export``), ``validation`` (the archive read and checked whole)
and ``importing`` (``collection_import``: validate, plan, write).
"""
