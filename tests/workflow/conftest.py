from __future__ import annotations

from typing import Any

import pytest

from tests.workflow.samples import sample_data


@pytest.fixture
def data() -> dict[str, Any]:
    """A fresh copy of the sample workflow's data (valid; tests break it as they need)."""
    return sample_data()
