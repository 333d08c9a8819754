"""`autoenv pool ...`: the environment pool (catalog + dedup) at ./pool by default."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

if TYPE_CHECKING:
    from autoenvscaling.pool import AddResult, Pool, PoolEntry

app = typer.Typer(help="The environment pool: add, list, status, show, export, retire, import.", no_args_is_help=True)
console = Console()

PoolOpt = Annotated[Path, typer.Option("--pool", help="Pool dir (catalog.sqlite + envs/).")]
DomainOpt = Annotated[str, typer.Option(help="Domain recorded for the added environments.")]
RoundOpt = Annotated[int, typer.Option("--round", help="Flywheel round recorded for the added environments.")]
NearDupOpt = Annotated[
    str, typer.Option("--near-duplicate", help="store (status duplicate), reject, or ignore near-duplicates.")
]
DEFAULT_POOL = Path("pool")

_STATUS_STYLE = {
    "learnable": "green",
    "valid": "cyan",
    "candidate": "white",
    "invalid": "red",
    "too-easy": "yellow",
    "too-hard": "yellow",
    "retired": "dim",
    "duplicate": "magenta",
}


def _id_column(header: str = "id") -> Column:
    # Ids are what users copy into `show` and `retire`: never shortened.
    return Column(header, no_wrap=True, min_width=16)


def _status_column() -> Column:
    return Column("status", no_wrap=True, min_width=9)


def _open(pool: Path, *, create: bool = False) -> Pool:
    """The pool at ``pool``; only the commands that add to it (``create``) make a new one, so a mistyped
    ``--pool`` is an error rather than an empty pool left on disk."""
    from autoenvscaling.errors import UserInputError
    from autoenvscaling.pool import Pool
    from autoenvscaling.pool.schema import CATALOG_FILE, is_pool

    if not create and not is_pool(pool):
        raise UserInputError(f"{pool}: no pool here (no {CATALOG_FILE}); `autoenv pool add` or a flywheel makes one")
    return Pool.open(pool)


@app.command()
def add(
    paths: Annotated[list[Path], typer.Argument(help="Task dirs, or dirs holding task dirs.")],
    pool: PoolOpt = DEFAULT_POOL,
    domain: DomainOpt = "",
    round_: RoundOpt = 0,
    source: Annotated[str, typer.Option(help="proposer, import or example.")] = "import",
    near_duplicate: NearDupOpt = "store",
) -> None:
    """Copy task dirs into the pool; exact duplicates are skipped, near-duplicates flagged."""
    from autoenvscaling.errors import UserInputError
    from autoenvscaling.tasks.model import find_task_dirs

    if source not in ("proposer", "import", "example"):
        raise UserInputError(f"--source {source!r}: expected proposer, import or example")
    if near_duplicate not in ("store", "reject", "ignore"):
        raise UserInputError(f"--near-duplicate {near_duplicate!r}: expected store, reject or ignore")
    with _open(pool, create=True) as p:
        results = [
            p.add(t, domain=domain, round=round_, source=source, near_duplicate=near_duplicate)  # type: ignore[arg-type]
            for t in find_task_dirs(paths)
        ]
        _print_results(results, p.root)


@app.command("import")
def import_(
    dataset_dir: Annotated[Path, typer.Argument(help="A Harbor dataset dir (a dir of task dirs).")],
    pool: PoolOpt = DEFAULT_POOL,
    domain: DomainOpt = "",
    round_: RoundOpt = 0,
) -> None:
    """Add every task of an external Harbor dataset (source "import")."""
    with _open(pool, create=True) as p:
        _print_results(p.import_dataset(dataset_dir, domain=domain, round=round_), p.root)


def _print_results(results: list[AddResult], root: Path) -> None:
    table = Table(_id_column(), Column("outcome", no_wrap=True), _status_column(), _id_column("duplicate of"), "task")
    for r in results:
        dup = "-" if r.duplicate_of is None or r.outcome == "exact-duplicate" else r.duplicate_of
        outcome = r.outcome if r.similarity is None else f"{r.outcome} ({r.similarity:.2f})"
        status = r.status.value if r.status else "-"
        table.add_row(r.id, outcome, status, dup, escape(Path(r.source_path).name))
    console.print(table)
    counts = {o: sum(r.outcome == o for r in results) for o in ("added", "near-duplicate", "exact-duplicate")}
    rejected = sum(r.outcome == "rejected" for r in results)
    console.print(
        f"added {counts['added']}, near-duplicates {counts['near-duplicate']}, "
        f"exact duplicates {counts['exact-duplicate']}, rejected {rejected}; pool: {escape(str(root))}"
    )


@app.command("list")
def list_(
    pool: PoolOpt = DEFAULT_POOL,
    status: Annotated[list[str] | None, typer.Option(help="Only these statuses (repeatable).")] = None,
    domain: Annotated[str | None, typer.Option(help="Only this domain.")] = None,
    round_: Annotated[int | None, typer.Option("--round", help="Only this round.")] = None,
) -> None:
    """Entries of the pool as a table."""
    with _open(pool) as p:
        entries = p.list(status=status, domain=domain, round=round_)
        table = Table(_id_column(), "name", "domain", "round", _status_column(), "pass rate", "created")
        for e in entries:
            style = _STATUS_STYLE.get(e.status.value, "white")
            rate = "-" if e.calibration is None else f"{e.calibration.pass_rate:.2f}"
            table.add_row(
                e.id,
                escape(e.name),
                escape(e.domain or "-"),
                str(e.round),
                f"[{style}]{e.status.value}[/]",
                rate,
                e.created_at.strftime("%Y-%m-%d %H:%M"),
            )
        console.print(table)
        console.print(f"{len(entries)} of {p.count()} environment(s); pool: {escape(str(p.root))}")


@app.command()
def status(
    pool: PoolOpt = DEFAULT_POOL,
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """Counts per status and domain, and the quality probes' results (hackable share, each probe's flags)."""
    from autoenvscaling.pool.status import pool_status

    with _open(pool) as p:
        st = pool_status(p.list())
        root = p.root
    if as_json:
        typer.echo(st.model_dump_json(indent=2))
        return
    console.print(f"{st.total} environment(s); pool: {escape(str(root))}")
    table = Table("status", "entries")
    for name, n in st.by_status.items():
        table.add_row(f"[{_STATUS_STYLE.get(name, 'white')}]{name}[/]", str(n))
    console.print(table)
    console.print("domains: " + (escape(", ".join(f"{k} {v}" for k, v in st.by_domain.items())) or "-"))
    for what, c in (("all entries", st.probes), ("accepted", st.accepted_probes)):
        share = "-" if c.hackable_share is None else f"{c.hackable_share:.1%}"
        flags = ", ".join(f"{k}: {v}" for k, v in c.flags.items()) or "none"
        console.print(
            f"quality probes, {what}: {c.validated} validated, {c.probed} probed, {c.hackable} hackable "
            f"({share}); flags: {escape(flags)}",
            soft_wrap=True,
        )
    if st.accepted_probes.probed:
        console.print(
            "(a probe flag fails validation, so an environment accepted with the probes on carries none: what "
            "they miss takes a check that did not gate it; docs/quality-probes.md)",
            soft_wrap=True,
        )
    if st.accepted_not_probed:
        console.print(
            f"{st.accepted_not_probed} of {st.accepted} accepted environment(s) were not probed (probes off, "
            "a multi-step task, or no stored validation): their hackability is unknown.",
            soft_wrap=True,
        )


@app.command()
def show(
    env_id: Annotated[str, typer.Argument(help="Environment id (or a unique prefix).")],
    pool: PoolOpt = DEFAULT_POOL,
    as_json: Annotated[bool, typer.Option("--json", help="Print the entry as JSON.")] = False,
) -> None:
    """Config, validation, calibration and lineage of one environment."""
    with _open(pool) as p:
        entry = p.get(env_id)
    if as_json:
        typer.echo(entry.model_dump_json(indent=2))
        return
    _print_entry(entry)


def _print_entry(entry: PoolEntry) -> None:
    rows: list[tuple[str, str]] = [
        ("id", entry.id),
        ("content hash", entry.content_hash),
        ("name", entry.name),
        ("status", entry.status.value),
        ("domain / round", f"{entry.domain or '-'} / {entry.round}"),
        ("source", entry.source),
        ("created", entry.created_at.isoformat(timespec="seconds")),
        ("dir", str(entry.path)),
    ]
    if entry.duplicate_of:
        how = f"{entry.duplicate_method or 'minhash'} similarity {entry.similarity or 0:.2f}"
        rows.append(("duplicate of", f"{entry.duplicate_of} ({how})"))
    val = entry.validation
    rows.append(("validation", "-" if val is None else f"{val.verdict.value} {', '.join(val.failed_checks)}"))
    cal = entry.calibration
    if cal is None:
        rows.append(("calibration", "-"))
    else:
        rows.append(("calibration", f"{cal.passes}/{cal.attempts} passed, p={cal.pass_rate:.2f}, "
                                    f"learnability {cal.learnability:.2f}"))  # fmt: skip
    lin = entry.lineage
    rows += [
        ("proposer episode", lin.proposer_episode or "-"),
        ("parent run", lin.parent_run or "-"),
        ("solver trajectories", str(len(lin.solver_trajectories))),
        ("added from", lin.origin_path or "-"),
    ]
    table = Table("field", "value", show_header=False)
    for key, value in rows:
        table.add_row(key, escape(value))
    console.print(table)
    config = entry.path / "task.toml"
    if config.is_file():
        console.print("[bold]task.toml[/]")
        console.print(escape(config.read_text(encoding="utf-8")), highlight=False)
    console.print("[bold]instruction[/]")
    console.print(escape(entry.instruction), highlight=False)


@app.command()
def export(
    dest: Annotated[Path, typer.Argument(help="Dataset dir to write (task dirs, dataset.toml, dataset.json).")],
    pool: PoolOpt = DEFAULT_POOL,
    status: Annotated[list[str] | None, typer.Option(help="Statuses to export (repeatable).")] = None,
    parquet: Annotated[Path | None, typer.Option(help="Also write the catalog rows to this parquet file.")] = None,
    name: Annotated[str, typer.Option(help="The dataset's org/name in dataset.toml.")] = "autoenv/pool",
) -> None:
    """Write the matching environments as a Harbor dataset dir (default: learnable ones) with Harbor's dataset.toml."""
    from autoenvscaling.errors import UserInputError
    from autoenvscaling.export.harbor_dataset import export_harbor_dataset
    from autoenvscaling.export.pool_dataset import export_parquet
    from autoenvscaling.tasks.dataset import DatasetInfo

    statuses = status or ["learnable"]
    try:
        DatasetInfo(name=name)
    except ValueError as e:
        raise UserInputError(f"--name {name!r}: expected org/name") from e
    with _open(pool) as p:
        manifest = export_harbor_dataset(p, dest, statuses, name=name)
        console.print(f"exported {manifest.count} task dir(s) ({', '.join(statuses)}) to {escape(str(dest))}")
        if parquet is not None:
            export_parquet(p, parquet, status=statuses)
            console.print(f"wrote {escape(str(parquet))}")


@app.command()
def retire(
    env_id: Annotated[str, typer.Argument(help="Environment id (or a unique prefix).")],
    pool: PoolOpt = DEFAULT_POOL,
) -> None:
    """Mark an environment retired (kept on disk, left out of exports)."""
    with _open(pool) as p:
        entry = p.retire(env_id)
    console.print(f"retired {entry.id} ({escape(entry.name)})")
