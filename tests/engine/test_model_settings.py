"""Model settings through the harness: merged harness < conversation handle < input, stored with the
input and with the run's generation, checked against the model before anything is written (exact
messages), the older `model_options` converted or refused; inputs queued with other settings
run apart; the faux model honours `stop` and `max_tokens`."""

from __future__ import annotations

import anyio
import pytest

import durable
from durable import ModelSettings, records as r
from durable.models import FauxModel, faux
from durable.models.caching import cache_key
from durable.models.protocol import FinalMessage, ModelRequest
from durable.tasks.generation.records import GenerationInput

from .conftest import settings

pytestmark = pytest.mark.anyio

WEATHER = durable.define_tool("get_weather", "The weather", {"type": "object", "properties": {}},
                              execute=lambda args, api, ctx: "sunny")


async def test_settings_merge_harness_then_conversation_then_input_and_are_stored_with_the_run(host):
    model = FauxModel([faux.reply("One"), faux.reply("Two")])
    harness = settings(model_options={"top_p": 0.5},
                       model_settings=ModelSettings(temperature=0.1, max_tokens=100, extra={"a": 1, "b": 1}))
    async with host.open(model, settings=harness) as h:
        conv = h.conversation("root", model_settings=ModelSettings(temperature=0.2, extra={"b": 2}))
        sub = await conv.submit("Hi", model_settings=ModelSettings(seed=7, extra={"a": 3}))
        assert await sub.wait() == r.Answered("One", 2)
        merged = ModelSettings(temperature=0.2, top_p=0.5, max_tokens=100, seed=7, extra={"a": 3, "b": 2})
        [sent] = model.requests
        assert (sent.settings, sent.options) == (merged, {"temperature": 0.2, "max_tokens": 100})
        assert sent.cache_key == cache_key(h.storage.location, "root")
        assert (await sub.get()).model_settings == ModelSettings(temperature=0.2, seed=7, extra={"a": 3, "b": 2})
        assert (await h.task(1)).input == GenerationInput((sub.id,), merged)
        plain = await h.root.submit("Again")  # a handle without settings: the harness's alone
        assert await plain.wait() == r.Answered("Two", 4)
        own = ModelSettings(temperature=0.1, top_p=0.5, max_tokens=100, extra={"a": 1, "b": 1})
        assert model.requests[1].settings == own
        stored = ((await plain.get()).model_settings, (await h.task(2)).input)
        assert stored == (None, GenerationInput((plain.id,), own))


async def test_without_any_settings_nothing_more_is_stored(host):
    model = FauxModel([faux.reply("One")])
    async with host.open(model, settings=settings()) as h:
        sub = await h.root.submit("Hi")
        await sub.wait()
        assert ((await sub.get()).model_settings, (await h.task(1)).input) == (None, GenerationInput((sub.id,)))
        assert (model.requests[0].settings, model.requests[0].options) == (ModelSettings(), {})


def test_an_unknown_model_options_key_is_an_error_not_ignored():
    with pytest.raises(durable.InvalidModelSettings) as refused:
        durable.Settings(model_options={"temprature": 0.5, "max_tokens": 9})
    assert str(refused.value) == (
        "Settings.model_options has unknown key 'temprature' (known: temperature, top_p, max_tokens, stop, seed, "
        "reasoning_effort, thinking_budget, tool_choice, parallel_tool_calls, service_tier, prompt_cache, extra, "
        "model); use durable.ModelSettings")
    assert durable.Settings(model_options={"temperature": 0.5, "model": "m"}).model_defaults == ModelSettings(
        temperature=0.5, model="m")


REFUSED_SEED = "Model faux cannot honour ModelSettings.seed: the faux model was made to refuse it"


async def test_a_setting_the_model_cannot_honour_is_refused_before_anything_is_written(host):
    model = FauxModel([], refuses=("seed",))
    with pytest.raises(durable.UnsupportedModelSetting) as at_construction:
        durable.open_harness(host.path, model=model, settings=settings(model_settings=ModelSettings(seed=1)))
    assert (str(at_construction.value), at_construction.value.model, at_construction.value.option) == (
        REFUSED_SEED, "faux", "seed")
    async with host.open(model, tools=[WEATHER], settings=settings()) as h:
        with pytest.raises(durable.UnsupportedModelSetting) as at_handle:
            h.conversation("c", model_settings=ModelSettings(seed=1))
        assert str(at_handle.value) == REFUSED_SEED
        with pytest.raises(durable.UnsupportedModelSetting) as at_submit:
            await h.root.submit("Hi", model_settings=ModelSettings(seed=1))
        assert str(at_submit.value) == REFUSED_SEED
        with pytest.raises(durable.UnsupportedModelSetting) as unknown_tool:
            await h.root.submit("Hi", model_settings=ModelSettings(tool_choice="get_wether"))
        assert str(unknown_tool.value) == ("Model faux cannot honour ModelSettings.tool_choice: it names the tool "
                                           "'get_wether', which is not offered (tools offered: get_weather)")
        assert await h.tasks() == []
    assert await host.transcript() == []
    assert model.requests == []


