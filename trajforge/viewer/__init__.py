"""A read-only dataset browser: overview plots, a filtered trajectory list with full-text
search, transcripts with the failing check's evidence and the passing twin, blueprints, and
evaluation and loop runs.

``trajforge view`` serves it on loopback (``server.py``, Starlette + uvicorn); ``trajforge
report`` writes the same pages as a static site (``site.py``). Both read the dataset only
through its DuckDB catalog, opened read-only (``snapshot.py``); pages are Jinja2 templates
with autoescaping on, plots are matplotlib SVGs inlined as images, and no page carries a script.
Needs the ``view`` extra (starlette, uvicorn, jinja2, matplotlib).
"""
