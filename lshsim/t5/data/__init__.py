"""The data of T5 pretraining, in NumPy (no JAX needed).

* :mod:`lshsim.t5.data.corpus`: the embedded corpus, text and JSON-lines readers, and the
  held-out split of documents;
* :mod:`lshsim.t5.data.tokenizer`: the SentencePiece tokenizer in the T5 layout (sentinels);
* :mod:`lshsim.t5.data.spans`: span corruption, packing and the deterministic dataset that
  :func:`lshsim.t5.loop.train` steps through.
"""
