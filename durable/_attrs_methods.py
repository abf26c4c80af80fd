"""attrs 26.1.0's methods of durable's classes, written by `python scripts/attrs_methods.py`: do not edit.

Each function holds the source attrs generates for a class (its `__init__`...) and returns the
functions it defines; `METHODS` maps the source to it. See `durable._frozen`.
"""

# ruff: noqa
# mypy: ignore-errors
# fmt: off


def _0_durable_engine_harness_Wake():
    def __init__(self, active, next_timer):
        _setattr = _cached_setattr_get(self)
        _setattr('active', active)
        _setattr('next_timer', next_timer)

    return {'__init__': __init__}


def _1_durable_engine_head_ConversationHead():
    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return  (
            self.id == other.id and
            self.last_seq == other.last_seq and
            self.live == other.live and
            self.committed_live == other.committed_live and
            self.compaction == other.compaction and
            self._context == other._context and
            self.queued == other.queued and
            self.context_loaded == other.context_loaded and
            self.stored == other.stored
        )
    def __init__(self, id, last_seq=attr_dict['last_seq'].default, live=attr_dict['live'].default, committed_live=attr_dict['committed_live'].default, compaction=attr_dict['compaction'].default, context=attr_dict['_context'].default, queued=NOTHING, context_loaded=attr_dict['context_loaded'].default, stored=attr_dict['stored'].default):
        self.id = id
        self.last_seq = last_seq
        self.live = live
        self.committed_live = committed_live
        self.compaction = compaction
        self._context = context
        if queued is not NOTHING:
            self.queued = queued
        else:
            self.queued = __attr_factory_queued()
        self.context_loaded = context_loaded
        self.stored = stored

    return {'__eq__': __eq__, '__init__': __init__}


def _2_durable_engine_instructions_PrepareContext():
    def __init__(self, conversation_id, task_id, inputs, submission_ids, deps, now):
        _setattr = _cached_setattr_get(self)
        _setattr('conversation_id', conversation_id)
        _setattr('task_id', task_id)
        _setattr('inputs', inputs)
        _setattr('submission_ids', submission_ids)
        _setattr('deps', deps)
        _setattr('now', now)

    return {'__init__': __init__}


def _3_durable_engine_kinds_Resumed():
    def __init__(self, task, reason, detail):
        _setattr = _cached_setattr_get(self)
        _setattr('task', task)
        _setattr('reason', reason)
        _setattr('detail', detail)

    return {'__init__': __init__}


