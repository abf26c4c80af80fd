"""`durable chat`: a terminal coding agent that survives `kill -9` (extra `chat`: prompt-toolkit).

    durable chat [--session PATH] [--model faux|faux:SCRIPT|openai:NAME|anthropic:NAME|google:NAME|URL/NAME]
                 [--cwd DIR] [--yes]

Modules: `tools` (file tools confined to the folder) and `shell` (`bash`), `instructions`
(AGENTS.md, the folder and `git status`), `faux` (the scripted model) and `models` (`--model`),
`render` (what is printed) and `terminal` (reading lines), `commands` (the slash commands) and
`app` (the loop, the harness on its own thread). docs/chat.md tells how to use it.
"""

from .app import ChatApp as ChatApp, ChatOptions as ChatOptions, main as main

__all__ = ["ChatApp", "ChatOptions", "main"]
