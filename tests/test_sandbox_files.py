"""``read_agent_file``: links, FIFOs, devices, hard links and huge files are refused, fast."""

from __future__ import annotations

import os
import time

import pytest

from buildbench.sandbox.files import AgentFileError, read_agent_file


def _waited_for_a_cpu() -> float:
    """Seconds this thread has been runnable but not run (the kernel's run-queue delay); 0 where
    the kernel keeps no scheduler statistics."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def test_reads_a_plain_file(tmp_path):
    (tmp_path / "m.ifc").write_bytes(b"ISO-10303-21;")
    assert read_agent_file(tmp_path / "m.ifc", max_bytes=100) == b"ISO-10303-21;"


@pytest.mark.parametrize("make,needle", [
    (lambda p: os.symlink("/etc/hostname", p), "symbolic link"),
    (lambda p: os.symlink("/dev/zero", p), "symbolic link"),
    (lambda p: os.mkfifo(p), "FIFO"),
    (lambda p: os.mkdir(p), "a folder"),
    (lambda p: None, "No such file"),
])
def test_refuses_what_is_not_a_plain_file(tmp_path, make, needle):
    target = tmp_path / "m.ifc"
    make(target)
    t0, w0 = time.monotonic(), _waited_for_a_cpu()
    with pytest.raises(AgentFileError, match=needle):
        read_agent_file(target, max_bytes=1 << 20)
    # A FIFO does not block: the time off the CPU that was not a wait for a CPU (the load of a
    # shared machine) stays far below a second.
    assert (time.monotonic() - t0) - (_waited_for_a_cpu() - w0) < 1.0


def test_refuses_a_hard_link_and_a_linked_folder(tmp_path):
    (tmp_path / "secret").write_text("x")
    os.link(tmp_path / "secret", tmp_path / "m.ifc")
    with pytest.raises(AgentFileError, match="2 names"):
        read_agent_file(tmp_path / "m.ifc", max_bytes=100)
    real = tmp_path / "real"
    real.mkdir()
    (real / "m.ifc").write_text("x")
    os.symlink(real, tmp_path / "work")
    with pytest.raises(AgentFileError, match="folder 'work'"):
        read_agent_file(tmp_path / "work" / "m.ifc", max_bytes=100)


def test_refuses_a_file_over_the_cap(tmp_path):
    with open(tmp_path / "big", "wb") as f:
        f.truncate(10_000_001)  # sparse: costs nothing on disk
    with pytest.raises(AgentFileError, match="over the 10000000-byte limit"):
        read_agent_file(tmp_path / "big", max_bytes=10_000_000)
