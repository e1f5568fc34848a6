def dstraight_line(x, y, *, dy=None):
    # Primal sweep
    _t1 = x * y
    _t2 = np.sin(x)
    z = _t1 + _t2
    _t3 = z * z
    # Adjoint sweep
    # Grad of line 11: return np.sum(z * z)
    b_t3 = unreduce(seed(np.sum(_t3), dy), _t3, None, False)
    bz = unbroadcast(b_t3 * z, z)
    bz = bz + unbroadcast(b_t3 * z, z)
    # Grad of line 10: z = x * y + np.sin(x)
    b_t1 = unbroadcast(bz, _t1)
    bx = unbroadcast(bz, _t2) * np.cos(x)
    bx_term_1 = sum_copies(b_t1, x) if repeats(x, y) else unbroadcast(b_t1 * y, x)
    bx = accumulate(bx, bx_term_1)
    return match(bx, x)
