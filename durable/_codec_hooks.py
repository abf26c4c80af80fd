"""The codec's cattrs hooks (cattrs 26.2.1), written by `python scripts/codec_hooks.py`: do not edit.

Each function computes what a hook cattrs generated for one record class refers to, then
defines that hook from its source, unchanged; `HOOKS` maps (kind, class) to (the function,
the class's fields when written, the hook's source). Used by `durable._written_hooks`.
"""

# ruff: noqa
# mypy: ignore-errors

import sys
import typing
from typing import Any

import attrs
import cattrs.errors


def _s_durable_records_content_Attachment(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'kind', 'media_type', 'name', 'sha256', 'size'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_kind = conv.get_structure_hook(typing.Literal['image', 'file'])
    __c_structure_media_type = str
    __c_structure_name = conv.get_structure_hook(str | None)
    __c_structure_sha256 = str
    __c_structure_size = int
    __c_type_kind = typing.Literal['image', 'file']
    __c_type_name = str | None
    def structure_Attachment(o, _=__cl, __cl=__cl, __c_structure_kind=__c_structure_kind, __c_type_kind=__c_type_kind, __c_structure_sha256=__c_structure_sha256, __c_structure_media_type=__c_structure_media_type, __c_structure_size=__c_structure_size, __c_structure_name=__c_structure_name, __c_type_name=__c_type_name):
      res = {}
      if 'name' in o:
        res['name'] = __c_structure_name(o['name'], __c_type_name)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_kind(o['kind'], __c_type_kind),
        __c_structure_sha256(o['sha256']),
        __c_structure_media_type(o['media_type']),
        __c_structure_size(o['size']),
        **res,
      )
    return structure_Attachment


def _u_durable_records_content_Attachment(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_name = conv.get_unstructure_hook(str | None)
    def unstructure_Attachment(instance, __c_unstr_name=__c_unstr_name):
      res = {
        'kind': instance.kind,
        'sha256': instance.sha256,
        'media_type': instance.media_type,
        'size': instance.size,
        'name': __c_unstr_name(instance.name),
      }
      return res
    return unstructure_Attachment


def _v_durable_records_content_Attachment(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_kind = conv.get_structure_hook(typing.Literal['image', 'file'])
    __c_structure_media_type = str
    __c_structure_name = conv.get_structure_hook(str | None)
    __c_structure_sha256 = str
    __c_structure_size = int
    __c_type_kind = typing.Literal['image', 'file']
    __c_type_name = str | None
    def structure_Attachment(o, _=__cl, __cl=__cl, __c_structure_kind=__c_structure_kind, __c_type_kind=__c_type_kind, __c_structure_sha256=__c_structure_sha256, __c_structure_media_type=__c_structure_media_type, __c_structure_size=__c_structure_size, __c_structure_name=__c_structure_name, __c_type_name=__c_type_name):
      res = {}
      if 'name' in o:
        res['name'] = __c_structure_name(o['name'], __c_type_name)
      return __cl(
        __c_structure_kind(o['kind'], __c_type_kind),
        __c_structure_sha256(o['sha256']),
        __c_structure_media_type(o['media_type']),
        __c_structure_size(o['size']),
        **res,
      )
    return structure_Attachment


def _s_durable_records_content_TextPart(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'text'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_text = str
    def structure_TextPart(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_text(o['text']),
      )
    return structure_TextPart


def _u_durable_records_content_TextPart(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_TextPart(instance):
      res = {
        'text': instance.text,
      }
      return res
    return unstructure_TextPart


def _v_durable_records_content_TextPart(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_text = str
    def structure_TextPart(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text):
      return __cl(
        __c_structure_text(o['text']),
      )
    return structure_TextPart


def _s_durable_records_entries_AssistantEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'attempt', 'error', 'interrupted', 'model', 'reasoning', 'stop_reason', 'text', 'tool_calls', 'usage'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_attempt = int
    __c_structure_error = conv.get_structure_hook(str | None)
    __c_structure_interrupted = bool
    __c_structure_model = conv.get_structure_hook(str | None)
    __c_structure_reasoning = conv.get_structure_hook(tuple[m['durable.records.entries'].Reasoning, ...])
    __c_structure_stop_reason = conv.get_structure_hook(typing.Literal['stop', 'tool_use', 'length', 'error', 'aborted'])
    __c_structure_text = str
    __c_structure_tool_calls = conv.get_structure_hook(tuple[m['durable.records.entries'].ToolCall, ...])
    __c_structure_usage = conv.get_structure_hook(m['durable.records.entries'].Usage)
    __c_type_error = str | None
    __c_type_model = str | None
    __c_type_reasoning = tuple[m['durable.records.entries'].Reasoning, ...]
    __c_type_stop_reason = typing.Literal['stop', 'tool_use', 'length', 'error', 'aborted']
    __c_type_tool_calls = tuple[m['durable.records.entries'].ToolCall, ...]
    __c_type_usage = m['durable.records.entries'].Usage
    def structure_AssistantEntry(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_stop_reason=__c_structure_stop_reason, __c_type_stop_reason=__c_type_stop_reason, __c_structure_tool_calls=__c_structure_tool_calls, __c_type_tool_calls=__c_type_tool_calls, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error, __c_structure_attempt=__c_structure_attempt, __c_structure_interrupted=__c_structure_interrupted, __c_structure_reasoning=__c_structure_reasoning, __c_type_reasoning=__c_type_reasoning, __c_structure_model=__c_structure_model, __c_type_model=__c_type_model):
      res = {}
      if 'tool_calls' in o:
        res['tool_calls'] = __c_structure_tool_calls(o['tool_calls'], __c_type_tool_calls)
      if 'usage' in o:
        res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)
      if 'error' in o:
        res['error'] = __c_structure_error(o['error'], __c_type_error)
      if 'attempt' in o:
        res['attempt'] = __c_structure_attempt(o['attempt'])
      if 'interrupted' in o:
        res['interrupted'] = __c_structure_interrupted(o['interrupted'])
      if 'reasoning' in o:
        res['reasoning'] = __c_structure_reasoning(o['reasoning'], __c_type_reasoning)
      if 'model' in o:
        res['model'] = __c_structure_model(o['model'], __c_type_model)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_text(o['text']),
        __c_structure_stop_reason(o['stop_reason'], __c_type_stop_reason),
        **res,
      )
    return structure_AssistantEntry


def _u_durable_records_entries_AssistantEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_model = None
    __c_def_reasoning = ()
    __c_unstr_error = conv.get_unstructure_hook(str | None)
    __c_unstr_model = conv.get_unstructure_hook(str | None)
    __c_unstr_reasoning = conv.get_unstructure_hook(tuple[m['durable.records.entries'].Reasoning, ...])
    __c_unstr_tool_calls = conv.get_unstructure_hook(tuple[m['durable.records.entries'].ToolCall, ...])
    __c_unstr_usage = conv.get_unstructure_hook(m['durable.records.entries'].Usage)
    def unstructure_AssistantEntry(instance, __c_unstr_tool_calls=__c_unstr_tool_calls, __c_unstr_usage=__c_unstr_usage, __c_unstr_error=__c_unstr_error, __c_unstr_reasoning=__c_unstr_reasoning, __c_def_reasoning=__c_def_reasoning, __c_unstr_model=__c_unstr_model, __c_def_model=__c_def_model):
      res = {
        'text': instance.text,
        'stop_reason': instance.stop_reason,
        'tool_calls': __c_unstr_tool_calls(instance.tool_calls),
        'usage': __c_unstr_usage(instance.usage),
        'error': __c_unstr_error(instance.error),
        'attempt': instance.attempt,
        'interrupted': instance.interrupted,
      }
      if instance.reasoning != __c_def_reasoning:
        res['reasoning'] = __c_unstr_reasoning(instance.reasoning)
      if instance.model != __c_def_model:
        res['model'] = __c_unstr_model(instance.model)
      return res
    return unstructure_AssistantEntry


def _v_durable_records_entries_AssistantEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_attempt = int
    __c_structure_error = conv.get_structure_hook(str | None)
    __c_structure_interrupted = bool
    __c_structure_model = conv.get_structure_hook(str | None)
    __c_structure_reasoning = conv.get_structure_hook(tuple[m['durable.records.entries'].Reasoning, ...])
    __c_structure_stop_reason = conv.get_structure_hook(typing.Literal['stop', 'tool_use', 'length', 'error', 'aborted'])
    __c_structure_text = str
    __c_structure_tool_calls = conv.get_structure_hook(tuple[m['durable.records.entries'].ToolCall, ...])
    __c_structure_usage = conv.get_structure_hook(m['durable.records.entries'].Usage)
    __c_type_error = str | None
    __c_type_model = str | None
    __c_type_reasoning = tuple[m['durable.records.entries'].Reasoning, ...]
    __c_type_stop_reason = typing.Literal['stop', 'tool_use', 'length', 'error', 'aborted']
    __c_type_tool_calls = tuple[m['durable.records.entries'].ToolCall, ...]
    __c_type_usage = m['durable.records.entries'].Usage
    def structure_AssistantEntry(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_stop_reason=__c_structure_stop_reason, __c_type_stop_reason=__c_type_stop_reason, __c_structure_tool_calls=__c_structure_tool_calls, __c_type_tool_calls=__c_type_tool_calls, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error, __c_structure_attempt=__c_structure_attempt, __c_structure_interrupted=__c_structure_interrupted, __c_structure_reasoning=__c_structure_reasoning, __c_type_reasoning=__c_type_reasoning, __c_structure_model=__c_structure_model, __c_type_model=__c_type_model):
      res = {}
      if 'tool_calls' in o:
        res['tool_calls'] = __c_structure_tool_calls(o['tool_calls'], __c_type_tool_calls)
      if 'usage' in o:
        res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)
      if 'error' in o:
        res['error'] = __c_structure_error(o['error'], __c_type_error)
      if 'attempt' in o:
        res['attempt'] = __c_structure_attempt(o['attempt'])
      if 'interrupted' in o:
        res['interrupted'] = __c_structure_interrupted(o['interrupted'])
      if 'reasoning' in o:
        res['reasoning'] = __c_structure_reasoning(o['reasoning'], __c_type_reasoning)
      if 'model' in o:
        res['model'] = __c_structure_model(o['model'], __c_type_model)
      return __cl(
        __c_structure_text(o['text']),
        __c_structure_stop_reason(o['stop_reason'], __c_type_stop_reason),
        **res,
      )
    return structure_AssistantEntry


def _s_durable_records_entries_CompactionEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'first_kept_seq', 'summary', 'usage'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_first_kept_seq = int
    __c_structure_summary = str
    __c_structure_usage = conv.get_structure_hook(m['durable.records.entries'].Usage)
    __c_type_usage = m['durable.records.entries'].Usage
    def structure_CompactionEntry(o, _=__cl, __cl=__cl, __c_structure_summary=__c_structure_summary, __c_structure_first_kept_seq=__c_structure_first_kept_seq, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage):
      res = {}
      if 'usage' in o:
        res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_summary(o['summary']),
        __c_structure_first_kept_seq(o['first_kept_seq']),
        **res,
      )
    return structure_CompactionEntry


def _u_durable_records_entries_CompactionEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_usage = conv.get_unstructure_hook(m['durable.records.entries'].Usage)
    def unstructure_CompactionEntry(instance, __c_unstr_usage=__c_unstr_usage):
      res = {
        'summary': instance.summary,
        'first_kept_seq': instance.first_kept_seq,
        'usage': __c_unstr_usage(instance.usage),
      }
      return res
    return unstructure_CompactionEntry


def _v_durable_records_entries_CompactionEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_first_kept_seq = int
    __c_structure_summary = str
    __c_structure_usage = conv.get_structure_hook(m['durable.records.entries'].Usage)
    __c_type_usage = m['durable.records.entries'].Usage
    def structure_CompactionEntry(o, _=__cl, __cl=__cl, __c_structure_summary=__c_structure_summary, __c_structure_first_kept_seq=__c_structure_first_kept_seq, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage):
      res = {}
      if 'usage' in o:
        res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)
      return __cl(
        __c_structure_summary(o['summary']),
        __c_structure_first_kept_seq(o['first_kept_seq']),
        **res,
      )
    return structure_CompactionEntry


def _s_durable_records_entries_Diagnostic(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'code', 'message', 'severity'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_code = str
    __c_structure_message = str
    __c_structure_severity = conv.get_structure_hook(typing.Literal['error', 'warning', 'info'])
    __c_type_severity = typing.Literal['error', 'warning', 'info']
    def structure_Diagnostic(o, _=__cl, __cl=__cl, __c_structure_severity=__c_structure_severity, __c_type_severity=__c_type_severity, __c_structure_code=__c_structure_code, __c_structure_message=__c_structure_message):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_severity(o['severity'], __c_type_severity),
        __c_structure_code(o['code']),
        __c_structure_message(o['message']),
      )
    return structure_Diagnostic


def _u_durable_records_entries_Diagnostic(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_Diagnostic(instance):
      res = {
        'severity': instance.severity,
        'code': instance.code,
        'message': instance.message,
      }
      return res
    return unstructure_Diagnostic


def _s_durable_records_entries_Reasoning(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'encrypted', 'format', 'id', 'partial', 'redacted', 'signature', 'summary', 'text'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_encrypted = conv.get_structure_hook(str | None)
    __c_structure_format = str
    __c_structure_id = conv.get_structure_hook(str | None)
    __c_structure_partial = bool
    __c_structure_redacted = conv.get_structure_hook(str | None)
    __c_structure_signature = conv.get_structure_hook(str | None)
    __c_structure_summary = conv.get_structure_hook(tuple[str, ...])
    __c_structure_text = str
    __c_type_encrypted = str | None
    __c_type_id = str | None
    __c_type_redacted = str | None
    __c_type_signature = str | None
    __c_type_summary = tuple[str, ...]
    def structure_Reasoning(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_format=__c_structure_format, __c_structure_signature=__c_structure_signature, __c_type_signature=__c_type_signature, __c_structure_redacted=__c_structure_redacted, __c_type_redacted=__c_type_redacted, __c_structure_id=__c_structure_id, __c_type_id=__c_type_id, __c_structure_encrypted=__c_structure_encrypted, __c_type_encrypted=__c_type_encrypted, __c_structure_summary=__c_structure_summary, __c_type_summary=__c_type_summary, __c_structure_partial=__c_structure_partial):
      res = {}
      if 'text' in o:
        res['text'] = __c_structure_text(o['text'])
      if 'format' in o:
        res['format'] = __c_structure_format(o['format'])
      if 'signature' in o:
        res['signature'] = __c_structure_signature(o['signature'], __c_type_signature)
      if 'redacted' in o:
        res['redacted'] = __c_structure_redacted(o['redacted'], __c_type_redacted)
      if 'id' in o:
        res['id'] = __c_structure_id(o['id'], __c_type_id)
      if 'encrypted' in o:
        res['encrypted'] = __c_structure_encrypted(o['encrypted'], __c_type_encrypted)
      if 'summary' in o:
        res['summary'] = __c_structure_summary(o['summary'], __c_type_summary)
      if 'partial' in o:
        res['partial'] = __c_structure_partial(o['partial'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_Reasoning


def _u_durable_records_entries_Reasoning(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_encrypted = None
    __c_def_id = None
    __c_def_partial = False
    __c_def_redacted = None
    __c_def_signature = None
    __c_def_summary = ()
    __c_unstr_encrypted = conv.get_unstructure_hook(str | None)
    __c_unstr_id = conv.get_unstructure_hook(str | None)
    __c_unstr_redacted = conv.get_unstructure_hook(str | None)
    __c_unstr_signature = conv.get_unstructure_hook(str | None)
    __c_unstr_summary = conv.get_unstructure_hook(tuple[str, ...])
    def unstructure_Reasoning(instance, __c_unstr_signature=__c_unstr_signature, __c_def_signature=__c_def_signature, __c_unstr_redacted=__c_unstr_redacted, __c_def_redacted=__c_def_redacted, __c_unstr_id=__c_unstr_id, __c_def_id=__c_def_id, __c_unstr_encrypted=__c_unstr_encrypted, __c_def_encrypted=__c_def_encrypted, __c_unstr_summary=__c_unstr_summary, __c_def_summary=__c_def_summary, __c_def_partial=__c_def_partial):
      res = {
        'text': instance.text,
        'format': instance.format,
      }
      if instance.signature != __c_def_signature:
        res['signature'] = __c_unstr_signature(instance.signature)
      if instance.redacted != __c_def_redacted:
        res['redacted'] = __c_unstr_redacted(instance.redacted)
      if instance.id != __c_def_id:
        res['id'] = __c_unstr_id(instance.id)
      if instance.encrypted != __c_def_encrypted:
        res['encrypted'] = __c_unstr_encrypted(instance.encrypted)
      if instance.summary != __c_def_summary:
        res['summary'] = __c_unstr_summary(instance.summary)
      if instance.partial != __c_def_partial:
        res['partial'] = instance.partial
      return res
    return unstructure_Reasoning


def _s_durable_records_entries_StoredEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'conversation_id', 'entry', 'seq'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_conversation_id = str
    __c_structure_entry = conv.get_structure_hook(typing.Union[m['durable.records.entries'].UserEntry, m['durable.records.entries'].AssistantEntry, m['durable.records.entries'].ToolResultEntry, m['durable.records.entries'].CompactionEntry])
    __c_structure_seq = int
    __c_type_entry = typing.Union[m['durable.records.entries'].UserEntry, m['durable.records.entries'].AssistantEntry, m['durable.records.entries'].ToolResultEntry, m['durable.records.entries'].CompactionEntry]
    def structure_StoredEntry(o, _=__cl, __cl=__cl, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_seq=__c_structure_seq, __c_structure_entry=__c_structure_entry, __c_type_entry=__c_type_entry):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_conversation_id(o['conversation_id']),
        __c_structure_seq(o['seq']),
        __c_structure_entry(o['entry'], __c_type_entry),
      )
    return structure_StoredEntry


def _u_durable_records_entries_StoredEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_entry = conv.get_unstructure_hook(typing.Union[m['durable.records.entries'].UserEntry, m['durable.records.entries'].AssistantEntry, m['durable.records.entries'].ToolResultEntry, m['durable.records.entries'].CompactionEntry])
    def unstructure_StoredEntry(instance, __c_unstr_entry=__c_unstr_entry):
      res = {
        'conversation_id': instance.conversation_id,
        'seq': instance.seq,
        'entry': __c_unstr_entry(instance.entry),
      }
      return res
    return unstructure_StoredEntry


def _s_durable_records_entries_ToolCall(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'arguments', 'id', 'name'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_arguments = str
    __c_structure_id = str
    __c_structure_name = str
    def structure_ToolCall(o, _=__cl, __cl=__cl, __c_structure_id=__c_structure_id, __c_structure_name=__c_structure_name, __c_structure_arguments=__c_structure_arguments):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_id(o['id']),
        __c_structure_name(o['name']),
        __c_structure_arguments(o['arguments']),
      )
    return structure_ToolCall


def _u_durable_records_entries_ToolCall(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_ToolCall(instance):
      res = {
        'id': instance.id,
        'name': instance.name,
        'arguments': instance.arguments,
      }
      return res
    return unstructure_ToolCall


def _s_durable_records_entries_ToolResultEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'call_id', 'content', 'diagnostics', 'is_error', 'parts', 'tool_name'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_call_id = str
    __c_structure_content = str
    __c_structure_diagnostics = conv.get_structure_hook(tuple[m['durable.records.entries'].Diagnostic, ...])
    __c_structure_is_error = bool
    __c_structure_parts = conv.get_structure_hook(tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...])
    __c_structure_tool_name = str
    __c_type_diagnostics = tuple[m['durable.records.entries'].Diagnostic, ...]
    __c_type_parts = tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...]
    def structure_ToolResultEntry(o, _=__cl, __cl=__cl, __c_structure_call_id=__c_structure_call_id, __c_structure_tool_name=__c_structure_tool_name, __c_structure_content=__c_structure_content, __c_structure_is_error=__c_structure_is_error, __c_structure_diagnostics=__c_structure_diagnostics, __c_type_diagnostics=__c_type_diagnostics, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts):
      res = {}
      if 'is_error' in o:
        res['is_error'] = __c_structure_is_error(o['is_error'])
      if 'diagnostics' in o:
        res['diagnostics'] = __c_structure_diagnostics(o['diagnostics'], __c_type_diagnostics)
      if 'parts' in o:
        res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_call_id(o['call_id']),
        __c_structure_tool_name(o['tool_name']),
        __c_structure_content(o['content']),
        **res,
      )
    return structure_ToolResultEntry


def _u_durable_records_entries_ToolResultEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_parts = ()
    __c_unstr_diagnostics = conv.get_unstructure_hook(tuple[m['durable.records.entries'].Diagnostic, ...])
    __c_unstr_parts = conv.get_unstructure_hook(tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...])
    def unstructure_ToolResultEntry(instance, __c_unstr_diagnostics=__c_unstr_diagnostics, __c_unstr_parts=__c_unstr_parts, __c_def_parts=__c_def_parts):
      res = {
        'call_id': instance.call_id,
        'tool_name': instance.tool_name,
        'content': instance.content,
        'is_error': instance.is_error,
        'diagnostics': __c_unstr_diagnostics(instance.diagnostics),
      }
      if instance.parts != __c_def_parts:
        res['parts'] = __c_unstr_parts(instance.parts)
      return res
    return unstructure_ToolResultEntry


def _v_durable_records_entries_ToolResultEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_call_id = str
    __c_structure_content = str
    __c_structure_diagnostics = conv.get_structure_hook(tuple[m['durable.records.entries'].Diagnostic, ...])
    __c_structure_is_error = bool
    __c_structure_parts = conv.get_structure_hook(tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...])
    __c_structure_tool_name = str
    __c_type_diagnostics = tuple[m['durable.records.entries'].Diagnostic, ...]
    __c_type_parts = tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...]
    def structure_ToolResultEntry(o, _=__cl, __cl=__cl, __c_structure_call_id=__c_structure_call_id, __c_structure_tool_name=__c_structure_tool_name, __c_structure_content=__c_structure_content, __c_structure_is_error=__c_structure_is_error, __c_structure_diagnostics=__c_structure_diagnostics, __c_type_diagnostics=__c_type_diagnostics, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts):
      res = {}
      if 'is_error' in o:
        res['is_error'] = __c_structure_is_error(o['is_error'])
      if 'diagnostics' in o:
        res['diagnostics'] = __c_structure_diagnostics(o['diagnostics'], __c_type_diagnostics)
      if 'parts' in o:
        res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)
      return __cl(
        __c_structure_call_id(o['call_id']),
        __c_structure_tool_name(o['tool_name']),
        __c_structure_content(o['content']),
        **res,
      )
    return structure_ToolResultEntry


def _s_durable_records_entries_Usage(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'cache_read_tokens', 'cache_write_tokens', 'input_tokens', 'output_tokens', 'reasoning_tokens'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_cache_read_tokens = int
    __c_structure_cache_write_tokens = int
    __c_structure_input_tokens = int
    __c_structure_output_tokens = int
    __c_structure_reasoning_tokens = int
    def structure_Usage(o, _=__cl, __cl=__cl, __c_structure_input_tokens=__c_structure_input_tokens, __c_structure_output_tokens=__c_structure_output_tokens, __c_structure_reasoning_tokens=__c_structure_reasoning_tokens, __c_structure_cache_read_tokens=__c_structure_cache_read_tokens, __c_structure_cache_write_tokens=__c_structure_cache_write_tokens):
      res = {}
      if 'input_tokens' in o:
        res['input_tokens'] = __c_structure_input_tokens(o['input_tokens'])
      if 'output_tokens' in o:
        res['output_tokens'] = __c_structure_output_tokens(o['output_tokens'])
      if 'reasoning_tokens' in o:
        res['reasoning_tokens'] = __c_structure_reasoning_tokens(o['reasoning_tokens'])
      if 'cache_read_tokens' in o:
        res['cache_read_tokens'] = __c_structure_cache_read_tokens(o['cache_read_tokens'])
      if 'cache_write_tokens' in o:
        res['cache_write_tokens'] = __c_structure_cache_write_tokens(o['cache_write_tokens'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_Usage


def _u_durable_records_entries_Usage(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_cache_read_tokens = 0
    __c_def_cache_write_tokens = 0
    __c_def_reasoning_tokens = 0
    def unstructure_Usage(instance, __c_def_reasoning_tokens=__c_def_reasoning_tokens, __c_def_cache_read_tokens=__c_def_cache_read_tokens, __c_def_cache_write_tokens=__c_def_cache_write_tokens):
      res = {
        'input_tokens': instance.input_tokens,
        'output_tokens': instance.output_tokens,
      }
      if instance.reasoning_tokens != __c_def_reasoning_tokens:
        res['reasoning_tokens'] = instance.reasoning_tokens
      if instance.cache_read_tokens != __c_def_cache_read_tokens:
        res['cache_read_tokens'] = instance.cache_read_tokens
      if instance.cache_write_tokens != __c_def_cache_write_tokens:
        res['cache_write_tokens'] = instance.cache_write_tokens
      return res
    return unstructure_Usage


def _s_durable_records_entries_UserEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'parts', 'submission_id', 'text'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_parts = conv.get_structure_hook(tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...])
    __c_structure_submission_id = conv.get_structure_hook(str | None)
    __c_structure_text = str
    __c_type_parts = tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...]
    __c_type_submission_id = str | None
    def structure_UserEntry(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_submission_id=__c_structure_submission_id, __c_type_submission_id=__c_type_submission_id, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts):
      res = {}
      if 'submission_id' in o:
        res['submission_id'] = __c_structure_submission_id(o['submission_id'], __c_type_submission_id)
      if 'parts' in o:
        res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_text(o['text']),
        **res,
      )
    return structure_UserEntry


def _u_durable_records_entries_UserEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_parts = ()
    __c_unstr_parts = conv.get_unstructure_hook(tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...])
    __c_unstr_submission_id = conv.get_unstructure_hook(str | None)
    def unstructure_UserEntry(instance, __c_unstr_submission_id=__c_unstr_submission_id, __c_unstr_parts=__c_unstr_parts, __c_def_parts=__c_def_parts):
      res = {
        'text': instance.text,
        'submission_id': __c_unstr_submission_id(instance.submission_id),
      }
      if instance.parts != __c_def_parts:
        res['parts'] = __c_unstr_parts(instance.parts)
      return res
    return unstructure_UserEntry


