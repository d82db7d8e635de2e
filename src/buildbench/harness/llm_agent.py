"""``LLMAgent``: a chat model as an agent, with its conversation kept across steps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from buildbench.llm import Budget, BudgetedChat, BudgetLimits, ChatModel, ChatRequest, Message, ToolCall

from .agent import Agent
from .context import EpisodeContext
from .env import Action, AgentError, Observation
from .option_model import ModelOptions


@dataclass
class _Turn:
    """One exchange: the messages that carried an observation in, and the model's reply."""

    inputs: list[Message]
    reply: Message | None = None
    calls: list[ToolCall] = field(default_factory=list)


class LLMAgent(Agent):
    """Turns observations into chat messages and model replies into actions.

    Args:
        model: Any chat model (remote, scripted, replayed).
        system_prompt: The system message.
        use_tools: Offer the env's tools (``ctx.tools``) for function calling.
        max_tokens / temperature / top_p: Generation settings (None: the server's own).
        history: Keep the whole conversation (None) or only the first turn (the task) and
            the last ``history`` exchanges — the paper protocols' "last k" truncation.
        budget: Per-episode limits ``{"max_requests", "max_input_tokens",
            "max_output_tokens"}``; a refused call ends the episode with status ``budget``. The
            replies an episode keeps are always bounded (``BUILDBENCH_LIMIT_EPISODE_REPLY_BYTES``,
            see :class:`~buildbench.llm.Budget`): with ``history`` nothing else stops a model's
            huge replies from filling the run store.
        name: Label recorded with episodes.
    """

    def __init__(self, model: ChatModel, *, system_prompt: str, use_tools: bool = False,
                 max_tokens: int | None = None, temperature: float | None = None,
                 top_p: float | None = None,
                 history: int | None = None, budget: BudgetLimits | Budget | None = None,
                 name: str = "llm") -> None:
        if history is not None and history < 0:
            raise ValueError(f"history must be None or >= 0, got {history}")
        if isinstance(budget, dict):
            budget = Budget(**budget)
        self.budget = budget or Budget()
        self.model = BudgetedChat(model, self.budget)
        self.system_prompt = system_prompt
        self.use_tools = use_tools
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.history = history
        self.name = name
        self.turns: list[_Turn] = []

    def _observation_messages(self, observation: Observation) -> list[Message]:
        previous = self.turns[-1] if self.turns else None
        if previous is None or not previous.calls:
            return [Message.user(observation.text, observation.images)]
        # Every call of the previous reply must be answered, or providers reject the request.
        answers = dict(observation.tool_results)
        messages = [
            Message.tool(call.id, answers.get(call.id, "Not executed: only one tool call is run per turn."))
            for call in previous.calls
        ]
        unanswered_text = observation.text if not answers else ""
        if observation.images or unanswered_text:
            # Tool messages cannot carry images for every provider; send them as a user turn.
            messages.append(Message.user(unanswered_text or "Rendered views of the current state:",
                                         observation.images))
        return messages

    def conversation(self) -> list[Message]:
        """The messages the next request will carry (after truncation)."""
        kept = list(range(len(self.turns)))
        if self.history is not None and len(kept) > self.history + 1:
            kept = [0, *kept[len(kept) - self.history:]] if self.history else [kept[-1]]
        messages = [Message.system(self.system_prompt)]
        for position, index in enumerate(kept):
            turn = self.turns[index]
            cut = index > 0 and (position == 0 or kept[position - 1] != index - 1)
            messages.extend(_unanswerable(turn.inputs) if cut else turn.inputs)
            if turn.reply is not None:
                messages.append(turn.reply)
        return messages

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        self.turns.append(_Turn(self._observation_messages(observation)))
        tools = tuple(ctx.tools) if self.use_tools else ()
        request = ChatRequest(messages=tuple(self.conversation()), tools=tools,
                              temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens,
                              tool_choice="auto" if tools else None, seed=ctx.seed)
        response = await self.model.generate(request)
        usage = response.usage.to_dict()
        if response.error is not None:
            return Action(error=AgentError.from_api(response.error, after_reply=request.has_reply), usage=usage)
        turn = self.turns[-1]
        turn.reply = Message.assistant(response.text, response.tool_calls)
        turn.calls = list(response.tool_calls)
        return Action(text=response.text or None, tool_calls=list(response.tool_calls), usage=usage,
                      finish_reason=response.finish_reason)


def _unanswerable(inputs: list[Message]) -> list[Message]:
    """A turn's inputs whose tool calls were cut from the window: its tool results as one user
    message (a tool message must follow the assistant turn that made its call, or providers refuse
    the whole request: an API error for every later turn of the episode)."""
    results = [m for m in inputs if m.role == "tool"]
    if not results:
        return inputs
    text = "Results of your earlier tool calls:\n" + "\n".join(f"[{m.tool_call_id}] {m.text}" for m in results)
    images = [image for m in results for image in m.images]
    return [Message.user(text, images), *(m for m in inputs if m.role != "tool")]


def llm_agent_options(options: ModelOptions | Mapping[str, Any]) -> dict[str, Any]:
    """``LLMAgent`` keyword arguments of the run's given model-agent options
    (:meth:`~buildbench.harness.option_model.ModelOptions.agent_settings`); a plain mapping (an
    agent built outside a run) is parsed by the same model first."""
    if not isinstance(options, ModelOptions):
        common = {key: value for key, value in options.items() if key in ModelOptions.model_fields}
        options = ModelOptions.parse(common, where="the model agent")
    return options.agent_settings()
