"""Cost of the LLM client stack itself, and how well it overlaps slow calls.

(a) Overhead per call with a zero-latency MockLLM: the mock alone, behind
    OpenAIClient (retry loop, semaphore, timeout, pricing), and with
    CachedClient on top (key hashing plus an SQLite write on a miss, a read on
    a hit). Prompts are about 6 KB, the size of a typical observation prompt.
(b) 64 concurrent episodes, each making 20 sequential calls to a MockLLM that
    takes 1 s per call, through CachedClient over OpenAIClient with
    concurrency 64. The ideal is 64 calls/s; the figure is the achieved share.

Run: .venv/bin/python benchmarks/bench_llm.py            (about 25 s)
     .venv/bin/python benchmarks/bench_llm.py --latency 0.2   (quicker)
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from mirrorcraft.llm.base import LLMClient, Message
from mirrorcraft.llm.cache import CachedClient, ResponseCache
from mirrorcraft.llm.mock import MockLLM, scripted
from mirrorcraft.llm.openai_client import OpenAIClient, OpenAISettings

SYSTEM = "You control a Minecraft player through semantic skills. " * 20
OBSERVATION = "inventory: oak_log x3, stick x2; nearby: iron_ore at 4 blocks; " * 80
REPLY = '{"skill": "mine", "args": {"block": "iron_ore", "count": 1}}'


def prompt(episode: int, step: int) -> list[Message]:
    return [Message("system", SYSTEM), Message("user", f"{OBSERVATION} step {episode}/{step}")]


def stack(mock: MockLLM, concurrency: int) -> OpenAIClient:
    settings = OpenAISettings(
        model="mock", base_url="http://mock.invalid/v1", concurrency=concurrency, max_retries=0
    )
    return OpenAIClient(settings, transport=mock.transport)


async def time_calls(client: LLMClient, calls: int, episode: int) -> float:
    started = time.perf_counter()
    for step in range(calls):
        await client.complete(prompt(episode, step))
    return time.perf_counter() - started


def overhead(calls: int, cache_dir: Path) -> None:
    print(f"(a) overhead per call, {calls} calls, zero-latency mock, ~6 KB prompts")
    mock = MockLLM(scripted([REPLY]))
    with ResponseCache(cache_dir / "bench_a.sqlite") as cache:
        layers: list[tuple[str, LLMClient, int]] = [
            ("MockLLM alone", mock, 0),
            ("OpenAIClient over mock transport", stack(mock, 16), 1),
            ("CachedClient, misses (hash + insert)", CachedClient(stack(mock, 16), cache), 2),
            ("CachedClient, hits (hash + select)", CachedClient(stack(mock, 16), cache), 2),
        ]

        async def measure() -> None:
            for name, client, episode in layers:
                await time_calls(client, 50, episode + 100)  # warm up
                elapsed = await time_calls(client, calls, episode)
                rate = calls / elapsed
                print(f"    {name:<40} {rate:>9.0f} calls/s {1e6 / rate:>8.1f} us/call")

        asyncio.run(measure())


def throughput(episodes: int, steps: int, latency_s: float, cache_dir: Path) -> None:
    mock = MockLLM(scripted([REPLY]), latency_s=latency_s)
    with ResponseCache(cache_dir / "bench_b.sqlite") as cache:
        root = CachedClient(stack(mock, episodes), cache)

        async def episode(number: int) -> None:
            client = root.scoped(f"episode-{number}")
            for step in range(steps):
                await client.complete(prompt(number, step))

        async def run_all() -> float:
            started = time.perf_counter()
            await asyncio.gather(*(episode(n) for n in range(episodes)))
            return time.perf_counter() - started

        elapsed = asyncio.run(run_all())
    calls = episodes * steps
    ideal = episodes / latency_s
    achieved = calls / elapsed
    print(
        f"(b) {episodes} episodes x {steps} sequential calls, {latency_s:g} s per call, "
        f"concurrency {episodes}"
    )
    print(f"    {calls} calls in {elapsed:.2f} s (ideal {steps * latency_s:.2f} s)")
    print(
        f"    throughput {achieved:.1f} calls/s vs ideal {ideal:.1f} calls/s: "
        f"{100 * achieved / ideal:.1f}%"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=5000, help="calls per layer in (a)")
    parser.add_argument("--latency", type=float, default=1.0, help="mock latency in (b)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        overhead(args.calls, Path(tmp))
        throughput(64, 20, args.latency, Path(tmp))


if __name__ == "__main__":
    main()
