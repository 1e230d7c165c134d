"""Many runs, one answer: search for a limit, sweep a grid, repeat for confidence, curves.

Every run is an ordinary run (stored, catalogued) whose `parent` is the search or sweep id; the
group's own record (search.json / sweep.json, repeats.json) lives under the results root.
"""
