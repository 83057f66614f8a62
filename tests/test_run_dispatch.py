"""The fault policy of one run, on a fake clock: growing waits, endpoint pauses, give-ups."""

from __future__ import annotations

from mirrorcraft.faults import Fault, redact
from mirrorcraft.runner.dispatch import Dispatcher, Entry
from mirrorcraft.runner.execution_spec import ExecutionSpec

POLICY = ExecutionSpec(
    max_attempts=3,
    retry_delay_s=10,
    retry_delay_max_s=300,
    pause_after_faults=3,
    give_up_after_s=600,
)
DOWN = Fault("server", "HTTP 503", endpoint=True)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make(
    n: int, endpoint: str | None = "m", policy: ExecutionSpec = POLICY
) -> tuple[Dispatcher, Clock, list[str]]:
    clock, said = Clock(), []
    d = Dispatcher(
        [Entry(f"job{i}", endpoint) for i in range(n)], policy, clock=clock, say=said.append
    )
    return d, clock, said


def test_a_faulted_episode_waits_longer_each_time_and_is_left_after_its_attempts() -> None:
    d, clock, _ = make(1, endpoint=None)
    (e,) = d.take(4)
    waits = []
    while d.faulted(e, Fault("worker", "died")):
        assert d.take(4) == []  # not before its wait is over
        waits.append(d.wake_in())
        clock.now += d.wake_in() or 0.0
        (e,) = d.take(4)
    assert waits == [10.0, 20.0]
    assert [why for _, why in d.left] == ["3 fault(s) in this run, the last: worker"]
    assert POLICY.retry_delay(10) == 300.0  # capped


def test_an_episode_put_back_unstarted_goes_first_with_no_attempt_counted() -> None:
    d, _clock, _ = make(3)
    _a, b = d.take(2)
    assert d.breaker.get("m").in_flight == 2
    d.put_back(b)
    assert d.breaker.get("m").in_flight == 1  # it no longer counts as in flight
    assert b.attempts == 0 and b.last is None and d.left == []
    assert [e.job for e in d.take(5)] == ["job1", "job2"]  # first again, then the rest


def test_an_endpoint_failing_in_a_row_pauses_and_then_probes_one_at_a_time() -> None:
    d, clock, said = make(6)
    first = d.take(6)
    assert len(first) == 6
    for e in first:
        d.faulted(e, DOWN)
    assert any("failing for 0.0s" in s and "pausing 10s" in s for s in said)
    assert d.status() == ["endpoint m failing for 0.0s, pausing"]
    assert d.take(6) == []
    clock.now = 20.0  # pause over, every episode's own wait over: only one probe goes out
    (probe,) = d.take(6)
    assert d.take(6) == [] and d.wake_in() is None  # waits for the probe's result
    d.succeeded(probe)
    assert "answering again" in said[-1]
    assert len(d.take(6)) == 5  # dispatch resumes at full width
    # The pause kept every episode at the one attempt it had used when the endpoint went down.
    assert [e.attempts for e in first] == [1] * 6


def test_an_endpoint_failing_past_the_window_is_given_up_without_burning_attempts() -> None:
    policy = ExecutionSpec(max_attempts=3, retry_delay_s=10, give_up_after_s=120)
    d, clock, said = make(4, policy=policy)
    for e in d.take(4):
        d.faulted(e, DOWN)
    while not d.left:
        clock.now += max(d.wake_in() or 0.0, 1.0)
        for e in d.take(4):
            d.faulted(e, DOWN)
    assert clock.now >= 120 and "left for a rerun" in said[-1]
    assert d.take(4) == [] and d.idle
    assert len(d.left) == 4 and all(why.startswith("endpoint failing") for _, why in d.left)
    # Each episode paid only for the attempt it made when the endpoint went down.
    assert [e.attempts for e, _ in d.left] == [1, 1, 1, 1]


