"""The objectives reference (docs/reference/objectives.md), generated from the objectives catalog: every
loss with its label, what it does, its settings and their defaults, its label smoothing and its reference,
so that no page lists the objectives by hand (`python -m gold_textgen.docs_pages.generated_pages`)."""

from __future__ import annotations

import json

from ..catalog import COMMON_SETTINGS, DEFAULT_LOSS, LOSSES, REQUIRED, Loss, Setting

HEADER = """# Objectives reference

Every loss of the objectives catalog (`src/gold_textgen/catalog/`; this page is generated
from it: `python -m gold_textgen.docs_pages.generated_pages`). An objective of a config names its loss with
`loss:` (`{default}` when left out) and sets that loss's settings beside it, under
`tasks.<task>.objectives.<objective>` ([configuration reference](config.md)); a setting of another loss is
refused. How they run side by side, on equal terms: [GOLD beside its successors](../guide/objectives.md).
"""


def setting_text(name: str, setting: Setting) -> str:
    default = "required" if setting.default is REQUIRED else json.dumps(setting.default)
    return f"`{name}` ({default})"


def what_it_does(row: Loss) -> str:
    """The row's summary without the `name: ` or `label: ` it starts with in the schema's description."""
    for prefix in (f"{row.name}: ", f"{row.label}: "):
        if row.summary.startswith(prefix):
            return row.summary[len(prefix) :]
    return row.summary


def label_smoothing(row: Loss) -> str:
    return "the task's `fine_tune.label_smoothing`" if row.label_smoothing is None else f"{row.label_smoothing:g} (its reference's)"


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    lines = [
        HEADER.format(default=DEFAULT_LOSS),
        "| `loss:` | in tables | what it does | settings (default) | label smoothing | reference |",
    ]
    lines.append("|---|---|---|---|---|---|")
    for row in LOSSES.values():
        settings = ", ".join(setting_text(name, setting) for name, setting in row.settings.items()) or "none"
        cells = (f"`{row.name}`", row.label, what_it_does(row), settings, label_smoothing(row), row.reference)
        lines.append("| " + " | ".join(cell(text) for text in cells) + " |")
    # A common setting without a default is unset by default (label smoothing: the column above), not required.
    common = ", ".join(
        f"`{name}` (unset)" if setting.default is REQUIRED else setting_text(name, setting) for name, setting in COMMON_SETTINGS.items()
    )
    lines += ["", f"Every objective also takes {common}; the [configuration reference](config.md) describes each setting."]
    return "\n".join(lines) + "\n"
