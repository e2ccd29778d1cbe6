"""The instruction of a mined task rewritten by a model as a problem statement (`tasks mine
--model M`). The model sees only the instruction draft (the commit message and the public
signatures), never the gold code or the hidden tests, so it cannot copy the solution in."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from loopwright.models import ChatModel, ask_structured

__all__ = ["statement_rewriter"]

PROMPT = """\
You write the problem statement of a coding task. A developer will be given a repository and \
your statement, and must make the change described. Below is the commit message of the change \
and the public signatures it adds or changes. Rewrite it as a problem statement: describe the \
behaviour wanted and the public interface (keep every signature listed), say what is wrong or \
missing today, and do not describe how to implement it. Do not mention commits or tests.

Reply with JSON: {{"problem_statement": "..."}}

{draft}
"""


class _Statement(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    problem_statement: str = Field(min_length=20)


def statement_rewriter(
    model: ChatModel, on_fallback: Callable[[str], None] | None = None
) -> Callable[[str], str]:
    """A rewrite for `mine_repository`: the model's problem statement for a draft, or the draft
    itself when the model gives no usable reply after one retry (`on_fallback` is told why).
    Deterministic when the model is."""

    def rewrite(draft: str) -> str:
        answer = ask_structured(model, PROMPT.format(draft=draft), _Statement, retries=1)
        if answer.value is None:
            if on_fallback is not None:
                on_fallback(answer.problem or "no reply")
            return draft
        return answer.value.problem_statement.strip() + "\n"

    return rewrite
