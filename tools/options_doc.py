"""Write docs/options.md, the -o reference, from each bundled suite's options class.

    python tools/options_doc.py          # rewrite the file
    python tools/options_doc.py --check  # exit 1 when the committed file differs (what the test checks)
"""

from __future__ import annotations

import sys
from pathlib import Path

from buildbench.cli.option_help import options_markdown

DOC = Path(__file__).resolve().parents[1] / "docs" / "options.md"


def main(argv: list[str]) -> int:
    text = options_markdown()
    if "--check" in argv:
        if not DOC.exists() or DOC.read_text(encoding="utf-8") != text:
            print(f"error: {DOC} is not what the options classes say; run python tools/options_doc.py",
                  file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
