"""Follow-ups of the run-stop work: an export whose temporary file cannot be made names the output,
a run file's stray ``address`` names the file and its field, and the one NaN-to-null JSON walker."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.cli.main import _strict_json
from buildbench.harness import ConfigError, Store
from buildbench.harness import export as export_module
from buildbench.harness.run_file import build_run_config
from buildbench.harness.tables import tables_json
from buildbench.jsonio import json_ready
from buildbench.suites.bimedit.cli import _json_text


def test_an_export_into_a_folder_that_refuses_files_names_the_output(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # what mkstemp raises in an immutable (chattr +i) or read-only folder; root ignores chmod, so patched
    def refuse(*args: Any, dir: str, **kwargs: Any) -> tuple[int, str]:
        raise PermissionError(1, "Operation not permitted", str(Path(dir) / ".episodes.jsonl.x1y2.part"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    out = tmp_path / "episodes.jsonl"
    with Store(tmp_path / "run") as store, pytest.raises(ConfigError) as caught:
        export_module.export_jsonl(store, out)
    assert str(caught.value) == f"--out {out}: cannot write it (Operation not permitted)"
    assert not out.exists()


def test_a_run_files_address_without_ray_names_the_file_and_field() -> None:
    with pytest.raises(ConfigError) as caught:
        build_run_config({"suite": "example", "address": "nul"}, where="cut.yaml")
    assert str(caught.value).startswith("cut.yaml: address: only meaningful with backend: ray")
    assert "--" not in str(caught.value)
    with pytest.raises(ConfigError, match="^--address is only meaningful with --backend ray$"):  # the flag's own
        build_run_config({"suite": "example"}, overrides={"address": "auto"})


def test_one_walker_makes_non_finite_numbers_null_for_all_three_printers() -> None:
    value = {"a": math.nan, "b": [math.inf, -math.inf, 1, True, (2.5, np.float64("nan"))], "c": np.float32(0.5),
             "d": {"e": None, "f": "nan"}}
    ready = json_ready(value)
    assert ready == {"a": None, "b": [None, None, 1, True, [2.5, None]], "c": 0.5, "d": {"e": None, "f": "nan"}}
    assert type(ready["b"][3]) is bool and type(ready["c"]) is float
    assert _strict_json(value) == json.dumps(ready)
    assert _json_text(value) == json.dumps(ready, indent=2)
    tables = {"T": [{"model": "m", "score": math.nan}]}
    assert json.loads(tables_json(tables))["tables"] == {"T": [{"model": "m", "score": None}]}
