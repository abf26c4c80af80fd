"""Shared helpers of the benchmark scripts (not part of the library).

Kept to the standard library: the cold-start child of `agent_turns.py` imports it before it
starts timing `import durable`, and the peer scripts run it under another virtual environment.

- `machine()`: what the figures were measured on (cores, CPU model, Python, SQLite, temp dir FS);
- `table()`: a Markdown table, printed by every script and copied into `results/results.md`;
- `save()`: writes `results/<name>.json` and replaces the script's section in `results/results.md`;
- `peers_python()`: the benchmark's own virtual environment for the peers (DBOS, LangGraph,
  matplotlib), created on first use with `python -m venv` + `pip install`; never the project's.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
PEERS_VENV = BENCH / ".peers-venv"
SPAWN_ENV = "DURABLE_BENCH_SPAWN_T"  # time.time() of the parent just before it spawned a child


# --------------------------------------------------------------------------- machine


def _fs_type(path: str) -> str:
    best, fstype = "", "?"
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and (path == parts[1] or path.startswith(parts[1].rstrip("/") + "/")):
                    if len(parts[1]) >= len(best):
                        best, fstype = parts[1], parts[2]
    except OSError:
        pass
    return f"{fstype} (mounted at {best or '?'})"


def machine() -> dict[str, Any]:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    tmp = tempfile.gettempdir()
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "durable"], capture_output=True, text=True,
                               cwd=ROOT).stdout.splitlines()
        code = f"{head}" + (f" + uncommitted changes in {len(dirty)} files under durable/" if dirty else "")
    except OSError:
        code = "?"
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "os": f"{platform.system()} {platform.release()}",
        "tmp": tmp,
        "tmp_fs": _fs_type(os.path.realpath(tmp)),
        "loadavg_1min": round(os.getloadavg()[0], 2),
        "code": code,
    }


def machine_line(m: dict[str, Any] | None = None) -> str:
    m = m or machine()
    return (f"{m['nproc']} cores ({m['cpu']}), Python {m['python']}, SQLite {m['sqlite']}, "
            f"{m['os']}, temp dir {m['tmp']} on {m['tmp_fs']}; load average {m.get('loadavg_1min', '?')}; "
            f"code {m.get('code', '?')}")


# --------------------------------------------------------------------------- numbers and tables


def median(xs: Iterable[float]) -> float:
    return statistics.median(list(xs))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    return "\n".join(out)


# --------------------------------------------------------------------------- results files


_RESULTS_HEAD = """# Benchmark results

Measured by the scripts in `benchmarks/` (see `benchmarks/README.md`), each section by one run
of its script on the machine named in it. Figures are wall-clock unless said otherwise; they
are measurements of one run on one machine, not guarantees.
"""


def save(name: str, data: dict[str, Any], markdown: str) -> None:
    """Write results/<name>.json and replace the `name` section of results/results.md."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    data = {"benchmark": name, "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(), **data}
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=2) + "\n")
    md_path = RESULTS / "results.md"
    text = md_path.read_text() if md_path.exists() else _RESULTS_HEAD
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    section = f"{begin}\n{markdown.strip()}\n\n_Machine: {machine_line(data['machine'])}; measured {data['measured_at']}._\n{end}"
    if begin in text and end in text:
        text = re.sub(re.escape(begin) + r".*?" + re.escape(end), lambda _: section, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    md_path.write_text(text)


# --------------------------------------------------------------------------- children


def spawn_time() -> float | None:
    value = os.environ.get(SPAWN_ENV)
    return float(value) if value else None


CODE_ENV = "DURABLE_BENCH_CODE"


def run_child(argv: Sequence[str], *, timeout: float = 600, python: str | None = None,
              code: str | None = None) -> dict[str, Any]:
    """Run `python argv...` with the spawn time in its environment; return the JSON object it
    prints on its last stdout line. `code`: another checkout whose `durable` the child imports
    (same interpreter and packages; the child calls `use_code_from_env` first)."""
    exe = python or sys.executable
    env = child_env()
    if code:
        env[CODE_ENV] = code
    proc = subprocess.run([exe, *argv], capture_output=True, text=True, timeout=timeout, env=env, cwd=str(ROOT))
    if proc.returncode != 0:
        raise RuntimeError(f"child {argv} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"child {argv} printed no JSON:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1])


def use_code_from_env() -> None:
    """In a child given `code` by `run_child`: import `durable` from that checkout, not from the
    one installed (editable) in this interpreter. Call before importing durable."""
    code = os.environ.get(CODE_ENV)
    if code:
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")
                            and "editable" not in getattr(f, "__name__", "")]
        sys.path.insert(0, code)


def child_env() -> dict[str, str]:
    _compile_durable()
    env = dict(os.environ)
    env[SPAWN_ENV] = repr(time.time())
    return env


_compiled = False


def _compile_durable() -> None:
    """Compile durable's modules to bytecode (`__pycache__`) once, before the first child: an
    installed copy has its .pyc (pip compiles at install), but a checkout run where
    PYTHONDONTWRITEBYTECODE is set would compile every module again in every child, some 60 ms of
    each cold start that no user pays. Children only read the .pyc; nothing else changes."""
    global _compiled
    if not _compiled:
        import compileall

        compileall.compile_dir(str(ROOT / "durable"), quiet=1)
        _compiled = True


# --------------------------------------------------------------------------- peers venv

PEER_PACKAGES = {
    "dbos": ["dbos"],
    "langgraph": ["langgraph", "langgraph-checkpoint-sqlite"],
    "matplotlib": ["matplotlib"],
    "pydantic_ai": ["pydantic-ai-slim[dbos]"],
    "openai_agents": ["openai-agents"],
}


def peers_python(*wanted: str, quiet: bool = False) -> tuple[str | None, dict[str, str]]:
    """The peers venv's python (created on first use) and, per wanted peer, "ok" or why it is
    unavailable. Peers are installed with pip into benchmarks/.peers-venv only."""
    status: dict[str, str] = {}
    py = PEERS_VENV / "bin" / "python"
    if not py.exists():
        if not quiet:
            print(f"[peers] creating {PEERS_VENV} (python -m venv; peers are never project dependencies)", flush=True)
        proc = subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], capture_output=True, text=True)
        if proc.returncode != 0 or not py.exists():
            why = f"cannot create {PEERS_VENV}: {proc.stderr.strip()[-500:]}"
            return None, {w: why for w in wanted}
    for peer in wanted:
        module = {"dbos": "dbos", "langgraph": "langgraph.checkpoint.sqlite", "matplotlib": "matplotlib",
                  "pydantic_ai": "pydantic_ai.durable_exec.dbos", "openai_agents": "agents"}[peer]
        check = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True, text=True)
        if check.returncode == 0:
            status[peer] = "ok"
            continue
        if not quiet:
            print(f"[peers] pip install {' '.join(PEER_PACKAGES[peer])} into {PEERS_VENV}", flush=True)
        proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               *PEER_PACKAGES[peer]], capture_output=True, text=True)
        check = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True, text=True)
        status[peer] = "ok" if check.returncode == 0 else (
            f"not installable here: {(proc.stderr or check.stderr).strip().splitlines()[-1:] or ['?']}")
    return str(py), status


def peer_version(py: str, dist: str) -> str:
    proc = subprocess.run([py, "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                          capture_output=True, text=True)
    return proc.stdout.strip() or "?"
