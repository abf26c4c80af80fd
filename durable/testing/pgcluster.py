"""A throwaway PostgreSQL server for tests and benchmarks: `initdb` in a temp dir, `pg_ctl` on a
free port of 127.0.0.1, removed again by `stop()`.

`initdb` refuses to run as root, so when this process is root the server's commands run as the
`postgres` user (`runuser -u postgres --`) in a temp dir owned by that user; otherwise as the
current user. The binaries are found on PATH or in Debian's /usr/lib/postgresql/<version>/bin;
when they are missing `PostgresNotFound` says how to install them (scripts/ensure-postgres).
Authentication is `trust` on 127.0.0.1 and the unix socket in the temp dir: a test server only.

    cluster = TempCluster()
    cluster.start()            # initdb + pg_ctl start + CREATE DATABASE; about a second
    cluster.dsn                # "host=127.0.0.1 port=... user=postgres dbname=durable"
    cluster.restart()          # pg_ctl restart -m immediate (a server crash, WAL replayed)
    cluster.stop()             # pg_ctl stop -m immediate, temp dir removed
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from typing import Self


class PostgresNotFound(RuntimeError):
    """The PostgreSQL server binaries (initdb, pg_ctl) are not installed."""


def find_bindir() -> str:
    """The folder holding initdb and pg_ctl: PATH first, then the newest Debian install."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return os.path.dirname(os.path.realpath(found))
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if candidates:
        return os.path.dirname(candidates[-1])
    raise PostgresNotFound(
        "The PostgreSQL server binaries (initdb, pg_ctl) are not installed, neither on PATH nor in "
        "/usr/lib/postgresql/*/bin: run scripts/ensure-postgres (apt-get install postgresql) first, "
        "or set DURABLE_SKIP_POSTGRES=1 to skip the PostgreSQL tests")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class TempCluster:
    """One throwaway server. `fsync=False` trades crash safety of the OS for speed (a killed
    server still loses nothing: its WAL is in the OS cache)."""

    def __init__(self, *, dbname: str = "durable", fsync: bool = True) -> None:
        self.bindir = find_bindir()
        self.dbname = dbname
        self.fsync = fsync
        self.port = 0
        self.root = ""
        self.running = False
        self._as_postgres = os.geteuid() == 0
        self._watchdog: subprocess.Popen[bytes] | None = None

    @property
    def datadir(self) -> str:
        return os.path.join(self.root, "data")

    @property
    def sockdir(self) -> str:
        return os.path.join(self.root, "sock")

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={self.dbname}"

    def dsn_for(self, dbname: str) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={dbname}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [os.path.join(self.bindir, args[0]), *args[1:]]
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=self.root or None, check=False,
                              stdin=subprocess.DEVNULL)
        if check and proc.returncode != 0:
            said = proc.stderr.strip() or proc.stdout.strip()
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {said}{self._log_tail()}")
        return proc

    def _log_tail(self) -> str:
        try:
            with open(os.path.join(self.root, "server.log")) as f:
                return "\nserver log:\n" + "".join(f.readlines()[-20:])
        except OSError:
            return ""

    def start(self) -> Self:
        self.root = tempfile.mkdtemp(prefix="durable-pg-")
        try:
            os.mkdir(self.sockdir, 0o700)
            if self._as_postgres:
                pw = pwd.getpwnam("postgres")
                for folder in (self.root, self.sockdir):
                    os.chown(folder, pw.pw_uid, pw.pw_gid)
            self._run("initdb", "-D", self.datadir, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                      "--locale=C", "--no-sync", "--no-instructions")
            for attempt in range(3):
                self.port = free_port()
                try:
                    self._pg_ctl_start()
                    break
                except RuntimeError:
                    if attempt == 2:
                        raise
            self.running = True
            self._watch()
            self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", self.dbname)
        except BaseException:
            self.stop()
            raise
        return self

    def _watch(self) -> None:
        """A watchdog process: when this process dies without `stop()` (a test run killed by a
        timeout), it stops the server and removes its folder, so that none is left running."""
        pg_ctl = os.path.join(self.bindir, "pg_ctl")
        stop = f"{pg_ctl} -D {self.datadir} -m immediate stop"
        if self._as_postgres:
            stop = f"runuser -u postgres -- {stop}"
        script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
                  f"{stop} >/dev/null 2>&1; rm -rf {self.root}")
        self._watchdog = subprocess.Popen(["sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, start_new_session=True)

    def _pg_ctl_start(self) -> None:
        options = f"-p {self.port} -k {self.sockdir} -c listen_addresses=127.0.0.1"
        if not self.fsync:
            options += " -c fsync=off"
        self._run("pg_ctl", "-D", self.datadir, "-l", os.path.join(self.root, "server.log"), "-w", "-t", "30",
                  "-o", options, "start")

    def createdb(self, name: str) -> str:
        """A new database on this server; returns its DSN."""
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return self.dsn_for(name)

    def restart(self, mode: str = "immediate") -> None:
        """`pg_ctl restart -m <mode>`: "immediate" is a server crash (recovery from the WAL)."""
        self._run("pg_ctl", "-D", self.datadir, "-m", mode, "-w", "-t", "30", "stop")
        self._pg_ctl_start()

    def stop(self) -> None:
        """Stop the server at once and remove its folder. Idempotent."""
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
            self._watchdog = None
        if self.running:
            self._run("pg_ctl", "-D", self.datadir, "-m", "immediate", "-w", "-t", "30", "stop", check=False)
            self.running = False
        if self.root:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = ""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
