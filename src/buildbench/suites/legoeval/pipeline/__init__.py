"""The LLM evaluator (§1.2, §4): identify and type constraints, plan a tool DAG, select
arguments, run independent tools concurrently, validate each constraint, AND the verdicts;
plus the paper's baselines and a scripted stand-in model for offline runs."""

from .baselines import VLMJudge, sceneeval_check
from .evaluator import ConstraintResult, EvaluationResult, LLMEvaluator
from .plan import START, ToolPlan, given_plan, parse_plan, reference_plan

__all__ = ["START", "ConstraintResult", "EvaluationResult", "LLMEvaluator", "ToolPlan", "VLMJudge",
           "given_plan", "parse_plan", "reference_plan", "sceneeval_check"]
