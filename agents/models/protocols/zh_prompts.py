"""The native protocol's prompts in Chinese, as the paper ran its agents ("the game interface is
in Chinese, and so are the Codex prompts"; PAPERS.md section 4, B.2): the same player prompt
(permitted information, action interface and bounds, procedure, ending) and task message
(goal, game and difficulty with their on-screen labels, setting) as native.py's English ones,
the labels being those the Chinese screens show (engine/labels.py). Used when the context's
``prompt_lang`` is "zh" (``eval --preset paper``, or ``--lang zh``)."""

from __future__ import annotations

from longpuzzle.agents.models.protocols.base import COMPLETION_PREFIX, KEYS_TEXT
from longpuzzle.engine.labels import screen_text
from longpuzzle.engine.suite import difficulty_label


def bounds_text(proto) -> str:
    if proto.scale:
        s = f"{proto.scale:g}"
        return f"覆盖整张截图的 0..{s} 网格上的 x 和 y（(0, 0) 为左上角，({s}, {s}) 为右下角）"
    w, h = proto.view.size
    return f"截图的整数像素，0 <= x < {w}，0 <= y < {h}，原点在左上角"


def labels(ctx) -> tuple[str, str]:
    """(game title, difficulty) as the Chinese screens show them (the difficulty as on its card)."""
    if not ctx.game:
        return "", ""
    title = screen_text(ctx.title, "zh")
    diff = "默认" if ctx.difficulty == "default" else screen_text(difficulty_label(ctx.difficulty or ""), "zh")
    return title, diff


def instruction(ctx) -> str:
    """The paper's instruction, "Complete all levels of [game] at [difficulty] difficulty in the
    Game Suite", in Chinese with the on-screen labels."""
    title, diff = labels(ctx)
    if not title:
        return ctx.instruction
    return f"在游戏套件中完成「{title}」{diff}难度的全部关卡。"


def native_system(proto, tool_name: str) -> str:
    return (
        "你正在通过屏幕上显示的游戏套件玩游戏，只能使用图形界面输入。\n\n"
        "允许使用的信息：只有返回的截图所显示的内容。你无法访问游戏的源代码或打包资源、关卡目录、答案文件、"
        "DOM 或无障碍数据、页面变量、隐藏状态、评测器输出，也不能进行任何外部检索。\n\n"
        f"操作接口：`{tool_name}` 工具，每次调用执行一个操作。操作有：click(x, y)、doubleclick(x, y)、"
        "drag(x0, y0, x1, y1)、press_key(key)、typetext(text)、scroll(direction, 可选 x, y)、wait(ms)，"
        "以及 batch(actions)：按顺序执行的其他操作的列表，最后一个操作之后返回一张截图。"
        f"坐标为{bounds_text(proto)}。按键：{KEYS_TEXT}。每次调用都会返回一张截图。"
        "第一次调用必须是 wait：它返回第一张截图并开始计时。\n\n"
        "操作流程：通过可见的界面选择游戏和难度，开始之前确认所选内容。需要时使用可见的撤销或重玩控件。"
        "反复失败或已用时间都不是停止的理由：继续游戏，直到整个目标完成。\n\n"
        f"结束：当屏幕显示整个目标已经完成时，发送一条以 `{COMPLETION_PREFIX}` 开头并说明可见证据的消息，"
        "不调用工具。")


def native_task(proto, extra: str) -> str:
    c = proto.ctx
    title, diff = labels(c)
    where = f"游戏是「{title}」（屏幕上显示为「{title}」），难度为「{diff}」。" if title else ""
    setting = "设置：原生 GUI 操作（仅坐标输入）。"
    return "\n".join(p for p in (instruction(c), where, setting, extra) if p)


def observation(feedback) -> str:
    if feedback is None:
        return "截图："
    if not feedback.executed:
        return f"调度器拒绝了该操作：{feedback.message}"
    return "已执行。操作后的截图："


def correction(error: str, tool_name: str) -> str:
    return (f"这不是有效的调用：{error}。请调用 `{tool_name}` 工具执行一个操作；如果屏幕显示整个目标已经完成，"
            f"请回复一条以 `{COMPLETION_PREFIX}` 开头的消息。")
