"""``LiteLLMDriver``: real models through litellm — the only module that imports litellm.

litellm is imported on first use, not with ``agents``. The driver maps our messages and tool
schemas to the chat-completions format and the answer back; normalises finish reasons;
reads usage (cached tokens included) and prices it from litellm's data (0.0, and a logged
note, for models litellm does not know); streams pieces to listeners; and retries by itself
(429 honouring ``Retry-After``, 5xx, timeouts, dropped connections, streams cut mid-way —
never other 4xx) with the openai client's hidden retries turned off. Credentials stay in
the driver: they never reach the request, the state, events, logs or error messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

from agents.core.compilers import media_tokens
from agents.drivers.chat_format import (
    Stream,
    moved_media,
    normal_finish_reason,
    plain_json,
    provider_fields,
    raw_json,
    reasoning_parts,
    tool_call,
    wire_message,
    wire_messages,
    wire_response_format,
    wire_tool,
)
from agents.errors import ConfigurationError
from agents.records.arguments import amount, function, switch
from agents.records.compiled import replace_fields
from agents.records.content import ImagePart, MediaPart
from agents.records.error_info import ErrorInfo, ProviderError
from agents.records.frozen import deep_thaw, to_pvector
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import Message, ToolCall
from agents.records.redaction import (
    environment_secrets,
    is_secret_key,
    redacted,
    scrub,
    secret_values,
)
from agents.records.usage import Usage
from agents.shell.log import note
from agents.shell.reporting import report_retry
from agents.shell.retry import classify, retry_delay

__all__ = ["LiteLLMDriver", "close_async_clients"]

_FORBIDDEN: Final = frozenset(
    {"model", "messages", "tools", "stream", "max_retries", "num_retries"}
)


# Options that say where a request goes and how it travels, not what the model is asked:
# not in ``request_defaults`` (they may hold credentials, as a URL or a header can).
_TRANSPORT: Final = frozenset(
    {
        "api_base",
        "base_url",
        "api_version",
        "organization",
        "timeout",
        "extra_headers",
        "headers",
        "extra_body",
        "extra_query",
        "custom_llm_provider",
        "client",
        "aws_region_name",
        "vertex_project",
        "vertex_location",
    }
)

_warmed = False


def _litellm() -> Any:
    import litellm

    litellm.suppress_debug_info = True  # no help banners on stdout: errors become data here
    return litellm


def _warm_up() -> None:
    """Import litellm and load its price list, once per process: seconds that would
    otherwise be counted as the first step's model latency in durations, audits and
    reports. (No warm-up call: litellm would report it to any callbacks configured.)"""
    global _warmed
    if _warmed:
        return
    _litellm()
    _rates("openai/warm-up")  # loads litellm's price list
    for module in _LAZY_MODULES:  # what litellm's first call imports by itself
        try:
            importlib.import_module(module)
        except Exception:  # best effort: another litellm may lay out otherwise
            continue
    _warmed = True


# Modules litellm (1.110) imports inside its first completion (~0.3 s of pydantic models).
_LAZY_MODULES: Final = ("litellm.proxy.openai_files_endpoints.common_utils",)


class LiteLLMDriver:
    """A driver for any model litellm reaches (``"openai/gpt-4o"``, ``"anthropic/..."``, …).

    ``num_retries`` retries follow the first attempt, waiting ``retry_backoff`` seconds
    doubled each time (or what ``Retry-After`` asks, up to 60 s); ``sleep``/``asleep``
    replace the waiting (tests pass a recorder). Other keyword options (``temperature``,
    ``max_tokens``, ``api_base``, ``api_key``, ``extra_headers``, …) go to litellm as they
    are; ``keep_raw=True`` keeps the provider's answer in ``InferenceResponse.raw``.
    """

    def __init__(
        self,
        model: str,
        *,
        num_retries: int = 2,
        retry_backoff: float = 0.5,
        timeout: float = 60.0,
        stream: bool = False,
        keep_raw: bool = False,
        sleep: Callable[[float], None] | None = None,
        asleep: Callable[[float], Any] | None = None,
        **litellm_options: Any,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigurationError(f"LiteLLMDriver needs a model name, got {model!r}")
        forbidden = sorted(_FORBIDDEN & set(litellm_options))
        if forbidden:
            raise ConfigurationError(
                f"LiteLLMDriver options {forbidden} are set by the driver itself "
                "(model is the first argument; retries are num_retries=)"
            )
        if not isinstance(num_retries, int) or isinstance(num_retries, bool) or num_retries < 0:
            raise ConfigurationError(f"num_retries must be an int >= 0, got {num_retries!r}")
        self.model = model
        self.num_retries = num_retries
        self.retry_backoff = amount(retry_backoff, "retry_backoff", zero=True)
        self.timeout = amount(timeout, "timeout")
        self.stream = switch(stream, "LiteLLMDriver: stream")
        self.keep_raw = switch(keep_raw, "LiteLLMDriver: keep_raw")
        for given, what in ((sleep, "sleep"), (asleep, "asleep")):
            function(given, f"LiteLLMDriver: {what}", "seconds", error=ConfigurationError)
        self._sleep = sleep or time.sleep
        self._asleep = asleep or asyncio.sleep
        self._options = dict(litellm_options)
        self._prices = _Prices()
        self._secrets = secret_values(litellm_options)
        _warm_up()  # here, not inside the first step (whose duration it would swell)

    def token_counter(self) -> Callable[[Message], int]:
        """Counts a message's tokens with litellm's counter for this driver's model (its
        tokenizers ship with litellm: no network), e.g. for ``TokenWindowCompiler``: text,
        reasoning, and images sent as bytes (sized from them). What it cannot size counts
        as ``estimate_tokens`` counts it (``media_tokens``): an image given by a link
        (litellm's counter, as its version goes, fetches it from inside the step, or counts
        a low-detail image's 85 tokens), audio (which it refuses) and documents (which it
        counts as nothing)."""
        litellm = _litellm()
        model = self.model

        def count(message: Message) -> int:
            sized, estimated = _apart(message)
            return (
                int(litellm.token_counter(model=model, messages=[wire_message(sized)])) + estimated
            )

        return count

    def request_defaults(self) -> dict[str, Any]:
        """What every request sends of this driver's settings, as ``llm_config`` keys: the
        model and the options that shape the answer (``temperature``, ``reasoning_effort``,
        …). Credentials, where the request goes and how it travels (``_TRANSPORT``) stay
        with the driver: they are not what the model was asked."""
        options = {
            key: value
            for key, value in self._options.items()
            if key not in _TRANSPORT and not is_secret_key(key) and plain_json(value)
        }
        return {"model": self.model, **options}

    def describe(self) -> dict[str, Any]:
        """The driver's settings for ``AgentLoop.describe()`` (secrets redacted there)."""
        options = {k: v for k, v in redacted(self._options).items() if plain_json(v)}
        return {
            "num_retries": self.num_retries,
            "retry_backoff": self.retry_backoff,
            "timeout": self.timeout,
            "stream": self.stream,
            "options": json.loads(self._scrub(json.dumps(options))),
            "modalities": _modalities(self.model),
        }

    def __repr__(self) -> str:
        shown = redacted(self._options)
        return self._scrub(f"LiteLLMDriver({self.model!r}, stream={self.stream}, options={shown})")

    # -- the two entry points ---------------------------------------------------------------

    def infer(
        self, request: InferenceRequest, on_delta: Callable[..., None] | None = None
    ) -> InferenceResponse:
        """Ask the model, retrying as configured; raises ``ProviderError`` when it gives up."""
        litellm = _litellm()
        arguments = self._arguments(request)
        attempt = 0
        while True:
            attempt += 1
            try:
                if self.stream:
                    chunks = litellm.completion(**arguments)
                    return _noted(self._streamed(chunks, attempt, on_delta), request)
                return _noted(self._answer(litellm.completion(**arguments)), request)
            except Exception as exc:  # every provider fault is classified below
                error, delay, given_up = self._failure(exc, attempt)
            if given_up is not None:  # raised here, so that no provider text is chained
                raise given_up
            report_retry(attempt, error, delay)
            self._sleep(delay)

    async def ainfer(
        self, request: InferenceRequest, on_delta: Callable[..., None] | None = None
    ) -> InferenceResponse:
        """``infer`` in an event loop (litellm's ``acompletion``)."""
        litellm = _litellm()
        arguments = self._arguments(request)
        attempt = 0
        while True:
            attempt += 1
            try:
                if self.stream:
                    chunks = await litellm.acompletion(**arguments)
                    return _noted(await self._astreamed(chunks, attempt, on_delta), request)
                return _noted(self._answer(await litellm.acompletion(**arguments)), request)
            except Exception as exc:
                error, delay, given_up = self._failure(exc, attempt)
            if given_up is not None:
                raise given_up
            report_retry(attempt, error, delay)
            await self._asleep(delay)

    # -- requests ---------------------------------------------------------------------------

    def _arguments(self, request: InferenceRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            **self._options,
            **{key: deep_thaw(value) for key, value in request.options.items()},
            "model": request.model or self.model,
            "messages": wire_messages(request.messages),
            "timeout": self.timeout,
            "max_retries": 0,  # the openai client's own retries: attempts must not multiply
        }
        if request.tools:
            arguments["tools"] = [wire_tool(schema) for schema in request.tools]
        if request.response_format is not None:
            arguments["response_format"] = wire_response_format(deep_thaw(request.response_format))
        if self.stream:
            arguments["stream"] = True
            # Without it no usage chunk arrives and litellm estimates usage with a tokenizer.
            arguments["stream_options"] = {"include_usage": True}
        return arguments

    # -- answers ----------------------------------------------------------------------------

    def _answer(self, response: Any) -> InferenceResponse:
        choice = response.choices[0]
        message = choice.message
        calls = [
            tool_call(call.id, call.function.name, call.function.arguments, provider_fields(call))
            for call in (message.tool_calls or ())
        ]
        raw = raw_json(response) if self.keep_raw else None
        reasoning = reasoning_parts(
            getattr(message, "thinking_blocks", None), getattr(message, "reasoning_content", None)
        )
        return self._response(
            [*reasoning, message.content or ""] if reasoning else message.content,
            calls,
            choice.finish_reason,
            getattr(response, "usage", None),
            getattr(response, "model", None),
            raw,
        )

    def _response(
        self,
        content: Any,
        calls: list[ToolCall],
        finish_reason: str | None,
        usage: Any,
        model: str | None,
        raw: Any,
    ) -> InferenceResponse:
        return InferenceResponse(
            content=content or "",
            tool_calls=to_pvector(calls),
            finish_reason=normal_finish_reason(finish_reason, bool(calls)),
            usage=self._usage(usage, model),
            model=model,
            raw=raw,
        )

    def _usage(self, usage: Any, model: str | None) -> Usage:
        if usage is None:
            return Usage()
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = _count(details, "cached_tokens")
        written = _count(usage, "cache_creation_input_tokens") or _count(
            details, "cache_creation_tokens"
        )
        reasoning = _count(getattr(usage, "completion_tokens_details", None), "reasoning_tokens")
        return Usage(
            input_tokens=prompt,
            output_tokens=completion,
            cache_read_tokens=cached,
            cost=self._prices.cost((self.model, model), usage, prompt, completion, cached, written),
            cache_write_tokens=written,
            reasoning_tokens=reasoning,
        )

    def _streamed(
        self, chunks: Iterable[Any], attempt: int, on_delta: Callable[..., None] | None
    ) -> InferenceResponse:
        stream = Stream(attempt, on_delta, self.keep_raw)
        for chunk in chunks:
            stream.add(chunk)
        return self._response(*stream.result())

    async def _astreamed(
        self, chunks: Any, attempt: int, on_delta: Callable[..., None] | None
    ) -> InferenceResponse:
        stream = Stream(attempt, on_delta, self.keep_raw)
        async for chunk in chunks:
            stream.add(chunk)
        return self._response(*stream.result())

    # -- faults -----------------------------------------------------------------------------

    def _failure(
        self, exc: Exception, attempt: int
    ) -> tuple[ErrorInfo, float, ProviderError | None]:
        """The fault as data; the delay before the next attempt, or the ``ProviderError``
        to raise when the driver gives up. The error holds the scrubbed text and what a
        retry policy needs, not the provider's exception: its text may echo a credential,
        and a chained exception travels with the error wherever it is logged or shown."""
        status, retryable, retry_after = classify(exc)
        error = ErrorInfo(
            type=type(exc).__name__,
            message=self._scrub(str(exc)),
            details={"status_code": status, "attempts": attempt},
        )
        if not retryable or attempt > self.num_retries:
            given_up = ProviderError(error, retryable=retryable, retry_after=retry_after)
            return error, 0.0, given_up
        return error, retry_delay(attempt, self.retry_backoff, retry_after), None

    def _scrub(self, text: str) -> str:
        """``text`` without this driver's credentials, the environment's, or key-shaped
        words (a provider may echo a key in its error message)."""
        return scrub(text, (*self._secrets, *environment_secrets(os.environ)))


