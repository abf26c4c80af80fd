"""The version of durable: written here once (pyproject.toml reads it; `durable.__version__`)."""

__version__ = "0.1.0"