def _4_durable_engine_reports_ErrorReport():
    def __init__(self, message, task=attr_dict['task'].default, raw=attr_dict['raw'].default, topic=attr_dict['topic'].default, type=attr_dict['type'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('message', message)
        _setattr('task', task)
        _setattr('raw', raw)
        _setattr('topic', topic)
        _setattr('type', type)

    return {'__init__': __init__}


def _5_durable_engine_reports_ModelFallback():
    def __init__(self, task, from_model, to_model, attempt, error, type=attr_dict['type'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('task', task)
        _setattr('from_model', from_model)
        _setattr('to_model', to_model)
        _setattr('attempt', attempt)
        _setattr('error', error)
        _setattr('type', type)

    return {'__init__': __init__}


def _6_durable_engine_reports_TaskFaulted():
    def __init__(self, task, reason, detail=attr_dict['detail'].default, type=attr_dict['type'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('task', task)
        _setattr('reason', reason)
        _setattr('detail', detail)
        _setattr('type', type)

    return {'__init__': __init__}


def _7_durable_engine_reports_TaskInterrupted():
    def __init__(self, task, reason, restarts, detail=attr_dict['detail'].default, type=attr_dict['type'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('task', task)
        _setattr('reason', reason)
        _setattr('restarts', restarts)
        _setattr('detail', detail)
        _setattr('type', type)

    return {'__init__': __init__}


def _8_durable_engine_reports_TaskRef():
    def __init__(self, id, kind, conversation_id):
        _setattr = _cached_setattr_get(self)
        _setattr('id', id)
        _setattr('kind', kind)
        _setattr('conversation_id', conversation_id)

    return {'__init__': __init__}


def _9_durable_engine_stream_events_ApprovalRequestedEvent():
    def __init__(self, call_id, tool, arguments, deadline=attr_dict['deadline'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('call_id', call_id)
        _setattr('tool', tool)
        _setattr('arguments', arguments)
        _setattr('deadline', deadline)

    return {'__init__': __init__}


def _10_durable_engine_stream_events_AttemptRestartedEvent():
    def __init__(self, attempt):
        _setattr = _cached_setattr_get(self)
        _setattr('attempt', attempt)

    return {'__init__': __init__}


def _11_durable_engine_stream_events_RetryWaitingEvent():
    def __init__(self, retry):
        _setattr = _cached_setattr_get(self)
        _setattr('retry', retry)

    return {'__init__': __init__}


def _12_durable_engine_stream_events_SettledEvent():
    def __init__(self, status):
        _setattr = _cached_setattr_get(self)
        _setattr('status', status)

    return {'__init__': __init__}


def _13_durable_engine_stream_events_ToolCallEndedEvent():
    def __init__(self, call_id, name, content, is_error=attr_dict['is_error'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('call_id', call_id)
        _setattr('name', name)
        _setattr('content', content)
        _setattr('is_error', is_error)

    return {'__init__': __init__}


def _14_durable_engine_stream_events_ToolCallStartedEvent():
    def __init__(self, call_id, name, arguments):
        _setattr = _cached_setattr_get(self)
        _setattr('call_id', call_id)
        _setattr('name', name)
        _setattr('arguments', arguments)

    return {'__init__': __init__}


def _15_durable_engine_stream_events_ToolOutputEvent():
    def __init__(self, call_id, name, text):
        _setattr = _cached_setattr_get(self)
        _setattr('call_id', call_id)
        _setattr('name', name)
        _setattr('text', text)

    return {'__init__': __init__}


def _16_durable_engine_transitions_Transitions():
    def __init__(self, start, moves):
        _setattr = _cached_setattr_get(self)
        _setattr('start', __attr_converter_start(start))
        _setattr('moves', __attr_converter_moves(moves))

    return {'__init__': __init__}


def _17_durable_models_faux_Error():
    def __init__(self, message, kind=attr_dict['kind'].default, status_code=attr_dict['status_code'].default, retry_after=attr_dict['retry_after'].default, partial=attr_dict['partial'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('message', message)
        _setattr('kind', kind)
        _setattr('status_code', status_code)
        _setattr('retry_after', retry_after)
        _setattr('partial', partial)

    return {'__init__': __init__}


def _18_durable_models_faux_ErrorStop():
    def __init__(self, message, partial=attr_dict['partial'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('message', message)
        _setattr('partial', partial)

    return {'__init__': __init__}


def _19_durable_models_faux_Hang():
    def __init__(self, partial=attr_dict['partial'].default, reasoning=attr_dict['reasoning'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('partial', partial)
        _setattr('reasoning', reasoning)

    return {'__init__': __init__}


def _20_durable_models_faux_Reply():
    def __init__(self, text=attr_dict['text'].default, tool_calls=attr_dict['tool_calls'].default, stop_reason=attr_dict['stop_reason'].default, usage=attr_dict['usage'].default, reasoning=attr_dict['reasoning'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('text', text)
        _setattr('tool_calls', tool_calls)
        _setattr('stop_reason', stop_reason)
        _setattr('usage', usage)
        _setattr('reasoning', reasoning)

    return {'__init__': __init__}


def _21_durable_models_faux__Job():
    def __init__(self, step, fetches_needed, settings=attr_dict['settings'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('step', step)
        _setattr('fetches_needed', fetches_needed)
        _setattr('settings', settings)

    return {'__init__': __init__}


def _22_durable_models_protocol_DeferredHandle():
    def __init__(self, id, poll_after=attr_dict['poll_after'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('id', id)
        _setattr('poll_after', poll_after)

    return {'__init__': __init__}


def _23_durable_models_protocol_FinalMessage():
    def __init__(self, text, stop_reason, tool_calls=attr_dict['tool_calls'].default, usage=attr_dict['usage'].default, error=attr_dict['error'].default, reasoning=attr_dict['reasoning'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('text', text)
        _setattr('stop_reason', stop_reason)
        _setattr('tool_calls', tool_calls)
        _setattr('usage', usage)
        _setattr('error', error)
        _setattr('reasoning', reasoning)

    return {'__init__': __init__}


def _24_durable_models_protocol_ModelRequest():
    def __init__(self, system, messages, tools=attr_dict['tools'].default, options=NOTHING, attempt=attr_dict['attempt'].default, key=attr_dict['key'].default, output=attr_dict['output'].default, attachments=NOTHING, settings=attr_dict['settings'].default, cache_key=attr_dict['cache_key'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('system', system)
        _setattr('messages', messages)
        _setattr('tools', tools)
        if options is not NOTHING:
            _setattr('options', options)
        else:
            _setattr('options', __attr_factory_options())
        _setattr('attempt', attempt)
        _setattr('key', key)
        _setattr('output', output)
        if attachments is not NOTHING:
            _setattr('attachments', attachments)
        else:
            _setattr('attachments', __attr_factory_attachments())
        _setattr('settings', settings)
        _setattr('cache_key', cache_key)

    return {'__init__': __init__}


def _25_durable_models_protocol_StillRunning():
    def __init__(self, poll_after=attr_dict['poll_after'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('poll_after', poll_after)

    return {'__init__': __init__}


def _26_durable_models_protocol_ToolCallEvent():
    def __init__(self, call):
        _setattr = _cached_setattr_get(self)
        _setattr('call', call)

    return {'__init__': __init__}


def _27_durable_models_protocol_ToolSpec():
    def __init__(self, name, description, parameters=NOTHING):
        _setattr = _cached_setattr_get(self)
        _setattr('name', name)
        _setattr('description', description)
        if parameters is not NOTHING:
            _setattr('parameters', parameters)
        else:
            _setattr('parameters', __attr_factory_parameters())

    return {'__init__': __init__}


def _28_durable_models_protocol_UsageEvent():
    def __init__(self, usage):
        _setattr = _cached_setattr_get(self)
        _setattr('usage', usage)

    return {'__init__': __init__}


def _29_durable_prices_Price():
    def __init__(self, input, output, cache_read=attr_dict['cache_read'].default, cache_write=attr_dict['cache_write'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('input', input)
        _setattr('output', output)
        _setattr('cache_read', cache_read)
        _setattr('cache_write', cache_write)

    return {'__init__': __init__}


def _30_durable_records_content_Attachment():
    def __init__(self, kind, sha256, media_type, size, name=attr_dict['name'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('kind', kind)
        _setattr('sha256', sha256)
        _setattr('media_type', media_type)
        _setattr('size', size)
        _setattr('name', name)

    return {'__init__': __init__}


def _31_durable_records_content_TextPart():
    def __init__(self, text):
        _setattr = _cached_setattr_get(self)
        _setattr('text', text)

    return {'__init__': __init__}


def _32_durable_records_entries_AssistantEntry():
    def __init__(self, text, stop_reason, tool_calls=attr_dict['tool_calls'].default, usage=attr_dict['usage'].default, error=attr_dict['error'].default, attempt=attr_dict['attempt'].default, interrupted=attr_dict['interrupted'].default, reasoning=attr_dict['reasoning'].default, model=attr_dict['model'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('text', text)
        _setattr('stop_reason', stop_reason)
        _setattr('tool_calls', tool_calls)
        _setattr('usage', usage)
        _setattr('error', error)
        _setattr('attempt', attempt)
        _setattr('interrupted', interrupted)
        _setattr('reasoning', reasoning)
        _setattr('model', model)

    return {'__init__': __init__}


def _33_durable_records_entries_CompactionEntry():
    def __init__(self, summary, first_kept_seq, usage=attr_dict['usage'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('summary', summary)
        _setattr('first_kept_seq', first_kept_seq)
        _setattr('usage', usage)

    return {'__init__': __init__}


def _34_durable_records_entries_Diagnostic():
    def __init__(self, severity, code, message):
        _setattr = _cached_setattr_get(self)
        _setattr('severity', severity)
        _setattr('code', code)
        _setattr('message', message)

    return {'__init__': __init__}


def _35_durable_records_entries_Reasoning():
    def __init__(self, text=attr_dict['text'].default, format=attr_dict['format'].default, signature=attr_dict['signature'].default, redacted=attr_dict['redacted'].default, id=attr_dict['id'].default, encrypted=attr_dict['encrypted'].default, summary=attr_dict['summary'].default, partial=attr_dict['partial'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('text', text)
        _setattr('format', format)
        _setattr('signature', signature)
        _setattr('redacted', redacted)
        _setattr('id', id)
        _setattr('encrypted', encrypted)
        _setattr('summary', summary)
        _setattr('partial', partial)

    return {'__init__': __init__}


def _36_durable_records_entries_StoredEntry():
    def __init__(self, conversation_id, seq, entry):
        _setattr = _cached_setattr_get(self)
        _setattr('conversation_id', conversation_id)
        _setattr('seq', seq)
        _setattr('entry', entry)

    return {'__init__': __init__}


def _37_durable_records_entries_ToolCall():
    def __init__(self, id, name, arguments):
        _setattr = _cached_setattr_get(self)
        _setattr('id', id)
        _setattr('name', name)
        _setattr('arguments', arguments)

    return {'__init__': __init__}


def _38_durable_records_entries_ToolResultEntry():
    def __init__(self, call_id, tool_name, content, is_error=attr_dict['is_error'].default, diagnostics=attr_dict['diagnostics'].default, parts=attr_dict['parts'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('call_id', call_id)
        _setattr('tool_name', tool_name)
        _setattr('content', content)
        _setattr('is_error', is_error)
        _setattr('diagnostics', diagnostics)
        _setattr('parts', parts)

    return {'__init__': __init__}


def _39_durable_records_entries_Usage():
    def __init__(self, input_tokens=attr_dict['input_tokens'].default, output_tokens=attr_dict['output_tokens'].default, reasoning_tokens=attr_dict['reasoning_tokens'].default, cache_read_tokens=attr_dict['cache_read_tokens'].default, cache_write_tokens=attr_dict['cache_write_tokens'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('input_tokens', input_tokens)
        _setattr('output_tokens', output_tokens)
        _setattr('reasoning_tokens', reasoning_tokens)
        _setattr('cache_read_tokens', cache_read_tokens)
        _setattr('cache_write_tokens', cache_write_tokens)

    return {'__init__': __init__}


def _40_durable_records_entries_UserEntry():
    def __init__(self, text, submission_id=attr_dict['submission_id'].default, parts=attr_dict['parts'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('text', text)
        _setattr('submission_id', submission_id)
        _setattr('parts', parts)

    return {'__init__': __init__}


def _41_durable_records_live_ApprovalSlot():
    def __init__(self, call_id, tool, arguments, task_id, since, deadline=attr_dict['deadline'].default, parameters=attr_dict['parameters'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('call_id', call_id)
        _setattr('tool', tool)
        _setattr('arguments', arguments)
        _setattr('task_id', task_id)
        _setattr('since', since)
        _setattr('deadline', deadline)
        _setattr('parameters', parameters)

    return {'__init__': __init__}


def _42_durable_records_live_CompactionFailure():
    def __init__(self, task_id, trigger, error):
        _setattr = _cached_setattr_get(self)
        _setattr('task_id', task_id)
        _setattr('trigger', trigger)
        _setattr('error', error)

    return {'__init__': __init__}


def _43_durable_records_live_ConversationInfo():
    def __init__(self, id, entries=attr_dict['entries'].default, archived=attr_dict['archived'].default, busy=attr_dict['busy'].default, forked_from=attr_dict['forked_from'].default, forked_at=attr_dict['forked_at'].default, parent=attr_dict['parent'].default, compactions=attr_dict['compactions'].default, usage=attr_dict['usage'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('id', id)
        _setattr('entries', entries)
        _setattr('archived', archived)
        _setattr('busy', busy)
        _setattr('forked_from', forked_from)
        _setattr('forked_at', forked_at)
        _setattr('parent', parent)
        _setattr('compactions', compactions)
        _setattr('usage', usage)

    return {'__init__': __init__}


def _44_durable_records_live_DeferredLive():
    def __init__(self, poll_at):
        _setattr = _cached_setattr_get(self)
        _setattr('poll_at', poll_at)

    return {'__init__': __init__}


def _45_durable_records_live_GenerationLive():
    def __init__(self, attempt, message=attr_dict['message'].default, retry=attr_dict['retry'].default, deferred=attr_dict['deferred'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('attempt', attempt)
        _setattr('message', message)
        _setattr('retry', retry)
        _setattr('deferred', deferred)

    return {'__init__': __init__}


def _46_durable_records_live_Live():
    def __init__(self, run=attr_dict['run'].default, generation=attr_dict['generation'].default, tools=attr_dict['tools'].default, approvals=attr_dict['approvals'].default, run_failure=attr_dict['run_failure'].default, compaction_failure=attr_dict['compaction_failure'].default, compactions=attr_dict['compactions'].default, usage=attr_dict['usage'].default, archived=attr_dict['archived'].default, forked_from=attr_dict['forked_from'].default, forked_at=attr_dict['forked_at'].default, parent=attr_dict['parent'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('run', run)
        _setattr('generation', generation)
        _setattr('tools', tools)
        _setattr('approvals', approvals)
        _setattr('run_failure', run_failure)
        _setattr('compaction_failure', compaction_failure)
        _setattr('compactions', compactions)
        _setattr('usage', usage)
        _setattr('archived', archived)
        _setattr('forked_from', forked_from)
        _setattr('forked_at', forked_at)
        _setattr('parent', parent)

    return {'__init__': __init__}


def _47_durable_records_live_ParentCall():
    def __init__(self, conversation_id, task_id, call_id, agent, depth=attr_dict['depth'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('conversation_id', conversation_id)
        _setattr('task_id', task_id)
        _setattr('call_id', call_id)
        _setattr('agent', agent)
        _setattr('depth', depth)

    return {'__init__': __init__}


def _48_durable_records_live_PartialMessage():
    def __init__(self, text=attr_dict['text'].default, tool_calls=attr_dict['tool_calls'].default, usage=attr_dict['usage'].default, reasoning=attr_dict['reasoning'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('text', text)
        _setattr('tool_calls', tool_calls)
        _setattr('usage', usage)
        _setattr('reasoning', reasoning)

    return {'__init__': __init__}


def _49_durable_records_live_RetryLive():
    def __init__(self, attempt, at, error, kind, provider=attr_dict['provider'].default, status_code=attr_dict['status_code'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('attempt', attempt)
        _setattr('at', at)
        _setattr('error', error)
        _setattr('kind', kind)
        _setattr('provider', provider)
        _setattr('status_code', status_code)

    return {'__init__': __init__}


def _50_durable_records_live_Run():
    def __init__(self, task_id, inputs, usage=attr_dict['usage'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('task_id', task_id)
        _setattr('inputs', inputs)
        _setattr('usage', usage)

    return {'__init__': __init__}


def _51_durable_records_live_RunFailure():
    def __init__(self, task_id, inputs, reason, detail, first=attr_dict['first'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('task_id', task_id)
        _setattr('inputs', inputs)
        _setattr('reason', reason)
        _setattr('detail', detail)
        _setattr('first', first)

    return {'__init__': __init__}


def _52_durable_records_live_ToolSlot():
    def __init__(self, call_id, name, task_id, output=attr_dict['output'].default, status=attr_dict['status'].default, conversation=attr_dict['conversation'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('call_id', call_id)
        _setattr('name', name)
        _setattr('task_id', task_id)
        _setattr('output', output)
        _setattr('status', status)
        _setattr('conversation', conversation)

    return {'__init__': __init__}


def _53_durable_records_model_settings_ModelSettings():
    def __init__(self, temperature=attr_dict['temperature'].default, top_p=attr_dict['top_p'].default, max_tokens=attr_dict['max_tokens'].default, stop=attr_dict['stop'].default, seed=attr_dict['seed'].default, reasoning_effort=attr_dict['reasoning_effort'].default, thinking_budget=attr_dict['thinking_budget'].default, tool_choice=attr_dict['tool_choice'].default, parallel_tool_calls=attr_dict['parallel_tool_calls'].default, service_tier=attr_dict['service_tier'].default, prompt_cache=attr_dict['prompt_cache'].default, extra=attr_dict['extra'].default, model=attr_dict['model'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('temperature', temperature)
        _setattr('top_p', top_p)
        _setattr('max_tokens', max_tokens)
        _setattr('stop', __attr_converter_stop(stop))
        _setattr('seed', seed)
        _setattr('reasoning_effort', reasoning_effort)
        _setattr('thinking_budget', thinking_budget)
        _setattr('tool_choice', tool_choice)
        _setattr('parallel_tool_calls', parallel_tool_calls)
        _setattr('service_tier', service_tier)
        _setattr('prompt_cache', prompt_cache)
        _setattr('extra', extra)
        _setattr('model', model)
        self.__attrs_post_init__()

    return {'__init__': __init__}


def _54_durable_records_submissions_Answered():
    def __init__(self, text=attr_dict['text'].default, seq=attr_dict['seq'].default, output=attr_dict['output'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('text', text)
        _setattr('seq', seq)
        _setattr('output', output)

    return {'__init__': __init__}


def _55_durable_records_submissions_Queued():
    def __init__(self, ):
        _setattr = _cached_setattr_get(self)

    return {'__init__': __init__}


def _56_durable_records_submissions_Submission():
    def __init__(self, id, conversation_id, text, seq=attr_dict['seq'].default, status=attr_dict['status'].default, task_id=attr_dict['task_id'].default, created_at=attr_dict['created_at'].default, output=attr_dict['output'].default, parts=attr_dict['parts'].default, model_settings=attr_dict['model_settings'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('id', id)
        _setattr('conversation_id', conversation_id)
        _setattr('text', text)
        _setattr('seq', seq)
        _setattr('status', status)
        _setattr('task_id', task_id)
        _setattr('created_at', created_at)
        _setattr('output', output)
        _setattr('parts', parts)
        _setattr('model_settings', model_settings)

    return {'__init__': __init__}


def _57_durable_records_submissions_Unanswered():
    def __init__(self, reason, detail):
        _setattr = _cached_setattr_get(self)
        _setattr('reason', reason)
        _setattr('detail', detail)

    return {'__init__': __init__}


def _58_durable_records_tasks_DeferredJob():
    def __init__(self, key, handle=attr_dict['handle'].default, model=attr_dict['model'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('key', key)
        _setattr('handle', handle)
        _setattr('model', model)

    return {'__init__': __init__}


def _59_durable_records_tasks_Done():
    def __init__(self, result=attr_dict['result'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('result', result)

    return {'__init__': __init__}


def _60_durable_records_tasks_ErrorDetail():
    def __init__(self, reason):
        _setattr = _cached_setattr_get(self)
        _setattr('reason', reason)

    return {'__init__': __init__}


def _61_durable_records_tasks_ErrorInfo():
    def __init__(self, message, detail):
        _setattr = _cached_setattr_get(self)
        _setattr('message', message)
        _setattr('detail', detail)

    return {'__init__': __init__}


def _62_durable_records_tasks_Failed():
    def __init__(self, error):
        _setattr = _cached_setattr_get(self)
        _setattr('error', error)

    return {'__init__': __init__}


def _63_durable_records_tasks_Sleeping():
    def __init__(self, until):
        _setattr = _cached_setattr_get(self)
        _setattr('until', until)

    return {'__init__': __init__}


def _64_durable_records_tasks_Task():
    def __init__(self, id, conversation_id, kind, input, state=attr_dict['state'].default, checkpoint=attr_dict['checkpoint'].default, restarts=attr_dict['restarts'].default, parent_id=attr_dict['parent_id'].default, stop=attr_dict['stop'].default, created_at=attr_dict['created_at'].default, updated_at=attr_dict['updated_at'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('id', id)
        _setattr('conversation_id', conversation_id)
        _setattr('kind', kind)
        _setattr('input', input)
        _setattr('state', state)
        _setattr('checkpoint', checkpoint)
        _setattr('restarts', restarts)
        _setattr('parent_id', parent_id)
        _setattr('stop', stop)
        _setattr('created_at', created_at)
        _setattr('updated_at', updated_at)

    return {'__init__': __init__}


def _65_durable_records_tasks_Terminal():
    def __init__(self, outcome):
        _setattr = _cached_setattr_get(self)
        _setattr('outcome', outcome)

    return {'__init__': __init__}


def _66_durable_records_tasks_Waiting():
    def __init__(self, on=attr_dict['on'].default, client=attr_dict['client'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('on', on)
        _setattr('client', client)

    return {'__init__': __init__}


def _67_durable_records_usage_ModelUsage():
    def __init__(self, model, requests=attr_dict['requests'].default, input_tokens=attr_dict['input_tokens'].default, output_tokens=attr_dict['output_tokens'].default, reasoning_tokens=attr_dict['reasoning_tokens'].default, cache_read_tokens=attr_dict['cache_read_tokens'].default, cache_write_tokens=attr_dict['cache_write_tokens'].default, cost=attr_dict['cost'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('model', model)
        _setattr('requests', requests)
        _setattr('input_tokens', input_tokens)
        _setattr('output_tokens', output_tokens)
        _setattr('reasoning_tokens', reasoning_tokens)
        _setattr('cache_read_tokens', cache_read_tokens)
        _setattr('cache_write_tokens', cache_write_tokens)
        _setattr('cost', cost)

    return {'__init__': __init__}


def _68_durable_records_usage_UsageTotals():
    def __init__(self, models=attr_dict['models'].default, tool_calls=attr_dict['tool_calls'].default, tool_seconds=attr_dict['tool_seconds'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('models', models)
        _setattr('tool_calls', tool_calls)
        _setattr('tool_seconds', tool_seconds)

    return {'__init__': __init__}


def _69_durable_settings_Compaction():
    def __init__(self, enabled=attr_dict['enabled'].default, threshold=attr_dict['threshold'].default, keep_last=attr_dict['keep_last'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('enabled', enabled)
        _setattr('threshold', threshold)
        _setattr('keep_last', keep_last)

    return {'__init__': __init__}


def _70_durable_settings_Progress():
    def __init__(self, persist_within=attr_dict['persist_within'].default, output_interval=attr_dict['output_interval'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('persist_within', persist_within)
        _setattr('output_interval', output_interval)

    return {'__init__': __init__}


def _71_durable_settings_RetryPolicy():
    def __init__(self, enabled=attr_dict['enabled'].default, max_retries=attr_dict['max_retries'].default, base_delay=attr_dict['base_delay'].default, max_delay=attr_dict['max_delay'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('enabled', enabled)
        _setattr('max_retries', max_retries)
        _setattr('base_delay', base_delay)
        _setattr('max_delay', max_delay)

    return {'__init__': __init__}


def _72_durable_settings_Settings():
    def __init__(self, retry=NOTHING, restart_limit=attr_dict['restart_limit'].default, progress=NOTHING, stream=NOTHING, client_tool_timeout=attr_dict['client_tool_timeout'].default, compaction=NOTHING, system_prompt=attr_dict['system_prompt'].default, when_busy=attr_dict['when_busy'].default, max_tool_rounds=attr_dict['max_tool_rounds'].default, check_integrity=attr_dict['check_integrity'].default, disk_full_patience=attr_dict['disk_full_patience'].default, model_options=NOTHING, approval_timeout=attr_dict['approval_timeout'].default, prepare_timeout=attr_dict['prepare_timeout'].default, output_retries=attr_dict['output_retries'].default, usage_limits=attr_dict['usage_limits'].default, conversation_usage_limits=attr_dict['conversation_usage_limits'].default, prices=attr_dict['prices'].default, max_attachment_bytes=attr_dict['max_attachment_bytes'].default, model_settings=attr_dict['model_settings'].default, subagent_depth=attr_dict['subagent_depth'].default, keep_idle_context=attr_dict['keep_idle_context'].default):
        _setattr = _cached_setattr_get(self)
        if retry is not NOTHING:
            _setattr('retry', retry)
        else:
            _setattr('retry', __attr_factory_retry())
        _setattr('restart_limit', restart_limit)
        if progress is not NOTHING:
            _setattr('progress', progress)
        else:
            _setattr('progress', __attr_factory_progress())
        if stream is not NOTHING:
            _setattr('stream', stream)
        else:
            _setattr('stream', __attr_factory_stream())
        _setattr('client_tool_timeout', client_tool_timeout)
        if compaction is not NOTHING:
            _setattr('compaction', compaction)
        else:
            _setattr('compaction', __attr_factory_compaction())
        _setattr('system_prompt', system_prompt)
        _setattr('when_busy', when_busy)
        _setattr('max_tool_rounds', max_tool_rounds)
        _setattr('check_integrity', check_integrity)
        _setattr('disk_full_patience', disk_full_patience)
        if model_options is not NOTHING:
            _setattr('model_options', model_options)
        else:
            _setattr('model_options', __attr_factory_model_options())
        _setattr('approval_timeout', approval_timeout)
        _setattr('prepare_timeout', prepare_timeout)
        _setattr('output_retries', output_retries)
        _setattr('usage_limits', usage_limits)
        _setattr('conversation_usage_limits', conversation_usage_limits)
        _setattr('prices', prices)
        _setattr('max_attachment_bytes', max_attachment_bytes)
        _setattr('model_settings', model_settings)
        _setattr('subagent_depth', subagent_depth)
        _setattr('keep_idle_context', keep_idle_context)
        self.__attrs_post_init__()

    return {'__init__': __init__}


def _73_durable_settings_StreamSettings():
    def __init__(self, deferred=attr_dict['deferred'].default, stream_silence=attr_dict['stream_silence'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('deferred', deferred)
        _setattr('stream_silence', stream_silence)

    return {'__init__': __init__}


def _74_durable_settings_UsageLimits():
    def __init__(self, request_limit=attr_dict['request_limit'].default, tool_calls_limit=attr_dict['tool_calls_limit'].default, input_tokens_limit=attr_dict['input_tokens_limit'].default, output_tokens_limit=attr_dict['output_tokens_limit'].default, total_tokens_limit=attr_dict['total_tokens_limit'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('request_limit', request_limit)
        _setattr('tool_calls_limit', tool_calls_limit)
        _setattr('input_tokens_limit', input_tokens_limit)
        _setattr('output_tokens_limit', output_tokens_limit)
        _setattr('total_tokens_limit', total_tokens_limit)
        self.__attrs_post_init__()

    return {'__init__': __init__}


def _75_durable_storage_protocol_Batch():
    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return  (
            self.tasks == other.tasks and
            self.entries == other.entries and
            self.submissions == other.submissions and
            self.live == other.live and
            self.barrier == other.barrier and
            self.inbox == other.inbox and
            self.first_in_line == other.first_in_line and
            self.copies == other.copies and
            self.attachments == other.attachments
        )
    def __init__(self, tasks=NOTHING, entries=NOTHING, submissions=NOTHING, live=NOTHING, barrier=attr_dict['barrier'].default, inbox=NOTHING, first_in_line=attr_dict['first_in_line'].default, copies=NOTHING, attachments=NOTHING):
        if tasks is not NOTHING:
            self.tasks = tasks
        else:
            self.tasks = __attr_factory_tasks()
        if entries is not NOTHING:
            self.entries = entries
        else:
            self.entries = __attr_factory_entries()
        if submissions is not NOTHING:
            self.submissions = submissions
        else:
            self.submissions = __attr_factory_submissions()
        if live is not NOTHING:
            self.live = live
        else:
            self.live = __attr_factory_live()
        self.barrier = barrier
        if inbox is not NOTHING:
            self.inbox = inbox
        else:
            self.inbox = __attr_factory_inbox()
        self.first_in_line = first_in_line
        if copies is not NOTHING:
            self.copies = copies
        else:
            self.copies = __attr_factory_copies()
        if attachments is not NOTHING:
            self.attachments = attachments
        else:
            self.attachments = __attr_factory_attachments()

    return {'__eq__': __eq__, '__init__': __init__}


def _76_durable_storage_protocol_ConversationState():
    def __init__(self, last_seq, live, last_compaction):
        _setattr = _cached_setattr_get(self)
        _setattr('last_seq', last_seq)
        _setattr('live', live)
        _setattr('last_compaction', last_compaction)

    return {'__init__': __init__}


def _77_durable_storage_protocol_EntryCopy():
    def __init__(self, source, target, to_seq):
        _setattr = _cached_setattr_get(self)
        _setattr('source', source)
        _setattr('target', target)
        _setattr('to_seq', to_seq)

    return {'__init__': __init__}


def _78_durable_storage_protocol_InboxDecision():
    def __init__(self, id, call_id, approve, arguments=attr_dict['arguments'].default, reason=attr_dict['reason'].default, created_at=attr_dict['created_at'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('id', id)
        _setattr('call_id', call_id)
        _setattr('approve', approve)
        _setattr('arguments', arguments)
        _setattr('reason', reason)
        _setattr('created_at', created_at)

    return {'__init__': __init__}


def _79_durable_storage_protocol_Opened():
    def __init__(self, conversations, live_tasks, unsettled, next_task_id, warnings=attr_dict['warnings'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('conversations', conversations)
        _setattr('live_tasks', live_tasks)
        _setattr('unsettled', unsettled)
        _setattr('next_task_id', next_task_id)
        _setattr('warnings', warnings)

    return {'__init__': __init__}


def _80_durable_storage_retention_Ended():
    def __init__(self, conversation_id, ended_at):
        _setattr = _cached_setattr_get(self)
        _setattr('conversation_id', conversation_id)
        _setattr('ended_at', ended_at)

    return {'__init__': __init__}


def _81_durable_storage_retention_PruneReport():
    def __init__(self, conversations=attr_dict['conversations'].default, rows=attr_dict['rows'].default, commits=attr_dict['commits'].default, reclaimed=attr_dict['reclaimed'].default, reclaimable=attr_dict['reclaimable'].default, attachments=attr_dict['attachments'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('conversations', conversations)
        _setattr('rows', rows)
        _setattr('commits', commits)
        _setattr('reclaimed', reclaimed)
        _setattr('reclaimable', reclaimable)
        _setattr('attachments', attachments)

    return {'__init__': __init__}


def _82_durable_storage_rows_EncodedBatch():
    def __init__(self, tasks, entries, submissions, live, barrier=attr_dict['barrier'].default, inbox=attr_dict['inbox'].default, texts=attr_dict['texts'].default, copies=attr_dict['copies'].default, attachments=attr_dict['attachments'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('tasks', tasks)
        _setattr('entries', entries)
        _setattr('submissions', submissions)
        _setattr('live', live)
        _setattr('barrier', barrier)
        _setattr('inbox', inbox)
        _setattr('texts', texts)
        _setattr('copies', copies)
        _setattr('attachments', attachments)

    return {'__init__': __init__}


def _83_durable_storage_rows_SessionRecords():
    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return  (
            self.location == other.location and
            self.tasks == other.tasks and
            self.entries == other.entries and
            self.submissions == other.submissions and
            self.live == other.live and
            self.problems == other.problems and
            self.attachments == other.attachments
        )
    def __init__(self, location, tasks=NOTHING, entries=NOTHING, submissions=NOTHING, live=NOTHING, problems=NOTHING, attachments=NOTHING):
        self.location = location
        if tasks is not NOTHING:
            self.tasks = tasks
        else:
            self.tasks = __attr_factory_tasks()
        if entries is not NOTHING:
            self.entries = entries
        else:
            self.entries = __attr_factory_entries()
        if submissions is not NOTHING:
            self.submissions = submissions
        else:
            self.submissions = __attr_factory_submissions()
        if live is not NOTHING:
            self.live = live
        else:
            self.live = __attr_factory_live()
        if problems is not NOTHING:
            self.problems = problems
        else:
            self.problems = __attr_factory_problems()
        if attachments is not NOTHING:
            self.attachments = attachments
        else:
            self.attachments = __attr_factory_attachments()

    return {'__eq__': __eq__, '__init__': __init__}


def _84_durable_storage_rows_StoredRows():
    def __init__(self, tasks=NOTHING, entries=NOTHING, submissions=NOTHING, documents=NOTHING, attachments=NOTHING):
        _setattr = _cached_setattr_get(self)
        if tasks is not NOTHING:
            _setattr('tasks', tasks)
        else:
            _setattr('tasks', __attr_factory_tasks())
        if entries is not NOTHING:
            _setattr('entries', entries)
        else:
            _setattr('entries', __attr_factory_entries())
        if submissions is not NOTHING:
            _setattr('submissions', submissions)
        else:
            _setattr('submissions', __attr_factory_submissions())
        if documents is not NOTHING:
            _setattr('documents', documents)
        else:
            _setattr('documents', __attr_factory_documents())
        if attachments is not NOTHING:
            _setattr('attachments', attachments)
        else:
            _setattr('attachments', __attr_factory_attachments())

    return {'__init__': __init__}


def _85_durable_storage_sqlite_reader_FileFacts():
    def __init__(self, path, size_bytes, wal_bytes, page_size, page_count, schema_version, journal_mode, conversations, entries, submissions, tasks, live_tasks, attachments=attr_dict['attachments'].default, attachment_bytes=attr_dict['attachment_bytes'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('path', path)
        _setattr('size_bytes', size_bytes)
        _setattr('wal_bytes', wal_bytes)
        _setattr('page_size', page_size)
        _setattr('page_count', page_count)
        _setattr('schema_version', schema_version)
        _setattr('journal_mode', journal_mode)
        _setattr('conversations', conversations)
        _setattr('entries', entries)
        _setattr('submissions', submissions)
        _setattr('tasks', tasks)
        _setattr('live_tasks', live_tasks)
        _setattr('attachments', attachments)
        _setattr('attachment_bytes', attachment_bytes)

    return {'__init__': __init__}


def _86_durable_tasks_cancel_CancelInput():
    def __init__(self, job, run_task_id, provider=attr_dict['provider'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('job', job)
        _setattr('run_task_id', run_task_id)
        _setattr('provider', provider)

    return {'__init__': __init__}


def _87_durable_tasks_compaction_CompactionInput():
    def __init__(self, trigger):
        _setattr = _cached_setattr_get(self)
        _setattr('trigger', trigger)

    return {'__init__': __init__}


def _88_durable_tasks_generation_records_AttemptFailure():
    def __init__(self, message, kind, provider=attr_dict['provider'].default, status_code=attr_dict['status_code'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('message', message)
        _setattr('kind', kind)
        _setattr('provider', provider)
        _setattr('status_code', status_code)

    return {'__init__': __init__}


def _89_durable_tasks_generation_records_GenerationInput():
    def __init__(self, submission_ids, settings=attr_dict['settings'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('submission_ids', submission_ids)
        _setattr('settings', settings)

    return {'__init__': __init__}


def _90_durable_tasks_generation_records_Poll():
    def __init__(self, attempt, job, poll_at, rounds=attr_dict['rounds'].default, notes=attr_dict['notes'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('attempt', attempt)
        _setattr('job', job)
        _setattr('poll_at', poll_at)
        _setattr('rounds', rounds)
        _setattr('notes', notes)

    return {'__init__': __init__}


def _91_durable_tasks_generation_records_Prepare():
    def __init__(self, attempt=attr_dict['attempt'].default, rounds=attr_dict['rounds'].default, notes=attr_dict['notes'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('attempt', attempt)
        _setattr('rounds', rounds)
        _setattr('notes', notes)

    return {'__init__': __init__}


def _92_durable_tasks_generation_records_Request():
    def __init__(self, attempt, options=NOTHING, rounds=attr_dict['rounds'].default, notes=attr_dict['notes'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('attempt', attempt)
        if options is not NOTHING:
            _setattr('options', options)
        else:
            _setattr('options', __attr_factory_options())
        _setattr('rounds', rounds)
        _setattr('notes', notes)

    return {'__init__': __init__}


def _93_durable_tasks_generation_records_Retry():
    def __init__(self, attempt, until, error, job=attr_dict['job'].default, rounds=attr_dict['rounds'].default, notes=attr_dict['notes'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('attempt', attempt)
        _setattr('until', until)
        _setattr('error', error)
        _setattr('job', job)
        _setattr('rounds', rounds)
        _setattr('notes', notes)

    return {'__init__': __init__}


def _94_durable_tasks_generation_records_RunNotes():
    def __init__(self, instructions=attr_dict['instructions'].default, output_retries=attr_dict['output_retries'].default, model=attr_dict['model'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('instructions', instructions)
        _setattr('output_retries', output_retries)
        _setattr('model', model)

    return {'__init__': __init__}


def _95_durable_tasks_generation_records_ToolRound():
    def __init__(self, assistant_seq, calls, pending, round=attr_dict['round'].default, notes=attr_dict['notes'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('assistant_seq', assistant_seq)
        _setattr('calls', calls)
        _setattr('pending', pending)
        _setattr('round', round)
        _setattr('notes', notes)

    return {'__init__': __init__}


def _96_durable_tasks_tool_records_Approval():
    def __init__(self, since, deadline=attr_dict['deadline'].default, parameters=attr_dict['parameters'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('since', since)
        _setattr('deadline', deadline)
        _setattr('parameters', parameters)

    return {'__init__': __init__}


def _97_durable_tasks_tool_records_ToolInput():
    def __init__(self, call, replay=attr_dict['replay'].default, client=attr_dict['client'].default, deadline=attr_dict['deadline'].default, timeout=attr_dict['timeout'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('call', call)
        _setattr('replay', replay)
        _setattr('client', client)
        _setattr('deadline', deadline)
        _setattr('timeout', timeout)

    return {'__init__': __init__}


def _98_durable_tasks_tool_records_ToolProgress():
    def __init__(self, output=attr_dict['output'].default, result=attr_dict['result'].default, started=attr_dict['started'].default, started_at=attr_dict['started_at'].default, ended_at=attr_dict['ended_at'].default, arguments=attr_dict['arguments'].default, paused=attr_dict['paused'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('output', output)
        _setattr('result', result)
        _setattr('started', started)
        _setattr('started_at', started_at)
        _setattr('ended_at', ended_at)
        _setattr('arguments', arguments)
        _setattr('paused', paused)

    return {'__init__': __init__}


def _99_durable_tasks_tool_subagent_Delegated():
    def __init__(self, conversation_id, submission_id, since):
        _setattr = _cached_setattr_get(self)
        _setattr('conversation_id', conversation_id)
        _setattr('submission_id', submission_id)
        _setattr('since', since)

    return {'__init__': __init__}


def _100_durable_tools_protocol_Tool():
    def __init__(self, name, description, parameters=NOTHING, replay=attr_dict['replay'].default, execute=attr_dict['execute'].default, client=attr_dict['client'].default, convert=attr_dict['convert'].default, validator=attr_dict['validator'].default, approval=attr_dict['approval'].default, max_retries=attr_dict['max_retries'].default, timeout=attr_dict['timeout'].default, threaded=attr_dict['threaded'].default, agent=attr_dict['agent'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('name', name)
        _setattr('description', description)
        if parameters is not NOTHING:
            _setattr('parameters', parameters)
        else:
            _setattr('parameters', __attr_factory_parameters())
        _setattr('replay', replay)
        _setattr('execute', execute)
        _setattr('client', client)
        _setattr('convert', convert)
        _setattr('validator', validator)
        _setattr('approval', approval)
        _setattr('max_retries', max_retries)
        _setattr('timeout', timeout)
        _setattr('threaded', threaded)
        _setattr('agent', agent)

    return {'__init__': __init__}


def _101_durable_tools_protocol_ToolContext():
    def __init__(self, task_id, call_id, conversation_id, attempt, deps):
        _setattr = _cached_setattr_get(self)
        _setattr('task_id', task_id)
        _setattr('call_id', call_id)
        _setattr('conversation_id', conversation_id)
        _setattr('attempt', attempt)
        _setattr('deps', deps)

    return {'__init__': __init__}


def _102_durable_tools_schema_TypedCall():
    def __init__(self, schema, convert, execute):
        _setattr = _cached_setattr_get(self)
        _setattr('schema', schema)
        _setattr('convert', convert)
        _setattr('execute', execute)

    return {'__init__': __init__}


def _103_durable_tools_subagent_Subagent():
    def __init__(self, name, instructions=attr_dict['instructions'].default, tools=NOTHING, model=attr_dict['model'].default, output=attr_dict['output'].default):
        _setattr = _cached_setattr_get(self)
        _setattr('name', name)
        _setattr('instructions', instructions)
        if tools is not NOTHING:
            _setattr('tools', tools)
        else:
            _setattr('tools', __attr_factory_tools())
        _setattr('model', model)
        _setattr('output', output)

    return {'__init__': __init__}


METHODS = {
    "def __init__(self, active, next_timer):\n    _setattr = _cached_setattr_get(self)\n    _setattr('active', active)\n    _setattr('next_timer', next_timer)\n":
        _0_durable_engine_harness_Wake,
    "def __eq__(self, other):\n    if other.__class__ is not self.__class__:\n        return NotImplemented\n    return  (\n        self.id == other.id and\n        self.last_seq == other.last_seq and\n        self.live == other.live and\n        self.committed_live == other.committed_live and\n        self.compaction == other.compaction and\n        self._context == other._context and\n        self.queued == other.queued and\n        self.context_loaded == other.context_loaded and\n        self.stored == other.stored\n    )\ndef __init__(self, id, last_seq=attr_dict['last_seq'].default, live=attr_dict['live'].default, committed_live=attr_dict['committed_live'].default, compaction=attr_dict['compaction'].default, context=attr_dict['_context'].default, queued=NOTHING, context_loaded=attr_dict['context_loaded'].default, stored=attr_dict['stored'].default):\n    self.id = id\n    self.last_seq = last_seq\n    self.live = live\n    self.committed_live = committed_live\n    self.compaction = compaction\n    self._context = context\n    if queued is not NOTHING:\n        self.queued = queued\n    else:\n        self.queued = __attr_factory_queued()\n    self.context_loaded = context_loaded\n    self.stored = stored\n":
        _1_durable_engine_head_ConversationHead,
    "def __init__(self, conversation_id, task_id, inputs, submission_ids, deps, now):\n    _setattr = _cached_setattr_get(self)\n    _setattr('conversation_id', conversation_id)\n    _setattr('task_id', task_id)\n    _setattr('inputs', inputs)\n    _setattr('submission_ids', submission_ids)\n    _setattr('deps', deps)\n    _setattr('now', now)\n":
        _2_durable_engine_instructions_PrepareContext,
    "def __init__(self, task, reason, detail):\n    _setattr = _cached_setattr_get(self)\n    _setattr('task', task)\n    _setattr('reason', reason)\n    _setattr('detail', detail)\n":
        _3_durable_engine_kinds_Resumed,
    "def __init__(self, message, task=attr_dict['task'].default, raw=attr_dict['raw'].default, topic=attr_dict['topic'].default, type=attr_dict['type'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('message', message)\n    _setattr('task', task)\n    _setattr('raw', raw)\n    _setattr('topic', topic)\n    _setattr('type', type)\n":
        _4_durable_engine_reports_ErrorReport,
    "def __init__(self, task, from_model, to_model, attempt, error, type=attr_dict['type'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('task', task)\n    _setattr('from_model', from_model)\n    _setattr('to_model', to_model)\n    _setattr('attempt', attempt)\n    _setattr('error', error)\n    _setattr('type', type)\n":
        _5_durable_engine_reports_ModelFallback,
    "def __init__(self, task, reason, detail=attr_dict['detail'].default, type=attr_dict['type'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('task', task)\n    _setattr('reason', reason)\n    _setattr('detail', detail)\n    _setattr('type', type)\n":
        _6_durable_engine_reports_TaskFaulted,
    "def __init__(self, task, reason, restarts, detail=attr_dict['detail'].default, type=attr_dict['type'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('task', task)\n    _setattr('reason', reason)\n    _setattr('restarts', restarts)\n    _setattr('detail', detail)\n    _setattr('type', type)\n":
        _7_durable_engine_reports_TaskInterrupted,
    "def __init__(self, id, kind, conversation_id):\n    _setattr = _cached_setattr_get(self)\n    _setattr('id', id)\n    _setattr('kind', kind)\n    _setattr('conversation_id', conversation_id)\n":
        _8_durable_engine_reports_TaskRef,
    "def __init__(self, call_id, tool, arguments, deadline=attr_dict['deadline'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call_id', call_id)\n    _setattr('tool', tool)\n    _setattr('arguments', arguments)\n    _setattr('deadline', deadline)\n":
        _9_durable_engine_stream_events_ApprovalRequestedEvent,
    "def __init__(self, attempt):\n    _setattr = _cached_setattr_get(self)\n    _setattr('attempt', attempt)\n":
        _10_durable_engine_stream_events_AttemptRestartedEvent,
    "def __init__(self, retry):\n    _setattr = _cached_setattr_get(self)\n    _setattr('retry', retry)\n":
        _11_durable_engine_stream_events_RetryWaitingEvent,
    "def __init__(self, status):\n    _setattr = _cached_setattr_get(self)\n    _setattr('status', status)\n":
        _12_durable_engine_stream_events_SettledEvent,
    "def __init__(self, call_id, name, content, is_error=attr_dict['is_error'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call_id', call_id)\n    _setattr('name', name)\n    _setattr('content', content)\n    _setattr('is_error', is_error)\n":
        _13_durable_engine_stream_events_ToolCallEndedEvent,
    "def __init__(self, call_id, name, arguments):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call_id', call_id)\n    _setattr('name', name)\n    _setattr('arguments', arguments)\n":
        _14_durable_engine_stream_events_ToolCallStartedEvent,
    "def __init__(self, call_id, name, text):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call_id', call_id)\n    _setattr('name', name)\n    _setattr('text', text)\n":
        _15_durable_engine_stream_events_ToolOutputEvent,
    "def __init__(self, start, moves):\n    _setattr = _cached_setattr_get(self)\n    _setattr('start', __attr_converter_start(start))\n    _setattr('moves', __attr_converter_moves(moves))\n":
        _16_durable_engine_transitions_Transitions,
    "def __init__(self, message, kind=attr_dict['kind'].default, status_code=attr_dict['status_code'].default, retry_after=attr_dict['retry_after'].default, partial=attr_dict['partial'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('message', message)\n    _setattr('kind', kind)\n    _setattr('status_code', status_code)\n    _setattr('retry_after', retry_after)\n    _setattr('partial', partial)\n":
        _17_durable_models_faux_Error,
    "def __init__(self, message, partial=attr_dict['partial'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('message', message)\n    _setattr('partial', partial)\n":
        _18_durable_models_faux_ErrorStop,
    "def __init__(self, partial=attr_dict['partial'].default, reasoning=attr_dict['reasoning'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('partial', partial)\n    _setattr('reasoning', reasoning)\n":
        _19_durable_models_faux_Hang,
    "def __init__(self, text=attr_dict['text'].default, tool_calls=attr_dict['tool_calls'].default, stop_reason=attr_dict['stop_reason'].default, usage=attr_dict['usage'].default, reasoning=attr_dict['reasoning'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('text', text)\n    _setattr('tool_calls', tool_calls)\n    _setattr('stop_reason', stop_reason)\n    _setattr('usage', usage)\n    _setattr('reasoning', reasoning)\n":
        _20_durable_models_faux_Reply,
    "def __init__(self, step, fetches_needed, settings=attr_dict['settings'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('step', step)\n    _setattr('fetches_needed', fetches_needed)\n    _setattr('settings', settings)\n":
        _21_durable_models_faux__Job,
    "def __init__(self, id, poll_after=attr_dict['poll_after'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('id', id)\n    _setattr('poll_after', poll_after)\n":
        _22_durable_models_protocol_DeferredHandle,
    "def __init__(self, text, stop_reason, tool_calls=attr_dict['tool_calls'].default, usage=attr_dict['usage'].default, error=attr_dict['error'].default, reasoning=attr_dict['reasoning'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('text', text)\n    _setattr('stop_reason', stop_reason)\n    _setattr('tool_calls', tool_calls)\n    _setattr('usage', usage)\n    _setattr('error', error)\n    _setattr('reasoning', reasoning)\n":
        _23_durable_models_protocol_FinalMessage,
    "def __init__(self, system, messages, tools=attr_dict['tools'].default, options=NOTHING, attempt=attr_dict['attempt'].default, key=attr_dict['key'].default, output=attr_dict['output'].default, attachments=NOTHING, settings=attr_dict['settings'].default, cache_key=attr_dict['cache_key'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('system', system)\n    _setattr('messages', messages)\n    _setattr('tools', tools)\n    if options is not NOTHING:\n        _setattr('options', options)\n    else:\n        _setattr('options', __attr_factory_options())\n    _setattr('attempt', attempt)\n    _setattr('key', key)\n    _setattr('output', output)\n    if attachments is not NOTHING:\n        _setattr('attachments', attachments)\n    else:\n        _setattr('attachments', __attr_factory_attachments())\n    _setattr('settings', settings)\n    _setattr('cache_key', cache_key)\n":
        _24_durable_models_protocol_ModelRequest,
    "def __init__(self, poll_after=attr_dict['poll_after'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('poll_after', poll_after)\n":
        _25_durable_models_protocol_StillRunning,
    "def __init__(self, call):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call', call)\n":
        _26_durable_models_protocol_ToolCallEvent,
    "def __init__(self, name, description, parameters=NOTHING):\n    _setattr = _cached_setattr_get(self)\n    _setattr('name', name)\n    _setattr('description', description)\n    if parameters is not NOTHING:\n        _setattr('parameters', parameters)\n    else:\n        _setattr('parameters', __attr_factory_parameters())\n":
        _27_durable_models_protocol_ToolSpec,
    "def __init__(self, usage):\n    _setattr = _cached_setattr_get(self)\n    _setattr('usage', usage)\n":
        _28_durable_models_protocol_UsageEvent,
    "def __init__(self, input, output, cache_read=attr_dict['cache_read'].default, cache_write=attr_dict['cache_write'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('input', input)\n    _setattr('output', output)\n    _setattr('cache_read', cache_read)\n    _setattr('cache_write', cache_write)\n":
        _29_durable_prices_Price,
    "def __init__(self, kind, sha256, media_type, size, name=attr_dict['name'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('kind', kind)\n    _setattr('sha256', sha256)\n    _setattr('media_type', media_type)\n    _setattr('size', size)\n    _setattr('name', name)\n":
        _30_durable_records_content_Attachment,
    "def __init__(self, text):\n    _setattr = _cached_setattr_get(self)\n    _setattr('text', text)\n":
        _31_durable_records_content_TextPart,
    "def __init__(self, text, stop_reason, tool_calls=attr_dict['tool_calls'].default, usage=attr_dict['usage'].default, error=attr_dict['error'].default, attempt=attr_dict['attempt'].default, interrupted=attr_dict['interrupted'].default, reasoning=attr_dict['reasoning'].default, model=attr_dict['model'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('text', text)\n    _setattr('stop_reason', stop_reason)\n    _setattr('tool_calls', tool_calls)\n    _setattr('usage', usage)\n    _setattr('error', error)\n    _setattr('attempt', attempt)\n    _setattr('interrupted', interrupted)\n    _setattr('reasoning', reasoning)\n    _setattr('model', model)\n":
        _32_durable_records_entries_AssistantEntry,
    "def __init__(self, summary, first_kept_seq, usage=attr_dict['usage'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('summary', summary)\n    _setattr('first_kept_seq', first_kept_seq)\n    _setattr('usage', usage)\n":
        _33_durable_records_entries_CompactionEntry,
    "def __init__(self, severity, code, message):\n    _setattr = _cached_setattr_get(self)\n    _setattr('severity', severity)\n    _setattr('code', code)\n    _setattr('message', message)\n":
        _34_durable_records_entries_Diagnostic,
    "def __init__(self, text=attr_dict['text'].default, format=attr_dict['format'].default, signature=attr_dict['signature'].default, redacted=attr_dict['redacted'].default, id=attr_dict['id'].default, encrypted=attr_dict['encrypted'].default, summary=attr_dict['summary'].default, partial=attr_dict['partial'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('text', text)\n    _setattr('format', format)\n    _setattr('signature', signature)\n    _setattr('redacted', redacted)\n    _setattr('id', id)\n    _setattr('encrypted', encrypted)\n    _setattr('summary', summary)\n    _setattr('partial', partial)\n":
        _35_durable_records_entries_Reasoning,
    "def __init__(self, conversation_id, seq, entry):\n    _setattr = _cached_setattr_get(self)\n    _setattr('conversation_id', conversation_id)\n    _setattr('seq', seq)\n    _setattr('entry', entry)\n":
        _36_durable_records_entries_StoredEntry,
    "def __init__(self, id, name, arguments):\n    _setattr = _cached_setattr_get(self)\n    _setattr('id', id)\n    _setattr('name', name)\n    _setattr('arguments', arguments)\n":
        _37_durable_records_entries_ToolCall,
    "def __init__(self, call_id, tool_name, content, is_error=attr_dict['is_error'].default, diagnostics=attr_dict['diagnostics'].default, parts=attr_dict['parts'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call_id', call_id)\n    _setattr('tool_name', tool_name)\n    _setattr('content', content)\n    _setattr('is_error', is_error)\n    _setattr('diagnostics', diagnostics)\n    _setattr('parts', parts)\n":
        _38_durable_records_entries_ToolResultEntry,
    "def __init__(self, input_tokens=attr_dict['input_tokens'].default, output_tokens=attr_dict['output_tokens'].default, reasoning_tokens=attr_dict['reasoning_tokens'].default, cache_read_tokens=attr_dict['cache_read_tokens'].default, cache_write_tokens=attr_dict['cache_write_tokens'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('input_tokens', input_tokens)\n    _setattr('output_tokens', output_tokens)\n    _setattr('reasoning_tokens', reasoning_tokens)\n    _setattr('cache_read_tokens', cache_read_tokens)\n    _setattr('cache_write_tokens', cache_write_tokens)\n":
        _39_durable_records_entries_Usage,
    "def __init__(self, text, submission_id=attr_dict['submission_id'].default, parts=attr_dict['parts'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('text', text)\n    _setattr('submission_id', submission_id)\n    _setattr('parts', parts)\n":
        _40_durable_records_entries_UserEntry,
    "def __init__(self, call_id, tool, arguments, task_id, since, deadline=attr_dict['deadline'].default, parameters=attr_dict['parameters'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call_id', call_id)\n    _setattr('tool', tool)\n    _setattr('arguments', arguments)\n    _setattr('task_id', task_id)\n    _setattr('since', since)\n    _setattr('deadline', deadline)\n    _setattr('parameters', parameters)\n":
        _41_durable_records_live_ApprovalSlot,
    "def __init__(self, task_id, trigger, error):\n    _setattr = _cached_setattr_get(self)\n    _setattr('task_id', task_id)\n    _setattr('trigger', trigger)\n    _setattr('error', error)\n":
        _42_durable_records_live_CompactionFailure,
    "def __init__(self, id, entries=attr_dict['entries'].default, archived=attr_dict['archived'].default, busy=attr_dict['busy'].default, forked_from=attr_dict['forked_from'].default, forked_at=attr_dict['forked_at'].default, parent=attr_dict['parent'].default, compactions=attr_dict['compactions'].default, usage=attr_dict['usage'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('id', id)\n    _setattr('entries', entries)\n    _setattr('archived', archived)\n    _setattr('busy', busy)\n    _setattr('forked_from', forked_from)\n    _setattr('forked_at', forked_at)\n    _setattr('parent', parent)\n    _setattr('compactions', compactions)\n    _setattr('usage', usage)\n":
        _43_durable_records_live_ConversationInfo,
    "def __init__(self, poll_at):\n    _setattr = _cached_setattr_get(self)\n    _setattr('poll_at', poll_at)\n":
        _44_durable_records_live_DeferredLive,
    "def __init__(self, attempt, message=attr_dict['message'].default, retry=attr_dict['retry'].default, deferred=attr_dict['deferred'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('attempt', attempt)\n    _setattr('message', message)\n    _setattr('retry', retry)\n    _setattr('deferred', deferred)\n":
        _45_durable_records_live_GenerationLive,
    "def __init__(self, run=attr_dict['run'].default, generation=attr_dict['generation'].default, tools=attr_dict['tools'].default, approvals=attr_dict['approvals'].default, run_failure=attr_dict['run_failure'].default, compaction_failure=attr_dict['compaction_failure'].default, compactions=attr_dict['compactions'].default, usage=attr_dict['usage'].default, archived=attr_dict['archived'].default, forked_from=attr_dict['forked_from'].default, forked_at=attr_dict['forked_at'].default, parent=attr_dict['parent'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('run', run)\n    _setattr('generation', generation)\n    _setattr('tools', tools)\n    _setattr('approvals', approvals)\n    _setattr('run_failure', run_failure)\n    _setattr('compaction_failure', compaction_failure)\n    _setattr('compactions', compactions)\n    _setattr('usage', usage)\n    _setattr('archived', archived)\n    _setattr('forked_from', forked_from)\n    _setattr('forked_at', forked_at)\n    _setattr('parent', parent)\n":
        _46_durable_records_live_Live,
    "def __init__(self, conversation_id, task_id, call_id, agent, depth=attr_dict['depth'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('conversation_id', conversation_id)\n    _setattr('task_id', task_id)\n    _setattr('call_id', call_id)\n    _setattr('agent', agent)\n    _setattr('depth', depth)\n":
        _47_durable_records_live_ParentCall,
    "def __init__(self, text=attr_dict['text'].default, tool_calls=attr_dict['tool_calls'].default, usage=attr_dict['usage'].default, reasoning=attr_dict['reasoning'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('text', text)\n    _setattr('tool_calls', tool_calls)\n    _setattr('usage', usage)\n    _setattr('reasoning', reasoning)\n":
        _48_durable_records_live_PartialMessage,
    "def __init__(self, attempt, at, error, kind, provider=attr_dict['provider'].default, status_code=attr_dict['status_code'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('attempt', attempt)\n    _setattr('at', at)\n    _setattr('error', error)\n    _setattr('kind', kind)\n    _setattr('provider', provider)\n    _setattr('status_code', status_code)\n":
        _49_durable_records_live_RetryLive,
    "def __init__(self, task_id, inputs, usage=attr_dict['usage'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('task_id', task_id)\n    _setattr('inputs', inputs)\n    _setattr('usage', usage)\n":
        _50_durable_records_live_Run,
    "def __init__(self, task_id, inputs, reason, detail, first=attr_dict['first'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('task_id', task_id)\n    _setattr('inputs', inputs)\n    _setattr('reason', reason)\n    _setattr('detail', detail)\n    _setattr('first', first)\n":
        _51_durable_records_live_RunFailure,
    "def __init__(self, call_id, name, task_id, output=attr_dict['output'].default, status=attr_dict['status'].default, conversation=attr_dict['conversation'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call_id', call_id)\n    _setattr('name', name)\n    _setattr('task_id', task_id)\n    _setattr('output', output)\n    _setattr('status', status)\n    _setattr('conversation', conversation)\n":
        _52_durable_records_live_ToolSlot,
    "def __init__(self, temperature=attr_dict['temperature'].default, top_p=attr_dict['top_p'].default, max_tokens=attr_dict['max_tokens'].default, stop=attr_dict['stop'].default, seed=attr_dict['seed'].default, reasoning_effort=attr_dict['reasoning_effort'].default, thinking_budget=attr_dict['thinking_budget'].default, tool_choice=attr_dict['tool_choice'].default, parallel_tool_calls=attr_dict['parallel_tool_calls'].default, service_tier=attr_dict['service_tier'].default, prompt_cache=attr_dict['prompt_cache'].default, extra=attr_dict['extra'].default, model=attr_dict['model'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('temperature', temperature)\n    _setattr('top_p', top_p)\n    _setattr('max_tokens', max_tokens)\n    _setattr('stop', __attr_converter_stop(stop))\n    _setattr('seed', seed)\n    _setattr('reasoning_effort', reasoning_effort)\n    _setattr('thinking_budget', thinking_budget)\n    _setattr('tool_choice', tool_choice)\n    _setattr('parallel_tool_calls', parallel_tool_calls)\n    _setattr('service_tier', service_tier)\n    _setattr('prompt_cache', prompt_cache)\n    _setattr('extra', extra)\n    _setattr('model', model)\n    self.__attrs_post_init__()\n":
        _53_durable_records_model_settings_ModelSettings,
    "def __init__(self, text=attr_dict['text'].default, seq=attr_dict['seq'].default, output=attr_dict['output'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('text', text)\n    _setattr('seq', seq)\n    _setattr('output', output)\n":
        _54_durable_records_submissions_Answered,
    'def __init__(self, ):\n    _setattr = _cached_setattr_get(self)\n':
        _55_durable_records_submissions_Queued,
    "def __init__(self, id, conversation_id, text, seq=attr_dict['seq'].default, status=attr_dict['status'].default, task_id=attr_dict['task_id'].default, created_at=attr_dict['created_at'].default, output=attr_dict['output'].default, parts=attr_dict['parts'].default, model_settings=attr_dict['model_settings'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('id', id)\n    _setattr('conversation_id', conversation_id)\n    _setattr('text', text)\n    _setattr('seq', seq)\n    _setattr('status', status)\n    _setattr('task_id', task_id)\n    _setattr('created_at', created_at)\n    _setattr('output', output)\n    _setattr('parts', parts)\n    _setattr('model_settings', model_settings)\n":
        _56_durable_records_submissions_Submission,
    "def __init__(self, reason, detail):\n    _setattr = _cached_setattr_get(self)\n    _setattr('reason', reason)\n    _setattr('detail', detail)\n":
        _57_durable_records_submissions_Unanswered,
    "def __init__(self, key, handle=attr_dict['handle'].default, model=attr_dict['model'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('key', key)\n    _setattr('handle', handle)\n    _setattr('model', model)\n":
        _58_durable_records_tasks_DeferredJob,
    "def __init__(self, result=attr_dict['result'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('result', result)\n":
        _59_durable_records_tasks_Done,
    "def __init__(self, reason):\n    _setattr = _cached_setattr_get(self)\n    _setattr('reason', reason)\n":
        _60_durable_records_tasks_ErrorDetail,
    "def __init__(self, message, detail):\n    _setattr = _cached_setattr_get(self)\n    _setattr('message', message)\n    _setattr('detail', detail)\n":
        _61_durable_records_tasks_ErrorInfo,
    "def __init__(self, error):\n    _setattr = _cached_setattr_get(self)\n    _setattr('error', error)\n":
        _62_durable_records_tasks_Failed,
    "def __init__(self, until):\n    _setattr = _cached_setattr_get(self)\n    _setattr('until', until)\n":
        _63_durable_records_tasks_Sleeping,
    "def __init__(self, id, conversation_id, kind, input, state=attr_dict['state'].default, checkpoint=attr_dict['checkpoint'].default, restarts=attr_dict['restarts'].default, parent_id=attr_dict['parent_id'].default, stop=attr_dict['stop'].default, created_at=attr_dict['created_at'].default, updated_at=attr_dict['updated_at'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('id', id)\n    _setattr('conversation_id', conversation_id)\n    _setattr('kind', kind)\n    _setattr('input', input)\n    _setattr('state', state)\n    _setattr('checkpoint', checkpoint)\n    _setattr('restarts', restarts)\n    _setattr('parent_id', parent_id)\n    _setattr('stop', stop)\n    _setattr('created_at', created_at)\n    _setattr('updated_at', updated_at)\n":
        _64_durable_records_tasks_Task,
    "def __init__(self, outcome):\n    _setattr = _cached_setattr_get(self)\n    _setattr('outcome', outcome)\n":
        _65_durable_records_tasks_Terminal,
    "def __init__(self, on=attr_dict['on'].default, client=attr_dict['client'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('on', on)\n    _setattr('client', client)\n":
        _66_durable_records_tasks_Waiting,
    "def __init__(self, model, requests=attr_dict['requests'].default, input_tokens=attr_dict['input_tokens'].default, output_tokens=attr_dict['output_tokens'].default, reasoning_tokens=attr_dict['reasoning_tokens'].default, cache_read_tokens=attr_dict['cache_read_tokens'].default, cache_write_tokens=attr_dict['cache_write_tokens'].default, cost=attr_dict['cost'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('model', model)\n    _setattr('requests', requests)\n    _setattr('input_tokens', input_tokens)\n    _setattr('output_tokens', output_tokens)\n    _setattr('reasoning_tokens', reasoning_tokens)\n    _setattr('cache_read_tokens', cache_read_tokens)\n    _setattr('cache_write_tokens', cache_write_tokens)\n    _setattr('cost', cost)\n":
        _67_durable_records_usage_ModelUsage,
    "def __init__(self, models=attr_dict['models'].default, tool_calls=attr_dict['tool_calls'].default, tool_seconds=attr_dict['tool_seconds'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('models', models)\n    _setattr('tool_calls', tool_calls)\n    _setattr('tool_seconds', tool_seconds)\n":
        _68_durable_records_usage_UsageTotals,
    "def __init__(self, enabled=attr_dict['enabled'].default, threshold=attr_dict['threshold'].default, keep_last=attr_dict['keep_last'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('enabled', enabled)\n    _setattr('threshold', threshold)\n    _setattr('keep_last', keep_last)\n":
        _69_durable_settings_Compaction,
    "def __init__(self, persist_within=attr_dict['persist_within'].default, output_interval=attr_dict['output_interval'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('persist_within', persist_within)\n    _setattr('output_interval', output_interval)\n":
        _70_durable_settings_Progress,
    "def __init__(self, enabled=attr_dict['enabled'].default, max_retries=attr_dict['max_retries'].default, base_delay=attr_dict['base_delay'].default, max_delay=attr_dict['max_delay'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('enabled', enabled)\n    _setattr('max_retries', max_retries)\n    _setattr('base_delay', base_delay)\n    _setattr('max_delay', max_delay)\n":
        _71_durable_settings_RetryPolicy,
    "def __init__(self, retry=NOTHING, restart_limit=attr_dict['restart_limit'].default, progress=NOTHING, stream=NOTHING, client_tool_timeout=attr_dict['client_tool_timeout'].default, compaction=NOTHING, system_prompt=attr_dict['system_prompt'].default, when_busy=attr_dict['when_busy'].default, max_tool_rounds=attr_dict['max_tool_rounds'].default, check_integrity=attr_dict['check_integrity'].default, disk_full_patience=attr_dict['disk_full_patience'].default, model_options=NOTHING, approval_timeout=attr_dict['approval_timeout'].default, prepare_timeout=attr_dict['prepare_timeout'].default, output_retries=attr_dict['output_retries'].default, usage_limits=attr_dict['usage_limits'].default, conversation_usage_limits=attr_dict['conversation_usage_limits'].default, prices=attr_dict['prices'].default, max_attachment_bytes=attr_dict['max_attachment_bytes'].default, model_settings=attr_dict['model_settings'].default, subagent_depth=attr_dict['subagent_depth'].default, keep_idle_context=attr_dict['keep_idle_context'].default):\n    _setattr = _cached_setattr_get(self)\n    if retry is not NOTHING:\n        _setattr('retry', retry)\n    else:\n        _setattr('retry', __attr_factory_retry())\n    _setattr('restart_limit', restart_limit)\n    if progress is not NOTHING:\n        _setattr('progress', progress)\n    else:\n        _setattr('progress', __attr_factory_progress())\n    if stream is not NOTHING:\n        _setattr('stream', stream)\n    else:\n        _setattr('stream', __attr_factory_stream())\n    _setattr('client_tool_timeout', client_tool_timeout)\n    if compaction is not NOTHING:\n        _setattr('compaction', compaction)\n    else:\n        _setattr('compaction', __attr_factory_compaction())\n    _setattr('system_prompt', system_prompt)\n    _setattr('when_busy', when_busy)\n    _setattr('max_tool_rounds', max_tool_rounds)\n    _setattr('check_integrity', check_integrity)\n    _setattr('disk_full_patience', disk_full_patience)\n    if model_options is not NOTHING:\n        _setattr('model_options', model_options)\n    else:\n        _setattr('model_options', __attr_factory_model_options())\n    _setattr('approval_timeout', approval_timeout)\n    _setattr('prepare_timeout', prepare_timeout)\n    _setattr('output_retries', output_retries)\n    _setattr('usage_limits', usage_limits)\n    _setattr('conversation_usage_limits', conversation_usage_limits)\n    _setattr('prices', prices)\n    _setattr('max_attachment_bytes', max_attachment_bytes)\n    _setattr('model_settings', model_settings)\n    _setattr('subagent_depth', subagent_depth)\n    _setattr('keep_idle_context', keep_idle_context)\n    self.__attrs_post_init__()\n":
        _72_durable_settings_Settings,
    "def __init__(self, deferred=attr_dict['deferred'].default, stream_silence=attr_dict['stream_silence'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('deferred', deferred)\n    _setattr('stream_silence', stream_silence)\n":
        _73_durable_settings_StreamSettings,
    "def __init__(self, request_limit=attr_dict['request_limit'].default, tool_calls_limit=attr_dict['tool_calls_limit'].default, input_tokens_limit=attr_dict['input_tokens_limit'].default, output_tokens_limit=attr_dict['output_tokens_limit'].default, total_tokens_limit=attr_dict['total_tokens_limit'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('request_limit', request_limit)\n    _setattr('tool_calls_limit', tool_calls_limit)\n    _setattr('input_tokens_limit', input_tokens_limit)\n    _setattr('output_tokens_limit', output_tokens_limit)\n    _setattr('total_tokens_limit', total_tokens_limit)\n    self.__attrs_post_init__()\n":
        _74_durable_settings_UsageLimits,
    "def __eq__(self, other):\n    if other.__class__ is not self.__class__:\n        return NotImplemented\n    return  (\n        self.tasks == other.tasks and\n        self.entries == other.entries and\n        self.submissions == other.submissions and\n        self.live == other.live and\n        self.barrier == other.barrier and\n        self.inbox == other.inbox and\n        self.first_in_line == other.first_in_line and\n        self.copies == other.copies and\n        self.attachments == other.attachments\n    )\ndef __init__(self, tasks=NOTHING, entries=NOTHING, submissions=NOTHING, live=NOTHING, barrier=attr_dict['barrier'].default, inbox=NOTHING, first_in_line=attr_dict['first_in_line'].default, copies=NOTHING, attachments=NOTHING):\n    if tasks is not NOTHING:\n        self.tasks = tasks\n    else:\n        self.tasks = __attr_factory_tasks()\n    if entries is not NOTHING:\n        self.entries = entries\n    else:\n        self.entries = __attr_factory_entries()\n    if submissions is not NOTHING:\n        self.submissions = submissions\n    else:\n        self.submissions = __attr_factory_submissions()\n    if live is not NOTHING:\n        self.live = live\n    else:\n        self.live = __attr_factory_live()\n    self.barrier = barrier\n    if inbox is not NOTHING:\n        self.inbox = inbox\n    else:\n        self.inbox = __attr_factory_inbox()\n    self.first_in_line = first_in_line\n    if copies is not NOTHING:\n        self.copies = copies\n    else:\n        self.copies = __attr_factory_copies()\n    if attachments is not NOTHING:\n        self.attachments = attachments\n    else:\n        self.attachments = __attr_factory_attachments()\n":
        _75_durable_storage_protocol_Batch,
    "def __init__(self, last_seq, live, last_compaction):\n    _setattr = _cached_setattr_get(self)\n    _setattr('last_seq', last_seq)\n    _setattr('live', live)\n    _setattr('last_compaction', last_compaction)\n":
        _76_durable_storage_protocol_ConversationState,
    "def __init__(self, source, target, to_seq):\n    _setattr = _cached_setattr_get(self)\n    _setattr('source', source)\n    _setattr('target', target)\n    _setattr('to_seq', to_seq)\n":
        _77_durable_storage_protocol_EntryCopy,
    "def __init__(self, id, call_id, approve, arguments=attr_dict['arguments'].default, reason=attr_dict['reason'].default, created_at=attr_dict['created_at'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('id', id)\n    _setattr('call_id', call_id)\n    _setattr('approve', approve)\n    _setattr('arguments', arguments)\n    _setattr('reason', reason)\n    _setattr('created_at', created_at)\n":
        _78_durable_storage_protocol_InboxDecision,
    "def __init__(self, conversations, live_tasks, unsettled, next_task_id, warnings=attr_dict['warnings'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('conversations', conversations)\n    _setattr('live_tasks', live_tasks)\n    _setattr('unsettled', unsettled)\n    _setattr('next_task_id', next_task_id)\n    _setattr('warnings', warnings)\n":
        _79_durable_storage_protocol_Opened,
    "def __init__(self, conversation_id, ended_at):\n    _setattr = _cached_setattr_get(self)\n    _setattr('conversation_id', conversation_id)\n    _setattr('ended_at', ended_at)\n":
        _80_durable_storage_retention_Ended,
    "def __init__(self, conversations=attr_dict['conversations'].default, rows=attr_dict['rows'].default, commits=attr_dict['commits'].default, reclaimed=attr_dict['reclaimed'].default, reclaimable=attr_dict['reclaimable'].default, attachments=attr_dict['attachments'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('conversations', conversations)\n    _setattr('rows', rows)\n    _setattr('commits', commits)\n    _setattr('reclaimed', reclaimed)\n    _setattr('reclaimable', reclaimable)\n    _setattr('attachments', attachments)\n":
        _81_durable_storage_retention_PruneReport,
    "def __init__(self, tasks, entries, submissions, live, barrier=attr_dict['barrier'].default, inbox=attr_dict['inbox'].default, texts=attr_dict['texts'].default, copies=attr_dict['copies'].default, attachments=attr_dict['attachments'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('tasks', tasks)\n    _setattr('entries', entries)\n    _setattr('submissions', submissions)\n    _setattr('live', live)\n    _setattr('barrier', barrier)\n    _setattr('inbox', inbox)\n    _setattr('texts', texts)\n    _setattr('copies', copies)\n    _setattr('attachments', attachments)\n":
        _82_durable_storage_rows_EncodedBatch,
    'def __eq__(self, other):\n    if other.__class__ is not self.__class__:\n        return NotImplemented\n    return  (\n        self.location == other.location and\n        self.tasks == other.tasks and\n        self.entries == other.entries and\n        self.submissions == other.submissions and\n        self.live == other.live and\n        self.problems == other.problems and\n        self.attachments == other.attachments\n    )\ndef __init__(self, location, tasks=NOTHING, entries=NOTHING, submissions=NOTHING, live=NOTHING, problems=NOTHING, attachments=NOTHING):\n    self.location = location\n    if tasks is not NOTHING:\n        self.tasks = tasks\n    else:\n        self.tasks = __attr_factory_tasks()\n    if entries is not NOTHING:\n        self.entries = entries\n    else:\n        self.entries = __attr_factory_entries()\n    if submissions is not NOTHING:\n        self.submissions = submissions\n    else:\n        self.submissions = __attr_factory_submissions()\n    if live is not NOTHING:\n        self.live = live\n    else:\n        self.live = __attr_factory_live()\n    if problems is not NOTHING:\n        self.problems = problems\n    else:\n        self.problems = __attr_factory_problems()\n    if attachments is not NOTHING:\n        self.attachments = attachments\n    else:\n        self.attachments = __attr_factory_attachments()\n':
        _83_durable_storage_rows_SessionRecords,
    "def __init__(self, tasks=NOTHING, entries=NOTHING, submissions=NOTHING, documents=NOTHING, attachments=NOTHING):\n    _setattr = _cached_setattr_get(self)\n    if tasks is not NOTHING:\n        _setattr('tasks', tasks)\n    else:\n        _setattr('tasks', __attr_factory_tasks())\n    if entries is not NOTHING:\n        _setattr('entries', entries)\n    else:\n        _setattr('entries', __attr_factory_entries())\n    if submissions is not NOTHING:\n        _setattr('submissions', submissions)\n    else:\n        _setattr('submissions', __attr_factory_submissions())\n    if documents is not NOTHING:\n        _setattr('documents', documents)\n    else:\n        _setattr('documents', __attr_factory_documents())\n    if attachments is not NOTHING:\n        _setattr('attachments', attachments)\n    else:\n        _setattr('attachments', __attr_factory_attachments())\n":
        _84_durable_storage_rows_StoredRows,
    "def __init__(self, path, size_bytes, wal_bytes, page_size, page_count, schema_version, journal_mode, conversations, entries, submissions, tasks, live_tasks, attachments=attr_dict['attachments'].default, attachment_bytes=attr_dict['attachment_bytes'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('path', path)\n    _setattr('size_bytes', size_bytes)\n    _setattr('wal_bytes', wal_bytes)\n    _setattr('page_size', page_size)\n    _setattr('page_count', page_count)\n    _setattr('schema_version', schema_version)\n    _setattr('journal_mode', journal_mode)\n    _setattr('conversations', conversations)\n    _setattr('entries', entries)\n    _setattr('submissions', submissions)\n    _setattr('tasks', tasks)\n    _setattr('live_tasks', live_tasks)\n    _setattr('attachments', attachments)\n    _setattr('attachment_bytes', attachment_bytes)\n":
        _85_durable_storage_sqlite_reader_FileFacts,
    "def __init__(self, job, run_task_id, provider=attr_dict['provider'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('job', job)\n    _setattr('run_task_id', run_task_id)\n    _setattr('provider', provider)\n":
        _86_durable_tasks_cancel_CancelInput,
    "def __init__(self, trigger):\n    _setattr = _cached_setattr_get(self)\n    _setattr('trigger', trigger)\n":
        _87_durable_tasks_compaction_CompactionInput,
    "def __init__(self, message, kind, provider=attr_dict['provider'].default, status_code=attr_dict['status_code'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('message', message)\n    _setattr('kind', kind)\n    _setattr('provider', provider)\n    _setattr('status_code', status_code)\n":
        _88_durable_tasks_generation_records_AttemptFailure,
    "def __init__(self, submission_ids, settings=attr_dict['settings'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('submission_ids', submission_ids)\n    _setattr('settings', settings)\n":
        _89_durable_tasks_generation_records_GenerationInput,
    "def __init__(self, attempt, job, poll_at, rounds=attr_dict['rounds'].default, notes=attr_dict['notes'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('attempt', attempt)\n    _setattr('job', job)\n    _setattr('poll_at', poll_at)\n    _setattr('rounds', rounds)\n    _setattr('notes', notes)\n":
        _90_durable_tasks_generation_records_Poll,
    "def __init__(self, attempt=attr_dict['attempt'].default, rounds=attr_dict['rounds'].default, notes=attr_dict['notes'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('attempt', attempt)\n    _setattr('rounds', rounds)\n    _setattr('notes', notes)\n":
        _91_durable_tasks_generation_records_Prepare,
    "def __init__(self, attempt, options=NOTHING, rounds=attr_dict['rounds'].default, notes=attr_dict['notes'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('attempt', attempt)\n    if options is not NOTHING:\n        _setattr('options', options)\n    else:\n        _setattr('options', __attr_factory_options())\n    _setattr('rounds', rounds)\n    _setattr('notes', notes)\n":
        _92_durable_tasks_generation_records_Request,
    "def __init__(self, attempt, until, error, job=attr_dict['job'].default, rounds=attr_dict['rounds'].default, notes=attr_dict['notes'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('attempt', attempt)\n    _setattr('until', until)\n    _setattr('error', error)\n    _setattr('job', job)\n    _setattr('rounds', rounds)\n    _setattr('notes', notes)\n":
        _93_durable_tasks_generation_records_Retry,
    "def __init__(self, instructions=attr_dict['instructions'].default, output_retries=attr_dict['output_retries'].default, model=attr_dict['model'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('instructions', instructions)\n    _setattr('output_retries', output_retries)\n    _setattr('model', model)\n":
        _94_durable_tasks_generation_records_RunNotes,
    "def __init__(self, assistant_seq, calls, pending, round=attr_dict['round'].default, notes=attr_dict['notes'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('assistant_seq', assistant_seq)\n    _setattr('calls', calls)\n    _setattr('pending', pending)\n    _setattr('round', round)\n    _setattr('notes', notes)\n":
        _95_durable_tasks_generation_records_ToolRound,
    "def __init__(self, since, deadline=attr_dict['deadline'].default, parameters=attr_dict['parameters'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('since', since)\n    _setattr('deadline', deadline)\n    _setattr('parameters', parameters)\n":
        _96_durable_tasks_tool_records_Approval,
    "def __init__(self, call, replay=attr_dict['replay'].default, client=attr_dict['client'].default, deadline=attr_dict['deadline'].default, timeout=attr_dict['timeout'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('call', call)\n    _setattr('replay', replay)\n    _setattr('client', client)\n    _setattr('deadline', deadline)\n    _setattr('timeout', timeout)\n":
        _97_durable_tasks_tool_records_ToolInput,
    "def __init__(self, output=attr_dict['output'].default, result=attr_dict['result'].default, started=attr_dict['started'].default, started_at=attr_dict['started_at'].default, ended_at=attr_dict['ended_at'].default, arguments=attr_dict['arguments'].default, paused=attr_dict['paused'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('output', output)\n    _setattr('result', result)\n    _setattr('started', started)\n    _setattr('started_at', started_at)\n    _setattr('ended_at', ended_at)\n    _setattr('arguments', arguments)\n    _setattr('paused', paused)\n":
        _98_durable_tasks_tool_records_ToolProgress,
    "def __init__(self, conversation_id, submission_id, since):\n    _setattr = _cached_setattr_get(self)\n    _setattr('conversation_id', conversation_id)\n    _setattr('submission_id', submission_id)\n    _setattr('since', since)\n":
        _99_durable_tasks_tool_subagent_Delegated,
    "def __init__(self, name, description, parameters=NOTHING, replay=attr_dict['replay'].default, execute=attr_dict['execute'].default, client=attr_dict['client'].default, convert=attr_dict['convert'].default, validator=attr_dict['validator'].default, approval=attr_dict['approval'].default, max_retries=attr_dict['max_retries'].default, timeout=attr_dict['timeout'].default, threaded=attr_dict['threaded'].default, agent=attr_dict['agent'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('name', name)\n    _setattr('description', description)\n    if parameters is not NOTHING:\n        _setattr('parameters', parameters)\n    else:\n        _setattr('parameters', __attr_factory_parameters())\n    _setattr('replay', replay)\n    _setattr('execute', execute)\n    _setattr('client', client)\n    _setattr('convert', convert)\n    _setattr('validator', validator)\n    _setattr('approval', approval)\n    _setattr('max_retries', max_retries)\n    _setattr('timeout', timeout)\n    _setattr('threaded', threaded)\n    _setattr('agent', agent)\n":
        _100_durable_tools_protocol_Tool,
    "def __init__(self, task_id, call_id, conversation_id, attempt, deps):\n    _setattr = _cached_setattr_get(self)\n    _setattr('task_id', task_id)\n    _setattr('call_id', call_id)\n    _setattr('conversation_id', conversation_id)\n    _setattr('attempt', attempt)\n    _setattr('deps', deps)\n":
        _101_durable_tools_protocol_ToolContext,
    "def __init__(self, schema, convert, execute):\n    _setattr = _cached_setattr_get(self)\n    _setattr('schema', schema)\n    _setattr('convert', convert)\n    _setattr('execute', execute)\n":
        _102_durable_tools_schema_TypedCall,
    "def __init__(self, name, instructions=attr_dict['instructions'].default, tools=NOTHING, model=attr_dict['model'].default, output=attr_dict['output'].default):\n    _setattr = _cached_setattr_get(self)\n    _setattr('name', name)\n    _setattr('instructions', instructions)\n    if tools is not NOTHING:\n        _setattr('tools', tools)\n    else:\n        _setattr('tools', __attr_factory_tools())\n    _setattr('model', model)\n    _setattr('output', output)\n":
        _103_durable_tools_subagent_Subagent,
}
