"""The player prompt for tool-using agents (PAPERS.md section 4, B.2): the permitted
information, the action interface with its bounds, the procedure, and the ending - no rules
and no strategies. The MCP server sends it as its instructions; model agents get it as
their system prompt, and the task as the first user message. Both are in the language of the
screens (``lang``: the paper's interface and its Codex prompts are Chinese; the task message
names the labels the screen shows)."""

from __future__ import annotations

from longpuzzle.engine.gui import NAMED_KEYS

SETTING_NAMES = {"native": "Native GUI Actions (coordinate input only)",
                 "vista": "VISTA harness (coordinate input, plus tools to look again at archived frames, read "
                          "pixels, read the history of your turns and keep notes)",
                 "code": "Code Execution CUA (coordinate input, plus Python code over the screenshots; every "
                         "change to the game still goes through GUI input)"}


SETTING_NAMES_ZH = {"native": "原生 GUI 操作（仅坐标输入）",
                    "vista": "VISTA 工具（坐标输入，另可回看已存档的画面、读取像素、查看自己每一回合的记录并记笔记）",
                    "code": "代码执行 CUA（坐标输入，另可对截图运行 Python 代码；对游戏的每个改动仍须通过 GUI 输入）"}


def player_prompt(setting: str, tools: tuple[str, ...], frame_size: tuple[int, int], batch: bool = True,
                  lang: str = "en") -> str:
    """``batch``: whether play takes a batch of actions (the Controller's batch)."""
    if lang == "zh":
        return _player_prompt_zh(tools, frame_size, batch)
    w, h = frame_size
    extra = []
    if "inspect" in tools:
        extra.append("`inspect` returns enlarged crops of any frame you were shown, including the intermediate "
                     "animation frames of each turn (archived losslessly, indexed by turn and frame number)")
    if "read_pixels" in tools:
        extra.append("`read_pixels` samples a region of an archived frame as a grid of pixel values")
    if "history" in tools:
        extra.append("`history` returns the exact record of your turns, or one summary per attempt at the "
                     "current level")
    if "write_guide" in tools:
        extra.append("GUIDE.md (`read_guide` / `write_guide`) keeps durable knowledge for the whole episode; "
                     "WORKING.md (`read_working` / `write_working`) is the scratchpad of the current level and is "
                     "cleared when another level is on screen; `save_compact_checkpoint` saves both before your "
                     "context is compacted, and when your context is nearly full the other tools wait until you "
                     "have called it")
    if "run_python" in tools:
        extra.append("`run_python` runs your Python code in a persistent process of your own with the archived "
                     "frames as numpy arrays and gui(action, x, y), which sends GUI actions exactly as play does")
    tools_text = ("Other tools: " + "; ".join(extra) + ".\n\n") if extra else ""
    return (
        "You are playing games in a Game Suite shown on a screen, through GUI input only.\n\n"
        "Permitted information: only what the returned screenshots show (and what the tools derive from them). "
        "You have no access to the game's source or bundled assets, level catalogues, answer files, DOM or "
        "accessibility data, page variables, hidden state, evaluator outputs, or any external retrieval.\n\n"
        "Action interface: the `play` tool performs exactly one GUI action" + (
            ", or one batch of actions run in order," if batch else "") + " and returns a screenshot after the "
        "(last) action and the actions available now. An action is its name with its fields, e.g. play(action="
        "\"click\", x=10, y=20). Actions: click {x, y}, double_click {x, y}, drag "
        "{x0, y0, x1, y1} (optionally through waypoints 'via'), swipe {direction}, key {name}, typetext {text}, "
        "scroll {direction}, wait {ms}" + (", batch {actions}" if batch else "") + ". Coordinates are integer "
        "pixels of the "
        f"{w} x {h} screenshot, 0 <= x < {w} and 0 <= y < {h}, origin at the top-left. Keys: letters a-z, digits "
        f"0-9, {', '.join(NAMED_KEYS)}. The first action must be a wait: it returns the first screenshot and "
        "starts the clock. Send each play only after the previous one returned. `screenshot` shows the current "
        "screen again.\n\n" + tools_text +
        "Procedure: select the game and the difficulty through the visible interface and check the selection before "
        "you start. Use the visible undo or restart controls when you need them. Neither repeated failure nor "
        "elapsed time is a reason to stop: keep playing until the objective is complete. One time budget covers "
        "the whole objective, your own thinking included.\n\n"
        "Ending: once the screen shows that the whole objective is complete, call `final_answer` with one message "
        "that starts with `BENCHMARK COMPLETED` and names the visible evidence. Only the evaluator's own "
        "observations count as success.")


