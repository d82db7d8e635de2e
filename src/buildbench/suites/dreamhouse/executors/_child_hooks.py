"""Setup hooks that run inside the sandboxed child (never in the harness process).

Each hook returns the worker's globals with ``__run__(code, most) -> dict``, which runs the
agent script against the persistent scene and returns ``{"status", "error", "traceback",
"members", "cpu_s"}``, with ``"members": []`` and ``"over_limit": count`` instead of the records when
the scene holds more than ``most`` members (the executors call it as ``result = __run__(<code
literal>, <most>)``), ``__reset__()``, which brings back the factory scene without restarting the
process, and ``__save__(path)`` / ``__load__(path, most)``, which write the whole scene to a file in
the work folder and replace the scene by such a file (``__load__`` answers as ``__run__`` does, no
script run).
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from buildbench.suites.dreamhouse.executors._runner import read_frame, run_script, write_frame

# Exit status of the sandboxed child when Blender died under it: the scene is gone, so the
# child ends too and the worker reports a crash and starts fresh next time.
_BLENDER_DIED_EXIT = 70


def fast_setup(inputs: dict[str, Any]) -> dict[str, Any]:
    """Install the fake ``bpy``/``mathutils`` over a new factory scene."""
    from buildbench.suites.dreamhouse.executors.fakebpy import export_members, install

    collection = inputs.get("collection")
    scene = [install()]

    def run(code: str, most: int | None = None) -> dict[str, Any]:
        cpu0 = time.process_time()
        reply = run_script(code)
        reply.update(export_members(scene[0], collection, most))
        reply["cpu_s"] = time.process_time() - cpu0
        return reply

    def reset() -> None:
        scene[0] = install()

    # The fake scene is plain Python objects: pickled whole, as Blender saves its .blend. The file
    # is only ever read back in a sandboxed process like this one, never by the harness.
    def save(path: str) -> bool:
        with open(path, "xb") as f:
            pickle.dump(scene[0], f, protocol=pickle.HIGHEST_PROTOCOL)
        return True

    def load(path: str, most: int | None = None) -> dict[str, Any]:
        cpu0 = time.process_time()
        with open(path, "rb") as f:
            state = pickle.load(f)  # noqa: S301 - the agent's own scene, inside its sandbox
        scene[0] = install(state)
        return {"status": "ok", "error": None, "traceback": None, **export_members(scene[0], collection, most),
                "cpu_s": time.process_time() - cpu0}

    return {"__run__": run, "__reset__": reset, "__save__": save, "__load__": load}


def blender_setup(inputs: dict[str, Any]) -> dict[str, Any]:
    """Start real Blender on the driver script and wait until it has imported ``bpy``.

    ``inputs["command"]`` is the command line that runs the driver (the blender venv's
    Python, or ``blender --background --factory-startup --python DRIVER --``); the two
    pipe descriptors are appended. Blender inherits this process's stdout, stderr and
    rlimits, and dies with the sandbox; ``inputs["cpu_s"]`` is its CPU budget per call.
    """
    command = [str(c) for c in inputs["command"]]
    collection = inputs.get("collection")
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    process = subprocess.Popen(
        [*command, str(req_r), str(rep_w)],
        pass_fds=(req_r, rep_w),
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=os.getcwd(),
    )
    os.close(req_r)
    os.close(rep_w)
    hello = read_frame(rep_r)
    if not isinstance(hello, dict) or not hello.get("ready"):
        code = process.wait()
        raise RuntimeError(f"Blender did not start (exit status {code}); command: {' '.join(command)}")

    def run(code: str, most: int | None = None) -> dict[str, Any]:
        write_frame(
            req_w,
            {"op": "run", "code": code, "collection": collection, "most": most, "cpu_s": inputs.get("cpu_s")},
        )
        return _reply()

    def reset() -> None:
        write_frame(req_w, {"op": "reset"})
        _reply()

    def save(path: str) -> bool:
        write_frame(req_w, {"op": "save", "path": os.path.abspath(path)})
        reply = _reply()
        if reply.get("status") != "ok":
            raise RuntimeError(f"Blender did not save the scene: {reply.get('error')}")
        return True

    def load(path: str, most: int | None = None) -> dict[str, Any]:
        write_frame(req_w, {"op": "load", "path": os.path.abspath(path), "collection": collection, "most": most})
        return _reply()

    def _reply() -> dict[str, Any]:
        reply = read_frame(rep_r)
        if reply is None:
            status = process.wait()
            print(f"Blender exited with status {status} during the call; the scene is lost", file=sys.stderr)
            sys.stderr.flush()
            if status == -signal.SIGXCPU:
                # Blender ran out of its CPU budget: end this process the same way, so the
                # sandbox reports a timeout rather than a crash.
                signal.signal(signal.SIGXCPU, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGXCPU)
            os._exit(_BLENDER_DIED_EXIT)
        return reply

    return {"__run__": run, "__reset__": reset, "__save__": save, "__load__": load,
            "__blender_version__": hello.get("version")}


def driver_path() -> Path:
    """Path of the script that runs inside Blender."""
    return Path(__file__).with_name("_blender_driver.py")
