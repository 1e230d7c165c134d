"""A real PostgreSQL on the target: a throw-away cluster, its loaded dataset, the pgbench
driver and its per-second samples (docs/postgres.md)."""
