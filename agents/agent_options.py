"""The agent options every command that runs an agent shares (``eval`` and every ``diagnose``
command; SCOPES contract 4): one click decorator, ``agent_options``, that adds them and hands
the command one ``AgentOptions`` value, and one builder, ``build_agent``, that turns that value
into an ``AgentChoice`` (which agent, its model, its sandbox) able to make a fresh agent per
episode or continuation, exactly as ``eval`` makes them (runner.make_agent).

    @click.command()
    @agent_options()
    def cmd(agent_opts, ...):
        choice = build_agent(agent_opts, settings)        # a usage error: one line, nothing run
        agent = choice.make("bolt_unscrew/hard", folder)  # a fresh agent (model agents included)

So any agent ``eval`` accepts (scripted, an agent file, a model through every protocol, a tool
agent) runs in any command with these options. The model's client is imported only when a
model is asked for (lazy imports, as in agents/cli.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from functools import wraps
from pathlib import Path

import click

from longpuzzle.agents.harness.presets import HARNESS_NAMES, HARNESSES
from longpuzzle.agents.registry import AGENTS, MODEL, MODEL_AGENTS, SCRIPTED, TOOL, TOOL_AGENTS, load_agent


def agent_help(default: str = "solver") -> str:
    """The --agent help, from the table of agent names."""
    def listed(kind):
        return ", ".join(f"{a.name} ({a.what})" for a in AGENTS if a.kind == kind)
    return (f"{listed(SCRIPTED)}, a .py file with one BaseAgent subclass, or a model protocol: {listed(MODEL)}, "
            f"or a model on the VISTA / Code Execution tools: {listed(TOOL)} [default: {default}; with --model, the "
            "model's own or native].")


@dataclass(frozen=True)
class AgentOptions:
    """The agent options as given on the command line (None: not given)."""
    agent: str | None = None
    model: str | None = None
    models_file: str | None = None
    base_url: str | None = None
    api: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    reasoning_effort: str | None = None
    request_timeout: float | None = None
    max_reply_bytes: int | None = None
    stream: bool | None = None
    max_retries: int | None = None
    context_tokens: int | None = None
    prompt_setting: str | None = None
    language: str = "zh"
    history_images: int | None = None
    scale_factor: float | None = None
    resize: str | None = None
    text_reply: str | None = None
    harness: str | None = None
    trusted_agent: bool = False
    agent_memory: float = 4096
    agent_cpu: float | None = None
    agent_cpu_per_action: float | None = None
    agent_env: tuple = ()
    agent_network: bool = False

    @property
    def wants_model(self) -> bool:
        """Does this choice need a model endpoint (a model or tool agent)?"""
        return bool(self.model) or self.agent in MODEL_AGENTS


_NAMES = tuple(f.name for f in fields(AgentOptions))
_AGENT_DEST = {"agent": "agent_spec", "model": "model_name"}     # the parameter names eval has always had


def _options(default_agent: str):
    """The click options, in the order ``--help`` shows them."""
    return [
        click.option("--agent", "agent_spec", default=None, help=agent_help(default_agent)),
        click.option("--trusted-agent", is_flag=True,
                     help="Run the agent FILE in this process with all of longpuzzle at hand instead of isolated "
                     "(only for code you trust, e.g. a scripted agent keeping a model of the app; recorded as "
                     "trusted)."),
        click.option("--agent-memory", type=float, default=4096, show_default=True,
                     help="MiB of memory an agent file's process may use (its address space)."),
        click.option("--agent-cpu", type=float, default=None,
                     help="CPU seconds an agent file's process may use in all [default: the budget, if any]."),
        click.option("--agent-cpu-per-action", type=float, default=None,
                     help="CPU seconds an agent file may use per action [default: the action timeout]."),
        click.option("--agent-env", multiple=True, metavar="NAME",
                     help="Pass this environment variable on to an agent file's process (repeatable; e.g. an API "
                     "key it needs). Its environment is otherwise nearly empty."),
        click.option("--agent-network", is_flag=True,
                     help="Let an agent file open sockets (e.g. to call a model's API it was given a key for). "
                     "Without it, it has no network at all; run.json records which."),
        click.option("--model", "model_name", default=None,
                     help="A model named in the provider file, or a model name for --base-url."),
        click.option("--models-file", type=click.Path(dir_okay=False), default=None,
                     help="Provider file (TOML/YAML) [default: $LONGPUZZLE_MODELS or ./longpuzzle-models.toml]."),
        click.option("--base-url", default=None,
                     help="OpenAI-compatible (or Anthropic) endpoint, e.g. http://127.0.0.1:8000/v1."),
        click.option("--api", type=click.Choice(["openai-chat", "openai-responses", "anthropic"]), default=None,
                     help="Wire API [default: openai-chat]."),
        click.option("--api-key-env", default=None,
                     help="Environment variable holding the API key (the key is never stored)."),
        click.option("--temperature", type=float, default=None,
                     help="[default: the protocol's (general_e2e 0) or the provider's; the Anthropic wire takes "
                     "none]"),
        click.option("--max-output-tokens", type=int, default=None,
                     help="Output-token limit sent with every request [default: the protocol's (general_e2e "
                     "1024), else 16384]."),
        click.option("--reasoning-effort",
                     type=click.Choice(["none", "minimal", "low", "medium", "high", "xhigh", "max", "omit"]),
                     default=None, help="[default: medium for general_e2e and native; omit: not sent]"),
        click.option("--request-timeout", type=float, default=None,
                     help="Seconds a model request may take in all, streamed or not (a deadline, not per read) "
                     "[default: 120]."),
        click.option("--max-reply-bytes", type=int, default=None,
                     help="Largest model reply accepted, in bytes [default: 32 MiB]; a larger one is a provider "
                     "error."),
        click.option("--stream/--no-stream", "stream", default=None,
                     help="Ask for model replies as server-sent events [default: not streamed]."),
        click.option("--max-retries", type=int, default=None,
                     help="Retries on transport errors, 429 and 5xx [default: 4]."),
        click.option("--context-tokens", type=int, default=None,
                     help="Compact the conversation (a model-written summary replaces earlier turns) at this many "
                     "tokens."),
        click.option("--prompt-setting", type=click.Choice(["minimal", "full", "none"]), default=None,
                     help="Per-game catalogue instruction in the prompt [default: full for general_e2e, none "
                     "otherwise]."),
        click.option("--language", type=click.Choice(["zh", "en"]), default="zh", show_default=True,
                     help="The catalogue instruction in its original Chinese or in English."),
        click.option("--history-images", type=int, default=None,
                     help="Screenshots sent per request, the latest included [default: general_e2e 1, qwen/uitars "
                     "2, native all]."),
        click.option("--scale-factor", type=float, default=None,
                     help="Coordinate grid 0..S (general_e2e default 1000; 0 = screenshot pixels)."),
        click.option("--resize", default=None, metavar="RULE",
                     help="Resize screenshots for the model: none, longest:N or smart_resize [uitars default "
                     "smart_resize]."),
        click.option("--harness", type=click.Choice(list(HARNESS_NAMES)), default=None,
                     help="How the agent is run: default, or d1, the paper's diagnostics harness (1280x900, 2 s "
                     "charged after each action; a model sees the takeover context, then 12 recent action turns "
                     "and 4 screenshots, with its own summary every 8 turns)."),
        click.option("--text-reply", type=click.Choice(["final", "reprompt"]), default=None,
                     help="A model reply without a tool call (native, vista-*, code-cua): the agent's final "
                     "response, as in the paper [default], or re-prompted as invalid unless it starts with "
                     "BENCHMARK COMPLETED."),
    ]


def agent_options(default_agent: str = "solver"):
    """A click decorator: the agent options (--agent, the model's, an agent file's sandbox),
    passed to the command as one ``agent_opts`` (an AgentOptions) instead of one argument each.
    The click parameters keep their names (``ctx.get_parameter_source("language")`` works)."""
    def decorate(f):
        @wraps(f)
        def command(*args, **kwargs):
            given = {n: kwargs.pop(_AGENT_DEST.get(n, n)) for n in _NAMES}
            given["agent_env"] = tuple(given["agent_env"] or ())
            return f(*args, agent_opts=AgentOptions(**given), **kwargs)
        for opt in reversed(_options(default_agent)):
            command = opt(command)
        return command
    return decorate


@dataclass
class AgentChoice:
    """The agent a command runs, resolved: its name, its model (the provider's public settings,
    no key) and the model agent's options, or an agent file's sandbox. ``make`` builds a fresh
    agent for one episode, as eval's runner does."""
    agent: str
    model: dict | None = None
    agent_options: dict | None = None
    agent_file: dict | None = None
    style: str = "2d"
    seed: int = 0

    @property
    def label(self) -> str:
        """How results name the agent: the agent, and the model it plays with."""
        return f"{self.agent}:{self.model['model']}" if self.model and self.model.get("model") else self.agent

    def run_config(self, objectives=(), settings: dict | None = None, protocol: str = "objective"):
        """The runner's RunConfig of this agent (what eval records in run.json)."""
        from longpuzzle.agents.runner import RunConfig        # lazy: the runner loads the harness

        return RunConfig(agent=self.agent, objectives=list(objectives), protocol=protocol,
                         settings=dict(settings or {"style": self.style}), seed=self.seed, model=self.model,
                         agent_options=dict(self.agent_options or {}), agent_file=self.agent_file)

    def make(self, objective: str, folder: str | Path, catalog=None, episode: int = 0, **extra):
        """A fresh agent for one episode of ``objective`` written to ``folder`` (a model agent
        logs its conversation there). ``extra``: constructor arguments a scripted agent takes
        (e.g. ``folder``, where the paper-like agents leave their text)."""
        from longpuzzle.agents.runner import make_agent        # lazy: eval's own maker, one for both

        return make_agent(self.run_config(), {"objective": objective, "episode": episode}, Path(folder), catalog,
                          **extra)

    def public(self) -> dict:
        """The choice as a study or run records it (JSON; no secret)."""
        return {k: v for k, v in asdict(self).items() if v not in (None, {})}


