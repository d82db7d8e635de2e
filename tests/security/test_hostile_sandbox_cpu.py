"""The per-call CPU limit is RLIMIT_CPU's soft limit, and its hard limit is unlimited (each call
moves the soft one on), so code could lift it, or ignore SIGXCPU, and spin until the wall limit.
The supervisor now watches the runner's CPU time and ends it at the budget, as the kernel would."""

from __future__ import annotations

import pytest

from buildbench.sandbox import Limits, Worker

from .conftest import ISOLATION

LIMITS = Limits(wall_s=30.0, cpu_s=1, memory_mb=512)


@pytest.mark.parametrize("code", [
    "import resource\ninf = resource.RLIM_INFINITY\nresource.setrlimit(resource.RLIMIT_CPU, (inf, inf))\n",
    "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\n",
], ids=["lift-the-limit", "ignore-sigxcpu"])
def test_code_cannot_escape_its_cpu_limit(code: str) -> None:
    with Worker(limits=LIMITS, isolation=ISOLATION) as worker:
        out = worker.call(code + "while True:\n    pass\n")
        assert out.status == "timeout" and out.error == "CPU time limit of 1 s exceeded", out
        assert out.duration_s < LIMITS.wall_s  # the CPU budget ended it, not the wall clock
        again = worker.call("import time\ntime.sleep(1.5)\nresult = 42")  # sleeping costs no CPU
        assert again.status == "ok" and again.result == 42 and again.worker_restarted, again
