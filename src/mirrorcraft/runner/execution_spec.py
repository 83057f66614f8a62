"""The ``execution`` block of an experiment spec: how a run treats failures and runaway
episodes (attempts, caps over all runs, retry delays, endpoint pauses, time limits)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_EPISODE_TIMEOUT_S = 600.0
"""Wall-clock limit of an episode of a reference agent on the embedded simulator."""
DEFAULT_SERVER_EPISODE_TIMEOUT_S = 3600.0
"""... of a reference agent on a real server (server start-up included)."""
DEFAULT_LLM_EPISODE_TIMEOUT_S = 14_400.0
"""... of an agent that calls a model (hundreds of calls, each with its own retries)."""


MAX_RETRY_DELAY_S = 86400.0
"""The longest retry delay a spec may set (a day): a larger one (seconds typed for
milliseconds) left a run waiting, to all appearances hung, for years."""


class ExecutionSpec(BaseModel):
    """How a run treats failures and runaway episodes. Never part of the spec hash: it
    changes how episodes are run, not what they measure."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    episode_timeout_s: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="wall-clock limit of one episode; default 600 s for reference agents "
        "(3600 s on real servers) and 14400 s for agents that call a model",
    )
    max_attempts: int = Field(
        3,
        ge=1,
        le=100,
        strict=True,
        description="attempts per episode within one run (a rerun starts afresh)",
    )
    max_worker_faults: int = Field(
        3,
        ge=1,
        le=1000,
        strict=True,
        description="worker faults (a dead worker process, an internal error) one episode may "
        "meet over all runs of a folder; then it is given up: stored with status given_up "
        "and not run again until this is raised",
    )
    max_timeouts: int = Field(
        6,
        ge=1,
        le=1000,
        strict=True,
        description="times one episode may run past its wall-clock limit (episode_timeout_s) "
        "over all runs of a folder; then it is given up like max_worker_faults (a model "
        "call that times out is the endpoint's fault and is not counted)",
    )
    retry_delay_s: float = Field(
        10.0,
        ge=0,
        le=MAX_RETRY_DELAY_S,
        allow_inf_nan=False,
        description="wait before a faulted episode runs again; doubles each time",
    )
    retry_delay_max_s: float = Field(
        300.0,
        ge=0,
        le=MAX_RETRY_DELAY_S,
        allow_inf_nan=False,
        description="the longest such wait",
    )
    pause_after_faults: int = Field(
        3,
        ge=1,
        strict=True,
        description="faults in a row from one model endpoint that pause dispatch to it",
    )
    give_up_after_s: float = Field(
        1800.0,
        ge=0,
        allow_inf_nan=False,
        description="an endpoint failing without a break this long gets no more episodes "
        "in this run (they are left for a rerun)",
    )
    preflight: bool = Field(
        True,
        description="one one-token call per model endpoint, and a connection to each remote "
        "agent, before the first episode",
    )

    def episode_timeout(self, *, calls_model: bool, real_server: bool) -> float:
        if self.episode_timeout_s is not None:
            return self.episode_timeout_s
        if calls_model:
            return DEFAULT_LLM_EPISODE_TIMEOUT_S
        return DEFAULT_SERVER_EPISODE_TIMEOUT_S if real_server else DEFAULT_EPISODE_TIMEOUT_S

    def retry_delay(self, attempts: int) -> float:
        """Seconds before the next attempt of an episode that has faulted ``attempts`` times."""
        return float(min(self.retry_delay_max_s, self.retry_delay_s * 2.0 ** max(attempts - 1, 0)))
