"""Closed-loop HTTP load on loopback: `connections` keep-alive connections, each sending the next POST
as soon as the last answer is in, for `duration_s`; requests/s and latency percentiles.

Two drivers give the same figures: wrk (when installed; C, so the load generator costs little) and a
built-in asyncio client speaking just enough HTTP/1.1 (content-length and chunked bodies, for SSE).
"""
from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass
class LoadResult:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int
    driver: str

    def as_dict(self) -> dict:
        return {"rps": round(self.rps, 1), "p50_ms": round(self.p50_ms, 3), "p99_ms": round(self.p99_ms, 3),
                "requests": self.requests, "errors": self.errors, "driver": self.driver}


def drive(port: int, path: str, bodies: list[bytes], connections: int = 16, duration_s: float = 10.0,
          driver: str = "auto") -> LoadResult:
    """POST `bodies` (cycled) to 127.0.0.1:`port``path`. `driver`: "wrk", "asyncio" or "auto"."""
    if driver == "wrk" or (driver == "auto" and shutil.which("wrk")):
        return drive_wrk(port, path, bodies, connections, duration_s)
    return asyncio.run(drive_asyncio(port, path, bodies, connections, duration_s))


# -- wrk -------------------------------------------------------------------------------------------
WRK_SCRIPT = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies = {%s}
local i = 0
request = function()
  i = i %% #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
done = function(summary, latency, requests)
  io.write(string.format("CACHEGATE %%d %%d %%f %%f\\n", summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
"""


def lua_string(body: bytes) -> str:
    return '"' + "".join(f"\\{b:03d}" for b in body) + '"'


def drive_wrk(port: int, path: str, bodies: list[bytes], connections: int, duration_s: float) -> LoadResult:
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "post.lua"
        script.write_text(WRK_SCRIPT % ", ".join(lua_string(b) for b in bodies))
        out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{duration_s:g}s", "-s", str(script),
                              f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True).stdout
    requests, errors, p50, p99 = re.search(r"CACHEGATE (\d+) (\d+) ([\d.]+) ([\d.]+)", out).groups()
    seconds = float(re.search(r"requests in ([\d.]+)(m?s)", out).group(1))
    unit = re.search(r"requests in [\d.]+(m?s)", out).group(1)
    seconds = seconds / 1000 if unit == "ms" else seconds
    return LoadResult(int(requests) / seconds, float(p50), float(p99), int(requests), int(errors), "wrk")


# -- built-in asyncio client -------------------------------------------------------------------------
class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def post(self, request: bytes) -> int:
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        lower = head.lower()
        length = re.search(rb"content-length: *(\d+)", lower)
        if length:
            await self.reader.readexactly(int(length.group(1)))
        elif b"transfer-encoding: chunked" in lower:
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        return status


def request_bytes(path: str, body: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n").encode() + body


async def drive_asyncio(port: int, path: str, bodies: list[bytes], connections: int,
                        duration_s: float) -> LoadResult:
    requests = [request_bytes(path, b) for b in bodies]
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + duration_s

    async def one(k: int) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        conn, i = Connection(reader, writer), k
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            status = await conn.post(requests[i % len(requests)])
            latencies.append(time.perf_counter() - started)
            errors += status != 200
            i += 1
        writer.close()
    started = time.perf_counter()
    await asyncio.gather(*(one(k) for k in range(connections)))
    elapsed = time.perf_counter() - started
    ms = np.array(latencies) * 1000
    return LoadResult(len(ms) / elapsed, float(np.percentile(ms, 50)), float(np.percentile(ms, 99)),
                      len(ms), errors, "asyncio")


def chat_body(content: str, stream: bool = False, model: str = "bench") -> bytes:
    """A ~300-byte chat request, greedy, as the issue's measurement used."""
    return json.dumps({"model": model, "temperature": 0, "max_tokens": 64, "stream": stream,
                       "messages": [{"role": "system", "content": "You are a helpful assistant for an online "
                                     "store. Answer briefly."}, {"role": "user", "content": content}]}).encode()


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
