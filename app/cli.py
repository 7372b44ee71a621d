"""`clustertco` command line: database upgrades, snapshot loading, serving."""

import argparse
import sys

from app import migrate
from app.db import session_scope
from app.pricing.aws_sync import DEFAULT_INSTANCE_TYPES
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


def _prices_sync_aws(args: argparse.Namespace) -> int:
    """Refresh AWS prices; any AWS or network failure is one line on stderr, exit status 2,
    and the store is left exactly as it was (the sync writes in one transaction)."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
    )

    from app.pricing.aws_sync import AwsClients, sync_aws

    unchanged = "nothing was written"
    try:
        clients = AwsClients.create(args.region)
        with session_scope() as session, session.begin():
            report = sync_aws(session, clients, args.region, args.instance_types)
    except (NoCredentialsError, PartialCredentialsError):
        print("error: no AWS credentials found (set AWS_PROFILE or AWS_ACCESS_KEY_ID/"
              f"AWS_SECRET_ACCESS_KEY, or run `aws configure`); {unchanged}", file=sys.stderr)
        return 2
    except EndpointConnectionError as exc:
        print(f"error: cannot reach AWS ({exc.kwargs.get('endpoint_url', 'endpoint')}): "
              f"check the network or proxy; {unchanged}", file=sys.stderr)
        return 2
    except ClientError as exc:
        err = exc.response.get("Error", {})
        print(f"error: AWS refused {exc.operation_name}: {err.get('Code')}: "
              f"{err.get('Message')}; {unchanged}", file=sys.stderr)
        return 2
    except BotoCoreError as exc:
        print(f"error: AWS request failed: {exc}; {unchanged}", file=sys.stderr)
        return 2
    added = ", ".join(f"{k} {v}" for k, v in sorted(report.added_by_option.items())) or "none"
    print(f"aws {args.region}: {report.observed} prices read, {report.points_added} new "
          f"({added}), {len(report.skipped)} rows rejected")
    return 0


def _examples_seed(_: argparse.Namespace) -> int:
    from app.scenarios import service as scenarios

    with session_scope() as session, session.begin():
        added = scenarios.seed_examples(session)
    print(f"examples gallery: {added} new scenarios")
    return 0


def _keys_create(args: argparse.Namespace) -> int:
    from app.auth import service as auth

    try:
        with session_scope() as session, session.begin():
            issued = auth.create_key(session, args.name, args.scope)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"key {issued.key.id} ({issued.key.name}, scopes: {issued.key.scopes})")
    print(f"token (shown once, store it now): {issued.token}")
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    from app.auth import service as auth
    from app.errors import NotFound

    try:
        with session_scope() as session, session.begin():
            key = auth.revoke_key(session, args.id)
    except NotFound as exc:
        print(f"error: {exc.detail}", file=sys.stderr)
        return 2
    print(f"key {key.id} ({key.name}) revoked at {key.revoked_at:%Y-%m-%d %H:%M:%S} UTC")
    return 0


def _keys_list(_: argparse.Namespace) -> int:
    from app.auth import repository

    with session_scope() as session:
        for key in repository.list_keys(session):
            state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
            print(f"{key.id}\t{key.token_prefix}…\t{key.name}\t{key.scopes}\t"
                  f"created {key.created_at:%Y-%m-%d}\t{state}")
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
    sync = prices.add_parser("sync", help="refresh prices from a provider's API").add_subparsers(
        dest="sync_cmd", required=True)
    aws = sync.add_parser("aws", help="AWS on-demand, reserved, savings plans, spot, "
                          "capacity blocks (boto3; needs AWS credentials)")
    aws.add_argument("--region", default="us-east-1", help="EC2 region (default us-east-1)")
    aws.add_argument("--instance-types", nargs="+", default=list(DEFAULT_INSTANCE_TYPES),
                     metavar="TYPE", help="default: " + " ".join(DEFAULT_INSTANCE_TYPES))
    aws.set_defaults(func=_prices_sync_aws)
    sub.add_parser("examples", help="save the examples gallery's scenarios (idempotent)"
                   ).set_defaults(func=_examples_seed)
    keys = sub.add_parser("keys", help="API keys for writes").add_subparsers(
        dest="keys_cmd", required=True)
    create = keys.add_parser("create", help="issue a key; its token is printed once")
    create.add_argument("--name", required=True, help="who or what holds the key")
    create.add_argument("--scope", action="append", required=True,
                        choices=["prices:read", "prices:write", "admin"],
                        help="repeat for several scopes")
    create.set_defaults(func=_keys_create)
    revoke = keys.add_parser("revoke", help="revoke a key at once")
    revoke.add_argument("id", type=int)
    revoke.set_defaults(func=_keys_revoke)
    keys.add_parser("list", help="keys (id, token prefix, scopes); never the tokens").set_defaults(
        func=_keys_list)
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
