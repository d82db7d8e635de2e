"""Envelope semantics of buildbench.sandbox, on every backend that works here."""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from buildbench.sandbox import (
    Envelope,
    Limits,
    SandboxUnavailable,
    SetupResult,
    Worker,
    _launch,
    _worker,
    run_code,
    sandbox_available,
)

BACKENDS = [
    "process",
    pytest.param("bwrap", marks=pytest.mark.skipif(not sandbox_available(), reason="bwrap unusable")),
]
FAST = Limits(wall_s=5, cpu_s=5, memory_mb=512, max_processes=32, output_bytes=100_000)


def make_namespace(inputs: dict[str, Any]) -> dict[str, Any]:
    """Setup hook used by the tests: a namespace with a value from the inputs."""
    return {"base": inputs["base"], "log": []}


def make_collecting_namespace(inputs: dict[str, Any]) -> SetupResult:
    """Setup hook whose collect function reports the namespace's ``log``."""
    return SetupResult(globals={"log": []}, collect=lambda namespace: {"log": namespace["log"]})


def failing_setup(inputs: dict[str, Any]) -> dict[str, Any]:
    """Setup hook that raises, to test how setup failures are reported."""
    raise RuntimeError(f"cannot open {inputs['path']}")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


#: The folder holding the ``tests`` package: pytest imports this module as
#: ``tests.test_sandbox`` without putting it on sys.path, and the child never inherits the
#: caller's sys.path, so hooks defined here are found only through ``python_path``.
TESTS_ROOT = (str(Path(__file__).resolve().parents[len(__name__.split(".")) - 1]),)


def test_result_round_trip_and_stdout(backend: str) -> None:
    envelope = run_code(
        "print('hello'); import sys; print('warn', file=sys.stderr)\nresult = {'a': [1, 2.5, None], 'b': 'x'}",
        limits=FAST,
        isolation=backend,
    )
    assert envelope.status == "ok", envelope
    assert envelope.result == {"a": [1, 2.5, None], "b": "x"}
    assert envelope.stdout == "hello\n"
    assert envelope.stderr == "warn\n"
    assert envelope.isolation == backend
    assert json.loads(json.dumps(envelope.to_dict()))["result"] == envelope.result


def test_raised_exception_has_user_traceback_only(backend: str) -> None:
    code = "def f(x):\n    raise ValueError(f'bad {x}')\n\nf(3)\n"
    envelope = run_code(code, limits=FAST, isolation=backend)
    assert envelope.status == "error"
    assert envelope.error == "ValueError: bad 3"
    assert envelope.traceback is not None
    assert 'File "<code>", line 4' in envelope.traceback
    assert 'File "<code>", line 2, in f' in envelope.traceback
    assert "raise ValueError(f'bad {x}')" in envelope.traceback
    assert "_child.py" not in envelope.traceback


def test_syntax_error_gives_the_line(backend: str) -> None:
    envelope = run_code("x = 1\ny = (2 +\n", limits=FAST, isolation=backend)
    assert envelope.status == "error"
    assert envelope.error is not None and envelope.error.startswith("SyntaxError:")
    assert "line 2" in envelope.error


def test_infinite_loop_times_out(backend: str) -> None:
    envelope = run_code("while True:\n    pass\n", limits=Limits(wall_s=1, cpu_s=30), isolation=backend)
    assert envelope.status == "timeout"
    assert "wall-clock" in (envelope.error or "")
    assert envelope.duration_s < 4


def test_cpu_limit_is_a_timeout(backend: str) -> None:
    envelope = run_code("while True:\n    pass\n", limits=Limits(wall_s=20, cpu_s=1), isolation=backend)
    assert envelope.status == "timeout"
    assert "CPU time" in (envelope.error or "")
    assert envelope.duration_s < 10


def test_memory_bomb_is_memory(backend: str) -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 1024 * 1024))\n"
    envelope = run_code(code, limits=Limits(wall_s=10, memory_mb=256), isolation=backend)
    assert envelope.status == "memory"
    assert envelope.error is not None and envelope.error.startswith("MemoryError")


def test_segfault_is_a_crash(backend: str) -> None:
    envelope = run_code("import ctypes\nctypes.string_at(0)\n", limits=FAST, isolation=backend)
    assert envelope.status == "crash"
    assert "SIGSEGV" in (envelope.error or "")
    assert envelope.exit_code == -11


