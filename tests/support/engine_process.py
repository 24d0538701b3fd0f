"""`cachegate engine` as a real subprocess on a free loopback port: start, wait healthy, stop, kill."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import httpx

from tests.support.redis_server import free_port


class EngineProcess:
    def __init__(self, name: str, model: str = "packaged:smollm2-135m-instruct", token: str | None = None) -> None:
        self.name = name
        self.model = model
        self.token = token          # the gateway token it is started with (CACHEGATE_ENGINE_TOKEN)
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix=f"engine-{name}-", suffix=".log", delete=False)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> EngineProcess:
        env = os.environ | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
        env.pop("CACHEGATE_ENGINE_TOKEN", None)
        if self.token:
            env["CACHEGATE_ENGINE_TOKEN"] = self.token
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cachegate", "engine", "--model", self.model, "--name", self.name,
             "--port", str(self.port), "--log-level", "warning"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"engine {self.name} exited: {open(self.log.name).read()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"engine {self.name} did not become healthy")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def pause(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def __enter__(self) -> EngineProcess:
        return self.start()

    def __exit__(self, *_: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.resume()
        self.kill()
        os.unlink(self.log.name)
