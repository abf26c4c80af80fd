"""`python -m durable.cli`: the same as the `durable` console script."""

from .command import main

main()
