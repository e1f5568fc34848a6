def dcalls_user_function(x, y, *, dy=None):
    # Primal sweep
    _adjoint1 = dscale_by_cosine(x, y)
    z = primal_sweep(_adjoint1)
    # Adjoint sweep
    # Grad of line 42: return np.sum(z)
    bz = unreduce(seed(np.sum(z), dy), z, None, False)
    # Grad of line 41: z = scale_by_cosine(x, y)
    _grads1 = adjoint_sweep(_adjoint1, bz)
    bx = _grads1[0]
    return match(bx, x)
