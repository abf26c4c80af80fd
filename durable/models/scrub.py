"""What a secret may look like in a provider's text, and `scrub`, which puts `***` for each trace of
the secrets an adapter knows (API key, base URL password); on error paths only, linear in the text.

Covered, for a secret of 8 characters or more: any 16 or more of its consecutive characters (a
prefix, a suffix or a middle part; all of a shorter secret), in any case, with whitespace between
any of them, each as itself, URL-encoded (any number of times), a JSON escape (`\\u002d`, `\\/`)
or an HTML reference (`&#45;`); its base64 and base64url at each of the three byte alignments
(hence also inside `base64(user:key)`, a Basic credential, whatever the user) where 20 of their
characters appear (16 of the secret always give 20); its hex, any case, where 32 digits do. Plain
data is read as one text, its strings in order: a key split across neighbouring JSON fields is
found where 16 of its characters meet across the join. A secret under 8 characters is replaced
verbatim only. For any secret: key shapes (`sk-***`), `Bearer ***`, an `Authorization` credential,
a URL's password (`//user:***@`), the value of a field or a dict key named like a secret.

Not covered: runs under 16 characters (other keys and words share them: every Anthropic key starts
`sk-ant-api03-`), so pieces of a key that other text cuts shorter stay; other encodings (base32,
compressed, base64 of an escaped key); non-ASCII characters of a secret in an escaped form; a key
the model repeats in its answer (that is content: only error texts are scrubbed).
"""

from __future__ import annotations

import base64
import bisect
import functools
import re
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any

from .protocol import ModelError

__all__ = ["MASK", "Secrets", "scrub", "scrub_exception", "secrets_of"]

Secrets = str | Sequence[str] | None
"""What `scrub` is given: one secret, several, or none (then only the shapes are replaced)."""

MASK = "***"
RUN = 16  # consecutive characters of a secret that are never left together
BASE64_RUN = 20  # base64 characters that 16 characters of a secret give at any alignment (20 to 21)
HEX_RUN = 32  # hex digits of 16 characters
SHORT = 8  # a shorter secret is replaced verbatim only (case-folded, it would hit plain words)

# --------------------------------------------------------------------------- shapes, without a key

# The shapes of provider keys and tokens, matched in any case: OpenAI (`sk-...`, `sk-proj-...`,
# `sk-svcacct-...`, `sk-admin-...`), Anthropic (`sk-ant-api03-...`), OpenRouter (`sk-or-...`), and the
# OpenAI-compatible services a `base_url` may point at (Groq `gsk_`, xAI `xai-`, Google `AIza`,
# Hugging Face `hf_`); a bearer token; an Authorization header's credential (`Basic ...`); the
# password of a URL; and the value of a field named like a secret (`api_key=...`, `"x-api-key": "..."`).
_KEY_SHAPES = re.compile(
    r"(?P<sk>(?<![a-z0-9])sk-[a-z0-9_\-]{6,})"
    r"|(?P<other>(?<![a-z0-9])(?:gsk_|xai-|aiza|hf_)[a-z0-9_\-]{16,})"
    r"|(?P<auth>(?<![a-z0-9-])(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:basic|bearer|digest|token)\s+)?+)"
    r"(?!\*\*\*)[^\s\"'&,;]{6,}"
    r"|(?P<bearer>\bbearer\s+(?!\*\*\*)[a-z0-9_\-.~+/=]{6,})"
    r"|(?P<userinfo>://[^\s/?#@:\"']*:)(?!\*\*\*@)[^\s/?#@\"']+(?=@)"
    r"|(?P<field>(?<![a-z0-9])(?:x-api-key|api[_-]?key|access[_-]?token|refresh[_-]?token|auth[_-]?token"
    r"|client[_-]?secret|secret[_-]?key|password)[\"']?\s*[:=]\s*[\"']?)(?!\*\*\*|sk-\*\*\*)[^\s\"'&,;]{8,}",
    re.IGNORECASE,
)
# A run of URL-encoded text (at least one %XX): decoded, it may hide a key shape.
_ENCODED_RUN = re.compile(r"[A-Za-z0-9_.~+%\-]*%[0-9A-Fa-f]{2}[A-Za-z0-9_.~+%\-]*")
# Dict keys whose values are secrets whatever they look like (headers, query or form fields).
_SECRET_NAMES = {
    "authorization", "proxy-authorization", "x-api-key", "api-key", "api_key", "apikey", "access_token",
    "refresh_token", "client_secret", "password", "cookie", "set-cookie", "x-goog-api-key",
}


def _shape(match: re.Match[str]) -> str:
    if match.group("sk"):
        return "sk-" + MASK
    if match.group("bearer"):
        return "Bearer " + MASK
    for name in ("auth", "userinfo", "field"):
        if match.group(name):
            return match.group(name) + MASK
    return MASK


