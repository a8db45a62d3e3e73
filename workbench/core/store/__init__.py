"""The local SQLite store: one connection, migrations, per-topic tables."""
