"""Expense Tracker: a small Tk desktop app. Every Add or Delete rewrites /app/data/expenses.csv."""

import csv
import datetime as dt
import os
import re
import tkinter as tk
from decimal import Decimal, InvalidOperation
from pathlib import Path

DATA = Path("/app/data/expenses.csv")
FIELDS = ("date", "category", "amount")
CATEGORIES = ("food", "office", "software", "travel")
AMOUNT = re.compile(r"^\d+(\.\d{1,2})?$")


def load_rows() -> list[dict[str, str]]:
    if not DATA.exists():
        return []
    with DATA.open(newline="") as f:
        return [{k: row[k] for k in FIELDS} for row in csv.DictReader(f)]


def save_rows(rows: list[dict[str, str]]) -> None:
    tmp = DATA.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, DATA)


class ExpenseTracker:
    def __init__(self, root: tk.Tk) -> None:
        root.title("Expense Tracker")
        root.geometry("+40+40")
        self.rows = load_rows()
        self.status = tk.StringVar()

        form = tk.Frame(root)
        form.pack(fill="x", padx=8, pady=6)
        self.entries: dict[str, tk.Entry] = {}
        for col, (field, width) in enumerate((("date", 12), ("category", 12), ("amount", 10))):
            tk.Label(form, text=field.title()).grid(row=0, column=col, sticky="w", padx=4)
            entry = tk.Entry(form, width=width)
            entry.grid(row=1, column=col, padx=4)
            self.entries[field] = entry
        tk.Button(form, text="Add", width=8, command=self.add).grid(row=1, column=3, padx=4)

        self.listbox = tk.Listbox(root, width=48, height=10, font=("DejaVu Sans Mono", 10))
        self.listbox.pack(fill="both", expand=True, padx=8)
        bottom = tk.Frame(root)
        bottom.pack(fill="x", padx=8, pady=6)
        tk.Button(bottom, text="Delete selected", command=self.delete).pack(side="left")
        tk.Label(bottom, textvariable=self.status, fg="#444").pack(side="left", padx=8)
        self.refresh("Ready.")
        self.entries["date"].focus_set()

    def refresh(self, message: str) -> None:
        self.listbox.delete(0, "end")
        for row in self.rows:
            self.listbox.insert("end", f"{row['date']}  {row['category']:<10} {row['amount']:>10}")
        total = sum((Decimal(r["amount"]) for r in self.rows), Decimal("0.00"))
        self.status.set(f"{message}  {len(self.rows)} expenses, total {total:.2f}")

    def add(self) -> None:
        date = self.entries["date"].get().strip()
        category = self.entries["category"].get().strip().lower()
        amount = self.entries["amount"].get().strip()
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            return self.refresh(f"Error: date {date!r} is not YYYY-MM-DD.")
        if category not in CATEGORIES:
            return self.refresh(f"Error: category must be one of {', '.join(CATEGORIES)}.")
        try:
            value = Decimal(amount)
        except InvalidOperation:
            value = Decimal(0)
        if not AMOUNT.match(amount) or value <= 0:
            return self.refresh(f"Error: amount {amount!r} is not a positive number with at most 2 decimals.")
        self.rows.append({"date": date, "category": category, "amount": f"{value:.2f}"})
        save_rows(self.rows)
        for entry in self.entries.values():
            entry.delete(0, "end")
        self.entries["date"].focus_set()
        self.refresh(f"Added {date} {category} {value:.2f}.")

    def delete(self) -> None:
        selected = self.listbox.curselection()
        if not selected:
            return self.refresh("Error: select an expense in the list first.")
        row = self.rows.pop(selected[0])
        save_rows(self.rows)
        self.entries["date"].focus_set()
        self.refresh(f"Deleted {row['date']} {row['category']} {row['amount']}.")


def main() -> None:
    root = tk.Tk()
    ExpenseTracker(root)
    root.mainloop()


if __name__ == "__main__":
    main()
