"""A throwaway ``redis-server`` on a free loopback port, for the tests (a module, not a conftest: tests
import it by name, and several conftest.py files share that module name)."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free too (so at most 55535)."""
    import random

    for _ in range(200):
        port = random.randint(20000, 55000)
        try:
            for p in (port, port + 10000):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", p))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair (port, port + 10000) for a cluster node")


class RedisServer:
    """A throwaway ``redis-server`` process (no persistence) on 127.0.0.1."""

    def __init__(self, binary: str, *extra_args: str, port: int | None = None) -> None:
        self.binary, self.extra_args = binary, extra_args
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", *extra_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server on port {self.port} did not answer PING within 10 s")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class RedisCluster:
    """Three throwaway ``redis-server --cluster-enabled yes`` masters on 127.0.0.1, joined with
    ``redis-cli --cluster create`` (no replicas, no persistence); ``url`` names one node, and a
    cluster client discovers the others from it."""

    def __init__(self, binary: str, cli: str, tmpdir: str, masters: int = 3, replicas: int = 0) -> None:
        self.nodes: list[RedisServer] = []
        self.cli = cli
        try:
            for i in range(masters * (1 + replicas)):
                self.nodes.append(RedisServer(
                    binary, "--cluster-enabled", "yes", "--cluster-config-file", f"{tmpdir}/nodes-{i}.conf",
                    "--cluster-node-timeout", "1000", "--dir", tmpdir, port=free_cluster_port(),
                ))
            addrs = [f"127.0.0.1:{n.port}" for n in self.nodes]
            subprocess.run([cli, "--cluster", "create", *addrs, "--cluster-replicas", str(replicas), "--cluster-yes"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
            deadline = time.monotonic() + 60
            while not all(self._ok(n.port, cli) for n in self.nodes) or (replicas and not self._replicated(replicas)):
                if time.monotonic() > deadline:
                    raise RuntimeError("the redis cluster did not reach cluster_state:ok within 60 s")
                time.sleep(0.1)
        except BaseException:
            self.stop()
            raise
        self.url = f"redis+cluster://127.0.0.1:{self.nodes[0].port}/0"

    def _replicated(self, replicas: int) -> bool:
        """Every master has its replicas attached and online (their first full sync done)."""
        for node in self.nodes:
            info = subprocess.run([self.cli, "-p", str(node.port), "info", "replication"], capture_output=True, text=True, timeout=5).stdout
            if "role:master" in info and (f"connected_slaves:{replicas}" not in info or info.count("state=online") < replicas):
                return False
        return True

    def node(self, port: int) -> RedisServer:
        return next(n for n in self.nodes if n.port == port)

    def restart(self, port: int) -> None:
        """Start a stopped node again on its port and config file: it rejoins as a replica of its successor."""
        i = next(i for i, n in enumerate(self.nodes) if n.port == port)
        old = self.nodes[i]
        old.stop()
        self.nodes[i] = RedisServer(old.binary, *old.extra_args, port=port)

    @staticmethod
    def _ok(port: int, cli: str) -> bool:
        out = subprocess.run([cli, "-p", str(port), "cluster", "info"], capture_output=True, text=True, timeout=5).stdout
        return "cluster_state:ok" in out

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