def _v_durable_records_entries_UserEntry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_parts = conv.get_structure_hook(tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...])
    __c_structure_submission_id = conv.get_structure_hook(str | None)
    __c_structure_text = str
    __c_type_parts = tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...]
    __c_type_submission_id = str | None
    def structure_UserEntry(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_submission_id=__c_structure_submission_id, __c_type_submission_id=__c_type_submission_id, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts):
      res = {}
      if 'submission_id' in o:
        res['submission_id'] = __c_structure_submission_id(o['submission_id'], __c_type_submission_id)
      if 'parts' in o:
        res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)
      return __cl(
        __c_structure_text(o['text']),
        **res,
      )
    return structure_UserEntry


def _s_durable_records_live_ApprovalSlot(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'arguments', 'call_id', 'deadline', 'parameters', 'since', 'task_id', 'tool'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_arguments = str
    __c_structure_call_id = str
    __c_structure_deadline = conv.get_structure_hook(float | None)
    __c_structure_parameters = conv.get_structure_hook(str | None)
    __c_structure_since = float
    __c_structure_task_id = int
    __c_structure_tool = str
    __c_type_deadline = float | None
    __c_type_parameters = str | None
    def structure_ApprovalSlot(o, _=__cl, __cl=__cl, __c_structure_call_id=__c_structure_call_id, __c_structure_tool=__c_structure_tool, __c_structure_arguments=__c_structure_arguments, __c_structure_task_id=__c_structure_task_id, __c_structure_since=__c_structure_since, __c_structure_deadline=__c_structure_deadline, __c_type_deadline=__c_type_deadline, __c_structure_parameters=__c_structure_parameters, __c_type_parameters=__c_type_parameters):
      res = {}
      if 'deadline' in o:
        res['deadline'] = __c_structure_deadline(o['deadline'], __c_type_deadline)
      if 'parameters' in o:
        res['parameters'] = __c_structure_parameters(o['parameters'], __c_type_parameters)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_call_id(o['call_id']),
        __c_structure_tool(o['tool']),
        __c_structure_arguments(o['arguments']),
        __c_structure_task_id(o['task_id']),
        __c_structure_since(o['since']),
        **res,
      )
    return structure_ApprovalSlot


