"""The forms in which a provider, a gateway or a proxy may hand an API key back (issue 25, item 8),
and an oracle that finds any 16 consecutive characters of a key in a text, written apart from
`durable.models.scrub`: it decodes (URL, JSON, HTML escapes, whitespace) and then tries every
base64 / base64url / hex run at every offset, so it knows nothing of aligned cores or windows."""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

RUN = 16

# A gateway's key with the characters JSON and URLs escape (`/`, `+`, `=`); an OpenAI-shaped key;
# an Anthropic-shaped key of the real length (its first 13 characters are every Anthropic key's).
GATEWAY_KEY = "gw_live/SECRET+k3Jx9QmZ2vB7nR4tW8yL1pF6hD0sA5cE="
OPENAI_SHAPED_KEY = "sk-proj-Tq4vX8bN2mK7wR1zL5yH9cF3dJ6gS0aP"
ANTHROPIC_SHAPED_KEY = ("sk-ant-api03-" + "Zr7Qm2Xk9Lp4Wv8Nt3Bc6Hy1Fd5Js0Ga-_Ke7Ui2Oo9Pl4Mn8Bv3Cx6Zs1Ad5Fg0Hj"
                        "r9Ty4Ui8Op3As6Df1Gh5Jk0-Lz-AA")
KEYS = [GATEWAY_KEY, OPENAI_SHAPED_KEY, ANTHROPIC_SHAPED_KEY]
KEY_IDS = ["gateway", "openai-shaped", "anthropic-shaped"]


def windows(key: str) -> list[str]:
    return [key[i:i + RUN] for i in range(len(key) - RUN + 1)] or [key]


def _plain(text: str) -> str:
    for _ in range(4):
        text = urllib.parse.unquote(text)
    text = re.sub(r"\\+u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = re.sub(r"\\+([/\"'])", r"\1", text)
    text = re.sub(r"\\+[nrt]", " ", text)
    return "".join(html.unescape(text).split())


def _decoded_runs(text: str) -> list[bytes]:
    """The bytes of every base64, base64url or hex run in `text`, read from every offset."""
    out = []
    for run in re.findall(r"[A-Za-z0-9+/_\-]{8,}", text):
        standard = run.replace("-", "+").replace("_", "/")
        for offset in range(4):
            part = standard[offset:]
            part = part[:-1] if len(part) % 4 == 1 else part
            try:
                out.append(base64.b64decode(part + "=" * (-len(part) % 4)))
            except binascii.Error:
                pass
    for run in re.findall(r"[0-9a-fA-F]{8,}", text):
        for offset in range(2):
            part = run[offset:]
            out.append(bytes.fromhex(part[:len(part) // 2 * 2]))
    return out


def survivors(value: Any, key: str) -> list[str]:
    """Every 16-character window of `key` that `value` (a text, bytes, or anything by its repr)
    still holds in any form: as such in any case (after decoding escapes and dropping whitespace),
    or inside the bytes of any base64, base64url or hex run."""
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace")
    else:
        text = value if isinstance(value, str) else repr(value)
    plain = _plain(text)
    folded = plain.lower()
    found = [w for w in windows(key) if w.lower() in folded]
    blobs = _decoded_runs(plain)
    return found + [f"encoded {w}" for w in windows(key) if any(w.encode() in blob for blob in blobs)]


def b64(data: str | bytes, prefix: bytes = b"") -> str:
    return base64.b64encode(prefix + (data.encode() if isinstance(data, str) else data)).decode()


def middle(key: str, size: int = RUN) -> str:
    start = (len(key) - size) // 2
    return key[start:start + size]


# Each form: what a provider's text holds instead of the key. A table per family.
FormOf = Callable[[str], str]

ESCAPED: dict[str, FormOf] = {
    "verbatim": lambda k: k,
    "upper case": str.upper,
    "url-encoded": lambda k: urllib.parse.quote(k, safe=""),
    "url-encoded twice": lambda k: urllib.parse.quote(urllib.parse.quote(k, safe=""), safe=""),
    "quote_plus": urllib.parse.quote_plus,
    "json \\u escapes": lambda k: "".join(f"\\u{ord(c):04x}" for c in k),
    "json \\/ escape": lambda k: json.dumps(k).replace("/", "\\/")[1:-1],
    "json \\/ inside a json text": lambda k: json.dumps({"error": {"key": k}}).replace("/", "\\/"),
    "html references": lambda k: "".join(f"&#{ord(c)};" if i % 2 else f"&#x{ord(c):x};" for i, c in enumerate(k)),
}
PARTS: dict[str, FormOf] = {
    "prefix of 24": lambda k: k[:24],
    "prefix of 16": lambda k: k[:RUN],
    "suffix of 16": lambda k: k[-RUN:],
    "middle 16": middle,
    "prefix of 24, upper case and url-encoded": lambda k: urllib.parse.quote(k[:24].upper(), safe=""),
    "all but its first character, cut with '...'": lambda k: k[1:] + "...",
}
ENCODED: dict[str, FormOf] = {
    "base64": b64,
    "base64 at byte offset 1": lambda k: b64(k, b"\x01"),
    "base64 at byte offset 2": lambda k: b64(k, b"\x01\x02"),
    "base64 inside a longer base64 text": lambda k: b64(b"{\"token\": \"" + k.encode() + b"\", \"exp\": 17}"),
    "base64url": lambda k: base64.urlsafe_b64encode(b"\xfb\xff" + k.encode()).decode(),
    "base64 of user:key (user 'u')": lambda k: b64("u:" + k),
    "base64 of user:key (user 'bob')": lambda k: b64("bob:" + k),
    "base64 of user:key (user 'admin')": lambda k: b64("admin:" + k),
    "basic credential in a sentence": lambda k: f"the gateway got basic {b64('svc:' + k)} and refused it",
    "base64 wrapped at 76 columns": lambda k: "\n".join(b64(k * 3)[i:i + 76] for i in range(0, len(b64(k * 3)), 76)),
    "base64 of a 16-character middle part": lambda k: b64(middle(k), b"\x01"),
    "base64 url-encoded": lambda k: urllib.parse.quote(b64(k, b"\x01"), safe=""),
    "hex": lambda k: k.encode().hex(),
    "hex, upper case": lambda k: k.encode().hex().upper(),
    "hex of user:key": lambda k: ("ops:" + k).encode().hex(),
    "hex of the prefix of 16": lambda k: k[:RUN].encode().hex(),
}
WHITESPACE: dict[str, FormOf] = {
    "a space every 4 characters": lambda k: " ".join(k[i:i + 4] for i in range(0, len(k), 4)),
    "one character a line": "\n".join,
    "wrapped at 20 with an indent": lambda k: "\r\n    ".join(k[i:i + 20] for i in range(0, len(k), 20)),
    "tabs and spaces, url-encoded": lambda k: "%20%09".join(k[i:i + 5] for i in range(0, len(k), 5)),
    "json newline escapes": lambda k: "\\n".join(k[i:i + 10] for i in range(0, len(k), 10)),
}
