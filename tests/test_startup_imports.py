"""No scipy or pandas at ``manage.py`` start-up (issue 24 item 5): they cost a second or two
of CPU each time a command starts, and only the scoring and analysis that need them
import them (inside the functions that use them: ``engine.Scores.per_question``,
``reliability.comparisons``, ``reliability.samples_csv``).  bench/startup_bench.py gives
the figures."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("scipy", "pandas")

# in a fresh interpreter (this test process has imported everything already): set Django
# up, then import every management command's module as ``manage.py <command>`` does, and
# name the modules each one brought in first
PROBE = """
import json, os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
import django
django.setup()
heavy = %r
out = {"setup": [m for m in heavy if m in sys.modules], "commands": {}}
from django.core.management import get_commands, load_command_class
for name, app in sorted(get_commands().items()):
    before = {m for m in heavy if m in sys.modules}
    load_command_class(app, name)
    new = [m for m in heavy if m in sys.modules and m not in before]
    if new:
        out["commands"][name] = new
print(json.dumps(out))
"""


def _probe() -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_setup_and_every_management_command_start_without_scipy_or_pandas():
    found = _probe()
    assert found["setup"] == [], "django.setup() imported " + ", ".join(found["setup"])
    assert found["commands"] == {}, (
        "loading these commands imported (command: modules) "
        + json.dumps(found["commands"])
        + "; import them inside the function that needs them"
    )


def test_manage_py_help_lists_the_commands_without_scipy_or_pandas():
    code = (
        "import runpy, sys\n"
        "sys.argv = ['manage.py', 'help']\n"
        "try:\n"
        "    runpy.run_path('manage.py', run_name='__main__')\n"
        "finally:\n"
        f"    print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "import_run" in done.stdout and "reliability" in done.stdout
    assert "HEAVY []" in done.stderr, done.stderr
