"""Building the command line and environment that start a sandboxed child.

Two backends:

- ``bwrap``: bubblewrap namespaces. No network, private PID/IPC/UTS namespaces, and a
  filesystem built from an empty root: the system folders (``/usr``, ``/etc``, the ``/lib``
  and ``/bin`` links), the interpreter with its libraries, the caller's ``readable`` paths and
  of buildbench only the modules the child imports (`package_view`), all read-only, one
  writable work folder, private ``/tmp`` and ``/dev/shm``. Nothing else of
  the host exists inside: no home folders, checkouts, run folders or mounted data. When the parent is root, bwrap runs privileged and the child drops
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
import logging
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import buildbench
from buildbench.sandbox._memory import tmpfs_bytes as _tmpfs_size
from buildbench.sandbox._seccomp import program as seccomp_program
from buildbench.sandbox._tree import walk
from buildbench.sandbox._types import Limits

Backend = Literal["bwrap", "process"]
_log = logging.getLogger(__name__)

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
        pass_fds: Descriptors the command reads at start (bwrap's seccomp filter); the caller
            passes them to the child and closes them once it started.
    """

    argv: list[str]
    env: dict[str, str]
    cwd: str
    sandbox_uid: int | None
    pass_fds: tuple[int, ...] = ()


def new_sandbox_uid() -> int:
    """A random uid from a range not used by real accounts."""
    return _UID_BASE + secrets.randbelow(_UID_SPAN)


def python_path_entries() -> list[str]:
    """Folders the child needs on PYTHONPATH besides the interpreter's own: the one holding
    ``buildbench`` (a source tree under an editable install). Nothing else of the caller's
    ``sys.path`` (the current folder, a checkout, a test folder) is passed on or shown."""
    return [str(Path(buildbench.__file__).resolve().parent.parent)]


#: The modules of buildbench every sandbox sees: what its supervisor and runner import.
SANDBOX_MODULES = ("buildbench.sandbox",)


def package_view(modules: tuple[str, ...] | list[str]) -> list[str]:
    """Host paths that make exactly ``modules`` of buildbench (and `SANDBOX_MODULES`) importable.

    A package is shown with everything in its folder, a module as its one file, and every
    package above either by its ``__init__.py`` alone; ``"buildbench"`` shows all of it, for a
    sandbox that runs no agent code. Under bwrap nothing else of buildbench exists: agent code
    cannot run the task generators, the verifiers or anything else that holds or makes ground truth.

    Raises:
        ValueError: A name outside buildbench, or one that names no module or package.
    """
    root = Path(buildbench.__file__).resolve().parent
    shown = {str(root / "__init__.py")}
    for name in {*SANDBOX_MODULES, *modules}:
        if name == "buildbench":  # all of it: for a sandbox that runs no agent code
            return [str(root)]
        top, _, rest = name.partition(".")
        if top != "buildbench" or not rest:
            raise ValueError(f"modules: {name!r} is not a module of buildbench (buildbench.<package>...)")
        parts = rest.split(".")
        target = root.joinpath(*parts)
        if target.is_dir() and (target / "__init__.py").is_file():
            shown.add(str(target))
        elif target.with_suffix(".py").is_file():
            shown.add(str(target.with_suffix(".py")))
        else:
            raise ValueError(f"modules: {name!r} is not a module or package of buildbench (no {target}[.py])")
        shown.update(str(root.joinpath(*parts[:depth], "__init__.py")) for depth in range(1, len(parts)))
    return sorted(shown)


def interpreter() -> str:
    """This interpreter as the sandbox can run it: its folder with links resolved (the sandbox
    mounts resolved paths, so a virtualenv reached through a linked folder is found there) and
    its own name kept (resolving the name too would leave the virtualenv for the base Python)."""
    executable = Path(sys.executable)
    return str(executable.parent.resolve() / executable.name)


def child_environment(workdir: str, pythonpath: list[str]) -> dict[str, str]:
    """The whole environment of the child: an allow-list, never copied from the parent.

    Nothing of the parent's environment (API keys, tokens, cloud credentials) is
    passed on; only these fixed values.
    """
    venv_bin = str(Path(interpreter()).parent)
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


def _child_command(request_fd: int, reply_fd: int, parent_pid: int | None = None) -> list[str]:
    """The supervisor's command line; ``parent_pid`` (a plain process) makes it die with this process."""
    command = [interpreter(), "-s", "-B", "-m", "buildbench.sandbox._child", str(request_fd), str(reply_fd)]
    return command if parent_pid is None else [*command, str(parent_pid)]


def _is_under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


#: System folders every sandbox sees read-only (a link, as on merged-/usr systems, is
#: recreated as the same link). Everything else must be named to be visible.
SYSTEM_PATHS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


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


def _system_mounts() -> list[str]:
    args: list[str] = []
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def _mount_arguments(readable: list[str], workdir: str, tmpfs_bytes: int) -> list[str]:
    """The sandbox's filesystem below the system folders: private ``/tmp``, each readable
    path bound read-only, the work folder read-write.

    Folders between ``/`` and a bound path are created world-traversable on the sandbox's
    own root (bwrap would make them 0700, which the sandbox uid could not pass), so the path
    is reachable while its siblings on the host do not exist inside. Each tmpfs holds at most
    ``tmpfs_bytes`` where bwrap can cap it: tmpfs pages do not count against RLIMIT_AS.
    """
    system = [p for p in SYSTEM_PATHS if os.path.exists(p)]
    bound = sorted({p for p in readable if os.path.exists(p) and not _is_under(p, system)})
    # A path inside another bound path is already visible.
    bound = [p for p in bound if not any(p != q and _is_under(p, [q]) for q in bound)]
    args = _tmpfs("1777", tmpfs_bytes, "/tmp")
    folders = {str(parent) for path in [*bound, workdir] for parent in Path(path).parents if str(parent) != "/"}
    for folder in sorted(folders, key=lambda f: (f.count("/"), f)):
        if folder != "/tmp" and not _is_under(folder, bound):
            args += ["--perms", "0755", "--dir", folder]
    for path in bound:
        args += ["--ro-bind", path, path]
    return args + ["--bind", workdir, workdir]


