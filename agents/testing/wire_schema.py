"""What each wire's API accepts in a request, checked as the real API checks it: the
scripted model server (agents/testing/endpoints.py) refuses a request that the real API
would refuse, with the API's status (400) and a message naming the first problem.

``request_problems(api, body)`` lists the problems of a request body for ``api``
("chat": OpenAI Chat Completions, "responses": OpenAI Responses, "messages": Anthropic
Messages). The top-level parameters each API knows are read from the installed SDK's
request types (the SDKs are generated from the APIs' own specifications; an unknown
parameter is refused, as the APIs do: "Unrecognized request argument", "Extra inputs are
not permitted"); within them the checks cover what the model clients send: types and
ranges of the sampling settings, message roles and content parts, the pairing of every
tool call with its result, tool definitions with valid JSON schemas, and the streaming
options.
"""

from __future__ import annotations

import json
import re
import typing
from functools import lru_cache, cache

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@cache
def known_parameters(api: str, beta: bool = False) -> frozenset[str]:
    """The request body's top-level parameters the API knows (from the SDK's request type).
    ``beta``: a Messages request that names beta features in its ``anthropic-beta`` header
    (as Claude Code's do) may also carry the beta request's parameters (context_management,
    mcp_servers, ...; ``betas`` itself is the SDK's name for that header, never a body field)."""
    if api == "chat":
        from openai.types.chat.completion_create_params import CompletionCreateParamsBase as T
    elif api == "responses":
        from openai.types.responses.response_create_params import ResponseCreateParamsBase as T
    elif beta:
        from anthropic.types.beta.message_create_params import MessageCreateParamsBase as T
        return frozenset((T.__required_keys__ | T.__optional_keys__ | {"stream"}) - {"betas"})
    else:
        from anthropic.types.message_create_params import MessageCreateParamsBase as T
    return frozenset(T.__required_keys__ | T.__optional_keys__ | {"stream"})


def _type_literals(union) -> frozenset[str]:
    """The values of the ``type`` field across the TypedDicts of an SDK union type."""
    out: set[str] = set()
    for member in typing.get_args(union) or (union,):
        ann = getattr(member, "__annotations__", {}).get("type")
        for lit in re.findall(r"Literal\[([^\]]*)\]", str(ann)):
            out.update(re.findall(r"['\"]([^'\"]+)['\"]", lit))
    return frozenset(out)


@cache
def known_types(what: str) -> frozenset[str]:
    """Kinds the API takes beyond those the model clients send (the CLIs attached to the
    scripted server send some): content parts, input items, blocks and tools, read from the
    SDKs' types. Their contents are not checked further."""
    if what == "chat-parts":
        from openai.types.chat.chat_completion_content_part_param import ChatCompletionContentPartParam as U
    elif what == "responses-items":
        from openai.types.responses.response_input_item_param import ResponseInputItemParam as U
    elif what == "responses-tools":
        from openai.types.responses.tool_param import ToolParam as U
    elif what == "anthropic-blocks":
        from anthropic.types.content_block_param import ContentBlockParam as U
    else:
        from anthropic.types.tool_union_param import ToolUnionParam as U
    return _type_literals(U)


@cache
def anthropic_tool_fields() -> frozenset[str]:
    from anthropic.types.tool_param import ToolParam
    return frozenset(ToolParam.__required_keys__ | ToolParam.__optional_keys__)


@cache
def openai_efforts() -> frozenset[str]:
    from openai.types.shared_params.reasoning_effort import ReasoningEffort
    lit = next(a for a in typing.get_args(ReasoningEffort) if typing.get_args(a))
    return frozenset(typing.get_args(lit))


@cache
def anthropic_efforts() -> frozenset[str]:
    from anthropic.types.output_config_param import OutputConfigParam
    t = typing.get_type_hints(OutputConfigParam)["effort"]
    lit = next(a for a in typing.get_args(t) if typing.get_args(a))
    return frozenset(typing.get_args(lit))


class _Problems(list):
    def need(self, ok: bool, msg: str) -> bool:
        if not ok:
            self.append(msg)
        return ok


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _schema(p: _Problems, where: str, schema) -> None:
    if not p.need(isinstance(schema, dict) and schema.get("type") == "object",
                  f"{where}: the parameters must be a JSON schema of type 'object'"):
        return
    error = _schema_error(json.dumps(schema, sort_keys=True))
    if error:
        p.append(f"{where}: invalid JSON schema: {error}")


