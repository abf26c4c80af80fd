"""The engine: harness, scheduler, commit line, recovery, and the model and tool protocols."""