def _player_prompt_zh(tools: tuple[str, ...], frame_size: tuple[int, int], batch: bool) -> str:
    """player_prompt in Chinese: the same parts, in the same order."""
    w, h = frame_size
    extra = []
    if "inspect" in tools:
        extra.append("`inspect` 返回你看过的任意画面的放大裁剪，包括每一回合动画的中间帧（无损存档，按回合和帧编号索引）")
    if "read_pixels" in tools:
        extra.append("`read_pixels` 把已存档画面的一个区域按网格采样为像素值")
    if "history" in tools:
        extra.append("`history` 返回你每一回合的精确记录，或当前关卡每次尝试的摘要")
    if "write_guide" in tools:
        extra.append("GUIDE.md（`read_guide` / `write_guide`）保存整个回合都有用的知识；WORKING.md（`read_working` / "
                     "`write_working`）是当前关卡的草稿，屏幕换到另一关时清空；`save_compact_checkpoint` 在你的上下文"
                     "被压缩之前保存两者，上下文快满时其他工具会等你调用它")
    if "run_python" in tools:
        extra.append("`run_python` 在你自己的持久进程里运行 Python 代码，已存档的画面是 numpy 数组，gui(action, x, y) "
                     "发送 GUI 操作，与 play 完全相同")
    tools_text = ("其他工具：" + "；".join(extra) + "。\n\n") if extra else ""
    return (
        "你正在通过屏幕上显示的游戏套件玩游戏，只能使用图形界面输入。\n\n"
        "允许使用的信息：只有返回的截图所显示的内容（以及工具从截图得出的内容）。你无法访问游戏的源代码或打包资源、"
        "关卡目录、答案文件、DOM 或无障碍数据、页面变量、隐藏状态、评测器输出，也不能进行任何外部检索。\n\n"
        "操作接口：`play` 工具执行恰好一个 GUI 操作" + ("，或按顺序执行的一批操作" if batch else "") +
        "，返回（最后一个）操作之后的截图和当前可用的操作。一个操作是它的名称加上字段，例如 play(action=\"click\", "
        "x=10, y=20)。操作有：click {x, y}、double_click {x, y}、drag {x0, y0, x1, y1}（可经过路径点 'via'）、"
        "swipe {direction}、key {name}、typetext {text}、scroll {direction}、wait {ms}" +
        ("、batch {actions}" if batch else "") + f"。坐标为 {w} x {h} 截图的整数像素，0 <= x < {w}，0 <= y < {h}，"
        f"原点在左上角。按键：字母 a-z、数字 0-9、{', '.join(NAMED_KEYS)}。第一个操作必须是 wait：它返回第一张截图并"
        "开始计时。上一个 play 返回之后才能发送下一个。`screenshot` 再次显示当前屏幕。\n\n" + tools_text +
        "操作流程：通过可见的界面选择游戏和难度，开始之前确认所选内容。需要时使用可见的撤销或重玩控件。反复失败或已用"
        "时间都不是停止的理由：继续游戏，直到整个目标完成。一个时间预算涵盖整个目标，包括你自己的思考时间。\n\n"
        "结束：当屏幕显示整个目标已经完成时，调用 `final_answer`，发送一条以 `BENCHMARK COMPLETED` 开头并说明可见"
        "证据的消息。只有评测器自己的观察才算成功。")


def task_text(instruction: str, game_title: str | None, difficulty_label: str | None, setting: str,
              lang: str = "en") -> str:
    """The task message: the goal, the game and difficulty with their on-screen labels, the setting."""
    if lang == "zh" and game_title:
        from longpuzzle.engine.labels import screen_text
        title = screen_text(game_title, "zh")
        diff = "默认" if difficulty_label in ("Default", "Play") else screen_text(difficulty_label or "", "zh")
        return "\n".join((f"在游戏套件中完成「{title}」{diff}难度的全部关卡。",
                          f"游戏是屏幕上的「{title}」，难度为「{diff}」。", f"设置：{SETTING_NAMES_ZH[setting]}。"))
    where = f"The game is '{game_title}' on screen, difficulty '{difficulty_label}'." if game_title else ""
    return "\n".join(p for p in (instruction, where, f"Setting: {SETTING_NAMES[setting]}.") if p)
