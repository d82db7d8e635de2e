"""Suites and their registry.

A ``Suite`` bundles what the runner needs for one domain: its tasks, an env factory, named
agents and protocols, and a scorer. Suites register by import string, so a domain's heavy
dependencies (MuJoCo, IfcOpenShell, Blender) load only when that suite is used. Every suite,
the bundled ones included, registers through the ``buildbench.suites`` entry-point group, so the
harness names none.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .agent import Agent
from .env import Env
from .episode import Episode, as_failure, is_scored, status_label
from .errors import AgentFailure, UnknownNameError
from .options import COMMON_OPTIONS, OptionSpec
from .outcome import OutcomeRecord
from .prompts import PromptFiles
from .protocol import Protocol
from .registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP  # re-exported: the registry lives apart
from .registry import suite_names as suite_names
from .registry import suite_target as suite_target
from .task import Task

if TYPE_CHECKING:
    from buildbench.llm import ChatModel

    from .option_model import ModelOptions

AgentKind = Literal["cpu", "io"]


#: What the env, agent and protocol factories take: the run's options parsed once into the suite's
#: options class (``Suite.options``). The harness only hands it on, so it is ``Any`` here; each
#: suite's factories name their class (``options: DreamHouseOptions``).
SuiteOptions = Any


@dataclass(frozen=True)
class AgentSpec:
    """A named agent of a suite.

    Attributes:
        factory: ``factory(task, model, options) -> Agent``; ``model`` is None unless
            ``needs_model``.
        needs_model: Requires ``--model``.
        kind: ``cpu`` agents (scripted, no waiting) run whole episodes in the worker process
            pool; ``io`` agents (model calls) run on the event loop with ``--concurrency``.
    """

    name: str
    factory: Callable[[Task, ChatModel | None, SuiteOptions], Agent]
    description: str = ""
    needs_model: bool = False
    kind: AgentKind = "cpu"


@dataclass(frozen=True)
class ProtocolSpec:
    """A named episode driver: ``factory(task, options) -> Protocol``."""

    name: str
    factory: Callable[[Task, SuiteOptions], Protocol[Any]]
    description: str = ""


@dataclass(frozen=True)
class RunChoice:
    """What a run chose, for a suite's ``check_run``: names as given, options parsed."""

    agent: str
    protocol: str
    split: str
    #: The suite's options class, parsed.
    options: SuiteOptions
    #: The task file or folder run instead of the split (``--tasks``), or None.
    tasks: str | None = None


#: ``score(task, outcome)``: the outcome as the suite's ``outcome_type`` (see ``Suite.read_outcome``).
Scorer = Callable[[Task, Any], dict[str, float]]
Summarizer = Callable[[Sequence[Episode]], dict[str, Any]]


