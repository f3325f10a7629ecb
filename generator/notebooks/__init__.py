"""Each chapter's Python notebook: a learner recomputes the chapter's numbers from its traces with
numpy alone. steps.py holds the cells a lesson's Code tab shows too, cells.py and causal_cells.py the
text of every section, build.py which sections a lesson's figures get and where each one looks.
generator/site/notebook_files.py writes them into the built site."""
