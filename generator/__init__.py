"""Attention course generator: trace real models, freeze the numbers, render the lessons.

Stages, in the order data flows (one module each):
directives -> models -> tracing -> store -> heads -> figures -> markdown_ext -> cli.
`training` makes the tiny model; `schema` names every activation once.
"""

__version__ = "0.1.0"
