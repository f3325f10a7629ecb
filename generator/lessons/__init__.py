"""Parsing the lessons: where each piece of a page comes from (source), its fenced directives
(directives), its `{{ }}` references (refs), and the one error for a lesson mistake (errors).
Pure parsing and validation: no traces, no Markdown, no torch."""
