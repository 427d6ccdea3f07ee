"""The VISTA harness, the Code Execution setting and the MCP server: agents play the benchmark
through tools, under the same objective protocol, budget clock and private evaluator as
``eval`` (agents.harness.ObjectiveEpisode, driven one tool call at a time).

    tools.py        the tool table: names, schemas, NGAR classes, the settings native / vista / code
    controller.py   Controller: one per episode; every tool call of every transport goes through it,
                    is checked, run and logged into the episode's events
    archive.py      lossless visual memory: frames by turn and frame number from the episode's
                    frame store; crops, zooms and pixel grids
    history.py      the public record of turns and the attempts at the current level
    notes.py        GUIDE.md and WORKING.md
    code.py         run_python: the agent's code in a sandboxed persistent process
    records.py      tool use per level (result.json's "tools"), reproducing every tool result
    model.py        built-in model agents on the tools (native function calling), the VISTA
                    ablation ladder as named configurations
    mcp_server.py   the MCP server (official SDK) over stdio and streamable HTTP
    cli.py          ``longpuzzle mcp``

This package sits above the harness: it reaches the game only through the episode's public
interface (actions in, frames and public feedback out, what the screen shows).
"""

from longpuzzle.agents.vista.controller import Controller, Image, ToolError, ToolResult
from longpuzzle.agents.vista.tools import SETTINGS, TOOLS, Tool, step_kind

__all__ = ["Controller", "Image", "SETTINGS", "TOOLS", "Tool", "ToolError", "ToolResult", "step_kind"]
