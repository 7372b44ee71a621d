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


@lru_cache
def get_settings() -> Settings:
    return Settings()
