"""Benchmark: the cattrs converter against a hand-written dict conversion of the same record.

Run: `python benchmarks/codec.py`. Not a test: it prints a table and says whether the target
(converter round trip at most ~1.2x the hand-written one) is met.

The record is a typical task as the engine commits it many times per run: a generation task in
its tool round (three tool calls, two pending tool tasks), running, with pinned timestamps. A
round trip is `to_data` + `from_data` (no JSON text: `json` costs the same on both sides).
"""

from __future__ import annotations

import sys
import timeit
from typing import Any

from durable import codec
from durable.records import Running, Task, ToolCall
from durable.tasks.generation.records import GenerationInput, ToolRound

TARGET = 1.2


def typical_task() -> Task:
    calls = tuple(
        ToolCall(id=f"call_{i}", name=name, arguments='{"path": "src/app.py", "line": 42}')
        for i, name in enumerate(("read_file", "grep", "run_tests"))
    )
    return Task(
        id=7,
        conversation_id="root",
        kind="generation",
        input=GenerationInput(submission_ids=("sub-1", "sub-2")),
        state=Running(),
        checkpoint=ToolRound(assistant_seq=12, calls=calls, pending=(8, 9), round=2),
        restarts=0,
        parent_id=None,
        created_at=1_700_000_000.25,
        updated_at=1_700_000_012.5,
    )


# ----------------------------------------------------------------------------- hand-written


def hand_to_data(t: Task) -> dict[str, Any]:
    cp = t.checkpoint
    assert isinstance(cp, ToolRound) and isinstance(t.input, GenerationInput)
    return {
        "id": t.id,
        "conversation_id": t.conversation_id,
        "kind": t.kind,
        "input": {"type": "generation", "submission_ids": list(t.input.submission_ids)},
        "state": {"type": "running"},
        "checkpoint": {
            "type": "tools",
            "assistant_seq": cp.assistant_seq,
            "calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in cp.calls],
            "pending": list(cp.pending),
            "round": cp.round,
        },
        "restarts": t.restarts,
        "parent_id": t.parent_id,
        "stop": t.stop,
        "created_at": t.created_at,
        "updated_at": t.updated_at,
    }


def hand_from_data(d: dict[str, Any]) -> Task:
    cp = d["checkpoint"]
    if d["input"]["type"] != "generation" or d["state"]["type"] != "running" or cp["type"] != "tools":
        raise ValueError("unexpected tag")
    return Task(
        id=d["id"],
        conversation_id=d["conversation_id"],
        kind=d["kind"],
        input=GenerationInput(submission_ids=tuple(d["input"]["submission_ids"])),
        state=Running(),
        checkpoint=ToolRound(
            assistant_seq=cp["assistant_seq"],
            calls=tuple(ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in cp["calls"]),
            pending=tuple(cp["pending"]),
            round=cp["round"],
        ),
        restarts=d["restarts"],
        parent_id=d["parent_id"],
        stop=d["stop"],
        created_at=d["created_at"],
        updated_at=d["updated_at"],
    )


def best_of(fn, number: int, repeat: int = 7) -> float:
    """Seconds per call, best of `repeat` runs (the least disturbed by the machine)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> int:
    task = typical_task()
    data = codec.to_data(task)
    if data != hand_to_data(task) or codec.from_data(data, Task) != task or hand_from_data(data) != task:
        print("the hand-written conversion does not match the converter; fix the benchmark")
        return 2

    n = 20_000
    rows = [
        ("to_data (unstructure)", best_of(lambda: codec.to_data(task, Task), n), best_of(lambda: hand_to_data(task), n)),
        ("from_data (structure)", best_of(lambda: codec.from_data(data, Task), n), best_of(lambda: hand_from_data(data), n)),
        (
            "round trip",
            best_of(lambda: codec.from_data(codec.to_data(task, Task), Task), n),
            best_of(lambda: hand_from_data(hand_to_data(task)), n),
        ),
    ]
    print(f"codec benchmark, Python {sys.version.split()[0]}, {n} calls per run, best of 7")
    print(f"{'operation':<24}{'converter µs':>14}{'hand µs':>10}{'ratio':>8}")
    for name, conv, hand in rows:
        print(f"{name:<24}{conv * 1e6:>14.2f}{hand * 1e6:>10.2f}{conv / hand:>8.2f}")
    ratio = rows[-1][1] / rows[-1][2]
    met = ratio <= TARGET
    print(f"round trip ratio {ratio:.2f}x, target <= {TARGET}x: {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
