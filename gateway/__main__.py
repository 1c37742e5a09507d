"""Entry point: ``python -m gateway`` and the ``ofp-gateway`` console script."""

from gateway.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