@dataclass(frozen=True)
class Suite:
    """One domain.

    Attributes:
        load_tasks: ``load_tasks(split, seed) -> list[Task]``; split ``"default"`` is the
            benchmark split, ``"demo"`` a small sample.
        make_env: ``make_env(task, options) -> Env``; ``options`` is the run's typed options
            (:meth:`parse_options`), as for the agent and protocol factories.
        score: ``score(task, outcome) -> metrics``, the outcome read back as ``outcome_type``;
            pure, so it can run in a worker process.
        summarize: Aggregate metrics over episodes; defaults to the mean of each metric.
        cli: Optional import string of a click group mounted as ``buildbench <name>``.
        options: The ``-o`` options its env, agents and protocols read: its options class (a
            frozen :class:`~buildbench.harness.option_model.ModelOptions` subclass whose fields
            are declared with :func:`~buildbench.harness.option_model.option`), or, for a small
            suite, the specs beyond the common model options
            (:data:`~buildbench.harness.options.COMMON_OPTIONS`). Any other key is refused before
            a run starts; the factories get the parsed object.
        check_run: Refuses a combination of agent, protocol, split and options that cannot work
            (``ConfigError``, one line), once before the run folder exists, instead of failing
            every episode; rules among options alone belong in the options class's validators.
        outcome_type: The suite's outcome record (``Env.outcome()``'s type), which reads a stored
            outcome back for the scorer; None for a suite whose env returns a plain dict.
        prompts: Its prompt texts, replaceable with ``-o prompts=DIR`` (declare
            :data:`~buildbench.harness.prompts.PROMPTS_OPTION` in ``options``).
        validate_task: Checks one task read from a user's file (``--tasks``) and raises
            ``TaskShapeError``/ValueError naming the bad field; see
            :func:`~buildbench.harness.task_files.require_fields`.
        task_paths: The dotted fields of a task record that hold file paths
            (``"inputs.ifc_path"``): a relative one in a task file is resolved against that
            file's folder on load, before ``validate_task``, so a file means the same from any
            current directory.
        failure_metrics: ``failure_metrics(task) -> metrics`` of an episode the agent failed by
            its own output (`~buildbench.harness.errors.AgentFailure`): the values a failed
            attempt has in the suite's tables (0 for a pass flag or a score). None: such an
            episode is scored with no metrics (its status still counts it as failed).
        headline: The metrics a reader looks at first, in order (reports, figures and the
            viewer lead with them); the first is the suite's "solved" flag when it is 0/1.
        units: The unit of each headline metric as reports print it beside the mean (``0/1``
            for a flag, whose mean is a rate; ``%``; ``m³``…): a mean of 100.0 and one of 1.0 are
            both a perfect score, in different suites.
        task_type: The task-metadata key that names a task's type (per-type figures).
        figures: ``figures(groups) -> [(name, matplotlib Figure)]``: the suite's reproduced
            paper figures from its episodes grouped by run label (`buildbench.harness.figures`).
    """

    name: str
    description: str
    load_tasks: Callable[[str, int], list[Task]]
    make_env: Callable[[Task, SuiteOptions], Env]
    agents: Mapping[str, AgentSpec]
    protocols: Mapping[str, ProtocolSpec]
    score: Scorer
    summarize: Summarizer | None = None
    splits: Sequence[str] = ("default", "demo")
    default_agent: str = "reference"
    default_protocol: str = ""
    cli: str | None = None
    options: Sequence[OptionSpec] | type[ModelOptions] = ()
    outcome_type: type[OutcomeRecord] | None = None
    check_run: Callable[[RunChoice], None] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    prompts: PromptFiles | None = None
    validate_task: Callable[[Task], None] | None = None
    task_paths: Sequence[str] = ()
    failure_metrics: Callable[[Task], dict[str, float]] | None = None
    headline: Sequence[str] = ()
    units: Mapping[str, str] = field(default_factory=dict)
    task_type: str = ""
    figures: Callable[[Mapping[str, Sequence[Episode]]], list[tuple[str, Any]]] | None = None

    def verify(self, task: Task, outcome: OutcomeRecord | Mapping[str, Any]) -> dict[str, float]:
        """``score``, except that an outcome the agent failed by its own output (`AgentFailure`)
        gets the suite's failing values (``failure_metrics``): a failing score, never an error.
        For callers that keep metrics only (Gymnasium, TRL, verifiers); the runner keeps the reason.

        Raises:
            AgentFailure: The suite declares no ``failure_metrics``.
        """
        try:
            return self.score(task, self.read_outcome(outcome))
        except AgentFailure:
            if self.failure_metrics is None:
                raise
            return dict(self.failure_metrics(task))

    def options_model(self) -> type[ModelOptions]:
        """The frozen, typed model of this suite's options (its own beside the common ones)."""
        if isinstance(self.options, type):
            return self.options
        from .option_model import options_model

        return options_model(self.name, tuple(self.options))

    def option_specs(self) -> tuple[OptionSpec, ...]:
        """The suite's own option declarations, in listing order: the common ones left out unless
        the suite redeclares one (its own default)."""
        if isinstance(self.options, type):
            return tuple(spec for spec in self.options.specs if spec not in COMMON_OPTIONS)
        return tuple(self.options)

    def read_outcome(self, outcome: OutcomeRecord | Mapping[str, Any]) -> Any:
        """``outcome`` as the scorer takes it: a stored (JSON) outcome read back into the suite's
        ``outcome_type``; a record, or any outcome of a suite without one, as it is."""
        if self.outcome_type is None or isinstance(outcome, OutcomeRecord):
            return outcome
        return self.outcome_type.from_dict(dict(outcome))

    def parse_options(self, raw: Mapping[str, Any] | None = None) -> ModelOptions:
        """``raw`` (``-o`` text, config-file or Python values) as the typed object the env, agent
        and protocol factories take; ConfigError (one line: the option and what it accepts)."""
        return self.options_model().parse(raw or {}, where=f"suite {self.name!r}")

    def agent(self, name: str) -> AgentSpec:
        if name not in self.agents:
            raise UnknownNameError("agent", name, list(self.agents))
        return self.agents[name]

    def protocol(self, name: str) -> ProtocolSpec:
        if name not in self.protocols:
            raise UnknownNameError("protocol", name, list(self.protocols))
        return self.protocols[name]


