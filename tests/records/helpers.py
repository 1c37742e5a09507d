"""What the records tests share that is theirs alone: the vendored schemas the exports are
checked against (tests/schemas/, not shipped with the package)."""

from __future__ import annotations

from pathlib import Path

#: Vendored with their licences and sources (tests/schemas/README.md).
VENDORED = Path(__file__).resolve().parents[1] / "schemas"
AGENT_FRAMEWORK_SCHEMAS = sorted((VENDORED / "agent-framework").glob("*.json"))
# Asserted here, at collection: the tests parametrized over these must never silently vanish.
assert len(AGENT_FRAMEWORK_SCHEMAS) == 3, f"expected 3 agent-framework schemas in {VENDORED}"
MPLP_DIR = VENDORED / "mplp"
MPLP_COMMON = sorted((MPLP_DIR / "common").glob("*.json"))
assert len(MPLP_COMMON) == 4, f"expected 4 MPLP common schemas in {MPLP_DIR}/common"
#: Referenced by mplp-dialog's "trace" but published nowhere (see SOURCE.txt): resolved as the
#: empty schema, which accepts anything. The exports never write "trace", so nothing is lost.
TRACE_BASE_ID = "https://schemas.mplp.dev/v1.0/common/trace-base.schema.json"
