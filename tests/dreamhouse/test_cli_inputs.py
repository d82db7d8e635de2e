"""``validate`` and ``render`` read what ``generate`` writes; the shipped example house passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from buildbench.suites.dreamhouse.cli import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "files" / "house.json"


def _invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dataset")
    result = _invoke("generate", "--n", "2", "--out", out, "--format", "jsonl", "--workers", "1")
    assert result.exit_code == 0, result.output
    return out


def _ids(dataset: Path) -> list[str]:
    shard = next(dataset.glob("structures-*.jsonl"))
    return [json.loads(line)["task_id"] for line in shard.read_text().splitlines() if line]


def test_validate_reads_a_dataset_folder_and_a_shard(dataset: Path) -> None:
    ids = _ids(dataset)
    out = _invoke("validate", dataset)
    assert out.exit_code == 0, out.output
    assert all(f"{i}: " in out.output for i in ids) and "2/2 houses pass every test" in out.output
    shard = next(dataset.glob("structures-*.jsonl"))
    one = _invoke("validate", shard, "--task", ids[1], "--json")
    assert one.exit_code == 0, one.output
    (doc,) = json.loads(one.output)
    assert doc["released"]["task_id"] == ids[1] and doc["released"]["all_passed"] is True


def test_render_reads_a_dataset_house_with_its_own_skin(dataset: Path, tmp_path: Path) -> None:
    ids = _ids(dataset)
    many = _invoke("render", dataset, "--out", tmp_path / "v")
    assert many.exit_code == 2 and "pick one with --task" in many.output
    out = _invoke("render", dataset, "--task", ids[0], "--condition", "facade", "--out", tmp_path / "v")
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in (tmp_path / "v").iterdir()) == sorted(
        f"{v}.png" for v in ("front", "back", "left", "right", "front_right"))


def test_unknown_house_and_task_on_a_plain_file_are_input_errors(dataset: Path) -> None:
    out = _invoke("validate", dataset, "--task", "ZZ_01_9999")
    assert out.exit_code == 2 and "holds no house 'ZZ_01_9999'" in out.output
    assert len(out.output.strip().splitlines()) == 1
    if EXAMPLE.exists():
        plain = _invoke("validate", EXAMPLE, "--task", "X")
        assert plain.exit_code == 2 and "one structure file" in plain.output


def test_the_shipped_example_house_passes_every_test() -> None:
    if not EXAMPLE.exists():
        pytest.skip(f"example file not found at {EXAMPLE}")
    out = _invoke("validate", EXAMPLE)
    assert out.exit_code == 0, out.output
    assert "92 members" in out.output and "All 10 structural tests passed" in out.output
