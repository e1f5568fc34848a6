"""Control flow on traced values converted before tracing, as AutoGraph does: `if`, `while`
and `for` on arrays become calls of runtime's cond and while_loop (`control_flow`,
`control_flow_build`, `control_flow_calls`, `control_flow_variables`).
"""
