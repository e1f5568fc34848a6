def dslices(x, *, dy=None):
    # Primal sweep
    a = x[1:3, ::2]
    b = x[..., None]
    c = x[:, 0]
    _t1 = np.sum(a)
    _t2 = b * 2.0
    _t3 = np.sum(_t2)
    _t4 = _t1 + _t3
    _t5 = c * c
    _t6 = np.sum(_t5)
    # Adjoint sweep
    # Grad of line 56: return np.sum(a) + np.sum(b * 2.0) + np.sum(c * c)
    b_t7 = seed(_t4 + _t6, dy)
    b_t4 = unbroadcast(b_t7, _t4)
    b_t5 = unreduce(unbroadcast(b_t7, _t6), _t5, None, False)
    bc = unbroadcast(b_t5 * c, c)
    bc = accumulate(bc, unbroadcast(b_t5 * c, c))
    bb = unbroadcast(unreduce(unbroadcast(b_t4, _t3), _t2, None, False) * 2.0, b)
    ba = unreduce(unbroadcast(b_t4, _t1), a, None, False)
    # Grad of line 55: c = x[:, 0]
    bx = zeros_like(x)
    bx = accumulate_item(bx, (slice(None, None), 0), bc)
    # Grad of line 54: b = x[..., None]
    bx = accumulate_item(bx, (..., None), bb)
    # Grad of line 53: a = x[1:3, ::2]
    bx = accumulate_item(bx, (slice(1, 3), slice(None, None, 2)), ba)
    return match(bx, x)
