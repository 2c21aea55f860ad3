"""Red team: numbers in an archive that ``str.isdigit`` accepts but ``int`` refuses ("²")
are refused as a named problem (InputError), never a traceback."""

import pytest

from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import
from evaluation.metrics import InputError
from tests.evaluation.test_archive import manifest, rewrite

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("value", ["²", "¹²"])
def test_superscript_numbers_in_an_archive_are_refused(demo, value):
    data = rewrite(
        collection_export(collection=demo),
        manifest_json=manifest(lambda m: m["levels"][0].update(order=value)),
    )
    with pytest.raises(InputError, match="order"):
        collection_import(data=data, slug="bad", filename="bad.zip")
