def dname_scopes(x, w, *, dy=None):
    _stack1 = []
    # Primal sweep
    with autotrace.name_scope('encoder'):
        with autotrace.name_scope('layer1'):
            h = np.tanh(x * w)
        _t3 = np.sum(h) > 0
        if _t3:
            _t4 = h * h
            _stack1.append(h)
            h = _t4
    # Adjoint sweep
    # Grad of line 68: return np.sum(h)
    bh = unreduce(seed(np.sum(h), dy), h, None, False)
    # Grad of line 63: with autotrace.name_scope("encoder"):
    with gradient_scope('encoder'):
        # Grad of line 66: if np.sum(h) > 0:
        if _t3:
            # Grad of line 67: h = h * h
            b_t4 = bh
            h = _stack1.pop()
            bh = unbroadcast(b_t4 * h, h)
            bh = accumulate(bh, unbroadcast(b_t4 * h, h))
        # Grad of line 64: with autotrace.name_scope("layer1"):
        with gradient_scope('layer1'):
            # Grad of line 65: h = np.tanh(x * w)
            b_t1 = bh * (1.0 - h * h)
            bx = sum_copies(b_t1, x) if repeats(x, w) else unbroadcast(b_t1 * w, x)
    return match(bx, x)
