"""What the code does, read from its source: which names carry gradient (`activity`), what
memory names share and which writes another name would see (`aliases`, `alias_calls`,
`alias_messages`, `names_alike`, `call_results`, `argument_writes`), what a call means to the
gradient (`calls`), which names are read later (`liveness`, `live_names`), what objects'
state a call changes (`object_state`, `state_aliases`, `given_state_writes`), and which
values share a shape or which `+` and `*` join lists (`same_shapes`, `list_operators`).
"""
