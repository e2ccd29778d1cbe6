"""Read-only views of the working memory that the phases build their contexts from.

Everything here is derived from the files and the committed records: the taxonomy (built-in
axes plus those REFLECT added), the axis statuses of the latest REFLECT (reset to open by an
adoption, since the workflow changed), the frontier, the axes shared by the last committed
iterations (the axis-jump rule), promising probes still waiting for their perf run, and the
standing that termination rules are checked against.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from loopwright.models import LEDGER_FILE, read_ledger, role_kind
from loopwright.research._axes import Axis, taxonomy_with
from loopwright.research._config import WorkDir
from loopwright.research._context import AxisView, KnowledgeView, Promising, Rules
from loopwright.research._goal import Standing
from loopwright.research._journal import Experience, OpenHypothesis, open_hypotheses, read_lines
from loopwright.research._knowledge import Knowledge
from loopwright.research._record import IterRecord, ReflectBlock, load_iter_record
from loopwright.research._workspace import WorkspaceState

__all__ = ["Memory", "shared_axes"]

KNOWLEDGE_SHOWN = 60
EXPERIENCE_SHOWN = 80


def shared_axes(records: Sequence[IterRecord], window: int) -> tuple[str, ...]:
    """Axes every one of the last `window` committed iterations used (none when fewer)."""
    if len(records) < window:
        return ()
    sets = [{s.spec.intervention_axis for s in r.specs} for r in records[-window:]]
    common = set.intersection(*sets)
    return tuple(sorted(common))


@dataclass
class Memory:
    """Views over one working directory; `reflects` holds this iteration's REFLECTs so far."""

    wd: WorkDir
    records: list[IterRecord] = field(default_factory=list)
    reflects: list[ReflectBlock] = field(default_factory=list)

    @classmethod
    def load(cls, wd: WorkDir) -> Memory:
        return cls(wd, [load_iter_record(wd.iter_dir(n) / "record.json") for n in wd.committed()])

    def experience(self) -> list[Experience]:
        return read_lines(self.wd.experience, Experience)

    def hypotheses(self) -> list[OpenHypothesis]:
        return open_hypotheses(self.wd.hypotheses)

    def knowledge(self) -> tuple[KnowledgeView, ...]:
        bullets = Knowledge(self.wd.knowledge).current()[-KNOWLEDGE_SHOWN:]
        return tuple(KnowledgeView(id=b.id, origin=b.origin, text=b.text) for b in bullets)

    def all_reflects(self) -> list[tuple[int, ReflectBlock]]:
        """Every REFLECT with the iteration it ran in, committed ones first."""
        done = [(r.iter, b) for r in self.records for b in r.reflect]
        current = (self.records[-1].iter + 1) if self.records else 1
        return done + [(current, b) for b in self.reflects]

    def taxonomy(self) -> tuple[Axis, ...]:
        added = [(a.axis, a.description) for _, b in self.all_reflects() for a in b.taxonomy_add]
        return taxonomy_with(added)

    def last_adoption(self) -> int:
        return max((r.iter for r in self.records if r.summary.adopted), default=0)

    def axis_views(self, rules: Rules) -> tuple[AxisView, ...]:
        """The taxonomy with each axis's status: the latest REFLECT's, unless an adoption came
        after it (then open); constraint-forbidden axes are always closed."""
        latest: dict[str, str] = {}
        reflects = self.all_reflects()
        if reflects and reflects[-1][0] > self.last_adoption():
            latest = {a.axis: a.status for a in reflects[-1][1].axes}
        views = []
        for axis in self.taxonomy():
            status = latest.get(axis.name, "open")
            if axis.name in rules.forbid_axes:
                status = "closed"
            views.append(
                AxisView(
                    name=axis.name,
                    description=axis.description,
                    operators=axis.operators,
                    status=status,
                )
            )
        return tuple(views)

    def frontier(self, rules: Rules) -> tuple[str, ...]:
        """The latest REFLECT's frontier (still open, not forbidden), else every open axis in
        taxonomy order."""
        views = {v.name: v for v in self.axis_views(rules)}
        reflects = self.all_reflects()
        if reflects and reflects[-1][0] > self.last_adoption():
            ranked = [a for a in reflects[-1][1].frontier if a in views]
            return tuple(a for a in ranked if views[a].status == "open")
        return tuple(name for name, v in views.items() if v.status == "open")

    def shared(self, window: int) -> tuple[str, ...]:
        return shared_axes(self.records, window)

    def promising(self, workspace_hash: str) -> tuple[Promising, ...]:
        """Promising probes on this workspace whose perf run has not happened yet."""
        experience = self.experience()
        confirmed = {e.confirms for e in experience if e.confirms}
        specs = {(r.iter, s.spec.spec_id): s.spec for r in self.records for s in r.specs}
        out = []
        for e in experience:
            ref = f"iter_{e.iter}/{e.spec_id}"
            spec = specs.get((e.iter, e.spec_id))
            if e.verdict != "promising" or e.base_hash != workspace_hash or ref in confirmed:
                continue
            if spec is None:
                continue
            out.append(
                Promising(
                    iter=e.iter, spec_id=e.spec_id, axis=e.axis, title=spec.title,
                    hypothesis=spec.hypothesis, patch=spec.patch, delta=e.delta,
                )
            )  # fmt: skip
        return tuple(out)

    def standing(self, state: WorkspaceState) -> Standing:
        return Standing(
            iterations=len(self.records),
            plateau=len(self.records) - self.last_adoption(),
            score=state.score(),
            resolved_rate=state.resolved_rate(),
            cost_usd=self.cost_usd() + self.meta_usd(),
        )

    def cost_usd(self) -> float:
        """The eval cost of every committed iteration (runs whose cost is unknown count 0)."""
        return sum(r.cost_usd for r in self.records)

    def meta_usd(self) -> float:
        """What the meta phases' gateway calls cost so far (the `meta:` roles of the working
        directory's ledger.jsonl; unpriced calls count 0; no ledger: 0). The goal's `cost_usd`
        is this plus `cost_usd()`."""
        path = self.wd.root / LEDGER_FILE
        if not path.is_file():
            return 0.0
        records = read_ledger(path, torn_tail=True)
        return sum(r.cost_usd or 0.0 for r in records if role_kind(r.labels.role) == "meta")
