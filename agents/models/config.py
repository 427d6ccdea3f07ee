"""Model endpoint settings, and the provider file that names endpoints and models.

A ``ModelConfig`` is everything a client needs: which API (``openai-chat``,
``openai-responses``, ``anthropic``), the base URL, the model name, the NAME of the
environment variable holding the API key (the key itself is read when the client is made
and is never stored in a config, a file or a log), sampling settings, the request timeout
and retry policy, the context limit for compaction and the price.

The provider file (TOML, or YAML when PyYAML is installed) names endpoints and models so
that a run is one flag, ``longpuzzle eval --model NAME``::

    [endpoints.openai]
    api = "openai-responses"              # openai-chat | openai-responses | anthropic
    api_key_env = "OPENAI_API_KEY"

    [endpoints.local]
    api = "openai-chat"
    base_url = "http://127.0.0.1:8000/v1"   # vLLM, SGLang, Ollama, ...: no key needed locally

    [models.gpt-6-sol]
    endpoint = "openai"
    model = "gpt-6-sol"
    agent = "native"                      # the default protocol for this model
    reasoning_effort = "medium"
    context_tokens = 258000

    [models.ui-tars]
    endpoint = "local"
    model = "ByteDance-Seed/UI-TARS-1.5-7B"
    agent = "uitars"
    price = { input = 0.10, cached_input = 0.10, output = 0.20 }

A model entry may set any ModelConfig field; it overrides its endpoint's. The file is found
at ``--models-file``, else ``$LONGPUZZLE_MODELS``, else ``./longpuzzle-models.toml``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from longpuzzle.agents.models.accounting import Prices, find_price
from longpuzzle.engine.errors import LongPuzzleError

APIS = ("openai-chat", "openai-responses", "anthropic")
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max", "omit")   # omit: not sent
DEFAULT_TIMEOUT = 120.0                   # seconds: the total deadline of one request (streamed or not)
DEFAULT_RETRIES = 4
DEFAULT_MAX_OUTPUT_TOKENS = 16384         # sent when neither the protocol nor the model sets a limit
DEFAULT_MAX_REPLY_BYTES = 32 * 2 ** 20    # a reply (its body, streamed or not) larger than this is refused
DEFAULT_MODELS_FILE = "longpuzzle-models.toml"
_DEFAULT_KEY_ENV = {"openai-chat": "OPENAI_API_KEY", "openai-responses": "OPENAI_API_KEY",
                    "anthropic": "ANTHROPIC_API_KEY"}


class ModelConfigError(LongPuzzleError):
    """A provider file or model setting that cannot be used (names the file and entry)."""


@dataclass(frozen=True)
class ModelConfig:
    model: str
    api: str = "openai-chat"
    base_url: str | None = None
    api_key_env: str | None = None           # None: the API's usual variable; "": no key
    temperature: float | None = None         # None: the provider's default
    max_output_tokens: int | None = None     # None: the protocol's, else DEFAULT_MAX_OUTPUT_TOKENS
    reasoning_effort: str | None = None      # none .. max; None: the protocol default; "omit": not sent
    timeout: float = DEFAULT_TIMEOUT         # seconds per request, in all (a deadline, not per read)
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    stream: bool = False                     # ask for the reply as server-sent events
    max_retries: int = DEFAULT_RETRIES       # on transport errors, 429 and 5xx
    backoff_base: float = 1.0                # seconds; doubled per retry, full jitter
    backoff_max: float = 60.0
    context_tokens: int | None = None        # compaction threshold (input + output tokens)
    price: Any = None                        # a price-table key, or {input, cached_input, output}
    max_tokens_field: str = "max_completion_tokens"   # or "max_tokens" (older OpenAI-compatible servers)
    extra_body: dict = field(default_factory=dict)    # provider-specific request fields
    agent: str | None = None                 # default agent protocol for this model
    name: str | None = None                  # the provider-file name, for results

    def __post_init__(self):
        if self.api not in APIS:
            raise ModelConfigError(f"unknown api {self.api!r}: use one of {', '.join(APIS)}")
        if not isinstance(self.model, str) or not self.model:
            raise ModelConfigError("a model needs a non-empty 'model' name")
        if self.reasoning_effort is not None and self.reasoning_effort not in EFFORTS:
            raise ModelConfigError(f"reasoning_effort {self.reasoning_effort!r}: use one of {', '.join(EFFORTS)}")
        if isinstance(self.timeout, bool) or not (isinstance(self.timeout, (int, float)) and 0 < self.timeout < float("inf")):
            raise ModelConfigError(f"timeout must be a positive number of seconds, not {self.timeout!r}")
        if isinstance(self.max_reply_bytes, bool) or not (isinstance(self.max_reply_bytes, int) and self.max_reply_bytes > 0):
            raise ModelConfigError(f"max_reply_bytes must be a positive integer, not {self.max_reply_bytes!r}")
        if not isinstance(self.stream, bool):
            raise ModelConfigError(f"stream must be true or false, not {self.stream!r}")
        if not (isinstance(self.max_retries, int) and self.max_retries >= 0):
            raise ModelConfigError(f"max_retries must be a non-negative integer, not {self.max_retries!r}")
        if self.max_output_tokens is not None and not (isinstance(self.max_output_tokens, int) and self.max_output_tokens > 0):
            raise ModelConfigError(f"max_output_tokens must be a positive integer, not {self.max_output_tokens!r}")
        if self.context_tokens is not None and not (isinstance(self.context_tokens, int) and self.context_tokens > 0):
            raise ModelConfigError(f"context_tokens must be a positive integer, not {self.context_tokens!r}")
        if self.max_tokens_field not in ("max_completion_tokens", "max_tokens"):
            raise ModelConfigError("max_tokens_field must be 'max_completion_tokens' or 'max_tokens'")
        if isinstance(self.price, dict):
            try:
                Prices.from_dict(self.price)
            except ValueError as e:
                raise ModelConfigError(str(e)) from None

    @property
    def key_env(self) -> str:
        return _DEFAULT_KEY_ENV[self.api] if self.api_key_env is None else self.api_key_env

    def api_key(self) -> str:
        """The key from the environment (never stored). A local endpoint needs none."""
        env = self.key_env
        key = os.environ.get(env) if env else None
        if key:
            return key
        if not env or _is_local(self.base_url):
            return "EMPTY"
        raise ModelConfigError(f"model {self.name or self.model}: set the API key in ${env} "
                               f"(or api_key_env = \"\" for an endpoint without keys)")

    def prices(self) -> Prices | None:
        if isinstance(self.price, dict):
            return Prices.from_dict(self.price)
        return find_price(self.model, self.price if isinstance(self.price, str) else self.name)

    def public(self) -> dict:
        """The settings for results and logs (the key's variable name, never the key)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["api_key_env"] = self.key_env
        return d

    def with_(self, **kw) -> ModelConfig:
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


def _is_local(url: str | None) -> bool:
    if not url:
        return False
    host = (urlparse(url).hostname or "").lower()
    return host in ("localhost", "127.0.0.1", "::1") or host.endswith(".localhost")


_FIELDS = {f.name for f in fields(ModelConfig)}


def load_provider_file(path: str | Path) -> dict[str, ModelConfig]:
    """name -> ModelConfig for every model of a provider file (TOML, or YAML)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ModelConfigError(f"cannot read provider file {p}: {e.strerror}") from None
    if p.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ModelConfigError(f"{p}: YAML provider files need PyYAML (or use TOML)") from None
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as e:
            raise ModelConfigError(f"{p}: not valid YAML: {e}") from None
    else:
        import tomllib
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ModelConfigError(f"{p}: not valid TOML: {e}") from None
    if not isinstance(data, dict):
        raise ModelConfigError(f"{p}: expected tables 'endpoints' and 'models'")
    endpoints = data.get("endpoints", {}) or {}
    models = data.get("models", {}) or {}
    if not isinstance(endpoints, dict) or not isinstance(models, dict):
        raise ModelConfigError(f"{p}: 'endpoints' and 'models' must be tables")
    out = {}
    for name, entry in models.items():
        if not isinstance(entry, dict):
            raise ModelConfigError(f"{p}: models.{name} must be a table")
        merged: dict = {}
        ep = entry.get("endpoint")
        if ep is not None:
            if ep not in endpoints or not isinstance(endpoints[ep], dict):
                raise ModelConfigError(f"{p}: models.{name} names endpoint {ep!r}, which is not defined")
            merged.update(endpoints[ep])
        merged.update({k: v for k, v in entry.items() if k != "endpoint"})
        merged.setdefault("model", name)
        merged["name"] = name
        if "api_key" in merged:
            raise ModelConfigError(f"{p}: models.{name}: put the key in an environment variable (api_key_env), "
                                   "never in a file")
        bad = sorted(set(merged) - _FIELDS)
        if bad:
            raise ModelConfigError(f"{p}: models.{name}: unknown setting(s) {', '.join(bad)} "
                                   f"(known: {', '.join(sorted(_FIELDS - {'name'}))})")
        try:
            out[name] = ModelConfig(**merged)
        except TypeError as e:
            raise ModelConfigError(f"{p}: models.{name}: {e}") from None
        except ModelConfigError as e:
            raise ModelConfigError(f"{p}: models.{name}: {e}") from None
    return out


def models_file(path: str | Path | None = None) -> Path | None:
    """The provider file in use: the given path, $LONGPUZZLE_MODELS, or ./longpuzzle-models.toml."""
    if path:
        return Path(path)
    env = os.environ.get("LONGPUZZLE_MODELS")
    if env:
        return Path(env)
    p = Path(DEFAULT_MODELS_FILE)
    return p if p.is_file() else None


def resolve_model(name: str, path: str | Path | None = None, **overrides) -> ModelConfig:
    """A model by its provider-file name, else a raw model name with the given settings."""
    f = models_file(path)
    if f is not None:
        table = load_provider_file(f)
        if name in table:
            return table[name].with_(**overrides)
        if path:
            raise ModelConfigError(f"{f} names no model {name!r} (it has: {', '.join(table) or 'none'})")
    return ModelConfig(model=name, **{k: v for k, v in overrides.items() if v is not None})
