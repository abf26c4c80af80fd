"""Models: the protocol the harness speaks, and the providers behind it."""
