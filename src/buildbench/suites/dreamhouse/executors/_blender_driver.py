"""Runs inside real Blender (the ``bpy`` wheel's Python, or ``blender --background --python``).

Usage: ``python _blender_driver.py REQUEST_FD REPLY_FD`` (arguments after ``--`` when
started by a ``blender`` binary). It imports nothing from buildbench except
``_runner.py``, loaded by path, because Blender's Python has its own packages.

Protocol: it first sends ``{"ready": true, "version": "5.0.1"}``; a request
``{"op": "reset"}`` reloads the factory scene; for ``{"op": "run", "code": str,
"collection": str|None, "most": int|None}`` it runs the code as a fresh script against the
persistent scene, evaluates the depsgraph (as reopening a saved file would) and replies
``{"status", "error", "traceback", "members", "cpu_s"}`` with the members exported the way the
released harness's ``helpers/blender_export.py`` does, or, when there are more than ``most``,
``"members": []`` and ``"over_limit": count`` (the harness refuses them by their count; none is
exported). ``{"op": "save", "path": str}`` saves the scene as a ``.blend`` there (the released
harness's file after each script) and replies ``{"status", "error"}``; ``{"op": "load", "path":
str, "collection": str|None, "most": int|None}`` opens such a file in place of the scene and
replies as a run does.
"""

import ctypes
import importlib.util
import math
import os
import resource
import sys
import time

import bpy
from mathutils import Vector


def _load_runner():  # noqa: ANN202 - plain script, runs on Blender's Python
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_runner.py")
    spec = importlib.util.spec_from_file_location("_buildbench_runner", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pick(collection_name):  # noqa: ANN001, ANN202
    """Released rule for a named collection; otherwise every scene object in bpy.data order."""
    if collection_name is None:
        in_scene = set(bpy.context.scene.objects)
        chosen = [o for o in bpy.data.objects if o in in_scene]
    else:
        coll = bpy.data.collections.get(collection_name)
        if coll is None:
            best, best_count = None, 0
            for c in bpy.data.collections:
                n = sum(1 for o in c.objects if o.type == "MESH")
                if n > best_count:
                    best, best_count = c, n
            coll = best
        chosen = [] if coll is None else list(coll.objects)
    return [o for o in chosen if o.type == "MESH"]


def _export(collection_name, most):  # noqa: ANN001, ANN202
    bpy.context.view_layer.update()
    objects = _pick(collection_name)
    if most is not None and len(objects) > most:
        return {"members": [], "over_limit": len(objects)}
    members = []
    for obj in objects:
        corners = [list(obj.matrix_world @ Vector(c)) for c in obj.bound_box]
        members.append(
            {
                "name": obj.name,
                "location": [round(v, 6) for v in obj.location],
                "dimensions": [round(v, 6) for v in obj.dimensions],
                "bbox_world_corners": [[round(v, 6) for v in c] for c in corners],
                "matrix_world": [[round(v, 6) for v in row] for row in obj.matrix_world],
            }
        )
    return {"members": members}


def _flush_output():  # noqa: ANN202
    """Flush Python and C stdio so this call's output lands before the reply."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        ctypes.CDLL(None).fflush(None)
    except OSError:
        pass


def _arm_cpu_limit(cpu_s):  # noqa: ANN001, ANN202
    """Allow ``cpu_s`` more CPU seconds from now (RLIMIT_CPU counts the whole process life)."""
    if not cpu_s:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime) + int(cpu_s)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _save(path):  # noqa: ANN001, ANN202
    try:
        bpy.ops.wm.save_as_mainfile(filepath=path, copy=True, check_existing=False)
    except Exception as exc:  # noqa: BLE001 - reported: the env then keeps the members alone
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
    return {"status": "ok", "error": None}


def _open(path):  # noqa: ANN001, ANN202
    try:
        bpy.ops.wm.open_mainfile(filepath=path, load_ui=False)
    except Exception as exc:  # noqa: BLE001 - reported: the env then rebuilds the members alone
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}", "traceback": None}
    return {"status": "ok", "error": None, "traceback": None}


def main(argv):  # noqa: ANN001, ANN201
    """Serve requests until the request pipe closes."""
    args = argv[argv.index("--") + 1 :] if "--" in argv else argv[1:]
    request_fd, reply_fd = int(args[0]), int(args[1])
    runner = _load_runner()
    _flush_output()
    runner.write_frame(reply_fd, {"ready": True, "version": bpy.app.version_string})
    while True:
        request = runner.read_frame(request_fd)
        if request is None:
            return 0
        if request["op"] == "reset":
            bpy.ops.wm.read_factory_settings(use_empty=False)
            _flush_output()
            runner.write_frame(reply_fd, {"status": "ok"})
            continue
        if request["op"] == "save":
            reply = _save(request["path"])
            _flush_output()
            runner.write_frame(reply_fd, reply)
            continue
        _arm_cpu_limit(request.get("cpu_s"))
        cpu0 = time.process_time()
        if request["op"] == "load":
            reply = _open(request["path"])
        else:
            reply = runner.run_script(request["code"])
        try:
            reply.update(_export(request.get("collection"), request.get("most")))
        except Exception as exc:  # noqa: BLE001 - an export failure is reported, never fatal
            reply.update(status="error", error=f"export failed: {type(exc).__name__}: {exc}", members=[])
        reply["cpu_s"] = time.process_time() - cpu0
        _flush_output()
        runner.write_frame(reply_fd, reply)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
