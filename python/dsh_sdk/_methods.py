"""The methods a ``dsh sdk`` client may call (the host table as the sdk carrier serves it).

A literal list on purpose: the parity test compares it with the server's ``rpc/describe``.
"""

METHODS = (
    "initialize", "host/describe", "models/list", "settings/read", "settings/update",
    "credentials/describe", "credentials/set", "credentials/unset", "rpc/describe",
    "session/create", "session/open", "session/fork", "session/list", "session/get", "session/rename",
    "session/archive", "session/delete", "session/close", "session/history", "session/subscribe",
    "session/unsubscribe", "session/prompt", "session/cancel", "session/set_model", "session/set_effort",
    "session/set_mode", "session/set_preset", "session/command", "session/export",
)
