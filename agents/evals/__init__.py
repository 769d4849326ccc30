"""Evaluations with statistics (docs/how-to/evals.md): how often an agent gets each case
right, with intervals; whether a change made it worse, beyond noise; re-scored from the
recorded runs with no model call."""

from agents.errors import DatasetError
from agents.evals.comparing import CaseComparison, Comparison, compare
from agents.evals.dataset import Case, Dataset
from agents.evals.gates import assert_not_worse, assert_pass_rate
from agents.evals.report import CaseResult, EvalReport, Score, Scorer, Trial
from agents.evals.running import Budget, aevaluate, evaluate, rescore

__all__ = [
    "Budget",
    "Case",
    "CaseComparison",
    "CaseResult",
    "Comparison",
    "Dataset",
    "DatasetError",
    "EvalReport",
    "Score",
    "Scorer",
    "Trial",
    "aevaluate",
    "assert_not_worse",
    "assert_pass_rate",
    "compare",
    "evaluate",
    "rescore",
]
