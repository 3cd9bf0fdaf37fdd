"""A throwaway PostgreSQL cluster for the tests: ``initdb`` in a temp dir, ``postgres`` on a free loopback
port, a database ``lmtest`` owned by the superuser ``lm`` (password ``lm-secret``, scram-sha-256 over TCP).

PostgreSQL refuses to run as root: when the tests run as root the cluster runs as the ``postgres``
system user (created with ``useradd --system`` when missing) and the temp dir is chowned to it. As
root, each process also gets a private 256 MB ``/dev/shm`` (``unshare --mount``, when the kernel
allows it): a machine whose shared ``/dev/shm`` is full (other test runs) then cannot break initdb.
The binaries come from PATH or Debian's ``/usr/lib/postgresql/<version>/bin``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

from redis_server import free_port

USER, PASSWORD, DATABASE = "lm", "lm-secret", "lmtest"
SYSTEM_USER = "postgres"


def find_bin_dir() -> str | None:
    """The directory holding initdb and postgres, or None."""
    found = shutil.which("initdb")
    if found and os.path.exists(os.path.join(os.path.dirname(found), "postgres")):
        return os.path.dirname(found)
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(candidates[-1]) if candidates else None


def _private_shm_works() -> bool:
    if os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("setpriv")):
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs -o size=1m lm-pg-probe /dev/shm"], capture_output=True)
    return probe.returncode == 0


_PRIVATE_SHM = _private_shm_works()


def _run_as() -> pwd.struct_passwd | None:
    """The unprivileged account to run the cluster as (None: we are not root, run as ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER], check=True)
        return pwd.getpwnam(SYSTEM_USER)


class PostgresServer:
    """One cluster, started at construction; ``stop()`` / ``start()`` restart it on the same port and data."""

    def __init__(self, bin_dir: str) -> None:
        self.bin_dir = bin_dir
        self.account = _run_as()
        self.root = tempfile.mkdtemp(prefix="lm-pg-")
        self.data = os.path.join(self.root, "data")
        self.port = free_port()
        self.url = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{DATABASE}"
        self.proc: subprocess.Popen[bytes] | None = None
        pwfile = os.path.join(self.root, "pw")
        with open(pwfile, "w") as f:
            f.write(PASSWORD + "\n")
        if self.account is not None:
            for path in (self.root, pwfile):
                os.chown(path, self.account.pw_uid, self.account.pw_gid)
        try:
            self._run([os.path.join(bin_dir, "initdb"), "-D", self.data, "-U", USER, f"--pwfile={pwfile}", "-E", "UTF8",
                       "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync"])
            self.start()
            import psycopg

            with psycopg.connect(self.url.replace(f"/{DATABASE}", "/postgres"), autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {DATABASE}")
        except BaseException:
            self.destroy()
            raise

    def _command(self, cmd: list[str]) -> tuple[list[str], dict[str, object]]:
        """``cmd`` as the unprivileged account (and in a private /dev/shm when possible), Popen kwargs."""
        if self.account is None:
            return cmd, {}
        env = {**os.environ, "HOME": self.root}
        if _PRIVATE_SHM:
            script = ('mount -t tmpfs -o size=256m,mode=1777 lm-pg-shm /dev/shm && exec setpriv '
                      f'--reuid={self.account.pw_uid} --regid={self.account.pw_gid} --clear-groups -- "$@"')
            return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *cmd], {"env": env}
        return cmd, {"user": self.account.pw_uid, "group": self.account.pw_gid, "extra_groups": [], "env": env}

    def _run(self, cmd: list[str]) -> None:
        cmd, kwargs = self._command(cmd)
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=self.root, **kwargs)  # type: ignore[call-overload]
        if done.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        """Start ``postgres`` and wait until it accepts logins (10 s)."""
        import psycopg

        cmd, kwargs = self._command(
            [os.path.join(self.bin_dir, "postgres"), "-D", self.data, "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
             "-c", f"unix_socket_directories={self.root}", "-c", "fsync=off", "-c", "full_page_writes=off",
             "-c", "max_connections=200", "-c", "shared_buffers=32MB"])
        with open(os.path.join(self.root, "log"), "ab") as log:  # unshare, sh and setpriv exec: one pid, postgres's
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, cwd=self.root, **kwargs)  # type: ignore[call-overload]
        deadline = time.monotonic() + 20
        while True:
            try:
                psycopg.connect(self.url.replace(f"/{DATABASE}", "/postgres"), connect_timeout=1).close()
                return
            except psycopg.OperationalError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                with open(os.path.join(self.root, "log")) as f:
                    log = f.read()[-2000:]
                raise RuntimeError(f"postgres on port {self.port} did not accept connections within 20 s:\n{log}")
            time.sleep(0.1)

    def stop(self, *, immediate: bool = False) -> None:
        """Fast shutdown (SIGINT), or ``immediate`` (SIGQUIT: no checkpoint, crash recovery at the next start)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT if immediate else signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)
