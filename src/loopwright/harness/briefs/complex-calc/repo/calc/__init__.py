"""A small arithmetic evaluator."""

from calc.errors import CalcError
from calc.parser import evaluate

__all__ = ["CalcError", "evaluate"]