async def test_the_same_submission_id_with_other_settings_is_refused(host):
    model = FauxModel([faux.reply("One")])
    async with host.open(model, settings=settings()) as h:
        await (await h.root.submit("Hi", id="k1", model_settings=ModelSettings(seed=1))).wait()
        again = await h.root.submit("Hi", id="k1", model_settings=ModelSettings(seed=1))
        assert again.id == "k1"
        with pytest.raises(durable.InvalidInput) as other:
            await h.root.submit("Hi", id="k1", model_settings=ModelSettings(seed=2))
        assert str(other.value) == (f"Submission id 'k1' in {h.storage.location} is taken by an input with other "
                                    f"model settings; the input was not accepted")
    assert len(model.requests) == 1


class Gated(FauxModel):
    """A faux model whose first request waits for `gate`."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.gate = anyio.Event()

    async def stream(self, request):
        if self.request_count == 0:
            await self.gate.wait()
        async for event in super().stream(request):
            yield event


async def test_inputs_queued_with_other_settings_are_answered_by_runs_of_their_own(host):
    model = Gated([faux.reply("A"), faux.reply("BC"), faux.reply("D")])
    async with host.open(model, settings=settings()) as h:
        a = await h.root.submit("a")
        b = await h.root.submit("b", model_settings=ModelSettings(seed=1))
        c = await h.root.submit("c", model_settings=ModelSettings(seed=1))
        d = await h.root.submit("d", model_settings=ModelSettings(seed=2))
        model.gate.set()  # the run of "a" answers once the others are queued
        assert [await s.wait() for s in (a, b, c, d)] == [r.Answered("A", 2), r.Answered("BC", 5),
                                                          r.Answered("BC", 5), r.Answered("D", 7)]
    assert [q.settings for q in model.requests] == [ModelSettings(), ModelSettings(seed=1), ModelSettings(seed=2)]
    assert await host.transcript() == ["user", "assistant:stop", "user", "user", "assistant:stop", "user",
                                       "assistant:stop"]


async def test_the_faux_model_honours_stop_and_max_tokens():
    model = FauxModel([faux.reply("Hello there. END of it"), faux.reply("Hello there")], token_size=4)
    finals = []
    for s in (ModelSettings(stop=["END", "there"]), ModelSettings(max_tokens=2)):
        events = [e async for e in model.stream(ModelRequest("", (r.UserEntry("Hi"),), settings=s))]
        finals.append(events[-1])
    assert finals == [FinalMessage("Hello ", "stop", (), r.Usage(10, 2)), FinalMessage("Hello th", "length", (),
                                                                                        r.Usage(10, 2))]


async def test_a_compaction_asks_with_the_harness_settings_but_no_tool_choice(host):
    model = FauxModel([faux.reply("One"), faux.reply("Two"), faux.reply("We talked.")])
    harness = settings(compaction=durable.Compaction(keep_last=1),
                       model_settings=ModelSettings(temperature=0.3, tool_choice="required", parallel_tool_calls=False))
    async with host.open(model, tools=[WEATHER], settings=harness) as h:
        await (await h.root.submit("Hi", model_settings=ModelSettings(tool_choice="none"))).wait()
        await (await h.root.submit("Again", model_settings=ModelSettings(tool_choice="none"))).wait()
        await h.wait_for_task(await h.root.compact())
    assert [q.settings for q in model.requests] == [
        ModelSettings(temperature=0.3, tool_choice="none", parallel_tool_calls=False)] * 2 + [
        ModelSettings(temperature=0.3)]  # a summary request offers no tools
    assert model.requests[2].tools == ()


def test_the_sync_api_takes_settings_per_conversation_and_input(tmp_path):
    model = FauxModel([faux.reply("One")])
    with durable.sync.open_harness(tmp_path / "s.sqlite", model=model) as h:
        conv = h.conversation("root", model_settings=ModelSettings(temperature=0.2))
        assert conv.submit("Hi", model_settings=ModelSettings(seed=3)).wait() == r.Answered("One", 2)
    assert model.requests[0].settings == ModelSettings(temperature=0.2, seed=3)
