"""`scrub`, form by form (issue 25, item 8): a table per family of forms a key may come back in,
each with the leaked text and the check that no 16 consecutive characters of the key survive in
any form (the oracle in `secret_forms` decodes and tries every base64 / hex run at every offset);
the bounds the module's docstring states; and no false positives on ordinary text, on other keys
in the same forms, or on base64 and hex of unrelated data."""

from __future__ import annotations

import base64
import json
import random
import urllib.parse
from typing import Any

import pytest

from durable.models.scrub import scrub, secrets_of

from .secret_forms import (
    ANTHROPIC_SHAPED_KEY,
    ENCODED,
    ESCAPED,
    GATEWAY_KEY,
    KEY_IDS,
    KEYS,
    PARTS,
    RUN,
    WHITESPACE,
    FormOf,
    b64,
    middle,
    survivors,
)


def table(forms: dict[str, FormOf]) -> Any:
    """Every form of the table with every key."""
    return pytest.mark.parametrize(
        "form, key",
        [pytest.param(form, key, id=f"{name} / {key_id}") for name, form in forms.items()
         for key, key_id in zip(KEYS, KEY_IDS, strict=True)],
    )


def check_scrubbed(form: FormOf, key: str) -> str:
    leaked = f"Upstream said: {form(key)}. Request req_7f3a was refused."
    assert survivors(leaked, key), "the form is a leak to begin with"
    cleaned = scrub(leaked, key)
    assert survivors(cleaned, key) == [], cleaned
    assert "***" in cleaned and cleaned.startswith("Upstream said: ") and cleaned.endswith(" was refused.")
    assert scrub(cleaned, key) == cleaned  # scrubbing twice changes nothing more
    return cleaned


@table(ESCAPED)
def test_the_key_escaped_or_in_another_case_leaves_nothing(form, key):
    check_scrubbed(form, key)


@table(PARTS)
def test_any_16_consecutive_characters_of_the_key_are_replaced(form, key):
    check_scrubbed(form, key)


@table(ENCODED)
def test_the_key_in_base64_base64url_or_hex_at_any_alignment_leaves_nothing(form, key):
    check_scrubbed(form, key)


@table(WHITESPACE)
def test_the_key_split_by_whitespace_leaves_nothing(form, key):
    check_scrubbed(form, key)


def test_the_forms_replace_exactly_the_key():
    key = GATEWAY_KEY
    assert scrub(f'{{"key": "{key.replace("/", chr(92) + "/")}"}}', key) == '{"key": "***"}'
    assert scrub(f"prefix {key[:24]}... was refused", key) == "prefix ***... was refused"
    assert scrub(f"auth={b64('bob:' + key)}", key).startswith("auth=Ym9iO")  # the user's part may stay
    assert scrub(f"k: {key[:10]}\n   {key[10:]}!", key) == "k: ***!"
    assert scrub(f"hex {key.encode().hex().upper()} end", key) == "hex *** end"