def _apart(message: Message) -> tuple[Message, int]:
    """``message`` with only what litellm's counter sizes, and the tokens of its other
    media parts by ``media_tokens`` (``LiteLLMDriver.token_counter``)."""
    if type(message.content) is str:
        return message, 0
    sized, estimated = [], 0
    for part in message.parts:
        if isinstance(part, MediaPart) and not (
            isinstance(part, ImagePart) and part.blob is not None
        ):
            estimated += media_tokens(part)
        else:
            sized.append(part)
    if len(sized) == len(message.parts):
        return message, 0
    return replace_fields(message, content=to_pvector(sized) if sized else ""), estimated


def _modalities(model: str) -> list[str]:
    """What ``model`` takes and gives by litellm's model list: text, and images, PDFs and
    audio in, and reasoning out, where litellm says so (text only for a model it does not
    know)."""
    litellm = _litellm()
    found = ["text"]
    for name, check in (
        ("image", "supports_vision"),
        ("pdf", "supports_pdf_input"),
        ("audio", "supports_audio_input"),
        ("reasoning", "supports_reasoning"),
    ):
        try:
            if getattr(litellm, check)(model=model):
                found.append(name)
        except Exception:  # litellm raises for some names it cannot map to a provider
            continue
    return found


def _count(holder: Any, name: str) -> int:
    """A token count litellm may give (``0`` when it gives none, or no number)."""
    value = getattr(holder, name, None) if holder is not None else None
    return value if type(value) is int and value > 0 else 0


