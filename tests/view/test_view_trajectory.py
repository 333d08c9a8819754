"""The player on a trajectory with a huge output: the page carries a clipped copy and links the paged file."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.agent.trajectory import AgentInfo, Observation, ObservationResult, TrajectoryRecorder
from autoenvscaling.view.app import make_templates
from autoenvscaling.view.files import Root
from autoenvscaling.view.trajectory_view import STEP_TEXT_MAX, clip, trajectory_view


def test_a_huge_output_is_clipped_and_the_file_linked(tmp_path: Path) -> None:
    path = tmp_path / "trial" / "agent" / "trajectory.json"
    path.parent.mkdir(parents=True)
    rec = TrajectoryRecorder(path, agent=AgentInfo(name="solver", version="0"))
    huge = "x" * (STEP_TEXT_MAX * 3)
    rec.add_step("user", "go")
    rec.add_step("agent", "m" * (STEP_TEXT_MAX + 1),
                 observation=Observation(results=[ObservationResult(content=huge)]))  # fmt: skip
    rec.finish()
    root = Root(tmp_path)
    view = trajectory_view(root, path)
    out = view.steps[1].outputs[0]
    assert out.startswith("x" * STEP_TEXT_MAX) and len(out) < STEP_TEXT_MAX + 100
    assert f"{STEP_TEXT_MAX * 2} more characters" in out
    assert view.steps[1].message.endswith("[... 1 more characters: the whole step is in the trajectory file]")
    assert view.steps[0].message == "go" == clip("go")
    html = make_templates().get_template("trajectory.html").render(request=None, root=root, view=view, path=path)
    assert len(html) < STEP_TEXT_MAX * 3
    assert 'href="/file/trial/agent/trajectory.json"' in html
