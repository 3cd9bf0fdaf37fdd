"""A TCP proxy that delays every chunk by half a round trip each way: a server on loopback made to
answer like one across a network (``benchmarks/record_stores.py --rtt-ms``). Runs in its own process.

    python benchmarks/latency_proxy.py LISTEN_PORT UPSTREAM_HOST UPSTREAM_PORT RTT_MS

Order is kept per direction (each chunk leaves ``RTT_MS / 2`` after it arrived); no bandwidth limit.
"""

from __future__ import annotations

import asyncio
import sys
import time


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def send() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(send())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((time.monotonic() + delay, data))
            if not data:
                break
    finally:
        queue.put_nowait((0.0, b""))
        await sender


async def main(listen: int, host: str, port: int, rtt_ms: float) -> None:
    delay = rtt_ms / 2000

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(host, port)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(pump(client_r, up_w, delay), pump(up_r, client_w, delay), return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
