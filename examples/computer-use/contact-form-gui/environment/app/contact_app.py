"""Contact Form: a small Tk desktop app. Pressing Save writes the form to /app/data/contact.json."""

import json
import os
import re
import tkinter as tk
from pathlib import Path

DATA = Path("/app/data/contact.json")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
PLANS = ("free", "team", "enterprise")


class ContactForm:
    def __init__(self, root: tk.Tk) -> None:
        root.title("Contact Form")
        root.geometry("+40+40")
        self.status = tk.StringVar(value="Fill in the form and press Save.")
        self.subscribe = tk.BooleanVar(value=False)
        self.plan = tk.StringVar(value="free")

        tk.Label(root, text="Full name").grid(row=0, column=0, sticky="w", padx=8, pady=4)
        self.name = tk.Entry(root, width=32)
        self.name.grid(row=0, column=1, padx=8, pady=4)
        tk.Label(root, text="Email").grid(row=1, column=0, sticky="w", padx=8, pady=4)
        self.email = tk.Entry(root, width=32)
        self.email.grid(row=1, column=1, padx=8, pady=4)
        tk.Checkbutton(root, text="Subscribe to the newsletter", variable=self.subscribe).grid(
            row=2, column=1, sticky="w", padx=8, pady=4
        )
        tk.Label(root, text="Plan").grid(row=3, column=0, sticky="w", padx=8, pady=4)
        plans = tk.Frame(root)
        plans.grid(row=3, column=1, sticky="w", padx=8, pady=4)
        for plan in PLANS:
            tk.Radiobutton(plans, text=plan.title(), value=plan, variable=self.plan).pack(side="left")
        tk.Button(root, text="Save", width=10, command=self.save).grid(row=4, column=1, sticky="e", padx=8, pady=8)
        tk.Label(root, textvariable=self.status, fg="#444").grid(row=5, column=0, columnspan=2, padx=8, pady=4)
        self.name.focus_set()

    def save(self) -> None:
        name = " ".join(self.name.get().split())
        email = self.email.get().strip().lower()
        if not name:
            self.status.set("Error: the name is required.")
            return
        if not EMAIL.match(email):
            self.status.set(f"Error: {email!r} is not a valid email address.")
            return
        previous = json.loads(DATA.read_text()) if DATA.exists() else {}
        record = {
            "name": name,
            "email": email,
            "subscribe": self.subscribe.get(),
            "plan": self.plan.get(),
            "saves": int(previous.get("saves", 0)) + 1,
        }
        DATA.parent.mkdir(parents=True, exist_ok=True)
        tmp = DATA.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=2) + "\n")
        os.replace(tmp, DATA)
        self.status.set(f"Saved {name}.")


def main() -> None:
    root = tk.Tk()
    ContactForm(root)
    root.mainloop()


if __name__ == "__main__":
    main()
