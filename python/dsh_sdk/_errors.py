"""Errors of the Python client; the same three as the TypeScript client's."""
import builtins
from typing import Any, Optional


class DshSdkError(Exception):
    """Base class of every error this package raises."""


class RpcError(DshSdkError):
    """The server answered a call with a JSON-RPC error. ``data["code"]`` is the stable dsh code."""

    def __init__(self, method: str, code: int, message: str, data: Optional[dict] = None) -> None:
        super().__init__(f"{method}: {message}")
        self.method = method
        self.code = code
        self.data: dict = data if isinstance(data, dict) else {}


class TransportClosedError(DshSdkError):
    """The server process is gone: ``exit_code`` / ``signal`` say how, ``stderr_tail`` holds its last stderr lines."""

    def __init__(self, message: str, exit_code: Optional[int], signal: Optional[str], stderr_tail: str) -> None:
        text = f"{message}\n--- last lines of the server's stderr ---\n{stderr_tail}" if stderr_tail else message
        super().__init__(text)
        self.exit_code = exit_code
        self.signal = signal
        self.stderr_tail = stderr_tail


class TimeoutError(DshSdkError, builtins.TimeoutError):  # noqa: A001 - mirrors the TypeScript client's name
    """A call (or the start, or close) took longer than its timeout."""

    def __init__(self, what: str, timeout: float) -> None:
        super().__init__(f"{what} took longer than {timeout} s")
        self.what = what
        self.timeout = timeout


