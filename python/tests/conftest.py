"""Fixtures: the testkit's scripted mock model (one per test session) and a dsh environment.

The tests drive the built ``dsh sdk`` of this checkout (``npm run build`` first)."""
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DSH_BIN = ROOT / "node_modules" / ".bin" / "dsh"
sys.path.insert(0, str(ROOT / "python"))


@pytest.fixture(scope="session")
def mock_model(tmp_path_factory):
    script = tmp_path_factory.mktemp("mock") / "empty.json"
    script.write_text("[]")
    proc = subprocess.Popen(["node", str(ROOT / "packages/testkit/dist/bin/mock-model.js"), "--script", str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = proc.stdout.readline().decode()
    assert "listening on " in line, line
    url = line.strip().rsplit(" ", 1)[-1]
    yield Mock(url)
    proc.terminate()
    proc.wait(timeout=10)


class Mock:
    def __init__(self, url):
        self.url = url

    def script(self, steps):
        """Replaces the script and rewinds (POST /__mock/script)."""
        request = urllib.request.Request(f"{self.url}/__mock/script", data=json.dumps(steps).encode(), method="POST",
                                         headers={"content-type": "application/json"})
        urllib.request.urlopen(request).read()

    def failures(self):
        return json.loads(urllib.request.urlopen(f"{self.url}/__mock/failures").read())


@pytest.fixture
def env(mock_model, tmp_path):
    assert DSH_BIN.exists(), "build dsh first: npm run build"
    home = tmp_path / "home"
    home.mkdir()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DSH_", "DEEPSEEK_", "OPENAI_", "ANTHROPIC_"))}
    clean.update({"DSH_HOME": str(home), "DEEPSEEK_BASE_URL": mock_model.url, "DEEPSEEK_API_KEY": "mock-key", "DSH_BIN": str(DSH_BIN)})
    return clean


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return str(ws.resolve())
