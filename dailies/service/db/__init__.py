"""The database: every table, the engine, the SQLite writer, schema install and upgrade, advisory locks."""
