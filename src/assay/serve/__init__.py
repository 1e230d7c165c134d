"""`assay serve`: a read-only results browser over the results directory (stdlib HTTP).

catalog.py lists and filters runs and search/sweep records from the store (the catalogue and
run.json files), app.py answers HTTP, page.py builds pages from the report's own assets.
Nothing here imports the engine: the browser reads what runs wrote."""
