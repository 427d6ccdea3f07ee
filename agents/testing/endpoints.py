"""A real HTTP endpoint that speaks the model wire protocols, for tests and benchmarks of model
agents: a scripted model on 127.0.0.1.

``ScriptedServer`` is a real HTTP server (stdlib, one thread per request) that speaks the
OpenAI Chat Completions (``POST /v1/chat/completions``) and Responses (``/v1/responses``)
wire formats and Anthropic's Messages format (``/v1/messages``), streamed as server-sent
events when the request asks (``"stream": true``: ``stream_events``). Its "model" is a script:
a function from the request to a reply ``{"text": str, "tool_calls": [{"name", "arguments"}],
"usage": {...}}`` that the server wraps in the API's JSON. It can delay every reply, fail
requests with a status (and Retry-After), or stop answering; it counts requests, replies,
the usage it reported and the most requests in flight at once.

Every request is checked as the real API checks it (agents/testing/wire_schema.py): one the
API would refuse gets its 400 and is counted in ``refused`` (``check = False`` turns this
off). For the clients' bounds, ``misbehave`` makes every reply endless (``"endless"``: an
event stream that never ends), slow (``"drip"``: a valid reply sent a byte at a time,
``drip_seconds`` apart), huge (``"huge"``: ``huge_bytes`` of body, with its length
declared, or ``"huge-chunked"`` without) or compressed (``"gzip"``, whatever was asked).

``gesture_script`` turns a stream of GUI actions in frame pixels (e.g. the solver agent's
gestures for an objective: ``solver_gestures``) into the replies a model would write in one
agent protocol, coordinates converted to that protocol's convention. These encoders are
written from the formats' descriptions, independently of the protocols' parsers.
"""

from __future__ import annotations

import itertools
import json
import math
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable

from longpuzzle.agents.media.images import UITARS_MAX_PIXELS, UITARS_MIN_PIXELS, smart_resize

DEFAULT_USAGE = {"input": 1000, "cached": 600, "output": 40, "reasoning": 8}


# ---- replies from the solver's gestures --------------------------------------------------

def solver_gestures(objective: str, frame_size: tuple[int, int] = (540, 960), style: str = "2d") -> list[dict]:
    """The GUI actions (frame pixels) with which the solver agent completes ``objective``
    from the home screen, after the opening wait."""
    import numpy as np          # lazy: the solver agent and the harness, for solver_gestures only

    from longpuzzle.agents.base import FinalAnswer, Observation, action_spec
    from longpuzzle.agents.scripted import SolverAgent
    from longpuzzle.agents.harness import instruction_for

    game, diff = objective.split("/")
    a = SolverAgent(style=style)
    a.reset(instruction_for(game, diff), action_spec(*frame_size))
    out = []
    seen = Observation(np.zeros((1, 1, 3), np.uint8), None, 0, None)   # the solver plans from its own model
    while True:
        x = a.act(seen)
        if isinstance(x, FinalAnswer):
            return out
        out.append(x)


def _flatten(actions: list[dict]) -> list[dict]:
    out = []
    for a in actions:
        out.extend(a["actions"] if a["type"] == "batch" else [a])
    return out


def _grid(v: float, side: int, scale: float = 1000.0) -> int:
    return min(int(scale), int(round((v + 0.5) * scale / side)))


def _direction(a: dict) -> str:
    dx, dy = a["x1"] - a["x0"], a["y1"] - a["y0"]
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