class _Prices:
    """Per-token prices of the models a driver talks to, looked up once per model.

    litellm's own ``cost_per_token`` takes ~100 µs per call; for models priced linearly the
    rates are read once and applied here (same figures: the prompt's tokens read from the
    cache and written to it, which litellm counts in ``prompt_tokens``, at their own
    rates). Models with other prices (``_APART``: tiers above some number of tokens or for
    an hour's cache, audio, image or reasoning tokens at their own rates) are priced by
    litellm from the whole usage every time; models litellm does not know cost 0.0, with
    one logged note per driver and model.
    """

    def __init__(self) -> None:
        self._rates: dict[str, tuple[float, float, float, float] | str | None] = {}
        self._noted = False

    def cost(
        self,
        models: tuple[str | None, ...],
        usage: Any,
        prompt: int,
        completion: int,
        cached: int,
        written: int,
    ) -> float:
        for model in models:
            if not model:
                continue
            if model not in self._rates:
                self._rates[model] = _rates(model)
            rates = self._rates[model]
            if rates is None:
                continue
            if isinstance(rates, str):  # priced apart: litellm reads the whole usage
                prompt_cost, completion_cost = _litellm().cost_per_token(
                    model=model, usage_object=usage
                )
                return float(prompt_cost + completion_cost)
            inputs, outputs, reads, writes = rates
            uncached = max(prompt - cached - written, 0)
            return uncached * inputs + cached * reads + written * writes + completion * outputs
        if not self._noted:
            self._noted = True
            note(
                "model_not_priced",
                model=next((m for m in models if m), None),
                detail="litellm has no price for this model; its cost is recorded as 0.0",
            )
        return 0.0


