#!/bin/bash
set -euo pipefail
mkdir -p /app/output
python3 - <<'PY'
import csv
from collections import defaultdict
from decimal import Decimal

from openpyxl import Workbook
from openpyxl.styles import Font

with open("/app/data/expenses.csv", newline="") as f:
    expenses = list(csv.DictReader(f))
with open("/app/data/budgets.csv", newline="") as f:
    budgets = {row["department"]: Decimal(row["budget"]) for row in csv.DictReader(f)}

spent = defaultdict(Decimal)
for row in expenses:
    spent[row["department"]] += Decimal(row["amount"])

wb = Workbook()
summary = wb.active
summary.title = "Summary"
summary.append(["Department", "Spent", "Budget", "Remaining"])
for cell in summary[1]:
    cell.font = Font(bold=True)
for department in sorted(budgets):
    r = summary.max_row + 1
    summary.append([department, float(round(spent[department], 2)), float(budgets[department]), f"=C{r}-B{r}"])
last = summary.max_row
summary.append(["Total", f"=SUM(B2:B{last})", f"=SUM(C2:C{last})", f"=SUM(D2:D{last})"])
summary.freeze_panes = "A2"

data = wb.create_sheet("Expenses")
data.append(["date", "department", "description", "amount"])
for row in expenses:
    data.append([row["date"], row["department"], row["description"], float(row["amount"])])
wb.save("/app/output/budget_report.xlsx")
PY
echo "wrote /app/output/budget_report.xlsx"
