"""Model agents: multimodal models on OpenAI-compatible or Anthropic endpoints, playing the
benchmark through an agent protocol. This layer sits above the harness: it sees only what an
agent sees (frames and public feedback) and acts only through GUI actions.

    config.py        ModelConfig, the provider file (TOML / YAML) naming endpoints and models
    clients.py       Chat Completions, Responses and Messages clients (official SDKs), retries
    protocols/       the agent protocols: general_e2e, native, qwen, uitars
    conversation.py  ModelConversation, what every model agent shares (this one and the VISTA
                     tool agent): the endpoint, the history, calls measured and logged
    agent.py         ModelAgent: the conversation, parse failures, claims, compaction
    conversation_log.py   conversation.jsonl, the log of a model agent's conversation
    accounting.py    tokens, latency, retries and cost per call / episode / objective / run
    prices.json      the price table (USD per million tokens)
    instructions_en.json   English translations of the catalogue's per-game instructions

The images a model sees (frames as PNG, resize rules, coordinates back to frame pixels) are
agents/media/images.py; the scripted endpoint the tests and benchmarks run models against is
agents/testing/endpoints.py.
"""

from longpuzzle.agents.models.accounting import CallUsage, Prices, Usage, price_table
from longpuzzle.agents.models.agent import ModelAgent
from longpuzzle.agents.models.clients import ModelClient, ProviderError, Reply, ToolCall, make_client
from longpuzzle.agents.models.config import ModelConfig, ModelConfigError, load_provider_file, resolve_model
from longpuzzle.agents.models.protocols import PROTOCOLS

__all__ = ["CallUsage", "ModelAgent", "ModelClient", "ModelConfig", "ModelConfigError", "PROTOCOLS", "Prices",
           "ProviderError", "Reply", "ToolCall", "Usage", "load_provider_file", "make_client", "price_table",
           "resolve_model"]