@lru_cache(maxsize=256)
def _schema_error(text: str) -> str:
    """Why a JSON schema (as canonical JSON text) is invalid, or "" (every request repeats
    the same tools: each is checked once)."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    try:
        Draft202012Validator.check_schema(json.loads(text))
    except SchemaError as e:
        return e.message
    return ""


def request_problems(api: str, body, beta: bool = False) -> list[str]:
    """``beta``: a Messages request with an ``anthropic-beta`` header (see known_parameters)."""
    p = _Problems()
    if not p.need(isinstance(body, dict), "the request body must be a JSON object"):
        return p
    for k in body:
        if k not in known_parameters(api, beta and api == "messages"):
            p.append(f"Unrecognized request argument supplied: {k}" if api != "messages"
                     else f"{k}: Extra inputs are not permitted")
    p.need(isinstance(body.get("model"), str) and body["model"] != "", "model: a model name is required")
    if "stream" in body:
        p.need(isinstance(body["stream"], bool), "stream: must be a boolean")
    if "temperature" in body and "temperature" in known_parameters(api):
        p.need(_num(body["temperature"]) and 0 <= body["temperature"] <= 2, "temperature: must be a number in [0, 2]")
    {"chat": _chat, "responses": _responses, "messages": _messages}[api](p, body)
    return p


# ---- OpenAI Chat Completions ----------------------------------------------------------------

def _chat(p: _Problems, body: dict) -> None:
    for k in ("max_completion_tokens", "max_tokens"):
        if k in body:
            p.need(_int(body[k]) and body[k] >= 1, f"{k}: must be a positive integer")
    p.need(not ("max_tokens" in body and "max_completion_tokens" in body),
           "max_tokens and max_completion_tokens cannot both be set")
    if "reasoning_effort" in body:
        p.need(body["reasoning_effort"] in openai_efforts(), f"reasoning_effort: unsupported value "
                                                             f"{body['reasoning_effort']!r}")
    if "stream_options" in body:
        p.need(body.get("stream") is True, "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
    for i, t in enumerate(body.get("tools") or []):
        f = t.get("function") if isinstance(t, dict) else None
        if p.need(isinstance(t, dict) and t.get("type") == "function" and isinstance(f, dict),
                  f"tools[{i}]: expected {{type: 'function', function: {{...}}}}"):
            p.need(isinstance(f.get("name"), str) and TOOL_NAME.match(f["name"]) is not None,
                   f"tools[{i}].function.name: must match {TOOL_NAME.pattern}")
            if "parameters" in f:
                _schema(p, f"tools[{i}].function.parameters", f["parameters"])
    msgs = body.get("messages")
    if not p.need(isinstance(msgs, list) and msgs, "messages: a non-empty array is required"):
        return
    pending: list[str] = []                  # tool calls of the last assistant message not yet answered
    for i, m in enumerate(msgs):
        if not p.need(isinstance(m, dict), f"messages[{i}]: must be an object"):
            continue
        role = m.get("role")
        if role != "tool" and pending:
            p.append(f"messages[{i}]: an assistant message with 'tool_calls' must be followed by tool messages "
                     f"responding to each 'tool_call_id' (missing: {', '.join(pending)})")
            pending = []
        c = m.get("content")
        if role in ("system", "developer"):
            p.need(isinstance(c, str) or _parts(c, ("text",)), f"messages[{i}].content: text expected")
        elif role == "user":
            p.need(isinstance(c, str) or _chat_user_parts(c), f"messages[{i}].content: text or image_url parts expected")
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            p.need(c is None or isinstance(c, str) or _parts(c, ("text",)), f"messages[{i}].content: text expected")
            p.need(bool(calls) or c not in (None, ""), f"messages[{i}]: an assistant message needs content or tool_calls")
            for k, tc in enumerate(calls):
                f = tc.get("function") if isinstance(tc, dict) else None
                if p.need(isinstance(tc, dict) and isinstance(tc.get("id"), str) and tc.get("type") == "function"
                          and isinstance(f, dict) and isinstance(f.get("name"), str)
                          and isinstance(f.get("arguments"), str),
                          f"messages[{i}].tool_calls[{k}]: expected {{id, type: 'function', function: {{name, "
                          f"arguments: string}}}}"):
                    pending.append(tc["id"])
        elif role == "tool":
            tid = m.get("tool_call_id")
            p.need(tid in pending, f"messages[{i}]: messages with role 'tool' must be a response to a preceding "
                                   f"message with 'tool_calls' (tool_call_id {tid!r})")
            if tid in pending:
                pending.remove(tid)
            p.need(isinstance(c, str) or _parts(c, ("text",)), f"messages[{i}].content: text expected")
        else:
            p.append(f"messages[{i}].role: unknown role {role!r}")
    if pending:
        p.append(f"an assistant message with 'tool_calls' must be followed by tool messages responding to each "
                 f"'tool_call_id' (missing: {', '.join(pending)})")


def _parts(c, kinds) -> bool:
    return isinstance(c, list) and all(isinstance(x, dict) and x.get("type") in kinds and
                                       isinstance(x.get("text"), str) for x in c)


def _chat_user_parts(c) -> bool:
    if not isinstance(c, list) or not c:
        return False
    for x in c:
        if not isinstance(x, dict):
            return False
        if x.get("type") == "text":
            ok = isinstance(x.get("text"), str)
        elif x.get("type") == "image_url":
            u = x.get("image_url")
            ok = isinstance(u, dict) and isinstance(u.get("url"), str) and u["url"].startswith(("data:image/", "http"))
        else:
            ok = x.get("type") in known_types("chat-parts")
        if not ok:
            return False
    return True


# ---- OpenAI Responses ----------------------------------------------------------------------

def _responses(p: _Problems, body: dict) -> None:
    if "max_output_tokens" in body:
        p.need(_int(body["max_output_tokens"]) and body["max_output_tokens"] >= 16,
               "max_output_tokens: must be an integer of at least 16")
    if "reasoning" in body:
        r = body["reasoning"]
        p.need(isinstance(r, dict) and set(r) <= {"effort", "summary", "generate_summary"}
               and r.get("effort", "medium") in openai_efforts(), f"reasoning: invalid value {r!r}")
    if "instructions" in body:
        p.need(isinstance(body["instructions"], str), "instructions: must be a string")
    if "store" in body:
        p.need(isinstance(body["store"], bool), "store: must be a boolean")
    if "stream_options" in body:
        p.need(body.get("stream") is True, "stream_options: only allowed when 'stream' is enabled")
    for i, t in enumerate(body.get("tools") or []):
        if not p.need(isinstance(t, dict) and t.get("type") in known_types("responses-tools"),
                      f"tools[{i}].type: unknown tool type {t.get('type') if isinstance(t, dict) else t!r}"):
            continue
        if t["type"] == "function" and p.need("function" not in t, f"tools[{i}]: expected {{type: 'function', name, "
                                                                    f"parameters}} (not the Chat Completions form)"):
            p.need(isinstance(t.get("name"), str) and TOOL_NAME.match(t["name"]) is not None,
                   f"tools[{i}].name: must match {TOOL_NAME.pattern}")
            _schema(p, f"tools[{i}].parameters", t.get("parameters"))
    items = body.get("input")
    if isinstance(items, str):
        return
    if not p.need(isinstance(items, list), "input: a string or an array of items is required"):
        return
    calls, answered = set(), set()
    for i, it in enumerate(items):
        if not p.need(isinstance(it, dict), f"input[{i}]: must be an object"):
            continue
        kind = it.get("type", "message")
        if kind == "message":
            role, c = it.get("role"), it.get("content")
            kinds = {"user": ("input_text", "input_image", "input_file"), "system": ("input_text",),
                     "developer": ("input_text",), "assistant": ("output_text", "refusal")}.get(role)
            if not p.need(kinds is not None, f"input[{i}].role: unknown role {role!r}"):
                continue
            if isinstance(c, str):
                continue
            ok = isinstance(c, list) and c and all(
                isinstance(x, dict) and x.get("type") in kinds and
                (isinstance(x.get("text") if x["type"] != "refusal" else x.get("refusal"), str)
                 if x.get("type") not in ("input_image", "input_file") else x["type"] == "input_file" or
                 (isinstance(x.get("image_url") or x.get("file_id"), str)
                 and x.get("detail", "auto") in ("low", "high", "auto", "original")))
                for x in c)
            p.need(bool(ok), f"input[{i}].content: parts of type {' or '.join(kinds)} expected")
        elif kind == "function_call":
            if p.need(isinstance(it.get("call_id"), str) and isinstance(it.get("name"), str)
                      and isinstance(it.get("arguments"), str),
                      f"input[{i}]: a function_call needs call_id, name and arguments (a string)"):
                calls.add(it["call_id"])
        elif kind == "function_call_output":
            cid = it.get("call_id")
            p.need(cid in calls, f"input[{i}]: No tool call found for function call output with call_id {cid}.")
            p.need(isinstance(it.get("output"), (str, list)), f"input[{i}].output: a string is required")
            answered.add(cid)
        else:
            p.need(kind in known_types("responses-items"), f"input[{i}].type: unknown item type {kind!r}")
    missing = calls - answered
    p.need(not missing, f"No tool output found for function call {', '.join(sorted(missing))}.")


# ---- Anthropic Messages --------------------------------------------------------------------

def _messages(p: _Problems, body: dict) -> None:
    p.need(_int(body.get("max_tokens")) and body["max_tokens"] >= 1, "max_tokens: Field required (a positive integer)")
    if "output_config" in body:
        oc = body["output_config"]
        p.need(isinstance(oc, dict) and set(oc) <= {"effort", "format"} and oc.get("effort", "high") in
               anthropic_efforts(), f"output_config: invalid value {oc!r}")
    if "system" in body:
        s = body["system"]
        p.need(isinstance(s, str) or _parts(s, ("text",)), "system: text expected")
    for i, t in enumerate(body.get("tools") or []):
        if not p.need(isinstance(t, dict) and isinstance(t.get("name"), str), f"tools.{i}: expected {{name, input_schema}}"):
            continue
        if t.get("type", "custom") != "custom":            # a server tool (bash, web search, ...)
            p.need(t["type"] in known_types("anthropic-tools"), f"tools.{i}.type: unknown tool type {t['type']!r}")
            continue
        p.need(TOOL_NAME.match(t["name"]) is not None, f"tools.{i}.name: String should match {TOOL_NAME.pattern}")
        bad = set(t) - anthropic_tool_fields()
        p.need(not bad, f"tools.{i}: Extra inputs are not permitted ({', '.join(sorted(bad))})")
        _schema(p, f"tools.{i}.input_schema", t.get("input_schema"))
    msgs = body.get("messages")
    if not p.need(isinstance(msgs, list) and msgs, "messages: Field required (a non-empty array)"):
        return
    uses: list[str] = []                     # tool_use ids of the previous assistant turn
    for i, m in enumerate(msgs):
        if not p.need(isinstance(m, dict) and m.get("role") in ("user", "assistant"),
                      f"messages.{i}.role: Input should be 'user' or 'assistant'"):
            continue
        if i == 0:
            p.need(m["role"] == "user", "messages: the first message must use the user role")
        c = m.get("content")
        blocks = [{"type": "text", "text": c}] if isinstance(c, str) else c
        if not p.need(isinstance(blocks, list) and blocks, f"messages.{i}.content: a non-empty list is required"):
            continue
        results = []
        for k, b in enumerate(blocks):
            where = f"messages.{i}.content.{k}"
            t = b.get("type") if isinstance(b, dict) else None
            if t == "text":
                p.need(isinstance(b.get("text"), str) and b["text"] != "", f"{where}: text content blocks must be non-empty")
            elif t == "image":
                src = b.get("source")
                p.need(m["role"] == "user" and isinstance(src, dict) and src.get("type") == "base64"
                       and src.get("media_type") in ("image/png", "image/jpeg", "image/gif", "image/webp")
                       and isinstance(src.get("data"), str), f"{where}: invalid image block")
            elif t == "tool_use":
                if p.need(m["role"] == "assistant" and isinstance(b.get("id"), str) and isinstance(b.get("name"), str)
                          and isinstance(b.get("input"), dict), f"{where}: invalid tool_use block"):
                    results.append(b["id"])
            elif t == "tool_result":
                inner = b.get("content", "")
                p.need(m["role"] == "user" and isinstance(b.get("tool_use_id"), str)
                       and (isinstance(inner, str) or (isinstance(inner, list) and all(
                           isinstance(x, dict) and x.get("type") in known_types("anthropic-blocks") for x in inner))),
                       f"{where}: invalid tool_result block")
                p.need(b.get("tool_use_id") in uses, f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: "
                                                     f"{b.get('tool_use_id')}. Each `tool_result` block must have a "
                                                     f"corresponding `tool_use` block in the previous message.")
            else:
                p.need(t in known_types("anthropic-blocks"), f"{where}.type: unknown block type {t!r}")
        if m["role"] == "user":
            answered = {b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"}
            missing = [u for u in uses if u not in answered]
            p.need(not missing, f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                                f"after: {', '.join(missing)}")
            uses = []
        else:
            uses = results
