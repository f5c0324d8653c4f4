"""`keras.ops.linalg`: the linear-algebra ops (decompositions, solves, inverses, determinants, norm), the same
functions as in `keras.ops`."""
from torchstrategy.keras.ops import (  # noqa: F401
    cholesky, cholesky_inverse, det, eig, eigh, inv, jvp, lstsq, lu_factor, matrix_rank, norm, pinv, qr, solve,
    solve_triangular, svd,
)
