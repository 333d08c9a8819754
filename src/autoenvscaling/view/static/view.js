// autoenv view: filters submit on change, the trajectory player, and a reload while a run is in progress.
"use strict";

function autosubmit() {
  for (const form of document.querySelectorAll("form[data-autosubmit]")) {
    for (const el of form.querySelectorAll("select, input[type=checkbox]")) {
      el.addEventListener("change", () => form.requestSubmit());
    }
  }
}

function player() {
  const root = document.getElementById("player");
  if (!root) return;
  const steps = Array.from(root.querySelectorAll("section.step"));
  const links = Array.from(root.querySelectorAll(".step-index a"));
  const number = document.getElementById("step-no");
  let current = 0;

  function show(i, push) {
    current = Math.max(0, Math.min(steps.length - 1, i));
    steps.forEach((s, j) => { s.hidden = j !== current; });
    links.forEach((a, j) => a.classList.toggle("current", j === current));
    number.textContent = String(current + 1);
    document.getElementById("prev").disabled = current === 0;
    document.getElementById("first").disabled = current === 0;
    document.getElementById("next").disabled = current === steps.length - 1;
    document.getElementById("last").disabled = current === steps.length - 1;
    if (push) history.replaceState(null, "", "#" + steps[current].id);
  }

  const moves = {
    first: () => 0, prev: () => current - 1, next: () => current + 1, last: () => steps.length - 1,
  };
  for (const button of root.querySelectorAll("button[data-go]")) {
    button.addEventListener("click", () => show(moves[button.dataset.go](), true));
  }
  links.forEach((a, j) => a.addEventListener("click", (ev) => { ev.preventDefault(); show(j, true); }));
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement) return;
    if (ev.key === "ArrowRight") show(current + 1, true);
    if (ev.key === "ArrowLeft") show(current - 1, true);
  });
  const start = steps.findIndex((s) => "#" + s.id === location.hash);
  root.classList.add("js");
  show(start >= 0 ? start : 0, false);
}

function refresh() {
  const seconds = Number(document.body.dataset.refresh || 0);
  if (seconds > 0) setTimeout(() => location.reload(), seconds * 1000);
}

document.addEventListener("DOMContentLoaded", () => { autosubmit(); player(); refresh(); });
