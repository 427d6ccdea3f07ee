"""Model clients: one neutral conversation, sent through the official SDKs.

    OpenAIChatClient       Chat Completions (OpenAI, vLLM, SGLang, Ollama, OpenRouter, ...)
    OpenAIResponsesClient  the Responses API
    AnthropicClient        the Messages API (the optional ``anthropic`` extra)

Conversation messages are plain dicts, the same for every API:

    {"role": "system", "text": str}
    {"role": "user", "parts": [part, ...]}
    {"role": "assistant", "text": str, "tool_calls": [ToolCall, ...]}
    {"role": "tool", "call_id": str, "name": str, "parts": [part, ...]}   a function result

    part = {"text": str} | {"image": PNG bytes or None, "ref": {...}}

An image part whose bytes are None (an old screenshot left out of the request) is sent as a
short text placeholder. Where an API cannot put images in a tool result (Chat Completions,
Responses), the result's text goes in the tool message and its images in a user message
right after the results. Tools are ``{"name", "description", "parameters": JSON schema}``.

What is sent: only parameters that the installed SDK's create method takes (read from its
signature, ``sdk_parameters``): a setting the wire does not take is refused before the run
(``unsupported_settings``; e.g. the anthropic SDK's Messages.create takes no temperature),
and a request holding any other is an error of our own code. Every request carries an
output-token limit (the protocol's, the model's ``max_output_tokens``, else
DEFAULT_MAX_OUTPUT_TOKENS). ``ModelConfig.stream`` streams the reply (server-sent events,
assembled here into the same Reply).

Every request runs under a total deadline (``ModelConfig.timeout``) and a reply size cap
(``max_reply_bytes``), streamed or not (agents/models/transport.py).

``complete`` retries with exponential back-off and full jitter on transport errors
(connection failures, timeouts, a missed deadline, unreadable replies), 429 and 5xx,
honouring Retry-After (seconds or retry-after-ms), and never on other 4xx nor on a reply
over the size cap. A provider that still fails after the retries, or refuses the request
outright, raises ``ProviderError``, an InfrastructureError: the episode is unscored and
``eval --resume`` runs it again. The SDKs' own retries are off so that every retry is
counted here. An exception raised before a request reached the network is an error of our
own code: it raises InternalError (never retried, never unscored: the run stops).
"""

from __future__ import annotations

import base64
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from functools import cache
from typing import Any
import inspect

from longpuzzle.agents.base import InfrastructureError, InternalError
from longpuzzle.agents.models.accounting import CallUsage
from longpuzzle.agents.models.config import DEFAULT_MAX_OUTPUT_TOKENS, ModelConfig, ModelConfigError
from longpuzzle.agents.models.transport import bounded, http_client

OMITTED_IMAGE = "[earlier screenshot omitted]"