def build_agent(opts: AgentOptions, settings=None, *, protocol: str = "objective", seed: int = 0,
                default: str = "solver", style: str | None = None, lang: str | None = None) -> AgentChoice:
    """The AgentChoice of these options, checked now (an unknown agent, a model setting that
    makes no sense, a missing API key, an agent file that cannot load: one error line before
    anything runs). ``settings``: the harness Settings the agent plays under (an agent file's
    CPU limits default from its budget and action timeout; a model's prompts follow its
    screen language)."""
    lang = lang or (getattr(settings, "lang", "en") if settings is not None else "en")
    style = style or (getattr(settings, "style", "2d") if settings is not None else "2d")
    if opts.wants_model:
        model, name, options = model_settings(opts)
        options["prompt_lang"] = lang       # the prompts in the screen's language (where a protocol has it)
        if opts.text_reply is not None:
            options["text_reply"] = opts.text_reply
        if name not in TOOL_AGENTS:             # (the VISTA / code tool agents keep their own context)
            options.update(HARNESSES[opts.harness or "default"]["agent_options"])
        return AgentChoice(name, model=model, agent_options=options, style=style, seed=seed)
    name = opts.agent or default
    limits = agent_limits(opts.agent_memory, opts.agent_cpu, opts.agent_cpu_per_action, settings, protocol,
                          opts.agent_network)
    first = load_agent(name, style=style, seed=seed, limits=limits, pass_env=opts.agent_env,
                       trusted=opts.trusted_agent)        # unknown agent -> one error line now
    if getattr(first, "trusted", True) is False:
        first.check()                                     # an agent file that cannot load: one line, nothing run
    # recorded for every agent that is not a model's (as run.json has always had it)
    agent_file = {"limits": asdict(limits), "pass_env": list(opts.agent_env), "trusted": opts.trusted_agent}
    return AgentChoice(name, agent_file=agent_file, style=style, seed=seed)


