"""Test-session settings shared by every test folder."""

from __future__ import annotations

import os

# The tests run code they wrote themselves; on a machine without bubblewrap they may run it as
# a plain process (tests that need the sandbox skip there, and the refusal itself is tested
# with this variable removed).
os.environ.setdefault("BUILDBENCH_ALLOW_UNSANDBOXED", "1")
