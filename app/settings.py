"""Application settings: one class, read from the environment (and a `.env` file if present)."""

from functools import lru_cache

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    # SQLite is the embedded default so `make run` needs no server;
    # production uses postgresql+psycopg://user@host/db.
    database_url: str = "sqlite:///./var/clustertco.db"
    # Upgrade the schema to head and load the pricing snapshot when the app starts.
    migrate_on_start: bool = True
    load_snapshot_on_start: bool = True
    # Save the examples gallery's scenarios when missing (idempotent).
    seed_examples_on_start: bool = True
    # Largest request body accepted (bytes); larger gets 413. The biggest legitimate body (a
    # planner search or a scenario with its inputs) is a few kilobytes.
    max_body_bytes: int = 65_536
    # Compute endpoints (tco, throughput, kv-cache, plan): requests per client per window.
    # Generous so 32 benchmark clients on one address are not throttled; 0 disables the limit.
    rate_limit_requests: int = 100_000
    rate_limit_window_s: int = 60
    # Seconds to wait for a PostgreSQL connection before answering 503.
    db_connect_timeout_s: int = 3


@lru_cache
def get_settings() -> Settings:
    return Settings()
