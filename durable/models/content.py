"""Images and files in each provider's wire format: the parts of user entries and tool results
(`durable.records.content`) with their bytes from `ModelRequest.attachments`, base64-encoded.

- OpenAI Chat Completions: `text`, `image_url` (a data URL) and `file` (`file_data`, a data URL)
  parts. A tool message is text only, so a tool result with images or files is sent as its text
  (each attachment as its placeholder, "[image: image/png, 12 kB]") and its attachments follow in
  one user message after the round's tool messages (`chat_tool_attachments`), which name the call.
- OpenAI Responses: `input_text`, `input_image` and `input_file` parts, in a user message and as
  the `output` list of a `function_call_output`.
- Gemini: `text` and `inline_data` parts (bytes, which the SDK encodes) in a user content; a tool
  result's attachments follow its `function_response` in the same user content.
- Anthropic: `text`, `image` (base64 source) and `document` blocks (a PDF as a base64 source, a
  text file as a text source), in a user message and as the `content` of a `tool_result`. Another
  file type is a `ModelError` (`invalid_request`) naming the file.

A hash the request does not carry is a `ModelError` (`invalid_request`): a request is never sent
without the bytes it references. Imports the records and the model protocol only.
"""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Mapping, Sequence
from typing import Any

from ..records import Attachment, Entry, Part, TextPart, ToolResultEntry
from ..records.content import placeholder, placeholder_text
from .protocol import ModelError


def _data(att: Attachment, attachments: Mapping[str, bytes], provider: str) -> str:
    data = attachments.get(att.sha256)
    if data is None:
        raise ModelError(f"The request lacks the bytes of the {placeholder(att)} ({att.sha256})",
                         kind="invalid_request", provider=provider)
    return base64.b64encode(data).decode("ascii")


def _url(att: Attachment, attachments: Mapping[str, bytes], provider: str) -> str:
    return f"data:{att.media_type};base64,{_data(att, attachments, provider)}"


def file_name(att: Attachment) -> str:
    """The name a file is sent under: its own, else its hash's start with its type's extension."""
    if att.name:
        return att.name
    return att.sha256[:16] + (mimetypes.guess_extension(att.media_type, strict=False) or "")


# --------------------------------------------------------------------------- OpenAI Chat Completions


def chat_part(part: Part, attachments: Mapping[str, bytes]) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if part.kind == "image":
        return {"type": "image_url", "image_url": {"url": _url(part, attachments, "openai")}}
    return {"type": "file", "file": {"filename": file_name(part), "file_data": _url(part, attachments, "openai")}}


def chat_content(parts: Sequence[Part], attachments: Mapping[str, bytes]) -> list[dict[str, Any]]:
    return [chat_part(p, attachments) for p in parts]


def chat_tool_attachments(out: list[dict[str, Any]], messages: Sequence[Entry],
                          attachments: Mapping[str, bytes]) -> list[dict[str, Any]]:
    """The Chat Completions messages `out` (made of `messages`) with the images and files of tool
    results (tool messages are text only) in a user message after each run of tool messages, each
    result's introduced by a line naming its call."""
    held: dict[str, list[ToolResultEntry]] = {}
    for e in messages:
        if isinstance(e, ToolResultEntry) and any(isinstance(p, Attachment) for p in e.parts):
            held.setdefault(e.call_id, []).append(e)
    if not held:
        return out
    placed: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    for message in out:
        if content and message.get("role") != "tool":
            placed.append({"role": "user", "content": content})
            content = []
        placed.append(message)
        found = held.get(message.get("tool_call_id") or "") if message.get("role") == "tool" else None
        if found:
            result = found.pop(0)
            content.append({"type": "text", "text": f"Attachments of the result of tool call {result.call_id} "
                                                    f"({result.tool_name}):"})
            content += [chat_part(p, attachments) for p in result.parts if isinstance(p, Attachment)]
    if content:
        placed.append({"role": "user", "content": content})
    return placed


def tool_text(result: ToolResultEntry) -> str:
    """A tool result as text: its parts with each attachment as its placeholder."""
    return placeholder_text(result.parts) if result.parts else result.content


# --------------------------------------------------------------------------- OpenAI Responses


def responses_part(part: Part, attachments: Mapping[str, bytes]) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if part.kind == "image":
        return {"type": "input_image", "image_url": _url(part, attachments, "openai"), "detail": "auto"}
    return {"type": "input_file", "filename": file_name(part), "file_data": _url(part, attachments, "openai")}


def responses_content(parts: Sequence[Part], attachments: Mapping[str, bytes]) -> list[dict[str, Any]]:
    return [responses_part(p, attachments) for p in parts]


# --------------------------------------------------------------------------- Anthropic


def anthropic_block(part: Part, attachments: Mapping[str, bytes]) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if part.kind == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": part.media_type,
                                            "data": _data(part, attachments, "anthropic")}}
    if part.media_type == "application/pdf":
        return {"type": "document", "source": {"type": "base64", "media_type": part.media_type,
                                               "data": _data(part, attachments, "anthropic")}}
    if part.media_type.startswith("text/"):
        data = attachments.get(part.sha256)
        if data is None:
            _data(part, attachments, "anthropic")  # raises, naming it
        assert data is not None
        return {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                               "data": data.decode("utf-8", "replace")}}
    raise ModelError(f"Anthropic reads PDF and text files, not the {placeholder(part)}", kind="invalid_request",
                     provider="anthropic")


def anthropic_blocks(parts: Sequence[Part], attachments: Mapping[str, bytes]) -> list[dict[str, Any]]:
    # An empty text block is refused by the API: left out.
    return [anthropic_block(p, attachments) for p in parts if not (isinstance(p, TextPart) and not p.text)]


__all__ = ["anthropic_blocks", "chat_content", "chat_tool_attachments", "file_name", "responses_content",
           "tool_text"]


# --------------------------------------------------------------------------- Gemini


def gemini_parts(parts: Sequence[Part], attachments: Mapping[str, bytes]) -> list[dict[str, Any]]:
    """Parts of a Gemini user content: text, and images and files as `inline_data` (raw bytes)."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            out.append({"text": part.text})
        else:
            _data(part, attachments, "google")  # refused when the request lacks its bytes
            out.append({"inline_data": {"mime_type": part.media_type, "data": attachments[part.sha256]}})
    return out
