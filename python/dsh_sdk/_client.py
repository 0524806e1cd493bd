"""The synchronous Python client of ``dsh sdk``; the same shape as the TypeScript client."""
import queue
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

from ._errors import RpcError, TransportClosedError
from ._methods import METHODS
from ._transport import Transport, resolve_command

ApprovalHandler = Callable[[dict], str]
QuestionHandler = Callable[[dict], list]
EventHandler = Callable[[dict, Any], None]
_END = object()


@dataclass
class Tool:
    """A tool this program executes. ``execute(arguments)`` returns a string or ``{"content", "isError"?}``;
    an exception becomes an error result the model reads."""
    name: str
    description: str
    input_schema: dict
    execute: Callable[[Any], Union[str, dict]]


@dataclass
class RunResult:
    text: str
    reason: str
    usage: dict
    events: List[dict] = field(default_factory=list)
    prompt_id: str = ""


def _camel(key: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def final_text(events: Sequence[dict]) -> str:
    """The text parts of the turn's last assistant/message."""
    for event in reversed(events):
        if event.get("type") == "assistant/message":
            parts = (event.get("data") or {}).get("content") or []
            return "".join(p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")
    return ""


def turn_usage(events: Sequence[dict]) -> dict:
    """Usage summed over the turn's step/end events (assistant/message usage when no step reported any)."""
    total: Dict[str, int] = {"inputTokens": 0, "outputTokens": 0}
    steps = [e for e in events if e.get("type") == "step/end" and (e.get("data") or {}).get("usage")]
    source = steps or [e for e in events if e.get("type") == "assistant/message"]
    for event in source:
        for key, value in ((event.get("data") or {}).get("usage") or {}).items():
            if isinstance(value, (int, float)):
                total[key] = total.get(key, 0) + value
    return total


class Session:
    """A session this client owns; its durable events arrive in seq order."""

    def __init__(self, client: "Client", detail: dict, tools: Sequence[Tool] = (),
                 on_approval: Optional[ApprovalHandler] = None, on_question: Optional[QuestionHandler] = None) -> None:
        self._client = client
        self.detail = detail
        self.tools: Dict[str, Tool] = {t.name: t for t in tools}
        self.on_approval = on_approval
        self.on_question = on_question
        self._subscribers: List["queue.Queue[Any]"] = []
        self._run_handlers: List[dict] = []
        self._lock = threading.Lock()
        self._ended: Any = None

    @property
    def id(self) -> str:
        return self.detail["id"]

    def prompt(self, prompt: Union[str, list], mode: Optional[str] = None, timeout: Optional[float] = None) -> dict:
        params: Dict[str, Any] = {"sessionId": self.id, "prompt": prompt}
        if mode:
            params["mode"] = mode
        return self._client.call("session/prompt", params, timeout=timeout)

    def cancel(self, timeout: Optional[float] = None) -> dict:
        return self._client.call("session/cancel", {"sessionId": self.id}, timeout=timeout)

    def close(self, timeout: Optional[float] = None) -> None:
        self._client.call("session/close", {"sessionId": self.id}, timeout=timeout)
        self._end(None)

    def _subscribe(self) -> "queue.Queue[Any]":
        q: "queue.Queue[Any]" = queue.Queue()
        with self._lock:
            if self._ended is not None:
                q.put(self._ended)
            self._subscribers.append(q)
        return q

    def _unsubscribe(self, q: "queue.Queue[Any]") -> None:
        with self._lock:
            if q in self._subscribers:
                self._subscribers.remove(q)

    @staticmethod
    def _take(q: "queue.Queue[Any]", timeout: Optional[float]) -> Optional[dict]:
        try:
            item = q.get(timeout=timeout)
        except queue.Empty:
            from ._errors import TimeoutError
            raise TimeoutError("waiting for a session event", timeout or 0) from None
        if isinstance(item, BaseException):
            raise item
        return None if item is _END else item

    def events(self, timeout: Optional[float] = None) -> Iterator[dict]:
        """Every update ``{"event", "view"}`` from now on, until the session or the client closes."""
        q = self._subscribe()
        try:
            while True:
                item = self._take(q, timeout)
                if item is None:
                    return
                yield item
        finally:
            self._unsubscribe(q)

    def run(self, prompt: Union[str, list], on_approval: Optional[ApprovalHandler] = None,
            on_question: Optional[QuestionHandler] = None, on_event: Optional[EventHandler] = None,
            timeout: Optional[float] = None) -> RunResult:
        """Prompts and waits for that prompt's turn/end. Approvals and questions of the session go to
        this run's handlers while it runs (else the session's, the client's; approvals default to reject).
        ``timeout`` bounds the prompt call and each wait for the next event (TimeoutError)."""
        q = self._subscribe()
        handlers = {"on_approval": on_approval, "on_question": on_question}
        self._run_handlers.append(handlers)
        try:
            prompt_id = self.prompt(prompt, timeout=timeout)["promptId"]
            events: List[dict] = []
            turn_start: Optional[dict] = None
            mine = False
            while True:
                item = self._take(q, timeout)
                if item is None:
                    raise RuntimeError(f"session {self.id} closed before the turn of prompt {prompt_id} ended")
                event, view = item["event"], item.get("view")
                if not mine:
                    if event.get("type") == "turn/start":
                        turn_start = event
                    if event.get("type") != "user/message" or (event.get("data") or {}).get("id") != prompt_id:
                        continue
                    mine = True
                    if turn_start is not None:
                        events.append(turn_start)
                        if on_event:
                            on_event(turn_start, None)
                events.append(event)
                if on_event:
                    on_event(event, view)
                if event.get("type") == "turn/end":
                    reason = str((event.get("data") or {}).get("reason"))
                    return RunResult(final_text(events), reason, turn_usage(events), events, prompt_id)
        finally:
            self._run_handlers.remove(handlers)
            self._unsubscribe(q)

    def _deliver(self, update: dict) -> None:
        with self._lock:
            for q in self._subscribers:
                q.put(update)

    def _end(self, error: Optional[BaseException]) -> None:
        with self._lock:
            self._ended = error if error is not None else _END
            for q in self._subscribers:
                q.put(self._ended)

    def _handler(self, name: str) -> Optional[Callable]:
        for handlers in reversed(self._run_handlers):
            if handlers.get(name):
                return handlers[name]
        return getattr(self, name) or getattr(self._client, name)


class Client:
    """Spawns ``dsh sdk`` and initializes it. ``command`` is the whole argv (default: ``$DSH_BIN sdk``,
    else ``dsh sdk`` from PATH). Use as a context manager, or call ``close()``."""

    methods = METHODS

    def __init__(self, command: Optional[Sequence[str]] = None, env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
                 on_approval: Optional[ApprovalHandler] = None, on_question: Optional[QuestionHandler] = None,
                 capabilities: Optional[dict] = None, client_info: Optional[dict] = None,
                 start_timeout: float = 30.0, close_grace: float = 3.0,
                 on_notification: Optional[Callable[[str, Any], None]] = None) -> None:
        self.on_approval = on_approval
        self.on_question = on_question
        self._on_notification = on_notification
        self._close_grace = close_grace
        self._sessions: Dict[str, Session] = {}
        self._closed = False
        self._transport = Transport(resolve_command(command, env), env, cwd, self._answer, self._notified, self._transport_closed)
        caps = {"approvals": True, "questions": True, "tools": True}
        caps.update(capabilities or {})
        try:
            self.initialized = self.call("initialize", {
                "protocolVersion": 1, "client": client_info or {"name": "dsh-sdk-python", "version": "0.1.0"}, "capabilities": caps,
            }, timeout=start_timeout)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def pid(self) -> int:
        return self._transport.pid

    @property
    def protocol_errors(self) -> List[str]:
        return self._transport.protocol_errors

    def stderr_tail(self) -> str:
        return self._transport.stderr_tail()

    def call(self, method: str, params: Optional[dict] = None, timeout: Optional[float] = None) -> Any:
        """Calls a method of the host table; raises RpcError, TimeoutError or TransportClosedError."""
        return self._transport.call(method, params or {}, timeout)

    def create_session(self, workspace: str, tools: Sequence[Tool] = (), on_approval: Optional[ApprovalHandler] = None,
                       on_question: Optional[QuestionHandler] = None, timeout: Optional[float] = None, **params: Any) -> Session:
        """A new session owned by this client. Other ``session/create`` params go as keyword arguments
        (snake_case or camelCase: ``permission_mode="read-only"``)."""
        wire = {_camel(k): v for k, v in params.items()}
        wire["workspace"] = workspace
        if tools:
            wire["tools"] = [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools]
        detail = self.call("session/create", wire, timeout=timeout)["session"]
        return self._adopt(Session(self, detail, tools, on_approval, on_question))

    def open_session(self, session_id: str, tools: Sequence[Tool] = (), on_approval: Optional[ApprovalHandler] = None,
                     on_question: Optional[QuestionHandler] = None, timeout: Optional[float] = None) -> Session:
        """Opens a stored session here; it resumes where its log ends."""
        detail = self.call("session/open", {"sessionId": session_id}, timeout=timeout)["session"]
        return self._adopt(Session(self, detail, tools, on_approval, on_question))

    def list_sessions(self, timeout: Optional[float] = None, **params: Any) -> dict:
        return self.call("session/list", {_camel(k): v for k, v in params.items()}, timeout=timeout)

    def close(self) -> None:
        """EOF (the server cancels turns, flushes, exits), then SIGTERM, then SIGKILL. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._transport.stop(self._close_grace)
        for session in list(self._sessions.values()):
            session._end(None)

    def _adopt(self, session: Session) -> Session:
        self._sessions[session.id] = session
        return session

    def _notified(self, method: str, params: Any) -> None:
        session = self._sessions.get((params or {}).get("sessionId", "")) if isinstance(params, dict) else None
        if method == "session/event" and session is not None:
            session._deliver({"event": params.get("event"), "view": params.get("view")})
            return
        if method == "session/status" and session is not None:
            session.detail = {**session.detail, "status": params.get("status")}
        if self._on_notification:
            self._on_notification(method, params)

    def _transport_closed(self, error: TransportClosedError) -> None:
        for session in list(self._sessions.values()):
            session._end(None if self._closed else error)

    def _answer(self, method: str, params: Any, cancelled: threading.Event) -> Any:
        session = self._sessions.get(params.get("sessionId", "")) if isinstance(params, dict) else None
        if method == "approval/request":
            handler = session._handler("on_approval") if session else self.on_approval
            decision = handler(params) if handler else "reject"
            return {"decision": decision.get("decision") if isinstance(decision, dict) else decision}
        if method == "question/request":
            handler = session._handler("on_question") if session else self.on_question
            if not handler:
                raise RuntimeError("this client has no question handler")
            answers = handler(params)
            return {"answers": answers.get("answers") if isinstance(answers, dict) else answers}
        if method == "tool/call":
            tool = session.tools.get(params.get("tool")) if session else None
            if tool is None:
                return {"content": f"no client tool named {params.get('tool')!r} in this client", "isError": True}
            try:
                out = tool.execute(params.get("arguments"))
            except Exception as error:  # noqa: BLE001 - the model reads the failure
                return {"content": f"{type(error).__name__}: {error}", "isError": True}
            return {"content": out} if isinstance(out, str) else out
        raise RuntimeError(f"unknown server request {method}")


__all__ = ["Client", "Session", "RunResult", "Tool", "RpcError", "final_text", "turn_usage"]
