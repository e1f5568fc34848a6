def dscale_by_cosine(a, b, *, dy=None):
    # Primal sweep
    _t1 = np.cos(b)
    # Adjoint sweep
    # Grad of line 37: return a * np.cos(b)
    ba = unbroadcast(seed(a * _t1, dy) * _t1, a)
    return (match_for_caller(ba, a),)
