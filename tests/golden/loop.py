def dloop(x, n, *, dy=None):
    _stack1 = []
    _t1 = None
    # Primal sweep
    _n1 = 0
    for i in range(n):
        _n1 = _n1 + 1
        _stack1.append(_t1)
        _t1 = np.sin(x)
        _t2 = _t1 * x
        _stack1.append(x)
        x = _t2
    # Adjoint sweep
    # Grad of line 25: return np.sum(x)
    bx = unreduce(seed(np.sum(x), dy), x, None, False)
    # Grad of line 23: for i in range(n):
    for _ in range(_n1):
        # Grad of line 24: x = np.sin(x) * x
        b_t2 = bx
        x = _stack1.pop()
        bx = b_t2 * _t1
        bx = accumulate(bx, b_t2 * x * np.cos(x))
        _t1 = _stack1.pop()
    return match(bx, x)
