"""The translations (issue 25): every entry of every ``locale/*/LC_MESSAGES/*.po`` is
translated and none is fuzzy, placeholders survive translation, the committed ``.mo`` files
say what their ``.po`` says, and no template or user-facing Python string is left unmarked.

CI runs ``makemessages`` first (``make messages`` does all of it), so a string marked
but not translated fails here.  The unmarked-text checks are a ratchet: the files listed in
``PENDING_TEMPLATES`` / ``PENDING_PYTHON`` are not marked yet; any other file with
unmarked text fails, and a listed file that has none fails too (take it off the list)."""

from __future__ import annotations

import ast
import gettext
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "locale"


# -- the .po files ------------------------------------------------------------------------


@dataclass
class Entry:
    line: int
    msgctxt: str | None = None
    msgid: str = ""
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False


def _unquote(text: str) -> str:
    return ast.literal_eval(text)


def parse_po(path: Path) -> list[Entry]:
    """The entries of a .po file (a small reader of the format gettext writes)."""
    entries: list[Entry] = []
    entry: Entry | None = None
    target: tuple[str, int] | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line:
            entry, target = None, None
            continue
        if line.startswith("#~"):
            if entry is None:
                entry = Entry(number)
                entries.append(entry)
            entry.obsolete = True
            continue
        if line.startswith("#,"):
            if entry is None:
                entry = Entry(number)
                entries.append(entry)
            entry.flags |= {f.strip() for f in line[2:].split(",")}
            continue
        if line.startswith("#"):
            continue
        if entry is None:
            entry = Entry(number)
            entries.append(entry)
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            assert target is not None, f"{path}:{number}: a string continues nothing"
            name, index = target
            value = _unquote(line)
        elif keyword in ("msgctxt", "msgid", "msgid_plural", "msgstr"):
            name, index, value = keyword, 0, _unquote(rest)
            target = (name, index)
            if name == "msgstr":
                entry.msgstr[0] = ""
        elif keyword.startswith("msgstr["):
            name, index, value = "msgstr", int(keyword[7:-1]), _unquote(rest)
            target = (name, index)
            entry.msgstr[index] = ""
        else:
            raise AssertionError(f"{path}:{number}: cannot read {raw!r}")
        if name == "msgstr":
            entry.msgstr[index] += value
        elif name == "msgctxt":
            entry.msgctxt = (entry.msgctxt or "") + value
        elif name == "msgid_plural":
            entry.msgid_plural = (entry.msgid_plural or "") + value
        else:
            entry.msgid += value
    return entries


def po_files() -> list[Path]:
    return sorted(LOCALE.glob("*/LC_MESSAGES/*.po"))


PLACEHOLDER = re.compile(r"%\((\w+)\)[sdfir]|\{(\w*)\}|%[sd]")


def test_there_is_a_complete_japanese_translation():
    assert (LOCALE / "ja/LC_MESSAGES/django.po").exists()
    assert (LOCALE / "ja/LC_MESSAGES/django.mo").exists()


