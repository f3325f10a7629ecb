"""Attention course generator: trace real models, freeze the numbers, render the lessons.

Stages, in the order data flows; each imports only the ones before it:
registry, schema -> lessons (parsing) -> models -> tracing -> store -> heads -> render (one module
per figure kind, Jinja2 templates) -> markdown (the Markdown extensions) -> publish, downloads -> cli.
`training` makes the tiny model.
"""

__version__ = "0.1.0"