def _url_decoded(text: str) -> str:
    """`text` URL-decoded until it no longer changes (at most three times: doubly-encoded too)."""
    for _ in range(3):
        decoded = urllib.parse.unquote_plus(text)
        if decoded == text:
            break
        text = decoded
    return text


def _without_shapes(text: str) -> str:
    if "%" in text:
        text = _ENCODED_RUN.sub(lambda m: MASK if _KEY_SHAPES.search(_url_decoded(m.group(0))) else m.group(0), text)
    return _KEY_SHAPES.sub(_shape, text)


# --------------------------------------------------------------------------- a known secret, in any form

# What one character of a text may be written as, besides itself; whitespace (also escaped or
# encoded) separates nothing and is skipped.
_ESCAPE = re.compile(
    r"\s+"
    r"|%(?:25)*(?P<url>[0-9a-f]{2})"
    r"|\\+(?:u(?P<json>[0-9a-f]{4})|(?P<char>[/\"'])|[nrt])"
    r"|&#(?:x(?P<hex>[0-9a-f]{1,6})|(?P<dec>[0-9]{1,7}));",
    re.IGNORECASE,
)
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_URLSAFE = str.maketrans("+/", "-_")


def _decoded(match: re.Match[str]) -> str:
    """The character an escape stands for; "" for whitespace."""
    if match["dec"]:
        code = int(match["dec"])
    elif number := match["url"] or match["json"] or match["hex"]:
        code = int(number, 16)
    else:
        return match["char"] or ""
    char = chr(code) if code <= 0x10FFFF else "\ufffd"
    return "" if char.isspace() else char


