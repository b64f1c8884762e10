"""History: every run kept in a store (a SQLite file, or a team's PostgreSQL), series per machine, change points.

Reads results only (never the engine): a run is recorded from its report,
a results file from disk, and both are the same run in the store.
`store` opens it and runs each job in a transaction: `recording` stores a
run, `reading` reads what `history` and `report` show (the read models of
`model`), `database` and `tables` reach and shape the database.
"""