class ProviderError(InfrastructureError):
    """The provider failed (after retries, or refused the request): not the agent's fault."""

    def __init__(self, message: str, status: int | None = None, retries: int = 0, kind: str = ""):
        super().__init__(message)
        self.status = status
        self.retries = retries
        self.kind = kind              # "HTTP 503", "deadline", "size", or the exception's name


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: Any                 # the decoded JSON object, or the raw text if it is not JSON
    raw: str = ""

    def as_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: CallUsage = field(default_factory=CallUsage)
    finish: str = ""
    id: str = ""
    reasoning: str = ""            # reasoning text, where the provider returns it


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _unicode(v: Any) -> Any:
    """``v`` (a str, or JSON data) with every lone surrogate replaced by U+FFFD."""
    if isinstance(v, str):
        return _LONE_SURROGATE.sub("\ufffd", v)
    if isinstance(v, dict):
        return {_unicode(k): _unicode(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_unicode(x) for x in v]
    return v


def well_formed(reply: Reply) -> Reply:
    """The reply as text that can be sent back and written: JSON lets a reply hold a lone
    surrogate ("\\ud800"), which no request and no UTF-8 file can carry (the next request
    would fail as a provider error, leaving the episode unscored). Each becomes U+FFFD, so
    an action typing it is refused by the GUI as malformed, the model's own failure."""
    reply.text, reply.reasoning = _unicode(reply.text), _unicode(reply.reasoning)
    reply.tool_calls = [ToolCall(_unicode(c.id), _unicode(c.name), _unicode(c.arguments), _unicode(c.raw))
                        for c in reply.tool_calls]
    return reply


def _decode_args(raw: Any) -> Any:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return raw


def _b64(png: bytes) -> str:
    return base64.b64encode(png).decode("ascii")


def _b64_part(p: dict) -> str:
    """An image part's base64 text, encoded once and kept with the part (a long history
    re-sends the same screenshots with every request)."""
    s = p.get("_b64")
    if s is None or p.get("_b64_of") is not p["image"]:
        s = p["_b64"] = _b64(p["image"])
        p["_b64_of"] = p["image"]
    return s


def context_overflow(e: Exception) -> bool:
    """Whether a refused request says the conversation is longer than the model's context."""
    return (isinstance(e, ProviderError) and e.status in (400, 413)
            and re.search(r"context|too long|too many tokens|maximum.{0,40}tokens", str(e), re.I) is not None)


def _retry_after(headers) -> float | None:
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        v = headers.get("retry-after")
        if v is None:
            return None
        try:
            return max(0.0, float(v))
        except ValueError:
            return max(0.0, parsedate_to_datetime(v).timestamp() - time.time())
    except (TypeError, ValueError, AttributeError):
        return None


@cache
def sdk_parameters(api: str) -> frozenset[str]:
    """The keyword parameters that the installed SDK's create method of ``api`` takes."""
    if api == "anthropic":
        try:
            from anthropic.resources.messages import Messages as create_of
        except ImportError:
            raise ModelConfigError("the anthropic API needs the anthropic SDK: pip install 'longpuzzle[anthropic]'") from None
    elif api == "openai-responses":
        from openai.resources.responses import Responses as create_of
    else:
        from openai.resources.chat.completions import Completions as create_of
    return frozenset(inspect.signature(create_of.create).parameters) - {"self"}


# the request parameter each setting is sent as, per wire
SETTING_PARAMETERS = {
    "openai-chat": {"temperature": "temperature", "reasoning_effort": "reasoning_effort"},
    "openai-responses": {"temperature": "temperature", "reasoning_effort": "reasoning"},
    "anthropic": {"temperature": "temperature", "reasoning_effort": "output_config"},
}


def unsupported_settings(cfg: ModelConfig) -> list[str]:
    """The settings of ``cfg`` that its wire's installed SDK takes no parameter for."""
    take = sdk_parameters(cfg.api)
    return [k for k, param in SETTING_PARAMETERS[cfg.api].items()
            if getattr(cfg, k) not in (None, "omit") and param not in take]


class ModelClient:
    """Base client: the retry loop and timing; subclasses build and send one request."""

    api = ""
    sdk_module = "openai"

    def __init__(self, cfg: ModelConfig, *, sleep=time.sleep, rng: random.Random | None = None):
        self.cfg = cfg
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._sdk = None
        self._stopped: str | None = None

    def stop_run(self, reason: str) -> None:
        """Refuse every later request (InternalError): the run is stopping."""
        self._stopped = reason

    # -- subclasses
    def _make_sdk(self, key: str):
        raise NotImplementedError

    def _request(self, system: str | None, messages: list[dict], tools: list[dict] | None,
                 max_tokens: int) -> dict:
        """The create method's keyword arguments (the conversation in ``extra_body``)."""
        raise NotImplementedError

    def _post(self, sdk, kw: dict) -> Reply:
        """Send the request (streamed when the config says so) and read the reply."""
        raise NotImplementedError

    def _classify(self, e: Exception) -> tuple[bool, int | None, float | None]:
        """(retryable, HTTP status, Retry-After seconds) for an SDK exception."""
        raise NotImplementedError

    # -- the public call
    def sdk(self):
        with self._lock:
            if self._sdk is None:
                try:
                    self._sdk = self._make_sdk(self.cfg.api_key())
                except ModelConfigError as e:
                    raise ProviderError(str(e)) from None
            return self._sdk

    def complete(self, messages: list[dict], tools: list[dict] | None = None,
                 max_tokens: int | None = None) -> Reply:
        """Send a conversation; returns the reply with its usage (latency and retries
        included). Raises ProviderError when the provider keeps failing, InternalError for
        an error of our own code (a request that cannot be built or that the SDK refuses
        before sending it) and once the run is stopping (``stop_run``)."""
        if self._stopped is not None:
            raise InternalError(f"the run stopped: {self._stopped}")
        sdk = self.sdk()
        system = "\n\n".join(m["text"] for m in messages if m["role"] == "system") or None
        rest = [m for m in messages if m["role"] != "system"]
        limit = max_tokens or self.cfg.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        try:                                 # our own code: any error here is a bug, never retried
            kw = self._request(system, rest, tools, limit)
        except Exception as e:
            raise InternalError(f"{self.api}: the request could not be built: {type(e).__name__}: {e}") from e
        extra = sorted(set(kw) - sdk_parameters(self.api))
        if extra:
            raise InternalError(f"{self.api}: the installed {self.sdk_module} SDK takes no parameter "
                                f"{', '.join(extra)}")
        t0 = time.perf_counter()
        attempt = 0
        while True:
            try:
                with bounded(self.cfg.timeout, self.cfg.max_reply_bytes) as b:
                    try:
                        reply = self._post(sdk, kw)
                    except Exception as e:
                        if not b.sent and b.failure is None and not self._is_sdk_error(e):
                            raise InternalError(f"{self.api}: the {self.sdk_module} SDK refused the request before "
                                                f"sending it: {type(e).__name__}: {_short(e)}") from e
                        raise
                break
            except (ProviderError, InternalError):
                raise
            except Exception as e:  # noqa: BLE001 - classified below; unknown errors are not retried
                if b.failure is not None:    # past the deadline (retried) or the size cap (not)
                    retryable, status, after = b.failure == "deadline", None, None
                    what, detail = b.failure, b.detail
                else:
                    retryable, status, after = self._classify(e)
                    what, detail = (f"HTTP {status}" if status else type(e).__name__), _short(e)
                if not retryable:
                    raise ProviderError(f"{self.api} request refused ({what}): {detail}", status, attempt,
                                        kind=what) from None
                if attempt >= self.cfg.max_retries:
                    raise ProviderError(f"{self.api} request failed after {attempt} retries ({what}): {detail}",
                                        status, attempt, kind=what) from None
                self._sleep(self.backoff(attempt, after))
                attempt += 1
        reply.usage.latency = time.perf_counter() - t0
        reply.usage.retries = attempt
        return well_formed(reply)

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds before retry ``attempt`` + 1: the server's Retry-After when it sent one
        (capped at backoff_max), else full jitter over base * 2**attempt."""
        if retry_after is not None:
            return min(retry_after, self.cfg.backoff_max)
        return self._rng.uniform(0.0, min(self.cfg.backoff_max, self.cfg.backoff_base * 2 ** attempt))

    def close(self):
        with self._lock:
            if self._sdk is not None:
                try:
                    self._sdk.close()
                except Exception:  # noqa: BLE001
                    pass
                self._sdk = None


def _short(e: Exception, n: int = 300) -> str:
    s = str(e).replace("\n", " ")
    return s if len(s) <= n else s[:n] + "..."


# ---- OpenAI ---------------------------------------------------------------------------------

def _openai_classify(e: Exception):
    import openai
    if isinstance(e, openai.APIStatusError):
        st = e.status_code
        return (st == 429 or st >= 500), st, _retry_after(getattr(e.response, "headers", None))
    if isinstance(e, (openai.APIConnectionError, openai.APIResponseValidationError)):
        return True, None, None
    if isinstance(e, (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError)):
        return True, None, None          # an unreadable reply body
    return False, None, None


def _openai_usage(u, *, responses: bool) -> CallUsage:
    if u is None:
        return CallUsage(reported=False)
    def g(o, k):
        return getattr(o, k, None) if o is not None else None
    if responses:
        inp, out = g(u, "input_tokens") or 0, g(u, "output_tokens") or 0
        cached = g(g(u, "input_tokens_details"), "cached_tokens") or 0
        reasoning = g(g(u, "output_tokens_details"), "reasoning_tokens") or 0
    else:
        inp, out = g(u, "prompt_tokens") or 0, g(u, "completion_tokens") or 0
        cached = g(g(u, "prompt_tokens_details"), "cached_tokens") or 0
        reasoning = g(g(u, "completion_tokens_details"), "reasoning_tokens") or 0
    cached = min(cached, inp)
    return CallUsage(input_uncached=inp - cached, input_cached=cached, output=out, reasoning=reasoning)


class _OpenAIBase(ModelClient):
    def _make_sdk(self, key):
        import openai
        return openai.OpenAI(api_key=key, base_url=self.cfg.base_url, timeout=self.cfg.timeout, max_retries=0,
                             http_client=http_client(openai.DefaultHttpxClient, self.cfg.base_url, self.cfg.timeout))

    def _classify(self, e):
        return _openai_classify(e)

    def _is_sdk_error(self, e):
        import openai
        return isinstance(e, openai.OpenAIError)


class OpenAIChatClient(_OpenAIBase):
    api = "openai-chat"

    @staticmethod
    def wire_messages(system: str | None, messages: list[dict]) -> list[dict]:
        out: list[dict] = [{"role": "system", "content": system}] if system else []
        pending_images: list[dict] = []

        def flush():
            if pending_images:
                out.append({"role": "user", "content": list(pending_images)})
                pending_images.clear()
        for m in messages:
            role = m["role"]
            if role != "tool":
                flush()
            if role == "user":
                out.append({"role": "user", "content": [_chat_part(p) for p in m["parts"]]})
            elif role == "assistant":
                d: dict = {"role": "assistant", "content": m.get("text") or ""}
                if m.get("tool_calls"):
                    d["tool_calls"] = [{"id": c.id, "type": "function",
                                        "function": {"name": c.name, "arguments": c.raw or json.dumps(c.arguments)}}
                                       for c in m["tool_calls"]]
                    if not d["content"]:
                        d["content"] = None
                out.append(d)
            elif role == "tool":
                texts = [p["text"] for p in m["parts"] if "text" in p]
                imgs = [p for p in m["parts"] if "image" in p]
                out.append({"role": "tool", "tool_call_id": m["call_id"],
                            "content": "\n".join(texts) or ("screenshot follows" if imgs else "ok")})
                pending_images.extend(_chat_part(p) for p in imgs)
        flush()
        return out

    def _request(self, system, messages, tools, max_tokens):
        c = self.cfg
        # the conversation goes in extra_body: the SDK sends it as it is instead of walking
        # every part of a long history through its type-directed transform (~100 ms a call)
        heavy: dict = {"messages": self.wire_messages(system, messages)}
        kw: dict = {"model": c.model, "messages": [], c.max_tokens_field: max_tokens}
        if c.temperature is not None:
            kw["temperature"] = c.temperature
        if c.reasoning_effort not in (None, "omit"):
            kw["reasoning_effort"] = c.reasoning_effort
        if tools:
            heavy["tools"] = [{"type": "function", "function": t} for t in tools]
        if c.stream:
            kw["stream"] = True
            kw["stream_options"] = {"include_usage": True}
        kw["extra_body"] = {**c.extra_body, **heavy}
        return kw

    def _post(self, sdk, kw):
        if kw.get("stream"):
            return self._assemble(sdk.chat.completions.create(**kw))
        r = sdk.chat.completions.create(**kw)
        ch = r.choices[0]
        msg = ch.message
        calls = [ToolCall(tc.id, tc.function.name, _decode_args(tc.function.arguments), tc.function.arguments or "")
                 for tc in (msg.tool_calls or []) if getattr(tc, "function", None) is not None]
        reasoning = getattr(msg, "reasoning_content", None) or getattr(msg, "reasoning", None) or ""
        return Reply(text=msg.content or "", tool_calls=calls, usage=_openai_usage(r.usage, responses=False),
                     finish=ch.finish_reason or "", id=r.id or "", reasoning=reasoning if isinstance(reasoning, str) else "")

    @staticmethod
    def _assemble(stream) -> Reply:
        """A streamed reply's chunks put together: text and reasoning deltas joined, tool
        calls by index (id and name from their first chunk, arguments joined), the usage
        from the final chunk."""
        text, reasoning, calls, finish, rid, usage = [], [], {}, "", "", None
        with stream:
            for ch in stream:
                rid = ch.id or rid
                usage = ch.usage or usage
                for choice in ch.choices or []:
                    d = choice.delta
                    text.append(d.content or "")
                    r = getattr(d, "reasoning_content", None) or getattr(d, "reasoning", None)
                    if isinstance(r, str):
                        reasoning.append(r)
                    for tc in d.tool_calls or []:
                        c = calls.setdefault(tc.index, {"id": "", "name": "", "args": []})
                        c["id"] = tc.id or c["id"]
                        if tc.function is not None:
                            c["name"] = tc.function.name or c["name"]
                            c["args"].append(tc.function.arguments or "")
                    finish = choice.finish_reason or finish
        tool_calls = []
        for k in sorted(calls):
            raw = "".join(calls[k]["args"])
            tool_calls.append(ToolCall(calls[k]["id"], calls[k]["name"], _decode_args(raw), raw))
        return Reply(text="".join(text), tool_calls=tool_calls, usage=_openai_usage(usage, responses=False),
                     finish=finish, id=rid, reasoning="".join(reasoning))


def _chat_part(p: dict) -> dict:
    if "text" in p:
        return {"type": "text", "text": p["text"]}
    if p.get("image") is None:
        return {"type": "text", "text": OMITTED_IMAGE}
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + _b64_part(p)}}


def _resp_part(p: dict) -> dict:
    if "text" in p:
        return {"type": "input_text", "text": p["text"]}
    if p.get("image") is None:
        return {"type": "input_text", "text": OMITTED_IMAGE}
    return {"type": "input_image", "image_url": "data:image/png;base64," + _b64_part(p), "detail": "high"}


class OpenAIResponsesClient(_OpenAIBase):
    api = "openai-responses"

    @staticmethod
    def wire_input(messages: list[dict]) -> list[dict]:
        out: list[dict] = []
        pending_images: list[dict] = []

        def flush():
            if pending_images:
                out.append({"role": "user", "content": list(pending_images)})
                pending_images.clear()
        for m in messages:
            role = m["role"]
            if role != "tool":
                flush()
            if role == "user":
                out.append({"role": "user", "content": [_resp_part(p) for p in m["parts"]]})
            elif role == "assistant":
                if m.get("text"):
                    out.append({"role": "assistant", "content": [{"type": "output_text", "text": m["text"]}]})
                for c in m.get("tool_calls") or []:
                    out.append({"type": "function_call", "call_id": c.id, "name": c.name,
                                "arguments": c.raw or json.dumps(c.arguments)})
            elif role == "tool":
                texts = [p["text"] for p in m["parts"] if "text" in p]
                imgs = [p for p in m["parts"] if "image" in p]
                out.append({"type": "function_call_output", "call_id": m["call_id"],
                            "output": "\n".join(texts) or ("screenshot follows" if imgs else "ok")})
                pending_images.extend(_resp_part(p) for p in imgs)
        flush()
        return out

    def _request(self, system, messages, tools, max_tokens):
        c = self.cfg
        heavy: dict = {"input": self.wire_input(messages)}       # sent as it is (see the Chat client)
        kw: dict = {"model": c.model, "input": [], "store": False, "max_output_tokens": max_tokens}
        if system:
            kw["instructions"] = system
        if c.temperature is not None:
            kw["temperature"] = c.temperature
        if c.reasoning_effort not in (None, "omit"):
            kw["reasoning"] = {"effort": c.reasoning_effort}
        if tools:
            heavy["tools"] = [{"type": "function", **t} for t in tools]
        if c.stream:
            kw["stream"] = True
        kw["extra_body"] = {**c.extra_body, **heavy}
        return kw

    def _post(self, sdk, kw):
        if kw.get("stream"):
            r = None
            with sdk.responses.create(**kw) as events:
                for ev in events:             # the last event carries the whole response
                    if ev.type in ("response.completed", "response.incomplete", "response.failed"):
                        r = ev.response
                    elif ev.type == "error":
                        raise ValueError(f"the stream reported an error: {getattr(ev, 'message', '')}")
            if r is None:
                raise ValueError("the stream ended without the completed response")
        else:
            r = sdk.responses.create(**kw)
        texts, calls, reasoning = [], [], []
        for item in r.output or []:
            t = getattr(item, "type", "")
            if t == "message":
                for part in getattr(item, "content", None) or []:
                    if getattr(part, "type", "") == "output_text":
                        texts.append(part.text)
            elif t == "function_call":
                calls.append(ToolCall(item.call_id, item.name, _decode_args(item.arguments), item.arguments or ""))
            elif t == "reasoning":
                for s in getattr(item, "summary", None) or []:
                    reasoning.append(getattr(s, "text", ""))
        return Reply(text="".join(texts), tool_calls=calls, usage=_openai_usage(r.usage, responses=True),
                     finish=getattr(r, "status", "") or "", id=r.id or "", reasoning="\n".join(reasoning))


# ---- Anthropic ------------------------------------------------------------------------------

def _anth_part(p: dict) -> dict:
    if "text" in p:
        return {"type": "text", "text": p["text"]}
    if p.get("image") is None:
        return {"type": "text", "text": OMITTED_IMAGE}
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _b64_part(p)}}


class AnthropicClient(ModelClient):
    """The Messages API (pip install "longpuzzle[anthropic]"). Reasoning effort maps to
    ``output_config.effort`` (low .. max); "none" and "minimal" send nothing."""

    api = "anthropic"
    sdk_module = "anthropic"

    def _make_sdk(self, key):
        try:
            import anthropic
        except ImportError:
            raise ModelConfigError("the anthropic API needs the anthropic SDK: pip install 'longpuzzle[anthropic]'") from None
        return anthropic.Anthropic(api_key=key, base_url=self.cfg.base_url, timeout=self.cfg.timeout, max_retries=0,
                                   http_client=http_client(anthropic.DefaultHttpxClient, self.cfg.base_url,
                                                           self.cfg.timeout))

    def _is_sdk_error(self, e):
        import anthropic
        return isinstance(e, anthropic.AnthropicError)

    def _classify(self, e):
        import anthropic
        if isinstance(e, anthropic.APIStatusError):
            st = e.status_code
            return (st == 429 or st >= 500), st, _retry_after(getattr(e.response, "headers", None))
        if isinstance(e, (anthropic.APIConnectionError, anthropic.APIResponseValidationError)):
            return True, None, None
        if isinstance(e, (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError)):
            return True, None, None
        return False, None, None

    @staticmethod
    def wire_messages(messages: list[dict]) -> list[dict]:
        out: list[dict] = []

        def add(role, blocks):
            if out and out[-1]["role"] == role:
                out[-1]["content"].extend(blocks)     # the API wants alternating roles
            else:
                out.append({"role": role, "content": list(blocks)})
        for m in messages:
            role = m["role"]
            if role == "user":
                add("user", [_anth_part(p) for p in m["parts"]])
            elif role == "assistant":
                blocks = [{"type": "text", "text": m["text"]}] if m.get("text") else []
                for c in m.get("tool_calls") or []:
                    args = c.arguments if isinstance(c.arguments, dict) else {"_raw": c.arguments}
                    blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": args})
                add("assistant", blocks or [{"type": "text", "text": "(no reply)"}])
            elif role == "tool":
                add("user", [{"type": "tool_result", "tool_use_id": m["call_id"],
                              "content": [_anth_part(p) for p in m["parts"]] or [{"type": "text", "text": "ok"}]}])
        return out

    def _request(self, system, messages, tools, max_tokens):
        c = self.cfg
        heavy: dict = {"messages": self.wire_messages(messages)}  # sent as it is (see the Chat client)
        kw: dict = {"model": c.model, "messages": [], "max_tokens": max_tokens}
        if system:
            kw["system"] = system
        if c.temperature is not None:
            kw["temperature"] = c.temperature     # (refused before the run when the SDK takes none)
        if c.reasoning_effort not in (None, "omit", "none", "minimal"):
            kw["output_config"] = {"effort": c.reasoning_effort}
        if tools:
            heavy["tools"] = [{"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]}
                              for t in tools]
        kw["extra_body"] = {**c.extra_body, **heavy}
        return kw

    def _post(self, sdk, kw):
        if self.cfg.stream:
            with sdk.messages.stream(**kw) as s:       # the SDK's own accumulator
                r = s.get_final_message()
        else:
            r = sdk.messages.create(**kw)
        texts, calls, thinking = [], [], []
        for b in r.content or []:
            t = getattr(b, "type", "")
            if t == "text":
                texts.append(b.text)
            elif t == "tool_use":
                calls.append(ToolCall(b.id, b.name, b.input if isinstance(b.input, dict) else _decode_args(b.input),
                                      json.dumps(b.input)))
            elif t == "thinking":
                thinking.append(getattr(b, "thinking", ""))
        u = r.usage
        if u is None:
            usage = CallUsage(reported=False)
        else:
            cached = getattr(u, "cache_read_input_tokens", None) or 0
            written = getattr(u, "cache_creation_input_tokens", None) or 0
            usage = CallUsage(input_uncached=(u.input_tokens or 0) + written, input_cached=cached,
                              output=u.output_tokens or 0)
        return Reply(text="".join(texts), tool_calls=calls, usage=usage, finish=r.stop_reason or "", id=r.id or "",
                     reasoning="\n".join(thinking))


CLIENTS = {"openai-chat": OpenAIChatClient, "openai-responses": OpenAIResponsesClient, "anthropic": AnthropicClient}


def make_client(cfg: ModelConfig, **kw) -> ModelClient:
    return CLIENTS[cfg.api](cfg, **kw)
