"""Prefect orchestration of the build: flows and tasks only, no business logic.

The stages are the plain functions of ``trajforge.pipeline`` and ``trajforge.store``; this package
wraps them as Prefect tasks (``build.py``), picks the task runner (``runners.py``), sets up a
Prefect API for a run that has no server (``runtime.py``), decides what is worth a retry
(``retry.py``) and registers scheduled deployments (``deploy.py``); ``stages.py`` has the flows
of the later stages (export, publish, train, evaluate) and build -> train -> evaluate. Prefect
is imported inside these modules, never by the rest of the package.
"""
