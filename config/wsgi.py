import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from config.checks import refuse_to_serve_without_a_secret_key  # noqa: E402

refuse_to_serve_without_a_secret_key()

# uploads a killed worker was spooling are deleted (and the upload directory created)
from config.uploads import clean_upload_dir  # noqa: E402

clean_upload_dir()

# What is loaded by now lives as long as the process: the collector's full passes need not
# walk it again and again (and workers forked from a preloading master keep sharing its
# pages).  A larger first generation keeps one page of 1,000 answer strings from setting
# off several collections; full passes stay bounded (every ~1 M net allocations).
gc.freeze()
gc.set_threshold(10_000, 10, 10)
