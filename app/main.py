"""The FastAPI application."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import plotly
from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from app import migrate
from app.db import session_scope
from app.errors import PROBLEM_RESPONSES, install_error_handlers
from app.hardware.routes import router as hardware_router
from app.middleware import BodySizeLimit, CsrfGuard, SecurityHeaders
from app.planner.routes import pages as planner_pages
from app.planner.routes import router as planner_router
from app.pricing.routes import router as pricing_router
from app.pricing.snapshot import load_snapshot
from app.pricing.write_routes import router as pricing_write_router
from app.ratelimit.service import limited
from app.scenarios import service as scenarios
from app.scenarios.routes import router as scenarios_router
from app.settings import get_settings
from app.tco.routes import router as tco_router
from app.throughput.routes import pages as throughput_pages
from app.throughput.routes import router as throughput_router
from app.web.prices import router as price_pages_router
from app.web.routes import router as web_router

ROOT = Path(__file__).resolve().parents[1]
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
log = logging.getLogger(__name__)


def prepare_database() -> None:
    """Upgrade the schema to head, load the pricing snapshot, seed the examples (idempotent)."""
    settings = get_settings()
    if settings.migrate_on_start:
        migrate.upgrade(settings.database_url)
    if settings.load_snapshot_on_start:
        with session_scope() as session, session.begin():
            report = load_snapshot(session)
        log.info("pricing snapshot: %d new price points", report.points_added)
    if settings.seed_examples_on_start:
        with session_scope() as session, session.begin():
            added = scenarios.seed_examples(session)
        log.info("examples gallery: %d new scenarios", added)


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    prepare_database()
    yield


def create_app() -> FastAPI:
    app = FastAPI(
        title="clustertco",
        version="0.1.0",
        summary="GPU cluster total cost of ownership and training throughput",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    # Outermost last: headers go on every response, including the guards' own refusals.
    app.add_middleware(BodySizeLimit, max_bytes=get_settings().max_body_bytes)
    app.add_middleware(CsrfGuard)
    app.add_middleware(SecurityHeaders)
    @app.get("/static/vendor/plotly.min.js", include_in_schema=False, name="vendor_plotly")
    def vendor_plotly() -> FileResponse:
        # plotly.js ships inside the plotly package: served locally, never from a CDN.
        return FileResponse(PLOTLY_JS, media_type="text/javascript",
                            headers={"Cache-Control": "public, max-age=86400"})

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    # Every API route documents the problem responses; compute-heavy ones are rate limited.
    compute = [limited("compute")]
    app.include_router(tco_router, responses=PROBLEM_RESPONSES, dependencies=compute)
    app.include_router(throughput_router, responses=PROBLEM_RESPONSES, dependencies=compute)
    app.include_router(throughput_pages)
    app.include_router(planner_router, responses=PROBLEM_RESPONSES, dependencies=compute)
    app.include_router(planner_pages)
    app.include_router(pricing_router, responses=PROBLEM_RESPONSES)
    app.include_router(hardware_router, responses=PROBLEM_RESPONSES)
    app.include_router(pricing_write_router, responses=PROBLEM_RESPONSES)
    app.include_router(price_pages_router)
    app.include_router(scenarios_router, responses=PROBLEM_RESPONSES)
    app.include_router(web_router)
    # Mounted last: the plotly route above shares the /static prefix.
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    return app


app = create_app()
