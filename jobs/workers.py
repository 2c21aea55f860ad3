"""Who runs a job, and whether that process is still alive.

A running job's row names its worker ``host:pid:machine-start``: the host and pid for
people, the machine (this kernel's boot and this pid namespace) and the process's start
time for ``jobs.services.jobs_reap``.  A pid only tells whether a worker is alive where it
means the same process: on the same machine, in the same pid namespace (a container has its
own, possibly under the very host name of the web server's container), since the same boot,
and while the pid has not been given to another process.  Anywhere else the job's
heartbeat tells.
"""

from __future__ import annotations

import hashlib
import os
import socket
from functools import cache
from pathlib import Path


@cache
def this_machine() -> str:
    """A short name for where this process's pids are meaningful: the kernel's boot id and
    the pid namespace ("" where /proc does not tell)."""
    parts = []
    try:
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
        parts.append(os.readlink("/proc/self/ns/pid"))
    except OSError:
        return ""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _stat(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat from the third on (state, ppid, ...), [] where /proc
    does not tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    # the command name (field 2) is in parentheses and may hold spaces: split after it
    return stat.rpartition(")")[2].split()


def process_started(pid: int) -> str:
    """When process ``pid`` started, in clock ticks since boot (field 22 of
    /proc/<pid>/stat; "" where /proc does not tell): with the pid, it names one process."""
    fields = _stat(pid)
    return fields[19] if len(fields) > 19 else ""


def worker_name() -> str:
    """This process as a job's worker: ``host:pid:machine-start``."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{this_machine()}-{process_started(pid)}"


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs here: it exists and is no zombie (killed, and not yet
    collected by its parent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return _stat(pid)[:1] not in (["Z"], ["X"])


def worker_alive(worker: str) -> bool | None:
    """Whether the worker named ``worker`` is alive: True or False where this process can
    tell from its pid, None where it cannot (another host, container or boot: the job's
    heartbeat tells).  ``host:pid`` names (written before the machine was added) are
    judged by host and pid alone."""
    host, _, rest = worker.partition(":")
    pid, _, where = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    if not where:
        return _pid_alive(int(pid))
    machine, _, started = where.partition("-")
    if machine != this_machine():
        return None
    # (without /proc, as on macOS, both are "": the host name is all there is to go by)
    # a live pid is the worker only if it started when the worker did (else the pid was
    # given to another process since)
    return _pid_alive(int(pid)) and (not started or process_started(int(pid)) in ("", started))
