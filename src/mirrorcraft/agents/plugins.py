"""Users' own agents: named by import path, by an installed entry point, or by a URL.

An agent name that is not a packaged configuration is read as

* an import path, ``package.module:ClassName`` (the module must be importable: installed,
  or on ``PYTHONPATH``);
* an entry point of the ``mirrorcraft.agents`` group that an installed package declares
  (``[project.entry-points."mirrorcraft.agents"] greedy = "my_agent.greedy:GreedyAgent"``);
* an ``http://`` or ``https://`` URL: an agent in another process speaking the remote
  protocol (``agents/remote``, ``docs/remote_agent.md``).

A Python agent class follows the Agent protocol of ``agents/base.py`` (documented for
users in ``docs/agent_api.md``). It is wrapped in ``PluginAgent``, which hands it the
seeded RNG and, when the class sets ``uses_model = True``, the episode's model client
(metered, so every call it makes is counted in the record's tokens and cost), and which
accepts a plain action dict from ``act``. Options from the spec are checked by the
class's ``validate_options`` before anything runs; their hash is part of the episode id.
Each episode record stores where the agent came from (``AgentOrigin``: import path,
package and version, options hash) and a resume refuses when that changed.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from importlib import metadata
from typing import Any

from mirrorcraft.agents.base import USER_THOUGHT_LIMIT, Decision, EpisodeContext, Usage
from mirrorcraft.agents.threaded import in_thread
from mirrorcraft.body.observation import Observation
from mirrorcraft.faults import exception_text
from mirrorcraft.llm.base import CallMeta, Completion, LLMClient, Message, Sampling, Tools
from mirrorcraft.llm.budget import CallBudgetExhausted

ENTRY_POINT_GROUP = "mirrorcraft.agents"
DEFAULT_SAMPLING = Sampling()
_IMPORT_PATH = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$"
)


class PluginError(Exception):
    """A user agent cannot be found, imported, or given its options; one line for people."""


class AgentInitError(Exception):
    """The user's class raised while this episode's instance was built (after the one built
    before the run had succeeded): raised by ``PluginAgent.start``, it ends the episode as
    the agent's outcome (``agent_error`` ``in __init__: ...``), as an exception in ``start``
    does; ``original`` is what the constructor raised."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


@dataclass(frozen=True)
class AgentOrigin:
    """Where an agent came from, as episode records store it (``agent_origin``)."""

    kind: str
    """``import`` (an import path), ``entry_point``, ``remote`` (a URL) or ``builtin``."""
    ref: str
    """The import path ``module:Class``, the URL (credentials masked), or the built-in name."""
    package: str = ""
    """The distribution that provides the module (or its top-level module when not installed)."""
    version: str = ""
    """The distribution's version, or the module's ``__version__``; empty when neither exists."""
    entry_point: str = ""
    options_hash: str = ""
    """A hash of the options given in the spec (empty without options)."""

    def to_json(self) -> dict[str, str]:
        return {k: v for k, v in asdict(self).items() if v}

    def describe(self) -> str:
        who = f"{self.package} {self.version}".strip() or "no package"
        opts = f", options {self.options_hash}" if self.options_hash else ""
        return f"{self.ref} ({who}{opts})"


def is_remote(name: str) -> bool:
    return name.startswith(("http://", "https://"))


def is_import_path(name: str) -> bool:
    return bool(_IMPORT_PATH.match(name))


@lru_cache(maxsize=1)
def entry_points() -> dict[str, metadata.EntryPoint]:
    """Installed agents: entry point name -> entry point (the first one wins on a clash)."""
    found: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep)
    return found