def _package_arguments(package: list[str], bound: list[str]) -> list[str]:
    """Mounts that leave only ``package`` (`package_view`) of buildbench where a bound folder
    (an installation holding a built wheel, a source tree named readable) would show all of
    it: an empty read-only tmpfs over the package, the shown paths bound into it."""
    root = str(Path(buildbench.__file__).resolve().parent)
    if not _is_under(root, bound):
        return []
    args = ["--perms", "0755", "--tmpfs", root]
    folders = {str(parent) for path in package for parent in Path(path).parents if _is_under(str(parent), [root])}
    for folder in sorted(folders - {root}, key=lambda f: (f.count("/"), f)):
        args += ["--perms", "0755", "--dir", folder]
    for path in package:
        args += ["--ro-bind", path, path]
    return [*args, "--remount-ro", root]


def _bwrap_arguments(workdir: str, limits: Limits, env: dict[str, str], uid: int | None,
                     readable: list[str], package: list[str]) -> list[str]:
    """bwrap options: namespaces, mounts, environment (everything before the command).

    ``readable`` is every host path shown read-only besides the interpreter's installation,
    ``package`` the paths of buildbench shown (see `package_view`): nothing else of it.
    """
    # Both tmpfs full fit the memory budget, which counts what they hold (`_memory`).
    tmpfs_bytes = _tmpfs_size(limits.memory_mb)
    args = ["bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--die-with-parent", "--new-session", *_system_mounts(), "--dev", "/dev", "--proc", "/proc"]
    args += _tmpfs("1777", tmpfs_bytes, "/dev/shm")
    bound = sorted({str(Path(p).resolve()) for p in [sys.prefix, sys.base_prefix, *readable]})
    overlay = _package_arguments(package, bound)
    args += _mount_arguments(bound if overlay else sorted({*bound, *package}), workdir, tmpfs_bytes) + overlay
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


def plan_launch(backend: Backend, workdir: str, limits: Limits, request_fd: int, reply_fd: int,
                readable: tuple[str, ...] = (), python_path: tuple[str, ...] = (),
                modules: tuple[str, ...] = ()) -> LaunchPlan:
    """Build the command that starts a child for ``backend`` in ``workdir``.

    Args:
        backend: ``"bwrap"`` or ``"process"``.
        workdir: Absolute path of the work folder (the only writable place).
        limits: The limits (the private ``/tmp`` and ``/dev/shm`` hold ``memory_mb / 2`` each).
        request_fd: The pipe end the child reads requests from.
        reply_fd: The pipe end the child writes replies to.
        readable: Host paths the code may read besides the interpreter (task inputs, a
            second interpreter it starts); bwrap only.
        python_path: Folders added to the child's PYTHONPATH (and made readable), for setup
            hooks that live outside installed packages.
        modules: Modules of buildbench the child may import besides `SANDBOX_MODULES` (see
            `package_view`); under bwrap the rest of buildbench does not exist.

    Raises:
        SandboxUnavailable: The bwrap backend cannot be set up (no setpriv as root).
        ValueError: ``modules`` names something that is not a module of buildbench.
    """
    env = child_environment(workdir, [*python_path_entries(), *python_path])
    command = _child_command(request_fd, reply_fd)
    if backend == "process":
        return LaunchPlan(argv=_child_command(request_fd, reply_fd, os.getpid()), env=env, cwd=workdir,
                          sandbox_uid=None)
    shown, package = [*python_path, *readable], package_view(modules)
    uid: int | None = None
    setpriv: list[str] = []
    if os.geteuid() == 0:
        found = shutil.which("setpriv")
        if found is None:
            raise SandboxUnavailable(
                "running as root, the bwrap backend needs setpriv (util-linux) to drop privileges"
            )
        uid = new_sandbox_uid()
        setpriv = [found, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all"]
    argv = _bwrap_arguments(workdir, limits, env, uid, shown, package)
    filter_fds = _seccomp_fd()
    if filter_fds:
        argv += ["--seccomp", str(filter_fds[0])]
    return LaunchPlan(argv=[*argv, "--", *setpriv, *command], env=env, cwd=workdir, sandbox_uid=uid,
                      pass_fds=filter_fds)


def _seccomp_fd() -> tuple[int, ...]:
    """A pipe holding the seccomp filter (see `_seccomp`), read end only; empty where there is none."""
    filter_program = seccomp_program()
    if filter_program is None:
        return ()
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, filter_program)  # a few hundred bytes: a pipe holds 64 KiB
    except OSError:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return (read_end,)


def hand_over(folder: str, uid: int, gid: int) -> None:
    """Give ``folder`` and everything in it to ``uid:gid`` without following symlinks.

    Used to lend the work folder to the sandbox uid and to take it back afterwards;
    symlinks the sandbox made are changed themselves, never their targets. The walk reaches
    any depth (see `_tree.walk`); what it cannot reach (a deep folder moved under it) keeps
    its owner, which only the agent's own next call can notice, so it is logged, not raised.
    """
    os.lchown(folder, uid, gid)
    try:
        for dir_fd, name, _ in walk(folder):
            try:
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
    except OSError as exc:
        _log.warning("sandbox: part of the work folder %s was not handed to uid %d: %s", folder, uid, exc)
