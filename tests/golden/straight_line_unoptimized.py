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
    b_t3_term = unreduce(b_t4, _t3, None, False)
    b_t3 = b_t3_term
    bz_term = unbroadcast(b_t3 * z, z)
    bz_term_1 = unbroadcast(b_t3 * z, z)
    bz = bz_term
    bz = bz + bz_term_1
    # Grad of line 10: z = x * y + np.sin(x)
    b_t1_term = unbroadcast(bz, _t1)
    b_t2_term = unbroadcast(bz, _t2)
    b_t1 = b_t1_term
    b_t2 = b_t2_term
    bx_term = b_t2 * np.cos(x)
    bx = bx_term
    bx_term_1 = sum_copies(b_t1, x) if repeats(x, y) else unbroadcast(b_t1 * y, x)
    bx = accumulate(bx, bx_term_1)
    return match(bx, x)
