def dbranch(x, *, dy=None):
    # Primal sweep
    _t2 = np.sum(x) > 0
    if _t2:
        y = x * 2.0
    else:
        y = np.exp(x)
    # Adjoint sweep
    # Grad of line 19: return np.sum(y)
    by = unreduce(seed(np.sum(y), dy), y, None, False)
    # Grad of line 15: if np.sum(x) > 0:
    if _t2:
        # Grad of line 16: y = x * 2.0
        bx = by * 2.0
    else:
        # Grad of line 18: y = np.exp(x)
        bx = by * y
    return match(bx, x)
