"""A language-model policy on any suite through Gymnasium::

    python examples/gym/llm_policy.py --suite Example --model python:examples/example/model.py:chat
    python examples/gym/llm_policy.py --suite BuildArena --model openai:gpt-4o --turns 20

``--model`` is any buildbench model spec (``openai:…``, ``anthropic:…``, ``vllm:…@URL``, or a
Python function as in the default, which runs offline). The policy keeps the conversation: each
observation becomes a user message with the env's images (``env.unwrapped.images``), the env's
tools (``info["tools"]`` at reset) are offered to the model, and a reply with tool calls is sent
back as the ``{"tool_calls": [...]}`` text the env reads; other replies go as plain text. The env's
answers to tool calls come back as tool messages, so the conversation stays valid for the provider.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import gymnasium as gym

import buildbench.gym
from buildbench.llm import ChatRequest, Message, Tool, ToolCall, make_model

gym.register_envs(buildbench.gym)


class LLMPolicy:
    """Chat history in, one text action out."""

    def __init__(self, spec: str, tools: list[dict[str, Any]]) -> None:
        self.model = make_model(spec)
        self.tools = [Tool.from_dict(t) for t in tools]
        self.messages: list[Message] = []
        self.pending: list[ToolCall] = []

    def observe(self, text: str, images: list[Any]) -> None:
        if self.pending:  # the env answered all calls of the last reply in one observation
            self.messages += [Message.tool(call.id, text) for call in self.pending]
            if images:
                self.messages.append(Message.user("Images of the result.", images))
        else:
            self.messages.append(Message.user(text, images))

    def act(self) -> str:
        response = self.model.generate_sync(ChatRequest(messages=tuple(self.messages), tools=tuple(self.tools)))
        if response.error is not None:
            raise RuntimeError(f"model call failed: {response.error}")
        self.messages.append(Message.assistant(response.text, response.tool_calls))
        self.pending = list(response.tool_calls)
        if self.pending:
            calls = [{"name": c.name, "arguments": c.arguments} for c in self.pending]
            return json.dumps({"tool_calls": calls})
        return response.text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="Example", help="env name: Example, DreamHouse, BuildArena, BimEdit, ...")
    parser.add_argument("--model", default="python:examples/example/model.py:chat", help="a buildbench model spec")
    parser.add_argument("--task", default="0", help="task index or id in the demo split")
    parser.add_argument("--turns", type=int, default=5, help="steps at most")
    args = parser.parse_args(argv)

    task: int | str = int(args.task) if args.task.lstrip("-").isdigit() else args.task
    env = gym.make(f"buildbench/{args.suite}-v0", split="demo", task=task, max_turns=args.turns)
    obs, info = env.reset(seed=0)
    policy = LLMPolicy(args.model, info["tools"])
    total = 0.0
    while True:
        policy.observe(obs["text"], env.unwrapped.images)
        obs, reward, terminated, truncated, info = env.step(policy.act())
        total += reward
        print(f"reward {reward:g}: {obs['text'][:100]!r}")
        if terminated or truncated:
            break
    print(f"return {total:g}; verifier: {info.get('metrics') or info.get('score_error')}")
    env.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
