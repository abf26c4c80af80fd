"""The code blocks of the README and of the pages in docs/, and a runner for them.

Every ```python block of a page runs, in order, each in a fresh temporary folder (the page's
fixture files copied into it), in one subprocess per page, with no API key in the environment:
a page's snippets use the faux model and no network. A python block followed by a
```text title="Output" block must print exactly that. A block right after the line
`<!-- compile-only -->` (the peer libraries on the "Coming from" page) is only compiled.

    python tests/doc_snippets.py PAGE.md WORKDIR RESULTS.json    (one JSON result per block)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import runpy
import shutil
import sys
import traceback
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
COMPILE_ONLY = "<!-- compile-only -->"

# Files a page's snippets expect beside them (copied into each snippet's folder).
FIXTURES = {
    "mcp.md": {"notes_server.py": ROOT / "examples" / "mcp_notes_server.py"},
}


@attrs.frozen
class Block:
    page: str
    line: int  # the line of the opening fence (1-based)
    code: str
    output: str | None  # the exact stdout the page shows for it, if it shows one
    compile_only: bool


def blocks(path: Path) -> list[Block]:
    """The python blocks of a Markdown file, with the output each one shows."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = re.match(r"(\s*)```(\S*)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2), i
        body = []
        i += 1
        while i < len(lines) and not re.match(rf"{indent}```\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        text = "".join(body)
        if lang == "python":
            previous = next((ln.strip() for ln in reversed(lines[:start]) if ln.strip()), "")
            found.append(Block(path.name, start + 1, text, None, previous == COMPILE_ONLY))
        elif lang == "text" and 'title="Output"' in m.group(3) and found and found[-1].output is None:
            between = "".join(lines[found[-1].line:start])
            if between.count("```") == 1 and not between.split("```", 1)[1].strip():
                found[-1] = attrs.evolve(found[-1], output=text)
    return found


def run_page(page: Path, workdir: Path) -> list[dict[str, object]]:
    """Run the blocks of one page in this process, each in a folder of its own under `workdir`."""
    results: list[dict[str, object]] = []
    home = os.getcwd()
    for n, block in enumerate(blocks(page)):
        folder = workdir / f"block{n}-line{block.line}"
        folder.mkdir(parents=True)
        for name, source in FIXTURES.get(page.name, {}).items():
            shutil.copy(source, folder / name)
        script = folder / "snippet.py"
        script.write_text(block.code, encoding="utf-8")
        out = io.StringIO()
        error = None
        try:
            if block.compile_only:
                compile(block.code, str(script), "exec")
            else:
                os.chdir(folder)
                with contextlib.redirect_stdout(out):
                    runpy.run_path(str(script), run_name="__main__")
        except BaseException:  # noqa: BLE001 - reported with the block's line, for any failure
            error = traceback.format_exc()
        finally:
            os.chdir(home)
        results.append({"line": block.line, "stdout": out.getvalue(), "expected": block.output, "error": error})
    return results


if __name__ == "__main__":
    results = run_page(Path(sys.argv[1]), Path(sys.argv[2]))
    Path(sys.argv[3]).write_text(json.dumps(results), encoding="utf-8")
