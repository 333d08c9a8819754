from pathlib import Path


def test_ok_lines():
    # The check itself is right; what is wrong is the instruction: its example line is the whole answer.
    assert Path("/app/ok.txt").read_text().splitlines() == ["10.0.0.1 GET /index.html 200"]
