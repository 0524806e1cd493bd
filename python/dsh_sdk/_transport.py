"""The server process and its NDJSON JSON-RPC stream (one reader thread, one stderr thread).

Frames are read with ``readline()`` on the binary stdout, which splits on b"\\n" only, so a
U+2028 inside a JSON string stays content. Every call settles once: a result, an
RpcError, a TimeoutError, or the TransportClosedError of a server that went away.
"""
import collections
import itertools
import json
import os
import shutil
import subprocess
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

from ._errors import RpcError, TimeoutError, TransportClosedError

TAIL_LINES = 20


def resolve_command(command: Optional[Sequence[str]], env: Optional[Dict[str, str]]) -> List[str]:
    """The explicit ``command`` list, else ``$DSH_BIN sdk``, else ``dsh sdk`` from PATH."""
    if command:
        return [str(c) for c in command]
    environ = env if env is not None else os.environ
    if environ.get("DSH_BIN"):
        return [environ["DSH_BIN"], "sdk"]
    found = shutil.which("dsh", path=environ.get("PATH"))
    if not found:
        raise FileNotFoundError("dsh not found: pass command=[...], set DSH_BIN, or put dsh on PATH")
    return [found, "sdk"]


class _Slot:
    __slots__ = ("event", "result", "error", "method")

    def __init__(self, method: str) -> None:
        self.event = threading.Event()
        self.result: Any = None
        self.error: Optional[BaseException] = None
        self.method = method


class Transport:
    """One ``dsh sdk`` process. ``on_request(method, params, cancelled)`` answers server requests
    (on a worker thread; return the result or raise); ``on_notification(method, params)`` runs
    on the reader thread; ``on_closed(error)`` once the server is gone."""

    def __init__(self, argv: List[str], env: Optional[Dict[str, str]], cwd: Optional[str],
                 on_request: Callable[[str, Any, threading.Event], Any],
                 on_notification: Callable[[str, Any], None],
                 on_closed: Callable[[TransportClosedError], None]) -> None:
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env=env, cwd=cwd, bufsize=0)
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_closed = on_closed
        self._ids = itertools.count(1)
        self._pending: Dict[int, _Slot] = {}
        self._answering: Dict[Any, threading.Event] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._tail: "collections.deque[str]" = collections.deque(maxlen=TAIL_LINES)
        self._closed: Optional[TransportClosedError] = None
        self._done = threading.Event()
        self.protocol_errors: List[str] = []
        self._stderr_thread = threading.Thread(target=self._read_stderr, name="dsh-sdk-stderr", daemon=True)
        self._stderr_thread.start()
        self._reader = threading.Thread(target=self._read, name="dsh-sdk-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def stderr_tail(self) -> str:
        return "\n".join(self._tail)

    # -- writing -------------------------------------------------------------------------
    def _send(self, message: dict) -> None:
        # ensure_ascii: lone surrogates and U+2028 travel as \u escapes, so the frame is valid UTF-8 and one line
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")
        with self._write_lock:
            try:
                self._proc.stdin.write(data)  # type: ignore[union-attr]
                self._proc.stdin.flush()  # type: ignore[union-attr]
            except (BrokenPipeError, OSError, ValueError):
                pass  # the reader sees the end and fails what is pending

    def call(self, method: str, params: Any = None, timeout: Optional[float] = None) -> Any:
        if self._closed:
            raise self._closed
        msg_id = next(self._ids)
        slot = _Slot(method)
        with self._lock:
            self._pending[msg_id] = slot
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {} if params is None else params})
        if not slot.event.wait(timeout):
            with self._lock:
                self._pending.pop(msg_id, None)
            raise TimeoutError(method, timeout or 0)
        if slot.error is not None:
            raise slot.error
        return slot.result

    # -- reading -------------------------------------------------------------------------
    def _read_stderr(self) -> None:
        for raw in iter(self._proc.stderr.readline, b""):  # type: ignore[union-attr]
            self._tail.append(raw.decode("utf-8", "replace").rstrip("\r\n"))

    def _read(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        while True:
            raw = stdout.readline()
            if not raw:
                break
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not text.strip():
                continue
            try:
                message = json.loads(text)
            except ValueError:
                self.protocol_errors.append(f"the server sent a line that is not JSON: {text[:120]}")
                continue
            if isinstance(message, dict):
                self._dispatch(message)
            else:
                self.protocol_errors.append(f"the server sent a non-object frame: {text[:120]}")
        code = self._proc.wait()
        self._stderr_thread.join(timeout=2)
        signal = None
        if code is not None and code < 0:
            import signal as signals
            try:
                signal = signals.Signals(-code).name
            except ValueError:
                signal = str(-code)
        how = f"signal {signal}" if signal else f"code {code}"
        self._fail(TransportClosedError(f"the dsh sdk server exited ({how})", None if signal else code, signal, self.stderr_tail()))

    def _dispatch(self, message: dict) -> None:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                threading.Thread(target=self._answer, args=(message["id"], method, message.get("params")), daemon=True).start()
            elif method == "$/cancelRequest":
                cancelled = self._answering.get((message.get("params") or {}).get("id"))
                if cancelled is not None:
                    cancelled.set()
            else:
                self._on_notification(method, message.get("params"))
            return
        msg_id = message.get("id")
        with self._lock:
            slot = self._pending.pop(msg_id, None) if isinstance(msg_id, int) else None
        if slot is None:
            if msg_id is None and "error" in message:
                self.protocol_errors.append(f"the server reported: {message['error'].get('message')}")
            return
        if "error" in message:
            err = message["error"] or {}
            slot.error = RpcError(slot.method, int(err.get("code", -32603)), str(err.get("message", "")), err.get("data"))
        else:
            slot.result = message.get("result")
        slot.event.set()

    def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        cancelled = threading.Event()
        self._answering[msg_id] = cancelled
        try:
            reply = {"jsonrpc": "2.0", "id": msg_id, "result": self._on_request(method, params, cancelled)}
        except Exception as error:  # noqa: BLE001 - any failure is the answer
            reply = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": f"{type(error).__name__}: {error}"}}
        finally:
            self._answering.pop(msg_id, None)
        if not cancelled.is_set() and not self._closed:
            self._send(reply)

    def _fail(self, error: TransportClosedError) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = error
            pending = list(self._pending.values())
            self._pending.clear()
        for slot in pending:
            slot.error = error
            slot.event.set()
        for cancelled in list(self._answering.values()):
            cancelled.set()
        self._done.set()
        self._on_closed(error)

    # -- closing -------------------------------------------------------------------------
    def stop(self, grace: float) -> Optional[TransportClosedError]:
        """EOF on stdin, then SIGTERM after ``grace`` seconds, then SIGKILL after as long again."""
        with self._write_lock:
            try:
                self._proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
        for step in (None, self._proc.terminate, self._proc.kill):
            if step is not None:
                step()
            try:
                self._proc.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
        self._done.wait(timeout=grace)
        self._reader.join(timeout=grace)
        for stream in (self._proc.stdout, self._proc.stderr):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        return self._closed