_APART: Final = ("above_", "audio", "image", "video", "reasoning", "per_second", "character")
"""Words of litellm's price keys for what one rate a token does not tell: tiers (above so
many tokens, an hour's cache) and tokens of a kind priced apart (a model's audio input at
twice its text, say)."""


def _rates(model: str) -> tuple[float, float, float, float] | str | None:
    """The model's prices a token (input, output, read from the cache, written to it);
    ``"apart"`` when litellm must price its answers (``_APART``); ``None`` unpriced."""
    litellm = _litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:  # litellm raises for models missing from its price list
        return None
    if any("cost" in key and any(word in key for word in _APART) and info[key] for key in info):
        return "apart"
    inputs = float(info.get("input_cost_per_token") or 0.0)
    outputs = float(info.get("output_cost_per_token") or 0.0)
    reads, writes = (info.get(f"cache_{kind}_input_token_cost") for kind in ("read", "creation"))
    return (
        inputs,
        outputs,
        float(reads) if reads is not None else inputs,
        float(writes) if writes is not None else inputs,
    )


def _noted(response: InferenceResponse, request: InferenceRequest) -> InferenceResponse:
    """``response``, saying which tool results' media the request sent in a user message
    after them (``InferenceResponse.moved_media``): chat completions take none in a tool's
    result."""
    moved = moved_media(request.messages)
    return replace_fields(response, moved_media=to_pvector(moved)) if moved else response


async def close_async_clients() -> None:
    """Close the HTTP clients litellm has cached, from inside the event loop the async ones
    belong to, and empty its cache (litellm makes them again when next asked). For code
    that owns an event loop and is about to end it (``evals.evaluate``): otherwise their
    sockets outlive the loop, and the collector warns of them later. litellm's cache is
    the process's: other event loops' clients are closed too, and made again."""
    litellm = sys.modules.get("litellm")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    if cache is None:
        return
    for client in list(getattr(cache, "cache_dict", {}).values()):
        close = getattr(client, "aclose", None) or getattr(client, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # one that will not close keeps the others
                result = close()
                if inspect.isawaitable(result):
                    await result
    cache.flush_cache()
