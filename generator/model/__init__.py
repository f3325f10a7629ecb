"""The model stage, and the only package that imports torch (tests/test_layout.py checks it):

    load           a checkpoint (tiny, or GPT-2 through transformers) as a LoadedModel
    tracing        one sentence through the model: every head's q, k, v, scores, weights, out
    causal         what removing, patching or attributing a head does to the output
    circuits       composition scores and the kind scores with each head removed
    vectors        the embedding figures' numbers
    trace_run      `make traces`: what the lessons need, traced and written into the store
    training       `make tiny-model`: the tiny model and its tokenizer, from the stories
    tiny_measures  held-out loss and head scores while training
"""
