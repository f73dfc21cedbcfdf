"""The viewer's design insights pages: the principle table and ablations, a page per principle with the linked
elements before and after, and a page per app saying what fixed which task."""

from __future__ import annotations

from urllib.parse import quote

from fastapi.testclient import TestClient

from insights import insights_of, write_insights
from results import INSIGHTS_FILE, Ablation
from tests.insights.test_attribution import _fixture_run
from viewer import create_app


async def test_the_insights_pages_show_the_principles_the_flips_with_their_crops_and_the_ablations(tmp_path):
    run = _fixture_run(tmp_path / "runs" / "demo-run")
    write_insights(await insights_of([run]), run / INSIGHTS_FILE)
    (run / "ablations" / "state-visibility").mkdir(parents=True)
    (run / "ablations" / "state-visibility" / "ablation.json").write_text(Ablation(
        run=str(run), principle="state visibility", folder="ablations/state-visibility", offline=True, tasks=5,
        both=2, full_only=0, ablated_only=1, neither=2, full_sr=0.4, ablated_sr=0.6, paired_diff=0.2,
        ci95=[-0.1, 0.5], mcnemar_p=1.0).model_dump_json())
    client = TestClient(create_app([tmp_path / "runs"], who="tester"))

    page = client.get("/runs/demo-run/insights")
    assert page.status_code == 200
    text = page.text
    assert "Association, not cause" in text and 'badge offline' in text
    assert '/runs/demo-run/insights/principles/interaction%20robustness' in text
    assert "state visibility" in text and "20.0" in text  # the ablation's paired difference
    assert "the principle table&#39;s applied and revisions columns" in text  # how its revisions were chosen
    assert "no change touched it" in text  # t5 flipped with nothing linked
    # applied, unverifiable, revisions: the principle table's own columns
    assert "<th>applied</th><th>unverifiable</th><th>revisions</th>" in text
    assert "interaction robustness</a></td><td>1</td><td>0</td><td>1</td>" in text
    assert 'id="insights-link"' in client.get("/runs/demo-run").text

    principle = client.get("/runs/demo-run/insights/principles/" + quote("interaction robustness"))
    assert principle.status_code == 200
    assert "t1" in principle.text and "t2" not in principle.text  # t2 is linked to state visibility only
    images = [part.split('"')[0] for part in principle.text.split('src="')[1:] if part.startswith("/files/")]
    assert len(images) == 2 and all(client.get(src).headers["content-type"] == "image/png" for src in images)

    assert "1 change(s) applied in 1 revision(s) of 1 app(s), 0 unverifiable" in principle.text

    app = client.get("/runs/demo-run/insights/apps/demo")
    assert app.status_code == 200 and "what fixed which task" in app.text and "t5" in app.text
    assert "— not applied: offline transform found nothing to change" in app.text  # each change's verdict

    assert client.get("/runs/demo-run/insights/principles/beauty").status_code == 404
    assert client.get("/runs/demo-run/insights/apps/nope").status_code == 404
    (run / INSIGHTS_FILE).unlink()
    missing = client.get("/runs/demo-run/insights")
    assert missing.status_code == 404 and "aui insights" in missing.text
