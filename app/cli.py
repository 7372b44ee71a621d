"""`clustertco` command line: database upgrades, snapshot loading, serving."""

import argparse
import sys

from app import migrate
from app.db import session_scope
from app.pricing.snapshot import load_snapshot
from app.settings import get_settings


def _db_upgrade(_: argparse.Namespace) -> int:
    migrate.upgrade(get_settings().database_url)
    print("database upgraded to head")
    return 0


def _prices_load(_: argparse.Namespace) -> int:
    with session_scope() as session, session.begin():
        report = load_snapshot(session)
    print(f"snapshot: {report.points_seen} price rows read, {report.points_added} new, "
          f"{report.sources} sources")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    uvicorn.run("app.main:app", host=args.host, port=args.port, workers=args.workers)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clustertco", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    db = sub.add_parser("db", help="database schema").add_subparsers(dest="db_cmd", required=True)
    db.add_parser("upgrade", help="upgrade the schema to head").set_defaults(func=_db_upgrade)
    prices = sub.add_parser("prices", help="pricing store").add_subparsers(
        dest="prices_cmd", required=True)
    prices.add_parser("load", help="load pricing_data/ (idempotent)").set_defaults(
        func=_prices_load)
    serve = sub.add_parser("serve", help="run the web server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.set_defaults(func=_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
