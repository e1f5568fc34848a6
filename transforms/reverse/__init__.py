"""Reverse mode: a primal sweep that saves what the adjoint sweep needs, then the adjoint
sweep. `reverse` (statements), `reverse_calls` (calls: inlined rules, derivatives of user
functions), `reverse_control` (if, loops, name scopes), `unpacked_calls` (f(*items)),
`built_objects_and_super`, `name_scopes`, `sweep_parts`, and `reverse_body` (the mode's
source pass).
"""
