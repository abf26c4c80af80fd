"""The `durable` command line, one job a module:

- `command`: the click group, `demo` and `inspect`, errors a person can act on as one line;
- `inspect_data` / `inspect_view`: what `durable inspect` reads (through
  `durable.storage.sqlite.reader`) and how it prints it;
- `demo`: the demo's orchestration; `demo_model` (the scripted faux model), `demo_tools`,
  `providers` (the model for `--model`), `watcher` (committed changes as events), `kill`
  (SIGKILL injection), `plain_view` and `live_view` (the two displays).

Only `command` (and click) is imported with this package; `durable inspect` never imports the
demo modules, anyio, trio or a provider SDK.
"""

from .command import cli, main

__all__ = ["cli", "main"]