@pytest.mark.parametrize("po", po_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_entry_is_translated_and_none_is_fuzzy(po):
    problems = []
    for e in parse_po(po):
        if e.obsolete or not e.msgid:
            continue
        where = f"{po.relative_to(ROOT)}:{e.line} {e.msgid!r}"
        if "fuzzy" in e.flags:
            problems.append(f"{where}: fuzzy")
        if not e.msgstr or any(not text.strip() for text in e.msgstr.values()):
            problems.append(f"{where}: not translated")
            continue
        wanted = sorted(PLACEHOLDER.findall(e.msgid + (e.msgid_plural or "")))
        for text in e.msgstr.values():
            got = sorted(set(PLACEHOLDER.findall(text)))
            if got != sorted(set(wanted)):
                problems.append(f"{where}: placeholders {got} instead of {sorted(set(wanted))}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("po", po_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_compiled_file_says_what_its_po_says(po):
    mo = po.with_suffix(".mo")
    assert mo.exists(), f"{mo.relative_to(ROOT)} missing: make messages"
    with mo.open("rb") as f:
        compiled = gettext.GNUTranslations(f)
    stale = []
    for e in parse_po(po):
        if e.obsolete or not e.msgid or e.msgid_plural:
            continue
        got = (
            compiled.pgettext(e.msgctxt, e.msgid)
            if e.msgctxt is not None
            else compiled.gettext(e.msgid)
        )
        if got != e.msgstr.get(0):
            stale.append(f"{e.msgid!r}: {got!r} in the .mo, {e.msgstr.get(0)!r} in the .po")
    assert not stale, f"{mo.relative_to(ROOT)} is stale (make messages):\n" + "\n".join(stale)


# -- unmarked text in templates ------------------------------------------------------------

# not marked for translation yet (issue 25): take a file off once it is
PENDING_TEMPLATES: set[str] = set()

# the templates of the project (the vendored API docs page is ninja's)
TEMPLATE_DIRS = [ROOT / "templates"]

_DROPPED = [
    re.compile(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}", re.S),
    re.compile(r"{#.*?#}", re.S),
    re.compile(r"{%\s*blocktrans(?:late)?\b.*?{%\s*endblocktrans(?:late)?\s*%}", re.S),
    re.compile(r"<(script|style)\b.*?</\1>", re.S | re.I),
    # literal tokens: file formats' field names, keys, sample input, symbols
    re.compile(r"<(code|kbd|samp|var|pre)\b.*?</\1>", re.S | re.I),
    re.compile(r"{%.*?%}", re.S),
    re.compile(r"{{.*?}}", re.S),
    # htmx's attributes hold JSON and URLs (hx-confirm excepted: a person reads it), also
    # where a block gives a tag's attributes alone (base.html's body_attrs)
    re.compile(r"""\shx-(?!confirm)[\w-]+\s*=\s*(?:'[^']*'|"[^"]*")""", re.S),
    re.compile(r"&[#\w]+;"),
]
# attributes whose value a person reads (or hears)
_ATTRIBUTES = re.compile(
    r"""\s(?:title|aria-label|aria-description|placeholder|alt|hx-confirm|data-confirm)
        \s*=\s*(?:"([^"]*)"|'([^']*)')""",
    re.X | re.I,
)
_TAG = re.compile(r"<[^>]*>", re.S)
_WORD = re.compile(r"[A-Za-z]{2,}")


def unmarked_template_text(text: str) -> list[tuple[int, str]]:
    """Visible text of a template that no ``{% translate %}`` or ``{% blocktranslate %}``
    carries, with its line: words of two letters or more outside tags, and the values of
    the attributes people read (``title``, ``aria-label``, ``placeholder``...)."""

    def blank(match: re.Match) -> str:  # keep the line numbers
        return re.sub(r"[^\n]", " ", match.group(0))

    for pattern in _DROPPED:
        text = pattern.sub(blank, text)
    found: list[tuple[int, str]] = []
    for match in _ATTRIBUTES.finditer(text):
        value = (match.group(1) or match.group(2) or "").strip()
        if _WORD.search(value):
            found.append((text.count("\n", 0, match.start()) + 1, value))
    text = _TAG.sub(blank, text)
    for number, line in enumerate(text.splitlines(), 1):
        if _WORD.search(line):
            found.append((number, " ".join(line.split())))
    return found


def templates() -> list[Path]:
    return sorted(p for d in TEMPLATE_DIRS for p in d.rglob("*.html"))


def test_the_unmarked_text_finder_finds_text_and_ignores_what_is_marked():
    found = unmarked_template_text(
        '{% comment %}Notes{% endcomment %}<h1>{% translate "Runs" %}</h1>\n'
        '<p title="{% translate "Why" %}">{{ run.name }} &middot; <code>qid</code> S</p>\n'
        '<button aria-label="Close it">x</button>\n'
        "{% blocktranslate count n=n %}One run{% plural %}{{ n }} runs{% endblocktranslate %}\n"
        "<td>Unmarked words</td>"
    )
    assert found == [(3, "Close it"), (5, "Unmarked words")]


def ratchet(files: list[Path], finder, pending: set[str]) -> tuple[list[str], list[str]]:
    """What ``finder`` finds unmarked in ``files`` outside ``pending`` (file:line: text),
    and the pending files where it finds nothing any more."""
    problems, done = [], []
    for path in files:
        name = str(path.relative_to(ROOT))
        found = finder(path.read_text(encoding="utf-8"))
        if name in pending:
            if not found:
                done.append(name)
            continue
        problems += [f"{name}:{line}: {text}" for line, text in found]
    return problems, done


def test_no_template_has_unmarked_text_but_the_pending_ones():
    problems, done = ratchet(templates(), unmarked_template_text, PENDING_TEMPLATES)
    assert not problems, "unmarked text (wrap it in {% translate %}):\n" + "\n".join(problems)
    assert not done, f"marked now, take them off PENDING_TEMPLATES: {done}"


# -- unmarked user-facing strings in Python ------------------------------------------------

# not marked for translation yet (issue 25): take a file off once it is
PENDING_PYTHON: set[str] = set()

# calls whose first argument a person reads
_MESSAGE_CALLS = {
    "success",
    "error",
    "warning",
    "info",
    "ValidationError",
    "PermissionDenied",
    "JobFailed",
    "JobRefused",
    "Http404",
}
# keyword arguments a person reads (forms, models)
_MESSAGE_KEYWORDS = {"label", "help_text", "verbose_name", "verbose_name_plural", "empty_label"}
PYTHON_DIRS = ["annotate", "evaluation", "api", "jobs", "config"]


def _is_text(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(_WORD.search(node.value))
    if isinstance(node, ast.JoinedStr):
        return any(_is_text(v) for v in node.values)
    if isinstance(node, ast.BinOp):  # "..." % x, "..." + "..."
        return _is_text(node.left) or _is_text(node.right)
    return False


def unmarked_python_strings(source: str) -> list[tuple[int, str]]:
    """User-facing string literals that no ``gettext`` call wraps: the first argument of
    ``messages.error(...)`` and the like, of ``ValidationError``/``PermissionDenied``/the
    jobs' refusals, and forms' and models' ``label``/``help_text``/``verbose_name``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        args = list(node.args)
        if name in _MESSAGE_CALLS:
            # messages.error(request, "..."): the text is the second argument
            position = 1 if name in {"success", "error", "warning", "info"} else 0
            text = args[position] if len(args) > position else None
            if text is not None and _is_text(text):
                found.append((node.lineno, ast.unparse(text)[:80]))
        for keyword in node.keywords:
            if keyword.arg in _MESSAGE_KEYWORDS and _is_text(keyword.value):
                found.append((keyword.value.lineno, ast.unparse(keyword.value)[:80]))
    return found


def python_files() -> list[Path]:
    return sorted(
        p
        for d in PYTHON_DIRS
        for p in (ROOT / d).rglob("*.py")
        if "migrations" not in p.parts and "metrics" not in p.parts
    )


def test_the_unmarked_string_finder():
    found = unmarked_python_strings(
        "messages.error(request, 'Not saved')\n"
        "messages.error(request, _('Saved'))\n"
        "raise ValidationError(f'{x} is wrong')\n"
        "forms.CharField(label=gettext_lazy('Name'), help_text='Say it')\n"
    )
    assert [line for line, _ in found] == [1, 3, 4]


def test_no_python_module_has_unmarked_strings_but_the_pending_ones():
    problems, done = ratchet(python_files(), unmarked_python_strings, PENDING_PYTHON)
    assert not problems, "unmarked strings (wrap them in gettext):\n" + "\n".join(problems)
    assert not done, f"marked now, take them off PENDING_PYTHON: {done}"