def strings_of(value: Any) -> str:
    """The strings of plain data concatenated in order, without any separator."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "".join(strings_of(v) for v in value.values())
    if isinstance(value, list):
        return "".join(strings_of(v) for v in value)
    return ""


SPLITS = {
    "two fields, halves": lambda k: {"a": k[:len(k) // 2], "b": k[len(k) // 2:]},
    "two fields, 8 and the rest": lambda k: {"key": k[:8], "rest": k[8:]},
    "two fields, the rest and 8": lambda k: {"key": k[:-8], "rest": k[-8:]},
    "list items of 10": lambda k: [k[i:i + 10] for i in range(0, len(k), 10)],
    "neighbours at two depths": lambda k: {"error": {"message": "bad key " + k[:12]}, "hint": k[12:] + " expired"},
    "message and param of an OpenAI error": lambda k: {"error": {"message": f"Invalid key {k[:9]}", "param": k[9:],
                                                                 "code": "invalid_api_key"}},
    "halves url-encoded and base64 in two fields": lambda k: {"a": b64(k)[:14], "b": b64(k)[14:]},
}


@pytest.mark.parametrize("split", list(SPLITS.values()), ids=list(SPLITS))
@pytest.mark.parametrize("key", KEYS, ids=KEY_IDS)
def test_a_key_split_across_neighbouring_json_fields_is_found_across_the_join(split, key):
    leaked = split(key)
    assert survivors(strings_of(leaked), key)
    cleaned = scrub(leaked, key)
    assert survivors(strings_of(cleaned), key) == [], cleaned
    assert scrub(cleaned, key) == cleaned


# --------------------------------------------------------------------------- the stated bounds


def test_a_key_cut_by_other_text_into_pieces_under_16_characters_keeps_them():
    key = GATEWAY_KEY
    text = f'{{"a":"{key[:12]}","b":"{key[12:24]}","c":"{key[24:]}"}}'  # a JSON text, not parsed data
    cleaned = scrub(text, key)
    assert key[:12] in cleaned and key[12:24] in cleaned  # 12 characters each: not a leak by the bound
    assert key[24:] not in cleaned  # 24 characters
    assert survivors(cleaned, key) == []


def test_a_run_of_15_characters_stays_and_one_of_16_does_not():
    key = GATEWAY_KEY
    assert scrub(f"x {middle(key, RUN - 1)} y", key) == f"x {middle(key, RUN - 1)} y"
    assert scrub(f"x {middle(key, RUN)} y", key) == "x *** y"
    encoded = b64(middle(key, 11))  # 11 bytes: fewer than the 20 characters 16 always give
    assert scrub(f"x {encoded} y", key) == f"x {encoded} y"


def test_a_secret_under_8_characters_is_replaced_only_verbatim():
    assert scrub("pw hunt3r7, HUNT3R7, aHVudDNyNw==, 68756e74337237", "hunt3r7") == (
        "pw ***, HUNT3R7, aHVudDNyNw==, 68756e74337237")


@pytest.mark.parametrize("form", ["NOT-NEEDED", "not%2Dneeded", "not-\n  needed", b64("not-needed"),
                                  b64("u:not-needed"), b"not-needed".hex()])
def test_a_secret_of_8_to_15_characters_is_found_whole_in_every_form(form):
    cleaned = scrub(f"key {form}.", "not-needed")
    assert "***" in cleaned and survivors(cleaned, "not-needed") == []  # "u:" and a last "A==" may stay


def test_a_part_of_a_secret_of_8_to_15_characters_is_left():
    assert scrub("not-need, not needed, needed", "not-needed") == "not-need, not needed, needed"


# --------------------------------------------------------------------------- no false positives

ORDINARY = [
    "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center>"
    "<hr><center>nginx/1.25.3</center></body></html>",
    json.dumps({"error": {"message": "Rate limit reached for gpt-4o in organization org-abc on tokens per min "
                                     "(TPM): Limit 30000, Used 29770, Requested 1200.", "type": "tokens",
                          "param": None, "code": "rate_limit_exceeded"}}),
    'Traceback (most recent call last):\n  File "/srv/app.py", line 12, in handler\nKeyError: \'model\'',
    "GET https://api.example.com/v1/models?limit=20&after=model_abc%2F123 HTTP/1.1",
    "request id 5f0c6a4e-3b7d-4e2a-9c1f-8d2e7b6a5c4f, trace 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "The quick brown fox jumps over the lazy dog. " * 20,
    "A Basic authentication scheme was refused; use a Bearer token instead.",
]


@pytest.mark.parametrize("text", ORDINARY, ids=["html", "json", "traceback", "url", "ids", "sha256", "prose", "auth"])
@pytest.mark.parametrize("key", KEYS, ids=KEY_IDS)
def test_ordinary_text_is_left_as_it_is(text, key):
    assert scrub(text, key) == text


OTHER_KEYS = [
    "gw_live/OTHER+Vb8Nm3Qz6Kx1Wr4Ty9Pl2Hd7Fs5Ja0Cg=",  # the same gateway, another key
    ANTHROPIC_SHAPED_KEY[:13] + ANTHROPIC_SHAPED_KEY[13:][::-1],  # shares the 13 characters every one begins with
    "sk-proj-Tq4vX8bN2mK7" + "Hh0Jj9Kk8Ll7Mm6Nn5Oo",  # shares the first 20 characters of the OpenAI-shaped key
]


@pytest.mark.parametrize("form", [*ESCAPED.values(), *ENCODED.values(), *WHITESPACE.values()],
                         ids=[*ESCAPED, *ENCODED, *WHITESPACE])
@pytest.mark.parametrize("other", OTHER_KEYS, ids=["same gateway", "anthropic prefix", "openai prefix"])
def test_another_key_in_any_form_is_not_taken_for_the_configured_one(form, other):
    text = f"upstream: {form(other)} end"
    for key in KEYS:
        if other[:RUN] == key[:RUN]:
            continue  # shares a run of 16: that part is the configured key's, rightly replaced
        assert scrub(text, key) == scrub(text), key  # the key adds nothing to what the shapes replace


def test_the_openai_key_and_one_sharing_its_first_20_characters_are_told_apart_after_them():
    key, other = KEYS[1], OTHER_KEYS[2]
    cleaned = scrub(f"x {other} y", key)
    assert cleaned in ("x *** y", "x ***Hh0Jj9Kk8Ll7Mm6Nn5Oo y")  # the shared 20 are the key's; the rest is not


def test_base64_and_hex_of_unrelated_data_are_left_as_they_are():
    data = random.Random(25).randbytes(3000)
    for text in (base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode(), data.hex(),
                 base64.encodebytes(data).decode(), urllib.parse.quote(base64.b64encode(data).decode())):
        for key in KEYS:
            assert scrub(text, key) == text


# --------------------------------------------------------------------------- plain data and the secrets


def test_plain_data_is_copied_with_keys_values_and_named_secrets_scrubbed():
    key = GATEWAY_KEY
    value = {key: [key[:20], (b64(key), 3)], "X-Api-Key": "short", "n": None, "b": key.encode(), 7: True}
    assert scrub(value, key) == {"***": ["***", ["***", 3]], "X-Api-Key": "***", "n": None, "b": "***", 7: True}


@pytest.mark.parametrize("base_url, secrets", [
    ("https://svc:p%40ss-w0rd-long@gw.example/v1", ("k-123456", "p@ss-w0rd-long")),
    ("https://gw.example/v1", ("k-123456",)),
    ("http://[::1:bad", ("k-123456",)),
    (None, ("k-123456",)),
])
def test_an_adapter_knows_its_key_and_the_password_of_its_base_url(base_url, secrets):
    assert secrets_of("k-123456", base_url) == secrets


def test_every_secret_given_is_scrubbed_and_a_url_password_by_its_shape():
    password = "p@ss-w0rd-long-enough"
    text = f"at https://svc:{urllib.parse.quote(password)}@gw.example/v1 basic {b64('svc:' + password)}"
    assert scrub(text, ("k-123456", password)) == "at https://svc:***@gw.example/v1 basic c3ZjOn***A=="
    assert scrub("at https://svc:hunter2@gw.example/v1") == "at https://svc:***@gw.example/v1"
