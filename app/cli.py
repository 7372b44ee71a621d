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
