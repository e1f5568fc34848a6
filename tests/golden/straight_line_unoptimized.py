def dstraight_line(x, y, *, dy=None):
    # Primal sweep
    _t1 = x * y
    _t2 = np.sin(x)
    z = _t1 + _t2
    _t3 = z * z
    _t4 = np.sum(_t3)
    # Adjoint sweep
    # Grad of line 11: return np.sum(z * z)
    b_t4 = seed(_t4, dy)
    _grad_a1 = unreduce(b_t4, _t3, None, False)
    b_t3 = _grad_a1
    _grad_x11 = unbroadcast(b_t3 * z, z)
    _grad_x21 = unbroadcast(b_t3 * z, z)
    bz = _grad_x11
    bz = bz + _grad_x21
    # Grad of line 10: z = x * y + np.sin(x)
    _grad_x12 = unbroadcast(bz, _t1)
    _grad_x22 = unbroadcast(bz, _t2)
    b_t1 = _grad_x12
    b_t2 = _grad_x22
    _grad_x1 = b_t2 * np.cos(x)
    bx = _grad_x1
    _grad_x13 = unbroadcast(b_t1 * y, x)
    bx = accumulate(bx, _grad_x13)
    return match(bx, x)
