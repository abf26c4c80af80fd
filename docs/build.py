"""Build the documentation site: the pages in docs/ and the API reference from the docstrings.

    python docs/build.py [OUTPUT]        (default: site/; `make docs` runs it)

- `OUTPUT/api/`: pdoc's reference of the `durable` package, every public module.
- `OUTPUT/index.html`, `OUTPUT/spec.html`: docs/index.md and docs/spec.md as HTML (links between
  the pages are rewritten from `.md` to `.html`).

Warnings are errors: the build fails (exit status 1, one line per problem) when pdoc or an import
warns, when a page or the README links to a file or a section that does not exist, or when the README, a page
or a module still cites "SPEC §" (the spec ships as docs/spec.md; the code cites it as
"docs/spec.md §N", and each such citation must name a section that exists). No network is used.
"""

from __future__ import annotations

import html
import re
import shutil
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = ("index.md", "spec.md")

TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }}
code, pre {{ font-family: ui-monospace, monospace; font-size: 0.92em; }}
pre {{ background: #f5f5f5; padding: 0.6rem; overflow-x: auto; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: 0.2rem 0.5rem; vertical-align: top; }}
nav a {{ margin-right: 1rem; }}
</style>
</head>
<body>
<nav><a href="index.html">Documentation</a><a href="spec.html">Specification</a>
<a href="api/durable.html">API reference</a></nav>
{body}
</body>
</html>
"""


PUBLIC_MODULES = (  # a subpackage brings its submodules along, and `durable` its `sync`
    "durable", "durable.records", "durable.settings", "durable.errors", "durable.texts", "durable.codec",
    "durable.engine", "durable.storage", "durable.models", "durable.tasks", "durable.testing", "durable.tools",
)

def slug(heading: str) -> str:
    """The anchor GitHub (and markdown2's header-ids) gives a heading: "3. The generation task"
    is "3-the-generation-task"."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return re.sub(r" ", "-", text)


def anchors(markdown: str) -> set[str]:
    """The anchors of the headings of a Markdown page (outside code blocks)."""
    found = set()
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            found.add(slug(m.group(1)))
    return found


def sections(markdown: str) -> dict[str, str]:
    """Numbered sections of the spec: {"3": "The generation task", ...}."""
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^## (\d+)\. (.+)$", markdown, re.M)}


def check_sources() -> list[str]:
    """Problems in the README, the pages and the package's sources: "SPEC §" citations left, and
    "docs/spec.md §N" citations of a section that does not exist."""
    problems = []
    spec_sections = sections((DOCS / "spec.md").read_text(encoding="utf-8"))
    pages = [DOCS / p for p in PAGES if p != "spec.md"]
    files = [ROOT / "README.md", *pages, *sorted((ROOT / "durable").rglob("*.py"))]
    for path in files:
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        for m in re.finditer(r"SPEC §", text):
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{rel}:{line}: cites 'SPEC §'; cite docs/spec.md §N (the spec ships as docs/spec.md)")
        for m in re.finditer(r"docs/spec\.md §(\d+)((?:, §\d+)*)", text):
            cited = [m.group(1), *re.findall(r"§(\d+)", m.group(2))]
            for number in cited:
                if number not in spec_sections:
                    line = text.count("\n", 0, m.start()) + 1
                    problems.append(f"{rel}:{line}: cites docs/spec.md §{number}, which does not exist")
    return problems


def check_links(path: Path, markdown: str, site: Path | None) -> list[str]:
    """Links of a Markdown file to a file, a page section or (for the pages, `site` given) a file
    of the built site that does not exist. Relative links are resolved from the file's folder."""
    problems = []
    rel = path.relative_to(ROOT)
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL: not checked (no network)
        page, _, anchor = target.partition("#")
        source = path.parent / page
        if page.endswith(".md"):
            if not source.exists():
                problems.append(f"{rel}: links to {page}, which does not exist")
            elif anchor and anchor not in anchors(source.read_text(encoding="utf-8")):
                problems.append(f"{rel}: links to {target}, a section that does not exist")
        elif page and not source.exists() and not (site is not None and (site / page).exists()):
            problems.append(f"{rel}: links to {page}, which does not exist" + (" (nor does the build make it)"
                                                                              if site is not None else ""))
        elif not page and anchor not in anchors(markdown):
            problems.append(f"{rel}: links to #{anchor}, a section that does not exist")
    return problems


def build(site: Path) -> list[str]:
    import pdoc
    import pdoc.render_helpers


    problems = check_sources()
    problems += check_links(ROOT / "README.md", (ROOT / "README.md").read_text(encoding="utf-8"), None)
    if site.exists():
        shutil.rmtree(site)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.render.configure(docformat="markdown", show_source=False)
        # Listed, not found: `durable.__all__` names only the top-level API, and pdoc would follow it.
        pdoc.pdoc(*PUBLIC_MODULES, output_directory=site / "api")
    problems += [f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}" for w in caught]
    for name in PAGES:
        markdown = (DOCS / name).read_text(encoding="utf-8")
        problems += check_links(DOCS / name, markdown, site)
        body = pdoc.render_helpers.to_html(markdown)
        body = re.sub(r'href="([^":#]+)\.md(#[^"]*)?"', lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)
        title = re.search(r"^# (.+)$", markdown, re.M)
        page = TEMPLATE.format(title=html.escape(title.group(1) if title else name), body=body)
        (site / name.replace(".md", ".html")).write_text(page, encoding="utf-8")
    return problems


def main(argv: list[str]) -> int:
    site = Path(argv[1]) if len(argv) > 1 else ROOT / "site"
    problems = build(site)
    for problem in problems:
        print(f"docs: error: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"docs: built {site / 'index.html'} and the API reference in {site / 'api'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
