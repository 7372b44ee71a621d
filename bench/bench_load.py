"""Load benchmark over loopback: 32 concurrent keep-alive clients against a live uvicorn.

Targets (issue 8, 2-core machine): zero errors, POST /api/v1/tco p99 < 50 ms, and at least half
the requests/s of the trivial endpoint (/healthz) of the same app.

    .venv/bin/python -m bench.bench_load                 # full run: 30 s per endpoint
    .venv/bin/python -m bench.bench_load --duration 5    # quick run (what `make bench` does)
    DATABASE_URL=postgresql+psycopg://... .venv/bin/python -m bench.bench_load --workers 2

The server runs on 127.0.0.1 with a free port, over a temporary SQLite database unless
DATABASE_URL is set; the clients are a minimal asyncio HTTP/1.1 client in this process, so the
figures include the client's own CPU use on the same machine (it shares the 2 cores)."""

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TCO_BODY = {"nodes": 8, "months": 36, "utilization": 0.8, "gpu_model": "H100",
            "as_of": "2026-11-30"}


@dataclass
class Result:
    label: str
    seconds: float
    latencies_s: list[float] = field(default_factory=list)
    errors: int = 0

    @property
    def rps(self) -> float:
        return len(self.latencies_s) / self.seconds

    def pct_ms(self, q: float) -> float:
        xs = sorted(self.latencies_s)
        return xs[min(len(xs) - 1, int(q * len(xs)))] * 1e3 if xs else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def request_bytes(method: str, path: str, port: int, body: bytes = b"") -> bytes:
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = next(int(v) for k, _, v in (ln.partition(":") for ln in lines[1:])
                  if k.lower() == "content-length")
    await reader.readexactly(length)
    return status


async def client(port: int, raw: bytes, until: float, result: Result) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            writer.write(raw)
            status = await read_response(reader)
            if status != 200:
                result.errors += 1
            else:
                result.latencies_s.append(time.perf_counter() - start)
    finally:
        writer.close()


async def run(label: str, port: int, raw: bytes, clients: int, seconds: float) -> Result:
    result = Result(label, seconds)
    await asyncio.gather(*(client(port, raw, time.perf_counter() + 0.5, Result("warm", 1))
                           for _ in range(clients)))
    until = time.perf_counter() + seconds
    await asyncio.gather(*(client(port, raw, until, result) for _ in range(clients)))
    return result


def start_server(database_url: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DATABASE_URL": database_url}
    bin_dir = Path(sys.executable).parent
    for step in (["db", "upgrade"], ["prices", "load"]):  # once, before the workers start
        subprocess.run([str(bin_dir / "clustertco"), *step], env=env, check=True,
                       cwd=ROOT, capture_output=True)
    env.update(MIGRATE_ON_START="false", LOAD_SNAPSHOT_ON_START="false",
               SEED_EXAMPLES_ON_START="false")
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1", "--port",
         str(port), "--workers", str(workers), "--log-level", "warning", "--no-access-log"],
        env=env, cwd=ROOT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError("uvicorn did not start")


def share_page(port: int) -> str:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/scenarios", method="POST",
        data=json.dumps({"name": "load bench", "inputs": TCO_BODY}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return str(json.load(r)["links"]["page"])


def bench(database_url: str, seconds: float, clients: int, workers: int) -> list[Result]:
    port = free_port()
    server = start_server(database_url, port, workers)
    try:
        page = share_page(port)
        targets = [
            ("GET /healthz (baseline)", request_bytes("GET", "/healthz", port)),
            ("POST /api/v1/tco", request_bytes("POST", "/api/v1/tco", port,
                                               json.dumps(TCO_BODY).encode())),
            (f"GET {page} (share page)", request_bytes("GET", page, port)),
        ]
        return [asyncio.run(run(label, port, raw, clients, seconds)) for label, raw in targets]
    finally:
        server.terminate()
        server.wait(timeout=30)


def report(results: list[Result], clients: int, workers: int) -> None:
    base = results[0].rps
    print(f"{clients} clients, {workers} uvicorn worker(s), {results[0].seconds:.0f} s each")
    for r in results:
        print(f"{r.label}: {r.rps:,.0f} req/s, p50 {r.pct_ms(0.50):.1f} ms, "
              f"p99 {r.pct_ms(0.99):.1f} ms, errors {r.errors}, {r.rps / base:.2f}x baseline")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=5.0,
                        help="seconds per endpoint (the issue's full run: 30)")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        url = os.environ.get("DATABASE_URL") or f"sqlite:///{Path(tmp) / 'load.db'}"
        results = bench(url, args.duration, args.clients, args.workers)
    report(results, args.clients, args.workers)


if __name__ == "__main__":
    main(sys.argv[1:])
