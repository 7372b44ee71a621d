# clustertco: the app on uvicorn with several workers, non-root.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /srv/clustertco

COPY pyproject.toml requirements.lock ./
COPY app ./app
RUN pip install -c requirements.lock .

COPY alembic.ini ./
COPY migrations ./migrations
COPY templates ./templates
COPY static ./static
COPY pricing_data ./pricing_data

RUN useradd --system --uid 10001 --home /srv/clustertco clustertco \
    && mkdir -p var && chown clustertco var
USER clustertco

# Workers must not race each other on migrations or seeding: run them once here, then serve
# (workers keep no state in memory: rate limits, keys and audit live in PostgreSQL; the answer
# and price caches are keyed by the price store's version and safe to lose, see app/cache.py).
ENV MIGRATE_ON_START=false LOAD_SNAPSHOT_ON_START=false SEED_EXAMPLES_ON_START=false \
    WEB_CONCURRENCY=4
EXPOSE 8000
CMD ["sh", "-c", "clustertco db upgrade && clustertco prices load && clustertco examples && exec uvicorn app.main:app --host 0.0.0.0 --port 8000 --workers ${WEB_CONCURRENCY} --proxy-headers"]
