"""The Python client against the built ``dsh sdk`` and the scripted model."""
import os
import signal
import time

import pytest

from dsh_sdk import METHODS, Client, RpcError, TimeoutError, Tool, TransportClosedError, resolve_command


def bash(command, **extra):
    return {"name": "bash", "arguments": {"command": command, **extra}}


def test_runs_a_turn_with_tool_calls(env, workspace, mock_model):
    mock_model.script([{"toolCalls": [bash("printf hi > out.txt")]}, {"text": "Wrote it.", "usage": {"input": 30, "output": 4}}])
    seen = []
    with Client(env=env, cwd=workspace) as client:
        session = client.create_session(workspace=workspace)
        result = session.run("write a file", on_event=lambda event, view: seen.append(event["type"]))
    assert (result.text, result.reason) == ("Wrote it.", "completed")
    assert result.usage["outputTokens"] >= 4
    assert [e["type"] for e in result.events][0] == "turn/start" and result.events[-1]["type"] == "turn/end"
    assert seen == [e["type"] for e in result.events]
    assert open(os.path.join(workspace, "out.txt")).read() == "hi"
    assert mock_model.failures() == []


def test_rejects_approvals_by_default(env, workspace, mock_model):
    mock_model.script([{"toolCalls": [bash("printf yes > approved.txt", escalate=True, justification="t")]},
                       {"text": "Refused.", "expect": {"lastToolResultIncludes": "did not allow"}}])
    with Client(env=env) as client:
        result = client.create_session(workspace=workspace).run("escalate")
    assert (result.text, result.reason) == ("Refused.", "completed")
    assert not os.path.exists(os.path.join(workspace, "approved.txt"))
    assert mock_model.failures() == []


def test_a_throwing_client_tool_is_an_error_result(env, workspace, mock_model):
    mock_model.script([{"toolCalls": [{"name": "explode", "arguments": {}}]},
                       {"text": "It failed.", "expect": {"lastToolResultIncludes": "ValueError: kaboom"}}])

    def explode(_args):
        raise ValueError("kaboom")

    with Client(env=env) as client:
        session = client.create_session(workspace=workspace, tools=[Tool("explode", "Fails.", {"type": "object"}, explode)])
        assert session.run("try it").text == "It failed."
    assert mock_model.failures() == []


def test_typed_rpc_errors(env, workspace):
    with Client(env=env) as client:
        with pytest.raises(RpcError) as missing:
            client.call("session/get", {"sessionId": "no-such-session"})
        assert missing.value.code == -32002 and missing.value.data["code"] == "SESSION_NOT_FOUND"
        with pytest.raises(RpcError) as invalid:
            client.create_session(workspace="relative/dir")
        assert invalid.value.code == -32602
        assert {"path": "params.workspace", "message": "must be an absolute path"} in invalid.value.data["issues"]
        with pytest.raises(RpcError) as unknown:
            client.call("session/frobnicate")
        assert unknown.value.code == -32601


def test_round_trips_line_separators_and_times_out_waiting(env, workspace):
    with Client(env=env) as client:
        session = client.create_session(workspace=workspace)
        title = "a\u2028b\u2029c"
        client.call("session/rename", {"sessionId": session.id, "title": title})
        assert client.call("session/get", {"sessionId": session.id})["session"]["title"] == title
        with pytest.raises(TimeoutError):
            next(session.events(timeout=0.3))
        assert client.protocol_errors == []


def test_server_killed_under_the_client_is_a_typed_error(env, workspace, mock_model):
    mock_model.script([{"toolCalls": [bash("sleep 363.3")]}])
    env = {**env, "DSH_SDK_DEBUG": "1"}
    with Client(env=env) as client:
        session = client.create_session(workspace=workspace)
        session.prompt("sleep")
        time.sleep(0.3)
        os.kill(client.pid, signal.SIGKILL)
        with pytest.raises(TransportClosedError) as closed:
            for _ in session.events(timeout=20):
                pass
        assert closed.value.signal == "SIGKILL" and closed.value.exit_code is None
        assert "[sdk]" in closed.value.stderr_tail
        with pytest.raises(TransportClosedError):
            client.list_sessions()


def test_method_list_equals_rpc_describe(env):
    with Client(env=env) as client:
        described = client.call("rpc/describe")
    served = sorted(m["name"] for m in described["methods"] if "sdk" in m.get("carriers", []))
    assert sorted(METHODS) == served
    assert sorted(Client.methods) == served


def test_finds_dsh_explicitly_then_dsh_bin_then_path(tmp_path):
    assert resolve_command(["/x/dsh", "sdk"], {}) == ["/x/dsh", "sdk"]
    assert resolve_command(None, {"DSH_BIN": "/y/dsh"}) == ["/y/dsh", "sdk"]
    fake = tmp_path / "dsh"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert resolve_command(None, {"PATH": str(tmp_path)}) == [str(fake), "sdk"]
    with pytest.raises(FileNotFoundError):
        resolve_command(None, {"PATH": str(tmp_path / "nothing")})
