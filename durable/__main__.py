"""`python -m durable`: the `durable` command (`durable.cli`), where the console script is not on
the PATH. As light as the script: `python -m durable inspect` imports no event-loop library."""

from .cli.command import main

main()