def with_defaults(opts: AgentOptions, **changes) -> AgentOptions:
    """These options with some replaced (e.g. a preset's prompt setting)."""
    return replace(opts, **changes)


def model_settings(opts: AgentOptions) -> tuple[dict, str, dict]:
    """(the model's public settings, the model agent's name, its options) of these options."""
    from longpuzzle.agents.models.clients import SETTING_PARAMETERS, unsupported_settings   # lazy: --model only
    from longpuzzle.agents.models.config import ModelConfigError, resolve_model
    from longpuzzle.agents.media.images import make_view

    if not opts.model:
        raise click.UsageError(f"--agent {opts.agent} needs --model (a provider-file name or a model name)")
    given = {"timeout": opts.request_timeout, "max_retries": opts.max_retries,
             "max_output_tokens": opts.max_output_tokens, "context_tokens": opts.context_tokens,
             "max_reply_bytes": opts.max_reply_bytes}
    try:
        cfg = resolve_model(opts.model, opts.models_file, base_url=opts.base_url, api=opts.api,
                            api_key_env=opts.api_key_env, temperature=opts.temperature,
                            reasoning_effort=opts.reasoning_effort, stream=opts.stream, **given)
    except ModelConfigError as e:           # a setting given here: named as its option
        field = str(e).split(" ", 1)[0]
        if given.get(field) is not None:
            opt = "--request-timeout" if field == "timeout" else "--" + field.replace("_", "-")
            raise click.UsageError(opt + str(e)[len(field):]) from None
        raise
    for k in unsupported_settings(cfg):     # sent only what the installed SDK takes (read from it)
        raise click.UsageError(f"--{k.replace('_', '-')}: the installed SDK of the {cfg.api} API takes no "
                               f"'{SETTING_PARAMETERS[cfg.api][k]}' parameter; leave the setting out for this API")
    name = opts.agent or cfg.agent or "native"
    if name not in MODEL_AGENTS:
        raise click.UsageError(f"--model runs with a model protocol ({', '.join(MODEL_AGENTS)}), not {name!r}")
    cfg.api_key()                           # a missing key is reported before anything runs (never stored)
    if opts.history_images is not None and opts.history_images < 0:
        raise click.BadParameter("--history-images must be 0 or more")
    if opts.resize is not None:
        try:
            make_view((540, 960), opts.resize)
        except ValueError as e:
            raise click.BadParameter(str(e)) from None
    out: dict = {"language": opts.language}
    if opts.prompt_setting is not None:
        out["prompt_setting"] = None if opts.prompt_setting == "none" else opts.prompt_setting
    if opts.history_images is not None:
        out["history_images"] = opts.history_images or None
    if opts.scale_factor is not None:
        if opts.scale_factor < 0:
            raise click.BadParameter("--scale-factor must be positive (or 0 for pixels)")
        out["scale_factor"] = opts.scale_factor or None
    if opts.resize is not None:
        out["resize"] = opts.resize
    return cfg.public(), name, out


def agent_limits(memory, cpu, cpu_per_action, st, protocol, network=False):
    """The sandbox limits of an agent file (longpuzzle.agents.sandbox.Limits; it refuses values that
    make no sense with one error line)."""
    from longpuzzle.agents.sandbox import Limits          # lazy: agent files only
    from longpuzzle.agents.harness import HarnessError

    for name, v in (("--agent-memory", memory), ("--agent-cpu", cpu), ("--agent-cpu-per-action", cpu_per_action)):
        if v is not None and not (math.isfinite(v) and v > 0):
            raise HarnessError(f"{name} must be a positive number, not {v}")
    budget = getattr(st, "budget", None)
    if cpu is None and protocol == "objective" and budget is not None:
        cpu = budget
    if cpu_per_action is None:
        cpu_per_action = getattr(st, "action_timeout", None) or None
    return Limits(memory_mb=int(memory), cpu_seconds=cpu, call_cpu_seconds=cpu_per_action, network=bool(network))
