"""The MCP server: a Controller's tools served with the official ``mcp`` SDK (its low-level
``Server``: our own JSON schemas, images as PNG content, errors as tool errors), over stdio
or streamable HTTP.

    server = build_server(controller)
    anyio.run(serve_stdio, controller)                    # one client on stdin / stdout
    anyio.run(serve_http, controller, "127.0.0.1", 8765)  # http://127.0.0.1:8765/mcp

A tool call runs ``controller.call`` on a worker thread, so a second ``play`` that arrives
while one is running is refused by the controller instead of queued. A result is one text
block (JSON) and one PNG image block per image; a refused call is a tool error
(``isError``) whose text says what was wrong. The server's instructions are the player
prompt and the task (prompt.py).

Ending: the episode ends at completion, the agent's ``final_answer``, the deadline, or an
action timeout (``--action-timeout``), and writes result.json then; the server keeps
answering (every tool then says the episode has ended) until the client leaves. If the
stdio client disconnects first, the agent stopped without a final answer (end
``agent_stop``, scored; it counts toward PER while budget remained); if the server is
stopped (a signal) first, the episode was stopped externally (end
``infrastructure_error``: unscored, as the paper's rule for stopped runs).
"""

from __future__ import annotations

import base64

import anyio
import anyio.to_thread

from longpuzzle.agents.vista.controller import Controller
from longpuzzle.agents.vista.prompt import player_prompt, task_text
from longpuzzle import __version__
from longpuzzle.engine.registry import get_puzzle
from longpuzzle.engine.suite import difficulty_label

SERVER_NAME = "longpuzzle"


def instructions(c: Controller) -> str:
    ep = c.ep
    lang = ep.suite.lang                # the prompts in the screens' language
    return (player_prompt(c.setting, c.names, c.frame_size, c.batch, lang) + ("\n\n任务：" if lang == "zh" else "\n\nTask: ")
            + task_text(c.instruction, ep.obj.game and _title(ep.obj.game), _label(ep.obj.difficulty), c.setting,
                        lang))


def _title(game: str) -> str:
    return get_puzzle(game).title


def _label(d: str) -> str:
    return difficulty_label(d)


def build_server(c: Controller):
    """The SDK Server object serving ``c``'s tools."""
    import mcp_types as types
    from mcp.server import Server

    tool_list = [types.Tool(name=t.name, description=t.description, input_schema=t.schema) for t in c.tools]

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tool_list)

    async def call_tool(ctx, params):
        res = await anyio.to_thread.run_sync(c.call, params.name, dict(params.arguments or {}))
        content = [types.TextContent(type="text", text=res.text)]
        content += [types.ImageContent(type="image", data=base64.b64encode(i.png).decode("ascii"),
                                       mime_type="image/png") for i in res.images]
        return types.CallToolResult(content=content, is_error=res.error)

    return Server(SERVER_NAME, version=__version__, instructions=instructions(c),
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(c: Controller) -> None:
    """Serve one client over stdin / stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    server = build_server(c)
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())


async def serve_http(c: Controller, host: str = "127.0.0.1", port: int = 8765, ready=None) -> None:
    """Serve streamable HTTP at http://host:port/mcp until cancelled (``ready(url)`` is
    called once the socket listens)."""
    import uvicorn

    server = build_server(c)
    app = server.streamable_http_app(host=host)
    cfg = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    web = uvicorn.Server(cfg)

    async def announce():
        while not web.started:
            await anyio.sleep(0.02)
        if ready is not None:
            bound = web.servers[0].sockets[0].getsockname()[1] if web.servers else port
            ready(f"http://{host}:{bound}/mcp")

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await web.serve()
        tg.cancel_scope.cancel()
