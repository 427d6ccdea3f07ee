"""longpuzzle.agents: agents playing the suite through its GUI, and everything around them.

The agent boundary
    api.py         the public agent API (BaseAgent, Observation, FinalAnswer, ...): standalone,
                   all an isolated agent file sees (as ``longpuzzle.agents.base``)
    base.py        the harness's side of it: action_spec, make_frame, AgentError, InternalError
    registry.py    the one table of agent names: what each is and how it is built; load_agent
    scripted.py    the scripted agents (random, random_anywhere, solver, greedy)
    paper_agents.py  scripted agents that behave as the paper's agents at a dead end
                   (paper_filler, paper_rebuilder; the diagnostics lab's tests and examples)
    plans.py       the solver agent's plans, kept in memory and on disk
    action_text.py an action as the takeover prefix's text, and its one reader
Running and scoring episodes
    harness/       the episode protocols, the frame files, replay
    evaluator.py   the private evaluator;  metrics.py  the benchmark's metrics
    runner.py      ``eval`` runs: plan, resume, progress;  verify.py  a run folder as a whole
    cli.py         the ``eval`` and ``frames`` commands;  agent_options.py  the agent and
                   model options eval and every ``diagnose`` command share, and their builder
Kinds of agents beyond the scripted ones
    models/        multimodal models over OpenAI / Anthropic endpoints, through agent protocols
    vista/         the VISTA and Code Execution tools, the tool agents, the MCP server
    sandbox/       untrusted code (agent files, a model's code) in a process of its own
Below and beside
    media/         frames as images (PNG streams, model views, resampling)
    jobs/          where jobs run (sequential, threads, processes, Ray)
    envs/          the Gymnasium environments;  gym_hook.py  their registration
    datasets/      GUI trajectories as training data;  report/  what people read
    diagnose/      the diagnostics lab: the paper's section 5 experiments on restored states
    serve/         the browser app: runs, the episode viewer, compare, play, human baselines
    testing/       shipped testing tools: fuzzers, a model endpoint speaking the wires
"""
