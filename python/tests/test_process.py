"""The client's process handling, against stand-in servers (no dsh needed)."""
import os
import sys

import pytest

from dsh_sdk import Client, TransportClosedError

STUBBORN = r"""
import json, signal, sys
signal.signal(signal.SIGTERM, lambda *a: sys.stderr.write("ignoring SIGTERM\n") or sys.stderr.flush())
line = sys.stdin.buffer.readline()
msg = json.loads(line)
sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1}}) + "\n")
sys.stdout.write('{"jsonrpc":"2.0","method":"session/status","params":{"sessionId":"s","status":"idle\u2028x"}}\n')
sys.stdout.write("not json\n")
sys.stdout.flush()
sys.stdin.buffer.read()
sys.stderr.write("ignoring EOF\n")
sys.stderr.flush()
import time
while True:
    time.sleep(1)
"""


def test_close_walks_eof_sigterm_sigkill():
    seen = []
    client = Client(command=[sys.executable, "-c", STUBBORN], close_grace=0.3, on_notification=lambda m, p: seen.append(p))
    pid = client.pid
    client.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert "ignoring EOF" in client.stderr_tail() and "ignoring SIGTERM" in client.stderr_tail()
    with pytest.raises(TransportClosedError) as closed:
        client.call("session/list")
    assert closed.value.signal == "SIGKILL"
    # the frame with a raw U+2028 inside a string stayed one frame; the junk line is reported
    assert seen == [{"sessionId": "s", "status": "idle\u2028x"}]
    assert client.protocol_errors == ["the server sent a line that is not JSON: not json"]


def test_a_server_that_dies_at_start_is_a_typed_error_with_its_exit_code_and_stderr():
    with pytest.raises(TransportClosedError) as closed:
        Client(command=[sys.executable, "-c", "import sys; sys.stderr.write('CONFIG_INVALID: broken patch\\n'); sys.exit(3)"])
    assert closed.value.exit_code == 3
    assert closed.value.stderr_tail == "CONFIG_INVALID: broken patch"


def test_pip_installs_the_package_without_an_index(tmp_path):
    import subprocess
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--target", str(target), str(root)],
                   check=True, capture_output=True, cwd=tmp_path)
    out = subprocess.run([sys.executable, "-c", "import dsh_sdk; print(dsh_sdk.__file__, len(dsh_sdk.METHODS))"],
                         check=True, capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(target)})
    path, count = out.stdout.split()
    assert path.startswith(str(target)) and int(count) == len(__import__("dsh_sdk").METHODS)