def test_a_configuration_fault_stops_the_endpoint_and_spares_the_others() -> None:
    clock, said = Clock(), []
    entries = [Entry("a1", "a"), Entry("a2", "a"), Entry("b1", "b")]
    d = Dispatcher(entries, POLICY, clock=clock, say=said.append)
    a1, a2, b1 = d.take(1) + d.take(1) + d.take(1)
    assert d.faulted(a1, Fault("config", "HTTP 401: check $KEY", endpoint=True)) is False
    assert "configuration error" in said[-1] and "$KEY" in said[-1]
    assert d.faulted(a2, Fault("server", "503", endpoint=True)) is False  # stopped already
    assert d.faulted(b1, Fault("server", "503", endpoint=True)) is True  # b keeps its attempts
    assert {e.job for e, _ in d.left} == {"a1", "a2"}


def test_backend_faults_never_pause_an_endpoint() -> None:
    d, _clock, said = make(5)
    for e in d.take(5):
        d.faulted(e, Fault("worker", "the worker died"))
    assert said == [] and d.status() == ["5 waiting to retry (next in 10s)"]  # no pause


def test_redaction_covers_urls_bearers_query_keys_and_given_secrets() -> None:
    text = (
        "GET https://user:hunter2@api.example/v1?api_key=abc123 failed; "
        "Authorization: Bearer tok-999; key sk-abcdefghijkl; my-secret-value"
    )
    out = redact(text, ["my-secret-value"])
    for secret in ("hunter2", "abc123", "tok-999", "sk-abcdefghijkl", "my-secret-value"):
        assert secret not in out
    assert "api.example" in out


def test_execution_waits_and_limits_must_be_finite() -> None:
    """An infinite episode limit, retry wait or give-up time would let a hanging endpoint hold
    a run forever: each is refused when the spec is read, as the client's waits are."""
    import pydantic
    import pytest

    for field in ("episode_timeout_s", "retry_delay_s", "retry_delay_max_s", "give_up_after_s"):
        with pytest.raises(pydantic.ValidationError, match="finite"):
            ExecutionSpec(**{field: float("inf")})
        assert ExecutionSpec(**{field: 5.0})


def test_episodes_waiting_out_their_retry_delay_say_so_and_the_delay_is_bounded() -> None:
    """A run waiting before the next attempt showed an unchanging progress line (with the
    defaults up to 5 min; with a retry delay typed in the wrong unit, for years, to all
    appearances hung). The line now says how many wait and for how long, and a delay over
    a day is refused when the spec is read."""
    import pydantic
    import pytest

    d, clock, _ = make(2, endpoint=None)
    a, _b = d.take(2)
    assert d.status() == []
    d.faulted(a, Fault("worker", "died"))
    assert d.status() == ["1 waiting to retry (next in 10s)"]
    clock.now = 4.0
    assert d.status() == ["1 waiting to retry (next in 6.0s)"]
    clock.now = 10.0
    assert d.status() == []
    for field in ("retry_delay_s", "retry_delay_max_s"):
        with pytest.raises(pydantic.ValidationError, match="less than or equal to 86400"):
            ExecutionSpec(**{field: 1e9})


def test_an_endpoint_that_did_not_answer_the_preflight_is_probed_one_episode_at_a_time() -> None:
    """An endpoint whose preflight timed out got every slot's episode at once, each waiting
    the client's full time limit before its first fault, with nothing on the progress line:
    it now starts the run as paused endpoints end theirs, one probe at a time, named."""
    clock, said = Clock(), []
    entries = [Entry(f"job{i}", "m") for i in range(6)] + [Entry("other", "n")]
    d = Dispatcher(entries, POLICY, clock=clock, say=said.append, not_answering=["m", "gone"])
    taken = d.take(7)
    assert [e.job for e in taken] == ["job0", "other"] and taken[0].probe
    assert d.status() == ["endpoint m failing for 0.0s, one episode at a time probes it"]
    assert "gone" not in d.breaker.endpoints  # only endpoints this queue calls
    clock.now = 5.0
    d.faulted(taken[0], DOWN)  # a failed probe is the endpoint's, not the episode's
    assert taken[0].attempts == 0 and "pausing 10s" in said[-1]
    clock.now = 16.0
    (probe,) = d.take(7)
    d.succeeded(probe)
    assert "answering again" in said[-1]
    assert len(d.take(7)) == 5  # dispatch resumes at full width
