"""What the sandboxed (agent's) process sends back is parsed in the harness: a result or a
frame of 100,000 brackets (RecursionError) or a 10,000-digit integer (a bare ValueError)
raised out of run_code; it is a malformed result / a protocol error like any bad JSON."""

from __future__ import annotations

import os
import struct
import threading

import pytest

from buildbench.sandbox import Limits, run_code
from buildbench.sandbox._protocol import ProtocolError, read_frame

HOSTILE = ['"9" * 10_000', '"[" * 100_000 + "]" * 100_000']


@pytest.mark.parametrize("payload", HOSTILE)
def test_a_hostile_result_is_a_malformed_result(payload: str) -> None:
    # the agent's code replaces json.dumps in its own process for its result only
    code = (f"import json\n_p = {payload}\n_dumps = json.dumps\n"
            "json.dumps = lambda v, *a, **k: _p if v == 'MARK' else _dumps(v, *a, **k)\nresult = 'MARK'")
    envelope = run_code(code, limits=Limits(wall_s=10, cpu_s=10), isolation="process")
    assert envelope.status == "crash"
    assert (envelope.error or "").startswith("the sandboxed process sent a malformed result")


def test_a_nan_result_still_reads() -> None:
    envelope = run_code("result = [float('nan')]", limits=Limits(wall_s=10, cpu_s=10), isolation="process")
    assert envelope.status == "ok" and envelope.result is not None and envelope.result[0] != envelope.result[0]


@pytest.mark.parametrize("body", [b"9" * 10_000, b"[" * 100_000 + b"]" * 100_000])
def test_a_hostile_frame_is_a_protocol_error(body: bytes) -> None:
    read_fd, write_fd = os.pipe()
    # a pipe holds 64 KiB: the writer runs beside the reader
    writer = threading.Thread(target=os.write, args=(write_fd, struct.pack(">I", len(body)) + body))
    writer.start()
    try:
        with pytest.raises(ProtocolError, match="frame is not valid UTF-8 JSON"):
            read_frame(read_fd, max_bytes=1 << 20, deadline=None)
    finally:
        writer.join()
        os.close(read_fd)
        os.close(write_fd)
