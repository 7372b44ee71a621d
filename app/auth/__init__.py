"""API keys with scopes for writes, and the audit log of what each key changed."""
