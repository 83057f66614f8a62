"""The Python side of the bridge protocol against scripted bridge processes (no Node needed):
noise on the bridge's stdout, and a bridge that exits, never leave a call waiting out its
timeout or take the reader down."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from mirrorcraft.backends.mineflayer.bridge import BridgeClient, BridgeError

PACKAGES = ("mineflayer", "mineflayer-pathfinder", "minecraft-data", "vec3")


def scripted_bridge(tmp_path: Path, body: str) -> Path:
    """A bridge folder whose ``src/main.js`` is a Python script (run with ``node=python``)."""
    folder = tmp_path / "bridge"
    (folder / "src").mkdir(parents=True)
    for package in PACKAGES:
        (folder / "node_modules" / package).mkdir(parents=True)
        (folder / "node_modules" / package / "package.json").write_text("{}")
    head = textwrap.dedent(
        """
        import json, sys
        out = sys.stdout.buffer
        def send(obj):
            out.write(json.dumps(obj).encode() + b"\\n"); out.flush()
        send({"event": "ready", "data": {"protocol": 1}})
        """
    )
    (folder / "src" / "main.js").write_text(head + textwrap.dedent(body))
    return folder


def test_noise_on_the_bridges_stdout_is_skipped_and_answers_still_arrive(tmp_path: Path) -> None:
    """A line that is not UTF-8 made ``json.loads`` raise UnicodeDecodeError, which killed the
    reader thread: every later call then waited its whole timeout (an act: 300 s) and was
    recorded as a `timeout` fault although the bridge had answered."""
    folder = scripted_bridge(
        tmp_path,
        """
        for line in sys.stdin:
            req = json.loads(line)
            if req["method"] == "shutdown":
                break
            out.write(b"\\x80\\xff binary noise\\n")
            out.write(b"[" * 100000 + b"\\n")
            out.write(b"plain text noise\\n")
            out.write(b'{"id": true, "ok": true, "result": "not for anyone"}\\n')
            out.flush()
            send({"id": req["id"], "ok": True, "result": {"echo": req["method"]}})
        """,
    )
    with BridgeClient(folder, node=sys.executable) as bridge:
        assert bridge.call("ping", timeout_s=20) == {"echo": "ping"}
        assert bridge.call("observe", timeout_s=20) == {"echo": "observe"}
        assert any("non-protocol stdout" in line for line in bridge.stderr)
        assert bridge.lost is None


def test_a_bridge_that_exits_mid_call_fails_the_call_at_once(tmp_path: Path) -> None:
    folder = scripted_bridge(
        tmp_path,
        """
        sys.stdin.readline()
        sys.stderr.write("out of memory\\n"); sys.stderr.flush()
        sys.exit(3)
        """,
    )
    bridge = BridgeClient(folder, node=sys.executable)
    try:
        with pytest.raises(BridgeError) as err:
            bridge.call("act", {"skill": "wait"}, timeout_s=120)
    finally:
        bridge.close()
    assert err.value.code == "exited" and err.value.kind == "connection"
    assert "exited" in str(err.value) and "'act'" in str(err.value)


def test_a_bridge_that_exits_before_it_is_ready_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    scripted_bridge(tmp_path / "x", "")
    (tmp_path / "x" / "bridge").rename(folder)
    (folder / "src" / "main.js").write_text(
        "import sys\nsys.stderr.write('boom\\n')\nsys.exit(1)\n"
    )
    with pytest.raises(BridgeError) as err:
        BridgeClient(folder, node=sys.executable, start_timeout_s=60)
    assert err.value.code == "exited"
    assert "exited before it was ready" in str(err.value) and "boom" in str(err.value)
