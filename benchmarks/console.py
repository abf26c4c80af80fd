"""Benchmark: the console following 100 conversations that stream at once into one session file.

Run: `python benchmarks/console.py [--conversations 100] [--seconds 6]`. Not a test. A writer
process (`--writer`) owns the file: one harness, N conversations, each answered by a faux model
streaming a long answer (partial answers committed every `persist_within`, 0.1 s, the default);
it records every commit of each conversation's live document (conversation, length of the
partial answer, time), as `Conversation.follow()` hands it over. `durable console FILE` serves
the file standalone (read-only), and an SSE client here reads its `state` events. A commit's
latency is the time from its commit to the first event showing that conversation's answer at
least that long (the console may fold several commits into one look: the newer one shows the
older). Prints the median and p99 latency, the commits seen, and the console's CPU (its
process's user+system time over the streaming, as a share of one core); targets: 250 ms, 10%.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def writer(path: str, n: int, seconds: float) -> None:
    import anyio

    import durable
    from durable.models import FauxModel, faux

    tokens = 60
    text = "".join(f"w{i:03d}. " for i in range(tokens))  # 6-character tokens

    async def main() -> None:
        model = FauxModel([faux.reply(text)] * n, token_size=6, tokens_per_second=tokens / seconds)
        commits: list[tuple[str, int, float]] = []
        async with durable.open_harness(path, model=model) as h:
            await h.resume()
            print("open", flush=True)
            sys.stdin.readline()  # "go": the console and its client are ready

            async def follow(cid: str) -> None:
                async for live in h.conversation(cid).follow():
                    gen = live.generation
                    if gen is not None and gen.message.text:
                        commits.append((cid, len(gen.message.text), time.time()))

            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(follow, f"c{i:03d}")
                handles = [await h.conversation(f"c{i:03d}").submit("Go") for i in range(n)]
                for handle in handles:
                    await handle.wait()
                tg.cancel_scope.cancel()
        with open(path + ".commits.json", "w") as f:
            json.dump(commits, f)
        print("done", flush=True)

    anyio.run(main, backend="trio")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    import argparse

    import httpx

    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--writer", nargs=3, metavar=("PATH", "N", "SECONDS"))
    args = parser.parse_args()
    if args.writer:
        writer(args.writer[0], int(args.writer[1]), float(args.writer[2]))
        return
    folder = tempfile.mkdtemp(prefix="durable-console-bench-")
    path = os.path.join(folder, "bench.sqlite")
    w = subprocess.Popen([sys.executable, __file__, "--writer", path, str(args.conversations), str(args.seconds)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert w.stdout is not None and w.stdin is not None
    assert w.stdout.readline().strip() == "open"
    durable_bin = os.path.join(os.path.dirname(sys.executable), "durable")
    c = subprocess.Popen([durable_bin, "console", path, "--port", "0", "--token", "bench"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert c.stdout is not None
    url = c.stdout.readline().strip().split(": ", 1)[1]
    base = url.split("/?")[0]
    seen: list[tuple[str, int, float]] = []
    ready = threading.Event()
    stop = threading.Event()

    def client() -> None:
        try:
            follow()
        except httpx.RemoteProtocolError:
            if not stop.is_set():  # the console stopping at the end cuts the stream: expected then
                raise

    def follow() -> None:
        with httpx.Client(base_url=base, timeout=30, cookies={"durable_console": "bench"}) as http:
            with http.stream("GET", "/api/sessions/0/events?conversation=c000&after=0") as events:
                name = ""
                for line in events.iter_lines():
                    if stop.is_set():
                        return
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name == "state":
                        now = time.time()
                        ready.set()
                        for cid, doc in json.loads(line[6:])["live"].items():
                            gen = doc.get("generation")
                            if gen and gen["message"]["text"]:
                                seen.append((cid, len(gen["message"]["text"]), now))
                            elif gen is None and doc.get("run") is None:  # answered: past every partial
                                seen.append((cid, 1 << 30, now))

    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    ready.wait(30)
    cpu0, t0 = cpu_seconds(c.pid), time.monotonic()
    w.stdin.write("go\n")
    w.stdin.flush()
    assert w.stdout.readline().strip() == "done"
    cpu1, t1 = cpu_seconds(c.pid), time.monotonic()
    time.sleep(0.5)
    stop.set()
    c.terminate()
    c.wait()
    w.wait()
    with open(path + ".commits.json") as f:
        commits = json.load(f)
    first_seen: dict[str, list[tuple[int, float]]] = {}
    for cid, length, at in seen:
        first_seen.setdefault(cid, []).append((length, at))
    latencies, missed = [], 0
    for cid, length, at in commits:
        shown = [t for n, t in first_seen.get(cid, []) if n >= length and t >= at - 0.001]
        if shown:
            latencies.append(min(shown) - at)
        else:
            missed += 1
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
    cpu = (cpu1 - cpu0) / (t1 - t0) * 100
    print(f"{args.conversations} conversations streaming for {t1 - t0:.1f} s: {len(commits)} commits of partial "
          f"answers, {len(latencies)} seen on the console's event stream ({missed} never seen)")
    print(f"commit -> event latency: median {p50:.0f} ms, p99 {p99:.0f} ms (target 250 ms)")
    print(f"console CPU: {cpu:.1f}% of one core (target < 10%); load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
