"""The model of `durable chat --model SPEC`:

- `faux` (the default; no key): a first look at the folder; `faux:PATH`: the JSON script at PATH
  (`durable.chat.faux`);
- `openai:NAME`, `anthropic:NAME`, `google:NAME`: the provider, its key from the environment
  (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY; and their *_BASE_URL);
- `URL/NAME` (`http://localhost:11434/v1/qwen3`): an OpenAI-compatible server (Ollama, llama.cpp,
  vLLM, LM Studio) through Chat Completions; the URL ends at `/v1/` when it has one (so NAME may
  hold a slash), else at the last slash. OPENAI_API_KEY is sent when set.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import DurableError
from ..prices import Price, Prices
from .faux import ChatFaux, load_script


class UnknownModel(DurableError):
    """`--model` names no model durable chat knows."""


def split_url(spec: str) -> tuple[str, str]:
    """(base URL, model name) of `URL/NAME`."""
    marker = spec.find("/v1/")
    if marker >= 0:
        return spec[:marker + 3], spec[marker + 4:]
    base, _, name = spec.rstrip("/").rpartition("/")
    return base, name


def make_model(spec: str) -> tuple[Any, Prices | None]:
    """The model for `spec`, and the prices to cost it with (a faux script's `price`; None: the
    defaults). Raises `UnknownModel`, or the provider's `MissingCredentials` without a key."""
    kind, _, name = spec.partition(":")
    if spec.startswith(("http://", "https://")):
        base, model = split_url(spec)
        if not model:
            raise UnknownModel(f"--model {spec}: give the model's name after the server's URL (URL/NAME)")
        from ..models.openai import OpenAIModel

        return OpenAIModel(model, api="chat", base_url=base,
                           api_key=os.environ.get("OPENAI_API_KEY") or "none"), None
    if kind == "faux":
        script = load_script(name) if name else None
        price = (script or {}).get("price")
        return ChatFaux(script), Prices({"faux": Price(**price)}) if isinstance(price, dict) else None
    if kind not in ("openai", "anthropic", "google"):
        raise UnknownModel(f"--model {spec}: not a model durable chat knows (faux, faux:SCRIPT, openai:NAME, "
                           f"anthropic:NAME, google:NAME or URL/NAME)")
    if not name:
        raise UnknownModel(f"--model {spec}: give the model's name too ({kind}:NAME)")
    if kind == "openai":
        from ..models.openai import OpenAIModel

        return OpenAIModel(name), None
    if kind == "anthropic":
        from ..models.anthropic import AnthropicModel

        return AnthropicModel(name), None
    from ..models.gemini import GeminiModel

    return GeminiModel(name), None


__all__ = ["UnknownModel", "make_model", "split_url"]