_loaded: dict[str, Suite] = {}

def get_suite(name: str) -> Suite:
    """Import and return the suite registered as ``name``."""
    if name not in _loaded:
        module_name, _, attr = suite_target(name).partition(":")
        obj = getattr(importlib.import_module(module_name), attr or "suite")
        suite = obj() if callable(obj) and not isinstance(obj, Suite) else obj
        if not isinstance(suite, Suite):
            raise TypeError(f"{suite_target(name)} is not a buildbench Suite")
        _loaded[name] = suite
    return _loaded[name]


def mean_metrics(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Default summary: episode count, status counts, how many episodes have no result
    (``unscored``: errors and API failures, never averaged in) and the mean of every metric
    over the scored ones."""
    from .stats import mean_of, metric_number  # numpy: not at the command's start

    out: dict[str, Any] = {"episodes": len(episodes)}
    statuses: dict[str, int] = {}
    values: dict[str, list[float]] = {}
    for ep in episodes:
        label = status_label(ep)
        statuses[label] = statuses.get(label, 0) + 1
        if not is_scored(ep):
            continue
        for key, value in ep.metrics.items():
            number = metric_number(value)  # the same reading and mean as the intervals beside it
            if number is not None:
                values.setdefault(key, []).append(number)
    out["status"] = statuses
    out["unscored"] = sum(1 for ep in episodes if not is_scored(ep))
    out["metrics"] = {k: mean_of(values[k]) for k in sorted(values)}
    return out


def counted_as_failures(suite_name: str | None, episodes: Sequence[Episode]) -> list[Episode]:
    """``episodes`` with each unscored one counted as a failed attempt (``--errors-as-failures``):
    its metrics are the suite's ``failure_metrics`` for the task (known from the episode's id and
    metadata) and its first headline metric 0, never a 0 in a lower-is-better metric."""
    try:
        suite: Suite | None = get_suite(suite_name) if suite_name else None
    except Exception:  # a report must still open if the suite is not importable here
        suite = None
    out = []
    for ep in episodes:
        if is_scored(ep):
            out.append(ep)
            continue
        failing: dict[str, float] = {}
        if suite is not None and suite.headline:
            failing[suite.headline[0]] = 0.0
        if suite is not None and suite.failure_metrics is not None:
            try:
                failing.update(suite.failure_metrics(Task(ep.task_id, suite.name, metadata=dict(ep.metadata))))
            except Exception:  # a failure value that needs the task's inputs stays n/a
                pass
        out.append(as_failure(ep, failing))
    return out
