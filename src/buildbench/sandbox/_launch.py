"""Building the command line and environment that start a sandboxed child.

Two backends:

- ``bwrap``: bubblewrap namespaces. No network, private PID/IPC/UTS namespaces,
  the host filesystem read-only, one writable work folder, private ``/tmp``,
  ``/dev/shm`` and ``/run``. When the parent is root, bwrap runs privileged and the child drops
  to a fresh unprivileged uid with ``setpriv`` (no capabilities, no-new-privs), so
  RLIMIT_NPROC really limits its processes (the kernel exempts root from it) and
  file permissions protect root's files. Without root, bwrap makes a user
  namespace and RLIMIT_NPROC counts the processes inside it.
- ``process``: a plain subprocess in its own session, cwd = work folder, with the
  same scrubbed environment and rlimits (no pid limit, no filesystem or network
  isolation).
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import buildbench
from buildbench.sandbox._types import Limits

Backend = Literal["bwrap", "process"]

# Sandbox uids are drawn from a range no distribution assigns, one per process, so
# that RLIMIT_NPROC (which counts per uid) counts one sandbox's processes only.
_UID_BASE = 3_000_000
_UID_SPAN = 1_000_000


class SandboxUnavailable(RuntimeError):
    """The requested isolation backend does not work on this machine."""


@dataclass(frozen=True)
class LaunchPlan:
    """How to start one child.

    Attributes:
        argv: The command line for ``subprocess.Popen``.
        env: The complete environment the child sees.
        cwd: The working directory to start in (the work folder).
        sandbox_uid: The uid the work folder must belong to while the child runs,
            or None when the child runs as the parent's own user.
    """

    argv: list[str]
    env: dict[str, str]
    cwd: str
    sandbox_uid: int | None


def new_sandbox_uid() -> int:
    """A random uid from a range not used by real accounts."""
    return _UID_BASE + secrets.randbelow(_UID_SPAN)


def python_path_entries() -> list[str]:
    """Directories the child needs on PYTHONPATH to import buildbench and the caller's modules.

    The interpreter finds its own standard library and site-packages; everything else
    on the parent's ``sys.path`` (the source tree, a test folder) is passed on.
    """
    package_root = str(Path(buildbench.__file__).resolve().parent.parent)
    prefixes = {str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve())}
    entries = [package_root]
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        resolved = str(Path(entry).resolve())
        if resolved not in entries and not any(
            resolved == p or resolved.startswith(p + os.sep) for p in prefixes
        ):
            entries.append(resolved)
    return entries


def child_environment(workdir: str, pythonpath: list[str]) -> dict[str, str]:
    """The whole environment of the child: an allow-list, never copied from the parent.

    Nothing of the parent's environment (API keys, tokens, cloud credentials) is
    passed on; only these fixed values.
    """
    venv_bin = str(Path(sys.executable).parent)
    return {
        "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "PYTHONPATH": os.pathsep.join(pythonpath),
        "PYTHONDONTWRITEBYTECODE": "1",
        # glibc reserves 64 MiB of address space per thread arena; with RLIMIT_AS in
        # force a few threads would eat the budget without using it.
        "MALLOC_ARENA_MAX": "2",
    }


def _child_command(request_fd: int, reply_fd: int) -> list[str]:
    return [sys.executable, "-s", "-B", "-m", "buildbench.sandbox._child", str(request_fd), str(reply_fd)]


def _is_under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def hidden_parents(paths: list[str], already_private: list[str], uid: int | None) -> list[str]:
    """Folders to cover with a fresh tmpfs so that ``uid`` can reach ``paths`` at all.

    An unprivileged uid cannot traverse a folder without the "others" execute bit
    (``/root`` is 0700, and pyenv installs Python under it). Covering the first such
    ancestor with a tmpfs and bind-mounting the needed paths back into it gives the
    sandbox exactly those paths, and hides the rest of that folder (home-directory
    secrets) as a bonus.
    """
    if uid is None:
        return []
    covers: list[str] = []
    for path in paths:
        current = "/"
        for part in Path(path).parts[1:-1]:
            current = os.path.join(current, part)
            if _is_under(current, already_private + covers):
                break
            if not os.stat(current).st_mode & stat.S_IXOTH:
                covers.append(current)
                break
    return sorted(set(covers), key=lambda p: (p.count("/"), p))


def _folders_between(path: str, private_roots: list[str]) -> list[str]:
    """The folders bwrap must create between the private tmpfs holding ``path`` and ``path``."""
    roots = [root for root in private_roots if _is_under(path, [root]) and root != path]
    if not roots:
        return []
    current = max(roots, key=len)
    folders = []
    for part in Path(path).relative_to(current).parts[:-1]:
        current = os.path.join(current, part)
        folders.append(current)
    return folders


@functools.cache
def _bwrap_has_size_option() -> bool:
    """Whether this bwrap knows ``--size`` (added in bubblewrap 0.7; Ubuntu 22.04 ships 0.6)."""
    try:
        usage = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in usage.stdout + usage.stderr


def _tmpfs(mode: str, size_bytes: int, target: str) -> list[str]:
    """Options mounting a private tmpfs, capped in size where bwrap supports it."""
    size = ["--size", str(size_bytes)] if _bwrap_has_size_option() else []
    return ["--perms", mode, *size, "--tmpfs", target]


def _mount_arguments(readable: list[str], workdir: str, uid: int | None, tmpfs_bytes: int) -> list[str]:
    """Private tmpfs folders, then the read-only paths and the work folder bound back in.

    ``/tmp`` and ``/run`` (host sockets, runtime state) are always private; folders
    the sandbox uid could not traverse are covered too (see `hidden_parents`). A
    needed path inside any of them (a venv under ``/tmp``, Python under ``/root``)
    is bound back read-only. Each tmpfs holds at most ``tmpfs_bytes`` (where bwrap
    can cap it): tmpfs pages do not count against RLIMIT_AS, so an unbounded one could
    fill the host's memory.
    """
    always = ["/tmp", "/run"]
    covers = hidden_parents([*readable, workdir], always, uid)
    private = always + covers
    args: list[str] = []
    for folder in always:
        args += _tmpfs("1777" if folder == "/tmp" else "0755", tmpfs_bytes, folder)
    for cover in covers:
        args += _tmpfs("0755", tmpfs_bytes, cover)
    # A private folder itself (sys.path holding "/tmp") is never bound: that would
    # replace the private copy with the host's.
    bound = [path for path in readable if _is_under(path, private) and path not in private]
    # bwrap would create the missing parents of a bind target with mode 0700, which
    # the sandbox uid could not traverse: create them world-traversable first.
    folders = {f for path in [*bound, workdir] for f in _folders_between(path, private)}
    for folder in sorted(folders, key=lambda f: (f.count("/"), f)):
        args += ["--perms", "0755", "--dir", folder]
    for path in bound:
        args += ["--ro-bind", path, path]
    return args + ["--bind", workdir, workdir]


def _bwrap_arguments(workdir: str, limits: Limits, env: dict[str, str], uid: int | None) -> list[str]:
    """bwrap options: namespaces, mounts, environment (everything before the command)."""
    tmpfs_bytes = limits.memory_mb * 1024 * 1024
    args = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    args += _tmpfs("1777", tmpfs_bytes, "/dev/shm")
    readable = sorted(
        {str(Path(p).resolve()) for p in [sys.prefix, sys.base_prefix, *env["PYTHONPATH"].split(os.pathsep)]}
    )
    args += _mount_arguments(readable, workdir, uid, tmpfs_bytes)
    args += ["--chdir", workdir, "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    if uid is None:
        args.append("--unshare-user")
    else:
        # Only setpriv needs these, to switch to the sandbox uid; it drops them with
        # the switch, and bwrap's no-new-privs keeps them from coming back.
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return args


def plan_launch(backend: Backend, workdir: str, limits: Limits, request_fd: int, reply_fd: int) -> LaunchPlan:
    """Build the command that starts a child for ``backend`` in ``workdir``.

    Args:
        backend: ``"bwrap"`` or ``"process"``.
        workdir: Absolute path of the work folder (the only writable place).
        limits: The limits (the private ``/tmp`` and ``/dev/shm`` hold ``memory_mb`` each).
        request_fd: The pipe end the child reads requests from.
        reply_fd: The pipe end the child writes replies to.

    Raises:
        SandboxUnavailable: The bwrap backend cannot be set up (no setpriv as root).
    """
    env = child_environment(workdir, python_path_entries())
    command = _child_command(request_fd, reply_fd)
    if backend == "process":
        return LaunchPlan(argv=command, env=env, cwd=workdir, sandbox_uid=None)
    if os.geteuid() != 0:
        argv = [*_bwrap_arguments(workdir, limits, env, None), "--", *command]
        return LaunchPlan(argv=argv, env=env, cwd=workdir, sandbox_uid=None)
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise SandboxUnavailable(
            "running as root, the bwrap backend needs setpriv (util-linux) to drop privileges"
        )
    uid = new_sandbox_uid()
    argv = [*_bwrap_arguments(workdir, limits, env, uid), "--"]
    argv += [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
    return LaunchPlan(argv=argv + command, env=env, cwd=workdir, sandbox_uid=uid)


def hand_over(folder: str, uid: int, gid: int) -> None:
    """Give ``folder`` and everything in it to ``uid:gid`` without following symlinks.

    Used to lend the work folder to the sandbox uid and to take it back afterwards;
    symlinks the sandbox made are changed themselves, never their targets.
    """
    os.lchown(folder, uid, gid)
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            try:
                os.lchown(os.path.join(root, name), uid, gid)
            except FileNotFoundError:
                continue