def _u_durable_records_live_ApprovalSlot(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_parameters = None
    __c_unstr_deadline = conv.get_unstructure_hook(float | None)
    __c_unstr_parameters = conv.get_unstructure_hook(str | None)
    def unstructure_ApprovalSlot(instance, __c_unstr_deadline=__c_unstr_deadline, __c_unstr_parameters=__c_unstr_parameters, __c_def_parameters=__c_def_parameters):
      res = {
        'call_id': instance.call_id,
        'tool': instance.tool,
        'arguments': instance.arguments,
        'task_id': instance.task_id,
        'since': instance.since,
        'deadline': __c_unstr_deadline(instance.deadline),
      }
      if instance.parameters != __c_def_parameters:
        res['parameters'] = __c_unstr_parameters(instance.parameters)
      return res
    return unstructure_ApprovalSlot


def _s_durable_records_live_CompactionFailure(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'error', 'task_id', 'trigger'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_error = str
    __c_structure_task_id = int
    __c_structure_trigger = str
    def structure_CompactionFailure(o, _=__cl, __cl=__cl, __c_structure_task_id=__c_structure_task_id, __c_structure_trigger=__c_structure_trigger, __c_structure_error=__c_structure_error):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_task_id(o['task_id']),
        __c_structure_trigger(o['trigger']),
        __c_structure_error(o['error']),
      )
    return structure_CompactionFailure


def _u_durable_records_live_CompactionFailure(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_CompactionFailure(instance):
      res = {
        'task_id': instance.task_id,
        'trigger': instance.trigger,
        'error': instance.error,
      }
      return res
    return unstructure_CompactionFailure


def _s_durable_records_live_ConversationInfo(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'archived', 'busy', 'compactions', 'entries', 'forked_at', 'forked_from', 'id', 'parent', 'usage'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_archived = bool
    __c_structure_busy = bool
    __c_structure_compactions = int
    __c_structure_entries = int
    __c_structure_forked_at = int
    __c_structure_forked_from = conv.get_structure_hook(str | None)
    __c_structure_id = str
    __c_structure_parent = conv.get_structure_hook(str | None)
    __c_structure_usage = conv.get_structure_hook(m['durable.records.usage'].UsageTotals)
    __c_type_forked_from = str | None
    __c_type_parent = str | None
    __c_type_usage = m['durable.records.usage'].UsageTotals
    def structure_ConversationInfo(o, _=__cl, __cl=__cl, __c_structure_id=__c_structure_id, __c_structure_entries=__c_structure_entries, __c_structure_archived=__c_structure_archived, __c_structure_busy=__c_structure_busy, __c_structure_forked_from=__c_structure_forked_from, __c_type_forked_from=__c_type_forked_from, __c_structure_forked_at=__c_structure_forked_at, __c_structure_parent=__c_structure_parent, __c_type_parent=__c_type_parent, __c_structure_compactions=__c_structure_compactions, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage):
      res = {}
      if 'entries' in o:
        res['entries'] = __c_structure_entries(o['entries'])
      if 'archived' in o:
        res['archived'] = __c_structure_archived(o['archived'])
      if 'busy' in o:
        res['busy'] = __c_structure_busy(o['busy'])
      if 'forked_from' in o:
        res['forked_from'] = __c_structure_forked_from(o['forked_from'], __c_type_forked_from)
      if 'forked_at' in o:
        res['forked_at'] = __c_structure_forked_at(o['forked_at'])
      if 'parent' in o:
        res['parent'] = __c_structure_parent(o['parent'], __c_type_parent)
      if 'compactions' in o:
        res['compactions'] = __c_structure_compactions(o['compactions'])
      if 'usage' in o:
        res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_id(o['id']),
        **res,
      )
    return structure_ConversationInfo


def _u_durable_records_live_ConversationInfo(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_forked_from = conv.get_unstructure_hook(str | None)
    __c_unstr_parent = conv.get_unstructure_hook(str | None)
    __c_unstr_usage = conv.get_unstructure_hook(m['durable.records.usage'].UsageTotals)
    def unstructure_ConversationInfo(instance, __c_unstr_forked_from=__c_unstr_forked_from, __c_unstr_parent=__c_unstr_parent, __c_unstr_usage=__c_unstr_usage):
      res = {
        'id': instance.id,
        'entries': instance.entries,
        'archived': instance.archived,
        'busy': instance.busy,
        'forked_from': __c_unstr_forked_from(instance.forked_from),
        'forked_at': instance.forked_at,
        'parent': __c_unstr_parent(instance.parent),
        'compactions': instance.compactions,
        'usage': __c_unstr_usage(instance.usage),
      }
      return res
    return unstructure_ConversationInfo


def _s_durable_records_live_DeferredLive(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'poll_at'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_poll_at = float
    def structure_DeferredLive(o, _=__cl, __cl=__cl, __c_structure_poll_at=__c_structure_poll_at):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_poll_at(o['poll_at']),
      )
    return structure_DeferredLive


def _u_durable_records_live_DeferredLive(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_DeferredLive(instance):
      res = {
        'poll_at': instance.poll_at,
      }
      return res
    return unstructure_DeferredLive


def _s_durable_records_live_GenerationLive(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'attempt', 'deferred', 'message', 'retry'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_attempt = int
    __c_structure_deferred = conv.get_structure_hook(m['durable.records.live'].DeferredLive | None)
    __c_structure_message = conv.get_structure_hook(m['durable.records.live'].PartialMessage)
    __c_structure_retry = conv.get_structure_hook(m['durable.records.live'].RetryLive | None)
    __c_type_deferred = m['durable.records.live'].DeferredLive | None
    __c_type_message = m['durable.records.live'].PartialMessage
    __c_type_retry = m['durable.records.live'].RetryLive | None
    def structure_GenerationLive(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_message=__c_structure_message, __c_type_message=__c_type_message, __c_structure_retry=__c_structure_retry, __c_type_retry=__c_type_retry, __c_structure_deferred=__c_structure_deferred, __c_type_deferred=__c_type_deferred):
      res = {}
      if 'message' in o:
        res['message'] = __c_structure_message(o['message'], __c_type_message)
      if 'retry' in o:
        res['retry'] = __c_structure_retry(o['retry'], __c_type_retry)
      if 'deferred' in o:
        res['deferred'] = __c_structure_deferred(o['deferred'], __c_type_deferred)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_attempt(o['attempt']),
        **res,
      )
    return structure_GenerationLive


def _u_durable_records_live_GenerationLive(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_deferred = conv.get_unstructure_hook(m['durable.records.live'].DeferredLive | None)
    __c_unstr_message = conv.get_unstructure_hook(m['durable.records.live'].PartialMessage)
    __c_unstr_retry = conv.get_unstructure_hook(m['durable.records.live'].RetryLive | None)
    def unstructure_GenerationLive(instance, __c_unstr_message=__c_unstr_message, __c_unstr_retry=__c_unstr_retry, __c_unstr_deferred=__c_unstr_deferred):
      res = {
        'attempt': instance.attempt,
        'message': __c_unstr_message(instance.message),
        'retry': __c_unstr_retry(instance.retry),
        'deferred': __c_unstr_deferred(instance.deferred),
      }
      return res
    return unstructure_GenerationLive


def _s_durable_records_live_Live(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'approvals', 'archived', 'compaction_failure', 'compactions', 'forked_at', 'forked_from', 'generation', 'parent', 'run', 'run_failure', 'tools', 'usage'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_approvals = conv.get_structure_hook(tuple[m['durable.records.live'].ApprovalSlot, ...])
    __c_structure_archived = bool
    __c_structure_compaction_failure = conv.get_structure_hook(m['durable.records.live'].CompactionFailure | None)
    __c_structure_compactions = int
    __c_structure_forked_at = int
    __c_structure_forked_from = conv.get_structure_hook(str | None)
    __c_structure_generation = conv.get_structure_hook(m['durable.records.live'].GenerationLive | None)
    __c_structure_parent = conv.get_structure_hook(m['durable.records.live'].ParentCall | None)
    __c_structure_run = conv.get_structure_hook(m['durable.records.live'].Run | None)
    __c_structure_run_failure = conv.get_structure_hook(m['durable.records.live'].RunFailure | None)
    __c_structure_tools = conv.get_structure_hook(tuple[m['durable.records.live'].ToolSlot, ...])
    __c_structure_usage = conv.get_structure_hook(m['durable.records.usage'].UsageTotals)
    __c_type_approvals = tuple[m['durable.records.live'].ApprovalSlot, ...]
    __c_type_compaction_failure = m['durable.records.live'].CompactionFailure | None
    __c_type_forked_from = str | None
    __c_type_generation = m['durable.records.live'].GenerationLive | None
    __c_type_parent = m['durable.records.live'].ParentCall | None
    __c_type_run = m['durable.records.live'].Run | None
    __c_type_run_failure = m['durable.records.live'].RunFailure | None
    __c_type_tools = tuple[m['durable.records.live'].ToolSlot, ...]
    __c_type_usage = m['durable.records.usage'].UsageTotals
    def structure_Live(o, _=__cl, __cl=__cl, __c_structure_run=__c_structure_run, __c_type_run=__c_type_run, __c_structure_generation=__c_structure_generation, __c_type_generation=__c_type_generation, __c_structure_tools=__c_structure_tools, __c_type_tools=__c_type_tools, __c_structure_approvals=__c_structure_approvals, __c_type_approvals=__c_type_approvals, __c_structure_run_failure=__c_structure_run_failure, __c_type_run_failure=__c_type_run_failure, __c_structure_compaction_failure=__c_structure_compaction_failure, __c_type_compaction_failure=__c_type_compaction_failure, __c_structure_compactions=__c_structure_compactions, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage, __c_structure_archived=__c_structure_archived, __c_structure_forked_from=__c_structure_forked_from, __c_type_forked_from=__c_type_forked_from, __c_structure_forked_at=__c_structure_forked_at, __c_structure_parent=__c_structure_parent, __c_type_parent=__c_type_parent):
      res = {}
      if 'run' in o:
        res['run'] = __c_structure_run(o['run'], __c_type_run)
      if 'generation' in o:
        res['generation'] = __c_structure_generation(o['generation'], __c_type_generation)
      if 'tools' in o:
        res['tools'] = __c_structure_tools(o['tools'], __c_type_tools)
      if 'approvals' in o:
        res['approvals'] = __c_structure_approvals(o['approvals'], __c_type_approvals)
      if 'run_failure' in o:
        res['run_failure'] = __c_structure_run_failure(o['run_failure'], __c_type_run_failure)
      if 'compaction_failure' in o:
        res['compaction_failure'] = __c_structure_compaction_failure(o['compaction_failure'], __c_type_compaction_failure)
      if 'compactions' in o:
        res['compactions'] = __c_structure_compactions(o['compactions'])
      if 'usage' in o:
        res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)
      if 'archived' in o:
        res['archived'] = __c_structure_archived(o['archived'])
      if 'forked_from' in o:
        res['forked_from'] = __c_structure_forked_from(o['forked_from'], __c_type_forked_from)
      if 'forked_at' in o:
        res['forked_at'] = __c_structure_forked_at(o['forked_at'])
      if 'parent' in o:
        res['parent'] = __c_structure_parent(o['parent'], __c_type_parent)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_Live


def _u_durable_records_live_Live(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_archived = False
    __c_def_forked_at = 0
    __c_def_forked_from = None
    __c_def_parent = None
    __c_def_usage = attrs.fields_dict(cls)['usage'].default
    __c_unstr_approvals = conv.get_unstructure_hook(tuple[m['durable.records.live'].ApprovalSlot, ...])
    __c_unstr_compaction_failure = conv.get_unstructure_hook(m['durable.records.live'].CompactionFailure | None)
    __c_unstr_forked_from = conv.get_unstructure_hook(str | None)
    __c_unstr_generation = conv.get_unstructure_hook(m['durable.records.live'].GenerationLive | None)
    __c_unstr_parent = conv.get_unstructure_hook(m['durable.records.live'].ParentCall | None)
    __c_unstr_run = conv.get_unstructure_hook(m['durable.records.live'].Run | None)
    __c_unstr_run_failure = conv.get_unstructure_hook(m['durable.records.live'].RunFailure | None)
    __c_unstr_tools = conv.get_unstructure_hook(tuple[m['durable.records.live'].ToolSlot, ...])
    __c_unstr_usage = conv.get_unstructure_hook(m['durable.records.usage'].UsageTotals)
    def unstructure_Live(instance, __c_unstr_run=__c_unstr_run, __c_unstr_generation=__c_unstr_generation, __c_unstr_tools=__c_unstr_tools, __c_unstr_approvals=__c_unstr_approvals, __c_unstr_run_failure=__c_unstr_run_failure, __c_unstr_compaction_failure=__c_unstr_compaction_failure, __c_unstr_usage=__c_unstr_usage, __c_def_usage=__c_def_usage, __c_def_archived=__c_def_archived, __c_unstr_forked_from=__c_unstr_forked_from, __c_def_forked_from=__c_def_forked_from, __c_def_forked_at=__c_def_forked_at, __c_unstr_parent=__c_unstr_parent, __c_def_parent=__c_def_parent):
      res = {
        'run': __c_unstr_run(instance.run),
        'generation': __c_unstr_generation(instance.generation),
        'tools': __c_unstr_tools(instance.tools),
        'approvals': __c_unstr_approvals(instance.approvals),
        'run_failure': __c_unstr_run_failure(instance.run_failure),
        'compaction_failure': __c_unstr_compaction_failure(instance.compaction_failure),
        'compactions': instance.compactions,
      }
      if instance.usage != __c_def_usage:
        res['usage'] = __c_unstr_usage(instance.usage)
      if instance.archived != __c_def_archived:
        res['archived'] = instance.archived
      if instance.forked_from != __c_def_forked_from:
        res['forked_from'] = __c_unstr_forked_from(instance.forked_from)
      if instance.forked_at != __c_def_forked_at:
        res['forked_at'] = instance.forked_at
      if instance.parent != __c_def_parent:
        res['parent'] = __c_unstr_parent(instance.parent)
      return res
    return unstructure_Live


def _s_durable_records_live_ParentCall(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'agent', 'call_id', 'conversation_id', 'depth', 'task_id'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_agent = str
    __c_structure_call_id = str
    __c_structure_conversation_id = str
    __c_structure_depth = int
    __c_structure_task_id = int
    def structure_ParentCall(o, _=__cl, __cl=__cl, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_task_id=__c_structure_task_id, __c_structure_call_id=__c_structure_call_id, __c_structure_agent=__c_structure_agent, __c_structure_depth=__c_structure_depth):
      res = {}
      if 'depth' in o:
        res['depth'] = __c_structure_depth(o['depth'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_conversation_id(o['conversation_id']),
        __c_structure_task_id(o['task_id']),
        __c_structure_call_id(o['call_id']),
        __c_structure_agent(o['agent']),
        **res,
      )
    return structure_ParentCall


def _u_durable_records_live_ParentCall(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_ParentCall(instance):
      res = {
        'conversation_id': instance.conversation_id,
        'task_id': instance.task_id,
        'call_id': instance.call_id,
        'agent': instance.agent,
        'depth': instance.depth,
      }
      return res
    return unstructure_ParentCall


def _s_durable_records_live_PartialMessage(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'reasoning', 'text', 'tool_calls', 'usage'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_reasoning = str
    __c_structure_text = str
    __c_structure_tool_calls = conv.get_structure_hook(tuple[m['durable.records.entries'].ToolCall, ...])
    __c_structure_usage = conv.get_structure_hook(m['durable.records.entries'].Usage)
    __c_type_tool_calls = tuple[m['durable.records.entries'].ToolCall, ...]
    __c_type_usage = m['durable.records.entries'].Usage
    def structure_PartialMessage(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_tool_calls=__c_structure_tool_calls, __c_type_tool_calls=__c_type_tool_calls, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage, __c_structure_reasoning=__c_structure_reasoning):
      res = {}
      if 'text' in o:
        res['text'] = __c_structure_text(o['text'])
      if 'tool_calls' in o:
        res['tool_calls'] = __c_structure_tool_calls(o['tool_calls'], __c_type_tool_calls)
      if 'usage' in o:
        res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)
      if 'reasoning' in o:
        res['reasoning'] = __c_structure_reasoning(o['reasoning'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_PartialMessage


def _u_durable_records_live_PartialMessage(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_reasoning = ''
    __c_unstr_tool_calls = conv.get_unstructure_hook(tuple[m['durable.records.entries'].ToolCall, ...])
    __c_unstr_usage = conv.get_unstructure_hook(m['durable.records.entries'].Usage)
    def unstructure_PartialMessage(instance, __c_unstr_tool_calls=__c_unstr_tool_calls, __c_unstr_usage=__c_unstr_usage, __c_def_reasoning=__c_def_reasoning):
      res = {
        'text': instance.text,
        'tool_calls': __c_unstr_tool_calls(instance.tool_calls),
        'usage': __c_unstr_usage(instance.usage),
      }
      if instance.reasoning != __c_def_reasoning:
        res['reasoning'] = instance.reasoning
      return res
    return unstructure_PartialMessage


def _s_durable_records_live_RetryLive(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'at', 'attempt', 'error', 'kind', 'provider', 'status_code'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_at = float
    __c_structure_attempt = int
    __c_structure_error = str
    __c_structure_kind = str
    __c_structure_provider = conv.get_structure_hook(str | None)
    __c_structure_status_code = conv.get_structure_hook(int | None)
    __c_type_provider = str | None
    __c_type_status_code = int | None
    def structure_RetryLive(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_at=__c_structure_at, __c_structure_error=__c_structure_error, __c_structure_kind=__c_structure_kind, __c_structure_provider=__c_structure_provider, __c_type_provider=__c_type_provider, __c_structure_status_code=__c_structure_status_code, __c_type_status_code=__c_type_status_code):
      res = {}
      if 'provider' in o:
        res['provider'] = __c_structure_provider(o['provider'], __c_type_provider)
      if 'status_code' in o:
        res['status_code'] = __c_structure_status_code(o['status_code'], __c_type_status_code)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_attempt(o['attempt']),
        __c_structure_at(o['at']),
        __c_structure_error(o['error']),
        __c_structure_kind(o['kind']),
        **res,
      )
    return structure_RetryLive


def _u_durable_records_live_RetryLive(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_provider = conv.get_unstructure_hook(str | None)
    __c_unstr_status_code = conv.get_unstructure_hook(int | None)
    def unstructure_RetryLive(instance, __c_unstr_provider=__c_unstr_provider, __c_unstr_status_code=__c_unstr_status_code):
      res = {
        'attempt': instance.attempt,
        'at': instance.at,
        'error': instance.error,
        'kind': instance.kind,
        'provider': __c_unstr_provider(instance.provider),
        'status_code': __c_unstr_status_code(instance.status_code),
      }
      return res
    return unstructure_RetryLive


def _s_durable_records_live_Run(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'inputs', 'task_id', 'usage'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_inputs = conv.get_structure_hook(tuple[str, ...])
    __c_structure_task_id = int
    __c_structure_usage = conv.get_structure_hook(m['durable.records.usage'].UsageTotals | None)
    __c_type_inputs = tuple[str, ...]
    __c_type_usage = m['durable.records.usage'].UsageTotals | None
    def structure_Run(o, _=__cl, __cl=__cl, __c_structure_task_id=__c_structure_task_id, __c_structure_inputs=__c_structure_inputs, __c_type_inputs=__c_type_inputs, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage):
      res = {}
      if 'usage' in o:
        res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_task_id(o['task_id']),
        __c_structure_inputs(o['inputs'], __c_type_inputs),
        **res,
      )
    return structure_Run


def _u_durable_records_live_Run(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_usage = None
    __c_unstr_inputs = conv.get_unstructure_hook(tuple[str, ...])
    __c_unstr_usage = conv.get_unstructure_hook(m['durable.records.usage'].UsageTotals | None)
    def unstructure_Run(instance, __c_unstr_inputs=__c_unstr_inputs, __c_unstr_usage=__c_unstr_usage, __c_def_usage=__c_def_usage):
      res = {
        'task_id': instance.task_id,
        'inputs': __c_unstr_inputs(instance.inputs),
      }
      if instance.usage != __c_def_usage:
        res['usage'] = __c_unstr_usage(instance.usage)
      return res
    return unstructure_Run


def _s_durable_records_live_RunFailure(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'detail', 'first', 'inputs', 'reason', 'task_id'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_detail = str
    __c_structure_first = conv.get_structure_hook(str | None)
    __c_structure_inputs = conv.get_structure_hook(tuple[str, ...])
    __c_structure_reason = conv.get_structure_hook(typing.Literal['model_error', 'interrupted', 'restart_limit', 'aborted', 'faulted', 'tool_round_limit', 'storage_error', 'prepare_failed', 'output_invalid', 'usage_limit', 'archived'])
    __c_structure_task_id = int
    __c_type_first = str | None
    __c_type_inputs = tuple[str, ...]
    __c_type_reason = typing.Literal['model_error', 'interrupted', 'restart_limit', 'aborted', 'faulted', 'tool_round_limit', 'storage_error', 'prepare_failed', 'output_invalid', 'usage_limit', 'archived']
    def structure_RunFailure(o, _=__cl, __cl=__cl, __c_structure_task_id=__c_structure_task_id, __c_structure_inputs=__c_structure_inputs, __c_type_inputs=__c_type_inputs, __c_structure_reason=__c_structure_reason, __c_type_reason=__c_type_reason, __c_structure_detail=__c_structure_detail, __c_structure_first=__c_structure_first, __c_type_first=__c_type_first):
      res = {}
      if 'first' in o:
        res['first'] = __c_structure_first(o['first'], __c_type_first)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_task_id(o['task_id']),
        __c_structure_inputs(o['inputs'], __c_type_inputs),
        __c_structure_reason(o['reason'], __c_type_reason),
        __c_structure_detail(o['detail']),
        **res,
      )
    return structure_RunFailure


def _u_durable_records_live_RunFailure(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_first = conv.get_unstructure_hook(str | None)
    __c_unstr_inputs = conv.get_unstructure_hook(tuple[str, ...])
    def unstructure_RunFailure(instance, __c_unstr_inputs=__c_unstr_inputs, __c_unstr_first=__c_unstr_first):
      res = {
        'task_id': instance.task_id,
        'inputs': __c_unstr_inputs(instance.inputs),
        'reason': instance.reason,
        'detail': instance.detail,
        'first': __c_unstr_first(instance.first),
      }
      return res
    return unstructure_RunFailure


def _s_durable_records_live_ToolSlot(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'call_id', 'conversation', 'name', 'output', 'status', 'task_id'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_call_id = str
    __c_structure_conversation = conv.get_structure_hook(str | None)
    __c_structure_name = str
    __c_structure_output = str
    __c_structure_status = conv.get_structure_hook(typing.Literal['running', 'waiting', 'done', 'error'])
    __c_structure_task_id = int
    __c_type_conversation = str | None
    __c_type_status = typing.Literal['running', 'waiting', 'done', 'error']
    def structure_ToolSlot(o, _=__cl, __cl=__cl, __c_structure_call_id=__c_structure_call_id, __c_structure_name=__c_structure_name, __c_structure_task_id=__c_structure_task_id, __c_structure_output=__c_structure_output, __c_structure_status=__c_structure_status, __c_type_status=__c_type_status, __c_structure_conversation=__c_structure_conversation, __c_type_conversation=__c_type_conversation):
      res = {}
      if 'output' in o:
        res['output'] = __c_structure_output(o['output'])
      if 'status' in o:
        res['status'] = __c_structure_status(o['status'], __c_type_status)
      if 'conversation' in o:
        res['conversation'] = __c_structure_conversation(o['conversation'], __c_type_conversation)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_call_id(o['call_id']),
        __c_structure_name(o['name']),
        __c_structure_task_id(o['task_id']),
        **res,
      )
    return structure_ToolSlot


def _u_durable_records_live_ToolSlot(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_conversation = None
    __c_unstr_conversation = conv.get_unstructure_hook(str | None)
    def unstructure_ToolSlot(instance, __c_unstr_conversation=__c_unstr_conversation, __c_def_conversation=__c_def_conversation):
      res = {
        'call_id': instance.call_id,
        'name': instance.name,
        'task_id': instance.task_id,
        'output': instance.output,
        'status': instance.status,
      }
      if instance.conversation != __c_def_conversation:
        res['conversation'] = __c_unstr_conversation(instance.conversation)
      return res
    return unstructure_ToolSlot


def _s_durable_records_model_settings_ModelSettings(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'extra', 'max_tokens', 'model', 'parallel_tool_calls', 'prompt_cache', 'reasoning_effort', 'seed', 'service_tier', 'stop', 'temperature', 'thinking_budget', 'tool_choice', 'top_p'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_extra = conv.get_structure_hook(dict[str, typing.Any] | None)
    __c_structure_max_tokens = conv.get_structure_hook(int | None)
    __c_structure_model = conv.get_structure_hook(str | None)
    __c_structure_parallel_tool_calls = conv.get_structure_hook(bool | None)
    __c_structure_prompt_cache = conv.get_structure_hook(bool | None)
    __c_structure_reasoning_effort = conv.get_structure_hook(str | None)
    __c_structure_seed = conv.get_structure_hook(int | None)
    __c_structure_service_tier = conv.get_structure_hook(str | None)
    __c_structure_stop = conv.get_structure_hook(tuple[str, ...] | None)
    __c_structure_temperature = conv.get_structure_hook(float | None)
    __c_structure_thinking_budget = conv.get_structure_hook(int | None)
    __c_structure_tool_choice = conv.get_structure_hook(str | None)
    __c_structure_top_p = conv.get_structure_hook(float | None)
    __c_type_extra = dict[str, typing.Any] | None
    __c_type_max_tokens = int | None
    __c_type_model = str | None
    __c_type_parallel_tool_calls = bool | None
    __c_type_prompt_cache = bool | None
    __c_type_reasoning_effort = str | None
    __c_type_seed = int | None
    __c_type_service_tier = str | None
    __c_type_stop = tuple[str, ...] | None
    __c_type_temperature = float | None
    __c_type_thinking_budget = int | None
    __c_type_tool_choice = str | None
    __c_type_top_p = float | None
    def structure_ModelSettings(o, _=__cl, __cl=__cl, __c_structure_temperature=__c_structure_temperature, __c_type_temperature=__c_type_temperature, __c_structure_top_p=__c_structure_top_p, __c_type_top_p=__c_type_top_p, __c_structure_max_tokens=__c_structure_max_tokens, __c_type_max_tokens=__c_type_max_tokens, __c_structure_stop=__c_structure_stop, __c_type_stop=__c_type_stop, __c_structure_seed=__c_structure_seed, __c_type_seed=__c_type_seed, __c_structure_reasoning_effort=__c_structure_reasoning_effort, __c_type_reasoning_effort=__c_type_reasoning_effort, __c_structure_thinking_budget=__c_structure_thinking_budget, __c_type_thinking_budget=__c_type_thinking_budget, __c_structure_tool_choice=__c_structure_tool_choice, __c_type_tool_choice=__c_type_tool_choice, __c_structure_parallel_tool_calls=__c_structure_parallel_tool_calls, __c_type_parallel_tool_calls=__c_type_parallel_tool_calls, __c_structure_service_tier=__c_structure_service_tier, __c_type_service_tier=__c_type_service_tier, __c_structure_prompt_cache=__c_structure_prompt_cache, __c_type_prompt_cache=__c_type_prompt_cache, __c_structure_extra=__c_structure_extra, __c_type_extra=__c_type_extra, __c_structure_model=__c_structure_model, __c_type_model=__c_type_model):
      res = {}
      if 'temperature' in o:
        res['temperature'] = __c_structure_temperature(o['temperature'], __c_type_temperature)
      if 'top_p' in o:
        res['top_p'] = __c_structure_top_p(o['top_p'], __c_type_top_p)
      if 'max_tokens' in o:
        res['max_tokens'] = __c_structure_max_tokens(o['max_tokens'], __c_type_max_tokens)
      if 'stop' in o:
        res['stop'] = __c_structure_stop(o['stop'], __c_type_stop)
      if 'seed' in o:
        res['seed'] = __c_structure_seed(o['seed'], __c_type_seed)
      if 'reasoning_effort' in o:
        res['reasoning_effort'] = __c_structure_reasoning_effort(o['reasoning_effort'], __c_type_reasoning_effort)
      if 'thinking_budget' in o:
        res['thinking_budget'] = __c_structure_thinking_budget(o['thinking_budget'], __c_type_thinking_budget)
      if 'tool_choice' in o:
        res['tool_choice'] = __c_structure_tool_choice(o['tool_choice'], __c_type_tool_choice)
      if 'parallel_tool_calls' in o:
        res['parallel_tool_calls'] = __c_structure_parallel_tool_calls(o['parallel_tool_calls'], __c_type_parallel_tool_calls)
      if 'service_tier' in o:
        res['service_tier'] = __c_structure_service_tier(o['service_tier'], __c_type_service_tier)
      if 'prompt_cache' in o:
        res['prompt_cache'] = __c_structure_prompt_cache(o['prompt_cache'], __c_type_prompt_cache)
      if 'extra' in o:
        res['extra'] = __c_structure_extra(o['extra'], __c_type_extra)
      if 'model' in o:
        res['model'] = __c_structure_model(o['model'], __c_type_model)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_ModelSettings


def _u_durable_records_model_settings_ModelSettings(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_extra = None
    __c_def_max_tokens = None
    __c_def_model = None
    __c_def_parallel_tool_calls = None
    __c_def_prompt_cache = None
    __c_def_reasoning_effort = None
    __c_def_seed = None
    __c_def_service_tier = None
    __c_def_stop = None
    __c_def_temperature = None
    __c_def_thinking_budget = None
    __c_def_tool_choice = None
    __c_def_top_p = None
    __c_unstr_extra = conv.get_unstructure_hook(dict[str, typing.Any] | None)
    __c_unstr_max_tokens = conv.get_unstructure_hook(int | None)
    __c_unstr_model = conv.get_unstructure_hook(str | None)
    __c_unstr_parallel_tool_calls = conv.get_unstructure_hook(bool | None)
    __c_unstr_prompt_cache = conv.get_unstructure_hook(bool | None)
    __c_unstr_reasoning_effort = conv.get_unstructure_hook(str | None)
    __c_unstr_seed = conv.get_unstructure_hook(int | None)
    __c_unstr_service_tier = conv.get_unstructure_hook(str | None)
    __c_unstr_stop = conv.get_unstructure_hook(tuple[str, ...] | None)
    __c_unstr_temperature = conv.get_unstructure_hook(float | None)
    __c_unstr_thinking_budget = conv.get_unstructure_hook(int | None)
    __c_unstr_tool_choice = conv.get_unstructure_hook(str | None)
    __c_unstr_top_p = conv.get_unstructure_hook(float | None)
    def unstructure_ModelSettings(instance, __c_unstr_temperature=__c_unstr_temperature, __c_def_temperature=__c_def_temperature, __c_unstr_top_p=__c_unstr_top_p, __c_def_top_p=__c_def_top_p, __c_unstr_max_tokens=__c_unstr_max_tokens, __c_def_max_tokens=__c_def_max_tokens, __c_unstr_stop=__c_unstr_stop, __c_def_stop=__c_def_stop, __c_unstr_seed=__c_unstr_seed, __c_def_seed=__c_def_seed, __c_unstr_reasoning_effort=__c_unstr_reasoning_effort, __c_def_reasoning_effort=__c_def_reasoning_effort, __c_unstr_thinking_budget=__c_unstr_thinking_budget, __c_def_thinking_budget=__c_def_thinking_budget, __c_unstr_tool_choice=__c_unstr_tool_choice, __c_def_tool_choice=__c_def_tool_choice, __c_unstr_parallel_tool_calls=__c_unstr_parallel_tool_calls, __c_def_parallel_tool_calls=__c_def_parallel_tool_calls, __c_unstr_service_tier=__c_unstr_service_tier, __c_def_service_tier=__c_def_service_tier, __c_unstr_prompt_cache=__c_unstr_prompt_cache, __c_def_prompt_cache=__c_def_prompt_cache, __c_unstr_extra=__c_unstr_extra, __c_def_extra=__c_def_extra, __c_unstr_model=__c_unstr_model, __c_def_model=__c_def_model):
      res = {
      }
      if instance.temperature != __c_def_temperature:
        res['temperature'] = __c_unstr_temperature(instance.temperature)
      if instance.top_p != __c_def_top_p:
        res['top_p'] = __c_unstr_top_p(instance.top_p)
      if instance.max_tokens != __c_def_max_tokens:
        res['max_tokens'] = __c_unstr_max_tokens(instance.max_tokens)
      if instance.stop != __c_def_stop:
        res['stop'] = __c_unstr_stop(instance.stop)
      if instance.seed != __c_def_seed:
        res['seed'] = __c_unstr_seed(instance.seed)
      if instance.reasoning_effort != __c_def_reasoning_effort:
        res['reasoning_effort'] = __c_unstr_reasoning_effort(instance.reasoning_effort)
      if instance.thinking_budget != __c_def_thinking_budget:
        res['thinking_budget'] = __c_unstr_thinking_budget(instance.thinking_budget)
      if instance.tool_choice != __c_def_tool_choice:
        res['tool_choice'] = __c_unstr_tool_choice(instance.tool_choice)
      if instance.parallel_tool_calls != __c_def_parallel_tool_calls:
        res['parallel_tool_calls'] = __c_unstr_parallel_tool_calls(instance.parallel_tool_calls)
      if instance.service_tier != __c_def_service_tier:
        res['service_tier'] = __c_unstr_service_tier(instance.service_tier)
      if instance.prompt_cache != __c_def_prompt_cache:
        res['prompt_cache'] = __c_unstr_prompt_cache(instance.prompt_cache)
      if instance.extra != __c_def_extra:
        res['extra'] = __c_unstr_extra(instance.extra)
      if instance.model != __c_def_model:
        res['model'] = __c_unstr_model(instance.model)
      return res
    return unstructure_ModelSettings


def _s_durable_records_submissions_Answered(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'output', 'seq', 'text'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_output = conv.get_structure_hook(typing.Any)
    __c_structure_seq = conv.get_structure_hook(int | None)
    __c_structure_text = str
    __c_type_output = typing.Any
    __c_type_seq = int | None
    def structure_Answered(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_seq=__c_structure_seq, __c_type_seq=__c_type_seq, __c_structure_output=__c_structure_output, __c_type_output=__c_type_output):
      res = {}
      if 'text' in o:
        res['text'] = __c_structure_text(o['text'])
      if 'seq' in o:
        res['seq'] = __c_structure_seq(o['seq'], __c_type_seq)
      if 'output' in o:
        res['output'] = __c_structure_output(o['output'], __c_type_output)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_Answered


def _u_durable_records_submissions_Answered(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_output = None
    __c_unstr_output = conv.get_unstructure_hook(typing.Any)
    __c_unstr_seq = conv.get_unstructure_hook(int | None)
    def unstructure_Answered(instance, __c_unstr_seq=__c_unstr_seq, __c_unstr_output=__c_unstr_output, __c_def_output=__c_def_output):
      res = {
        'text': instance.text,
        'seq': __c_unstr_seq(instance.seq),
      }
      if instance.output != __c_def_output:
        res['output'] = __c_unstr_output(instance.output)
      return res
    return unstructure_Answered


def _v_durable_records_submissions_Answered(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_output = conv.get_structure_hook(typing.Any)
    __c_structure_seq = conv.get_structure_hook(int | None)
    __c_structure_text = str
    __c_type_output = typing.Any
    __c_type_seq = int | None
    def structure_Answered(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_seq=__c_structure_seq, __c_type_seq=__c_type_seq, __c_structure_output=__c_structure_output, __c_type_output=__c_type_output):
      res = {}
      if 'text' in o:
        res['text'] = __c_structure_text(o['text'])
      if 'seq' in o:
        res['seq'] = __c_structure_seq(o['seq'], __c_type_seq)
      if 'output' in o:
        res['output'] = __c_structure_output(o['output'], __c_type_output)
      return __cl(
        **res,
      )
    return structure_Answered


def _s_durable_records_submissions_Queued(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = set()
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    def structure_Queued(o, _=__cl, __cl=__cl):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
      )
    return structure_Queued


def _u_durable_records_submissions_Queued(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_Queued(instance):
      res = {
      }
      return res
    return unstructure_Queued


def _v_durable_records_submissions_Queued(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    def structure_Queued(o, _=__cl, __cl=__cl):
      return __cl(
      )
    return structure_Queued


def _s_durable_records_submissions_Submission(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'conversation_id', 'created_at', 'id', 'model_settings', 'output', 'parts', 'seq', 'status', 'task_id', 'text'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_conversation_id = str
    __c_structure_created_at = float
    __c_structure_id = str
    __c_structure_model_settings = conv.get_structure_hook(m['durable.records.model_settings'].ModelSettings | None)
    __c_structure_output = conv.get_structure_hook(dict[str, typing.Any] | None)
    __c_structure_parts = conv.get_structure_hook(tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...])
    __c_structure_seq = conv.get_structure_hook(int | None)
    __c_structure_status = conv.get_structure_hook(typing.Union[m['durable.records.submissions'].Queued, m['durable.records.submissions'].Answered, m['durable.records.submissions'].Unanswered])
    __c_structure_task_id = conv.get_structure_hook(int | None)
    __c_structure_text = str
    __c_type_model_settings = m['durable.records.model_settings'].ModelSettings | None
    __c_type_output = dict[str, typing.Any] | None
    __c_type_parts = tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...]
    __c_type_seq = int | None
    __c_type_status = typing.Union[m['durable.records.submissions'].Queued, m['durable.records.submissions'].Answered, m['durable.records.submissions'].Unanswered]
    __c_type_task_id = int | None
    def structure_Submission(o, _=__cl, __cl=__cl, __c_structure_id=__c_structure_id, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_text=__c_structure_text, __c_structure_seq=__c_structure_seq, __c_type_seq=__c_type_seq, __c_structure_status=__c_structure_status, __c_type_status=__c_type_status, __c_structure_task_id=__c_structure_task_id, __c_type_task_id=__c_type_task_id, __c_structure_created_at=__c_structure_created_at, __c_structure_output=__c_structure_output, __c_type_output=__c_type_output, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts, __c_structure_model_settings=__c_structure_model_settings, __c_type_model_settings=__c_type_model_settings):
      res = {}
      if 'seq' in o:
        res['seq'] = __c_structure_seq(o['seq'], __c_type_seq)
      if 'status' in o:
        res['status'] = __c_structure_status(o['status'], __c_type_status)
      if 'task_id' in o:
        res['task_id'] = __c_structure_task_id(o['task_id'], __c_type_task_id)
      if 'created_at' in o:
        res['created_at'] = __c_structure_created_at(o['created_at'])
      if 'output' in o:
        res['output'] = __c_structure_output(o['output'], __c_type_output)
      if 'parts' in o:
        res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)
      if 'model_settings' in o:
        res['model_settings'] = __c_structure_model_settings(o['model_settings'], __c_type_model_settings)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_id(o['id']),
        __c_structure_conversation_id(o['conversation_id']),
        __c_structure_text(o['text']),
        **res,
      )
    return structure_Submission


def _u_durable_records_submissions_Submission(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_model_settings = None
    __c_def_output = None
    __c_def_parts = ()
    __c_unstr_model_settings = conv.get_unstructure_hook(m['durable.records.model_settings'].ModelSettings | None)
    __c_unstr_output = conv.get_unstructure_hook(dict[str, typing.Any] | None)
    __c_unstr_parts = conv.get_unstructure_hook(tuple[typing.Union[m['durable.records.content'].TextPart, m['durable.records.content'].Attachment], ...])
    __c_unstr_seq = conv.get_unstructure_hook(int | None)
    __c_unstr_status = conv.get_unstructure_hook(typing.Union[m['durable.records.submissions'].Queued, m['durable.records.submissions'].Answered, m['durable.records.submissions'].Unanswered])
    __c_unstr_task_id = conv.get_unstructure_hook(int | None)
    def unstructure_Submission(instance, __c_unstr_seq=__c_unstr_seq, __c_unstr_status=__c_unstr_status, __c_unstr_task_id=__c_unstr_task_id, __c_unstr_output=__c_unstr_output, __c_def_output=__c_def_output, __c_unstr_parts=__c_unstr_parts, __c_def_parts=__c_def_parts, __c_unstr_model_settings=__c_unstr_model_settings, __c_def_model_settings=__c_def_model_settings):
      res = {
        'id': instance.id,
        'conversation_id': instance.conversation_id,
        'text': instance.text,
        'seq': __c_unstr_seq(instance.seq),
        'status': __c_unstr_status(instance.status),
        'task_id': __c_unstr_task_id(instance.task_id),
        'created_at': instance.created_at,
      }
      if instance.output != __c_def_output:
        res['output'] = __c_unstr_output(instance.output)
      if instance.parts != __c_def_parts:
        res['parts'] = __c_unstr_parts(instance.parts)
      if instance.model_settings != __c_def_model_settings:
        res['model_settings'] = __c_unstr_model_settings(instance.model_settings)
      return res
    return unstructure_Submission


def _s_durable_records_submissions_Unanswered(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'detail', 'reason'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_detail = str
    __c_structure_reason = conv.get_structure_hook(typing.Literal['model_error', 'interrupted', 'restart_limit', 'aborted', 'faulted', 'tool_round_limit', 'storage_error', 'prepare_failed', 'output_invalid', 'usage_limit', 'archived'])
    __c_type_reason = typing.Literal['model_error', 'interrupted', 'restart_limit', 'aborted', 'faulted', 'tool_round_limit', 'storage_error', 'prepare_failed', 'output_invalid', 'usage_limit', 'archived']
    def structure_Unanswered(o, _=__cl, __cl=__cl, __c_structure_reason=__c_structure_reason, __c_type_reason=__c_type_reason, __c_structure_detail=__c_structure_detail):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_reason(o['reason'], __c_type_reason),
        __c_structure_detail(o['detail']),
      )
    return structure_Unanswered


def _u_durable_records_submissions_Unanswered(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_Unanswered(instance):
      res = {
        'reason': instance.reason,
        'detail': instance.detail,
      }
      return res
    return unstructure_Unanswered


def _v_durable_records_submissions_Unanswered(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_detail = str
    __c_structure_reason = conv.get_structure_hook(typing.Literal['model_error', 'interrupted', 'restart_limit', 'aborted', 'faulted', 'tool_round_limit', 'storage_error', 'prepare_failed', 'output_invalid', 'usage_limit', 'archived'])
    __c_type_reason = typing.Literal['model_error', 'interrupted', 'restart_limit', 'aborted', 'faulted', 'tool_round_limit', 'storage_error', 'prepare_failed', 'output_invalid', 'usage_limit', 'archived']
    def structure_Unanswered(o, _=__cl, __cl=__cl, __c_structure_reason=__c_structure_reason, __c_type_reason=__c_type_reason, __c_structure_detail=__c_structure_detail):
      return __cl(
        __c_structure_reason(o['reason'], __c_type_reason),
        __c_structure_detail(o['detail']),
      )
    return structure_Unanswered


def _s_durable_records_tasks_Aborted(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = set()
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    def structure_Aborted(o, _=__cl, __cl=__cl):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
      )
    return structure_Aborted


def _u_durable_records_tasks_Aborted(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_Aborted(instance):
      res = {
      }
      return res
    return unstructure_Aborted


def _v_durable_records_tasks_Aborted(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    def structure_Aborted(o, _=__cl, __cl=__cl):
      return __cl(
      )
    return structure_Aborted


def _s_durable_records_tasks_DeferredJob(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'handle', 'key', 'model'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_handle = conv.get_structure_hook(str | None)
    __c_structure_key = str
    __c_structure_model = int
    __c_type_handle = str | None
    def structure_DeferredJob(o, _=__cl, __cl=__cl, __c_structure_key=__c_structure_key, __c_structure_handle=__c_structure_handle, __c_type_handle=__c_type_handle, __c_structure_model=__c_structure_model):
      res = {}
      if 'handle' in o:
        res['handle'] = __c_structure_handle(o['handle'], __c_type_handle)
      if 'model' in o:
        res['model'] = __c_structure_model(o['model'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_key(o['key']),
        **res,
      )
    return structure_DeferredJob


def _u_durable_records_tasks_DeferredJob(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_model = 0
    __c_unstr_handle = conv.get_unstructure_hook(str | None)
    def unstructure_DeferredJob(instance, __c_unstr_handle=__c_unstr_handle, __c_def_model=__c_def_model):
      res = {
        'key': instance.key,
        'handle': __c_unstr_handle(instance.handle),
      }
      if instance.model != __c_def_model:
        res['model'] = instance.model
      return res
    return unstructure_DeferredJob


def _s_durable_records_tasks_Done(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'result'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_result = conv.get_structure_hook(typing.Any)
    __c_type_result = typing.Any
    def structure_Done(o, _=__cl, __cl=__cl, __c_structure_result=__c_structure_result, __c_type_result=__c_type_result):
      res = {}
      if 'result' in o:
        res['result'] = __c_structure_result(o['result'], __c_type_result)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_Done


def _u_durable_records_tasks_Done(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_result = conv.get_unstructure_hook(typing.Any)
    def unstructure_Done(instance, __c_unstr_result=__c_unstr_result):
      res = {
        'result': __c_unstr_result(instance.result),
      }
      return res
    return unstructure_Done


def _v_durable_records_tasks_Done(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_result = conv.get_structure_hook(typing.Any)
    __c_type_result = typing.Any
    def structure_Done(o, _=__cl, __cl=__cl, __c_structure_result=__c_structure_result, __c_type_result=__c_type_result):
      res = {}
      if 'result' in o:
        res['result'] = __c_structure_result(o['result'], __c_type_result)
      return __cl(
        **res,
      )
    return structure_Done


def _s_durable_records_tasks_ErrorDetail(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'reason'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_reason = conv.get_structure_hook(typing.Literal['exception', 'model_error', 'interrupted', 'restart_limit', 'timeout', 'tool_round_limit', 'storage_error', 'prepare_failed', 'output_invalid', 'usage_limit', 'denied'])
    __c_type_reason = typing.Literal['exception', 'model_error', 'interrupted', 'restart_limit', 'timeout', 'tool_round_limit', 'storage_error', 'prepare_failed', 'output_invalid', 'usage_limit', 'denied']
    def structure_ErrorDetail(o, _=__cl, __cl=__cl, __c_structure_reason=__c_structure_reason, __c_type_reason=__c_type_reason):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_reason(o['reason'], __c_type_reason),
      )
    return structure_ErrorDetail


def _u_durable_records_tasks_ErrorDetail(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_ErrorDetail(instance):
      res = {
        'reason': instance.reason,
      }
      return res
    return unstructure_ErrorDetail


def _s_durable_records_tasks_ErrorInfo(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'detail', 'message'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_detail = conv.get_structure_hook(m['durable.records.tasks'].ErrorDetail)
    __c_structure_message = str
    __c_type_detail = m['durable.records.tasks'].ErrorDetail
    def structure_ErrorInfo(o, _=__cl, __cl=__cl, __c_structure_message=__c_structure_message, __c_structure_detail=__c_structure_detail, __c_type_detail=__c_type_detail):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_message(o['message']),
        __c_structure_detail(o['detail'], __c_type_detail),
      )
    return structure_ErrorInfo


def _u_durable_records_tasks_ErrorInfo(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_detail = conv.get_unstructure_hook(m['durable.records.tasks'].ErrorDetail)
    def unstructure_ErrorInfo(instance, __c_unstr_detail=__c_unstr_detail):
      res = {
        'message': instance.message,
        'detail': __c_unstr_detail(instance.detail),
      }
      return res
    return unstructure_ErrorInfo


def _s_durable_records_tasks_Failed(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'error'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_error = conv.get_structure_hook(m['durable.records.tasks'].ErrorInfo)
    __c_type_error = m['durable.records.tasks'].ErrorInfo
    def structure_Failed(o, _=__cl, __cl=__cl, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_error(o['error'], __c_type_error),
      )
    return structure_Failed


def _u_durable_records_tasks_Failed(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_error = conv.get_unstructure_hook(m['durable.records.tasks'].ErrorInfo)
    def unstructure_Failed(instance, __c_unstr_error=__c_unstr_error):
      res = {
        'error': __c_unstr_error(instance.error),
      }
      return res
    return unstructure_Failed


def _v_durable_records_tasks_Failed(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_error = conv.get_structure_hook(m['durable.records.tasks'].ErrorInfo)
    __c_type_error = m['durable.records.tasks'].ErrorInfo
    def structure_Failed(o, _=__cl, __cl=__cl, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error):
      return __cl(
        __c_structure_error(o['error'], __c_type_error),
      )
    return structure_Failed


def _s_durable_records_tasks_Faulted(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'error'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_error = conv.get_structure_hook(m['durable.records.tasks'].ErrorInfo)
    __c_type_error = m['durable.records.tasks'].ErrorInfo
    def structure_Faulted(o, _=__cl, __cl=__cl, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_error(o['error'], __c_type_error),
      )
    return structure_Faulted


def _u_durable_records_tasks_Faulted(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_error = conv.get_unstructure_hook(m['durable.records.tasks'].ErrorInfo)
    def unstructure_Faulted(instance, __c_unstr_error=__c_unstr_error):
      res = {
        'error': __c_unstr_error(instance.error),
      }
      return res
    return unstructure_Faulted


def _v_durable_records_tasks_Faulted(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_error = conv.get_structure_hook(m['durable.records.tasks'].ErrorInfo)
    __c_type_error = m['durable.records.tasks'].ErrorInfo
    def structure_Faulted(o, _=__cl, __cl=__cl, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error):
      return __cl(
        __c_structure_error(o['error'], __c_type_error),
      )
    return structure_Faulted


def _s_durable_records_tasks_Pending(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = set()
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    def structure_Pending(o, _=__cl, __cl=__cl):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
      )
    return structure_Pending


def _u_durable_records_tasks_Pending(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_Pending(instance):
      res = {
      }
      return res
    return unstructure_Pending


def _v_durable_records_tasks_Pending(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    def structure_Pending(o, _=__cl, __cl=__cl):
      return __cl(
      )
    return structure_Pending


def _s_durable_records_tasks_Running(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = set()
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    def structure_Running(o, _=__cl, __cl=__cl):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
      )
    return structure_Running


def _u_durable_records_tasks_Running(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_Running(instance):
      res = {
      }
      return res
    return unstructure_Running


def _v_durable_records_tasks_Running(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    def structure_Running(o, _=__cl, __cl=__cl):
      return __cl(
      )
    return structure_Running


def _s_durable_records_tasks_Sleeping(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'until'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_until = float
    def structure_Sleeping(o, _=__cl, __cl=__cl, __c_structure_until=__c_structure_until):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_until(o['until']),
      )
    return structure_Sleeping


def _u_durable_records_tasks_Sleeping(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_Sleeping(instance):
      res = {
        'until': instance.until,
      }
      return res
    return unstructure_Sleeping


def _v_durable_records_tasks_Sleeping(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_until = float
    def structure_Sleeping(o, _=__cl, __cl=__cl, __c_structure_until=__c_structure_until):
      return __cl(
        __c_structure_until(o['until']),
      )
    return structure_Sleeping


def _s_durable_records_tasks_Task(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'checkpoint', 'conversation_id', 'created_at', 'id', 'input', 'kind', 'parent_id', 'restarts', 'state', 'stop', 'updated_at'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_checkpoint = conv.get_structure_hook(m['durable.records.tasks'].Checkpoint | None)
    __c_structure_conversation_id = str
    __c_structure_created_at = float
    __c_structure_id = int
    __c_structure_input = conv.get_structure_hook(m['durable.records.tasks'].TaskInput)
    __c_structure_kind = str
    __c_structure_parent_id = conv.get_structure_hook(int | None)
    __c_structure_restarts = int
    __c_structure_state = conv.get_structure_hook(typing.Union[m['durable.records.tasks'].Pending, m['durable.records.tasks'].Running, m['durable.records.tasks'].Sleeping, m['durable.records.tasks'].Waiting, m['durable.records.tasks'].Terminal])
    __c_structure_stop = conv.get_structure_hook(typing.Union[typing.Literal['aborted', 'interrupted', 'archived'], None])
    __c_structure_updated_at = float
    __c_type_checkpoint = m['durable.records.tasks'].Checkpoint | None
    __c_type_input = m['durable.records.tasks'].TaskInput
    __c_type_parent_id = int | None
    __c_type_state = typing.Union[m['durable.records.tasks'].Pending, m['durable.records.tasks'].Running, m['durable.records.tasks'].Sleeping, m['durable.records.tasks'].Waiting, m['durable.records.tasks'].Terminal]
    __c_type_stop = typing.Union[typing.Literal['aborted', 'interrupted', 'archived'], None]
    def structure_Task(o, _=__cl, __cl=__cl, __c_structure_id=__c_structure_id, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_kind=__c_structure_kind, __c_structure_input=__c_structure_input, __c_type_input=__c_type_input, __c_structure_state=__c_structure_state, __c_type_state=__c_type_state, __c_structure_checkpoint=__c_structure_checkpoint, __c_type_checkpoint=__c_type_checkpoint, __c_structure_restarts=__c_structure_restarts, __c_structure_parent_id=__c_structure_parent_id, __c_type_parent_id=__c_type_parent_id, __c_structure_stop=__c_structure_stop, __c_type_stop=__c_type_stop, __c_structure_created_at=__c_structure_created_at, __c_structure_updated_at=__c_structure_updated_at):
      res = {}
      if 'state' in o:
        res['state'] = __c_structure_state(o['state'], __c_type_state)
      if 'checkpoint' in o:
        res['checkpoint'] = __c_structure_checkpoint(o['checkpoint'], __c_type_checkpoint)
      if 'restarts' in o:
        res['restarts'] = __c_structure_restarts(o['restarts'])
      if 'parent_id' in o:
        res['parent_id'] = __c_structure_parent_id(o['parent_id'], __c_type_parent_id)
      if 'stop' in o:
        res['stop'] = __c_structure_stop(o['stop'], __c_type_stop)
      if 'created_at' in o:
        res['created_at'] = __c_structure_created_at(o['created_at'])
      if 'updated_at' in o:
        res['updated_at'] = __c_structure_updated_at(o['updated_at'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_id(o['id']),
        __c_structure_conversation_id(o['conversation_id']),
        __c_structure_kind(o['kind']),
        __c_structure_input(o['input'], __c_type_input),
        **res,
      )
    return structure_Task


def _u_durable_records_tasks_Task(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_checkpoint = conv.get_unstructure_hook(m['durable.records.tasks'].Checkpoint | None)
    __c_unstr_input = conv.get_unstructure_hook(m['durable.records.tasks'].TaskInput)
    __c_unstr_parent_id = conv.get_unstructure_hook(int | None)
    __c_unstr_state = conv.get_unstructure_hook(typing.Union[m['durable.records.tasks'].Pending, m['durable.records.tasks'].Running, m['durable.records.tasks'].Sleeping, m['durable.records.tasks'].Waiting, m['durable.records.tasks'].Terminal])
    __c_unstr_stop = conv.get_unstructure_hook(typing.Union[typing.Literal['aborted', 'interrupted', 'archived'], None])
    def unstructure_Task(instance, __c_unstr_input=__c_unstr_input, __c_unstr_state=__c_unstr_state, __c_unstr_checkpoint=__c_unstr_checkpoint, __c_unstr_parent_id=__c_unstr_parent_id, __c_unstr_stop=__c_unstr_stop):
      res = {
        'id': instance.id,
        'conversation_id': instance.conversation_id,
        'kind': instance.kind,
        'input': __c_unstr_input(instance.input),
        'state': __c_unstr_state(instance.state),
        'checkpoint': __c_unstr_checkpoint(instance.checkpoint),
        'restarts': instance.restarts,
        'parent_id': __c_unstr_parent_id(instance.parent_id),
        'stop': __c_unstr_stop(instance.stop),
        'created_at': instance.created_at,
        'updated_at': instance.updated_at,
      }
      return res
    return unstructure_Task


def _s_durable_records_tasks_Terminal(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'outcome'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_outcome = conv.get_structure_hook(typing.Union[m['durable.records.tasks'].Done, m['durable.records.tasks'].Failed, m['durable.records.tasks'].Aborted, m['durable.records.tasks'].Faulted])
    __c_type_outcome = typing.Union[m['durable.records.tasks'].Done, m['durable.records.tasks'].Failed, m['durable.records.tasks'].Aborted, m['durable.records.tasks'].Faulted]
    def structure_Terminal(o, _=__cl, __cl=__cl, __c_structure_outcome=__c_structure_outcome, __c_type_outcome=__c_type_outcome):
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_outcome(o['outcome'], __c_type_outcome),
      )
    return structure_Terminal


def _u_durable_records_tasks_Terminal(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_outcome = conv.get_unstructure_hook(typing.Union[m['durable.records.tasks'].Done, m['durable.records.tasks'].Failed, m['durable.records.tasks'].Aborted, m['durable.records.tasks'].Faulted])
    def unstructure_Terminal(instance, __c_unstr_outcome=__c_unstr_outcome):
      res = {
        'outcome': __c_unstr_outcome(instance.outcome),
      }
      return res
    return unstructure_Terminal


def _v_durable_records_tasks_Terminal(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_outcome = conv.get_structure_hook(typing.Union[m['durable.records.tasks'].Done, m['durable.records.tasks'].Failed, m['durable.records.tasks'].Aborted, m['durable.records.tasks'].Faulted])
    __c_type_outcome = typing.Union[m['durable.records.tasks'].Done, m['durable.records.tasks'].Failed, m['durable.records.tasks'].Aborted, m['durable.records.tasks'].Faulted]
    def structure_Terminal(o, _=__cl, __cl=__cl, __c_structure_outcome=__c_structure_outcome, __c_type_outcome=__c_type_outcome):
      return __cl(
        __c_structure_outcome(o['outcome'], __c_type_outcome),
      )
    return structure_Terminal


def _s_durable_records_tasks_Waiting(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'client', 'on'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_client = bool
    __c_structure_on = conv.get_structure_hook(tuple[int, ...])
    __c_type_on = tuple[int, ...]
    def structure_Waiting(o, _=__cl, __cl=__cl, __c_structure_on=__c_structure_on, __c_type_on=__c_type_on, __c_structure_client=__c_structure_client):
      res = {}
      if 'on' in o:
        res['on'] = __c_structure_on(o['on'], __c_type_on)
      if 'client' in o:
        res['client'] = __c_structure_client(o['client'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_Waiting


def _u_durable_records_tasks_Waiting(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_on = conv.get_unstructure_hook(tuple[int, ...])
    def unstructure_Waiting(instance, __c_unstr_on=__c_unstr_on):
      res = {
        'on': __c_unstr_on(instance.on),
        'client': instance.client,
      }
      return res
    return unstructure_Waiting


def _v_durable_records_tasks_Waiting(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_client = bool
    __c_structure_on = conv.get_structure_hook(tuple[int, ...])
    __c_type_on = tuple[int, ...]
    def structure_Waiting(o, _=__cl, __cl=__cl, __c_structure_on=__c_structure_on, __c_type_on=__c_type_on, __c_structure_client=__c_structure_client):
      res = {}
      if 'on' in o:
        res['on'] = __c_structure_on(o['on'], __c_type_on)
      if 'client' in o:
        res['client'] = __c_structure_client(o['client'])
      return __cl(
        **res,
      )
    return structure_Waiting


def _s_durable_records_usage_ModelUsage(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'cache_read_tokens', 'cache_write_tokens', 'cost', 'input_tokens', 'model', 'output_tokens', 'reasoning_tokens', 'requests'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_cache_read_tokens = int
    __c_structure_cache_write_tokens = int
    __c_structure_cost = conv.get_structure_hook(float | None)
    __c_structure_input_tokens = int
    __c_structure_model = str
    __c_structure_output_tokens = int
    __c_structure_reasoning_tokens = int
    __c_structure_requests = int
    __c_type_cost = float | None
    def structure_ModelUsage(o, _=__cl, __cl=__cl, __c_structure_model=__c_structure_model, __c_structure_requests=__c_structure_requests, __c_structure_input_tokens=__c_structure_input_tokens, __c_structure_output_tokens=__c_structure_output_tokens, __c_structure_reasoning_tokens=__c_structure_reasoning_tokens, __c_structure_cache_read_tokens=__c_structure_cache_read_tokens, __c_structure_cache_write_tokens=__c_structure_cache_write_tokens, __c_structure_cost=__c_structure_cost, __c_type_cost=__c_type_cost):
      res = {}
      if 'requests' in o:
        res['requests'] = __c_structure_requests(o['requests'])
      if 'input_tokens' in o:
        res['input_tokens'] = __c_structure_input_tokens(o['input_tokens'])
      if 'output_tokens' in o:
        res['output_tokens'] = __c_structure_output_tokens(o['output_tokens'])
      if 'reasoning_tokens' in o:
        res['reasoning_tokens'] = __c_structure_reasoning_tokens(o['reasoning_tokens'])
      if 'cache_read_tokens' in o:
        res['cache_read_tokens'] = __c_structure_cache_read_tokens(o['cache_read_tokens'])
      if 'cache_write_tokens' in o:
        res['cache_write_tokens'] = __c_structure_cache_write_tokens(o['cache_write_tokens'])
      if 'cost' in o:
        res['cost'] = __c_structure_cost(o['cost'], __c_type_cost)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_model(o['model']),
        **res,
      )
    return structure_ModelUsage


def _u_durable_records_usage_ModelUsage(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_cache_read_tokens = 0
    __c_def_cache_write_tokens = 0
    __c_def_cost = None
    __c_def_reasoning_tokens = 0
    __c_unstr_cost = conv.get_unstructure_hook(float | None)
    def unstructure_ModelUsage(instance, __c_def_reasoning_tokens=__c_def_reasoning_tokens, __c_def_cache_read_tokens=__c_def_cache_read_tokens, __c_def_cache_write_tokens=__c_def_cache_write_tokens, __c_unstr_cost=__c_unstr_cost, __c_def_cost=__c_def_cost):
      res = {
        'model': instance.model,
        'requests': instance.requests,
        'input_tokens': instance.input_tokens,
        'output_tokens': instance.output_tokens,
      }
      if instance.reasoning_tokens != __c_def_reasoning_tokens:
        res['reasoning_tokens'] = instance.reasoning_tokens
      if instance.cache_read_tokens != __c_def_cache_read_tokens:
        res['cache_read_tokens'] = instance.cache_read_tokens
      if instance.cache_write_tokens != __c_def_cache_write_tokens:
        res['cache_write_tokens'] = instance.cache_write_tokens
      if instance.cost != __c_def_cost:
        res['cost'] = __c_unstr_cost(instance.cost)
      return res
    return unstructure_ModelUsage


def _s_durable_records_usage_UsageTotals(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'models', 'tool_calls', 'tool_seconds'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_models = conv.get_structure_hook(tuple[m['durable.records.usage'].ModelUsage, ...])
    __c_structure_tool_calls = int
    __c_structure_tool_seconds = float
    __c_type_models = tuple[m['durable.records.usage'].ModelUsage, ...]
    def structure_UsageTotals(o, _=__cl, __cl=__cl, __c_structure_models=__c_structure_models, __c_type_models=__c_type_models, __c_structure_tool_calls=__c_structure_tool_calls, __c_structure_tool_seconds=__c_structure_tool_seconds):
      res = {}
      if 'models' in o:
        res['models'] = __c_structure_models(o['models'], __c_type_models)
      if 'tool_calls' in o:
        res['tool_calls'] = __c_structure_tool_calls(o['tool_calls'])
      if 'tool_seconds' in o:
        res['tool_seconds'] = __c_structure_tool_seconds(o['tool_seconds'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_UsageTotals


def _u_durable_records_usage_UsageTotals(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_tool_calls = 0
    __c_def_tool_seconds = 0.0
    __c_unstr_models = conv.get_unstructure_hook(tuple[m['durable.records.usage'].ModelUsage, ...])
    def unstructure_UsageTotals(instance, __c_unstr_models=__c_unstr_models, __c_def_tool_calls=__c_def_tool_calls, __c_def_tool_seconds=__c_def_tool_seconds):
      res = {
        'models': __c_unstr_models(instance.models),
      }
      if instance.tool_calls != __c_def_tool_calls:
        res['tool_calls'] = instance.tool_calls
      if instance.tool_seconds != __c_def_tool_seconds:
        res['tool_seconds'] = instance.tool_seconds
      return res
    return unstructure_UsageTotals


def _u_durable_tasks_cancel_CancelInput(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_job = conv.get_unstructure_hook(m['durable.records.tasks'].DeferredJob)
    __c_unstr_provider = conv.get_unstructure_hook(str | None)
    def unstructure_CancelInput(instance, __c_unstr_job=__c_unstr_job, __c_unstr_provider=__c_unstr_provider):
      res = {
        'job': __c_unstr_job(instance.job),
        'run_task_id': instance.run_task_id,
        'provider': __c_unstr_provider(instance.provider),
      }
      return res
    return unstructure_CancelInput


def _v_durable_tasks_cancel_CancelInput(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_job = conv.get_structure_hook(m['durable.records.tasks'].DeferredJob)
    __c_structure_provider = conv.get_structure_hook(str | None)
    __c_structure_run_task_id = int
    __c_type_job = m['durable.records.tasks'].DeferredJob
    __c_type_provider = str | None
    def structure_CancelInput(o, _=__cl, __cl=__cl, __c_structure_job=__c_structure_job, __c_type_job=__c_type_job, __c_structure_run_task_id=__c_structure_run_task_id, __c_structure_provider=__c_structure_provider, __c_type_provider=__c_type_provider):
      res = {}
      if 'provider' in o:
        res['provider'] = __c_structure_provider(o['provider'], __c_type_provider)
      return __cl(
        __c_structure_job(o['job'], __c_type_job),
        __c_structure_run_task_id(o['run_task_id']),
        **res,
      )
    return structure_CancelInput


def _u_durable_tasks_compaction_CompactionInput(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_CompactionInput(instance):
      res = {
        'trigger': instance.trigger,
      }
      return res
    return unstructure_CompactionInput


def _v_durable_tasks_compaction_CompactionInput(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_trigger = conv.get_structure_hook(typing.Literal['manual', 'threshold', 'overflow'])
    __c_type_trigger = typing.Literal['manual', 'threshold', 'overflow']
    def structure_CompactionInput(o, _=__cl, __cl=__cl, __c_structure_trigger=__c_structure_trigger, __c_type_trigger=__c_type_trigger):
      return __cl(
        __c_structure_trigger(o['trigger'], __c_type_trigger),
      )
    return structure_CompactionInput


def _s_durable_tasks_generation_records_AttemptFailure(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'kind', 'message', 'provider', 'status_code'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_kind = str
    __c_structure_message = str
    __c_structure_provider = conv.get_structure_hook(str | None)
    __c_structure_status_code = conv.get_structure_hook(int | None)
    __c_type_provider = str | None
    __c_type_status_code = int | None
    def structure_AttemptFailure(o, _=__cl, __cl=__cl, __c_structure_message=__c_structure_message, __c_structure_kind=__c_structure_kind, __c_structure_provider=__c_structure_provider, __c_type_provider=__c_type_provider, __c_structure_status_code=__c_structure_status_code, __c_type_status_code=__c_type_status_code):
      res = {}
      if 'provider' in o:
        res['provider'] = __c_structure_provider(o['provider'], __c_type_provider)
      if 'status_code' in o:
        res['status_code'] = __c_structure_status_code(o['status_code'], __c_type_status_code)
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        __c_structure_message(o['message']),
        __c_structure_kind(o['kind']),
        **res,
      )
    return structure_AttemptFailure


def _u_durable_tasks_generation_records_AttemptFailure(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_provider = conv.get_unstructure_hook(str | None)
    __c_unstr_status_code = conv.get_unstructure_hook(int | None)
    def unstructure_AttemptFailure(instance, __c_unstr_provider=__c_unstr_provider, __c_unstr_status_code=__c_unstr_status_code):
      res = {
        'message': instance.message,
        'kind': instance.kind,
        'provider': __c_unstr_provider(instance.provider),
        'status_code': __c_unstr_status_code(instance.status_code),
      }
      return res
    return unstructure_AttemptFailure


def _u_durable_tasks_generation_records_GenerationInput(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_settings = None
    __c_unstr_settings = conv.get_unstructure_hook(m['durable.records.model_settings'].ModelSettings | None)
    __c_unstr_submission_ids = conv.get_unstructure_hook(tuple[str, ...])
    def unstructure_GenerationInput(instance, __c_unstr_submission_ids=__c_unstr_submission_ids, __c_unstr_settings=__c_unstr_settings, __c_def_settings=__c_def_settings):
      res = {
        'submission_ids': __c_unstr_submission_ids(instance.submission_ids),
      }
      if instance.settings != __c_def_settings:
        res['settings'] = __c_unstr_settings(instance.settings)
      return res
    return unstructure_GenerationInput


def _v_durable_tasks_generation_records_GenerationInput(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_settings = conv.get_structure_hook(m['durable.records.model_settings'].ModelSettings | None)
    __c_structure_submission_ids = conv.get_structure_hook(tuple[str, ...])
    __c_type_settings = m['durable.records.model_settings'].ModelSettings | None
    __c_type_submission_ids = tuple[str, ...]
    def structure_GenerationInput(o, _=__cl, __cl=__cl, __c_structure_submission_ids=__c_structure_submission_ids, __c_type_submission_ids=__c_type_submission_ids, __c_structure_settings=__c_structure_settings, __c_type_settings=__c_type_settings):
      res = {}
      if 'settings' in o:
        res['settings'] = __c_structure_settings(o['settings'], __c_type_settings)
      return __cl(
        __c_structure_submission_ids(o['submission_ids'], __c_type_submission_ids),
        **res,
      )
    return structure_GenerationInput


def _u_durable_tasks_generation_records_Poll(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_notes = attrs.fields_dict(cls)['notes'].default
    __c_unstr_job = conv.get_unstructure_hook(m['durable.records.tasks'].DeferredJob)
    __c_unstr_notes = conv.get_unstructure_hook(m['durable.tasks.generation.records'].RunNotes)
    def unstructure_Poll(instance, __c_unstr_job=__c_unstr_job, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):
      res = {
        'attempt': instance.attempt,
        'job': __c_unstr_job(instance.job),
        'poll_at': instance.poll_at,
        'rounds': instance.rounds,
      }
      if instance.notes != __c_def_notes:
        res['notes'] = __c_unstr_notes(instance.notes)
      return res
    return unstructure_Poll


def _v_durable_tasks_generation_records_Poll(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_attempt = int
    __c_structure_job = conv.get_structure_hook(m['durable.records.tasks'].DeferredJob)
    __c_structure_notes = conv.get_structure_hook(m['durable.tasks.generation.records'].RunNotes)
    __c_structure_poll_at = float
    __c_structure_rounds = int
    __c_type_job = m['durable.records.tasks'].DeferredJob
    __c_type_notes = m['durable.tasks.generation.records'].RunNotes
    def structure_Poll(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_job=__c_structure_job, __c_type_job=__c_type_job, __c_structure_poll_at=__c_structure_poll_at, __c_structure_rounds=__c_structure_rounds, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):
      res = {}
      if 'rounds' in o:
        res['rounds'] = __c_structure_rounds(o['rounds'])
      if 'notes' in o:
        res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)
      return __cl(
        __c_structure_attempt(o['attempt']),
        __c_structure_job(o['job'], __c_type_job),
        __c_structure_poll_at(o['poll_at']),
        **res,
      )
    return structure_Poll


def _u_durable_tasks_generation_records_Prepare(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_notes = attrs.fields_dict(cls)['notes'].default
    __c_unstr_notes = conv.get_unstructure_hook(m['durable.tasks.generation.records'].RunNotes)
    def unstructure_Prepare(instance, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):
      res = {
        'attempt': instance.attempt,
        'rounds': instance.rounds,
      }
      if instance.notes != __c_def_notes:
        res['notes'] = __c_unstr_notes(instance.notes)
      return res
    return unstructure_Prepare


def _v_durable_tasks_generation_records_Prepare(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_attempt = int
    __c_structure_notes = conv.get_structure_hook(m['durable.tasks.generation.records'].RunNotes)
    __c_structure_rounds = int
    __c_type_notes = m['durable.tasks.generation.records'].RunNotes
    def structure_Prepare(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_rounds=__c_structure_rounds, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):
      res = {}
      if 'attempt' in o:
        res['attempt'] = __c_structure_attempt(o['attempt'])
      if 'rounds' in o:
        res['rounds'] = __c_structure_rounds(o['rounds'])
      if 'notes' in o:
        res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)
      return __cl(
        **res,
      )
    return structure_Prepare


def _u_durable_tasks_generation_records_Request(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_notes = attrs.fields_dict(cls)['notes'].default
    __c_unstr_notes = conv.get_unstructure_hook(m['durable.tasks.generation.records'].RunNotes)
    __c_unstr_options = conv.get_unstructure_hook(dict[str, typing.Any])
    def unstructure_Request(instance, __c_unstr_options=__c_unstr_options, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):
      res = {
        'attempt': instance.attempt,
        'options': __c_unstr_options(instance.options),
        'rounds': instance.rounds,
      }
      if instance.notes != __c_def_notes:
        res['notes'] = __c_unstr_notes(instance.notes)
      return res
    return unstructure_Request


def _v_durable_tasks_generation_records_Request(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_attempt = int
    __c_structure_notes = conv.get_structure_hook(m['durable.tasks.generation.records'].RunNotes)
    __c_structure_options = conv.get_structure_hook(dict[str, typing.Any])
    __c_structure_rounds = int
    __c_type_notes = m['durable.tasks.generation.records'].RunNotes
    __c_type_options = dict[str, typing.Any]
    def structure_Request(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_options=__c_structure_options, __c_type_options=__c_type_options, __c_structure_rounds=__c_structure_rounds, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):
      res = {}
      if 'options' in o:
        res['options'] = __c_structure_options(o['options'], __c_type_options)
      if 'rounds' in o:
        res['rounds'] = __c_structure_rounds(o['rounds'])
      if 'notes' in o:
        res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)
      return __cl(
        __c_structure_attempt(o['attempt']),
        **res,
      )
    return structure_Request


def _u_durable_tasks_generation_records_Retry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_notes = attrs.fields_dict(cls)['notes'].default
    __c_unstr_error = conv.get_unstructure_hook(m['durable.tasks.generation.records'].AttemptFailure)
    __c_unstr_job = conv.get_unstructure_hook(m['durable.records.tasks'].DeferredJob | None)
    __c_unstr_notes = conv.get_unstructure_hook(m['durable.tasks.generation.records'].RunNotes)
    def unstructure_Retry(instance, __c_unstr_error=__c_unstr_error, __c_unstr_job=__c_unstr_job, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):
      res = {
        'attempt': instance.attempt,
        'until': instance.until,
        'error': __c_unstr_error(instance.error),
        'job': __c_unstr_job(instance.job),
        'rounds': instance.rounds,
      }
      if instance.notes != __c_def_notes:
        res['notes'] = __c_unstr_notes(instance.notes)
      return res
    return unstructure_Retry


def _v_durable_tasks_generation_records_Retry(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_attempt = int
    __c_structure_error = conv.get_structure_hook(m['durable.tasks.generation.records'].AttemptFailure)
    __c_structure_job = conv.get_structure_hook(m['durable.records.tasks'].DeferredJob | None)
    __c_structure_notes = conv.get_structure_hook(m['durable.tasks.generation.records'].RunNotes)
    __c_structure_rounds = int
    __c_structure_until = float
    __c_type_error = m['durable.tasks.generation.records'].AttemptFailure
    __c_type_job = m['durable.records.tasks'].DeferredJob | None
    __c_type_notes = m['durable.tasks.generation.records'].RunNotes
    def structure_Retry(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_until=__c_structure_until, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error, __c_structure_job=__c_structure_job, __c_type_job=__c_type_job, __c_structure_rounds=__c_structure_rounds, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):
      res = {}
      if 'job' in o:
        res['job'] = __c_structure_job(o['job'], __c_type_job)
      if 'rounds' in o:
        res['rounds'] = __c_structure_rounds(o['rounds'])
      if 'notes' in o:
        res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)
      return __cl(
        __c_structure_attempt(o['attempt']),
        __c_structure_until(o['until']),
        __c_structure_error(o['error'], __c_type_error),
        **res,
      )
    return structure_Retry


def _s_durable_tasks_generation_records_RunNotes(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_a = {'instructions', 'model', 'output_retries'}
    __c_feke = cattrs.errors.ForbiddenExtraKeysError
    __c_structure_instructions = conv.get_structure_hook(str | None)
    __c_structure_model = int
    __c_structure_output_retries = int
    __c_type_instructions = str | None
    def structure_RunNotes(o, _=__cl, __cl=__cl, __c_structure_instructions=__c_structure_instructions, __c_type_instructions=__c_type_instructions, __c_structure_output_retries=__c_structure_output_retries, __c_structure_model=__c_structure_model):
      res = {}
      if 'instructions' in o:
        res['instructions'] = __c_structure_instructions(o['instructions'], __c_type_instructions)
      if 'output_retries' in o:
        res['output_retries'] = __c_structure_output_retries(o['output_retries'])
      if 'model' in o:
        res['model'] = __c_structure_model(o['model'])
      unknown_fields = set(o.keys()) - __c_a
      if unknown_fields:
        raise __c_feke('', __cl, unknown_fields)
      return __cl(
        **res,
      )
    return structure_RunNotes


def _u_durable_tasks_generation_records_RunNotes(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_instructions = None
    __c_def_model = 0
    __c_def_output_retries = 0
    __c_unstr_instructions = conv.get_unstructure_hook(str | None)
    def unstructure_RunNotes(instance, __c_unstr_instructions=__c_unstr_instructions, __c_def_instructions=__c_def_instructions, __c_def_output_retries=__c_def_output_retries, __c_def_model=__c_def_model):
      res = {
      }
      if instance.instructions != __c_def_instructions:
        res['instructions'] = __c_unstr_instructions(instance.instructions)
      if instance.output_retries != __c_def_output_retries:
        res['output_retries'] = instance.output_retries
      if instance.model != __c_def_model:
        res['model'] = instance.model
      return res
    return unstructure_RunNotes


def _u_durable_tasks_generation_records_ToolRound(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_notes = attrs.fields_dict(cls)['notes'].default
    __c_unstr_calls = conv.get_unstructure_hook(tuple[m['durable.records.entries'].ToolCall, ...])
    __c_unstr_notes = conv.get_unstructure_hook(m['durable.tasks.generation.records'].RunNotes)
    __c_unstr_pending = conv.get_unstructure_hook(tuple[int, ...])
    def unstructure_ToolRound(instance, __c_unstr_calls=__c_unstr_calls, __c_unstr_pending=__c_unstr_pending, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):
      res = {
        'assistant_seq': instance.assistant_seq,
        'calls': __c_unstr_calls(instance.calls),
        'pending': __c_unstr_pending(instance.pending),
        'round': instance.round,
      }
      if instance.notes != __c_def_notes:
        res['notes'] = __c_unstr_notes(instance.notes)
      return res
    return unstructure_ToolRound


def _v_durable_tasks_generation_records_ToolRound(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_assistant_seq = int
    __c_structure_calls = conv.get_structure_hook(tuple[m['durable.records.entries'].ToolCall, ...])
    __c_structure_notes = conv.get_structure_hook(m['durable.tasks.generation.records'].RunNotes)
    __c_structure_pending = conv.get_structure_hook(tuple[int, ...])
    __c_structure_round = int
    __c_type_calls = tuple[m['durable.records.entries'].ToolCall, ...]
    __c_type_notes = m['durable.tasks.generation.records'].RunNotes
    __c_type_pending = tuple[int, ...]
    def structure_ToolRound(o, _=__cl, __cl=__cl, __c_structure_assistant_seq=__c_structure_assistant_seq, __c_structure_calls=__c_structure_calls, __c_type_calls=__c_type_calls, __c_structure_pending=__c_structure_pending, __c_type_pending=__c_type_pending, __c_structure_round=__c_structure_round, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):
      res = {}
      if 'round' in o:
        res['round'] = __c_structure_round(o['round'])
      if 'notes' in o:
        res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)
      return __cl(
        __c_structure_assistant_seq(o['assistant_seq']),
        __c_structure_calls(o['calls'], __c_type_calls),
        __c_structure_pending(o['pending'], __c_type_pending),
        **res,
      )
    return structure_ToolRound


def _u_durable_tasks_tool_records_Approval(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_parameters = None
    __c_unstr_deadline = conv.get_unstructure_hook(float | None)
    __c_unstr_parameters = conv.get_unstructure_hook(str | None)
    def unstructure_Approval(instance, __c_unstr_deadline=__c_unstr_deadline, __c_unstr_parameters=__c_unstr_parameters, __c_def_parameters=__c_def_parameters):
      res = {
        'since': instance.since,
        'deadline': __c_unstr_deadline(instance.deadline),
      }
      if instance.parameters != __c_def_parameters:
        res['parameters'] = __c_unstr_parameters(instance.parameters)
      return res
    return unstructure_Approval


def _v_durable_tasks_tool_records_Approval(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_deadline = conv.get_structure_hook(float | None)
    __c_structure_parameters = conv.get_structure_hook(str | None)
    __c_structure_since = float
    __c_type_deadline = float | None
    __c_type_parameters = str | None
    def structure_Approval(o, _=__cl, __cl=__cl, __c_structure_since=__c_structure_since, __c_structure_deadline=__c_structure_deadline, __c_type_deadline=__c_type_deadline, __c_structure_parameters=__c_structure_parameters, __c_type_parameters=__c_type_parameters):
      res = {}
      if 'deadline' in o:
        res['deadline'] = __c_structure_deadline(o['deadline'], __c_type_deadline)
      if 'parameters' in o:
        res['parameters'] = __c_structure_parameters(o['parameters'], __c_type_parameters)
      return __cl(
        __c_structure_since(o['since']),
        **res,
      )
    return structure_Approval


def _u_durable_tasks_tool_records_ToolInput(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_unstr_call = conv.get_unstructure_hook(m['durable.records.entries'].ToolCall)
    __c_unstr_deadline = conv.get_unstructure_hook(float | None)
    __c_unstr_timeout = conv.get_unstructure_hook(float | None)
    def unstructure_ToolInput(instance, __c_unstr_call=__c_unstr_call, __c_unstr_deadline=__c_unstr_deadline, __c_unstr_timeout=__c_unstr_timeout):
      res = {
        'call': __c_unstr_call(instance.call),
        'replay': instance.replay,
        'client': instance.client,
        'deadline': __c_unstr_deadline(instance.deadline),
        'timeout': __c_unstr_timeout(instance.timeout),
      }
      return res
    return unstructure_ToolInput


def _v_durable_tasks_tool_records_ToolInput(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_call = conv.get_structure_hook(m['durable.records.entries'].ToolCall)
    __c_structure_client = bool
    __c_structure_deadline = conv.get_structure_hook(float | None)
    __c_structure_replay = conv.get_structure_hook(typing.Literal['safe', 'unsafe'])
    __c_structure_timeout = conv.get_structure_hook(float | None)
    __c_type_call = m['durable.records.entries'].ToolCall
    __c_type_deadline = float | None
    __c_type_replay = typing.Literal['safe', 'unsafe']
    __c_type_timeout = float | None
    def structure_ToolInput(o, _=__cl, __cl=__cl, __c_structure_call=__c_structure_call, __c_type_call=__c_type_call, __c_structure_replay=__c_structure_replay, __c_type_replay=__c_type_replay, __c_structure_client=__c_structure_client, __c_structure_deadline=__c_structure_deadline, __c_type_deadline=__c_type_deadline, __c_structure_timeout=__c_structure_timeout, __c_type_timeout=__c_type_timeout):
      res = {}
      if 'replay' in o:
        res['replay'] = __c_structure_replay(o['replay'], __c_type_replay)
      if 'client' in o:
        res['client'] = __c_structure_client(o['client'])
      if 'deadline' in o:
        res['deadline'] = __c_structure_deadline(o['deadline'], __c_type_deadline)
      if 'timeout' in o:
        res['timeout'] = __c_structure_timeout(o['timeout'], __c_type_timeout)
      return __cl(
        __c_structure_call(o['call'], __c_type_call),
        **res,
      )
    return structure_ToolInput


def _u_durable_tasks_tool_records_ToolProgress(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __c_def_paused = 0.0
    __c_unstr_arguments = conv.get_unstructure_hook(str | None)
    __c_unstr_ended_at = conv.get_unstructure_hook(float | None)
    __c_unstr_result = conv.get_unstructure_hook(m['durable.records.entries'].ToolResultEntry | None)
    __c_unstr_started_at = conv.get_unstructure_hook(float | None)
    def unstructure_ToolProgress(instance, __c_unstr_result=__c_unstr_result, __c_unstr_started_at=__c_unstr_started_at, __c_unstr_ended_at=__c_unstr_ended_at, __c_unstr_arguments=__c_unstr_arguments, __c_def_paused=__c_def_paused):
      res = {
        'output': instance.output,
        'result': __c_unstr_result(instance.result),
        'started': instance.started,
        'started_at': __c_unstr_started_at(instance.started_at),
        'ended_at': __c_unstr_ended_at(instance.ended_at),
        'arguments': __c_unstr_arguments(instance.arguments),
      }
      if instance.paused != __c_def_paused:
        res['paused'] = instance.paused
      return res
    return unstructure_ToolProgress


def _v_durable_tasks_tool_records_ToolProgress(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_arguments = conv.get_structure_hook(str | None)
    __c_structure_ended_at = conv.get_structure_hook(float | None)
    __c_structure_output = str
    __c_structure_paused = float
    __c_structure_result = conv.get_structure_hook(m['durable.records.entries'].ToolResultEntry | None)
    __c_structure_started = bool
    __c_structure_started_at = conv.get_structure_hook(float | None)
    __c_type_arguments = str | None
    __c_type_ended_at = float | None
    __c_type_result = m['durable.records.entries'].ToolResultEntry | None
    __c_type_started_at = float | None
    def structure_ToolProgress(o, _=__cl, __cl=__cl, __c_structure_output=__c_structure_output, __c_structure_result=__c_structure_result, __c_type_result=__c_type_result, __c_structure_started=__c_structure_started, __c_structure_started_at=__c_structure_started_at, __c_type_started_at=__c_type_started_at, __c_structure_ended_at=__c_structure_ended_at, __c_type_ended_at=__c_type_ended_at, __c_structure_arguments=__c_structure_arguments, __c_type_arguments=__c_type_arguments, __c_structure_paused=__c_structure_paused):
      res = {}
      if 'output' in o:
        res['output'] = __c_structure_output(o['output'])
      if 'result' in o:
        res['result'] = __c_structure_result(o['result'], __c_type_result)
      if 'started' in o:
        res['started'] = __c_structure_started(o['started'])
      if 'started_at' in o:
        res['started_at'] = __c_structure_started_at(o['started_at'], __c_type_started_at)
      if 'ended_at' in o:
        res['ended_at'] = __c_structure_ended_at(o['ended_at'], __c_type_ended_at)
      if 'arguments' in o:
        res['arguments'] = __c_structure_arguments(o['arguments'], __c_type_arguments)
      if 'paused' in o:
        res['paused'] = __c_structure_paused(o['paused'])
      return __cl(
        **res,
      )
    return structure_ToolProgress


def _u_durable_tasks_tool_subagent_Delegated(conv: Any, cls: Any) -> Any:
    m = sys.modules
    def unstructure_Delegated(instance):
      res = {
        'conversation_id': instance.conversation_id,
        'submission_id': instance.submission_id,
        'since': instance.since,
      }
      return res
    return unstructure_Delegated


def _v_durable_tasks_tool_subagent_Delegated(conv: Any, cls: Any) -> Any:
    m = sys.modules
    __cl = cls
    __c_structure_conversation_id = str
    __c_structure_since = float
    __c_structure_submission_id = str
    def structure_Delegated(o, _=__cl, __cl=__cl, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_submission_id=__c_structure_submission_id, __c_structure_since=__c_structure_since):
      return __cl(
        __c_structure_conversation_id(o['conversation_id']),
        __c_structure_submission_id(o['submission_id']),
        __c_structure_since(o['since']),
      )
    return structure_Delegated


CATTRS = '26.2.1'

HOOKS: dict[tuple[str, str], tuple[Any, tuple[str, ...], str]] = {
    ('structure', 'durable.records.content.Attachment'): (_s_durable_records_content_Attachment, ('kind', 'sha256', 'media_type', 'size', 'name'),
        "def structure_Attachment(o, _=__cl, __cl=__cl, __c_structure_kind=__c_structure_kind, __c_type_kind=__c_type_kind, __c_structure_sha256=__c_structure_sha256, __c_structure_media_type=__c_structure_media_type, __c_structure_size=__c_structure_size, __c_structure_name=__c_structure_name, __c_type_name=__c_type_name):\n  res = {}\n  if 'name' in o:\n    res['name'] = __c_structure_name(o['name'], __c_type_name)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_kind(o['kind'], __c_type_kind),\n    __c_structure_sha256(o['sha256']),\n    __c_structure_media_type(o['media_type']),\n    __c_structure_size(o['size']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.content.Attachment'): (_u_durable_records_content_Attachment, ('kind', 'sha256', 'media_type', 'size', 'name'),
        "def unstructure_Attachment(instance, __c_unstr_name=__c_unstr_name):\n  res = {\n    'kind': instance.kind,\n    'sha256': instance.sha256,\n    'media_type': instance.media_type,\n    'size': instance.size,\n    'name': __c_unstr_name(instance.name),\n  }\n  return res"),
    ('variant', 'durable.records.content.Attachment'): (_v_durable_records_content_Attachment, ('kind', 'sha256', 'media_type', 'size', 'name'),
        "def structure_Attachment(o, _=__cl, __cl=__cl, __c_structure_kind=__c_structure_kind, __c_type_kind=__c_type_kind, __c_structure_sha256=__c_structure_sha256, __c_structure_media_type=__c_structure_media_type, __c_structure_size=__c_structure_size, __c_structure_name=__c_structure_name, __c_type_name=__c_type_name):\n  res = {}\n  if 'name' in o:\n    res['name'] = __c_structure_name(o['name'], __c_type_name)\n  return __cl(\n    __c_structure_kind(o['kind'], __c_type_kind),\n    __c_structure_sha256(o['sha256']),\n    __c_structure_media_type(o['media_type']),\n    __c_structure_size(o['size']),\n    **res,\n  )"),
    ('structure', 'durable.records.content.TextPart'): (_s_durable_records_content_TextPart, ('text',),
        "def structure_TextPart(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_text(o['text']),\n  )"),
    ('unstructure', 'durable.records.content.TextPart'): (_u_durable_records_content_TextPart, ('text',),
        "def unstructure_TextPart(instance):\n  res = {\n    'text': instance.text,\n  }\n  return res"),
    ('variant', 'durable.records.content.TextPart'): (_v_durable_records_content_TextPart, ('text',),
        "def structure_TextPart(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text):\n  return __cl(\n    __c_structure_text(o['text']),\n  )"),
    ('structure', 'durable.records.entries.AssistantEntry'): (_s_durable_records_entries_AssistantEntry, ('text', 'stop_reason', 'tool_calls', 'usage', 'error', 'attempt', 'interrupted', 'reasoning', 'model'),
        "def structure_AssistantEntry(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_stop_reason=__c_structure_stop_reason, __c_type_stop_reason=__c_type_stop_reason, __c_structure_tool_calls=__c_structure_tool_calls, __c_type_tool_calls=__c_type_tool_calls, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error, __c_structure_attempt=__c_structure_attempt, __c_structure_interrupted=__c_structure_interrupted, __c_structure_reasoning=__c_structure_reasoning, __c_type_reasoning=__c_type_reasoning, __c_structure_model=__c_structure_model, __c_type_model=__c_type_model):\n  res = {}\n  if 'tool_calls' in o:\n    res['tool_calls'] = __c_structure_tool_calls(o['tool_calls'], __c_type_tool_calls)\n  if 'usage' in o:\n    res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)\n  if 'error' in o:\n    res['error'] = __c_structure_error(o['error'], __c_type_error)\n  if 'attempt' in o:\n    res['attempt'] = __c_structure_attempt(o['attempt'])\n  if 'interrupted' in o:\n    res['interrupted'] = __c_structure_interrupted(o['interrupted'])\n  if 'reasoning' in o:\n    res['reasoning'] = __c_structure_reasoning(o['reasoning'], __c_type_reasoning)\n  if 'model' in o:\n    res['model'] = __c_structure_model(o['model'], __c_type_model)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_text(o['text']),\n    __c_structure_stop_reason(o['stop_reason'], __c_type_stop_reason),\n    **res,\n  )"),
    ('unstructure', 'durable.records.entries.AssistantEntry'): (_u_durable_records_entries_AssistantEntry, ('text', 'stop_reason', 'tool_calls', 'usage', 'error', 'attempt', 'interrupted', 'reasoning', 'model'),
        "def unstructure_AssistantEntry(instance, __c_unstr_tool_calls=__c_unstr_tool_calls, __c_unstr_usage=__c_unstr_usage, __c_unstr_error=__c_unstr_error, __c_unstr_reasoning=__c_unstr_reasoning, __c_def_reasoning=__c_def_reasoning, __c_unstr_model=__c_unstr_model, __c_def_model=__c_def_model):\n  res = {\n    'text': instance.text,\n    'stop_reason': instance.stop_reason,\n    'tool_calls': __c_unstr_tool_calls(instance.tool_calls),\n    'usage': __c_unstr_usage(instance.usage),\n    'error': __c_unstr_error(instance.error),\n    'attempt': instance.attempt,\n    'interrupted': instance.interrupted,\n  }\n  if instance.reasoning != __c_def_reasoning:\n    res['reasoning'] = __c_unstr_reasoning(instance.reasoning)\n  if instance.model != __c_def_model:\n    res['model'] = __c_unstr_model(instance.model)\n  return res"),
    ('variant', 'durable.records.entries.AssistantEntry'): (_v_durable_records_entries_AssistantEntry, ('text', 'stop_reason', 'tool_calls', 'usage', 'error', 'attempt', 'interrupted', 'reasoning', 'model'),
        "def structure_AssistantEntry(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_stop_reason=__c_structure_stop_reason, __c_type_stop_reason=__c_type_stop_reason, __c_structure_tool_calls=__c_structure_tool_calls, __c_type_tool_calls=__c_type_tool_calls, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error, __c_structure_attempt=__c_structure_attempt, __c_structure_interrupted=__c_structure_interrupted, __c_structure_reasoning=__c_structure_reasoning, __c_type_reasoning=__c_type_reasoning, __c_structure_model=__c_structure_model, __c_type_model=__c_type_model):\n  res = {}\n  if 'tool_calls' in o:\n    res['tool_calls'] = __c_structure_tool_calls(o['tool_calls'], __c_type_tool_calls)\n  if 'usage' in o:\n    res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)\n  if 'error' in o:\n    res['error'] = __c_structure_error(o['error'], __c_type_error)\n  if 'attempt' in o:\n    res['attempt'] = __c_structure_attempt(o['attempt'])\n  if 'interrupted' in o:\n    res['interrupted'] = __c_structure_interrupted(o['interrupted'])\n  if 'reasoning' in o:\n    res['reasoning'] = __c_structure_reasoning(o['reasoning'], __c_type_reasoning)\n  if 'model' in o:\n    res['model'] = __c_structure_model(o['model'], __c_type_model)\n  return __cl(\n    __c_structure_text(o['text']),\n    __c_structure_stop_reason(o['stop_reason'], __c_type_stop_reason),\n    **res,\n  )"),
    ('structure', 'durable.records.entries.CompactionEntry'): (_s_durable_records_entries_CompactionEntry, ('summary', 'first_kept_seq', 'usage'),
        "def structure_CompactionEntry(o, _=__cl, __cl=__cl, __c_structure_summary=__c_structure_summary, __c_structure_first_kept_seq=__c_structure_first_kept_seq, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage):\n  res = {}\n  if 'usage' in o:\n    res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_summary(o['summary']),\n    __c_structure_first_kept_seq(o['first_kept_seq']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.entries.CompactionEntry'): (_u_durable_records_entries_CompactionEntry, ('summary', 'first_kept_seq', 'usage'),
        "def unstructure_CompactionEntry(instance, __c_unstr_usage=__c_unstr_usage):\n  res = {\n    'summary': instance.summary,\n    'first_kept_seq': instance.first_kept_seq,\n    'usage': __c_unstr_usage(instance.usage),\n  }\n  return res"),
    ('variant', 'durable.records.entries.CompactionEntry'): (_v_durable_records_entries_CompactionEntry, ('summary', 'first_kept_seq', 'usage'),
        "def structure_CompactionEntry(o, _=__cl, __cl=__cl, __c_structure_summary=__c_structure_summary, __c_structure_first_kept_seq=__c_structure_first_kept_seq, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage):\n  res = {}\n  if 'usage' in o:\n    res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)\n  return __cl(\n    __c_structure_summary(o['summary']),\n    __c_structure_first_kept_seq(o['first_kept_seq']),\n    **res,\n  )"),
    ('structure', 'durable.records.entries.Diagnostic'): (_s_durable_records_entries_Diagnostic, ('severity', 'code', 'message'),
        "def structure_Diagnostic(o, _=__cl, __cl=__cl, __c_structure_severity=__c_structure_severity, __c_type_severity=__c_type_severity, __c_structure_code=__c_structure_code, __c_structure_message=__c_structure_message):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_severity(o['severity'], __c_type_severity),\n    __c_structure_code(o['code']),\n    __c_structure_message(o['message']),\n  )"),
    ('unstructure', 'durable.records.entries.Diagnostic'): (_u_durable_records_entries_Diagnostic, ('severity', 'code', 'message'),
        "def unstructure_Diagnostic(instance):\n  res = {\n    'severity': instance.severity,\n    'code': instance.code,\n    'message': instance.message,\n  }\n  return res"),
    ('structure', 'durable.records.entries.Reasoning'): (_s_durable_records_entries_Reasoning, ('text', 'format', 'signature', 'redacted', 'id', 'encrypted', 'summary', 'partial'),
        "def structure_Reasoning(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_format=__c_structure_format, __c_structure_signature=__c_structure_signature, __c_type_signature=__c_type_signature, __c_structure_redacted=__c_structure_redacted, __c_type_redacted=__c_type_redacted, __c_structure_id=__c_structure_id, __c_type_id=__c_type_id, __c_structure_encrypted=__c_structure_encrypted, __c_type_encrypted=__c_type_encrypted, __c_structure_summary=__c_structure_summary, __c_type_summary=__c_type_summary, __c_structure_partial=__c_structure_partial):\n  res = {}\n  if 'text' in o:\n    res['text'] = __c_structure_text(o['text'])\n  if 'format' in o:\n    res['format'] = __c_structure_format(o['format'])\n  if 'signature' in o:\n    res['signature'] = __c_structure_signature(o['signature'], __c_type_signature)\n  if 'redacted' in o:\n    res['redacted'] = __c_structure_redacted(o['redacted'], __c_type_redacted)\n  if 'id' in o:\n    res['id'] = __c_structure_id(o['id'], __c_type_id)\n  if 'encrypted' in o:\n    res['encrypted'] = __c_structure_encrypted(o['encrypted'], __c_type_encrypted)\n  if 'summary' in o:\n    res['summary'] = __c_structure_summary(o['summary'], __c_type_summary)\n  if 'partial' in o:\n    res['partial'] = __c_structure_partial(o['partial'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.entries.Reasoning'): (_u_durable_records_entries_Reasoning, ('text', 'format', 'signature', 'redacted', 'id', 'encrypted', 'summary', 'partial'),
        "def unstructure_Reasoning(instance, __c_unstr_signature=__c_unstr_signature, __c_def_signature=__c_def_signature, __c_unstr_redacted=__c_unstr_redacted, __c_def_redacted=__c_def_redacted, __c_unstr_id=__c_unstr_id, __c_def_id=__c_def_id, __c_unstr_encrypted=__c_unstr_encrypted, __c_def_encrypted=__c_def_encrypted, __c_unstr_summary=__c_unstr_summary, __c_def_summary=__c_def_summary, __c_def_partial=__c_def_partial):\n  res = {\n    'text': instance.text,\n    'format': instance.format,\n  }\n  if instance.signature != __c_def_signature:\n    res['signature'] = __c_unstr_signature(instance.signature)\n  if instance.redacted != __c_def_redacted:\n    res['redacted'] = __c_unstr_redacted(instance.redacted)\n  if instance.id != __c_def_id:\n    res['id'] = __c_unstr_id(instance.id)\n  if instance.encrypted != __c_def_encrypted:\n    res['encrypted'] = __c_unstr_encrypted(instance.encrypted)\n  if instance.summary != __c_def_summary:\n    res['summary'] = __c_unstr_summary(instance.summary)\n  if instance.partial != __c_def_partial:\n    res['partial'] = instance.partial\n  return res"),
    ('structure', 'durable.records.entries.StoredEntry'): (_s_durable_records_entries_StoredEntry, ('conversation_id', 'seq', 'entry'),
        "def structure_StoredEntry(o, _=__cl, __cl=__cl, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_seq=__c_structure_seq, __c_structure_entry=__c_structure_entry, __c_type_entry=__c_type_entry):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_conversation_id(o['conversation_id']),\n    __c_structure_seq(o['seq']),\n    __c_structure_entry(o['entry'], __c_type_entry),\n  )"),
    ('unstructure', 'durable.records.entries.StoredEntry'): (_u_durable_records_entries_StoredEntry, ('conversation_id', 'seq', 'entry'),
        "def unstructure_StoredEntry(instance, __c_unstr_entry=__c_unstr_entry):\n  res = {\n    'conversation_id': instance.conversation_id,\n    'seq': instance.seq,\n    'entry': __c_unstr_entry(instance.entry),\n  }\n  return res"),
    ('structure', 'durable.records.entries.ToolCall'): (_s_durable_records_entries_ToolCall, ('id', 'name', 'arguments'),
        "def structure_ToolCall(o, _=__cl, __cl=__cl, __c_structure_id=__c_structure_id, __c_structure_name=__c_structure_name, __c_structure_arguments=__c_structure_arguments):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_id(o['id']),\n    __c_structure_name(o['name']),\n    __c_structure_arguments(o['arguments']),\n  )"),
    ('unstructure', 'durable.records.entries.ToolCall'): (_u_durable_records_entries_ToolCall, ('id', 'name', 'arguments'),
        "def unstructure_ToolCall(instance):\n  res = {\n    'id': instance.id,\n    'name': instance.name,\n    'arguments': instance.arguments,\n  }\n  return res"),
    ('structure', 'durable.records.entries.ToolResultEntry'): (_s_durable_records_entries_ToolResultEntry, ('call_id', 'tool_name', 'content', 'is_error', 'diagnostics', 'parts'),
        "def structure_ToolResultEntry(o, _=__cl, __cl=__cl, __c_structure_call_id=__c_structure_call_id, __c_structure_tool_name=__c_structure_tool_name, __c_structure_content=__c_structure_content, __c_structure_is_error=__c_structure_is_error, __c_structure_diagnostics=__c_structure_diagnostics, __c_type_diagnostics=__c_type_diagnostics, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts):\n  res = {}\n  if 'is_error' in o:\n    res['is_error'] = __c_structure_is_error(o['is_error'])\n  if 'diagnostics' in o:\n    res['diagnostics'] = __c_structure_diagnostics(o['diagnostics'], __c_type_diagnostics)\n  if 'parts' in o:\n    res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_call_id(o['call_id']),\n    __c_structure_tool_name(o['tool_name']),\n    __c_structure_content(o['content']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.entries.ToolResultEntry'): (_u_durable_records_entries_ToolResultEntry, ('call_id', 'tool_name', 'content', 'is_error', 'diagnostics', 'parts'),
        "def unstructure_ToolResultEntry(instance, __c_unstr_diagnostics=__c_unstr_diagnostics, __c_unstr_parts=__c_unstr_parts, __c_def_parts=__c_def_parts):\n  res = {\n    'call_id': instance.call_id,\n    'tool_name': instance.tool_name,\n    'content': instance.content,\n    'is_error': instance.is_error,\n    'diagnostics': __c_unstr_diagnostics(instance.diagnostics),\n  }\n  if instance.parts != __c_def_parts:\n    res['parts'] = __c_unstr_parts(instance.parts)\n  return res"),
    ('variant', 'durable.records.entries.ToolResultEntry'): (_v_durable_records_entries_ToolResultEntry, ('call_id', 'tool_name', 'content', 'is_error', 'diagnostics', 'parts'),
        "def structure_ToolResultEntry(o, _=__cl, __cl=__cl, __c_structure_call_id=__c_structure_call_id, __c_structure_tool_name=__c_structure_tool_name, __c_structure_content=__c_structure_content, __c_structure_is_error=__c_structure_is_error, __c_structure_diagnostics=__c_structure_diagnostics, __c_type_diagnostics=__c_type_diagnostics, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts):\n  res = {}\n  if 'is_error' in o:\n    res['is_error'] = __c_structure_is_error(o['is_error'])\n  if 'diagnostics' in o:\n    res['diagnostics'] = __c_structure_diagnostics(o['diagnostics'], __c_type_diagnostics)\n  if 'parts' in o:\n    res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)\n  return __cl(\n    __c_structure_call_id(o['call_id']),\n    __c_structure_tool_name(o['tool_name']),\n    __c_structure_content(o['content']),\n    **res,\n  )"),
    ('structure', 'durable.records.entries.Usage'): (_s_durable_records_entries_Usage, ('input_tokens', 'output_tokens', 'reasoning_tokens', 'cache_read_tokens', 'cache_write_tokens'),
        "def structure_Usage(o, _=__cl, __cl=__cl, __c_structure_input_tokens=__c_structure_input_tokens, __c_structure_output_tokens=__c_structure_output_tokens, __c_structure_reasoning_tokens=__c_structure_reasoning_tokens, __c_structure_cache_read_tokens=__c_structure_cache_read_tokens, __c_structure_cache_write_tokens=__c_structure_cache_write_tokens):\n  res = {}\n  if 'input_tokens' in o:\n    res['input_tokens'] = __c_structure_input_tokens(o['input_tokens'])\n  if 'output_tokens' in o:\n    res['output_tokens'] = __c_structure_output_tokens(o['output_tokens'])\n  if 'reasoning_tokens' in o:\n    res['reasoning_tokens'] = __c_structure_reasoning_tokens(o['reasoning_tokens'])\n  if 'cache_read_tokens' in o:\n    res['cache_read_tokens'] = __c_structure_cache_read_tokens(o['cache_read_tokens'])\n  if 'cache_write_tokens' in o:\n    res['cache_write_tokens'] = __c_structure_cache_write_tokens(o['cache_write_tokens'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.entries.Usage'): (_u_durable_records_entries_Usage, ('input_tokens', 'output_tokens', 'reasoning_tokens', 'cache_read_tokens', 'cache_write_tokens'),
        "def unstructure_Usage(instance, __c_def_reasoning_tokens=__c_def_reasoning_tokens, __c_def_cache_read_tokens=__c_def_cache_read_tokens, __c_def_cache_write_tokens=__c_def_cache_write_tokens):\n  res = {\n    'input_tokens': instance.input_tokens,\n    'output_tokens': instance.output_tokens,\n  }\n  if instance.reasoning_tokens != __c_def_reasoning_tokens:\n    res['reasoning_tokens'] = instance.reasoning_tokens\n  if instance.cache_read_tokens != __c_def_cache_read_tokens:\n    res['cache_read_tokens'] = instance.cache_read_tokens\n  if instance.cache_write_tokens != __c_def_cache_write_tokens:\n    res['cache_write_tokens'] = instance.cache_write_tokens\n  return res"),
    ('structure', 'durable.records.entries.UserEntry'): (_s_durable_records_entries_UserEntry, ('text', 'submission_id', 'parts'),
        "def structure_UserEntry(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_submission_id=__c_structure_submission_id, __c_type_submission_id=__c_type_submission_id, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts):\n  res = {}\n  if 'submission_id' in o:\n    res['submission_id'] = __c_structure_submission_id(o['submission_id'], __c_type_submission_id)\n  if 'parts' in o:\n    res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_text(o['text']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.entries.UserEntry'): (_u_durable_records_entries_UserEntry, ('text', 'submission_id', 'parts'),
        "def unstructure_UserEntry(instance, __c_unstr_submission_id=__c_unstr_submission_id, __c_unstr_parts=__c_unstr_parts, __c_def_parts=__c_def_parts):\n  res = {\n    'text': instance.text,\n    'submission_id': __c_unstr_submission_id(instance.submission_id),\n  }\n  if instance.parts != __c_def_parts:\n    res['parts'] = __c_unstr_parts(instance.parts)\n  return res"),
    ('variant', 'durable.records.entries.UserEntry'): (_v_durable_records_entries_UserEntry, ('text', 'submission_id', 'parts'),
        "def structure_UserEntry(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_submission_id=__c_structure_submission_id, __c_type_submission_id=__c_type_submission_id, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts):\n  res = {}\n  if 'submission_id' in o:\n    res['submission_id'] = __c_structure_submission_id(o['submission_id'], __c_type_submission_id)\n  if 'parts' in o:\n    res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)\n  return __cl(\n    __c_structure_text(o['text']),\n    **res,\n  )"),
    ('structure', 'durable.records.live.ApprovalSlot'): (_s_durable_records_live_ApprovalSlot, ('call_id', 'tool', 'arguments', 'task_id', 'since', 'deadline', 'parameters'),
        "def structure_ApprovalSlot(o, _=__cl, __cl=__cl, __c_structure_call_id=__c_structure_call_id, __c_structure_tool=__c_structure_tool, __c_structure_arguments=__c_structure_arguments, __c_structure_task_id=__c_structure_task_id, __c_structure_since=__c_structure_since, __c_structure_deadline=__c_structure_deadline, __c_type_deadline=__c_type_deadline, __c_structure_parameters=__c_structure_parameters, __c_type_parameters=__c_type_parameters):\n  res = {}\n  if 'deadline' in o:\n    res['deadline'] = __c_structure_deadline(o['deadline'], __c_type_deadline)\n  if 'parameters' in o:\n    res['parameters'] = __c_structure_parameters(o['parameters'], __c_type_parameters)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_call_id(o['call_id']),\n    __c_structure_tool(o['tool']),\n    __c_structure_arguments(o['arguments']),\n    __c_structure_task_id(o['task_id']),\n    __c_structure_since(o['since']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.ApprovalSlot'): (_u_durable_records_live_ApprovalSlot, ('call_id', 'tool', 'arguments', 'task_id', 'since', 'deadline', 'parameters'),
        "def unstructure_ApprovalSlot(instance, __c_unstr_deadline=__c_unstr_deadline, __c_unstr_parameters=__c_unstr_parameters, __c_def_parameters=__c_def_parameters):\n  res = {\n    'call_id': instance.call_id,\n    'tool': instance.tool,\n    'arguments': instance.arguments,\n    'task_id': instance.task_id,\n    'since': instance.since,\n    'deadline': __c_unstr_deadline(instance.deadline),\n  }\n  if instance.parameters != __c_def_parameters:\n    res['parameters'] = __c_unstr_parameters(instance.parameters)\n  return res"),
    ('structure', 'durable.records.live.CompactionFailure'): (_s_durable_records_live_CompactionFailure, ('task_id', 'trigger', 'error'),
        "def structure_CompactionFailure(o, _=__cl, __cl=__cl, __c_structure_task_id=__c_structure_task_id, __c_structure_trigger=__c_structure_trigger, __c_structure_error=__c_structure_error):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_task_id(o['task_id']),\n    __c_structure_trigger(o['trigger']),\n    __c_structure_error(o['error']),\n  )"),
    ('unstructure', 'durable.records.live.CompactionFailure'): (_u_durable_records_live_CompactionFailure, ('task_id', 'trigger', 'error'),
        "def unstructure_CompactionFailure(instance):\n  res = {\n    'task_id': instance.task_id,\n    'trigger': instance.trigger,\n    'error': instance.error,\n  }\n  return res"),
    ('structure', 'durable.records.live.ConversationInfo'): (_s_durable_records_live_ConversationInfo, ('id', 'entries', 'archived', 'busy', 'forked_from', 'forked_at', 'parent', 'compactions', 'usage'),
        "def structure_ConversationInfo(o, _=__cl, __cl=__cl, __c_structure_id=__c_structure_id, __c_structure_entries=__c_structure_entries, __c_structure_archived=__c_structure_archived, __c_structure_busy=__c_structure_busy, __c_structure_forked_from=__c_structure_forked_from, __c_type_forked_from=__c_type_forked_from, __c_structure_forked_at=__c_structure_forked_at, __c_structure_parent=__c_structure_parent, __c_type_parent=__c_type_parent, __c_structure_compactions=__c_structure_compactions, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage):\n  res = {}\n  if 'entries' in o:\n    res['entries'] = __c_structure_entries(o['entries'])\n  if 'archived' in o:\n    res['archived'] = __c_structure_archived(o['archived'])\n  if 'busy' in o:\n    res['busy'] = __c_structure_busy(o['busy'])\n  if 'forked_from' in o:\n    res['forked_from'] = __c_structure_forked_from(o['forked_from'], __c_type_forked_from)\n  if 'forked_at' in o:\n    res['forked_at'] = __c_structure_forked_at(o['forked_at'])\n  if 'parent' in o:\n    res['parent'] = __c_structure_parent(o['parent'], __c_type_parent)\n  if 'compactions' in o:\n    res['compactions'] = __c_structure_compactions(o['compactions'])\n  if 'usage' in o:\n    res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_id(o['id']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.ConversationInfo'): (_u_durable_records_live_ConversationInfo, ('id', 'entries', 'archived', 'busy', 'forked_from', 'forked_at', 'parent', 'compactions', 'usage'),
        "def unstructure_ConversationInfo(instance, __c_unstr_forked_from=__c_unstr_forked_from, __c_unstr_parent=__c_unstr_parent, __c_unstr_usage=__c_unstr_usage):\n  res = {\n    'id': instance.id,\n    'entries': instance.entries,\n    'archived': instance.archived,\n    'busy': instance.busy,\n    'forked_from': __c_unstr_forked_from(instance.forked_from),\n    'forked_at': instance.forked_at,\n    'parent': __c_unstr_parent(instance.parent),\n    'compactions': instance.compactions,\n    'usage': __c_unstr_usage(instance.usage),\n  }\n  return res"),
    ('structure', 'durable.records.live.DeferredLive'): (_s_durable_records_live_DeferredLive, ('poll_at',),
        "def structure_DeferredLive(o, _=__cl, __cl=__cl, __c_structure_poll_at=__c_structure_poll_at):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_poll_at(o['poll_at']),\n  )"),
    ('unstructure', 'durable.records.live.DeferredLive'): (_u_durable_records_live_DeferredLive, ('poll_at',),
        "def unstructure_DeferredLive(instance):\n  res = {\n    'poll_at': instance.poll_at,\n  }\n  return res"),
    ('structure', 'durable.records.live.GenerationLive'): (_s_durable_records_live_GenerationLive, ('attempt', 'message', 'retry', 'deferred'),
        "def structure_GenerationLive(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_message=__c_structure_message, __c_type_message=__c_type_message, __c_structure_retry=__c_structure_retry, __c_type_retry=__c_type_retry, __c_structure_deferred=__c_structure_deferred, __c_type_deferred=__c_type_deferred):\n  res = {}\n  if 'message' in o:\n    res['message'] = __c_structure_message(o['message'], __c_type_message)\n  if 'retry' in o:\n    res['retry'] = __c_structure_retry(o['retry'], __c_type_retry)\n  if 'deferred' in o:\n    res['deferred'] = __c_structure_deferred(o['deferred'], __c_type_deferred)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_attempt(o['attempt']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.GenerationLive'): (_u_durable_records_live_GenerationLive, ('attempt', 'message', 'retry', 'deferred'),
        "def unstructure_GenerationLive(instance, __c_unstr_message=__c_unstr_message, __c_unstr_retry=__c_unstr_retry, __c_unstr_deferred=__c_unstr_deferred):\n  res = {\n    'attempt': instance.attempt,\n    'message': __c_unstr_message(instance.message),\n    'retry': __c_unstr_retry(instance.retry),\n    'deferred': __c_unstr_deferred(instance.deferred),\n  }\n  return res"),
    ('structure', 'durable.records.live.Live'): (_s_durable_records_live_Live, ('run', 'generation', 'tools', 'approvals', 'run_failure', 'compaction_failure', 'compactions', 'usage', 'archived', 'forked_from', 'forked_at', 'parent'),
        "def structure_Live(o, _=__cl, __cl=__cl, __c_structure_run=__c_structure_run, __c_type_run=__c_type_run, __c_structure_generation=__c_structure_generation, __c_type_generation=__c_type_generation, __c_structure_tools=__c_structure_tools, __c_type_tools=__c_type_tools, __c_structure_approvals=__c_structure_approvals, __c_type_approvals=__c_type_approvals, __c_structure_run_failure=__c_structure_run_failure, __c_type_run_failure=__c_type_run_failure, __c_structure_compaction_failure=__c_structure_compaction_failure, __c_type_compaction_failure=__c_type_compaction_failure, __c_structure_compactions=__c_structure_compactions, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage, __c_structure_archived=__c_structure_archived, __c_structure_forked_from=__c_structure_forked_from, __c_type_forked_from=__c_type_forked_from, __c_structure_forked_at=__c_structure_forked_at, __c_structure_parent=__c_structure_parent, __c_type_parent=__c_type_parent):\n  res = {}\n  if 'run' in o:\n    res['run'] = __c_structure_run(o['run'], __c_type_run)\n  if 'generation' in o:\n    res['generation'] = __c_structure_generation(o['generation'], __c_type_generation)\n  if 'tools' in o:\n    res['tools'] = __c_structure_tools(o['tools'], __c_type_tools)\n  if 'approvals' in o:\n    res['approvals'] = __c_structure_approvals(o['approvals'], __c_type_approvals)\n  if 'run_failure' in o:\n    res['run_failure'] = __c_structure_run_failure(o['run_failure'], __c_type_run_failure)\n  if 'compaction_failure' in o:\n    res['compaction_failure'] = __c_structure_compaction_failure(o['compaction_failure'], __c_type_compaction_failure)\n  if 'compactions' in o:\n    res['compactions'] = __c_structure_compactions(o['compactions'])\n  if 'usage' in o:\n    res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)\n  if 'archived' in o:\n    res['archived'] = __c_structure_archived(o['archived'])\n  if 'forked_from' in o:\n    res['forked_from'] = __c_structure_forked_from(o['forked_from'], __c_type_forked_from)\n  if 'forked_at' in o:\n    res['forked_at'] = __c_structure_forked_at(o['forked_at'])\n  if 'parent' in o:\n    res['parent'] = __c_structure_parent(o['parent'], __c_type_parent)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.Live'): (_u_durable_records_live_Live, ('run', 'generation', 'tools', 'approvals', 'run_failure', 'compaction_failure', 'compactions', 'usage', 'archived', 'forked_from', 'forked_at', 'parent'),
        "def unstructure_Live(instance, __c_unstr_run=__c_unstr_run, __c_unstr_generation=__c_unstr_generation, __c_unstr_tools=__c_unstr_tools, __c_unstr_approvals=__c_unstr_approvals, __c_unstr_run_failure=__c_unstr_run_failure, __c_unstr_compaction_failure=__c_unstr_compaction_failure, __c_unstr_usage=__c_unstr_usage, __c_def_usage=__c_def_usage, __c_def_archived=__c_def_archived, __c_unstr_forked_from=__c_unstr_forked_from, __c_def_forked_from=__c_def_forked_from, __c_def_forked_at=__c_def_forked_at, __c_unstr_parent=__c_unstr_parent, __c_def_parent=__c_def_parent):\n  res = {\n    'run': __c_unstr_run(instance.run),\n    'generation': __c_unstr_generation(instance.generation),\n    'tools': __c_unstr_tools(instance.tools),\n    'approvals': __c_unstr_approvals(instance.approvals),\n    'run_failure': __c_unstr_run_failure(instance.run_failure),\n    'compaction_failure': __c_unstr_compaction_failure(instance.compaction_failure),\n    'compactions': instance.compactions,\n  }\n  if instance.usage != __c_def_usage:\n    res['usage'] = __c_unstr_usage(instance.usage)\n  if instance.archived != __c_def_archived:\n    res['archived'] = instance.archived\n  if instance.forked_from != __c_def_forked_from:\n    res['forked_from'] = __c_unstr_forked_from(instance.forked_from)\n  if instance.forked_at != __c_def_forked_at:\n    res['forked_at'] = instance.forked_at\n  if instance.parent != __c_def_parent:\n    res['parent'] = __c_unstr_parent(instance.parent)\n  return res"),
    ('structure', 'durable.records.live.ParentCall'): (_s_durable_records_live_ParentCall, ('conversation_id', 'task_id', 'call_id', 'agent', 'depth'),
        "def structure_ParentCall(o, _=__cl, __cl=__cl, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_task_id=__c_structure_task_id, __c_structure_call_id=__c_structure_call_id, __c_structure_agent=__c_structure_agent, __c_structure_depth=__c_structure_depth):\n  res = {}\n  if 'depth' in o:\n    res['depth'] = __c_structure_depth(o['depth'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_conversation_id(o['conversation_id']),\n    __c_structure_task_id(o['task_id']),\n    __c_structure_call_id(o['call_id']),\n    __c_structure_agent(o['agent']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.ParentCall'): (_u_durable_records_live_ParentCall, ('conversation_id', 'task_id', 'call_id', 'agent', 'depth'),
        "def unstructure_ParentCall(instance):\n  res = {\n    'conversation_id': instance.conversation_id,\n    'task_id': instance.task_id,\n    'call_id': instance.call_id,\n    'agent': instance.agent,\n    'depth': instance.depth,\n  }\n  return res"),
    ('structure', 'durable.records.live.PartialMessage'): (_s_durable_records_live_PartialMessage, ('text', 'tool_calls', 'usage', 'reasoning'),
        "def structure_PartialMessage(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_tool_calls=__c_structure_tool_calls, __c_type_tool_calls=__c_type_tool_calls, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage, __c_structure_reasoning=__c_structure_reasoning):\n  res = {}\n  if 'text' in o:\n    res['text'] = __c_structure_text(o['text'])\n  if 'tool_calls' in o:\n    res['tool_calls'] = __c_structure_tool_calls(o['tool_calls'], __c_type_tool_calls)\n  if 'usage' in o:\n    res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)\n  if 'reasoning' in o:\n    res['reasoning'] = __c_structure_reasoning(o['reasoning'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.PartialMessage'): (_u_durable_records_live_PartialMessage, ('text', 'tool_calls', 'usage', 'reasoning'),
        "def unstructure_PartialMessage(instance, __c_unstr_tool_calls=__c_unstr_tool_calls, __c_unstr_usage=__c_unstr_usage, __c_def_reasoning=__c_def_reasoning):\n  res = {\n    'text': instance.text,\n    'tool_calls': __c_unstr_tool_calls(instance.tool_calls),\n    'usage': __c_unstr_usage(instance.usage),\n  }\n  if instance.reasoning != __c_def_reasoning:\n    res['reasoning'] = instance.reasoning\n  return res"),
    ('structure', 'durable.records.live.RetryLive'): (_s_durable_records_live_RetryLive, ('attempt', 'at', 'error', 'kind', 'provider', 'status_code'),
        "def structure_RetryLive(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_at=__c_structure_at, __c_structure_error=__c_structure_error, __c_structure_kind=__c_structure_kind, __c_structure_provider=__c_structure_provider, __c_type_provider=__c_type_provider, __c_structure_status_code=__c_structure_status_code, __c_type_status_code=__c_type_status_code):\n  res = {}\n  if 'provider' in o:\n    res['provider'] = __c_structure_provider(o['provider'], __c_type_provider)\n  if 'status_code' in o:\n    res['status_code'] = __c_structure_status_code(o['status_code'], __c_type_status_code)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_attempt(o['attempt']),\n    __c_structure_at(o['at']),\n    __c_structure_error(o['error']),\n    __c_structure_kind(o['kind']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.RetryLive'): (_u_durable_records_live_RetryLive, ('attempt', 'at', 'error', 'kind', 'provider', 'status_code'),
        "def unstructure_RetryLive(instance, __c_unstr_provider=__c_unstr_provider, __c_unstr_status_code=__c_unstr_status_code):\n  res = {\n    'attempt': instance.attempt,\n    'at': instance.at,\n    'error': instance.error,\n    'kind': instance.kind,\n    'provider': __c_unstr_provider(instance.provider),\n    'status_code': __c_unstr_status_code(instance.status_code),\n  }\n  return res"),
    ('structure', 'durable.records.live.Run'): (_s_durable_records_live_Run, ('task_id', 'inputs', 'usage'),
        "def structure_Run(o, _=__cl, __cl=__cl, __c_structure_task_id=__c_structure_task_id, __c_structure_inputs=__c_structure_inputs, __c_type_inputs=__c_type_inputs, __c_structure_usage=__c_structure_usage, __c_type_usage=__c_type_usage):\n  res = {}\n  if 'usage' in o:\n    res['usage'] = __c_structure_usage(o['usage'], __c_type_usage)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_task_id(o['task_id']),\n    __c_structure_inputs(o['inputs'], __c_type_inputs),\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.Run'): (_u_durable_records_live_Run, ('task_id', 'inputs', 'usage'),
        "def unstructure_Run(instance, __c_unstr_inputs=__c_unstr_inputs, __c_unstr_usage=__c_unstr_usage, __c_def_usage=__c_def_usage):\n  res = {\n    'task_id': instance.task_id,\n    'inputs': __c_unstr_inputs(instance.inputs),\n  }\n  if instance.usage != __c_def_usage:\n    res['usage'] = __c_unstr_usage(instance.usage)\n  return res"),
    ('structure', 'durable.records.live.RunFailure'): (_s_durable_records_live_RunFailure, ('task_id', 'inputs', 'reason', 'detail', 'first'),
        "def structure_RunFailure(o, _=__cl, __cl=__cl, __c_structure_task_id=__c_structure_task_id, __c_structure_inputs=__c_structure_inputs, __c_type_inputs=__c_type_inputs, __c_structure_reason=__c_structure_reason, __c_type_reason=__c_type_reason, __c_structure_detail=__c_structure_detail, __c_structure_first=__c_structure_first, __c_type_first=__c_type_first):\n  res = {}\n  if 'first' in o:\n    res['first'] = __c_structure_first(o['first'], __c_type_first)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_task_id(o['task_id']),\n    __c_structure_inputs(o['inputs'], __c_type_inputs),\n    __c_structure_reason(o['reason'], __c_type_reason),\n    __c_structure_detail(o['detail']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.RunFailure'): (_u_durable_records_live_RunFailure, ('task_id', 'inputs', 'reason', 'detail', 'first'),
        "def unstructure_RunFailure(instance, __c_unstr_inputs=__c_unstr_inputs, __c_unstr_first=__c_unstr_first):\n  res = {\n    'task_id': instance.task_id,\n    'inputs': __c_unstr_inputs(instance.inputs),\n    'reason': instance.reason,\n    'detail': instance.detail,\n    'first': __c_unstr_first(instance.first),\n  }\n  return res"),
    ('structure', 'durable.records.live.ToolSlot'): (_s_durable_records_live_ToolSlot, ('call_id', 'name', 'task_id', 'output', 'status', 'conversation'),
        "def structure_ToolSlot(o, _=__cl, __cl=__cl, __c_structure_call_id=__c_structure_call_id, __c_structure_name=__c_structure_name, __c_structure_task_id=__c_structure_task_id, __c_structure_output=__c_structure_output, __c_structure_status=__c_structure_status, __c_type_status=__c_type_status, __c_structure_conversation=__c_structure_conversation, __c_type_conversation=__c_type_conversation):\n  res = {}\n  if 'output' in o:\n    res['output'] = __c_structure_output(o['output'])\n  if 'status' in o:\n    res['status'] = __c_structure_status(o['status'], __c_type_status)\n  if 'conversation' in o:\n    res['conversation'] = __c_structure_conversation(o['conversation'], __c_type_conversation)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_call_id(o['call_id']),\n    __c_structure_name(o['name']),\n    __c_structure_task_id(o['task_id']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.live.ToolSlot'): (_u_durable_records_live_ToolSlot, ('call_id', 'name', 'task_id', 'output', 'status', 'conversation'),
        "def unstructure_ToolSlot(instance, __c_unstr_conversation=__c_unstr_conversation, __c_def_conversation=__c_def_conversation):\n  res = {\n    'call_id': instance.call_id,\n    'name': instance.name,\n    'task_id': instance.task_id,\n    'output': instance.output,\n    'status': instance.status,\n  }\n  if instance.conversation != __c_def_conversation:\n    res['conversation'] = __c_unstr_conversation(instance.conversation)\n  return res"),
    ('structure', 'durable.records.model_settings.ModelSettings'): (_s_durable_records_model_settings_ModelSettings, ('temperature', 'top_p', 'max_tokens', 'stop', 'seed', 'reasoning_effort', 'thinking_budget', 'tool_choice', 'parallel_tool_calls', 'service_tier', 'prompt_cache', 'extra', 'model'),
        "def structure_ModelSettings(o, _=__cl, __cl=__cl, __c_structure_temperature=__c_structure_temperature, __c_type_temperature=__c_type_temperature, __c_structure_top_p=__c_structure_top_p, __c_type_top_p=__c_type_top_p, __c_structure_max_tokens=__c_structure_max_tokens, __c_type_max_tokens=__c_type_max_tokens, __c_structure_stop=__c_structure_stop, __c_type_stop=__c_type_stop, __c_structure_seed=__c_structure_seed, __c_type_seed=__c_type_seed, __c_structure_reasoning_effort=__c_structure_reasoning_effort, __c_type_reasoning_effort=__c_type_reasoning_effort, __c_structure_thinking_budget=__c_structure_thinking_budget, __c_type_thinking_budget=__c_type_thinking_budget, __c_structure_tool_choice=__c_structure_tool_choice, __c_type_tool_choice=__c_type_tool_choice, __c_structure_parallel_tool_calls=__c_structure_parallel_tool_calls, __c_type_parallel_tool_calls=__c_type_parallel_tool_calls, __c_structure_service_tier=__c_structure_service_tier, __c_type_service_tier=__c_type_service_tier, __c_structure_prompt_cache=__c_structure_prompt_cache, __c_type_prompt_cache=__c_type_prompt_cache, __c_structure_extra=__c_structure_extra, __c_type_extra=__c_type_extra, __c_structure_model=__c_structure_model, __c_type_model=__c_type_model):\n  res = {}\n  if 'temperature' in o:\n    res['temperature'] = __c_structure_temperature(o['temperature'], __c_type_temperature)\n  if 'top_p' in o:\n    res['top_p'] = __c_structure_top_p(o['top_p'], __c_type_top_p)\n  if 'max_tokens' in o:\n    res['max_tokens'] = __c_structure_max_tokens(o['max_tokens'], __c_type_max_tokens)\n  if 'stop' in o:\n    res['stop'] = __c_structure_stop(o['stop'], __c_type_stop)\n  if 'seed' in o:\n    res['seed'] = __c_structure_seed(o['seed'], __c_type_seed)\n  if 'reasoning_effort' in o:\n    res['reasoning_effort'] = __c_structure_reasoning_effort(o['reasoning_effort'], __c_type_reasoning_effort)\n  if 'thinking_budget' in o:\n    res['thinking_budget'] = __c_structure_thinking_budget(o['thinking_budget'], __c_type_thinking_budget)\n  if 'tool_choice' in o:\n    res['tool_choice'] = __c_structure_tool_choice(o['tool_choice'], __c_type_tool_choice)\n  if 'parallel_tool_calls' in o:\n    res['parallel_tool_calls'] = __c_structure_parallel_tool_calls(o['parallel_tool_calls'], __c_type_parallel_tool_calls)\n  if 'service_tier' in o:\n    res['service_tier'] = __c_structure_service_tier(o['service_tier'], __c_type_service_tier)\n  if 'prompt_cache' in o:\n    res['prompt_cache'] = __c_structure_prompt_cache(o['prompt_cache'], __c_type_prompt_cache)\n  if 'extra' in o:\n    res['extra'] = __c_structure_extra(o['extra'], __c_type_extra)\n  if 'model' in o:\n    res['model'] = __c_structure_model(o['model'], __c_type_model)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.model_settings.ModelSettings'): (_u_durable_records_model_settings_ModelSettings, ('temperature', 'top_p', 'max_tokens', 'stop', 'seed', 'reasoning_effort', 'thinking_budget', 'tool_choice', 'parallel_tool_calls', 'service_tier', 'prompt_cache', 'extra', 'model'),
        "def unstructure_ModelSettings(instance, __c_unstr_temperature=__c_unstr_temperature, __c_def_temperature=__c_def_temperature, __c_unstr_top_p=__c_unstr_top_p, __c_def_top_p=__c_def_top_p, __c_unstr_max_tokens=__c_unstr_max_tokens, __c_def_max_tokens=__c_def_max_tokens, __c_unstr_stop=__c_unstr_stop, __c_def_stop=__c_def_stop, __c_unstr_seed=__c_unstr_seed, __c_def_seed=__c_def_seed, __c_unstr_reasoning_effort=__c_unstr_reasoning_effort, __c_def_reasoning_effort=__c_def_reasoning_effort, __c_unstr_thinking_budget=__c_unstr_thinking_budget, __c_def_thinking_budget=__c_def_thinking_budget, __c_unstr_tool_choice=__c_unstr_tool_choice, __c_def_tool_choice=__c_def_tool_choice, __c_unstr_parallel_tool_calls=__c_unstr_parallel_tool_calls, __c_def_parallel_tool_calls=__c_def_parallel_tool_calls, __c_unstr_service_tier=__c_unstr_service_tier, __c_def_service_tier=__c_def_service_tier, __c_unstr_prompt_cache=__c_unstr_prompt_cache, __c_def_prompt_cache=__c_def_prompt_cache, __c_unstr_extra=__c_unstr_extra, __c_def_extra=__c_def_extra, __c_unstr_model=__c_unstr_model, __c_def_model=__c_def_model):\n  res = {\n  }\n  if instance.temperature != __c_def_temperature:\n    res['temperature'] = __c_unstr_temperature(instance.temperature)\n  if instance.top_p != __c_def_top_p:\n    res['top_p'] = __c_unstr_top_p(instance.top_p)\n  if instance.max_tokens != __c_def_max_tokens:\n    res['max_tokens'] = __c_unstr_max_tokens(instance.max_tokens)\n  if instance.stop != __c_def_stop:\n    res['stop'] = __c_unstr_stop(instance.stop)\n  if instance.seed != __c_def_seed:\n    res['seed'] = __c_unstr_seed(instance.seed)\n  if instance.reasoning_effort != __c_def_reasoning_effort:\n    res['reasoning_effort'] = __c_unstr_reasoning_effort(instance.reasoning_effort)\n  if instance.thinking_budget != __c_def_thinking_budget:\n    res['thinking_budget'] = __c_unstr_thinking_budget(instance.thinking_budget)\n  if instance.tool_choice != __c_def_tool_choice:\n    res['tool_choice'] = __c_unstr_tool_choice(instance.tool_choice)\n  if instance.parallel_tool_calls != __c_def_parallel_tool_calls:\n    res['parallel_tool_calls'] = __c_unstr_parallel_tool_calls(instance.parallel_tool_calls)\n  if instance.service_tier != __c_def_service_tier:\n    res['service_tier'] = __c_unstr_service_tier(instance.service_tier)\n  if instance.prompt_cache != __c_def_prompt_cache:\n    res['prompt_cache'] = __c_unstr_prompt_cache(instance.prompt_cache)\n  if instance.extra != __c_def_extra:\n    res['extra'] = __c_unstr_extra(instance.extra)\n  if instance.model != __c_def_model:\n    res['model'] = __c_unstr_model(instance.model)\n  return res"),
    ('structure', 'durable.records.submissions.Answered'): (_s_durable_records_submissions_Answered, ('text', 'seq', 'output'),
        "def structure_Answered(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_seq=__c_structure_seq, __c_type_seq=__c_type_seq, __c_structure_output=__c_structure_output, __c_type_output=__c_type_output):\n  res = {}\n  if 'text' in o:\n    res['text'] = __c_structure_text(o['text'])\n  if 'seq' in o:\n    res['seq'] = __c_structure_seq(o['seq'], __c_type_seq)\n  if 'output' in o:\n    res['output'] = __c_structure_output(o['output'], __c_type_output)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.submissions.Answered'): (_u_durable_records_submissions_Answered, ('text', 'seq', 'output'),
        "def unstructure_Answered(instance, __c_unstr_seq=__c_unstr_seq, __c_unstr_output=__c_unstr_output, __c_def_output=__c_def_output):\n  res = {\n    'text': instance.text,\n    'seq': __c_unstr_seq(instance.seq),\n  }\n  if instance.output != __c_def_output:\n    res['output'] = __c_unstr_output(instance.output)\n  return res"),
    ('variant', 'durable.records.submissions.Answered'): (_v_durable_records_submissions_Answered, ('text', 'seq', 'output'),
        "def structure_Answered(o, _=__cl, __cl=__cl, __c_structure_text=__c_structure_text, __c_structure_seq=__c_structure_seq, __c_type_seq=__c_type_seq, __c_structure_output=__c_structure_output, __c_type_output=__c_type_output):\n  res = {}\n  if 'text' in o:\n    res['text'] = __c_structure_text(o['text'])\n  if 'seq' in o:\n    res['seq'] = __c_structure_seq(o['seq'], __c_type_seq)\n  if 'output' in o:\n    res['output'] = __c_structure_output(o['output'], __c_type_output)\n  return __cl(\n    **res,\n  )"),
    ('structure', 'durable.records.submissions.Queued'): (_s_durable_records_submissions_Queued, (),
        "def structure_Queued(o, _=__cl, __cl=__cl):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n  )"),
    ('unstructure', 'durable.records.submissions.Queued'): (_u_durable_records_submissions_Queued, (),
        'def unstructure_Queued(instance):\n  res = {\n  }\n  return res'),
    ('variant', 'durable.records.submissions.Queued'): (_v_durable_records_submissions_Queued, (),
        'def structure_Queued(o, _=__cl, __cl=__cl):\n  return __cl(\n  )'),
    ('structure', 'durable.records.submissions.Submission'): (_s_durable_records_submissions_Submission, ('id', 'conversation_id', 'text', 'seq', 'status', 'task_id', 'created_at', 'output', 'parts', 'model_settings'),
        "def structure_Submission(o, _=__cl, __cl=__cl, __c_structure_id=__c_structure_id, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_text=__c_structure_text, __c_structure_seq=__c_structure_seq, __c_type_seq=__c_type_seq, __c_structure_status=__c_structure_status, __c_type_status=__c_type_status, __c_structure_task_id=__c_structure_task_id, __c_type_task_id=__c_type_task_id, __c_structure_created_at=__c_structure_created_at, __c_structure_output=__c_structure_output, __c_type_output=__c_type_output, __c_structure_parts=__c_structure_parts, __c_type_parts=__c_type_parts, __c_structure_model_settings=__c_structure_model_settings, __c_type_model_settings=__c_type_model_settings):\n  res = {}\n  if 'seq' in o:\n    res['seq'] = __c_structure_seq(o['seq'], __c_type_seq)\n  if 'status' in o:\n    res['status'] = __c_structure_status(o['status'], __c_type_status)\n  if 'task_id' in o:\n    res['task_id'] = __c_structure_task_id(o['task_id'], __c_type_task_id)\n  if 'created_at' in o:\n    res['created_at'] = __c_structure_created_at(o['created_at'])\n  if 'output' in o:\n    res['output'] = __c_structure_output(o['output'], __c_type_output)\n  if 'parts' in o:\n    res['parts'] = __c_structure_parts(o['parts'], __c_type_parts)\n  if 'model_settings' in o:\n    res['model_settings'] = __c_structure_model_settings(o['model_settings'], __c_type_model_settings)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_id(o['id']),\n    __c_structure_conversation_id(o['conversation_id']),\n    __c_structure_text(o['text']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.submissions.Submission'): (_u_durable_records_submissions_Submission, ('id', 'conversation_id', 'text', 'seq', 'status', 'task_id', 'created_at', 'output', 'parts', 'model_settings'),
        "def unstructure_Submission(instance, __c_unstr_seq=__c_unstr_seq, __c_unstr_status=__c_unstr_status, __c_unstr_task_id=__c_unstr_task_id, __c_unstr_output=__c_unstr_output, __c_def_output=__c_def_output, __c_unstr_parts=__c_unstr_parts, __c_def_parts=__c_def_parts, __c_unstr_model_settings=__c_unstr_model_settings, __c_def_model_settings=__c_def_model_settings):\n  res = {\n    'id': instance.id,\n    'conversation_id': instance.conversation_id,\n    'text': instance.text,\n    'seq': __c_unstr_seq(instance.seq),\n    'status': __c_unstr_status(instance.status),\n    'task_id': __c_unstr_task_id(instance.task_id),\n    'created_at': instance.created_at,\n  }\n  if instance.output != __c_def_output:\n    res['output'] = __c_unstr_output(instance.output)\n  if instance.parts != __c_def_parts:\n    res['parts'] = __c_unstr_parts(instance.parts)\n  if instance.model_settings != __c_def_model_settings:\n    res['model_settings'] = __c_unstr_model_settings(instance.model_settings)\n  return res"),
    ('structure', 'durable.records.submissions.Unanswered'): (_s_durable_records_submissions_Unanswered, ('reason', 'detail'),
        "def structure_Unanswered(o, _=__cl, __cl=__cl, __c_structure_reason=__c_structure_reason, __c_type_reason=__c_type_reason, __c_structure_detail=__c_structure_detail):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_reason(o['reason'], __c_type_reason),\n    __c_structure_detail(o['detail']),\n  )"),
    ('unstructure', 'durable.records.submissions.Unanswered'): (_u_durable_records_submissions_Unanswered, ('reason', 'detail'),
        "def unstructure_Unanswered(instance):\n  res = {\n    'reason': instance.reason,\n    'detail': instance.detail,\n  }\n  return res"),
    ('variant', 'durable.records.submissions.Unanswered'): (_v_durable_records_submissions_Unanswered, ('reason', 'detail'),
        "def structure_Unanswered(o, _=__cl, __cl=__cl, __c_structure_reason=__c_structure_reason, __c_type_reason=__c_type_reason, __c_structure_detail=__c_structure_detail):\n  return __cl(\n    __c_structure_reason(o['reason'], __c_type_reason),\n    __c_structure_detail(o['detail']),\n  )"),
    ('structure', 'durable.records.tasks.Aborted'): (_s_durable_records_tasks_Aborted, (),
        "def structure_Aborted(o, _=__cl, __cl=__cl):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n  )"),
    ('unstructure', 'durable.records.tasks.Aborted'): (_u_durable_records_tasks_Aborted, (),
        'def unstructure_Aborted(instance):\n  res = {\n  }\n  return res'),
    ('variant', 'durable.records.tasks.Aborted'): (_v_durable_records_tasks_Aborted, (),
        'def structure_Aborted(o, _=__cl, __cl=__cl):\n  return __cl(\n  )'),
    ('structure', 'durable.records.tasks.DeferredJob'): (_s_durable_records_tasks_DeferredJob, ('key', 'handle', 'model'),
        "def structure_DeferredJob(o, _=__cl, __cl=__cl, __c_structure_key=__c_structure_key, __c_structure_handle=__c_structure_handle, __c_type_handle=__c_type_handle, __c_structure_model=__c_structure_model):\n  res = {}\n  if 'handle' in o:\n    res['handle'] = __c_structure_handle(o['handle'], __c_type_handle)\n  if 'model' in o:\n    res['model'] = __c_structure_model(o['model'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_key(o['key']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.tasks.DeferredJob'): (_u_durable_records_tasks_DeferredJob, ('key', 'handle', 'model'),
        "def unstructure_DeferredJob(instance, __c_unstr_handle=__c_unstr_handle, __c_def_model=__c_def_model):\n  res = {\n    'key': instance.key,\n    'handle': __c_unstr_handle(instance.handle),\n  }\n  if instance.model != __c_def_model:\n    res['model'] = instance.model\n  return res"),
    ('structure', 'durable.records.tasks.Done'): (_s_durable_records_tasks_Done, ('result',),
        "def structure_Done(o, _=__cl, __cl=__cl, __c_structure_result=__c_structure_result, __c_type_result=__c_type_result):\n  res = {}\n  if 'result' in o:\n    res['result'] = __c_structure_result(o['result'], __c_type_result)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.tasks.Done'): (_u_durable_records_tasks_Done, ('result',),
        "def unstructure_Done(instance, __c_unstr_result=__c_unstr_result):\n  res = {\n    'result': __c_unstr_result(instance.result),\n  }\n  return res"),
    ('variant', 'durable.records.tasks.Done'): (_v_durable_records_tasks_Done, ('result',),
        "def structure_Done(o, _=__cl, __cl=__cl, __c_structure_result=__c_structure_result, __c_type_result=__c_type_result):\n  res = {}\n  if 'result' in o:\n    res['result'] = __c_structure_result(o['result'], __c_type_result)\n  return __cl(\n    **res,\n  )"),
    ('structure', 'durable.records.tasks.ErrorDetail'): (_s_durable_records_tasks_ErrorDetail, ('reason',),
        "def structure_ErrorDetail(o, _=__cl, __cl=__cl, __c_structure_reason=__c_structure_reason, __c_type_reason=__c_type_reason):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_reason(o['reason'], __c_type_reason),\n  )"),
    ('unstructure', 'durable.records.tasks.ErrorDetail'): (_u_durable_records_tasks_ErrorDetail, ('reason',),
        "def unstructure_ErrorDetail(instance):\n  res = {\n    'reason': instance.reason,\n  }\n  return res"),
    ('structure', 'durable.records.tasks.ErrorInfo'): (_s_durable_records_tasks_ErrorInfo, ('message', 'detail'),
        "def structure_ErrorInfo(o, _=__cl, __cl=__cl, __c_structure_message=__c_structure_message, __c_structure_detail=__c_structure_detail, __c_type_detail=__c_type_detail):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_message(o['message']),\n    __c_structure_detail(o['detail'], __c_type_detail),\n  )"),
    ('unstructure', 'durable.records.tasks.ErrorInfo'): (_u_durable_records_tasks_ErrorInfo, ('message', 'detail'),
        "def unstructure_ErrorInfo(instance, __c_unstr_detail=__c_unstr_detail):\n  res = {\n    'message': instance.message,\n    'detail': __c_unstr_detail(instance.detail),\n  }\n  return res"),
    ('structure', 'durable.records.tasks.Failed'): (_s_durable_records_tasks_Failed, ('error',),
        "def structure_Failed(o, _=__cl, __cl=__cl, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_error(o['error'], __c_type_error),\n  )"),
    ('unstructure', 'durable.records.tasks.Failed'): (_u_durable_records_tasks_Failed, ('error',),
        "def unstructure_Failed(instance, __c_unstr_error=__c_unstr_error):\n  res = {\n    'error': __c_unstr_error(instance.error),\n  }\n  return res"),
    ('variant', 'durable.records.tasks.Failed'): (_v_durable_records_tasks_Failed, ('error',),
        "def structure_Failed(o, _=__cl, __cl=__cl, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error):\n  return __cl(\n    __c_structure_error(o['error'], __c_type_error),\n  )"),
    ('structure', 'durable.records.tasks.Faulted'): (_s_durable_records_tasks_Faulted, ('error',),
        "def structure_Faulted(o, _=__cl, __cl=__cl, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_error(o['error'], __c_type_error),\n  )"),
    ('unstructure', 'durable.records.tasks.Faulted'): (_u_durable_records_tasks_Faulted, ('error',),
        "def unstructure_Faulted(instance, __c_unstr_error=__c_unstr_error):\n  res = {\n    'error': __c_unstr_error(instance.error),\n  }\n  return res"),
    ('variant', 'durable.records.tasks.Faulted'): (_v_durable_records_tasks_Faulted, ('error',),
        "def structure_Faulted(o, _=__cl, __cl=__cl, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error):\n  return __cl(\n    __c_structure_error(o['error'], __c_type_error),\n  )"),
    ('structure', 'durable.records.tasks.Pending'): (_s_durable_records_tasks_Pending, (),
        "def structure_Pending(o, _=__cl, __cl=__cl):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n  )"),
    ('unstructure', 'durable.records.tasks.Pending'): (_u_durable_records_tasks_Pending, (),
        'def unstructure_Pending(instance):\n  res = {\n  }\n  return res'),
    ('variant', 'durable.records.tasks.Pending'): (_v_durable_records_tasks_Pending, (),
        'def structure_Pending(o, _=__cl, __cl=__cl):\n  return __cl(\n  )'),
    ('structure', 'durable.records.tasks.Running'): (_s_durable_records_tasks_Running, (),
        "def structure_Running(o, _=__cl, __cl=__cl):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n  )"),
    ('unstructure', 'durable.records.tasks.Running'): (_u_durable_records_tasks_Running, (),
        'def unstructure_Running(instance):\n  res = {\n  }\n  return res'),
    ('variant', 'durable.records.tasks.Running'): (_v_durable_records_tasks_Running, (),
        'def structure_Running(o, _=__cl, __cl=__cl):\n  return __cl(\n  )'),
    ('structure', 'durable.records.tasks.Sleeping'): (_s_durable_records_tasks_Sleeping, ('until',),
        "def structure_Sleeping(o, _=__cl, __cl=__cl, __c_structure_until=__c_structure_until):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_until(o['until']),\n  )"),
    ('unstructure', 'durable.records.tasks.Sleeping'): (_u_durable_records_tasks_Sleeping, ('until',),
        "def unstructure_Sleeping(instance):\n  res = {\n    'until': instance.until,\n  }\n  return res"),
    ('variant', 'durable.records.tasks.Sleeping'): (_v_durable_records_tasks_Sleeping, ('until',),
        "def structure_Sleeping(o, _=__cl, __cl=__cl, __c_structure_until=__c_structure_until):\n  return __cl(\n    __c_structure_until(o['until']),\n  )"),
    ('structure', 'durable.records.tasks.Task'): (_s_durable_records_tasks_Task, ('id', 'conversation_id', 'kind', 'input', 'state', 'checkpoint', 'restarts', 'parent_id', 'stop', 'created_at', 'updated_at'),
        "def structure_Task(o, _=__cl, __cl=__cl, __c_structure_id=__c_structure_id, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_kind=__c_structure_kind, __c_structure_input=__c_structure_input, __c_type_input=__c_type_input, __c_structure_state=__c_structure_state, __c_type_state=__c_type_state, __c_structure_checkpoint=__c_structure_checkpoint, __c_type_checkpoint=__c_type_checkpoint, __c_structure_restarts=__c_structure_restarts, __c_structure_parent_id=__c_structure_parent_id, __c_type_parent_id=__c_type_parent_id, __c_structure_stop=__c_structure_stop, __c_type_stop=__c_type_stop, __c_structure_created_at=__c_structure_created_at, __c_structure_updated_at=__c_structure_updated_at):\n  res = {}\n  if 'state' in o:\n    res['state'] = __c_structure_state(o['state'], __c_type_state)\n  if 'checkpoint' in o:\n    res['checkpoint'] = __c_structure_checkpoint(o['checkpoint'], __c_type_checkpoint)\n  if 'restarts' in o:\n    res['restarts'] = __c_structure_restarts(o['restarts'])\n  if 'parent_id' in o:\n    res['parent_id'] = __c_structure_parent_id(o['parent_id'], __c_type_parent_id)\n  if 'stop' in o:\n    res['stop'] = __c_structure_stop(o['stop'], __c_type_stop)\n  if 'created_at' in o:\n    res['created_at'] = __c_structure_created_at(o['created_at'])\n  if 'updated_at' in o:\n    res['updated_at'] = __c_structure_updated_at(o['updated_at'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_id(o['id']),\n    __c_structure_conversation_id(o['conversation_id']),\n    __c_structure_kind(o['kind']),\n    __c_structure_input(o['input'], __c_type_input),\n    **res,\n  )"),
    ('unstructure', 'durable.records.tasks.Task'): (_u_durable_records_tasks_Task, ('id', 'conversation_id', 'kind', 'input', 'state', 'checkpoint', 'restarts', 'parent_id', 'stop', 'created_at', 'updated_at'),
        "def unstructure_Task(instance, __c_unstr_input=__c_unstr_input, __c_unstr_state=__c_unstr_state, __c_unstr_checkpoint=__c_unstr_checkpoint, __c_unstr_parent_id=__c_unstr_parent_id, __c_unstr_stop=__c_unstr_stop):\n  res = {\n    'id': instance.id,\n    'conversation_id': instance.conversation_id,\n    'kind': instance.kind,\n    'input': __c_unstr_input(instance.input),\n    'state': __c_unstr_state(instance.state),\n    'checkpoint': __c_unstr_checkpoint(instance.checkpoint),\n    'restarts': instance.restarts,\n    'parent_id': __c_unstr_parent_id(instance.parent_id),\n    'stop': __c_unstr_stop(instance.stop),\n    'created_at': instance.created_at,\n    'updated_at': instance.updated_at,\n  }\n  return res"),
    ('structure', 'durable.records.tasks.Terminal'): (_s_durable_records_tasks_Terminal, ('outcome',),
        "def structure_Terminal(o, _=__cl, __cl=__cl, __c_structure_outcome=__c_structure_outcome, __c_type_outcome=__c_type_outcome):\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_outcome(o['outcome'], __c_type_outcome),\n  )"),
    ('unstructure', 'durable.records.tasks.Terminal'): (_u_durable_records_tasks_Terminal, ('outcome',),
        "def unstructure_Terminal(instance, __c_unstr_outcome=__c_unstr_outcome):\n  res = {\n    'outcome': __c_unstr_outcome(instance.outcome),\n  }\n  return res"),
    ('variant', 'durable.records.tasks.Terminal'): (_v_durable_records_tasks_Terminal, ('outcome',),
        "def structure_Terminal(o, _=__cl, __cl=__cl, __c_structure_outcome=__c_structure_outcome, __c_type_outcome=__c_type_outcome):\n  return __cl(\n    __c_structure_outcome(o['outcome'], __c_type_outcome),\n  )"),
    ('structure', 'durable.records.tasks.Waiting'): (_s_durable_records_tasks_Waiting, ('on', 'client'),
        "def structure_Waiting(o, _=__cl, __cl=__cl, __c_structure_on=__c_structure_on, __c_type_on=__c_type_on, __c_structure_client=__c_structure_client):\n  res = {}\n  if 'on' in o:\n    res['on'] = __c_structure_on(o['on'], __c_type_on)\n  if 'client' in o:\n    res['client'] = __c_structure_client(o['client'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.tasks.Waiting'): (_u_durable_records_tasks_Waiting, ('on', 'client'),
        "def unstructure_Waiting(instance, __c_unstr_on=__c_unstr_on):\n  res = {\n    'on': __c_unstr_on(instance.on),\n    'client': instance.client,\n  }\n  return res"),
    ('variant', 'durable.records.tasks.Waiting'): (_v_durable_records_tasks_Waiting, ('on', 'client'),
        "def structure_Waiting(o, _=__cl, __cl=__cl, __c_structure_on=__c_structure_on, __c_type_on=__c_type_on, __c_structure_client=__c_structure_client):\n  res = {}\n  if 'on' in o:\n    res['on'] = __c_structure_on(o['on'], __c_type_on)\n  if 'client' in o:\n    res['client'] = __c_structure_client(o['client'])\n  return __cl(\n    **res,\n  )"),
    ('structure', 'durable.records.usage.ModelUsage'): (_s_durable_records_usage_ModelUsage, ('model', 'requests', 'input_tokens', 'output_tokens', 'reasoning_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost'),
        "def structure_ModelUsage(o, _=__cl, __cl=__cl, __c_structure_model=__c_structure_model, __c_structure_requests=__c_structure_requests, __c_structure_input_tokens=__c_structure_input_tokens, __c_structure_output_tokens=__c_structure_output_tokens, __c_structure_reasoning_tokens=__c_structure_reasoning_tokens, __c_structure_cache_read_tokens=__c_structure_cache_read_tokens, __c_structure_cache_write_tokens=__c_structure_cache_write_tokens, __c_structure_cost=__c_structure_cost, __c_type_cost=__c_type_cost):\n  res = {}\n  if 'requests' in o:\n    res['requests'] = __c_structure_requests(o['requests'])\n  if 'input_tokens' in o:\n    res['input_tokens'] = __c_structure_input_tokens(o['input_tokens'])\n  if 'output_tokens' in o:\n    res['output_tokens'] = __c_structure_output_tokens(o['output_tokens'])\n  if 'reasoning_tokens' in o:\n    res['reasoning_tokens'] = __c_structure_reasoning_tokens(o['reasoning_tokens'])\n  if 'cache_read_tokens' in o:\n    res['cache_read_tokens'] = __c_structure_cache_read_tokens(o['cache_read_tokens'])\n  if 'cache_write_tokens' in o:\n    res['cache_write_tokens'] = __c_structure_cache_write_tokens(o['cache_write_tokens'])\n  if 'cost' in o:\n    res['cost'] = __c_structure_cost(o['cost'], __c_type_cost)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_model(o['model']),\n    **res,\n  )"),
    ('unstructure', 'durable.records.usage.ModelUsage'): (_u_durable_records_usage_ModelUsage, ('model', 'requests', 'input_tokens', 'output_tokens', 'reasoning_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost'),
        "def unstructure_ModelUsage(instance, __c_def_reasoning_tokens=__c_def_reasoning_tokens, __c_def_cache_read_tokens=__c_def_cache_read_tokens, __c_def_cache_write_tokens=__c_def_cache_write_tokens, __c_unstr_cost=__c_unstr_cost, __c_def_cost=__c_def_cost):\n  res = {\n    'model': instance.model,\n    'requests': instance.requests,\n    'input_tokens': instance.input_tokens,\n    'output_tokens': instance.output_tokens,\n  }\n  if instance.reasoning_tokens != __c_def_reasoning_tokens:\n    res['reasoning_tokens'] = instance.reasoning_tokens\n  if instance.cache_read_tokens != __c_def_cache_read_tokens:\n    res['cache_read_tokens'] = instance.cache_read_tokens\n  if instance.cache_write_tokens != __c_def_cache_write_tokens:\n    res['cache_write_tokens'] = instance.cache_write_tokens\n  if instance.cost != __c_def_cost:\n    res['cost'] = __c_unstr_cost(instance.cost)\n  return res"),
    ('structure', 'durable.records.usage.UsageTotals'): (_s_durable_records_usage_UsageTotals, ('models', 'tool_calls', 'tool_seconds'),
        "def structure_UsageTotals(o, _=__cl, __cl=__cl, __c_structure_models=__c_structure_models, __c_type_models=__c_type_models, __c_structure_tool_calls=__c_structure_tool_calls, __c_structure_tool_seconds=__c_structure_tool_seconds):\n  res = {}\n  if 'models' in o:\n    res['models'] = __c_structure_models(o['models'], __c_type_models)\n  if 'tool_calls' in o:\n    res['tool_calls'] = __c_structure_tool_calls(o['tool_calls'])\n  if 'tool_seconds' in o:\n    res['tool_seconds'] = __c_structure_tool_seconds(o['tool_seconds'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.records.usage.UsageTotals'): (_u_durable_records_usage_UsageTotals, ('models', 'tool_calls', 'tool_seconds'),
        "def unstructure_UsageTotals(instance, __c_unstr_models=__c_unstr_models, __c_def_tool_calls=__c_def_tool_calls, __c_def_tool_seconds=__c_def_tool_seconds):\n  res = {\n    'models': __c_unstr_models(instance.models),\n  }\n  if instance.tool_calls != __c_def_tool_calls:\n    res['tool_calls'] = instance.tool_calls\n  if instance.tool_seconds != __c_def_tool_seconds:\n    res['tool_seconds'] = instance.tool_seconds\n  return res"),
    ('unstructure', 'durable.tasks.cancel.CancelInput'): (_u_durable_tasks_cancel_CancelInput, ('job', 'run_task_id', 'provider'),
        "def unstructure_CancelInput(instance, __c_unstr_job=__c_unstr_job, __c_unstr_provider=__c_unstr_provider):\n  res = {\n    'job': __c_unstr_job(instance.job),\n    'run_task_id': instance.run_task_id,\n    'provider': __c_unstr_provider(instance.provider),\n  }\n  return res"),
    ('variant', 'durable.tasks.cancel.CancelInput'): (_v_durable_tasks_cancel_CancelInput, ('job', 'run_task_id', 'provider'),
        "def structure_CancelInput(o, _=__cl, __cl=__cl, __c_structure_job=__c_structure_job, __c_type_job=__c_type_job, __c_structure_run_task_id=__c_structure_run_task_id, __c_structure_provider=__c_structure_provider, __c_type_provider=__c_type_provider):\n  res = {}\n  if 'provider' in o:\n    res['provider'] = __c_structure_provider(o['provider'], __c_type_provider)\n  return __cl(\n    __c_structure_job(o['job'], __c_type_job),\n    __c_structure_run_task_id(o['run_task_id']),\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.compaction.CompactionInput'): (_u_durable_tasks_compaction_CompactionInput, ('trigger',),
        "def unstructure_CompactionInput(instance):\n  res = {\n    'trigger': instance.trigger,\n  }\n  return res"),
    ('variant', 'durable.tasks.compaction.CompactionInput'): (_v_durable_tasks_compaction_CompactionInput, ('trigger',),
        "def structure_CompactionInput(o, _=__cl, __cl=__cl, __c_structure_trigger=__c_structure_trigger, __c_type_trigger=__c_type_trigger):\n  return __cl(\n    __c_structure_trigger(o['trigger'], __c_type_trigger),\n  )"),
    ('structure', 'durable.tasks.generation.records.AttemptFailure'): (_s_durable_tasks_generation_records_AttemptFailure, ('message', 'kind', 'provider', 'status_code'),
        "def structure_AttemptFailure(o, _=__cl, __cl=__cl, __c_structure_message=__c_structure_message, __c_structure_kind=__c_structure_kind, __c_structure_provider=__c_structure_provider, __c_type_provider=__c_type_provider, __c_structure_status_code=__c_structure_status_code, __c_type_status_code=__c_type_status_code):\n  res = {}\n  if 'provider' in o:\n    res['provider'] = __c_structure_provider(o['provider'], __c_type_provider)\n  if 'status_code' in o:\n    res['status_code'] = __c_structure_status_code(o['status_code'], __c_type_status_code)\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    __c_structure_message(o['message']),\n    __c_structure_kind(o['kind']),\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.generation.records.AttemptFailure'): (_u_durable_tasks_generation_records_AttemptFailure, ('message', 'kind', 'provider', 'status_code'),
        "def unstructure_AttemptFailure(instance, __c_unstr_provider=__c_unstr_provider, __c_unstr_status_code=__c_unstr_status_code):\n  res = {\n    'message': instance.message,\n    'kind': instance.kind,\n    'provider': __c_unstr_provider(instance.provider),\n    'status_code': __c_unstr_status_code(instance.status_code),\n  }\n  return res"),
    ('unstructure', 'durable.tasks.generation.records.GenerationInput'): (_u_durable_tasks_generation_records_GenerationInput, ('submission_ids', 'settings'),
        "def unstructure_GenerationInput(instance, __c_unstr_submission_ids=__c_unstr_submission_ids, __c_unstr_settings=__c_unstr_settings, __c_def_settings=__c_def_settings):\n  res = {\n    'submission_ids': __c_unstr_submission_ids(instance.submission_ids),\n  }\n  if instance.settings != __c_def_settings:\n    res['settings'] = __c_unstr_settings(instance.settings)\n  return res"),
    ('variant', 'durable.tasks.generation.records.GenerationInput'): (_v_durable_tasks_generation_records_GenerationInput, ('submission_ids', 'settings'),
        "def structure_GenerationInput(o, _=__cl, __cl=__cl, __c_structure_submission_ids=__c_structure_submission_ids, __c_type_submission_ids=__c_type_submission_ids, __c_structure_settings=__c_structure_settings, __c_type_settings=__c_type_settings):\n  res = {}\n  if 'settings' in o:\n    res['settings'] = __c_structure_settings(o['settings'], __c_type_settings)\n  return __cl(\n    __c_structure_submission_ids(o['submission_ids'], __c_type_submission_ids),\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.generation.records.Poll'): (_u_durable_tasks_generation_records_Poll, ('attempt', 'job', 'poll_at', 'rounds', 'notes'),
        "def unstructure_Poll(instance, __c_unstr_job=__c_unstr_job, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):\n  res = {\n    'attempt': instance.attempt,\n    'job': __c_unstr_job(instance.job),\n    'poll_at': instance.poll_at,\n    'rounds': instance.rounds,\n  }\n  if instance.notes != __c_def_notes:\n    res['notes'] = __c_unstr_notes(instance.notes)\n  return res"),
    ('variant', 'durable.tasks.generation.records.Poll'): (_v_durable_tasks_generation_records_Poll, ('attempt', 'job', 'poll_at', 'rounds', 'notes'),
        "def structure_Poll(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_job=__c_structure_job, __c_type_job=__c_type_job, __c_structure_poll_at=__c_structure_poll_at, __c_structure_rounds=__c_structure_rounds, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):\n  res = {}\n  if 'rounds' in o:\n    res['rounds'] = __c_structure_rounds(o['rounds'])\n  if 'notes' in o:\n    res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)\n  return __cl(\n    __c_structure_attempt(o['attempt']),\n    __c_structure_job(o['job'], __c_type_job),\n    __c_structure_poll_at(o['poll_at']),\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.generation.records.Prepare'): (_u_durable_tasks_generation_records_Prepare, ('attempt', 'rounds', 'notes'),
        "def unstructure_Prepare(instance, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):\n  res = {\n    'attempt': instance.attempt,\n    'rounds': instance.rounds,\n  }\n  if instance.notes != __c_def_notes:\n    res['notes'] = __c_unstr_notes(instance.notes)\n  return res"),
    ('variant', 'durable.tasks.generation.records.Prepare'): (_v_durable_tasks_generation_records_Prepare, ('attempt', 'rounds', 'notes'),
        "def structure_Prepare(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_rounds=__c_structure_rounds, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):\n  res = {}\n  if 'attempt' in o:\n    res['attempt'] = __c_structure_attempt(o['attempt'])\n  if 'rounds' in o:\n    res['rounds'] = __c_structure_rounds(o['rounds'])\n  if 'notes' in o:\n    res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.generation.records.Request'): (_u_durable_tasks_generation_records_Request, ('attempt', 'options', 'rounds', 'notes'),
        "def unstructure_Request(instance, __c_unstr_options=__c_unstr_options, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):\n  res = {\n    'attempt': instance.attempt,\n    'options': __c_unstr_options(instance.options),\n    'rounds': instance.rounds,\n  }\n  if instance.notes != __c_def_notes:\n    res['notes'] = __c_unstr_notes(instance.notes)\n  return res"),
    ('variant', 'durable.tasks.generation.records.Request'): (_v_durable_tasks_generation_records_Request, ('attempt', 'options', 'rounds', 'notes'),
        "def structure_Request(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_options=__c_structure_options, __c_type_options=__c_type_options, __c_structure_rounds=__c_structure_rounds, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):\n  res = {}\n  if 'options' in o:\n    res['options'] = __c_structure_options(o['options'], __c_type_options)\n  if 'rounds' in o:\n    res['rounds'] = __c_structure_rounds(o['rounds'])\n  if 'notes' in o:\n    res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)\n  return __cl(\n    __c_structure_attempt(o['attempt']),\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.generation.records.Retry'): (_u_durable_tasks_generation_records_Retry, ('attempt', 'until', 'error', 'job', 'rounds', 'notes'),
        "def unstructure_Retry(instance, __c_unstr_error=__c_unstr_error, __c_unstr_job=__c_unstr_job, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):\n  res = {\n    'attempt': instance.attempt,\n    'until': instance.until,\n    'error': __c_unstr_error(instance.error),\n    'job': __c_unstr_job(instance.job),\n    'rounds': instance.rounds,\n  }\n  if instance.notes != __c_def_notes:\n    res['notes'] = __c_unstr_notes(instance.notes)\n  return res"),
    ('variant', 'durable.tasks.generation.records.Retry'): (_v_durable_tasks_generation_records_Retry, ('attempt', 'until', 'error', 'job', 'rounds', 'notes'),
        "def structure_Retry(o, _=__cl, __cl=__cl, __c_structure_attempt=__c_structure_attempt, __c_structure_until=__c_structure_until, __c_structure_error=__c_structure_error, __c_type_error=__c_type_error, __c_structure_job=__c_structure_job, __c_type_job=__c_type_job, __c_structure_rounds=__c_structure_rounds, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):\n  res = {}\n  if 'job' in o:\n    res['job'] = __c_structure_job(o['job'], __c_type_job)\n  if 'rounds' in o:\n    res['rounds'] = __c_structure_rounds(o['rounds'])\n  if 'notes' in o:\n    res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)\n  return __cl(\n    __c_structure_attempt(o['attempt']),\n    __c_structure_until(o['until']),\n    __c_structure_error(o['error'], __c_type_error),\n    **res,\n  )"),
    ('structure', 'durable.tasks.generation.records.RunNotes'): (_s_durable_tasks_generation_records_RunNotes, ('instructions', 'output_retries', 'model'),
        "def structure_RunNotes(o, _=__cl, __cl=__cl, __c_structure_instructions=__c_structure_instructions, __c_type_instructions=__c_type_instructions, __c_structure_output_retries=__c_structure_output_retries, __c_structure_model=__c_structure_model):\n  res = {}\n  if 'instructions' in o:\n    res['instructions'] = __c_structure_instructions(o['instructions'], __c_type_instructions)\n  if 'output_retries' in o:\n    res['output_retries'] = __c_structure_output_retries(o['output_retries'])\n  if 'model' in o:\n    res['model'] = __c_structure_model(o['model'])\n  unknown_fields = set(o.keys()) - __c_a\n  if unknown_fields:\n    raise __c_feke('', __cl, unknown_fields)\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.generation.records.RunNotes'): (_u_durable_tasks_generation_records_RunNotes, ('instructions', 'output_retries', 'model'),
        "def unstructure_RunNotes(instance, __c_unstr_instructions=__c_unstr_instructions, __c_def_instructions=__c_def_instructions, __c_def_output_retries=__c_def_output_retries, __c_def_model=__c_def_model):\n  res = {\n  }\n  if instance.instructions != __c_def_instructions:\n    res['instructions'] = __c_unstr_instructions(instance.instructions)\n  if instance.output_retries != __c_def_output_retries:\n    res['output_retries'] = instance.output_retries\n  if instance.model != __c_def_model:\n    res['model'] = instance.model\n  return res"),
    ('unstructure', 'durable.tasks.generation.records.ToolRound'): (_u_durable_tasks_generation_records_ToolRound, ('assistant_seq', 'calls', 'pending', 'round', 'notes'),
        "def unstructure_ToolRound(instance, __c_unstr_calls=__c_unstr_calls, __c_unstr_pending=__c_unstr_pending, __c_unstr_notes=__c_unstr_notes, __c_def_notes=__c_def_notes):\n  res = {\n    'assistant_seq': instance.assistant_seq,\n    'calls': __c_unstr_calls(instance.calls),\n    'pending': __c_unstr_pending(instance.pending),\n    'round': instance.round,\n  }\n  if instance.notes != __c_def_notes:\n    res['notes'] = __c_unstr_notes(instance.notes)\n  return res"),
    ('variant', 'durable.tasks.generation.records.ToolRound'): (_v_durable_tasks_generation_records_ToolRound, ('assistant_seq', 'calls', 'pending', 'round', 'notes'),
        "def structure_ToolRound(o, _=__cl, __cl=__cl, __c_structure_assistant_seq=__c_structure_assistant_seq, __c_structure_calls=__c_structure_calls, __c_type_calls=__c_type_calls, __c_structure_pending=__c_structure_pending, __c_type_pending=__c_type_pending, __c_structure_round=__c_structure_round, __c_structure_notes=__c_structure_notes, __c_type_notes=__c_type_notes):\n  res = {}\n  if 'round' in o:\n    res['round'] = __c_structure_round(o['round'])\n  if 'notes' in o:\n    res['notes'] = __c_structure_notes(o['notes'], __c_type_notes)\n  return __cl(\n    __c_structure_assistant_seq(o['assistant_seq']),\n    __c_structure_calls(o['calls'], __c_type_calls),\n    __c_structure_pending(o['pending'], __c_type_pending),\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.tool.records.Approval'): (_u_durable_tasks_tool_records_Approval, ('since', 'deadline', 'parameters'),
        "def unstructure_Approval(instance, __c_unstr_deadline=__c_unstr_deadline, __c_unstr_parameters=__c_unstr_parameters, __c_def_parameters=__c_def_parameters):\n  res = {\n    'since': instance.since,\n    'deadline': __c_unstr_deadline(instance.deadline),\n  }\n  if instance.parameters != __c_def_parameters:\n    res['parameters'] = __c_unstr_parameters(instance.parameters)\n  return res"),
    ('variant', 'durable.tasks.tool.records.Approval'): (_v_durable_tasks_tool_records_Approval, ('since', 'deadline', 'parameters'),
        "def structure_Approval(o, _=__cl, __cl=__cl, __c_structure_since=__c_structure_since, __c_structure_deadline=__c_structure_deadline, __c_type_deadline=__c_type_deadline, __c_structure_parameters=__c_structure_parameters, __c_type_parameters=__c_type_parameters):\n  res = {}\n  if 'deadline' in o:\n    res['deadline'] = __c_structure_deadline(o['deadline'], __c_type_deadline)\n  if 'parameters' in o:\n    res['parameters'] = __c_structure_parameters(o['parameters'], __c_type_parameters)\n  return __cl(\n    __c_structure_since(o['since']),\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.tool.records.ToolInput'): (_u_durable_tasks_tool_records_ToolInput, ('call', 'replay', 'client', 'deadline', 'timeout'),
        "def unstructure_ToolInput(instance, __c_unstr_call=__c_unstr_call, __c_unstr_deadline=__c_unstr_deadline, __c_unstr_timeout=__c_unstr_timeout):\n  res = {\n    'call': __c_unstr_call(instance.call),\n    'replay': instance.replay,\n    'client': instance.client,\n    'deadline': __c_unstr_deadline(instance.deadline),\n    'timeout': __c_unstr_timeout(instance.timeout),\n  }\n  return res"),
    ('variant', 'durable.tasks.tool.records.ToolInput'): (_v_durable_tasks_tool_records_ToolInput, ('call', 'replay', 'client', 'deadline', 'timeout'),
        "def structure_ToolInput(o, _=__cl, __cl=__cl, __c_structure_call=__c_structure_call, __c_type_call=__c_type_call, __c_structure_replay=__c_structure_replay, __c_type_replay=__c_type_replay, __c_structure_client=__c_structure_client, __c_structure_deadline=__c_structure_deadline, __c_type_deadline=__c_type_deadline, __c_structure_timeout=__c_structure_timeout, __c_type_timeout=__c_type_timeout):\n  res = {}\n  if 'replay' in o:\n    res['replay'] = __c_structure_replay(o['replay'], __c_type_replay)\n  if 'client' in o:\n    res['client'] = __c_structure_client(o['client'])\n  if 'deadline' in o:\n    res['deadline'] = __c_structure_deadline(o['deadline'], __c_type_deadline)\n  if 'timeout' in o:\n    res['timeout'] = __c_structure_timeout(o['timeout'], __c_type_timeout)\n  return __cl(\n    __c_structure_call(o['call'], __c_type_call),\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.tool.records.ToolProgress'): (_u_durable_tasks_tool_records_ToolProgress, ('output', 'result', 'started', 'started_at', 'ended_at', 'arguments', 'paused'),
        "def unstructure_ToolProgress(instance, __c_unstr_result=__c_unstr_result, __c_unstr_started_at=__c_unstr_started_at, __c_unstr_ended_at=__c_unstr_ended_at, __c_unstr_arguments=__c_unstr_arguments, __c_def_paused=__c_def_paused):\n  res = {\n    'output': instance.output,\n    'result': __c_unstr_result(instance.result),\n    'started': instance.started,\n    'started_at': __c_unstr_started_at(instance.started_at),\n    'ended_at': __c_unstr_ended_at(instance.ended_at),\n    'arguments': __c_unstr_arguments(instance.arguments),\n  }\n  if instance.paused != __c_def_paused:\n    res['paused'] = instance.paused\n  return res"),
    ('variant', 'durable.tasks.tool.records.ToolProgress'): (_v_durable_tasks_tool_records_ToolProgress, ('output', 'result', 'started', 'started_at', 'ended_at', 'arguments', 'paused'),
        "def structure_ToolProgress(o, _=__cl, __cl=__cl, __c_structure_output=__c_structure_output, __c_structure_result=__c_structure_result, __c_type_result=__c_type_result, __c_structure_started=__c_structure_started, __c_structure_started_at=__c_structure_started_at, __c_type_started_at=__c_type_started_at, __c_structure_ended_at=__c_structure_ended_at, __c_type_ended_at=__c_type_ended_at, __c_structure_arguments=__c_structure_arguments, __c_type_arguments=__c_type_arguments, __c_structure_paused=__c_structure_paused):\n  res = {}\n  if 'output' in o:\n    res['output'] = __c_structure_output(o['output'])\n  if 'result' in o:\n    res['result'] = __c_structure_result(o['result'], __c_type_result)\n  if 'started' in o:\n    res['started'] = __c_structure_started(o['started'])\n  if 'started_at' in o:\n    res['started_at'] = __c_structure_started_at(o['started_at'], __c_type_started_at)\n  if 'ended_at' in o:\n    res['ended_at'] = __c_structure_ended_at(o['ended_at'], __c_type_ended_at)\n  if 'arguments' in o:\n    res['arguments'] = __c_structure_arguments(o['arguments'], __c_type_arguments)\n  if 'paused' in o:\n    res['paused'] = __c_structure_paused(o['paused'])\n  return __cl(\n    **res,\n  )"),
    ('unstructure', 'durable.tasks.tool.subagent.Delegated'): (_u_durable_tasks_tool_subagent_Delegated, ('conversation_id', 'submission_id', 'since'),
        "def unstructure_Delegated(instance):\n  res = {\n    'conversation_id': instance.conversation_id,\n    'submission_id': instance.submission_id,\n    'since': instance.since,\n  }\n  return res"),
    ('variant', 'durable.tasks.tool.subagent.Delegated'): (_v_durable_tasks_tool_subagent_Delegated, ('conversation_id', 'submission_id', 'since'),
        "def structure_Delegated(o, _=__cl, __cl=__cl, __c_structure_conversation_id=__c_structure_conversation_id, __c_structure_submission_id=__c_structure_submission_id, __c_structure_since=__c_structure_since):\n  return __cl(\n    __c_structure_conversation_id(o['conversation_id']),\n    __c_structure_submission_id(o['submission_id']),\n    __c_structure_since(o['since']),\n  )"),
}
