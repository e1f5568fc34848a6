"""The front end: from a user's function to a normalized one that the modes differentiate.

Reading the source (`parsing`, `source_check`, `line_map`, `function_caches`), refusing what
is not handled (`checks`, `dead_branches`, `inplace`), rewriting constructs into simpler ones
(`nested`, `partials`, `varargs`, `custom_gradients`, `segments` for checkpointing, `exits`,
`dict_methods`, `list_methods`, `out_arguments`, `star_arguments`) and A-normal form (`anf`).
`front_end` runs them, in the order transforms/pipeline.py's SOURCE_PASSES lists.
"""
