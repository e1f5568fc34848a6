def dwhile_loop(x, *, dy=None):
    _stack1 = []
    _t1 = None
    _t2 = None
    # Primal sweep
    s = 0.0
    _cond1 = s < 10.0
    _n1 = 0
    while _cond1:
        _n1 = _n1 + 1
        _stack1.append(shape_only(_t1))
        _t1 = x * x
        _stack1.append(shape_only(_t2))
        _t2 = np.sum(_t1)
        _t3 = s + _t2
        _stack1.append(shape_only(s))
        s = _t3
        _t4 = x * 1.5
        _stack1.append(x)
        x = _t4
        _cond1 = s < 10.0
    # Adjoint sweep
    # Grad of line 33: return s
    bs = seed(s, dy)
    # Grad of line 30: while s < 10.0:
    bx = zeros_like(x)
    for _ in range(_n1):
        # Grad of line 32: x = x * 1.5
        b_t4 = bx
        x = _stack1.pop()
        bx = b_t4 * 1.5
        # Grad of line 31: s = s + np.sum(x * x)
        b_t3 = bs
        s = _stack1.pop()
        bs = unbroadcast(b_t3, s)
        b_t1 = unreduce(unbroadcast(b_t3, _t2), _t1, None, False)
        _t2 = _stack1.pop()
        bx = accumulate(bx, b_t1 * x)
        bx = accumulate(bx, b_t1 * x)
        _t1 = _stack1.pop()
    return match(bx, x)
