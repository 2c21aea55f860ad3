"""Running service calls against each other in threads (PostgreSQL tests)."""

import threading

from django.db import connection

from annotate import edits


def race(*calls):
    """Run ``calls`` in threads released together; return 'ok' or 'conflict' for each."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i, call):
        try:
            barrier.wait()
            call()
            results[i] = "ok"
        except edits.Conflict:
            results[i] = "conflict"
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results
