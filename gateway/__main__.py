"""Entry point: ``python -m gateway`` and the ``ofp-gateway`` console script."""

import os

from gateway.workers import BLAS_ENV, blas_environment

# Before anything imports numpy: OpenBLAS reads its thread count when it loads (why one:
# gateway.workers.blas_environment).
os.environ[BLAS_ENV] = blas_environment(os.environ)[BLAS_ENV]

from gateway.cli import main  # after the line above, which must come first

if __name__ == "__main__":
    raise SystemExit(main())
