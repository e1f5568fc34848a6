def dscale_by_cosine(a, b, *, dy=None):
    # Primal sweep
    _t1 = np.cos(b)
    _t2 = a * _t1
    dy = (yield _t2)
    # Adjoint sweep
    # Grad of line 37: return a * np.cos(b)
    ba = unbroadcast(seed(_t2, dy) * _t1, a)
    return (match_for_caller(ba, a),)
