"""The Python side of the parity table: runs one scenario's plan with dsh_sdk.

Usage: PYTHONPATH=python python3 driver.py '<DriverInput JSON>'  (command from $DSH_BIN).
Prints one JSON line: {texts, reasons, seen, sessionIds}."""
import json
import os
import sys
import threading
import time

from dsh_sdk import Client, Tool


def running(needle):
    """Whether a process other than this one has exactly ``needle`` as its command line
    (argv joined by spaces): the command itself, not the shell that will start it."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if f.read().rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace") == needle:
                    return True
        except OSError:
            pass
    return False


def until(check, what, seconds=20.0):
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.025)


def main():
    spec = json.loads(sys.argv[1])
    plan, workspace = spec["plan"], spec["workspace"]
    out = {"texts": [], "reasons": [], "seen": {}, "sessionIds": []}

    def record(result):
        out["texts"].append(result.text)
        out["reasons"].append(result.reason)

    with Client() as client:
        kind = plan["kind"]
        if kind == "run":
            approvals = []
            questions = []
            tool_calls = []

            def lookup(args):
                tool_calls.append(args)
                if args["key"] != "colour":
                    raise KeyError(f"no such key: {args['key']}")
                return f"value of {args['key']}: blue"

            tools = [Tool("lookup", "Looks a key up.", {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}, lookup)] if plan.get("tool") else []
            session = client.create_session(workspace=workspace, tools=tools)
            out["sessionIds"].append(session.id)

            def approve(request):
                approvals.append(request["title"])
                return plan.get("approve", "reject")

            def answer(request):
                questions.append([q["question"] for q in request["questions"]])
                return [{"id": q["id"], "selected": [q["options"][0]["id"]]} for q in request["questions"]]

            for prompt in plan["prompts"]:
                record(session.run(prompt, on_approval=approve, on_question=answer))
            if plan.get("approve"):
                out["seen"]["approvals"] = len(approvals)
            if plan.get("question"):
                out["seen"]["questions"] = questions
            if plan.get("tool"):
                out["seen"]["toolCalls"] = tool_calls
        elif kind == "cancel":
            session = client.create_session(workspace=workspace)
            out["sessionIds"].append(session.id)
            results = []
            worker = threading.Thread(target=lambda: results.append(session.run(plan["prompt"])))
            worker.start()
            until(lambda: running(plan["marker"]), f"{plan['marker']} to run")
            session.cancel()
            worker.join(timeout=30)
            record(results[0])
            try:
                until(lambda: not running(plan["marker"]), f"{plan['marker']} to end", 10.0)
                out["seen"]["killed"] = True
            except RuntimeError:
                out["seen"]["killed"] = False
        elif kind == "two-sessions":
            sessions = [client.create_session(workspace=workspace) for _ in plan["prompts"]]
            out["sessionIds"].extend(s.id for s in sessions)
            results = [None] * len(sessions)

            def run(i):
                results[i] = sessions[i].run(plan["prompts"][i])

            threads = [threading.Thread(target=run, args=(i,)) for i in range(len(sessions))]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=60)
            for r in results:
                record(r)
        elif kind == "resume":
            first = client.create_session(workspace=workspace)
            out["sessionIds"].append(first.id)
            record(first.run(plan["prompts"][0]))
            client.close()
            with Client() as again:
                record(again.open_session(first.id).run(plan["prompts"][1]))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
