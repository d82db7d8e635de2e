"""Hostile run configuration: ``-o`` text, run files, price files and task files that once ran
with a mangled value, hung, or failed inside every episode instead of one ``error:`` line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from buildbench.cli.main import main
from buildbench.harness.run_file import read_run_file
from buildbench.harness.runner import artifact_dir
from buildbench.harness.task import file_stem
from buildbench.harness.task_files import MAX_TASK_ID_CHARS, load_task_files
from buildbench.harness.yamlio import parse_yaml
from buildbench.inputs import InputFileError, read_text


def _config(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["run", *args, "--print-config"]) == 0
    return yaml.safe_load(capsys.readouterr().out)["options"]  # type: ignore[no-any-return]


def _one_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_option_text_reaches_a_string_option_as_typed(capsys: pytest.CaptureFixture[str]) -> None:
    # JSON-decoding -o values turned the folder 1.50 into 1.5 and "true" into "True" (the run
    # keeps the folder absolute, read against the cwd: run_paths).
    assert _config(capsys, "example", "-o", "prompts=1.50") == {"prompts": str(Path.cwd().resolve() / "1.50")}
    assert _config(capsys, "example", "-o", "prompts=true") == {"prompts": str(Path.cwd().resolve() / "true")}
    # "none" is how listings show an unset option; it unsets, never names a folder "none".
    assert _config(capsys, "example", "-o", "prompts=none") == {"prompts": None}
    assert _config(capsys, "example", "-o", "max_steps=1e1", "-o", "max_tokens=none") == {
        "max_tokens": None, "max_steps": 10}


def test_an_unset_common_option_leaves_the_agents_own_value() -> None:
    from buildbench.harness import get_suite

    options = get_suite("example").parse_options({"tools": "none", "max_tokens": "none", "history": "full"})
    assert options.agent_settings() == {"history": None}


def test_a_huge_option_value_is_cut_in_its_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_error(capsys, ["run", "example", "-o", "max_steps=" + "x" * 100_000, "--print-config"])
    assert "option max_steps='xxxx" in err and "(100002 characters): expected an integer" in err
    assert len(err) < 300
    err = _one_error(capsys, ["run", "example", "-o", "delay_s=" + "x" * 100_000, "--print-config"])
    assert err.endswith("(100002 characters): expected a number\n") and len(err) < 300
    # A rule among options (a model validator) quoting the value is cut as well.
    err = _one_error(capsys, ["run", "scenerevis", "-o", "judge=" + "x" * 100_000, "--print-config"])
    assert "model spec 'xxxx" in err and len(err) < 500


@pytest.mark.parametrize("text, message", [
    ("suite: example\noptions: {prompts: [a, b]}\n", "options.prompts: option prompts=['a', 'b']: "
                                                       "expected a string, got a list"),
    ("suite: example\noptions: {prompts: yes}\n", "expected a string, got a boolean"),
    ("suite: example\nseed: 1\nseed: 2\n", "key 'seed' given twice (line 3, column 1)"),
    ('{"suite": "example", "suite": "dreamhouse"}', "key 'suite' given twice (line 1, column 22)"),
    ("suite: example\noptions: " + "[" * 300 + "]" * 300 + "\n", "nested deeper than 200 levels"),
    ("suite: &s example\nagent: *s\n", "aliases (*name) are not accepted"),
])
def test_a_run_file_that_was_read_wrongly_is_one_line(
        text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = tmp_path / "run.yaml"
    run_file.write_text(text)
    err = _one_error(capsys, ["run", "--config", str(run_file), "--print-config"])
    assert err.startswith(f"error: {run_file}: ") and message in err, err


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    # Nine levels of nine aliases: a 500-byte file that safe_load expands past a gigabyte when
    # anything walks it (the repr of an error message did).
    levels = ["&a0 [x, x, x, x, x, x, x, x, x]"] + [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]"
                                                     for i in range(1, 9)]
    run_file = tmp_path / "bomb.yaml"
    run_file.write_text("suite: [" + ", ".join(levels) + "]\n")
    t0 = time.process_time()  # CPU time: an expansion works, where a loaded machine only waits
    with pytest.raises(Exception, match="aliases"):
        read_run_file(run_file)
    assert time.process_time() - t0 < 5
    with pytest.raises(yaml.MarkedYAMLError, match="aliases"):
        parse_yaml("a: &x 1\nb: *x\n")
    assert parse_yaml("base: &b {x: 1}\nmore:\n  <<: {y: 2}\n  z: 3\n") == {"base": {"x": 1},
                                                                           "more": {"y": 2, "z": 3}}
    assert parse_yaml("--- {a: 1}\n--- [2]\n", all_documents=True) == [{"a": 1}, [2]]


def test_a_price_file_with_a_repeated_model_is_refused(tmp_path: Path) -> None:
    from buildbench.harness.cost import load_prices
    from buildbench.harness.errors import ConfigError

    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  m: {input_per_million: 1}\n  m: {input_per_million: 2}\n")
    with pytest.raises(ConfigError, match="line 3 column 3: not JSON/YAML: key 'm' given twice"):
        load_prices(prices)


def test_a_path_with_a_nul_names_itself() -> None:
    with pytest.raises(InputFileError, match=r"'a\\x00b': is not a path \(it holds a NUL character\)"):
        read_text("a\x00b")


def test_task_ids_are_bounded_and_never_share_or_leave_a_folder(tmp_path: Path) -> None:
    record = {"id": "x" * (MAX_TASK_ID_CHARS + 1), "suite": "example",
              "inputs": {"target_height_m": 1.0, "lot_half_width_m": 1.0, "max_blocks": 3}}
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(record) + "\n")
    with pytest.raises(Exception, match=f"is {MAX_TASK_ID_CHARS + 1} characters long, over the limit"):
        load_task_files(tasks, "example")
    assert file_stem("Ranch_03_0042") == "Ranch_03_0042"  # what every built-in id is: unchanged
    stems = {file_stem(i) for i in ("a/b", "a_b", "a b", "..", ".")}
    assert len(stems) == 5 and "a_b" in stems and all(s.strip(".") and "/" not in s for s in stems)
    root = tmp_path / "run" / "artifacts"
    for task_id in ("..", "../../x", "y" * 5000):
        folder = artifact_dir(root, task_id, 0)
        assert folder.parent.parent == root and len(folder.parent.name) <= 100


def test_a_bad_negative_control_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    err = _one_error(capsys, ["run", "buildarena", "-a", "negative", "--split", "transport-1", "-q",
                              "-o", "control=nope", "--run-dir", str(run_dir)])
    assert "option control='nope': no such negative control; controls: wheels on bottom faces" in err
    assert not run_dir.exists()


@pytest.mark.parametrize("value, message", [
    ("nan", "option judge: model spec 'nan': expected 'provider:model'"),
    ("none", "option judge: 'none' is not a judge"),
])
def test_a_bad_scenerevis_reward_judge_is_refused_before_the_run(
        value: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_error(capsys, ["run", "scenerevis", "-o", f"judge={value}", "--print-config"])
    assert message in err
    assert _config(capsys, "scenerevis", "-o", "judge=") == {"judge": "rule"}


def test_a_levels_file_with_aliases_is_refused(tmp_path: Path) -> None:
    from buildbench.suites.buildarena.levels import load_levels

    levels = tmp_path / "levels.yaml"
    levels.write_text("a: &x [1]\nb: *x\n")
    with pytest.raises(ValueError, match=r"levels file .*: not valid YAML \(line 2, column 4\): aliases"):
        load_levels(levels)


@pytest.mark.parametrize("field, value, message", [
    ("seed", -1, "seed must be an integer >= 0, got -1"),
    ("seed", True, "seed must be an integer >= 0, got True"),
    ("agent", None, "agent must be a non-empty string, got None"),
    ("split", 5, "split must be a non-empty string, got 5"),
    ("tasks", 5, "tasks must be a string or None, got 5"),
])
def test_a_python_run_config_is_checked_like_a_run_file(field: str, value: object, message: str) -> None:
    from buildbench.harness import RunConfig
    from buildbench.harness.errors import ConfigError

    fields: dict[str, object] = {"suite": "example", "agent": "reference", "protocol": "refine", field: value}
    with pytest.raises(ConfigError, match=f"^{message}$"):
        RunConfig(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("change, message", [
    ({"suite": "x" * 100_000}, "field 'suite' is 'xxxx"),
    ({"inputs": {"target_height_m": "x" * 100_000, "lot_half_width_m": 1.0, "max_blocks": 3}}, "inputs"),
])
def test_a_task_file_error_quoting_a_huge_field_is_cut(change: dict[str, object], message: str,
                                                       tmp_path: Path) -> None:
    from buildbench.harness import get_suite
    from buildbench.harness.task_files import TaskFileError

    record = {"id": "t", "suite": "example",
              "inputs": {"target_height_m": 1.0, "lot_half_width_m": 1.0, "max_blocks": 3}, **change}
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(record) + "\n")
    with pytest.raises(TaskFileError) as refused:
        load_task_files(tasks, "example", get_suite("example").validate_task)
    assert message in str(refused.value) and len(str(refused.value)) < 500