def options_hash(options: Mapping[str, Any] | None) -> str:
    """A short hash of options as the spec gives them ("" for none)."""
    if not options:
        return ""
    text = json.dumps(dict(options), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _package_of(module: str, dist: metadata.Distribution | None = None) -> tuple[str, str]:
    """(distribution name, version) providing ``module``; a module on the path but not
    installed gives its top-level name and its ``__version__`` (or "")."""
    top = module.split(".")[0]
    if dist is None:
        names = metadata.packages_distributions().get(top) or []
        if names:
            try:
                dist = metadata.distribution(names[0])
            except metadata.PackageNotFoundError:
                dist = None
    if dist is not None:
        return str(dist.metadata["Name"]), str(dist.version)
    loaded = sys.modules.get(top)
    version = getattr(loaded, "__version__", "") if loaded is not None else ""
    return top, version if isinstance(version, str) else ""


def _import(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PluginError(
            f"agent {path!r}: cannot import module {module_name!r} ({exc}); install its package "
            "or add its folder to PYTHONPATH"
        ) from None
    except Exception as exc:  # the user's module failed while importing
        raise PluginError(
            f"agent {path!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise PluginError(f"agent {path!r}: module {module_name!r} has no {attr!r}") from None


@dataclass(frozen=True)
class Resolved:
    origin: AgentOrigin
    cls: Any
    """The agent class (None for a remote agent)."""


@lru_cache(maxsize=64)
def resolve(name: str) -> Resolved:
    """The class and origin of a user agent named by import path, entry point or URL."""
    if is_remote(name):
        from mirrorcraft.redact import redact_url

        return Resolved(AgentOrigin("remote", redact_url(name)), None)
    if is_import_path(name):
        cls = _import(name)
        package, version = _package_of(name.partition(":")[0])
        return Resolved(AgentOrigin("import", name, package, version), _checked(name, cls))
    ep = entry_points().get(name)
    if ep is None:
        raise PluginError(f"unknown agent {name!r}")
    cls = _import(ep.value) if is_import_path(ep.value) else _load_entry_point(ep)
    package, version = _package_of(ep.value.partition(":")[0], ep.dist)
    origin = AgentOrigin("entry_point", ep.value, package, version, entry_point=ep.name)
    return Resolved(origin, _checked(name, cls))


def _load_entry_point(ep: metadata.EntryPoint) -> Any:
    try:
        return ep.load()
    except Exception as exc:
        raise PluginError(
            f"agent {ep.name!r}: its entry point {ep.value!r} failed to load: {exc}"
        ) from None


def _checked(name: str, cls: Any) -> Any:
    if not inspect.isclass(cls):
        raise PluginError(f"agent {name!r}: {cls!r} is not a class")
    missing = [m for m in ("start", "act") if not callable(getattr(cls, m, None))]
    if missing:
        raise PluginError(
            f"agent {name!r}: {cls.__name__} lacks {' and '.join(missing)} (see docs/agent_api.md)"
        )
    return cls


def is_plugin(name: str) -> bool:
    """Whether ``name`` names a user agent that can be found (never raises)."""
    try:
        resolve(name)
    except PluginError:
        return False
    return True


def uses_model(name: str) -> bool:
    """Whether a user agent asks for the episode's model client (``uses_model = True``)."""
    try:
        cls = resolve(name).cls
    except PluginError:
        return False
    return bool(getattr(cls, "uses_model", False))


def runs_in_event_loop(name: str) -> bool:
    """Agents that wait on the network run many episodes at once on one event loop: remote
    agents, agents with a model, and classes that set ``run_in_event_loop = True``."""
    if is_remote(name):
        return True
    try:
        cls = resolve(name).cls
    except PluginError:
        return False
    return _on_event_loop(cls)


def _on_event_loop(agent: Any) -> bool:
    """Whether a user agent's class (or instance) asks for the event loop."""
    return bool(getattr(agent, "uses_model", False) or getattr(agent, "run_in_event_loop", False))


def check_options(
    name: str, options: Mapping[str, Any] | None, label: str | None = None
) -> dict[str, Any]:
    """The options after the agent's own ``validate_options`` (a ``PluginError`` when refused,
    naming the agent by the spec's ``label`` when it has one, as the spec and tables do)."""
    given = dict(options or {})
    who = label or name
    if is_remote(name):
        from mirrorcraft.agents.remote.agent import remote_options

        try:
            return remote_options(given)
        except ValueError as exc:
            raise PluginError(f"agent {who!r}: invalid options: {exc}") from None
    cls = resolve(name).cls
    check = getattr(cls, "validate_options", None)
    if check is None:
        if given:
            raise PluginError(
                f"agent {who!r} takes no options ({cls.__name__} defines no validate_options)"
            )
        return {}
    try:
        checked = check(given)
    except Exception as exc:  # the agent's own words for what is wrong
        raise PluginError(f"agent {who!r}: invalid options: {exc}") from None
    if not isinstance(checked, Mapping):
        raise PluginError(f"agent {who!r}: validate_options must return a mapping")
    return dict(checked)


def memory_problem(name: str) -> str | None:
    """Why the user agent ``name`` cannot keep memory in a knowledge store (None: it can).

    It must declare ``cross_episode_memory = True`` and define ``load_knowledge`` and
    ``knowledge_delta`` (``docs/agent_api.md``, "Memory"); remote agents keep none.
    """
    if is_remote(name):
        return f"agent {name!r} is a remote agent; remote agents keep no knowledge store"
    try:
        cls = resolve(name).cls
    except PluginError as exc:
        return str(exc)
    lacks = memory_lacks(cls)
    if lacks is not None:
        return f"agent {name!r} keeps no memory across episodes ({cls.__name__} lacks {lacks})"
    return None


def memory_lacks(agent: Any) -> str | None:
    """What an agent class or object lacks to keep memory in a knowledge store (None: nothing)."""
    missing = [
        m for m in ("load_knowledge", "knowledge_delta") if not callable(getattr(agent, m, None))
    ]
    if missing:
        return " and ".join(missing)
    return None if getattr(agent, "cross_episode_memory", False) else "cross_episode_memory = True"


def origin_of(name: str, options: Mapping[str, Any] | None = None) -> AgentOrigin:
    """The origin a record stores for a user agent (with the hash of its spec options)."""
    return replace(resolve(name).origin, options_hash=options_hash(options))


class MeteredClient:
    """The episode's model client as a user agent receives it: it counts every call (tokens,
    cost, cache hits) so the record includes them, and remembers an exhausted call budget
    even if the agent swallows the exception."""

    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.usage = Usage()
        self.exhausted: CallBudgetExhausted | None = None

    @property
    def model(self) -> str:
        return self.inner.model

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        sampling: Sampling = DEFAULT_SAMPLING,
        meta: CallMeta | None = None,
        tools: Tools | None = None,
    ) -> Completion:
        try:
            if tools is None:
                done = await self.inner.complete(messages, sampling=sampling, meta=meta)
            else:
                done = await self.inner.complete(
                    messages, sampling=sampling, meta=meta, tools=tools
                )
        except CallBudgetExhausted as exc:
            self.exhausted = exc
            raise
        self.usage.count_call(done)
        return done

    def take(self) -> Usage:
        usage, self.usage = self.usage, Usage()
        return usage

    def reset(self) -> None:
        self.usage, self.exhausted = Usage(), None
        reset = getattr(self.inner, "reset", None)
        if callable(reset):
            reset()

    async def aclose(self) -> None:
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def usage_problem(usage: Any) -> str | None:
    """What is wrong with the usage an agent reported with its action (None: nothing): it
    must be a ``Usage`` of whole, non-negative counts and a finite, non-negative cost (or
    None, unknown). Anything else would be stored in the record and break its analysis."""
    if not isinstance(usage, Usage):
        return f"must be a mirrorcraft.agents.base.Usage, not {type(usage).__name__}"
    for name in (
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "cached_calls",
        "estimated_calls",
        "unusable_replies",
    ):
        value = getattr(usage, name)
        if not _count(value):
            return f"has {name} {value!r}; it must be a whole number, 0 or more"
    failed = usage.failed_attempts
    if not isinstance(failed, dict) or not all(
        isinstance(k, str) and _count(v) for k, v in failed.items()
    ):
        return (
            f"has failed_attempts {failed!r}; it must be a dict of kind (text) to a whole "
            "number, 0 or more"
        )
    cost = usage.cost_usd
    if cost is not None and (
        not isinstance(cost, int | float) or isinstance(cost, bool) or not 0 <= cost < math.inf
    ):
        return f"has cost_usd {cost!r}; it must be a finite number, 0 or more, or None"
    return None


def _kept_thought(thought: Any) -> str:
    """The thought the trace keeps: its first ``USER_THOUGHT_LIMIT`` characters (a 10 MB
    thought at every step made a database of gigabytes); ``None`` is no thought, anything
    else its ``repr`` (not the action's stand-in: the action was fine and was played)."""
    if isinstance(thought, str):
        return thought if len(thought) <= USER_THOUGHT_LIMIT else thought[:USER_THOUGHT_LIMIT]
    if thought is None:
        return ""
    try:
        return repr(thought)[:USER_THOUGHT_LIMIT]
    except Exception:  # a repr that fails: name the type
        return f"<{type(thought).__name__}>"


class PluginAgent:
    """A user's agent object behind the runner's Agent protocol (see the module docstring)."""

    def __init__(
        self,
        name: str,
        inner: Any,
        client: LLMClient | None = None,
        *,
        init_error: BaseException | None = None,
    ) -> None:
        self.name = name
        self.inner = inner
        self.init_error = init_error
        """What the class raised when this episode's instance was built (``inner`` is then
        None); ``start`` raises it as ``AgentInitError``."""
        self.cross_episode_memory = bool(getattr(inner, "cross_episode_memory", False))
        self.client = MeteredClient(client) if client is not None else None
        self.unreported_usage = Usage()
        self.loaded_records: dict[str, dict[str, Any]] | None = None
        """The knowledge-store records handed to the agent (accumulation runs; ``agents/memory.py``)."""
        self.threaded = _on_event_loop(inner) and not inspect.iscoroutinefunction(
            getattr(inner, "act", None)
        )
        """A plain ``act`` of an agent on the event loop runs in a thread (``agents/threaded.py``)."""

    def start(self, ctx: EpisodeContext) -> None:
        if self.init_error is not None:
            raise AgentInitError(self.init_error)
        if self.client is not None:
            self.client.reset()
            ctx = replace(ctx, client=self.client)
        self.unreported_usage = Usage()
        self.inner.start(ctx)

    async def act(self, obs: Observation) -> Decision | None:
        try:
            result = await in_thread(self.inner.act, obs) if self.threaded else self.inner.act(obs)
            if inspect.isawaitable(result):
                result = await result
        except BaseException:
            # An error ends the episode: the calls made through the client before it still count.
            self.unreported_usage = self.client.take() if self.client is not None else Usage()
            raise
        used = self.client.take() if self.client is not None else Usage()
        if self.client is not None and self.client.exhausted is not None:
            self.unreported_usage = used
            raise self.client.exhausted
        if result is None:
            self.unreported_usage = used
            return None
        decision = result if isinstance(result, Decision) else Decision(result)
        thought = _kept_thought(decision.thought)
        if thought is not decision.thought:
            decision = replace(decision, thought=thought)
        problem = usage_problem(decision.usage)
        if problem is not None:
            self.unreported_usage = used
            raise ValueError(f"the Decision's usage {problem} (see docs/agent_api.md)")
        if used.calls:
            total = Usage()
            total.add(decision.usage)
            total.add(used)
            decision = replace(decision, usage=total)
        return decision

    def finish(self, obs: Observation) -> None:
        finish = getattr(self.inner, "finish", None)
        if callable(finish):
            finish(obs)

    @property
    def template_hashes(self) -> dict[str, str]:
        hashes = getattr(self.inner, "template_hashes", None)
        return dict(hashes) if isinstance(hashes, Mapping) else {}

    def memory_stats(self) -> dict[str, Any]:
        """What the agent's ``memory_stats()`` returns, for the record's ``memory``: a mapping
        of plain JSON. When it raises or returns anything else, the record says so instead
        (``memory_stats_error``): the episode it describes has been played and stands."""
        stats = getattr(self.inner, "memory_stats", None)
        if not callable(stats):
            return {}
        try:
            given = stats()
            if not isinstance(given, Mapping):
                raise TypeError(f"it returned a {type(given).__name__}, not a mapping")
            out = dict(given)
            json.dumps(out, allow_nan=False)
        except Exception as exc:  # the agent's bug; never the run's, never a corrupt record
            return {"memory_stats_error": exception_text(exc)[:300]}
        return out

    @property
    def keeps_memory(self) -> bool:
        """Whether the user agent can load and extend a knowledge store (see ``memory_problem``)."""
        return memory_lacks(self.inner) is None


def build_plugin(
    name: str,
    agent_id: str,
    options: Mapping[str, Any] | None,
    client: LLMClient | None = None,
    *,
    in_episode: bool = False,
) -> PluginAgent:
    """A fresh instance of the user agent ``name`` (import path or entry point).

    A constructor that raises (or calls ``sys.exit``) is a ``PluginError`` before a run;
    ``in_episode``, it is the episode's outcome: the agent returned raises it from ``start``
    (``AgentInitError``), and the record says ``in __init__: ...``, never a dead worker."""
    cls = resolve(name).cls
    checked = check_options(name, options, agent_id)
    given = client if uses_model(name) else None
    try:
        inner = cls(options=checked) if hasattr(cls, "validate_options") else cls()
    except (Exception, SystemExit) as exc:
        if in_episode:
            return PluginAgent(agent_id, None, given, init_error=exc)
        raise PluginError(
            f"agent {name!r}: creating {cls.__name__} failed: {exception_text(exc)}"
        ) from None
    return PluginAgent(agent_id, inner, given)
