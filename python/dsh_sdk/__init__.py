"""dsh_sdk: a synchronous client of ``dsh sdk`` (the dsh host API as NDJSON JSON-RPC over stdio).

Standard library only, Python >= 3.10::

    from dsh_sdk import Client
    with Client() as client:
        session = client.create_session(workspace="/abs/dir")
        result = session.run("list the files")
        print(result.text, result.reason)
"""
from ._client import Client, RunResult, Session, Tool, final_text, turn_usage
from ._errors import DshSdkError, RpcError, TimeoutError, TransportClosedError
from ._methods import METHODS
from ._transport import resolve_command

__version__ = "0.1.0"
__all__ = [
    "Client", "Session", "RunResult", "Tool", "METHODS", "DshSdkError", "RpcError", "TimeoutError",
    "TransportClosedError", "final_text", "turn_usage", "resolve_command",
]
