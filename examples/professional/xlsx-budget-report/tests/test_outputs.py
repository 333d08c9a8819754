"""Grades /app/output/budget_report.xlsx by reading the workbook (formulas as text) with openpyxl."""

import csv
from pathlib import Path

import pytest
from openpyxl import load_workbook

REPORT = Path("/app/output/budget_report.xlsx")
# department -> (spent, budget), from the input CSVs (refunds included, Legal has no expenses).
EXPECTED = {
    "Engineering": (5182.62, 6000),
    "Legal": (0, 1500),
    "Marketing": (1774.00, 2000),
    "Sales": (1262.75, 1000),
}


@pytest.fixture(scope="module")
def wb():
    assert REPORT.is_file(), f"{REPORT} was not created"
    return load_workbook(REPORT)  # formulas stay formulas (data_only=False)


def formula(value):
    assert isinstance(value, str) and value.startswith("="), f"expected a formula, got {value!r}"
    return value.replace(" ", "").replace("$", "").upper()


def test_sheet_names_and_order(wb):
    assert wb.sheetnames == ["Summary", "Expenses"]


def test_summary_header_bold_and_frozen(wb):
    ws = wb["Summary"]
    assert [c.value for c in ws[1]][:4] == ["Department", "Spent", "Budget", "Remaining"]
    assert all(ws.cell(row=1, column=c).font.bold for c in range(1, 5)), "header cells A1:D1 must be bold"
    assert ws.freeze_panes == "A2"


def test_department_rows(wb):
    ws = wb["Summary"]
    names = [ws.cell(row=r, column=1).value for r in range(2, 6)]
    assert names == sorted(EXPECTED)
    for r, name in enumerate(names, start=2):
        spent, budget = EXPECTED[name]
        b, c = ws.cell(row=r, column=2).value, ws.cell(row=r, column=3).value
        assert isinstance(b, (int, float)) and b == pytest.approx(spent, abs=0.005), f"Spent of {name}: {b!r}"
        assert isinstance(c, (int, float)) and c == pytest.approx(budget), f"Budget of {name}: {c!r}"
        assert formula(ws.cell(row=r, column=4).value) == f"=C{r}-B{r}"


def test_total_row(wb):
    ws = wb["Summary"]
    assert ws["A6"].value == "Total"
    assert [formula(ws[f"{col}6"].value) for col in "BCD"] == ["=SUM(B2:B5)", "=SUM(C2:C5)", "=SUM(D2:D5)"]
    assert ws.max_row == 6, "nothing may follow the Total row"


def test_expenses_sheet_copies_the_csv(wb):
    ws = wb["Expenses"]
    with open("/app/data/expenses.csv", newline="") as f:
        rows = list(csv.reader(f))
    got = [[c.value for c in row] for row in ws.iter_rows(min_row=1, max_col=4)]
    assert got[0] == rows[0]
    assert len(got) == len(rows), f"{len(got) - 1} data rows, expected {len(rows) - 1}"
    for want, have in zip(rows[1:], got[1:]):
        assert have[:3] == want[:3]
        assert isinstance(have[3], (int, float)), f"amount {have[3]!r} is not a number"
        assert have[3] == pytest.approx(float(want[3]))
