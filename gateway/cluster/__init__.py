"""Running several gateway nodes: a temporary PostgreSQL, HAProxy in front, the local reference
deployment of ``docs/deployment.md`` (``python -m gateway.cluster``), used by its tests too."""
