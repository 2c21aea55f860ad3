"""A worker killed in the middle of an upload leaves no spooled file behind: the worker
gunicorn starts in its place deletes it (gunicorn, production settings)."""

import os
import signal
import socket
import time

import pytest

from .helpers import free_port, start_gunicorn, stop

pytestmark = [
    pytest.mark.postgres(reason="fault tests need PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def test_the_spooled_file_of_a_killed_worker_is_deleted(tmp_path):
    uploads = tmp_path / "uploads"
    port = free_port()
    log = tmp_path / "gunicorn.log"
    server = start_gunicorn(port, log, workers=2, DJANGO_UPLOAD_TEMP_DIR=str(uploads))
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        boundary = "qaboundary"
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            'filename="run.tsv"\r\nContent-Type: text/plain\r\n\r\n'
        ).encode()
        total = 30 * 1024 * 1024
        sock.sendall(
            (
                f"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Cookie: csrftoken=abcdefghijklmnopqrstuvwxyzABCDEF\r\n"
                f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                f"Content-Length: {total}\r\n\r\n"
            ).encode()
            + head
        )
        chunk = b"Q1\t1\tanswer\n" * 8192
        sent, spooled = 0, []
        deadline = time.monotonic() + 20
        while not spooled and time.monotonic() < deadline:
            sock.sendall(chunk)
            sent += len(chunk)
            spooled = list(uploads.iterdir()) if uploads.exists() else []
            if sent > 20 * 1024 * 1024:
                time.sleep(0.1)
        assert spooled, "the upload was not spooled to the upload directory"
        pid = int(spooled[0].name.split("~")[1])
        os.kill(pid, signal.SIGKILL)
        sock.close()
        # gunicorn starts a new worker, which deletes what the dead one left
        deadline = time.monotonic() + 20
        while any(uploads.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not list(uploads.iterdir()), list(uploads.iterdir())
    finally:
        sock.close()
        stop(server)