def test_foreign_sigkill_is_killed_and_exit_is_crash(backend: str) -> None:
    killed = run_code(
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", limits=FAST, isolation=backend
    )
    assert killed.status == "killed"
    assert "SIGKILL" in (killed.error or "")
    exited = run_code("print('bye', flush=True)\nimport os\nos._exit(3)\n", limits=FAST, isolation=backend)
    assert exited.status == "crash"
    assert exited.exit_code == 3
    assert exited.stdout == "bye\n"


def test_system_exit(backend: str) -> None:
    assert run_code("import sys\nresult = 1\nsys.exit(0)", limits=FAST, isolation=backend).result == 1
    failed = run_code("raise SystemExit(2)", limits=FAST, isolation=backend)
    assert failed.status == "error"
    assert failed.error == "SystemExit: 2"


def test_non_serialisable_result_is_a_clear_error(backend: str) -> None:
    envelope = run_code("result = {1, 2}", limits=FAST, isolation=backend)
    assert envelope.status == "error"
    assert "not JSON-serialisable" in (envelope.error or "")


def test_environment_is_scrubbed(backend: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    code = "import os\nresult = dict(os.environ)"
    envelope = run_code(code, limits=FAST, isolation=backend, workdir=tmp_path)
    assert envelope.status == "ok"
    environment = envelope.result
    assert "OPENAI_API_KEY" not in environment
    assert not [name for name in environment if "KEY" in name or "SECRET" in name or "TOKEN" in name]
    assert "sk-test-secret" not in json.dumps(environment)
    assert environment["HOME"] == str(tmp_path.resolve())


def test_huge_stdout_is_capped_and_prompt(backend: str) -> None:
    code = "import sys\nline = 'x' * 999 + '\\n'\nfor _ in range(100_000):\n    sys.stdout.write(line)\nresult = 'done'\n"
    limits = Limits(wall_s=30, cpu_s=30, memory_mb=512, output_bytes=10_000)
    envelope = run_code(code, limits=limits, isolation=backend)
    assert envelope.status == "ok"
    assert envelope.result == "done"
    assert envelope.stdout_truncated and not envelope.stderr_truncated
    assert len(envelope.stdout) == 10_000
    assert envelope.duration_s < 15


def test_files_and_workdir(backend: str, tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    code = (
        "import os\nresult = [os.getcwd(), open('in/data.txt').read()]\nopen('out.txt', 'w').write('made')\n"
    )
    envelope = run_code(code, limits=FAST, isolation=backend, workdir=workdir, files={"in/data.txt": "hi"})
    assert envelope.status == "ok", envelope
    assert envelope.result == [str(workdir.resolve()), "hi"]
    produced = workdir / "out.txt"
    assert produced.read_text() == "made"
    assert produced.stat().st_uid == os.geteuid()  # the folder is given back to the caller


def test_worker_keeps_state_and_restarts_after_timeout(backend: str) -> None:
    with Worker(limits=Limits(wall_s=1.5, cpu_s=10), isolation=backend) as worker:
        assert worker.call("x = 1").status == "ok"
        second = worker.call("x += 1\nresult = x")
        assert (second.result, second.worker_restarted) == (2, False)
        assert worker.call("result = 5").result == 5
        assert worker.call("y = 0").result is None  # result is per call, not left over
        hung = worker.call("while True:\n    pass\n")
        assert hung.status == "timeout"
        fresh = worker.call("result = 'x' in globals()")
        assert fresh.status == "ok" and fresh.result is False
        assert fresh.worker_restarted
        assert not worker.call("result = 1").worker_restarted


def test_worker_restarts_after_crash_and_reset_is_silent(backend: str) -> None:
    with Worker(limits=FAST, isolation=backend) as worker:
        worker.call("x = 1")
        assert worker.call("import ctypes\nctypes.string_at(0)").status == "crash"
        after_crash = worker.call("result = 'x' in globals()")
        assert after_crash.worker_restarted and after_crash.result is False
        worker.call("x = 1")
        worker.reset()
        after_reset = worker.call("result = 'x' in globals()")
        assert after_reset.result is False and not after_reset.worker_restarted


def test_setup_hook_builds_namespace(backend: str) -> None:
    setup = f"{__name__}:make_namespace"
    with Worker(setup=setup, inputs={"base": 40}, limits=FAST, isolation=backend,
                python_path=TESTS_ROOT) as worker:
        worker.call("log.append(base)")
        envelope = worker.call("log.append(base + 2)\nresult = log")
        assert envelope.result == [40, 42]
    collected = run_code(
        "log.append('built')", setup=f"{__name__}:make_collecting_namespace", isolation=backend,
        python_path=TESTS_ROOT,
    )
    assert collected.result == {"log": ["built"]}


def test_setup_failure_is_reported(backend: str) -> None:
    envelope = run_code(
        "result = 1", setup=f"{__name__}:failing_setup", inputs={"path": "a.ifc"}, isolation=backend,
        python_path=TESTS_ROOT,
    )
    assert envelope.status == "error"
    assert envelope.error == f"setup '{__name__}:failing_setup' failed: RuntimeError: cannot open a.ifc"
    assert "failing_setup" in (envelope.traceback or "")
    missing = run_code("result = 1", setup="no_such_module_xyz:f", isolation=backend)
    assert missing.status == "error" and "ModuleNotFoundError" in (missing.error or "")


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="relative path"):
        run_code("pass", files={"../escape.txt": "x"}, isolation="process")
    with pytest.raises(ValueError, match="package.module:function"):
        run_code("pass", setup="not-a-path", isolation="process")
    with pytest.raises(ValueError, match="JSON-serialisable"):
        run_code("pass", inputs={"x": object()}, isolation="process")
    with pytest.raises(ValueError, match="isolation"):
        run_code("pass", isolation="docker")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="wall_s"):
        Limits(wall_s=0)