def gesture_script(protocol: str, actions: list[dict], frame_size: tuple[int, int] = (540, 960)) -> list[dict]:
    """The replies that perform ``actions`` in ``protocol`` (general_e2e, native, qwen, uitars,
    and the tool agents vista-* and code-cua: one ``play`` call per action, in the paper's
    form play(action, x, y, ...))."""
    W, H = frame_size
    out: list[dict] = []
    if protocol.startswith("vista-") or protocol == "code-cua":
        def play(a):
            return {"tool_calls": [{"name": "play", "arguments": {"action": a["type"],
                                                                  **{k: v for k, v in a.items() if k != "type"}}}]}
        return [play({"type": "wait", "ms": 0})] + [play(a) for a in _flatten(actions)]
    if protocol == "native":
        out.append({"tool_calls": [{"name": "gui", "arguments": {"action": "wait", "ms": 500}}]})

        def one(a):
            if a["type"] == "click":
                return {"action": "click", "x": int(a["x"]), "y": int(a["y"])}
            if a["type"] in ("swipe", "drag"):
                return {"action": "drag", "x0": int(a["x0"]), "y0": int(a["y0"]), "x1": int(a["x1"]), "y1": int(a["y1"])}
            if a["type"] == "wait":             # (the solver waits for Nut and Bolt's advance on the hub)
                return {"action": "wait", "ms": int(a.get("ms", 1000))}
            raise ValueError(f"no native form for {a}")
        for a in actions:
            args = {"action": "batch", "actions": [one(x) for x in a["actions"]]} if a["type"] == "batch" else one(a)
            out.append({"text": "", "tool_calls": [{"name": "gui", "arguments": args}]})
        return out
    acts = _flatten(actions)
    if protocol == "general_e2e":
        for a in acts:
            if a["type"] == "click":
                j = {"action_type": "click", "coordinate": [_grid(a["x"], W), _grid(a["y"], H)]}
            elif a["type"] == "wait":
                j = {"action_type": "wait", "duration_ms": int(a.get("ms", 1000))}
            elif a["type"] == "swipe":
                j = {"action_type": "swipe", "direction": _direction(a),
                     "coordinate": [_grid(a["x0"], W), _grid(a["y0"], H)]}
            else:
                j = {"action_type": "drag", "start_coordinate": [_grid(a["x0"], W), _grid(a["y0"], H)],
                     "end_coordinate": [_grid(a["x1"], W), _grid(a["y1"], H)]}
            out.append({"text": f"Thought: next step of the plan.\nAction: {json.dumps(j)}"})
        return out
    if protocol == "qwen":
        def call(args):
            return {"text": "Next step.\n<tool_call>\n" + json.dumps({"name": "computer_use", "arguments": args})
                    + "\n</tool_call>"}
        for a in acts:
            if a["type"] == "click":
                out.append(call({"action": "left_click", "coordinate": [_grid(a["x"], W), _grid(a["y"], H)]}))
            elif a["type"] == "wait":
                out.append(call({"action": "wait", "time": max(0.001, a.get("ms", 1000) / 1000)}))
            else:
                out.append(call({"action": "mouse_move", "coordinate": [_grid(a["x0"], W), _grid(a["y0"], H)]}))
                out.append(call({"action": "left_click_drag", "coordinate": [_grid(a["x1"], W), _grid(a["y1"], H)]}))
        return out
    if protocol == "uitars":
        h, w = smart_resize(H, W, 28, UITARS_MIN_PIXELS, UITARS_MAX_PIXELS)

        def px(x, y):
            return f"({int(math.floor((x + 0.5) * w / W))},{int(math.floor((y + 0.5) * h / H))})"
        for a in acts:
            if a["type"] == "click":
                act = f"click(start_box='<|box_start|>{px(a['x'], a['y'])}<|box_end|>')"
            elif a["type"] == "wait":
                act = "wait()"                  # (5 s: longer than any advance the solver waits for)
            else:
                act = (f"drag(start_box='<|box_start|>{px(a['x0'], a['y0'])}<|box_end|>', "
                       f"end_box='<|box_start|>{px(a['x1'], a['y1'])}<|box_end|>')")
            out.append({"text": f"Thought: I continue with the plan.\nAction: {act}"})
        return out
    raise ValueError(f"unknown protocol {protocol!r}")


def assistant_turns(api: str, body: dict) -> int:
    """How many model replies the request's history holds (the next reply's index when the
    whole history is replayed)."""
    if api == "responses":
        n, prev = 0, False
        for it in body.get("input") or []:
            is_a = it.get("role") == "assistant" or it.get("type") == "function_call"
            n += is_a and not prev
            prev = is_a
        return n
    return sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")


def last_user_text(api: str, body: dict) -> str:
    items = body.get("input") if api == "responses" else body.get("messages")
    for m in reversed(items or []):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c
        return "\n".join(p.get("text", "") for p in c or [] if isinstance(p, dict) and "text" in p)
    return ""


