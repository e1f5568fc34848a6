def dfill_from_dot(x, *, dy=None):
    _stack1 = []
    _t1 = None
    _t2 = None
    # Primal sweep
    v = np.ones(3)
    _n1 = 0
    for i in range(3):
        _n1 = _n1 + 1
        _stack1.append(shape_only(_t1))
        _t1 = v * x
        _stack1.append(shape_only(_t2))
        _t2 = np.sum(_t1)
        _stack1.append(read_item(v, i))
        v[i] = _t2
        _stack1.append(i)
    # Adjoint sweep
    # Grad of line 49: return np.sum(v)
    bv = unreduce(seed(np.sum(v), dy), v, None, False)
    # Grad of line 47: for i in range(3):
    bx = zeros_like(x)
    for _ in range(_n1):
        i = _stack1.pop()
        # Grad of line 48: v[i] = np.sum(v * x)
        b_t2 = kept_by_write(item_gradient(bv, i, _t2), v)
        bv = clear_item(bv, i)
        restore_item(v, i, _stack1.pop())
        b_t1 = unreduce(b_t2, _t1, None, False)
        _t2 = _stack1.pop()
        bv = accumulate(bv, unbroadcast(b_t1 * x, v))
        bx = accumulate(bx, unbroadcast(b_t1 * v, x))
        _t1 = _stack1.pop()
    return match(bx, x)
