"""What ``autoenv flywheel run`` prints about an accepted environment: its instruction's first real sentence."""

from __future__ import annotations

import pytest

from autoenvscaling.flywheel.accepted import headline


@pytest.mark.parametrize(
    ("instruction", "line"),
    [
        # a recorded demo run printed "Input file:" for this one
        (
            "**Input file:**\n/app/data/access.log\n\n**Task:** Keep only the lines whose status code is greater "
            "than 300.",
            "Task: Keep only the lines whose status code is greater than 300.",
        ),
        (
            "# Filter\n\n- Read /app/data/access.log and keep the 404 lines.\n",
            "Read /app/data/access.log and keep the 404 lines.",
        ),
        ("Count the lines.", "Count the lines."),  # short: the first line all the same
        ("", ""),
    ],
)
def test_the_headline_is_the_first_sentence_not_a_heading(instruction: str, line: str) -> None:
    assert headline(instruction) == line