class _Decoded:
    """A text as the secrets are looked for in it: escapes decoded, whitespace dropped, ASCII in
    lower case (`plain`), and where in the text each of its characters came from."""

    def __init__(self, text: str) -> None:
        pieces: list[str] = []
        self._starts: list[int] = []  # per piece: its first index in `plain`
        self._origins: list[int] = []  # its first index in the text
        self._widths: list[int] = []  # 0: a run copied as it is; else the width of one escape
        length = position = 0

        def piece(value: str, origin: int, width: int) -> None:
            nonlocal length
            pieces.append(value)
            self._starts.append(length)
            self._origins.append(origin)
            self._widths.append(width)
            length += len(value)

        for match in _ESCAPE.finditer(text):
            if match.start() > position:
                piece(text[position:match.start()], position, 0)
            char = _decoded(match)
            if char:
                piece(char, match.start(), match.end() - match.start())
            position = match.end()
        if position < len(text):
            piece(text[position:], position, 0)
        self.plain = "".join(pieces).translate(_LOWER)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where the characters `plain[start:end]` are in the text (what lies between them too)."""
        return self._origin(start)[0], self._origin(end - 1)[1]

    def _origin(self, index: int) -> tuple[int, int]:
        at = bisect.bisect_right(self._starts, index) - 1
        if self._widths[at] == 0:
            first = self._origins[at] + index - self._starts[at]
            return first, first + 1
        return self._origins[at], self._origins[at] + self._widths[at]


def _forms(secret: str) -> list[tuple[str, int]]:
    """A secret's searchable forms, in lower case, each with the run of it that counts as a leak:
    itself, its three aligned base64 cores (the characters that depend on its bytes alone) in
    both alphabets, and its hex."""
    plain = "".join(secret.split()).translate(_LOWER)
    data = secret.encode("utf-8", "surrogatepass")
    forms = [(plain, min(RUN, len(plain)))]
    for skip, first in ((0, 0), (1, 2), (2, 3)):
        core = base64.b64encode(bytes(skip) + data).decode()[first:(skip + len(data)) * 8 // 6]
        forms += [(core.translate(_LOWER), min(BASE64_RUN, len(core))),
                  (core.translate(_URLSAFE).translate(_LOWER), min(BASE64_RUN, len(core)))]
    forms.append((data.hex(), min(HEX_RUN, 2 * len(data))))
    return list(dict.fromkeys(forms))


def _agree(a: str, i: int, b: str, j: int, step: int) -> int:
    """How many characters `a` and `b` agree on from `a[i]` and `b[j]` on, moving by `step`."""
    n = 0
    while 0 <= i < len(a) and 0 <= j < len(b) and a[i] == b[j]:
        i, j, n = i + step, j + step, n + 1
    return n


class _Finder:
    """The runs of some secrets' forms in a decoded text. Every run that counts (at least its
    form's `window` long) holds a whole `gram` starting at a multiple of `gram`, so only those
    are looked up: len/gram dictionary probes, then each candidate is grown both ways."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self.forms = [form for secret in secrets for form in _forms(secret)]
        self.gram = max(1, (min(window for _, window in self.forms) + 1) // 2)
        self.grams: dict[str, list[tuple[int, int]]] = {}
        for index, (text, _) in enumerate(self.forms):
            for at in range(len(text) - self.gram + 1):
                self.grams.setdefault(text[at:at + self.gram], []).append((index, at))

    def runs(self, plain: str) -> Iterator[tuple[int, int]]:
        g, q = self.gram, 0
        while q + g <= len(plain):
            best: tuple[int, int] | None = None
            for index, at in self.grams.get(plain[q:q + g], ()):
                text, window = self.forms[index]
                left = _agree(plain, q - 1, text, at - 1, -1)
                right = _agree(plain, q + g, text, at + g, 1)
                if left + g + right >= window and (best is None or best[1] - best[0] < left + g + right):
                    best = (q - left, q + g + right)
            if best is None:
                q += g
            else:
                yield best
                q = -(-best[1] // g) * g


@functools.lru_cache(maxsize=16)
def _finder(secrets: tuple[str, ...]) -> _Finder:
    return _Finder(secrets)


def _masked(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """`text` with the spans (sorted by start) replaced by `***`, one for spans that overlap or touch."""
    out: list[str] = []
    masked_to = -1  # the end of the last mask
    for start, end in spans:
        if start <= masked_to:
            masked_to = max(masked_to, end)
            continue
        out += [text[max(masked_to, 0):start], MASK]
        masked_to = end
    out.append(text[max(masked_to, 0):])
    return "".join(out)


def _clean(texts: list[str], secrets: tuple[str, ...]) -> list[str]:
    """The texts of one value (read in order as one text) without the secrets nor any shape."""
    for secret in secrets:
        texts = [text.replace(secret, MASK) for text in texts]
    searched = tuple(s for s in secrets if len(s) >= SHORT)
    if searched and texts:
        joined = "\n".join(texts)
        decoded = _Decoded(joined)
        spans = sorted(decoded.span(start, end) for start, end in _finder(searched).runs(decoded.plain))
        if spans:
            bounds, at = [], 0
            for text in texts:
                bounds.append((at, at + len(text)))
                at += len(text) + 1
            texts = [_masked(text, [(max(s, lo) - lo, min(e, hi) - lo) for s, e in spans if s < hi and e > lo])
                     for text, (lo, hi) in zip(texts, bounds, strict=True)]
    return [_without_shapes(text) for text in texts]


# --------------------------------------------------------------------------- values


def _named_secret(key: Any, value: Any) -> bool:
    return isinstance(key, str) and key.lower() in _SECRET_NAMES and bool(value)


def _strings(value: Any, out: list[str]) -> None:
    """The strings of `value` in order, as `_rebuilt` reads them (dict keys are not among them:
    a field's name sits between two values that may be the two halves of a key)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if not _named_secret(key, item):
                _strings(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings(item, out)
    elif isinstance(value, (bytes, bytearray)):
        out.append(bytes(value).decode("utf-8", "replace"))
    elif not (value is None or isinstance(value, (int, float, bool))):
        out.append(str(value))


def _rebuilt(value: Any, cleaned: Iterator[str], secrets: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {_clean([key], secrets)[0] if isinstance(key, str) else key:
                MASK if _named_secret(key, item) else _rebuilt(item, cleaned, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rebuilt(item, cleaned, secrets) for item in value]
    if value is None or isinstance(value, (int, float, bool)):
        return value
    return next(cleaned)


def _secrets(secrets: Secrets) -> tuple[str, ...]:
    if secrets is None:
        return ()
    if isinstance(secrets, str):
        secrets = (secrets,)
    return tuple(dict.fromkeys(s for s in secrets if s and len(s) >= 4))


def scrub(value: Any, secrets: Secrets = None) -> Any:
    """`value` with every string cleaned of the `secrets` and of anything shaped like a secret
    (see the module's docstring); dicts and lists are copied, tuples become lists, bytes and other
    objects become their cleaned text. Scrubbing twice changes nothing more."""
    known = _secrets(secrets)
    texts: list[str] = []
    _strings(value, texts)
    return _rebuilt(value, iter(_clean(texts, known)), known)


def scrub_exception(exc: BaseException, secrets: Secrets) -> None:
    """Scrub, in place, the text of an exception that goes on as it is (its message reaches the
    reports and the session file when it faults a task): its args and, for a `ModelError`, its
    message and raw data."""
    exc.args = tuple(scrub(a, secrets) if isinstance(a, str) else a for a in exc.args)
    if isinstance(exc, ModelError):
        exc.message = scrub(exc.message, secrets)
        exc.raw = scrub(exc.raw, secrets) if exc.raw is not None else None


def secrets_of(api_key: str | None, base_url: str | None) -> tuple[str, ...]:
    """The secrets an adapter knows: its API key and the password of its base URL, if any."""
    try:
        password = urllib.parse.urlsplit(base_url).password if base_url else None
    except ValueError:
        password = None
    return tuple(s for s in (api_key, password and urllib.parse.unquote(password)) if s)
