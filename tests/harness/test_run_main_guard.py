"""A script that starts a run from its top level, without an ``if __name__ == "__main__":``
guard, is refused before the run starts, naming the script and the line (each episode's process
runs the main script again and would start the run there: every episode came out as an
unscored ``error``); a guarded script runs (`buildbench.harness.main_guard`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUN = ('Runner(RunConfig(suite="example", agent="reference", protocol="one-shot", limit=2), {run!r}).run()')
HEAD = "import json\nfrom buildbench.harness.runner import Runner, RunConfig\n"


def _script(tmp_path: Path, body: str) -> tuple[Path, Path]:
    run = tmp_path / "run"
    path = tmp_path / "mine.py"
    path.write_text(HEAD + body.format(run=RUN.format(run=str(run))), encoding="utf-8")
    return path, run


def _python(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                          cwd=path.parent)


@pytest.mark.parametrize("body, line", [
    ("{run}\n", 3),
    ("def main():\n    return {run}\n\n\nmain()\n", 7),
    ("if __name__ != '__main__':\n    pass\nelse:\n    pass\n{run}\n", 7),
])
def test_a_run_from_an_unguarded_top_level_is_refused(tmp_path: Path, body: str, line: int) -> None:
    path, run = _script(tmp_path, body)
    done = _python(path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"buildbench.errors.ConfigError: {path} line {line}: the run starts from the "
                           "script's top level"), done.stderr
    assert 'if __name__ == "__main__":' in last
    assert not run.exists()  # refused before the run folder: no episode recorded


def test_a_guarded_script_runs_its_episodes(tmp_path: Path) -> None:
    path, run = _script(tmp_path, "\n\ndef main():\n    result = {run}\n    print(json.dumps(result.summary['status']))\n"
                                   "\n\nif __name__ == '__main__':\n    main()\n")
    done = _python(path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"ok": 2}
