import sys
from pathlib import Path

EXPECTED = ["70.7", "24.8", "32.0", "99.0", "212.0"]
got = Path("/app/fahrenheit.txt").read_text().split() if Path("/app/fahrenheit.txt").exists() else []
sys.exit(0 if got == EXPECTED else 1)