class ReplayScript:
    """Answers request k with ``replies[k]``, k = the number of replies already in the
    request's history (stateless: many episodes can share one server), or the number of
    script requests answered so far (``by="sequence"``: one episode, any history policy).
    Compaction requests get a summary; past the end, a completion message."""

    def __init__(self, replies: list[dict], by: str = "history", usage: dict | None = None,
                 end: dict | None = None):
        self.replies = replies
        self.by = by
        self.usage = dict(DEFAULT_USAGE if usage is None else usage)
        self.end = end or {"text": "BENCHMARK COMPLETED: the screen shows the completion card."}
        self._n = itertools.count()
        self.compactions = 0

    def __call__(self, api: str, body: dict) -> dict:
        if "conversation is about to be shortened" in last_user_text(api, body):
            self.compactions += 1
            return {"text": "Summary: playing the objective; continue with the plan.", "usage": self.usage}
        k = assistant_turns(api, body) if self.by == "history" else next(self._n)
        r = dict(self.replies[k]) if k < len(self.replies) else dict(self.end)
        r.setdefault("usage", self.usage)
        return r


# ---- the server --------------------------------------------------------------------------

class ScriptedServer:
    """``with ScriptedServer(script) as srv: srv.url`` (the base URL for OpenAI clients,
    ``srv.url_v1``; Anthropic clients take ``srv.url``)."""

    def __init__(self, script: Callable[[str, dict], dict], delay: float = 0.0):
        self.script = script
        self.delay = delay
        self.faults: list[tuple] = []              # (status, headers, message) answered before the script
        self.hang = threading.Event()              # set: requests get no answer until cleared
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.requests = 0
        self.replies = 0
        self.statuses: dict[int, int] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self.reported = {"input": 0, "cached": 0, "output": 0, "reasoning": 0}
        self.bodies: list[dict] = []               # {"n", "api", "body"} of the requests kept
        self.keep_bodies = 0                        # keep every k-th request answered (0: none)
        self.check = True                           # refuse what the real API refuses (wire_schema)
        self.refused: list[str] = []                # the first problem of each refused request
        self.misbehave: str | None = None           # None | "endless" | "drip" | "huge" | "huge-chunked" | "gzip"
        self.drip_seconds = 0.05
        self.huge_bytes = 100 * 10 ** 6
        self._answered = 0
        self._ids = itertools.count(1)
        self._httpd = None
        self._thread = None

    # -- control
    def fail_next(self, status: int, count: int = 1, retry_after: float | None = None, message: str = "") -> None:
        h = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        with self._lock:
            self.faults.extend([(status, h, message or f"scripted {status}")] * count)

    def start(self) -> ScriptedServer:
        srv = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                # headers and body go out as separate writes: without this, Nagle's
                # algorithm and delayed ACKs hold every reply back by ~40 ms
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, *a):
                pass

            def do_POST(self):
                srv._handle(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def url_v1(self) -> str:
        return self.url + "/v1"

    # -- requests
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        n = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(n)
        path = h.path.split("?")[0]
        api = {"/v1/chat/completions": "chat", "/v1/responses": "responses", "/v1/messages": "messages"}.get(path)
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self.faults.pop(0) if self.faults else None
        try:
            while self.hang.is_set() and not self._stop.is_set():
                time.sleep(0.02)
            if self._stop.is_set():
                return
            if self.delay:
                time.sleep(self.delay)
            if api is None:
                return self._send(h, 404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            if fault is not None:
                status, headers, message = fault
                return self._send(h, status, {"error": {"message": message, "type": "scripted"}}, headers)
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                return self._send(h, 400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            if self.check:
                from longpuzzle.agents.testing.wire_schema import request_problems
                problems = request_problems(api, body, beta=bool(h.headers.get("anthropic-beta")))
                if problems:
                    with self._lock:
                        self.refused.append(problems[0])
                    err = {"message": problems[0], "type": "invalid_request_error"}
                    return self._send(h, 400, {"type": "error", "error": err} if api == "messages" else {"error": err})
            if self.misbehave:
                return self._misbehave(h, api, body)
            with self._lock:
                n = self._answered
                self._answered += 1
                if self.keep_bodies and n % self.keep_bodies == 0:
                    self.bodies.append({"n": n, "api": api, "body": body})
            reply = self.script(api, body)
            payload = self._wrap(api, body, reply)
            if body.get("stream"):
                self._send_events(h, stream_events(api, payload))
            else:
                self._send(h, 200, payload)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _misbehave(self, h, api: str, body: dict) -> None:
        """A reply that a model client must bound (see the class doc)."""
        mode = self.misbehave
        try:
            h.send_response(200)
            if mode == "endless":
                h.send_header("Content-Type", "text/event-stream")
                h.send_header("Connection", "close")
                h.end_headers()
                while not self._stop.is_set():
                    h.wfile.write(b": still thinking\n\n")
                    h.wfile.flush()
                    time.sleep(0.005)
            elif mode == "gzip":               # compressed although the client asked for none
                import gzip
                data = gzip.compress(json.dumps(self._wrap(api, body, {"text": "zipped"})).encode())
                h.send_header("Content-Type", "application/json")
                h.send_header("Content-Encoding", "gzip")
                h.send_header("Content-Length", str(len(data)))
                h.end_headers()
                h.wfile.write(data)
            elif mode == "drip":
                data = json.dumps(self._wrap(api, body, {"text": "slow"})).encode()
                h.send_header("Content-Type", "application/json")
                h.send_header("Content-Length", str(len(data)))
                h.end_headers()
                for i in range(len(data)):
                    if self._stop.is_set():
                        return
                    h.wfile.write(data[i:i + 1])
                    h.wfile.flush()
                    time.sleep(self.drip_seconds)
            else:
                h.send_header("Content-Type", "application/json")
                if mode == "huge":
                    h.send_header("Content-Length", str(self.huge_bytes))
                else:
                    h.send_header("Connection", "close")
                h.end_headers()
                chunk = b" " * 65536
                left = self.huge_bytes
                while left > 0 and not self._stop.is_set():
                    h.wfile.write(chunk[:left])
                    left -= len(chunk)
        except (BrokenPipeError, ConnectionResetError, OSError):
            return
        finally:
            h.close_connection = True

    def _send(self, h, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        # counted before the bytes go out, so a client that has read its reply always finds it
        # counted (counting after the write raced with the client's next look); a reply the
        # client never took is taken back
        self._count(status, +1)
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self._count(status, -1)

    def _count(self, status: int, n: int) -> None:
        with self._lock:
            self.statuses[status] = self.statuses.get(status, 0) + n
            if not self.statuses[status]:
                del self.statuses[status]
            if status == 200:
                self.replies += n

    def _send_events(self, h, events: list[tuple[str | None, dict | str]]) -> None:
        """A streamed reply (``"stream": true``): server-sent events, all written at once."""
        parts = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            parts.append(f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n")
        raw = "".join(parts).encode()
        self._count(200, +1)            # before the write, as in _send
        try:
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Cache-Control", "no-cache")
            h.send_header("Content-Length", str(len(raw)))
            h.end_headers()
            h.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):
            self._count(200, -1)

    def _wrap(self, api: str, body: dict, r: dict) -> dict:
        u = {**DEFAULT_USAGE, **(r.get("usage") or {})}
        with self._lock:
            for k in self.reported:
                self.reported[k] += u[k]
            i = next(self._ids)
        text = r.get("text") or ""
        calls = r.get("tool_calls") or []
        model = body.get("model", "scripted")
        if api == "chat":
            msg: dict = {"role": "assistant", "content": text or None}
            if calls:
                msg["tool_calls"] = [{"id": f"call_{i}_{k}", "type": "function",
                                      "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                                     for k, c in enumerate(calls)]
            return {"id": f"chatcmpl-{i}", "object": "chat.completion", "created": int(time.time()), "model": model,
                    "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}],
                    "usage": {"prompt_tokens": u["input"], "completion_tokens": u["output"],
                              "total_tokens": u["input"] + u["output"],
                              "prompt_tokens_details": {"cached_tokens": u["cached"]},
                              "completion_tokens_details": {"reasoning_tokens": u["reasoning"]}}}
        if api == "responses":
            output = []
            if text:
                output.append({"type": "message", "id": f"msg_{i}", "role": "assistant", "status": "completed",
                               "content": [{"type": "output_text", "text": text, "annotations": []}]})
            for k, c in enumerate(calls):
                output.append({"type": "function_call", "id": f"fc_{i}_{k}", "call_id": f"call_{i}_{k}",
                               **({"namespace": c["namespace"]} if c.get("namespace") else {}),
                               "name": c["name"], "arguments": json.dumps(c["arguments"]), "status": "completed"})
            return {"id": f"resp_{i}", "object": "response", "created_at": int(time.time()), "model": model,
                    "status": "completed", "output": output, "parallel_tool_calls": False, "tool_choice": "auto",
                    "tools": [],
                    "usage": {"input_tokens": u["input"], "output_tokens": u["output"],
                              "total_tokens": u["input"] + u["output"],
                              "input_tokens_details": {"cached_tokens": u["cached"]},
                              "output_tokens_details": {"reasoning_tokens": u["reasoning"]}}}
        content = [{"type": "text", "text": text}] if text else []
        for k, c in enumerate(calls):
            content.append({"type": "tool_use", "id": f"toolu_{i}_{k}", "name": c["name"], "input": c["arguments"]})
        # Anthropic reports uncached input apart from cache reads
        return {"id": f"msg_{i}", "type": "message", "role": "assistant", "model": model, "content": content,
                "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": u["input"] - u["cached"], "output_tokens": u["output"],
                          "cache_read_input_tokens": u["cached"], "cache_creation_input_tokens": 0}}


def stream_events(api: str, payload: dict) -> list[tuple[str | None, dict | str]]:
    """The server-sent events (name, data) that stream the complete reply ``payload`` of
    ``api`` ("chat", "responses", "messages"), as each API streams: text and tool-call
    arguments as one delta each."""
    if api == "chat":
        msg = payload["choices"][0]["message"]
        base = {k: payload[k] for k in ("id", "object", "created", "model")}
        base["object"] = "chat.completion.chunk"

        def chunk(delta, finish=None, **extra):
            return (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})
        out = [chunk({"role": "assistant", "content": ""})]
        if msg.get("content"):
            out.append(chunk({"content": msg["content"]}))
        for k, c in enumerate(msg.get("tool_calls") or []):
            out.append(chunk({"tool_calls": [{"index": k, "id": c["id"], "type": "function",
                                              "function": {"name": c["function"]["name"],
                                                           "arguments": c["function"]["arguments"]}}]}))
        out.append(chunk({}, payload["choices"][0]["finish_reason"]))
        out.append((None, {**base, "choices": [], "usage": payload["usage"]}))
        out.append((None, "[DONE]"))
        return out
    if api == "responses":
        seq = itertools.count()
        started = {**payload, "status": "in_progress", "output": [], "usage": None}
        out = [("response.created", {"type": "response.created", "sequence_number": next(seq), "response": started}),
               ("response.in_progress", {"type": "response.in_progress", "sequence_number": next(seq),
                                         "response": started})]
        for i, item in enumerate(payload["output"]):
            ev = {"output_index": i, "item": item}
            out.append(("response.output_item.added", {"type": "response.output_item.added",
                                                       "sequence_number": next(seq), **ev}))
            if item["type"] == "message":
                text = item["content"][0]["text"]
                ids = {"item_id": item["id"], "output_index": i, "content_index": 0}
                out.append(("response.output_text.delta", {"type": "response.output_text.delta",
                                                           "sequence_number": next(seq), **ids, "delta": text}))
                out.append(("response.output_text.done", {"type": "response.output_text.done",
                                                          "sequence_number": next(seq), **ids, "text": text}))
            else:
                ids = {"item_id": item["id"], "output_index": i}
                out.append(("response.function_call_arguments.delta",
                            {"type": "response.function_call_arguments.delta", "sequence_number": next(seq),
                             **ids, "delta": item["arguments"]}))
                out.append(("response.function_call_arguments.done",
                            {"type": "response.function_call_arguments.done", "sequence_number": next(seq),
                             **ids, "arguments": item["arguments"]}))
            out.append(("response.output_item.done", {"type": "response.output_item.done",
                                                      "sequence_number": next(seq), **ev}))
        out.append(("response.completed", {"type": "response.completed", "sequence_number": next(seq),
                                           "response": payload}))
        return out
    u = payload["usage"]
    start = {**payload, "content": [], "stop_reason": None,
             "usage": {**u, "output_tokens": 0}}
    out = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(payload["content"]):
        if block["type"] == "text":
            out.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {"type": "text", "text": ""}}))
            out.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            out.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {**block, "input": {}}}))
            out.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": {"type": "input_json_delta",
                                                          "partial_json": json.dumps(block["input"])}}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": payload["stop_reason"], "stop_sequence": None},
                                  "usage": {"output_tokens": u["output_tokens"]}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out
