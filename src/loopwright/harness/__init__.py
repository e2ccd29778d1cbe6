"""The A/B harness: rank the agent loops head to head and emit the engine settings to apply.

`make_plan(manifest)` resolves the matrix (loops x tiers x briefs x repetitions) against the
live loop registry; `record(plan, suite, options)` runs every cell as one `run_task` graded by
the brief's hidden checks (`BriefGrader`, a `scoring.Grader`), with a fresh cost tracker and
the metering relay in front of the gateway for external agents, resumably;
`build_scoreboard(dir)` applies the rubric and the promotion rules; `apply_promotion` writes
the result to the user's settings. See docs/ab.md.
"""

from __future__ import annotations

from loopwright.harness._apply import NothingToApply, apply_promotion, read_scoreboard
from loopwright.harness._briefs import (
    BUNDLED_BRIEFS,
    COMPLEXITIES,
    Brief,
    BriefSpec,
    BriefSuite,
    load_brief_suite,
)
from loopwright.harness._cell import CellKey, CellResult, CellStatus, cell_workflow
from loopwright.harness._checks import (
    BRIEF_GRADER,
    BriefGrader,
    BriefGrading,
    BriefValidation,
    CheckOutcome,
    CheckReport,
    run_checks,
    validate_brief,
)
from loopwright.harness._loops import live_loops
from loopwright.harness._manifest import (
    BUNDLED_MANIFEST,
    Cell,
    Manifest,
    Plan,
    load_manifest,
    make_plan,
)
from loopwright.harness._markdown import scoreboard_markdown
from loopwright.harness._models import (
    GatewaySource,
    MeteredModel,
    ModelSource,
    OfflineSource,
)
from loopwright.harness._promotion import Bucket, Promotion, Standing, promote
from loopwright.harness._provenance import Provenance, current_provenance, staleness
from loopwright.harness._record import (
    AB_RUN,
    RecordHeader,
    RecordOptions,
    load_results,
    read_header,
    record,
)
from loopwright.harness._relay import MeteringRelay
from loopwright.harness._rubric import CORRECTNESS_GATE_FLOOR, RUBRIC, WEIGHTS, Rubric
from loopwright.harness._scoreboard import (
    SCOREBOARD_SCHEMA_VERSION,
    CellRow,
    Money,
    Pairwise,
    RankRow,
    Scoreboard,
    build_scoreboard,
)

__all__ = [
    "AB_RUN",
    "BRIEF_GRADER",
    "BUNDLED_BRIEFS",
    "BUNDLED_MANIFEST",
    "COMPLEXITIES",
    "CORRECTNESS_GATE_FLOOR",
    "RUBRIC",
    "SCOREBOARD_SCHEMA_VERSION",
    "WEIGHTS",
    "Brief",
    "BriefGrader",
    "BriefGrading",
    "BriefSpec",
    "BriefSuite",
    "BriefValidation",
    "Bucket",
    "Cell",
    "CellKey",
    "CellResult",
    "CellRow",
    "CellStatus",
    "CheckOutcome",
    "CheckReport",
    "GatewaySource",
    "Manifest",
    "MeteredModel",
    "MeteringRelay",
    "ModelSource",
    "Money",
    "NothingToApply",
    "OfflineSource",
    "Pairwise",
    "Plan",
    "Promotion",
    "Provenance",
    "RankRow",
    "RecordHeader",
    "RecordOptions",
    "Rubric",
    "Scoreboard",
    "Standing",
    "apply_promotion",
    "build_scoreboard",
    "cell_workflow",
    "current_provenance",
    "live_loops",
    "load_brief_suite",
    "load_manifest",
    "load_results",
    "make_plan",
    "promote",
    "read_header",
    "read_scoreboard",
    "record",
    "run_checks",
    "scoreboard_markdown",
    "staleness",
    "validate_brief",
]
