"""Forward mode: each statement followed by the statement computing its tangent (`forward`),
and the mode's source pass (`forward_body`).
"""
