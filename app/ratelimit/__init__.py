"""Fixed-window rate limiting kept in the database, so every worker and host shares it."""