def test_envelope_to_dict_is_json() -> None:
    envelope = Envelope(status="error", error="ValueError: x", traceback="tb", duration_s=0.5)
    assert json.loads(json.dumps(envelope.to_dict()))["error"] == "ValueError: x"
    assert not envelope.ok


def test_auto_refuses_without_bwrap_unless_opted_in(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_worker, "_bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(_worker, "_fallback_warned", threading.Event())
    monkeypatch.delenv("BUILDBENCH_ALLOW_UNSANDBOXED", raising=False)
    with pytest.raises(SandboxUnavailable) as refused:
        run_code("result = 1", limits=FAST)
    message = str(refused.value)
    assert "\n" not in message and "not installed" in message
    assert "apt-get install bubblewrap" in message and "BUILDBENCH_ALLOW_UNSANDBOXED=1" in message
    assert run_code("result = 0", limits=FAST, isolation="process").result == 0  # explicit: allowed
    monkeypatch.setenv("BUILDBENCH_ALLOW_UNSANDBOXED", "1")
    with caplog.at_level(logging.WARNING, logger=_worker.__name__):
        first = run_code("result = 1", limits=FAST)
        second = run_code("result = 2", limits=FAST)
    assert (first.isolation, first.result, second.result) == ("process", 1, 2)
    warnings = [record for record in caplog.records if "plain subprocess" in record.getMessage()]
    assert len(warnings) == 1
    assert "not installed" in warnings[0].getMessage()
    info = _worker.sandbox_available()
    assert not info and info.backend == "process"
    with pytest.raises(SandboxUnavailable, match="not installed"):
        run_code("pass", isolation="bwrap")


def test_bwrap_plan_isolates_and_binds_only_what_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    plan = _launch.plan_launch("bwrap", "/tmp/runs/job-1", FAST, 5, 6, readable=("/etc/hostname",))
    argv = " ".join(plan.argv)
    for option in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--clearenv", "--ro-bind /usr /usr"):
        assert option in argv
    assert "--ro-bind / /" not in argv  # the host tree is not shown, only named paths
    assert f"--ro-bind {Path(sys.base_prefix).resolve()} " in argv
    assert "sk-test-secret" not in argv and "sk-test-secret" not in plan.env.values()
    assert set(plan.env) == {
        "PATH", "HOME", "TMPDIR", "LANG", "USER", "LOGNAME", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "MALLOC_ARENA_MAX"
    }  # fmt: skip
    # The work folder lives in the private /tmp: its parents are created traversable, then it is bound.
    assert "--perms 0755 --dir /tmp/runs" in argv
    assert argv.index("--tmpfs /tmp") < argv.index("--bind /tmp/runs/job-1 /tmp/runs/job-1")
    assert plan.cwd == "/tmp/runs/job-1"


def test_oversized_result_is_a_clear_error() -> None:
    limits = Limits(wall_s=5, result_bytes=100)
    envelope = run_code("result = 'x' * 1000", limits=limits, isolation="process")
    assert envelope.status == "error"
    assert "over the 100-byte limit" in (envelope.error or "")
    assert run_code("result = 'x' * 10", limits=limits, isolation="process").result == "x" * 10
