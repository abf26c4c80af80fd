"""Draw `results/latency.png` from `results/agent_turns.json`: cold and warm turn latency against
history size, ours beside pi-durable's published figures.

Run: `python benchmarks/chart.py`. matplotlib is not a project dependency: when it cannot be
imported, this script installs it into the benchmarks' own venv (`benchmarks/.peers-venv`) and
runs itself again with that venv's python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402


def draw() -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = json.loads((c.RESULTS / "agent_turns.json").read_text())
    rows = sorted(data["rows"], key=lambda r: r["turns"])
    pi = data["pi_durable"]
    sizes = [r["turns"] for r in rows]
    pi_sizes = sorted(int(k) for k in pi["cold_ms"])

    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=120)
    ax.plot(sizes, [r["cold_s"] * 1000 for r in rows], "o-", color="#1f77b4", lw=2,
            label="durable: cold (open file + first turn)")
    ax.plot(sizes, [r["warm_s"] * 1000 for r in rows], "s-", color="#2ca02c", lw=2,
            label="durable: warm (median of next 9 turns)")
    ax.plot(sizes, [r["cold_from_process_start_s"] * 1000 for r in rows], "o:", color="#1f77b4", alpha=0.6,
            label="durable: cold from process start (python + imports + open + turn)")
    ax.plot(pi_sizes, [pi["cold_ms"][str(s)] for s in pi_sizes], "o--", color="#d62728",
            label="pi-durable (published): cold")
    ax.plot(pi_sizes, [pi["warm_ms"][str(s)] for s in pi_sizes], "s--", color="#ff7f0e",
            label="pi-durable (published): warm")
    for r in rows:
        ax.annotate(f"{r['cold_s'] * 1000:.0f}", (r["turns"], r["cold_s"] * 1000), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize=8, color="#1f77b4")
        ax.annotate(f"{r['warm_s'] * 1000:.0f}", (r["turns"], r["warm_s"] * 1000), textcoords="offset points",
                    xytext=(0, 7), ha="center", fontsize=8, color="#2ca02c")
    ax.set_xscale("log")
    ax.set_xticks(sorted(set(sizes) | set(pi_sizes)))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("conversation history (turns; log scale)")
    ax.set_ylabel("latency of one turn with 8 tool calls (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    m = data["machine"]
    ax.set_title("Turn latency against history size: durable (default synchronous) vs pi-durable (published)",
                 fontsize=10)
    fig.text(0.01, 0.01, f"durable: {m['nproc']} cores {m['cpu']}, Python {m['python']}, SQLite {m['sqlite']}, "
             f"{m['tmp_fs']}, {data['measured_at']}.\npi-durable: its published figures "
             "(other hardware, Node, synchronous=NORMAL).", fontsize=7, color="#555555")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    out = c.RESULTS / "latency.png"
    fig.savefig(out)
    return str(out)


def main() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if os.environ.get("DURABLE_BENCH_CHART_REEXEC"):
            raise
        py, status = c.peers_python("matplotlib")
        if status.get("matplotlib") != "ok":
            sys.exit(f"matplotlib is not available: {status.get('matplotlib')}")
        env = dict(os.environ, DURABLE_BENCH_CHART_REEXEC="1")
        sys.exit(subprocess.call([py, os.path.abspath(__file__)], env=env))
    print(f"wrote {draw()}")


if __name__ == "__main__":
    main()
