"""What the host may hand in, checked the same way wherever it comes in: the host API of a harness
(`durable.engine.harness`) and a process submitting from outside (`durable.remote`). Also the one
way an unanswered submission becomes `SubmissionUnanswered` for `answer()`."""

from __future__ import annotations

from .errors import InvalidInput, SubmissionUnanswered
from .records import Answered, SubmissionStatus, Unanswered


def _storable(what: str, value: str) -> None:
    if "\x00" in value:
        raise InvalidInput(f"The {what} {value!r} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"The {what} {value!r} contains a lone surrogate and cannot be stored as UTF-8") from None


def check_conversation_id(conversation_id: object) -> str:
    """A non-empty `str` without NUL or lone surrogates (it is stored as UTF-8 text), else
    `InvalidInput` naming it."""
    if not isinstance(conversation_id, str) or not conversation_id:
        raise InvalidInput(f"A conversation id must be a non-empty str, not {conversation_id!r}")
    _storable("conversation id", conversation_id)
    return conversation_id


def check_submission_id(submission_id: object) -> str:
    """A caller-chosen submission id: a non-empty `str` of at most 200 characters without NUL or
    lone surrogates, else `InvalidInput` naming it."""
    if not isinstance(submission_id, str) or not submission_id or len(submission_id) > 200:
        raise InvalidInput(f"A submission id must be a non-empty str of at most 200 characters, not {submission_id!r}")
    _storable("submission id", submission_id)
    return submission_id


def check_text(text: object, conversation_id: str, *, plain: bool = False) -> str:
    """Non-empty text, else `InvalidInput` naming the conversation. `plain`: also without NUL or
    lone surrogates (text stored in a column of its own, not in a JSON body)."""
    if not isinstance(text, str) or not text.strip():
        what = "blank text" if isinstance(text, str) else type(text).__name__
        raise InvalidInput(f"An input for conversation {conversation_id!r} must be non-empty text (a str), not {what}")
    if plain:
        _storable("input", text)
    return text


def answer_text(status: SubmissionStatus, submission_id: str, location: str) -> str:
    """The answer of a settled submission; `SubmissionUnanswered` when its run ended without one."""
    if isinstance(status, Unanswered):
        raise SubmissionUnanswered(
            f"Submission {submission_id} in {location} was not answered ({status.reason}): {status.detail}",
            reason=status.reason, detail=status.detail)
    assert isinstance(status, Answered)
    return status.text
