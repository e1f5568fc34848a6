"""Writing generated code: templates with holes (`templates`), fresh names (`naming`), fast
tree walks (`nodes`), the cleanup passes that make it short enough to read (`cleanup`), and
turning trees into source and loaded functions (`codegen`, `loading`).
"""
