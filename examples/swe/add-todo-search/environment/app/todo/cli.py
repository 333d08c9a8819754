"""``python3 -m todo add TEXT | list | done ID``"""

from __future__ import annotations

import argparse
import sys

from todo import store


def _add(args: argparse.Namespace) -> int:
    items = store.load()
    item = store.Item(id=max((i.id for i in items), default=0) + 1, text=args.text)
    items.append(item)
    store.save(items)
    print(f"added {item.id}")
    return 0


def _list(args: argparse.Namespace) -> int:
    for item in store.load():
        print(item.render())
    return 0


def _done(args: argparse.Namespace) -> int:
    items = store.load()
    for item in items:
        if item.id == args.id:
            item.done = True
            store.save(items)
            return 0
    print(f"no item {args.id}", file=sys.stderr)
    return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="todo")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add an item")
    add.add_argument("text")
    add.set_defaults(func=_add)
    sub.add_parser("list", help="show all items").set_defaults(func=_list)
    done = sub.add_parser("done", help="mark an item done")
    done.add_argument("id", type=int)
    done.set_defaults(func=_done)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))
